//! The HTTP transport's settings, with safe defaults.

use std::sync::Arc;
use std::time::Duration;

/// HTTP settings, with safe defaults.
#[derive(Clone, Debug)]
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
        }
    }
}
