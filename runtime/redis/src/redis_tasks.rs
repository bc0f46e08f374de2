//! Task state on Redis (feature `redis`): [`RedisStore`] is also a [`TaskStore`], so that
//! a task created on one replica is found, polled and listed on any other.
//!
//! Keys (under the store's prefix, `mcp:` by default): `mcp:{t}:t:ID` a task's record (JSON,
//! expiring with the task's time to live), `mcp:{t}:o:OWNER` the ids of an owner's tasks (a
//! sorted set by creation time; ids whose record expired are dropped when met). Inserting
//! checks the bound per owner and writes in one Lua script (atomic on the server); an
//! update is a compare-and-set of the whole record, retried when another writer won.
//!
//! The hash tag `{t}` puts every task on one slot of a Redis Cluster: the insert script
//! counts an owner's live tasks by their records, which a script may only touch on its
//! own slot. So on a cluster the tasks live on one shard while sessions spread.

use redis::AsyncCommands;

use crate::RedisStore;
use mcp_runtime::server::tasks::{TaskChange, TaskRecord, TaskStore, TaskStoreError};
use mcp_runtime::BoxFuture;

fn unavailable(e: &redis::RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(e.to_string())
}

/// Counts the owner's live tasks (dropping ids whose record is gone) and, under the
/// bound, stores the record and indexes it. KEYS: owner set, record key. ARGV: id,
/// record, ttl ms (0: none), bound, score, record key prefix. 1 stored, 0 refused.
const INSERT: &str = r"
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local live = 0
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[6] .. id) == 1 then live = live + 1 else redis.call('ZREM', KEYS[1], id) end
end
if live >= tonumber(ARGV[4]) then return 0 end
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) else redis.call('SET', KEYS[2], ARGV[2]) end
redis.call('ZADD', KEYS[1], ARGV[5], ARGV[1])
return 1
";

/// Replaces a record if it is still what the writer read (its time to live kept).
/// KEYS: record key. ARGV: expected text, new text. 1 replaced, 0 changed meanwhile.
const COMPARE_AND_SET: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
";

/// How often an update is retried against a record that other writers keep changing.
const UPDATE_ATTEMPTS: usize = 16;

impl RedisStore {
    fn task_key(&self, id: &str) -> String {
        format!("{}:{{t}}:t:{id}", self.prefix())
    }

    fn owner_key(&self, owner: &str) -> String {
        format!("{}:{{t}}:o:{owner}", self.prefix())
    }
}

fn parse(text: &str) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_str(text)
        .ok()
        .and_then(|v| TaskRecord::from_json(&v))
        .ok_or_else(|| TaskStoreError::Unavailable("a stored task record is unreadable".into()))
}

impl TaskStore for RedisStore {
    fn insert(
        &self,
        record: TaskRecord,
        max_per_owner: usize,
    ) -> BoxFuture<Result<(), TaskStoreError>> {
        let mut conn = self.connection();
        let owner_key = self.owner_key(&record.owner);
        let key = self.task_key(&record.id);
        let key_prefix = self.task_key("");
        Box::pin(async move {
            // EVAL rather than redis's `script` feature: one more dependency (sha1) for
            // two short scripts sent a few hundred bytes at a time.
            let stored: i64 = redis::cmd("EVAL")
                .arg(INSERT)
                .arg(2)
                .arg(owner_key)
                .arg(key)
                .arg(&record.id)
                .arg(record.to_json().to_string())
                .arg(record.ttl_ms.unwrap_or(0))
                .arg(max_per_owner)
                .arg(record.created_at_ms)
                .arg(key_prefix)
                .query_async(&mut conn)
                .await
                .map_err(|e| unavailable(&e))?;
            if stored == 1 {
                Ok(())
            } else {
                Err(TaskStoreError::TooMany(max_per_owner))
            }
        })
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let mut conn = self.connection();
        let key = self.task_key(id);
        Box::pin(async move {
            let text: Option<String> = conn.get(key).await.map_err(|e| unavailable(&e))?;
            text.as_deref().map(parse).transpose()
        })
    }

    fn update(
        &self,
        id: &str,
        change: TaskChange,
    ) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let mut conn = self.connection();
        let key = self.task_key(id);
        Box::pin(async move {
            for _ in 0..UPDATE_ATTEMPTS {
                let text: Option<String> = conn.get(&key).await.map_err(|e| unavailable(&e))?;
                let Some(text) = text else {
                    return Ok(None);
                };
                let mut record = parse(&text)?;
                if !change(&mut record) {
                    return Ok(Some(record));
                }
                record.updated_at_ms =
                    mcp_runtime::server::tasks::now_ms().max(record.updated_at_ms);
                let replaced: i64 = redis::cmd("EVAL")
                    .arg(COMPARE_AND_SET)
                    .arg(1)
                    .arg(&key)
                    .arg(&text)
                    .arg(record.to_json().to_string())
                    .query_async(&mut conn)
                    .await
                    .map_err(|e| unavailable(&e))?;
                if replaced == 1 {
                    return Ok(Some(record));
                }
            }
            Err(TaskStoreError::Unavailable(format!(
                "task {key}: {UPDATE_ATTEMPTS} concurrent updates in a row"
            )))
        })
    }

    fn list(&self, owner: &str) -> BoxFuture<Result<Vec<TaskRecord>, TaskStoreError>> {
        let mut conn = self.connection();
        let owner_key = self.owner_key(owner);
        let prefix = self.task_key("");
        let owner = owner.to_owned();
        Box::pin(async move {
            let ids: Vec<String> = conn
                .zrange(&owner_key, 0, -1)
                .await
                .map_err(|e| unavailable(&e))?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let keys: Vec<String> = ids.iter().map(|id| format!("{prefix}{id}")).collect();
            let texts: Vec<Option<String>> = redis::cmd("MGET")
                .arg(&keys)
                .query_async(&mut conn)
                .await
                .map_err(|e| unavailable(&e))?;
            let mut records = Vec::new();
            for text in texts.into_iter().flatten() {
                let record = parse(&text)?;
                if record.owner == owner {
                    records.push(record);
                }
            }
            Ok(records)
        })
    }
}
