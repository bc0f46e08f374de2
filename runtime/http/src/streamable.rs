//! Streamable HTTP on `/mcp`: routing a POST to its legacy session, to the stateless path or to `initialize`; the GET stream and DELETE of a legacy session.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::mpsc;

use super::authorize::{self, Caller};
use super::event_store::SessionStreams;
use super::exchange::dispatch;
use super::guard::{check_host, closing_when_too_large, first_checks, header_str, refuse_unread};
use super::replicas::{self, SessionSync};
use super::responses::{rpc_error, session_not_found, sse_response};
use super::sessions::{find_session, lock, new_session_id, room_for_a_session, AppState, Session};
use super::stateless::{stateless, stateless_refusal, Probe};
use mcp_runtime::protocol::http_headers;
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::version::{Era, ProtocolVersion};
use mcp_runtime::server::connection::Connection;
use mcp_runtime::wire::{self, ErrorCode, Frame, Message, RequestId};

/// The id to answer `body` with, as [`wire::parse_message`] would read it (a request's
/// id, or the id of an invalid message; never a response's), without copying the body.
pub(super) fn request_id(body: &Value) -> Option<RequestId> {
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

pub(super) async fn post_mcp(
    State(state): State<Arc<AppState>>,
    request: axum::extract::Request,
) -> Response {
    // The request's head is kept whole (headers are read in place, not extracted: axum's
    // `HeaderMap` extractor clones the map), shared with the handlers it reaches.
    let (parts, body) = request.into_parts();
    let authz = state.config.authorization.as_ref();
    let caller = match authorize::authorize(authz, &parts).await {
        Ok(caller) => caller,
        Err(refused) => return refuse_unread(body, refused).await,
    };
    let body = match body_bytes(&state, &parts, body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    if let Err(r) = check_host(&state.config, &parts.headers) {
        return r;
    }
    let parts = Arc::new(parts);
    let headers = &parts.headers;
    if let Some(session_id) = header_str(headers, http_headers::SESSION_ID) {
        let found = match &state.shared {
            None => find_session(&state, session_id, &caller),
            Some(shared) => replicas::find(&state, shared, session_id, &caller).await,
        };
        let session = match found {
            Ok(s) => s,
            Err(r) => return r,
        };
        *lock(&session.last_seen) = Instant::now();
        if let Some(v) = header_str(headers, http_headers::PROTOCOL_VERSION) {
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
        let frame = wire::parse_frame(&body);
        if let Some(refused) = authorize::frame_refusal(&caller, &frame) {
            return refused;
        }
        let sync = match &state.shared {
            None => None,
            Some(shared) => {
                if let Some(relayed) =
                    replicas::relay(shared, &session, session_id, &frame, &body).await
                {
                    return relayed;
                }
                Some(SessionSync {
                    state: &state,
                    shared,
                    id: session_id,
                    before: session.conn.snapshot(),
                    caller: &caller,
                })
            }
        };
        return dispatch(
            &session.conn,
            frame,
            Some(streams),
            None,
            caller.origin(Some(Arc::clone(&parts))),
            sync,
            state.stream_rules().for_accept(headers),
        )
        .await;
    }
    // The frame is parsed once: a well-formed request is routed and checked on its
    // parsed envelope, then handed to its connection as it is. Anything else (a batch, a
    // notification, a response, an invalid message) is read as a `Value` for the routing
    // decision, as the general path has it.
    let frame = wire::parse_frame(&body);
    if let Some(refused) = authorize::frame_refusal(&caller, &frame) {
        return refused;
    }
    let general: Value;
    let probe = match &frame {
        Frame::Single(Ok(Message::Request {
            id,
            method,
            params,
            meta,
        })) => Probe {
            id: Some(id.clone()),
            method,
            params: params.as_ref(),
            meta: meta.as_ref().map(wire::RequestMeta::value),
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
                meta: wire::member(general.get("params"), "_meta"),
            }
        }
    };
    let header_version = header_str(headers, http_headers::PROTOCOL_VERSION);
    // A legacy `initialize` may carry `_meta` too (W3C trace context, SEP-414): only a
    // modern `_meta` (naming its revision) makes it a stateless request.
    let legacy_initialize = probe.method == McpMethod::Initialize.name()
        && !mcp_runtime::protocol::version::meta_is_modern(probe.meta);
    let has_meta = probe.meta.is_some() && !legacy_initialize;
    let header_is_legacy = header_version
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| v.era() == Era::Legacy);
    let modern_served = state.server.versions().of_era(Era::Modern).next().is_some();
    if modern_served && (has_meta || (header_version.is_some() && !header_is_legacy)) {
        if let Some(refused) = stateless_refusal(&state, headers, &probe) {
            return refused;
        }
        let rules = state.stream_rules().for_accept(headers);
        let origin = caller.origin(Some(Arc::clone(&parts)));
        return stateless(&state, frame, origin, rules).await;
    }
    if probe.method == McpMethod::Initialize.name() {
        return initialize(&state, frame, &caller, Arc::clone(&parts)).await;
    }
    rpc_error(
        StatusCode::BAD_REQUEST,
        probe.id.as_ref(),
        ErrorCode(-32000),
        "Bad Request: invalid or missing session ID",
    )
}

/// A POST's body. One whose `Content-Length` is within the message limit (the router's
/// `DefaultBodyLimit`, see `app`) is read here, its one chunk kept as it came: axum's
/// extractor, with its length-limited wrapper and collection, cost ~2.5k instructions a
/// request. Any other (no length, or over the limit) goes through the extractor, which
/// answers 413 beyond the limit.
async fn body_bytes(
    state: &Arc<AppState>,
    parts: &axum::http::request::Parts,
    body: Body,
) -> Result<Bytes, Response> {
    use axum::body::HttpBody;
    let limit = u64::try_from(state.server.limits().max_message_bytes).unwrap_or(u64::MAX);
    if body.size_hint().exact().is_none_or(|length| length > limit) {
        // The body limit (`DefaultBodyLimit`) travels in the extensions, kept in `parts`
        // (a copy: the handlers see the original; such bodies are rare).
        let request = axum::extract::Request::from_parts(parts.clone(), body);
        return Bytes::from_request(request, state)
            .await
            .map_err(|rejection| closing_when_too_large(rejection.into_response()));
    }
    let mut body = body;
    let mut first: Option<Bytes> = None;
    let mut joined: Vec<u8> = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| {
            (
                StatusCode::BAD_REQUEST,
                format!("Failed to buffer the request body: {e}"),
            )
                .into_response()
        })?;
        // Trailers carry nothing a message needs.
        let Ok(data) = frame.into_data() else {
            continue;
        };
        // More than the announced length: hyper refuses it, this is only a guard.
        let read = first.as_ref().map_or(0, Bytes::len) + joined.len() + data.len();
        if u64::try_from(read).unwrap_or(u64::MAX) > limit {
            return Err(closing_when_too_large(
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "Failed to buffer the request body: length limit exceeded",
                )
                    .into_response(),
            ));
        }
        match first.take() {
            None if joined.is_empty() => first = Some(data),
            None => joined.extend_from_slice(&data),
            Some(earlier) => {
                joined.extend_from_slice(&earlier);
                joined.extend_from_slice(&data);
            }
        }
    }
    Ok(first.unwrap_or_else(|| Bytes::from(joined)))
}

pub(super) async fn initialize(
    state: &Arc<AppState>,
    frame: Frame,
    caller: &Caller,
    parts: Arc<axum::http::request::Parts>,
) -> Response {
    if let Err(refused) = room_for_a_session(state) {
        return refused;
    }
    let (tx, rx) = mpsc::channel(state.server.limits().outbound_queue);
    let conn = match &state.shared {
        None => Connection::new(state.server.clone(), tx),
        Some(shared) => Connection::new_replica(state.server.clone(), tx, &shared.replica),
    };
    let origin = caller.origin(Some(parts));
    let mut rules = state.stream_rules();
    // Answered as JSON however long it takes (middleware may run before it): whether a
    // session opens is known only from its outcome, and its id goes in this answer.
    rules.stream_after = None;
    let response = dispatch(&conn, frame, None, None, origin, None, rules).await;
    if conn.version().is_none() {
        // initialize failed: no session.
        conn.close();
        return response;
    }
    let id = new_session_id();
    if let Some(shared) = &state.shared {
        if let Err(e) = replicas::create(state, shared, &id, &conn, caller).await {
            conn.close();
            return replicas::store_unavailable(&e);
        }
        let session = replicas::local_session(state, shared, &id, conn, rx, caller);
        lock(&state.sessions).insert(id.clone(), session);
        return with_session_id(response, &id);
    }
    let streams = SessionStreams::new(
        state.config.max_streams_per_session,
        state.config.max_stored_events,
        None,
        state.config.polling_for(conn.version()),
    );
    // The session's own notifications fill the standalone stream, read by GET.
    streams.fill_standalone(rx);
    let session = Arc::new(Session {
        conn,
        streams: Some(streams),
        sse_sink: None,
        sse_inbox: None,
        last_seen: Mutex::new(Instant::now()),
        principal: caller.principal().cloned(),
    });
    lock(&state.sessions).insert(id.clone(), session);
    with_session_id(response, &id)
}

fn with_session_id(mut response: Response, id: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(id) {
        response
            .headers_mut()
            .insert(http_headers::SESSION_ID, value);
    }
    response
}

pub(super) async fn get_mcp(
    State(state): State<Arc<AppState>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let headers = &parts.headers;
    let caller = match first_checks(&state, &parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if !state.config.get_stream {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let Some(session_id) = header_str(headers, http_headers::SESSION_ID) else {
        // The stateless revision has no GET stream.
        return rpc_error(
            StatusCode::METHOD_NOT_ALLOWED,
            None,
            ErrorCode(-32000),
            "Method Not Allowed: GET needs an Mcp-Session-Id",
        );
    };
    let found = match &state.shared {
        None => find_session(&state, session_id, &caller),
        Some(shared) => replicas::find(&state, shared, session_id, &caller).await,
    };
    let session = match found {
        Ok(s) => s,
        Err(r) => return r,
    };
    let Some(streams) = session.streams.as_ref() else {
        return session_not_found();
    };
    let started = tokio::time::Instant::now();
    // Resumption: replay what the named stream had after the client's last event. The
    // resumed connection takes the stream over (see `StoredStream::reader`): the client
    // lost the older one, though the server may not know it yet.
    if let Some(last) = header_str(headers, "last-event-id") {
        // Shared sessions: another replica may still have a connection reading the
        // stream; it ends (the client lost it). A GET stream lives here from now on.
        if let (Some(shared), Some((stream, _))) =
            (&state.shared, super::event_store::parse_event_id(last))
        {
            let get = super::store::is_standalone(stream);
            if get {
                streams.set_home(true);
            }
            super::replicas::announce_taken_over(shared, session_id, Some(stream), get).await;
        }
        if let Some((stored, from)) = streams.resume(last) {
            let body = streams.connection(stored.reader(from), started);
            return sse_response(body, state.stream_rules());
        }
        // Shared sessions: a stream another replica wrote, from the store. One that
        // continues as this replica's GET stream takes its place.
        if streams.mirror().is_some() {
            if let Some(replay) = streams.resume_shared(last) {
                return sse_response(streams.connection(replay, started), state.stream_rules());
            }
        }
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            "Last-Event-ID does not name a stream of this session",
        );
    }
    // A new GET stream: one per session, so that each message goes to one stream only.
    let Some(events) = streams.standalone_reader() else {
        return rpc_error(
            StatusCode::CONFLICT,
            None,
            ErrorCode(-32000),
            "Conflict: this session already has a GET stream",
        );
    };
    if let Some(shared) = &state.shared {
        streams.set_home(true);
        super::replicas::announce_taken_over(shared, session_id, None, true).await;
    }
    sse_response(streams.connection(events, started), state.stream_rules())
}

pub(super) async fn delete_mcp(
    State(state): State<Arc<AppState>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let headers = &parts.headers;
    let caller = match first_checks(&state, &parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(session_id) = header_str(headers, http_headers::SESSION_ID) else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    if let Some(shared) = &state.shared {
        return match replicas::find(&state, shared, session_id, &caller).await {
            Ok(session) if session.streams.is_some() => {
                replicas::end(&state, shared, session_id).await
            }
            Ok(_) => session_not_found(),
            Err(r) => r,
        };
    }
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
            let expected = match wire::parse_message(body.clone()) {
                Ok(wire::Message::Request { id, .. }) => Some(id),
                Err(invalid) => invalid.id,
                Ok(_) => None,
            };
            assert_eq!(request_id(&body), expected, "{body}");
        }
    }
}
