//! One POST served: its frame handed to a connection, and what comes back turned into the HTTP answer (202, JSON, or an SSE stream stored for resumption).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::mpsc;

use super::authorize::Caller;
use super::event_store::SessionStreams;
use super::replicas::SessionSync;
use super::responses::{json_response, shutting_down, sse_event, sse_response};
use super::sessions::AppState;
use crate::server::connection::Connection;
use crate::wire::{Frame, Invalid, Message, Outgoing, RequestId};

/// How JSON-RPC errors map to HTTP statuses (stateless wire only).
#[derive(Clone, Copy)]
pub(super) enum StatusMap {
    Modern,
}

pub(super) fn status_for(map: Option<StatusMap>, answer: &Outgoing) -> StatusCode {
    match (map, answer.error_code()) {
        (Some(StatusMap::Modern), Some(-32601)) => StatusCode::NOT_FOUND,
        (Some(StatusMap::Modern), Some(-32022..=-32020)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Sends a POST body into a connection and turns what comes back into the HTTP answer:
/// 202 for notifications and responses only; JSON when the answer comes first; else an
/// SSE stream of the request's notifications followed by its answer.
pub(super) async fn dispatch(
    conn: &Arc<Connection>,
    frame: Frame,
    map: Option<StatusMap>,
    streams: Option<&SessionStreams>,
    stateless: Option<InProgress>,
    caller: &Caller,
    sync: Option<SessionSync<'_>>,
) -> Response {
    let started = tokio::time::Instant::now();
    let (tx, mut rx) = mpsc::channel::<Outgoing>(64);
    // A shared session's stream names its requests in the store (for a replica resuming
    // it after this one died).
    let asked = match streams.and_then(SessionStreams::mirror) {
        Some(_) => request_ids(&frame),
        None => Vec::new(),
    };
    let requests = conn.handle_parsed_as(frame, &tx, caller.principal()).await;
    drop(tx);
    if let Some(sync) = sync {
        sync.after_admission(conn).await;
    }
    if requests == 0 {
        return StatusCode::ACCEPTED.into_response();
    }
    // A stateless request lives as long as its HTTP exchange: if the client goes away
    // before the first message (`stateless` is dropped with this future) or the server
    // closes, its handler is cancelled.
    // A session that polls with a connection time limit does not hold the POST open
    // longer for a JSON answer: if nothing has come by then, the answer comes on an SSE
    // stream the client polls.
    let polled_deadline = streams
        .and_then(SessionStreams::polling)
        .and_then(|p| p.close_after)
        .map(|after| started + after);
    let first = match (&stateless, polled_deadline) {
        (Some(p), _) => tokio::select! {
            first = rx.recv() => first,
            () = p.state.closing.cancelled() => return shutting_down(),
        },
        (None, Some(deadline)) => match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(first) => first,
            Err(_) => {
                if let Some(streams) = streams {
                    let stored = streams.spawn(None, rx, asked);
                    let body = streams.connection(stored.reader(0, None), started);
                    return sse_response(Body::from_stream(body));
                }
                rx.recv().await
            }
        },
        (None, None) => rx.recv().await,
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
        let stored = streams.spawn(Some(first), rx, asked);
        let body = streams.connection(stored.reader(0, None), started);
        return sse_response(Body::from_stream(body));
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

/// The ids of the requests in a frame.
fn request_ids(frame: &Frame) -> Vec<RequestId> {
    let id_of = |m: &Result<Message, Invalid>| match m {
        Ok(Message::Request { id, .. }) => Some(id.clone()),
        _ => None,
    };
    match frame {
        Frame::Single(m) => id_of(m).into_iter().collect(),
        Frame::Batch(items) => items.iter().filter_map(id_of).collect(),
    }
}

/// A stateless request being answered: counted for the graceful shutdown; when dropped
/// (answered, or its client gone) its connection is closed, cancelling what still runs.
pub(super) struct InProgress {
    pub(super) conn: Arc<Connection>,
    pub(super) state: Arc<AppState>,
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.conn.close();
        self.state.stateless_active.fetch_sub(1, Ordering::SeqCst);
    }
}
