//! HTTP answers built from JSON-RPC messages: JSON bodies, error bodies with their status, SSE framing.

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use std::time::Duration;

use super::event_store::SseBody;
use super::keep_alive::KeepAlive;
use futures_util::StreamExt;
use mcp_runtime::cancel::CancellationToken;
use mcp_runtime::wire::{self, ErrorCode, Outgoing, RequestId, RpcError};

pub(super) fn json_response(status: StatusCode, body: &Outgoing) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.json().bytes(),
    )
        .into_response()
}

pub(super) fn rpc_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: ErrorCode,
    message: &str,
) -> Response {
    json_response(
        status,
        &wire::error_response(id, &RpcError::new(code, message)),
    )
}

/// 503 while shutting down.
pub(super) fn shutting_down() -> Response {
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        ErrorCode::INTERNAL_ERROR,
        "Service Unavailable: the server is shutting down",
    )
}

/// 404 for an unknown or ended session (the client must start a new one).
pub(super) fn session_not_found() -> Response {
    rpc_error(
        StatusCode::NOT_FOUND,
        None,
        ErrorCode(-32001),
        "Session not found",
    )
}

pub(super) fn sse_event(message: &Outgoing, event: Option<&str>) -> Bytes {
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

/// What every SSE answer of a server follows.
#[derive(Clone)]
pub(super) struct StreamRules {
    /// A keep-alive comment after this long without an event (see [`crate::keep_alive`]).
    pub(super) keep_alive: Option<Duration>,
    /// The server closed (the end of a graceful shutdown): every stream ends, whatever it
    /// was waiting for, so that the HTTP server's own shutdown is not held by it.
    pub(super) closing: Option<CancellationToken>,
    /// A POST whose answer has not begun after this long is answered with a stream (the
    /// keep-alive period, for a client that accepts SSE).
    pub(super) stream_after: Option<Duration>,
}

impl StreamRules {
    /// These rules for a request whose `Accept` is `accept`: only a client that accepts
    /// SSE is switched to a stream.
    pub(super) fn for_accept(mut self, headers: &axum::http::HeaderMap) -> StreamRules {
        let accepts_sse = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("text/event-stream"));
        if !accepts_sse {
            self.stream_after = None;
        }
        self
    }
}

/// An SSE answer carrying `events`, as `rules` say.
pub(super) fn sse_response(events: SseBody, rules: StreamRules) -> Response {
    let events = match rules.closing {
        Some(closing) => events.take_until(closing.cancelled_owned()).boxed(),
        None => events,
    };
    let body = match rules.keep_alive {
        Some(period) if !period.is_zero() => Body::from_stream(KeepAlive::new(events, period)),
        _ => Body::from_stream(events),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
