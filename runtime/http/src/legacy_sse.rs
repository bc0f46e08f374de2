//! The HTTP+SSE transport of 2024-11-05: `GET /sse` opens a session whose stream names the POST URL; `POST /messages` delivers to it.
//! With a session store, the stream stays on the replica that opened it, and a POST on any
//! replica reaches it through the store's channel (`replicas::post_sse`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{FromRequest, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::mpsc;

use super::authorize;
use super::guard::{closing_when_too_large, first_checks, refuse_unread};
use super::mount::mount_prefix;
use super::replicas;
use super::responses::{rpc_error, session_not_found, sse_event, sse_response};
use super::sessions::{find_session, lock, new_session_id, room_for_a_session, AppState, Session};
use mcp_runtime::server::connection::{Connection, RequestOrigin};
use mcp_runtime::wire::{self, ErrorCode, Outgoing};

/// HTTP+SSE (2024-11-05): the stream's first event names the POST URL of this
/// connection; every answer and notification then arrives on the stream.
pub(super) async fn get_sse(
    State(state): State<Arc<AppState>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let caller = match first_checks(&state, &parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if let Err(refused) = room_for_a_session(&state) {
        return refused;
    }
    // Shared: its messages come through the replicas' channel, which must be up (it may
    // be a moment away: the replica just started, or is subscribing again).
    if let Some(shared) = &state.shared {
        if !replicas::hearing(shared).await {
            let down = super::store::StoreError("the replicas' channel is down".into());
            return replicas::store_unavailable(&down);
        }
    }
    let queue = state.server.limits().outbound_queue;
    let (tx, rx) = mpsc::channel(queue);
    let conn = Connection::new(state.server.clone(), tx.clone());
    let id = new_session_id();
    // Shared: the session is known to every replica (its POSTs may land anywhere) and
    // takes its messages from an inbox the store's channel fills.
    let inbox = match &state.shared {
        None => None,
        Some(shared) => match replicas::create_sse(&state, shared, &id, &caller).await {
            Ok(()) => Some(mpsc::channel(queue)),
            Err(e) => return replicas::store_unavailable(&e),
        },
    };
    let (inbox_tx, inbox_rx) = inbox.unzip();
    let session = Arc::new(Session {
        conn,
        streams: None,
        sse_sink: Some(tx.clone()),
        sse_inbox: inbox_tx,
        last_seen: Mutex::new(Instant::now()),
        principal: caller.principal().cloned(),
    });
    if let Some(inbox) = inbox_rx {
        tokio::spawn(read_inbox(Arc::downgrade(&session), inbox, tx));
    }
    lock(&state.sessions).insert(id.clone(), Arc::clone(&session));
    // An absolute path under the service's mount (`/api/mcp/messages?…` when nested at
    // `/api/mcp`): every client resolves it against the stream's URL.
    let endpoint = Bytes::from(format!(
        "event: endpoint\ndata: {}/messages?sessionId={id}\n\n",
        mount_prefix(&parts)
    ));
    let guard = SseGuard {
        state: Arc::downgrade(&state),
        id,
        rx,
        closed: session.conn.closed_token(),
    };
    let events =
        stream::once(async move { Ok::<_, std::convert::Infallible>(endpoint) }).chain_with(guard);
    sse_response(events, state.stream_rules())
}

/// Hands a shared HTTP+SSE session the messages relayed to it, one at a time, in order;
/// ends with the session.
async fn read_inbox(
    session: std::sync::Weak<Session>,
    mut inbox: mpsc::Receiver<Bytes>,
    sink: mpsc::Sender<Outgoing>,
) {
    while let Some(body) = inbox.recv().await {
        let Some(session) = session.upgrade() else {
            return;
        };
        *lock(&session.last_seen) = Instant::now();
        // Backpressure, as for a local POST: wait while the stream's queue is full.
        drop(sink.reserve().await);
        // Relayed by another replica: the HTTP request stayed there, its principal
        // travels with the session.
        let mut origin = RequestOrigin::default();
        origin.principal.clone_from(&session.principal);
        session
            .conn
            .handle_parsed_as(wire::parse_frame(&body), &sink, &origin)
            .await;
    }
}

/// Ends an HTTP+SSE session when its stream goes away.
pub(super) struct SseGuard {
    pub(super) state: std::sync::Weak<AppState>,
    pub(super) id: String,
    pub(super) rx: mpsc::Receiver<Outgoing>,
    /// The session's connection closing ends the stream.
    pub(super) closed: mcp_runtime::cancel::CancellationToken,
}

impl Drop for SseGuard {
    fn drop(&mut self) {
        if let Some(state) = self.state.upgrade() {
            if let Some(session) = lock(&state.sessions).remove(&self.id) {
                session.conn.close();
            }
            if let Some(shared) = &state.shared {
                replicas::end_sse(shared, &self.id);
            }
        }
    }
}

pub(super) trait ChainWith {
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
            let message = tokio::select! {
                message = guard.rx.recv() => message?,
                () = guard.closed.cancelled() => return None,
            };
            Some((Ok(sse_event(&message, Some("message"))), guard))
        });
        self.chain(rest).boxed()
    }
}

pub(super) async fn post_messages(
    State(state): State<Arc<AppState>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let caller = match first_checks(&state, &parts).await {
        Ok(caller) => caller,
        Err(refused) => return refuse_unread(body, refused).await,
    };
    let query = match Query::<HashMap<String, String>>::try_from_uri(&parts.uri) {
        Ok(Query(query)) => query,
        Err(rejection) => return refuse_unread(body, rejection.into_response()).await,
    };
    let Some(session_id) = query.get("sessionId") else {
        let refused = rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode(-32000),
            "Bad Request: sessionId is required",
        );
        return refuse_unread(body, refused).await;
    };
    // The body limit (`DefaultBodyLimit`) travels in the extensions: a copy of the head
    // goes to the extractor, the handlers see the original.
    let body = match Bytes::from_request(Request::from_parts(parts.clone(), body), &state).await {
        Ok(body) => body,
        Err(rejection) => return closing_when_too_large(rejection.into_response()),
    };
    if let Some(shared) = &state.shared {
        let frame = wire::parse_frame(&body);
        if let Some(refused) = authorize::frame_refusal(&caller, &frame) {
            return refused;
        }
        return replicas::post_sse(&state, shared, session_id, &caller, &body).await;
    }
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
    let frame = wire::parse_frame(&body);
    if let Some(refused) = authorize::frame_refusal(&caller, &frame) {
        return refused;
    }
    // Each POST's own head: a session's later requests carry their own headers.
    let origin = caller.origin(Some(Arc::new(parts)));
    session.conn.handle_parsed_as(frame, &sink, &origin).await;
    StatusCode::ACCEPTED.into_response()
}
