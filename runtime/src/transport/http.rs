//! HTTP: Streamable HTTP on one endpoint for both eras (legacy sessions of 2025-03-26 …
//! 2025-11-25, stateless 2026-07-28 requests), and the old HTTP+SSE transport of
//! 2024-11-05 (`GET /sse` + `POST /messages`). DNS-rebinding protection, a body limit
//! and a session cap are on by default.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::cancel::CancellationToken;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, FromRequest, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine;
use futures_util::stream;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::auth::{self, guard::Caller, Principal};
use crate::jsonrpc::{self, ErrorCode, Frame, Message, Outgoing, RequestId, RpcError};
use crate::server::Server;
use crate::session::Connection;
use crate::transport::event_store::SessionStreams;
use crate::version::{self, Era, ProtocolVersion};

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

struct Session {
    conn: Arc<Connection>,
    /// Streamable HTTP sessions: every SSE stream's events, kept for `Last-Event-ID`.
    streams: Option<SessionStreams>,
    /// Whether a GET (standalone) stream is open: each message goes to one stream only.
    get_open: Arc<AtomicBool>,
    /// HTTP+SSE sessions: answers go to the stream, not to the POST.
    sse_sink: Option<mpsc::Sender<Outgoing>>,
    last_seen: Mutex<Instant>,
    /// Who opened the session (when the server is a resource server): only the same
    /// principal may use it.
    principal: Option<Arc<Principal>>,
}

struct AppState {
    server: Server,
    config: HttpConfig,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Shutdown began: no new sessions or stateless requests (503).
    stopping: CancellationToken,
    /// The grace period is over: whatever still runs is cancelled and every stream ends.
    closing: CancellationToken,
    /// Stateless requests being answered (their connections are not in `sessions`).
    stateless_active: AtomicUsize,
    /// The session channel of every stateless connection: there is no session to carry
    /// its notifications, so the receiver is gone and a send fails at once. One shared
    /// channel instead of one per request (each allocated a 1.6 KiB block).
    no_session: mpsc::Sender<Outgoing>,
}

impl AppState {
    /// Waits until no request is running (in sessions or stateless), or `deadline`.
    async fn drained(&self, deadline: tokio::time::Instant) {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        let grace = deadline.saturating_duration_since(tokio::time::Instant::now());
        futures_util::future::join_all(sessions.iter().map(|s| s.conn.drain(grace))).await;
        while self.stateless_active.load(Ordering::SeqCst) > 0
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Ends every session and stateless request: running handlers are cancelled, their
    /// answers dropped, and every SSE stream ends.
    fn close_all(&self) {
        self.closing.cancel();
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for session in sessions {
            session.conn.close();
            if let Some(streams) = &session.streams {
                streams.standalone().finish();
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The HTTP routes for `server`: `/mcp` (Streamable HTTP), and `/sse` + `/messages`
/// (HTTP+SSE) unless disabled.
pub fn router(server: Server, config: HttpConfig) -> Router {
    app(server, config).0
}

fn app(server: Server, config: HttpConfig) -> (Router, Arc<AppState>) {
    let limit = server.limits().max_message_bytes;
    let legacy_sse = config.legacy_sse;
    let state = Arc::new(AppState {
        server,
        config,
        sessions: Mutex::new(HashMap::new()),
        stopping: CancellationToken::new(),
        closing: CancellationToken::new(),
        stateless_active: AtomicUsize::new(0),
        no_session: mpsc::channel(1).0,
    });
    spawn_reaper(Arc::downgrade(&state), state.config.session_idle_timeout);
    let mut app = Router::new().route("/mcp", post(post_mcp).get(get_mcp).delete(delete_mcp));
    if legacy_sse {
        app = app
            .route("/sse", get(get_sse))
            .route("/messages", post(post_messages));
    }
    let mut app = app
        .layer(DefaultBodyLimit::max(limit))
        .with_state(Arc::clone(&state));
    if let Some(rs) = &state.config.authorization {
        app = app.merge(auth::guard::metadata_routes(rs));
    }
    (app, state)
}

/// Serves `server` on `addr` until the process ends.
pub async fn serve_http(
    server: Server,
    addr: SocketAddr,
    config: HttpConfig,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_listener(server, listener, config).await
}

/// Serves `server` on `addr` until `shutdown` resolves, then stops gracefully (see
/// [`serve_listener_with_shutdown`]).
pub async fn serve_http_with_shutdown(
    server: Server,
    addr: SocketAddr,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_listener_with_shutdown(server, listener, config, shutdown).await
}

/// Serves `server` on an already bound listener (tests bind `127.0.0.1:0`).
pub async fn serve_listener(
    server: Server,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
) -> std::io::Result<()> {
    serve_listener_with_shutdown(server, listener, config, std::future::pending()).await
}

/// How long connections get to deliver the end of their streams once everything was
/// closed at the end of the grace period.
const FLUSH_AFTER_CLOSE: Duration = Duration::from_millis(500);

/// Serves `server` on an already bound listener until `shutdown` resolves (a signal, for
/// instance), then shuts down gracefully: no new connections are accepted, and new
/// sessions and stateless requests on open connections get 503; requests in progress get
/// `Limits::shutdown_grace` to finish (and their answers are delivered); then every
/// session ends (handlers still running are cancelled, SSE streams end) and, after a
/// short flush, the function returns `Ok`.
pub async fn serve_listener_with_shutdown(
    server: Server,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    use std::future::IntoFuture;
    let grace = server.limits().shutdown_grace;
    let (app, state) = app(server, config);
    // Nagle's algorithm stalls small SSE writes by ~40 ms per request with some clients.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("TCP_NODELAY: {e}");
        }
    });
    let serving = axum::serve(listener, app)
        .with_graceful_shutdown(state.stopping.clone().cancelled_owned())
        .into_future();
    tokio::pin!(serving);
    tokio::pin!(shutdown);
    tokio::select! {
        result = &mut serving => return result,
        () = &mut shutdown => {}
    }
    tracing::info!(?grace, "shutting down");
    state.stopping.cancel();
    let deadline = tokio::time::Instant::now() + grace;
    tokio::select! {
        // Every connection ended (no stream was open).
        result = &mut serving => {
            state.close_all();
            return result;
        }
        () = state.drained(deadline) => {}
    }
    state.close_all();
    match tokio::time::timeout(FLUSH_AFTER_CLOSE, &mut serving).await {
        Ok(result) => result,
        // A peer that does not read its stream's end is not waited for.
        Err(_) => Ok(()),
    }
}

/// 503 while shutting down.
fn shutting_down() -> Response {
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        ErrorCode::INTERNAL_ERROR,
        "Service Unavailable: the server is shutting down",
    )
}

fn spawn_reaper(state: std::sync::Weak<AppState>, idle_timeout: Duration) {
    // Look twice per timeout (at most every 30 s), so a session outlives its idle time by
    // at most half of it.
    let period = (idle_timeout / 2).clamp(Duration::from_millis(10), Duration::from_secs(30));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(period).await;
            let Some(state) = state.upgrade() else { return };
            let timeout = state.config.session_idle_timeout;
            let mut sessions = lock(&state.sessions);
            sessions.retain(|_, s| {
                let alive = lock(&s.last_seen).elapsed() < timeout;
                if !alive {
                    s.conn.close();
                }
                alive
            });
        }
    });
}

/// The live session with this id, or the 404 for an unknown or ended one — or for one
/// another principal opened (see ARCHITECTURE.md, "Authorization").
// A `Response` is the natural error of a request guard; it is built once per rejection.
#[allow(clippy::result_large_err)]
fn find_session(state: &AppState, id: &str, caller: &Caller) -> Result<Arc<Session>, Response> {
    lock(&state.sessions)
        .get(id)
        .filter(|s| caller.owns(s.principal.as_ref()))
        .cloned()
        .ok_or_else(session_not_found)
}

/// 404 for an unknown or ended session (the client must start a new one).
fn session_not_found() -> Response {
    rpc_error(
        StatusCode::NOT_FOUND,
        None,
        ErrorCode(-32001),
        "Session not found",
    )
}

fn json_response(status: StatusCode, body: &Outgoing) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.json().bytes(),
    )
        .into_response()
}

fn rpc_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: ErrorCode,
    message: &str,
) -> Response {
    json_response(
        status,
        &jsonrpc::error_response(id, &RpcError::new(code, message)),
    )
}

/// Host and Origin must name an allowed host (DNS-rebinding protection): else 403.
// A `Response` is the natural error of a request guard; it is built once per rejection.
#[allow(clippy::result_large_err)]
fn check_host(config: &HttpConfig, headers: &HeaderMap) -> Result<(), Response> {
    // `host[:port]` exactly: anything else (user info, a path, a port that is not a
    // number) is refused rather than guessed at.
    let allowed = |authority: &str| {
        let (host, port) = if authority.starts_with('[') {
            match authority.find(']') {
                Some(end) => authority.split_at(end + 1),
                None => return false,
            }
        } else {
            match authority.find(':') {
                Some(colon) => authority.split_at(colon),
                None => (authority, ""),
            }
        };
        let port_ok = port.is_empty()
            || port
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        port_ok
            && config
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
    };
    let forbidden = |what: &str| {
        rpc_error(
            StatusCode::FORBIDDEN,
            None,
            ErrorCode::INVALID_REQUEST,
            &format!("Forbidden: {what} not allowed"),
        )
    };
    match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
        Some(host) if allowed(host) => {}
        _ => return Err(forbidden("Host")),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://"))
            .is_some_and(|(scheme, rest)| {
                (scheme == "http" || scheme == "https") && allowed(rest.trim_end_matches('/'))
            });
        if !ok {
            return Err(forbidden("Origin"));
        }
    }
    Ok(())
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// The id to answer `body` with, as [`jsonrpc::parse_message`] would read it (a request's
/// id, or the id of an invalid message; never a response's), without copying the body.
fn request_id(body: &Value) -> Option<RequestId> {
    let obj = body.as_object()?;
    let id = RequestId::from_value(obj.get("id")?)?;
    let well_formed = obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && obj
            .get("params")
            .is_none_or(|p| p.is_object() || p.is_array());
    let is_response = !obj.contains_key("method")
        && (obj.contains_key("result") || obj.get("error").is_some_and(Value::is_object));
    (!(well_formed && is_response)).then_some(id)
}

async fn post_mcp(State(state): State<Arc<AppState>>, request: axum::extract::Request) -> Response {
    // The headers are taken out of the request, not extracted: axum's `HeaderMap`
    // extractor clones the map, which was ~3% of the server's time per stateless call.
    let (mut parts, body) = request.into_parts();
    let headers = std::mem::take(&mut parts.headers);
    let authz = state.config.authorization.as_ref();
    let caller = match auth::guard::authorize(authz, &headers, &parts.uri).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    // The body limit (`DefaultBodyLimit`) travels in the extensions, kept in `parts`.
    let body =
        match Bytes::from_request(axum::extract::Request::from_parts(parts, body), &state).await {
            Ok(body) => body,
            Err(rejection) => return rejection.into_response(),
        };
    if let Err(r) = check_host(&state.config, &headers) {
        return r;
    }
    if let Some(session_id) = header_str(&headers, "mcp-session-id") {
        let session = match find_session(&state, session_id, &caller) {
            Ok(s) => s,
            Err(r) => return r,
        };
        *lock(&session.last_seen) = Instant::now();
        if let Some(v) = header_str(&headers, "mcp-protocol-version") {
            match ProtocolVersion::parse(v) {
                Some(v) if Some(v) == session.conn.version() => {}
                Some(_) => {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        None,
                        ErrorCode::INVALID_REQUEST,
                        "MCP-Protocol-Version does not match the session's revision",
                    )
                }
                None => {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        None,
                        ErrorCode::INVALID_REQUEST,
                        &format!("Unsupported MCP-Protocol-Version: {v}"),
                    )
                }
            }
        }
        // An HTTP+SSE session (2024-11-05) posts to `/messages`, never here.
        let Some(streams) = session.streams.as_ref() else {
            return session_not_found();
        };
        let frame = jsonrpc::parse_frame(&body);
        if let Some(refused) = auth::guard::frame_refusal(authz, &caller, &frame) {
            return refused;
        }
        return dispatch(&session.conn, frame, None, Some(streams), None, &caller).await;
    }
    // The frame is parsed once: a well-formed request is routed and checked on its
    // parsed envelope, then handed to its connection as it is. Anything else (a batch, a
    // notification, a response, an invalid message) is read as a `Value` for the routing
    // decision, as the general path has it.
    let frame = jsonrpc::parse_frame(&body);
    if let Some(refused) = auth::guard::frame_refusal(authz, &caller, &frame) {
        return refused;
    }
    let general: Value;
    let probe = match &frame {
        Frame::Single(Ok(Message::Request { id, method, params })) => Probe {
            id: Some(id.clone()),
            method,
            params: params.as_ref(),
        },
        _ => {
            general = match serde_json::from_slice(&body) {
                Ok(v) => v,
                Err(e) => {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        None,
                        ErrorCode::PARSE_ERROR,
                        &format!("Parse error: {e}"),
                    )
                }
            };
            Probe {
                id: request_id(&general),
                method: general
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                params: general.get("params"),
            }
        }
    };
    let header_version = header_str(&headers, "mcp-protocol-version");
    let has_meta = jsonrpc::member(probe.params, "_meta").is_some();
    let header_is_legacy = header_version
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| v.era() == Era::Legacy);
    let modern_served = state.server.versions().of_era(Era::Modern).next().is_some();
    if modern_served && (has_meta || (header_version.is_some() && !header_is_legacy)) {
        if let Some(refused) = stateless_refusal(&state, &headers, &probe) {
            return refused;
        }
        return stateless(&state, frame, &caller).await;
    }
    if probe.method == "initialize" {
        return initialize(&state, frame, &caller).await;
    }
    rpc_error(
        StatusCode::BAD_REQUEST,
        probe.id.as_ref(),
        ErrorCode(-32000),
        "Bad Request: invalid or missing session ID",
    )
}

/// What routing and the stateless checks read of a POST without a session.
struct Probe<'a> {
    /// The id an error answer carries (none for a response or an unreadable id).
    id: Option<RequestId>,
    method: &'a str,
    params: Option<&'a Value>,
}

async fn initialize(state: &Arc<AppState>, frame: Frame, caller: &Caller) -> Response {
    if state.stopping.is_cancelled() {
        return shutting_down();
    }
    if lock(&state.sessions).len() >= state.config.max_sessions {
        return rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            ErrorCode::INTERNAL_ERROR,
            "Too many sessions",
        );
    }
    let (tx, rx) = mpsc::channel(state.server.limits().outbound_queue);
    let conn = Connection::new(state.server.clone(), tx);
    let response = dispatch(&conn, frame, None, None, None, caller).await;
    if conn.version().is_none() {
        // initialize failed: no session.
        conn.close();
        return response;
    }
    let id = new_session_id();
    let streams = SessionStreams::new(
        state.config.max_streams_per_session,
        state.config.max_stored_events,
    );
    // The session's own notifications fill the standalone stream, read by GET.
    let standalone = streams.standalone();
    let mut rx = rx;
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            standalone.push(message);
        }
        standalone.finish();
    });
    let session = Arc::new(Session {
        conn,
        streams: Some(streams),
        get_open: Arc::new(AtomicBool::new(false)),
        sse_sink: None,
        last_seen: Mutex::new(Instant::now()),
        principal: caller.principal().cloned(),
    });
    lock(&state.sessions).insert(id.clone(), session);
    let mut response = response;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("mcp-session-id", value);
    }
    response
}

/// A session id: 128 bits from the OS CSPRNG, as 32 hex digits (visible ASCII).
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    // Without an OS random source no session id is safe to issue.
    #[allow(clippy::expect_used)]
    getrandom::getrandom(&mut bytes).expect("the OS random source is unavailable");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Validates a stateless (2026-07-28) request's headers against its body, in the order
/// the spec gives: the answer refusing it, or `None` when it may be served.
fn stateless_refusal(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    probe: &Probe<'_>,
) -> Option<Response> {
    let id = probe.id.as_ref();
    let bad =
        |code: ErrorCode, message: &str| rpc_error(StatusCode::BAD_REQUEST, id, code, message);
    let Some(header_version) = header_str(headers, "mcp-protocol-version") else {
        return Some(bad(
            ErrorCode::HEADER_MISMATCH,
            "Header mismatch: MCP-Protocol-Version header is required",
        ));
    };
    let params = probe.params;
    let meta_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(version::META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let any_revision = version::negotiate_modern(params, crate::VersionSet::ALL);
    if let Err(e) = &any_revision {
        if e.code == ErrorCode::INVALID_PARAMS {
            return Some(json_response(
                StatusCode::BAD_REQUEST,
                &jsonrpc::error_response(id, e),
            ));
        }
    }
    if meta_version != Some(header_version) {
        return Some(bad(ErrorCode::HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version header does not match params._meta protocol version"));
    }
    let served = state.server.versions();
    if !any_revision.is_ok_and(|meta| served.contains(meta.version)) {
        if let Err(e) = version::negotiate_modern(params, served) {
            return Some(json_response(
                StatusCode::BAD_REQUEST,
                &jsonrpc::error_response(id, &e),
            ));
        }
    }
    let method = probe.method;
    match header_str(headers, "mcp-method") {
        Some(m) if m == method => {}
        Some(m) => return Some(bad(ErrorCode::HEADER_MISMATCH, &format!("Header mismatch: Mcp-Method header value '{m}' does not match body value '{method}'"))),
        None => return Some(bad(ErrorCode::HEADER_MISMATCH, "Header mismatch: Mcp-Method header is required")),
    }
    let name_source = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" => params.and_then(|p| p.get("uri")),
        _ => None,
    };
    if let Some(expected) = name_source.and_then(Value::as_str) {
        match header_str(headers, "mcp-name").map(decode_header_value) {
            Some(Some(v)) if v == expected => {}
            Some(Some(v)) => return Some(bad(ErrorCode::HEADER_MISMATCH, &format!("Header mismatch: Mcp-Name header value '{v}' does not match body value '{expected}'"))),
            Some(None) => return Some(bad(ErrorCode::HEADER_MISMATCH, "Header mismatch: Mcp-Name header is not valid base64")),
            None => return Some(bad(ErrorCode::HEADER_MISMATCH, "Header mismatch: Mcp-Name header is required")),
        }
    }
    if method == "tools/call" {
        let name = params
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = params
            .and_then(|p| p.get("arguments"))
            .unwrap_or(&Value::Null);
        let checked = state.server.with_tool_input_schema(name, |schema| {
            check_param_headers(schema, arguments, headers)
        });
        if let Some(Err(message)) = checked {
            return Some(bad(ErrorCode::HEADER_MISMATCH, &message));
        }
    }
    None
}

/// Serves a stateless request whose headers were checked on a connection of its own.
async fn stateless(state: &Arc<AppState>, frame: Frame, caller: &Caller) -> Response {
    if state.stopping.is_cancelled() {
        return shutting_down();
    }
    let conn = Connection::stateless(state.server.clone(), state.no_session.clone());
    state.stateless_active.fetch_add(1, Ordering::SeqCst);
    let in_progress = InProgress {
        conn: Arc::clone(&conn),
        state: Arc::clone(state),
    };
    dispatch(
        &conn,
        frame,
        Some(StatusMap::Modern),
        None,
        Some(in_progress),
        caller,
    )
    .await
}

/// `x-mcp-header` (2026-07-28): every tool parameter its input schema mirrors into an
/// `Mcp-Param-{Name}` header must arrive with a header whose (decoded) value equals the
/// argument; an argument that is absent or null needs no header.
fn check_param_headers(
    schema: &Value,
    arguments: &Value,
    headers: &HeaderMap,
) -> Result<(), String> {
    let mut annotated = Vec::new();
    collect_header_params(schema, &mut Vec::new(), &mut annotated);
    for (path, name) in annotated {
        let mut value = arguments;
        for key in &path {
            value = value.get(key).unwrap_or(&Value::Null);
        }
        if value.is_null() {
            continue;
        }
        let header_name = format!("mcp-param-{name}");
        let Some(raw) = headers.get(header_name.as_str()) else {
            return Err(format!(
                "Header mismatch: Mcp-Param-{name} header is required"
            ));
        };
        let raw = raw
            .to_str()
            .map_err(|_| {
                format!("Header mismatch: Mcp-Param-{name} header has invalid characters")
            })?
            .trim();
        let decoded = decode_header_value(raw).ok_or_else(|| {
            format!("Header mismatch: Mcp-Param-{name} header is not valid base64")
        })?;
        let matches = match value {
            Value::String(s) => *s == decoded,
            Value::Bool(b) => decoded == b.to_string(),
            Value::Number(n) => decoded
                .parse::<f64>()
                .ok()
                .zip(n.as_f64())
                .is_some_and(|(a, b)| a == b),
            _ => false,
        };
        if !matches {
            return Err(format!("Header mismatch: Mcp-Param-{name} header value '{decoded}' does not match the argument"));
        }
    }
    Ok(())
}

/// Annotated properties reachable from the root through `properties` only.
fn collect_header_params(
    schema: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (key, sub) in props {
        path.push(key.clone());
        if let Some(name) = sub.get("x-mcp-header").and_then(Value::as_str) {
            out.push((path.clone(), name.to_owned()));
        }
        collect_header_params(sub, path, out);
        path.pop();
    }
}

/// A header value, literal or in the `=?base64?…?=` sentinel form.
fn decode_header_value(raw: &str) -> Option<String> {
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(raw.to_owned()),
    }
}

/// How JSON-RPC errors map to HTTP statuses (stateless wire only).
#[derive(Clone, Copy)]
enum StatusMap {
    Modern,
}

fn status_for(map: Option<StatusMap>, answer: &Outgoing) -> StatusCode {
    match (map, answer.error_code()) {
        (Some(StatusMap::Modern), Some(-32601)) => StatusCode::NOT_FOUND,
        (Some(StatusMap::Modern), Some(-32022..=-32020)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Sends a POST body into a connection and turns what comes back into the HTTP answer:
/// 202 for notifications and responses only; JSON when the answer comes first; else an
/// SSE stream of the request's notifications followed by its answer.
async fn dispatch(
    conn: &Arc<Connection>,
    frame: Frame,
    map: Option<StatusMap>,
    streams: Option<&SessionStreams>,
    stateless: Option<InProgress>,
    caller: &Caller,
) -> Response {
    let (tx, mut rx) = mpsc::channel::<Outgoing>(64);
    let requests = conn.handle_parsed_as(frame, &tx, caller.principal()).await;
    drop(tx);
    if requests == 0 {
        return StatusCode::ACCEPTED.into_response();
    }
    // A stateless request lives as long as its HTTP exchange: if the client goes away
    // before the first message (`stateless` is dropped with this future) or the server
    // closes, its handler is cancelled.
    let first = match &stateless {
        Some(p) => tokio::select! {
            first = rx.recv() => first,
            () = p.state.closing.cancelled() => return shutting_down(),
        },
        None => rx.recv().await,
    };
    let Some(first) = first else {
        // Every request was cancelled: nothing to say.
        return StatusCode::ACCEPTED.into_response();
    };
    if first.is_answer() {
        return json_response(status_for(map, &first), &first);
    }
    // Legacy session: the stream is stored, so that a client that loses it can resume
    // with `Last-Event-ID` and the request's answer is not lost.
    if let Some(streams) = streams {
        let stored = streams.spawn(first, rx);
        return sse_response(Body::from_stream(stored.reader(0, None)));
    }
    // A stateless request's connection lives as long as its stream: when the client goes
    // away (a `subscriptions/listen` it stopped reading), its handler is cancelled.
    let events = stream::unfold(
        (Some(first), rx, stateless),
        |(pending, mut rx, guard)| async move {
            let next = match (pending, &guard) {
                (Some(v), _) => Some(v),
                (None, Some(p)) => tokio::select! {
                    next = rx.recv() => next,
                    () = p.state.closing.cancelled() => None,
                },
                (None, None) => rx.recv().await,
            };
            next.map(|v| {
                (
                    Ok::<_, std::convert::Infallible>(sse_event(&v, None)),
                    (None, rx, guard),
                )
            })
        },
    );
    sse_response(Body::from_stream(events))
}

/// A stateless request being answered: counted for the graceful shutdown; when dropped
/// (answered, or its client gone) its connection is closed, cancelling what still runs.
struct InProgress {
    conn: Arc<Connection>,
    state: Arc<AppState>,
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.conn.close();
        self.state.stateless_active.fetch_sub(1, Ordering::SeqCst);
    }
}

fn sse_event(message: &Outgoing, event: Option<&str>) -> Bytes {
    let json = message.json().as_bytes();
    let mut out = Vec::with_capacity(json.len() + 24);
    if let Some(e) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(e.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

async fn get_mcp(State(state): State<Arc<AppState>>, uri: Uri, headers: HeaderMap) -> Response {
    let authz = state.config.authorization.as_ref();
    let caller = match auth::guard::authorize(authz, &headers, &uri).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Err(r) = check_host(&state.config, &headers) {
        return r;
    }
    if !state.config.get_stream {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let Some(session_id) = header_str(&headers, "mcp-session-id") else {
        // The stateless revision has no GET stream.
        return rpc_error(
            StatusCode::METHOD_NOT_ALLOWED,
            None,
            ErrorCode(-32000),
            "Method Not Allowed: GET needs an Mcp-Session-Id",
        );
    };
    let session = match find_session(&state, session_id, &caller) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let Some(streams) = session.streams.as_ref() else {
        return session_not_found();
    };
    // Resumption: replay what the named stream had after the client's last event.
    if let Some(last) = header_str(&headers, "last-event-id") {
        return match streams.resume(last) {
            Some((stored, from)) => sse_response(Body::from_stream(stored.reader(from, None))),
            None => rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                ErrorCode::INVALID_REQUEST,
                "Last-Event-ID does not name a stream of this session",
            ),
        };
    }
    if session.get_open.swap(true, Ordering::SeqCst) {
        return rpc_error(
            StatusCode::CONFLICT,
            None,
            ErrorCode(-32000),
            "Conflict: this session already has a GET stream",
        );
    }
    let open = Arc::clone(&session.get_open);
    let from = streams.standalone_live_position();
    let events = streams.standalone().reader(
        from,
        Some(Box::new(move || open.store(false, Ordering::SeqCst))),
    );
    sse_response(Body::from_stream(events))
}

async fn delete_mcp(State(state): State<Arc<AppState>>, uri: Uri, headers: HeaderMap) -> Response {
    let authz = state.config.authorization.as_ref();
    let caller = match auth::guard::authorize(authz, &headers, &uri).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Err(r) = check_host(&state.config, &headers) {
        return r;
    }
    let Some(session_id) = header_str(&headers, "mcp-session-id") else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    let removed = {
        let mut sessions = lock(&state.sessions);
        // An HTTP+SSE session (2024-11-05) ends with its stream, not here.
        match sessions.get(session_id) {
            Some(s) if s.streams.is_some() && caller.owns(s.principal.as_ref()) => {
                sessions.remove(session_id)
            }
            _ => None,
        }
    };
    match removed {
        Some(session) => {
            session.conn.close();
            StatusCode::OK.into_response()
        }
        None => session_not_found(),
    }
}

/// HTTP+SSE (2024-11-05): the stream's first event names the POST URL of this
/// connection; every answer and notification then arrives on the stream.
async fn get_sse(State(state): State<Arc<AppState>>, uri: Uri, headers: HeaderMap) -> Response {
    let authz = state.config.authorization.as_ref();
    let caller = match auth::guard::authorize(authz, &headers, &uri).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Err(r) = check_host(&state.config, &headers) {
        return r;
    }
    if state.stopping.is_cancelled() {
        return shutting_down();
    }
    if lock(&state.sessions).len() >= state.config.max_sessions {
        return rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            ErrorCode::INTERNAL_ERROR,
            "Too many sessions",
        );
    }
    let (tx, rx) = mpsc::channel(state.server.limits().outbound_queue);
    let conn = Connection::new(state.server.clone(), tx.clone());
    let id = new_session_id();
    let session = Arc::new(Session {
        conn,
        streams: None,
        get_open: Arc::new(AtomicBool::new(false)),
        sse_sink: Some(tx),
        last_seen: Mutex::new(Instant::now()),
        principal: caller.principal().cloned(),
    });
    lock(&state.sessions).insert(id.clone(), Arc::clone(&session));
    let endpoint = Bytes::from(format!(
        "event: endpoint\ndata: /messages?sessionId={id}\n\n"
    ));
    let guard = SseGuard {
        state: Arc::downgrade(&state),
        id,
        rx,
    };
    let events =
        stream::once(async move { Ok::<_, std::convert::Infallible>(endpoint) }).chain_with(guard);
    sse_response(Body::from_stream(events))
}

/// Ends an HTTP+SSE session when its stream goes away.
struct SseGuard {
    state: std::sync::Weak<AppState>,
    id: String,
    rx: mpsc::Receiver<Outgoing>,
}

impl Drop for SseGuard {
    fn drop(&mut self) {
        if let Some(state) = self.state.upgrade() {
            if let Some(session) = lock(&state.sessions).remove(&self.id) {
                session.conn.close();
            }
        }
    }
}

trait ChainWith {
    fn chain_with(
        self,
        guard: SseGuard,
    ) -> futures_util::stream::BoxStream<'static, Result<Bytes, std::convert::Infallible>>;
}

impl<S> ChainWith for S
where
    S: futures_util::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send + 'static,
{
    fn chain_with(
        self,
        guard: SseGuard,
    ) -> futures_util::stream::BoxStream<'static, Result<Bytes, std::convert::Infallible>> {
        use futures_util::StreamExt;
        let rest = stream::unfold(guard, |mut guard| async move {
            let message = guard.rx.recv().await?;
            Some((Ok(sse_event(&message, Some("message"))), guard))
        });
        self.chain(rest).boxed()
    }
}

async fn post_messages(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let authz = state.config.authorization.as_ref();
    let caller = match auth::guard::authorize(authz, &headers, &uri).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Err(r) = check_host(&state.config, &headers) {
        return r;
    }
    let Some(session_id) = query.get("sessionId") else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode(-32000),
            "Bad Request: sessionId is required",
        );
    };
    let session = match find_session(&state, session_id, &caller) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let Some(sink) = session.sse_sink.clone() else {
        return session_not_found();
    };
    *lock(&session.last_seen) = Instant::now();
    // Backpressure: while the client does not read its stream and the stream's queue is
    // full, its POSTs wait here instead of piling up answers in memory.
    drop(sink.reserve().await);
    let frame = jsonrpc::parse_frame(&body);
    if let Some(refused) =
        auth::guard::frame_refusal(state.config.authorization.as_ref(), &caller, &frame)
    {
        return refused;
    }
    session
        .conn
        .handle_parsed_as(frame, &sink, caller.principal())
        .await;
    StatusCode::ACCEPTED.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `request_id` reads the id exactly as the full message parse does.
    #[test]
    fn request_id_agrees_with_the_message_parse() {
        let cases = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": "s", "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}}),
            json!({"jsonrpc": "2.0", "id": 1, "error": "not an object"}),
            json!({"jsonrpc": "1.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}, "params": 5}),
            json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
            json!({"jsonrpc": "2.0", "id": 1}),
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            json!("text"),
        ];
        for body in cases {
            let expected = match jsonrpc::parse_message(body.clone()) {
                Ok(jsonrpc::Message::Request { id, .. }) => Some(id),
                Err(invalid) => invalid.id,
                Ok(_) => None,
            };
            assert_eq!(request_id(&body), expected, "{body}");
        }
    }
}
