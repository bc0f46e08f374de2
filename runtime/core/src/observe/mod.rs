//! Observability by the OpenTelemetry semantic conventions for MCP: one `tracing` span per
//! request and notification a server handles (and per request a client sends), named
//! `{mcp.method.name} {target}` and attributed as the conventions list; the W3C trace
//! context that requests carry in `params._meta` (or an HTTP `traceparent` header).
//!
//! The spans are plain `tracing` spans (target `mcp`, level INFO): with no subscriber,
//! or one that does not want them, creating one is a check of a cached interest, and
//! nothing is computed for its attributes. `mcp-runtime-otel` exports them over OTLP and
//! derives the conventions' duration metrics from them; any other `tracing` layer sees
//! them too. Span names are dynamic, so each span carries its conventional name in the
//! `otel.name` field (the `tracing-opentelemetry` convention), its kind in `otel.kind`
//! and its status in `otel.status_code` / `otel.status_description`.
//!
//! By default no attribute holds a token, a tool's arguments or results, or a prompt's
//! arguments: the conventions' opt-in content attributes are never recorded, and the
//! status description of an invalid-params error (whose message may quote arguments) is
//! left out.
//!
//! A remote parent is handed to the installed [`TraceBridge`] (the OpenTelemetry crate
//! installs one); without one, spans keep their `tracing` parentage only.

mod trace_context;

use std::net::SocketAddr;
use std::sync::OnceLock;

use serde_json::Value;
use tracing::field::Empty;
use tracing::Span;

use crate::server::connection::RequestOrigin;
use crate::wire::{RequestId, RpcError};

pub use trace_context::{TraceContext, TraceParent, BAGGAGE, TRACEPARENT, TRACESTATE};

/// The `tracing` target of every span and event this module emits.
pub const TARGET: &str = "mcp";

/// The static name of a server span (`otel.name` carries the conventional one).
pub const SERVER_SPAN: &str = "mcp.server";
/// The static name of a client span.
pub const CLIENT_SPAN: &str = "mcp.client";
/// The message of the event that ends a server session (for `mcp.server.session.duration`).
pub const SERVER_SESSION_EVENT: &str = "mcp.server.session";
/// The message of the event that ends a client session (for `mcp.client.session.duration`).
pub const CLIENT_SESSION_EVENT: &str = "mcp.client.session";

/// What ties `tracing` spans to distributed traces: installed once per process by a
/// tracing backend (`mcp-runtime-otel`), used by the server to continue a remote trace
/// and by the client and the bridge to send theirs on.
pub trait TraceBridge: Send + Sync + 'static {
    /// Makes `remote` the parent of `span`; called once, right after `span` was created.
    fn set_remote_parent(&self, span: &Span, remote: &TraceContext);
    /// The context a request sent within `span` carries: `span` as the parent.
    fn context_of(&self, span: &Span) -> Option<TraceContext>;
}

static BRIDGE: OnceLock<&'static dyn TraceBridge> = OnceLock::new();

/// Installs the process's [`TraceBridge`]; `false` if one was installed already.
pub fn install_trace_bridge(bridge: &'static dyn TraceBridge) -> bool {
    BRIDGE.set(bridge).is_ok()
}

/// The installed [`TraceBridge`], if any.
pub fn trace_bridge() -> Option<&'static dyn TraceBridge> {
    BRIDGE.get().copied()
}

/// The trace context to send with a request made within `span`: the span's own, where a
/// bridge knows it; else `inherited` (a context that arrived with the request being
/// served, passed on so the trace is not cut where no backend is installed).
pub fn context_to_send(span: &Span, inherited: Option<&TraceContext>) -> Option<TraceContext> {
    if !span.is_disabled() {
        if let Some(cx) = trace_bridge().and_then(|b| b.context_of(span)) {
            return Some(cx);
        }
    }
    inherited.cloned()
}

/// Whether anyone records this module's spans (a subscriber that wants them): transports
/// read what only spans need (a peer's address, a session id) only then.
#[inline]
pub fn spans_enabled() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// The transport a message arrived on, as the conventions' network attributes describe it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// Not said (an in-process connection).
    #[default]
    Unknown,
    /// stdio: `network.transport = pipe`.
    Pipe,
    /// HTTP over TCP: `network.protocol.name = http` and its version, the peer's address.
    Http {
        /// `1.0`, `1.1`, `2` or `3`.
        version: &'static str,
        /// The client's address, when the server knows it.
        peer: Option<SocketAddr>,
    },
}

/// A new server span for a message that arrived: its name and attributes recorded at
/// once (one call into the subscriber), its remote parent from `meta` (the request's
/// `_meta`, else the one in `params`) or else the transport's trace context. Nothing is
/// computed when no one records the span.
#[inline]
pub(crate) fn server_span(
    method: &str,
    id: Option<&RequestId>,
    params: Option<&Value>,
    meta: Option<&Value>,
    origin: &RequestOrigin,
    version: impl FnOnce() -> Option<String>,
) -> Span {
    if !spans_enabled() {
        return Span::none();
    }
    described_server_span(method, id, params, meta, origin, version())
}

fn described_server_span(
    method: &str,
    id: Option<&RequestId>,
    params: Option<&Value>,
    meta: Option<&Value>,
    origin: &RequestOrigin,
    version: Option<String>,
) -> Span {
    let member = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
    let target = Target::of(method, member);
    let network = Network::of(origin.network);
    let session = origin.session_id.as_deref().map(session_digest);
    let span = tracing::info_span!(
        target: TARGET,
        SERVER_SPAN,
        otel.name = target.name(method).as_ref(),
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        mcp.protocol.version = version.as_deref(),
        mcp.session.id = session.as_deref(),
        mcp.resource.uri = target.uri,
        jsonrpc.request.id = id.map(tracing::field::display),
        gen_ai.tool.name = target.tool,
        gen_ai.prompt.name = target.prompt,
        gen_ai.operation.name = target.tool.map(|_| "execute_tool"),
        "error.type" = Empty,
        rpc.response.status_code = Empty,
        network.transport = network.transport,
        network.protocol.name = network.protocol,
        network.protocol.version = network.version,
        client.address = network.peer.map(|p| tracing::field::display(p.ip())),
        client.port = network.peer.map(|p| u64::from(p.port())),
    );
    if let Some(bridge) = trace_bridge() {
        let meta = meta.or_else(|| params.and_then(|p| p.get("_meta")));
        let remote = meta.and_then(TraceContext::from_meta);
        if let Some(remote) = remote.as_ref().or(origin.trace.as_ref()) {
            bridge.set_remote_parent(&span, remote);
        }
    }
    span
}

/// What a request names: a tool or prompt (the span's name), a resource (an attribute).
struct Target<'p> {
    tool: Option<&'p str>,
    prompt: Option<&'p str>,
    uri: Option<&'p str>,
}

impl<'p> Target<'p> {
    fn of(method: &str, member: impl Fn(&str) -> Option<&'p str>) -> Target<'p> {
        let mut target = Target {
            tool: None,
            prompt: None,
            uri: None,
        };
        match method {
            "tools/call" => target.tool = member("name"),
            "prompts/get" => target.prompt = member("name"),
            // A URI is high-cardinality: an attribute, not in the name (the conventions'
            // default).
            "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "notifications/resources/updated" => target.uri = member("uri"),
            _ => {}
        }
        target
    }

    /// `{mcp.method.name} {target}`, or the method alone.
    fn name<'m>(&self, method: &'m str) -> std::borrow::Cow<'m, str> {
        match self.tool.or(self.prompt) {
            Some(target) => std::borrow::Cow::Owned(format!("{method} {target}")),
            None => std::borrow::Cow::Borrowed(method),
        }
    }
}

/// A transport as the network attributes say it.
struct Network {
    transport: Option<&'static str>,
    protocol: Option<&'static str>,
    version: Option<&'static str>,
    peer: Option<SocketAddr>,
}

impl Network {
    fn of(transport: Transport) -> Network {
        match transport {
            Transport::Unknown => Network {
                transport: None,
                protocol: None,
                version: None,
                peer: None,
            },
            Transport::Pipe => Network {
                transport: Some("pipe"),
                protocol: None,
                version: None,
                peer: None,
            },
            Transport::Http { version, peer } => Network {
                transport: Some("tcp"),
                protocol: Some("http"),
                version: Some(version),
                peer,
            },
        }
    }
}

/// A new client span for `method`, with its conventional attributes: to be entered (or
/// instrumenting the future) while the request is sent and its answer awaited.
pub fn client_span(
    method: &str,
    params: Option<&serde_json::Map<String, Value>>,
    protocol_version: Option<&str>,
    session_id: Option<&str>,
    transport: Transport,
) -> Span {
    if !spans_enabled() {
        return Span::none();
    }
    let member = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
    let target = Target::of(method, member);
    let network = Network::of(transport);
    let session = session_id.map(session_digest);
    tracing::info_span!(
        target: TARGET,
        CLIENT_SPAN,
        otel.name = target.name(method).as_ref(),
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        mcp.protocol.version = protocol_version,
        mcp.session.id = session.as_deref(),
        mcp.resource.uri = target.uri,
        jsonrpc.request.id = Empty,
        gen_ai.tool.name = target.tool,
        gen_ai.prompt.name = target.prompt,
        gen_ai.operation.name = target.tool.map(|_| "execute_tool"),
        "error.type" = Empty,
        rpc.response.status_code = Empty,
        network.transport = network.transport,
        network.protocol.name = network.protocol,
        network.protocol.version = network.version,
        server.address = network.peer.map(|p| tracing::field::display(p.ip())),
        server.port = network.peer.map(|p| u64::from(p.port())),
    )
}

/// Records a client span's request id (known once the request is numbered).
pub fn record_request_id(span: &Span, id: &RequestId) {
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", tracing::field::display(id));
    }
}

/// What `mcp.session.id` records of a session id: the first 16 bytes of its SHA-256, in
/// hex. An HTTP session id is a credential (whoever holds it speaks in the session), so
/// it is never logged or exported; its digest still ties a session's spans together.
pub fn session_digest(session_id: &str) -> String {
    let digest = crate::primitives::sha256::sha256(session_id.as_bytes());
    trace_context::to_hex(digest.get(..16).unwrap_or(&digest))
}

/// Records the revision a request is served at.
#[inline]
pub(crate) fn record_version(span: &Span, version: &str) {
    if !span.is_disabled() {
        span.record("mcp.protocol.version", version);
    }
}

/// Records an error answer: `error.type` and `rpc.response.status_code` are the code, the
/// status is an error described by the message (but for invalid params, whose message
/// may quote the arguments).
pub fn record_error(span: &Span, error: &RpcError) {
    if span.is_disabled() {
        return;
    }
    let code = error.code.0;
    span.record("error.type", code);
    span.record("rpc.response.status_code", code);
    span.record("otel.status_code", "error");
    if code != crate::wire::ErrorCode::INVALID_PARAMS.0 {
        span.record("otel.status_description", error.message.as_str());
    }
}

/// Records a tool result with `isError: true` (`error.type = tool_error`).
pub fn record_tool_error(span: &Span) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", "tool_error");
    span.record("otel.status_code", "error");
}

/// Records an answer that never came (cancelled, timed out, the peer gone) as `kind`.
pub fn record_failure(span: &Span, kind: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", kind);
    span.record("otel.status_code", "error");
}

/// Emits the event that ends a session: `duration_s` seconds, with its revision and
/// transport; `mcp-runtime-otel` records it in the session-duration histogram.
pub fn session_ended(
    side: &'static str,
    duration: std::time::Duration,
    version: Option<&str>,
    transport: Transport,
) {
    let network = match transport {
        Transport::Unknown => None,
        Transport::Pipe => Some("pipe"),
        Transport::Http { .. } => Some("tcp"),
    };
    let seconds = duration.as_secs_f64();
    if side == CLIENT_SESSION_EVENT {
        tracing::event!(
            target: TARGET,
            tracing::Level::INFO,
            mcp.session.duration = seconds,
            mcp.protocol.version = version,
            network.transport = network,
            "mcp.client.session"
        );
    } else {
        tracing::event!(
            target: TARGET,
            tracing::Level::INFO,
            mcp.session.duration = seconds,
            mcp.protocol.version = version,
            network.transport = network,
            "mcp.server.session"
        );
    }
}
