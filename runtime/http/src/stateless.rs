//! Stateless 2026-07-28 requests: the header rules checked against the body, then a connection of their own for one exchange.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::exchange::{dispatch, InProgress};
use super::guard::Headers;
use super::responses::{json_response, shutting_down, StreamRules};
use super::sessions::AppState;
use mcp_runtime::protocol::http_headers;
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::server::connection::{Connection, RequestOrigin};
use mcp_runtime::wire::{self, ErrorCode, Frame, RequestId, RpcError};

/// What routing and the stateless checks read of a POST without a session.
pub(super) struct Probe<'a> {
    /// The id an error answer carries (none for a response or an unreadable id).
    pub(super) id: Option<RequestId>,
    pub(super) method: &'a str,
    pub(super) params: Option<&'a Value>,
    /// The request's `_meta` value (taken out of `params` when the request was parsed).
    pub(super) meta: Option<&'a Value>,
}

/// Validates a stateless (2026-07-28) request's headers against its body, in the order
/// the spec gives: the answer refusing it, or `None` when it may be served.
pub(super) fn stateless_refusal(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    probe: &Probe<'_>,
) -> Option<Response> {
    let refuse = |e: &RpcError| {
        json_response(
            StatusCode::BAD_REQUEST,
            &wire::error_response(probe.id.as_ref(), e),
        )
    };
    if let Err(e) = http_headers::check_request_headers(
        &Headers(headers),
        probe.method,
        probe.params,
        probe.meta,
        state.server.versions(),
    ) {
        return Some(refuse(&e));
    }
    if probe.method == McpMethod::CallTool.name() {
        let params = probe.params;
        let name = params
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = params
            .and_then(|p| p.get("arguments"))
            .unwrap_or(&Value::Null);
        let checked = state.server.with_tool_input_schema(name, |schema| {
            http_headers::check_param_headers(schema, arguments, &Headers(headers))
        });
        if let Some(Err(message)) = checked {
            return Some(refuse(&RpcError::new(ErrorCode::HEADER_MISMATCH, message)));
        }
    }
    None
}

/// Serves a stateless request whose headers were checked on a connection of its own.
pub(super) async fn stateless(
    state: &Arc<AppState>,
    frame: Frame,
    origin: RequestOrigin,
    rules: StreamRules,
) -> Response {
    if state.stopping.is_cancelled() {
        return shutting_down();
    }
    // Shutdown ends every stateless request's listen at once.
    let conn = Connection::stateless_stopping_with(
        state.server.clone(),
        state.no_session.clone(),
        Some(state.stopping.clone()),
    );
    state.stateless_active.fetch_add(1, Ordering::SeqCst);
    let in_progress = InProgress {
        conn: Arc::clone(&conn),
        state: Arc::clone(state),
    };
    dispatch(&conn, frame, None, Some(in_progress), origin, None, rules).await
}
