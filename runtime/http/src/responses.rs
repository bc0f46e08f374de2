//! HTTP answers built from JSON-RPC messages: JSON bodies, error bodies with their status, SSE framing.

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use std::time::Duration;

use super::event_store::SseBody;
use super::keep_alive::KeepAlive;
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

/// An SSE answer carrying `events`, with a keep-alive comment after every `keep_alive` of
/// silence (see [`crate::keep_alive`]).
pub(super) fn sse_response(events: SseBody, keep_alive: Option<Duration>) -> Response {
    let body = match keep_alive {
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
