//! [`RedisStore`]: `mcp-runtime-http`'s [`SessionStore`] on Redis, so that replicas of one
//! server behind a load balancer serve any session (`HttpConfig::store`).
//!
//! Redis is one server, the primary Redis Sentinel names, or a Redis Cluster, as the URL
//! given to [`RedisStore::connect`] says (`docs/deployment.md` lists the forms).
//!
//! Keys (all under a prefix, `mcp:` by default), each of a session's in braces around its
//! id — a Redis Cluster hash tag, so that they all sit on one slot and sessions spread
//! over the shards: `mcp:s:{ID}` the session's record (a string, expiring with the
//! session's idle timeout, renewed on every load with `GETEX`); `mcp:e:{ID}:STREAM` a
//! stream's events (a sorted set scored by position, trimmed to the newest);
//! `mcp:d:{ID}:STREAM` the stream's end; `mcp:s:{ID}:stream:STREAM` the stream-writer
//! record and `mcp:s:{replica:NAME}` the liveness record (see `SessionStore`).
//!
//! Replicas talk through the Redis stream `mcp:bus`, trimmed to about
//! [`DEFAULT_RELAY_BACKLOG`] messages ([`RedisStore::relay_backlog`]): each replica reads
//! it from the last message it took, so after its connection is lost and its
//! subscription made again it takes what was sent meanwhile (pub/sub kept nothing).

#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use redis::AsyncCommands;

mod conn;
#[cfg(feature = "tasks")]
mod redis_tasks;

use conn::{Conn, Target};

use mcp_runtime::BoxFuture;
use mcp_runtime_http::{SessionStore, StoreError, StoredEvents};

/// Legacy sessions shared through Redis (or Valkey) by every replica that connects to it:
/// `HttpConfig::default().store(RedisStore::connect(url).await?)`, with `url` naming one
/// server, the sentinels that watch a primary, or nodes of a cluster.
///
/// One multiplexed connection (on a cluster, one per node), re-established on its own
/// after a failure — behind Sentinel, to whichever server is the primary then — requests
/// in the meantime failing with a [`StoreError`] within a few seconds, never hanging; and
/// one connection for the replicas' messages.
#[derive(Clone)]
pub struct RedisStore {
    target: std::sync::Arc<Target>,
    conn: Conn,
    prefix: String,
    /// The id of the last message of the bus this replica took (`None` before its first
    /// subscription): where the next subscription goes on from.
    cursor: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    backlog: usize,
}

/// How many messages the bus keeps by default (about: Redis trims whole blocks): what a
/// replica whose subscription was down can still take once it is back.
pub const DEFAULT_RELAY_BACKLOG: usize = 10_000;

/// How long one read of the bus waits for a message before it asks again: below the
/// connection's response timeout, which would otherwise take the wait for an outage.
const BUS_WAIT_MS: u64 = 1_000;

/// Messages taken from the bus in one read at most.
const BUS_BATCH: usize = 256;

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// How long one command may take before it fails (Redis answers in well under a
/// millisecond; this only bounds an outage).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

fn failed(e: redis::RedisError) -> StoreError {
    StoreError(e.to_string())
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStore {
    /// Connects to Redis and checks that it answers: an unreachable server, or a URL this
    /// crate cannot use, is an error here, at start-up. `url` is one of
    ///
    /// - `redis://[USER:PASSWORD@]HOST:PORT[/DB]`: one server;
    /// - `redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/SERVICE[/DB]`: the
    ///   primary that these sentinels name `SERVICE` (the credentials are the primary's);
    /// - `redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]`: a Redis Cluster, of
    ///   which these are some nodes.
    pub async fn connect(url: &str) -> Result<RedisStore, StoreError> {
        RedisStore::connect_with_prefix(url, "mcp").await
    }

    /// [`RedisStore::connect`] with keys and the channel under `prefix` (several server
    /// groups on one Redis). A prefix holding `{…}` would be every key's hash tag,
    /// putting them all on one slot of a cluster.
    pub async fn connect_with_prefix(url: &str, prefix: &str) -> Result<RedisStore, StoreError> {
        let target =
            conn::parse(url, COMMAND_TIMEOUT).map_err(|e| StoreError(format!("Redis URL: {e}")))?;
        let conn = target
            .connect(COMMAND_TIMEOUT)
            .await
            .map_err(|e| StoreError(format!("Redis: {e}")))?;
        Ok(RedisStore {
            target: std::sync::Arc::new(target),
            conn,
            prefix: prefix.to_owned(),
            cursor: std::sync::Arc::default(),
            backlog: DEFAULT_RELAY_BACKLOG,
        })
    }

    /// Keeps about `messages` messages between replicas (default
    /// [`DEFAULT_RELAY_BACKLOG`]; at least 1): a replica whose subscription is down takes,
    /// once it is back, those of the messages sent meanwhile that are still kept.
    pub fn relay_backlog(mut self, messages: usize) -> RedisStore {
        self.backlog = messages.max(1);
        self
    }

    // The task store's (redis_tasks.rs) ways into the same Redis.
    #[cfg(feature = "tasks")]
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    #[cfg(feature = "tasks")]
    pub(crate) fn connection(&self) -> Conn {
        self.conn.clone()
    }

    /// A session's record, or one of the transport's short records (`SessionStore`): a
    /// stream's writer under its session's hash tag, a replica's under its own.
    fn record_key(&self, id: &str) -> String {
        match id.strip_prefix("stream:").and_then(|r| r.rsplit_once(':')) {
            Some((session, stream)) => format!("{}:s:{{{session}}}:stream:{stream}", self.prefix),
            None => format!("{}:s:{{{id}}}", self.prefix),
        }
    }

    fn events_key(&self, id: &str, stream: u64) -> String {
        format!("{}:e:{{{id}}}:{stream}", self.prefix)
    }

    fn done_key(&self, id: &str, stream: u64) -> String {
        format!("{}:d:{{{id}}}:{stream}", self.prefix)
    }

    fn bus(&self) -> String {
        format!("{}:bus", self.prefix)
    }
}

impl SessionStore for RedisStore {
    #[cfg(feature = "tasks")]
    fn task_store(&self) -> Option<std::sync::Arc<dyn mcp_runtime::server::tasks::TaskStore>> {
        Some(std::sync::Arc::new(self.clone()))
    }

    fn load(&self, id: String, ttl: Duration) -> BoxFuture<Result<Option<String>, StoreError>> {
        let mut conn = self.conn.clone();
        let key = self.record_key(&id);
        Box::pin(async move {
            redis::cmd("GETEX")
                .arg(key)
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut conn)
                .await
                .map_err(failed)
        })
    }

    fn save(&self, id: String, record: String, ttl: Duration) -> BoxFuture<Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let key = self.record_key(&id);
        Box::pin(async move { conn.pset_ex(key, record, millis(ttl)).await.map_err(failed) })
    }

    fn exists(&self, id: String) -> BoxFuture<Result<bool, StoreError>> {
        let mut conn = self.conn.clone();
        let key = self.record_key(&id);
        Box::pin(async move { conn.exists(key).await.map_err(failed) })
    }

    fn remove(&self, id: String) -> BoxFuture<Result<bool, StoreError>> {
        let mut conn = self.conn.clone();
        let key = self.record_key(&id);
        Box::pin(async move {
            let removed: u64 = conn.del(key).await.map_err(failed)?;
            Ok(removed > 0)
        })
    }

    fn append(
        &self,
        session: String,
        stream: u64,
        seq: u64,
        event: Bytes,
        keep: usize,
        ttl: Duration,
    ) -> BoxFuture<Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let key = self.events_key(&session, stream);
        Box::pin(async move {
            // The member starts with the position: equal messages stay distinct.
            let mut member = format!("{seq}:").into_bytes();
            member.extend_from_slice(&event);
            let keep = isize::try_from(keep.max(1)).unwrap_or(isize::MAX);
            redis::pipe()
                .atomic()
                .zadd(&key, member, seq)
                .ignore()
                .zremrangebyrank(&key, 0, -keep - 1)
                .ignore()
                .pexpire(&key, i64::try_from(millis(ttl)).unwrap_or(i64::MAX))
                .ignore()
                .query_async::<()>(&mut conn)
                .await
                .map_err(failed)
        })
    }

    fn finish(
        &self,
        session: String,
        stream: u64,
        ttl: Duration,
    ) -> BoxFuture<Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let key = self.done_key(&session, stream);
        Box::pin(async move { conn.pset_ex(key, 1, millis(ttl)).await.map_err(failed) })
    }

    fn read(
        &self,
        session: String,
        stream: u64,
        from: u64,
    ) -> BoxFuture<Result<StoredEvents, StoreError>> {
        let mut conn = self.conn.clone();
        let events = self.events_key(&session, stream);
        let done = self.done_key(&session, stream);
        Box::pin(async move {
            // The end marker first: if it is set, every event is already stored.
            let (finished, members): (bool, Vec<Vec<u8>>) = redis::pipe()
                .exists(done)
                .zrangebyscore(events, from, "+inf")
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            let events = members
                .into_iter()
                .filter_map(|m| {
                    let colon = m.iter().position(|b| *b == b':')?;
                    let seq = std::str::from_utf8(m.get(..colon)?).ok()?.parse().ok()?;
                    Some((seq, Bytes::copy_from_slice(m.get(colon + 1..)?)))
                })
                .collect();
            Ok(StoredEvents { events, finished })
        })
    }

    fn publish(&self, message: Bytes) -> BoxFuture<Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let bus = self.bus();
        let backlog = self.backlog;
        Box::pin(async move {
            redis::cmd("XADD")
                .arg(bus)
                .arg("MAXLEN")
                .arg("~")
                .arg(backlog)
                .arg("*")
                .arg("m")
                .arg(message.as_ref())
                .query_async::<redis::Value>(&mut conn)
                .await
                .map(drop)
                .map_err(failed)
        })
    }

    fn subscribe(&self) -> BoxFuture<Result<BoxStream<'static, Bytes>, StoreError>> {
        let target = std::sync::Arc::clone(&self.target);
        let bus = self.bus();
        let cursor = std::sync::Arc::clone(&self.cursor);
        Box::pin(async move {
            // A connection of its own: a blocked read would hold up the shared one.
            let mut conn = target.connect(COMMAND_TIMEOUT).await.map_err(failed)?;
            if lock(&cursor).is_none() {
                // The first subscription hears what is sent from now on.
                let last: redis::Value = redis::cmd("XREVRANGE")
                    .arg(&bus)
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(1)
                    .query_async(&mut conn)
                    .await
                    .map_err(failed)?;
                let id = bus::entries(&last)
                    .into_iter()
                    .next()
                    .map_or_else(|| "0-0".to_owned(), |(id, _)| id);
                *lock(&cursor) = Some(id);
            }
            let reading = bus::Reading {
                conn,
                bus,
                cursor,
                pending: std::collections::VecDeque::new(),
            };
            Ok(futures_util::stream::unfold(reading, bus::next).boxed())
        })
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reading the bus stream.
mod bus {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use bytes::Bytes;
    use redis::Value;

    use crate::conn::Conn;

    pub(crate) struct Reading {
        pub(crate) conn: Conn,
        pub(crate) bus: String,
        pub(crate) cursor: Arc<Mutex<Option<String>>>,
        /// Read but not yet handed over: `(id, payload)`.
        pub(crate) pending: VecDeque<(String, Option<Bytes>)>,
    }

    /// The next message: a read ends the stream when it fails (the transport subscribes
    /// again, and goes on from the cursor). The cursor moves as a message is handed over,
    /// and past an entry that is not ours without stopping on it.
    pub(crate) async fn next(mut r: Reading) -> Option<(Bytes, Reading)> {
        loop {
            while let Some((id, payload)) = r.pending.pop_front() {
                *super::lock(&r.cursor) = Some(id);
                if let Some(payload) = payload {
                    return Some((payload, r));
                }
            }
            let from = super::lock(&r.cursor)
                .clone()
                .unwrap_or_else(|| "0-0".to_owned());
            let reply: Value = redis::cmd("XREAD")
                .arg("COUNT")
                .arg(super::BUS_BATCH)
                .arg("BLOCK")
                .arg(super::BUS_WAIT_MS)
                .arg("STREAMS")
                .arg(&r.bus)
                .arg(from)
                .query_async(&mut r.conn)
                .await
                .ok()?;
            // `XREAD`'s answer: per stream, its name and its entries (nil: none came).
            let streams: Vec<&Value> = match &reply {
                Value::Array(streams) => streams.iter().collect(),
                Value::Map(streams) => streams.iter().map(|(_, v)| v).collect(),
                _ => Vec::new(),
            };
            for stream in streams {
                let entries = match stream {
                    Value::Array(pair) => pair.get(1).map(entries).unwrap_or_default(),
                    other => entries(other),
                };
                r.pending.extend(entries);
            }
        }
    }

    /// A list of stream entries: `(id, the payload of field m)`.
    pub(crate) fn entries(list: &Value) -> Vec<(String, Option<Bytes>)> {
        let Value::Array(items) = list else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| {
                let Value::Array(parts) = item else {
                    return None;
                };
                let id = match parts.first()? {
                    Value::BulkString(b) => String::from_utf8(b.clone()).ok()?,
                    Value::SimpleString(s) => s.clone(),
                    _ => return None,
                };
                let payload = match parts.get(1) {
                    Some(Value::Array(fields)) => match fields.get(1) {
                        Some(Value::BulkString(b)) => Some(Bytes::copy_from_slice(b)),
                        _ => None,
                    },
                    _ => None,
                };
                Some((id, payload))
            })
            .collect()
    }
}
