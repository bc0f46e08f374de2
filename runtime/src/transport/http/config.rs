//! The HTTP transport's settings, with safe defaults.

use std::sync::Arc;
use std::time::Duration;

use super::store::SessionStore;

/// HTTP settings, with safe defaults.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Host names accepted in `Host` and `Origin` (port ignored). Default: loopback names.
    pub allowed_hosts: Vec<String>,
    /// At most this many live legacy sessions (further `initialize` get 503). Default 1000.
    pub max_sessions: usize,
    /// A legacy session unused for this long ends. Default 30 minutes.
    pub session_idle_timeout: Duration,
    /// Serve the standalone GET stream of legacy sessions (else 405). Default on.
    pub get_stream: bool,
    /// Serve the 2024-11-05 HTTP+SSE transport at `/sse` and `/messages`. Default on.
    pub legacy_sse: bool,
    /// Events kept per SSE stream of a legacy session for `Last-Event-ID` replay (the
    /// oldest are dropped beyond it). Default 1000.
    pub max_stored_events: usize,
    /// SSE streams kept per legacy session (finished ones are forgotten first). Default 100.
    pub max_streams_per_session: usize,
    /// Makes the server an OAuth 2.1 resource server (see [`crate::auth`]): every MCP
    /// request needs a bearer token the verifier accepts, and the metadata documents are
    /// served. Default `None`: no authorization.
    pub authorization: Option<Arc<crate::auth::ResourceServer>>,
    /// Where legacy sessions live when several replicas serve them ([`HttpConfig::store`]).
    /// Default `None`: in this process.
    pub(crate) store: Option<Arc<dyn SessionStore>>,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_sessions", &self.max_sessions)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("get_stream", &self.get_stream)
            .field("legacy_sse", &self.legacy_sse)
            .field("max_stored_events", &self.max_stored_events)
            .field("max_streams_per_session", &self.max_streams_per_session)
            .field("authorization", &self.authorization)
            .field("store", &self.store.is_some())
            .finish()
    }
}

impl HttpConfig {
    /// Keeps legacy sessions in `store`, shared by every replica configured with the same
    /// store (and the same [`ServerBuilder::state_keys`](crate::ServerBuilder::state_keys)):
    /// behind a load balancer without affinity, any replica serves any session — its
    /// revision, client capabilities, log level and subscriptions, the history of its SSE
    /// streams (`Last-Event-ID` replay on any replica), answers to the server's requests
    /// and cancellations (relayed to the replica running the handler), change announcements
    /// (to the replica holding the GET stream); `DELETE` and idle expiry end it everywhere.
    /// HTTP+SSE (2024-11-05) connections stay on the replica that holds their stream.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// # #[cfg(feature = "redis")] {
    /// use mcp_runtime::transport::http::{HttpConfig, RedisStore};
    /// let config = HttpConfig::default().store(RedisStore::connect("redis://127.0.0.1/").await?);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn store(mut self, store: impl SessionStore) -> HttpConfig {
        self.store = Some(Arc::new(store));
        self
    }
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            max_sessions: 1000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            get_stream: true,
            legacy_sse: true,
            max_stored_events: 1000,
            max_streams_per_session: 100,
            authorization: None,
            store: None,
        }
    }
}
