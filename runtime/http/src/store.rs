//! Shared session state: the [`SessionStore`] trait replicas share legacy sessions through
//! (their records, the history of their SSE streams, and the messages between replicas),
//! and what the transport keeps of it ([`Shared`]). Without a store (the default) none of
//! this runs: sessions live in the process, as before.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use serde_json::{json, Value};

use mcp_runtime::model::LogLevel;
use mcp_runtime::protocol::lifecycle::Lifecycle;
use mcp_runtime::protocol::version::ProtocolVersion;
use mcp_runtime::server::connection::Snapshot;
use mcp_runtime::server::BoxFuture;

/// A failure of the shared store (unreachable, timed out, refused): requests that need it
/// are answered HTTP 503 with a JSON-RPC internal error, and the server keeps trying.
#[derive(Debug, Clone)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "session store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// The events of one stored SSE stream from some position on.
#[derive(Debug, Clone, Default)]
pub struct StoredEvents {
    /// `(position, JSON text of the message)`, in order.
    pub events: Vec<(u64, Bytes)>,
    /// The stream ended: no more events will come.
    pub finished: bool,
}

/// Where the replicas of one server keep what legacy sessions share, so that any replica
/// serves any session (see [`HttpConfig::store`](super::HttpConfig::store)). Records and
/// events are opaque to the store; every method is one short round trip, and a failure is
/// a [`StoreError`] (never a hang: implementations bound their waits).
///
/// `RedisStore` (feature `redis`) is the implementation this crate
/// ships.
///
/// Besides session ids (32 hex digits), the transport keeps two kinds of short records
/// through `save`/`load`/`exists`: `replica:NAME`, renewed every second by each live
/// replica, and `stream:SESSION:STREAM`, naming the replica that writes an SSE stream and
/// the requests it answers — so that a stream whose replica died is ended, with an error
/// for each request, instead of being waited on for ever.
pub trait SessionStore: Send + Sync + 'static {
    /// Session `id`'s record, its lifetime renewed to `ttl`; `None` when the session does
    /// not exist (never did, ended, or expired).
    fn load(&self, id: String, ttl: Duration) -> BoxFuture<Result<Option<String>, StoreError>>;
    /// Writes session `id`'s record, alive for `ttl` unless loaded again.
    fn save(&self, id: String, record: String, ttl: Duration) -> BoxFuture<Result<(), StoreError>>;
    /// Where task state goes when this store is configured (see
    /// [`TaskStore`](mcp_runtime::TaskStore)): by default nowhere (tasks stay in the memory
    /// of the process that created them); [`RedisStore`](https://docs.rs/mcp-runtime-redis) keeps them too.
    /// Feature `tasks`.
    #[cfg(feature = "tasks")]
    fn task_store(&self) -> Option<Arc<dyn mcp_runtime::server::tasks::TaskStore>> {
        None
    }

    /// Whether session `id` exists, its lifetime left as it is (a replica asks before it
    /// drops a copy that was idle here: the session may be busy on another replica).
    fn exists(&self, id: String) -> BoxFuture<Result<bool, StoreError>>;
    /// Ends session `id` everywhere; whether it existed.
    fn remove(&self, id: String) -> BoxFuture<Result<bool, StoreError>>;
    /// Appends event `seq` to stream `stream` of `session`, keeping the last `keep`
    /// events, for `ttl`.
    fn append(
        &self,
        session: String,
        stream: u64,
        seq: u64,
        event: Bytes,
        keep: usize,
        ttl: Duration,
    ) -> BoxFuture<Result<(), StoreError>>;
    /// Marks a stream as ended.
    fn finish(
        &self,
        session: String,
        stream: u64,
        ttl: Duration,
    ) -> BoxFuture<Result<(), StoreError>>;
    /// A stream's events from position `from` on.
    fn read(
        &self,
        session: String,
        stream: u64,
        from: u64,
    ) -> BoxFuture<Result<StoredEvents, StoreError>>;
    /// Sends a message to every replica (itself included).
    fn publish(&self, message: Bytes) -> BoxFuture<Result<(), StoreError>>;
    /// The messages every replica publishes, from now on; the stream ends when the
    /// connection is lost (the transport subscribes again).
    fn subscribe(&self) -> BoxFuture<Result<BoxStream<'static, Bytes>, StoreError>>;
}

/// The store as the transport uses it.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) store: Arc<dyn SessionStore>,
    /// This replica's name: random, tags its server-to-client request ids and the messages
    /// it publishes.
    pub(crate) replica: Arc<str>,
    /// Whether this replica hears the others now (its subscription to the store's channel
    /// is up): what is published while it is not never reaches it.
    pub(crate) listening: Arc<std::sync::atomic::AtomicBool>,
}

impl Shared {
    pub(crate) fn new(store: Arc<dyn SessionStore>) -> Shared {
        let mut bytes = [0u8; 6];
        // Without an OS random source no session id is safe to issue either.
        #[allow(clippy::expect_used)]
        getrandom::getrandom(&mut bytes).expect("the OS random source is unavailable");
        let replica: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Shared {
            store,
            replica: replica.into(),
            listening: Arc::default(),
        }
    }
}

/// The record a live replica renews (`SessionStore` explains these records).
pub(crate) fn replica_key(replica: &str) -> String {
    format!("replica:{replica}")
}

/// The record naming who writes stream `stream` of `session`, and for which requests.
pub(crate) fn stream_key(session: &str, stream: u64) -> String {
    format!("stream:{session}:{stream}")
}

/// A replica renews its record this often …
pub(crate) const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
/// … and is taken for dead when it has not for this long.
pub(crate) const HEARTBEAT_TTL: Duration = Duration::from_secs(5);

/// A stream id that no other replica picks: random, below 2^53 (exact in any JSON
/// reader); odd for a standalone (GET) stream, even for a POST's.
pub(crate) fn random_stream_id(standalone: bool) -> u64 {
    let mut bytes = [0u8; 8];
    // Same reasoning as session ids.
    #[allow(clippy::expect_used)]
    getrandom::getrandom(&mut bytes).expect("the OS random source is unavailable");
    let n = u64::from_le_bytes(bytes) & ((1 << 53) - 1);
    (n & !1) | u64::from(standalone)
}

/// Whether a stream id names a standalone (GET) stream of a store-backed session.
pub(crate) fn is_standalone(stream: u64) -> bool {
    stream & 1 == 1
}

/// A session's record, as stored: its revision and lifecycle, the client's capabilities,
/// the log level, the subscriptions, and who owns it.
pub(crate) fn encode_record(snapshot: &Snapshot, owner: Option<&str>) -> String {
    let (state, version) = match snapshot.lifecycle {
        Lifecycle::New => ("new", None),
        Lifecycle::Initialized(v) => ("initialized", Some(v.as_str())),
        Lifecycle::Operating(v) => ("operating", Some(v.as_str())),
    };
    json!({
        "state": state,
        "version": version,
        "capabilities": snapshot.client_capabilities,
        "logLevel": snapshot.log_level,
        "subscriptions": snapshot.subscriptions,
        "owner": owner,
    })
    .to_string()
}

/// The record read back: the snapshot and the owner's identity. `None` if it is not one
/// this runtime wrote.
pub(crate) fn decode_record(text: &str) -> Option<(Snapshot, Option<String>)> {
    let v: Value = serde_json::from_str(text).ok()?;
    let version = v
        .get("version")
        .and_then(Value::as_str)
        .and_then(ProtocolVersion::parse);
    let lifecycle = match (v.get("state").and_then(Value::as_str)?, version) {
        ("initialized", Some(v)) => Lifecycle::Initialized(v),
        ("operating", Some(v)) => Lifecycle::Operating(v),
        ("new", _) => Lifecycle::New,
        _ => return None,
    };
    let subscriptions: BTreeSet<String> = mcp_runtime::wire::strings(v.get("subscriptions"));
    let snapshot = Snapshot {
        lifecycle,
        client_capabilities: v.get("capabilities").cloned().unwrap_or_else(|| json!({})),
        log_level: v
            .get("logLevel")
            .and_then(Value::as_str)
            .and_then(LogLevel::parse),
        subscriptions,
    };
    let owner = v.get("owner").and_then(Value::as_str).map(str::to_owned);
    Some((snapshot, owner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let snapshot = Snapshot {
            lifecycle: Lifecycle::Operating(ProtocolVersion::parse("2025-06-18").expect("rev")),
            client_capabilities: json!({"elicitation": {}}),
            log_level: Some(LogLevel::Warning),
            subscriptions: ["test://a".to_owned()].into_iter().collect(),
        };
        let text = encode_record(&snapshot, Some("owner"));
        let (back, owner) = decode_record(&text).expect("decodes");
        assert!(back == snapshot, "{text}");
        assert_eq!(owner.as_deref(), Some("owner"));
        assert!(decode_record("{}").is_none());
        for standalone in [true, false] {
            let id = random_stream_id(standalone);
            assert_eq!(is_standalone(id), standalone);
            assert!(id < 1 << 53);
        }
    }
}
