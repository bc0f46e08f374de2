//! The HTTP transport's settings, with safe defaults.

use std::sync::Arc;
use std::time::Duration;

use super::store::SessionStore;

/// HTTP settings, with safe defaults.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Host names accepted in `Host` (port ignored): DNS-rebinding protection. Add the
    /// names clients reach the server by (its public name behind a load balancer).
    /// Default: loopback names.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted in `Origin` (sent by browsers): a request with any other is
    /// refused with 403, so that a web page of another site cannot drive the server from
    /// a user's browser. Each entry is an exact origin (`https://app.example.com`,
    /// `http://localhost:5173`), a host name (that host over http or https, any port), or
    /// `*` (any origin: only for a server whose every request needs a token, see
    /// [`HttpConfig::authorization`]). Requests without `Origin` (non-browser clients)
    /// are not affected. Default: loopback names.
    pub allowed_origins: Vec<String>,
    /// Answers CORS preflights and adds CORS headers for the [allowed
    /// origins](HttpConfig::allowed_origins), so that browser clients of another origin
    /// can send `Authorization`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`
    /// and JSON, and read `Mcp-Session-Id`, `MCP-Protocol-Version` and `WWW-Authenticate`
    /// (see [`Cors`]). Default `None`: no CORS headers (a browser page of another origin
    /// cannot read the answers).
    pub cors: Option<Cors>,
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
    /// SSE stream polling for sessions of the revisions that define it (2025-11-25; see
    /// [`SsePolling`]). Default `None`: every client sees what it saw before polling
    /// existed — no priming events, and a stream's connection is held until its end.
    pub sse_polling: Option<SsePolling>,
    /// A comment line goes on every open SSE stream after this long without an event
    /// (the legacy GET stream, a POST's stream while its tool runs, a 2026-07-28
    /// `subscriptions/listen`, an HTTP+SSE stream), so that proxies and clients with an
    /// idle or body timeout do not cut a stream that is only waiting. Keep it below the
    /// shortest idle timeout on the way (nginx's `proxy_read_timeout` is 60 s by default;
    /// Node's body timeout is 300 s). Default 15 s; `None` sends none.
    pub keep_alive: Option<Duration>,
    /// Where legacy sessions live when several replicas serve them ([`HttpConfig::store`]).
    /// Default `None`: in this process.
    pub(crate) store: Option<Arc<dyn SessionStore>>,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("cors", &self.cors)
            .field("max_sessions", &self.max_sessions)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("get_stream", &self.get_stream)
            .field("legacy_sse", &self.legacy_sse)
            .field("max_stored_events", &self.max_stored_events)
            .field("max_streams_per_session", &self.max_streams_per_session)
            .field("sse_polling", &self.sse_polling)
            .field("keep_alive", &self.keep_alive)
            .field("authorization", &self.authorization)
            .field("store", &self.store.is_some())
            .finish()
    }
}

impl HttpConfig {
    /// The polling rule for a session of revision `version`: the configured one when that
    /// revision defines SSE polling (`Features::sse_polling`), else `None` (the clients of
    /// 2025-03-26 and 2025-06-18 see exactly what they saw before; 2026-07-28 has no
    /// resumable streams).
    pub(crate) fn polling_for(
        &self,
        version: Option<mcp_runtime::protocol::version::ProtocolVersion>,
    ) -> Option<SsePolling> {
        self.sse_polling
            .filter(|_| version.is_some_and(|v| v.features().sse_polling))
    }

    /// Keeps legacy sessions in `store`, shared by every replica configured with the same
    /// store (and the same [`ServerBuilder::state_keys`](mcp_runtime::ServerBuilder::state_keys)):
    /// behind a load balancer without affinity, any replica serves any session — its
    /// revision, client capabilities, log level and subscriptions, the history of its SSE
    /// streams (`Last-Event-ID` replay on any replica), answers to the server's requests
    /// and cancellations (relayed to the replica running the handler), change announcements
    /// (to the replica holding the GET stream); `DELETE` and idle expiry end it everywhere.
    /// HTTP+SSE (2024-11-05) connections stay on the replica that holds their stream.
    ///
    /// With Redis (the crate `mcp-runtime-redis`):
    ///
    /// ```ignore
    /// use mcp_runtime_http::HttpConfig;
    /// use mcp_runtime_redis::RedisStore;
    /// let config = HttpConfig::default().store(RedisStore::connect("redis://127.0.0.1/").await?);
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
            allowed_origins: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            cors: None,
            max_sessions: 1000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            get_stream: true,
            legacy_sse: true,
            max_stored_events: 1000,
            max_streams_per_session: 100,
            sse_polling: None,
            keep_alive: Some(Duration::from_secs(15)),
            authorization: None,
            store: None,
        }
    }
}

/// SSE stream polling (SEP-1699, 2025-11-25 `basic/transports`): what a server may do so
/// that an SSE stream does not hold its connection open.
///
/// For a session whose revision defines it (2025-11-25, the only legacy revision that
/// does; clients of 2025-03-26 and 2025-06-18 never see any of this):
///
/// - every SSE stream of the session (a POST's answer, the GET stream) starts with a
///   **priming event**: an event id and empty data, with a `retry` field of
///   [`SsePolling::retry`]. From that moment the client holds an id and can resume the
///   stream with `GET` + `Last-Event-ID`, even if the connection drops before the first
///   message (without it, a long request that sends nothing cannot be resumed);
/// - with [`SsePolling::close_after`], the server closes a stream's *connection* (not the
///   stream) once it has been open that long, after a `retry` field; the client
///   reconnects with `Last-Event-ID` after `retry` and gets what the stream had since,
///   its answer included, on a connection closed again after the same time. A request
///   whose first message has not come by then is answered with an SSE stream (priming
///   event, connection closed) instead of holding the POST open for a JSON answer.
///
/// **Why it is off by default.** Every server behaviour here is a SHOULD or a MAY in the
/// specification, while what makes closing safe is a client SHOULD ("The client SHOULD
/// then poll the SSE stream"): a client that negotiated 2025-11-25 but does not poll
/// never receives the answer of a request whose connection was closed. Holding the
/// connection is what every client already handles, and resumption after a lost
/// connection works without polling (event ids on every message). Priming events are
/// empty `data:` lines that clients written before SEP-1699 try to parse as JSON and
/// fail on, which is why the specification confines them to 2025-11-25 clients. Turn
/// polling on where long-lived connections are a problem (proxies and load balancers
/// with idle timeouts, many long-running requests), and the clients are known to poll
/// (the official TypeScript and Python SDK clients of 2025-11-25 — tested: TypeScript
/// 1.32.2, Python 1.30.0 — and this crate's client).
///
/// Sessions shared by replicas ([`HttpConfig::store`]) poll the same way: the priming
/// event and every message are in the store, so the reconnection may reach any replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SsePolling {
    /// How long the client waits before reconnecting (the SSE `retry` field). The
    /// specification makes the client honour it. Default 1 s.
    pub retry: Duration,
    /// Close a stream's connection after it has been open this long (counted from the
    /// request that opened it). `None`: priming events and `retry` only, connections held
    /// until the stream ends. Default `None`.
    pub close_after: Option<Duration>,
}

impl Default for SsePolling {
    fn default() -> SsePolling {
        SsePolling {
            retry: Duration::from_secs(1),
            close_after: None,
        }
    }
}

impl SsePolling {
    /// Priming events with `retry`, connections held until their stream ends.
    pub fn new(retry: Duration) -> SsePolling {
        SsePolling {
            retry,
            close_after: None,
        }
    }

    /// Also closes each stream's connection after `after` (the client polls).
    pub fn close_after(mut self, after: Duration) -> SsePolling {
        self.close_after = Some(after);
        self
    }

    /// The `retry` field's value, in whole milliseconds.
    pub(crate) fn retry_millis(&self) -> u64 {
        u64::try_from(self.retry.as_millis()).unwrap_or(u64::MAX)
    }
}

/// CORS for browser clients of another origin ([`HttpConfig::cors`]), for the origins of
/// [`HttpConfig::allowed_origins`].
///
/// Preflights (`OPTIONS` with `Access-Control-Request-Method`) of the MCP routes are
/// answered `204` with the methods (`GET`, `POST`, `DELETE`) and headers the protocol
/// uses (`Authorization`, `Content-Type`, `Accept`, `Last-Event-ID`, `Mcp-Session-Id`,
/// `MCP-Protocol-Version`, and every other `Mcp-*` header a client asks for, such as the
/// 2026-07-28 `Mcp-Method` and `Mcp-Name`); every answer, errors included, carries
/// `Access-Control-Allow-Origin` (the request's origin) and exposes `Mcp-Session-Id`,
/// `MCP-Protocol-Version` and `WWW-Authenticate`. No credentials mode: MCP clients
/// send tokens in `Authorization`, never cookies.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cors {
    /// How long a browser may cache a preflight's answer (`Access-Control-Max-Age`).
    /// Default 10 minutes.
    pub max_age: Duration,
    /// Request headers allowed besides the protocol's (`x-request-id`, say).
    pub extra_allowed_headers: Vec<String>,
    /// Answer headers exposed besides the protocol's.
    pub extra_exposed_headers: Vec<String>,
}

impl Default for Cors {
    fn default() -> Cors {
        Cors {
            max_age: Duration::from_secs(600),
            extra_allowed_headers: Vec::new(),
            extra_exposed_headers: Vec::new(),
        }
    }
}
