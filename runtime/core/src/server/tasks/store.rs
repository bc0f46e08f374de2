//! Where task state lives: the [`TaskStore`] trait (records with a time to live and a
//! bound per client) and its in-memory implementation, the default.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::server::BoxFuture;

/// A task's status (the same five in both eras).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's answers to its `inputRequests` (2026-07-28) or to the
    /// server requests it sent (2025-11-25).
    InputRequired,
    /// Finished; the result is kept.
    Completed,
    /// Ended by a protocol error; the error is kept.
    Failed,
    /// Cancelled by the client (`tasks/cancel`) or expired.
    Cancelled,
}

impl TaskStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Reads a wire name.
    pub fn parse(s: &str) -> Option<TaskStatus> {
        Some(match s {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    /// `completed`, `failed` or `cancelled`: the status never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// One task as stored: what `tasks/get` reports, revision-neutral except for the
/// result, which is kept as the revision the task was created in shaped it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The server-minted id (128 random bits, hex).
    pub id: String,
    /// Whose task it is: the caller's principal, or the legacy session; only its owner
    /// sees, updates or cancels it.
    pub owner: String,
    /// The revision it was created in (its messages are shaped for it).
    pub version: String,
    /// Current status.
    pub status: TaskStatus,
    /// What the handler last said about it.
    pub status_message: Option<String>,
    /// Creation time, Unix milliseconds.
    pub created_at_ms: u64,
    /// Last change, Unix milliseconds.
    pub updated_at_ms: u64,
    /// Time to live from creation, in milliseconds (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval, in milliseconds.
    pub poll_interval_ms: u64,
    /// The final result (status `completed`), as the request would have been answered.
    pub result: Option<Value>,
    /// The JSON-RPC error (status `failed`): `code`, `message`, `data`.
    pub error: Option<Value>,
    /// Outstanding requests to the client (2026-07-28 `inputRequests`), by key.
    pub input_requests: Map<String, Value>,
}

impl TaskRecord {
    /// Whether its time to live has passed at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.ttl_ms
            .is_some_and(|ttl| now_ms >= self.created_at_ms.saturating_add(ttl))
    }

    /// The record as JSON (for stores that keep text, such as Redis).
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "owner": self.owner,
            "version": self.version,
            "status": self.status.as_str(),
            "statusMessage": self.status_message,
            "createdAtMs": self.created_at_ms,
            "updatedAtMs": self.updated_at_ms,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
            "result": self.result,
            "error": self.error,
            "inputRequests": self.input_requests,
        })
    }

    /// Reads [`TaskRecord::to_json`] back.
    pub fn from_json(value: &Value) -> Option<TaskRecord> {
        let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
        let number = |k: &str| value.get(k).and_then(Value::as_u64);
        let present = |k: &str| value.get(k).filter(|v| !v.is_null()).cloned();
        Some(TaskRecord {
            id: text("id")?,
            owner: text("owner")?,
            version: text("version")?,
            status: TaskStatus::parse(value.get("status")?.as_str()?)?,
            status_message: text("statusMessage"),
            created_at_ms: number("createdAtMs")?,
            updated_at_ms: number("updatedAtMs")?,
            ttl_ms: number("ttlMs"),
            poll_interval_ms: number("pollIntervalMs")?,
            result: present("result"),
            error: present("error"),
            input_requests: value
                .get("inputRequests")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
    }
}

/// A change to a stored task, applied atomically by the store: it gets the current
/// record and returns whether it changed it. A store may apply it more than once (to a
/// fresher record, after losing a race with another writer); only its last application
/// counts.
pub type TaskChange = Box<dyn Fn(&mut TaskRecord) -> bool + Send + Sync>;

/// Why a store refused or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The owner already has this many tasks (running, or ended but not yet expired).
    TooMany(usize),
    /// The store could not be reached or answered garbage.
    Unavailable(String),
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskStoreError::TooMany(n) => write!(
                f,
                "too many tasks for this client (at most {n} kept at once: running ones, and ended ones until their time to live is over); wait for some to expire"
            ),
            TaskStoreError::Unavailable(why) => write!(f, "the task store is unavailable: {why}"),
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// Task state storage. Records expire `ttl_ms` after creation (a store may drop them then
/// or later, never earlier). The default is [`MemoryTaskStore`]; implement this for a
/// store shared by replicas. The running handler of a task stays in the process that
/// started it; the store holds what any request about the task needs to answer.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new record, unless its owner already has `max_per_owner` unexpired ones
    /// (running or ended: a task's result is kept, and takes room, until it expires).
    fn insert(
        &self,
        record: TaskRecord,
        max_per_owner: usize,
    ) -> BoxFuture<Result<(), TaskStoreError>>;

    /// The record with this id, unless it is unknown or expired.
    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies `change` to the record atomically; the record after it (`None`: unknown
    /// or expired).
    fn update(
        &self,
        id: &str,
        change: TaskChange,
    ) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>>;

    /// The live records of one owner, oldest first.
    fn list(&self, owner: &str) -> BoxFuture<Result<Vec<TaskRecord>, TaskStoreError>>;
}

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Task records in this process's memory (the default store): expired records are
/// dropped when met and on every insert.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    records: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> MemoryTaskStore {
        MemoryTaskStore::default()
    }

    fn records(&self) -> MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn live(&self, id: &str) -> Option<TaskRecord> {
        let now = now_ms();
        let mut records = self.records();
        match records.get(id) {
            Some(r) if r.expired(now) => {
                records.remove(id);
                None
            }
            other => other.cloned(),
        }
    }
}

impl TaskStore for MemoryTaskStore {
    fn insert(
        &self,
        record: TaskRecord,
        max_per_owner: usize,
    ) -> BoxFuture<Result<(), TaskStoreError>> {
        let now = now_ms();
        let outcome = {
            let mut records = self.records();
            records.retain(|_, r| !r.expired(now));
            let owned = records.values().filter(|r| r.owner == record.owner).count();
            if owned >= max_per_owner {
                Err(TaskStoreError::TooMany(max_per_owner))
            } else {
                records.insert(record.id.clone(), record);
                Ok(())
            }
        };
        Box::pin(std::future::ready(outcome))
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(std::future::ready(Ok(self.live(id))))
    }

    fn update(
        &self,
        id: &str,
        change: TaskChange,
    ) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let now = now_ms();
        let outcome = {
            let mut records = self.records();
            match records.get_mut(id) {
                Some(r) if !r.expired(now) => {
                    if change(r) {
                        r.updated_at_ms = now.max(r.updated_at_ms);
                    }
                    Some(r.clone())
                }
                _ => None,
            }
        };
        Box::pin(std::future::ready(Ok(outcome)))
    }

    fn list(&self, owner: &str) -> BoxFuture<Result<Vec<TaskRecord>, TaskStoreError>> {
        let now = now_ms();
        let mut owned: Vec<TaskRecord> = self
            .records()
            .values()
            .filter(|r| r.owner == owner && !r.expired(now))
            .cloned()
            .collect();
        owned.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        Box::pin(std::future::ready(Ok(owned)))
    }
}

/// An ISO 8601 / RFC 3339 UTC timestamp (`2026-11-23T20:30:00.123Z`) of Unix milliseconds.
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// A duration in whole milliseconds (saturating).
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_795_552_245_678), "2026-11-24T20:30:45.678Z");
    }

    fn record(id: &str, owner: &str, ttl_ms: Option<u64>) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: owner.into(),
            version: "2026-07-28".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now_ms(),
            updated_at_ms: now_ms(),
            ttl_ms,
            poll_interval_ms: 500,
            result: None,
            error: None,
            input_requests: Map::new(),
        }
    }

    #[tokio::test]
    async fn the_bound_is_per_owner_and_expired_records_are_gone() {
        let store = MemoryTaskStore::new();
        store.insert(record("a", "x", None), 2).await.unwrap();
        store.insert(record("b", "x", None), 2).await.unwrap();
        assert_eq!(
            store.insert(record("c", "x", None), 2).await,
            Err(TaskStoreError::TooMany(2))
        );
        store.insert(record("d", "y", None), 2).await.unwrap();
        let mut old = record("e", "z", Some(10));
        old.created_at_ms -= 20;
        store.insert(old, 2).await.unwrap();
        assert_eq!(store.get("e").await.unwrap(), None);
        assert_eq!(store.list("x").await.unwrap().len(), 2);
        let r = record("a", "x", None);
        assert_eq!(TaskRecord::from_json(&r.to_json()), Some(r));
    }
}
