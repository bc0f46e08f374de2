//! One POST served: its frame handed to a connection, and what comes back turned into the HTTP answer (202, JSON, or an SSE stream stored for resumption).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, StreamExt};
use tokio::sync::mpsc;

use super::event_store::SessionStreams;
use super::replicas::SessionSync;
use super::responses::{json_response, shutting_down, sse_event, sse_response, StreamRules};
use super::sessions::AppState;
use mcp_runtime::cancel::CancellationToken;
use mcp_runtime::combine::BoxFuture;
use mcp_runtime::server::connection::{spawn_answer, Connection, RequestOrigin, Started};
use mcp_runtime::wire::{Frame, Invalid, Message, Outgoing, RequestId};

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
///
/// A single request's handler runs in this POST's own task while the answer may still
/// come first: answered before anything else was sent, it becomes the JSON answer with
/// no task spawned and no hop through a channel (per request: a task's allocation and
/// scheduling, a wake-up of this task, on a busy server often from the other core). As
/// soon as a notification comes first (or the POST ends early, or a polling session's
/// time limit passes), the handler goes on as a task of its own, as every handler did
/// before, its answer after its notifications on the stream.
pub(super) async fn dispatch(
    conn: &Arc<Connection>,
    frame: Frame,
    streams: Option<&SessionStreams>,
    stateless: Option<InProgress>,
    origin: RequestOrigin,
    sync: Option<SessionSync<'_>>,
    rules: StreamRules,
) -> Response {
    let started = tokio::time::Instant::now();
    // Only stateless (2026-07-28) answers map JSON-RPC errors to HTTP statuses.
    let map = stateless.as_ref().map(|_| StatusMap::Modern);
    let (tx, mut rx) = mpsc::channel::<Outgoing>(64);
    // A shared session's stream names its requests in the store (for a replica resuming
    // it after this one died).
    let asked = match streams.and_then(SessionStreams::mirror) {
        Some(_) => request_ids(&frame),
        None => Vec::new(),
    };
    let begun = conn.start_parsed_as(frame, &tx, &origin).await;
    drop(origin);
    if let Some(sync) = sync {
        sync.after_admission(conn).await;
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
    // A request whose first message has not come after a keep-alive period is answered
    // with an SSE stream, which the keep-alive then holds open: otherwise a long, silent
    // tool call holds a POST without a byte of answer, which proxies cut.
    let streamed_deadline = rules.stream_after.map(|after| started + after);
    let deadline = match (polled_deadline, streamed_deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let closing = stateless.as_ref().map(|p| &p.state.closing);
    let mut first = None;
    match begun {
        Started::Sent(0) => return StatusCode::ACCEPTED.into_response(),
        Started::Sent(_) => {}
        Started::Answer(answer) => match answered(answer, &tx, &mut rx) {
            Ok(answer) => return json_response(status_for(map, &answer), &answer),
            Err(queued) => first = Some(queued),
        },
        Started::Handler(task) => {
            let mut inline = Inline {
                task: Some(task),
                reply: tx.clone(),
            };
            match inline.run(&mut rx, closing, deadline).await {
                Raced::Answered(Some(answer)) => match answered(answer, &tx, &mut rx) {
                    Ok(answer) => return json_response(status_for(map, &answer), &answer),
                    Err(queued) => first = Some(queued),
                },
                // Cancelled: what it sent before, if anything, is read below.
                Raced::Answered(None) => {}
                Raced::Sent(message) => first = Some(message),
                Raced::Closing => return shutting_down(),
                // The handler goes on as a task (`inline` is dropped); the stream below
                // carries its answer.
                Raced::TimeLimit => {}
            }
        }
    }
    drop(tx);
    let first = match (first, deadline) {
        (Some(first), _) => Some(first),
        (None, None) => match next_message(&mut rx, closing).await {
            Ok(first) => first,
            Err(()) => return shutting_down(),
        },
        (None, Some(deadline)) => {
            match tokio::time::timeout_at(deadline, next_message(&mut rx, closing)).await {
                Ok(Ok(first)) => first,
                Ok(Err(())) => return shutting_down(),
                // Nothing yet: the answer becomes a stream now, the request's messages and
                // answer to come on it.
                Err(_) => {
                    if let Some(streams) = streams {
                        let stored = streams.spawn(None, rx, asked);
                        let body = streams.connection(stored.reader(0), started);
                        return sse_response(body, rules);
                    }
                    return sse_response(stateless_events(None, rx, stateless), rules);
                }
            }
        }
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
        let body = streams.connection(stored.reader(0), started);
        return sse_response(body, rules.clone());
    }
    sse_response(stateless_events(Some(first), rx, stateless), rules)
}

/// The next message of a request, or `Err` when the server closes first (stateless
/// requests, which are given `closing`).
async fn next_message(
    rx: &mut mpsc::Receiver<Outgoing>,
    closing: Option<&CancellationToken>,
) -> Result<Option<Outgoing>, ()> {
    match closing {
        Some(closing) => tokio::select! {
            first = rx.recv() => Ok(first),
            () = closing.cancelled() => Err(()),
        },
        None => Ok(rx.recv().await),
    }
}

/// A stateless request's stream: `first` (if it came already), then what the request
/// sends until its answer. Its connection lives as long as the stream: when the client
/// goes away (a `subscriptions/listen` it stopped reading), the handler is cancelled
/// (`guard` is dropped with the stream).
fn stateless_events(
    first: Option<Outgoing>,
    rx: mpsc::Receiver<Outgoing>,
    guard: Option<InProgress>,
) -> super::event_store::SseBody {
    stream::unfold((first, rx, guard), |(pending, mut rx, guard)| async move {
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
    })
    .boxed()
}

/// An answer known here, before anything went to the stream: `Ok` when nothing was sent
/// before it (the JSON answer), else the first message sent, with the answer queued
/// behind what came before it.
fn answered(
    answer: Outgoing,
    tx: &mpsc::Sender<Outgoing>,
    rx: &mut mpsc::Receiver<Outgoing>,
) -> Result<Outgoing, Outgoing> {
    let Ok(first) = rx.try_recv() else {
        return Ok(answer);
    };
    if let Err(full) = tx.try_send(answer) {
        // Only a full queue (this function holds `rx`): the answer waits for room.
        let answer = full.into_inner();
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(answer).await;
        });
    }
    Err(first)
}

/// How a handler run in the POST's task ended its race (see [`dispatch`]).
enum Raced {
    /// The handler finished first (`None`: its request was cancelled).
    Answered(Option<Outgoing>),
    /// A message came first (a notification, a request to the client): the handler
    /// now runs as a task of its own.
    Sent(Outgoing),
    /// The server closed (stateless requests).
    Closing,
    /// A polling session's time limit for the POST passed; the handler runs on as a task.
    TimeLimit,
}

/// A request's handler run in the POST's own task. If it has not finished when this is
/// dropped (a notification came first, the client went away, the server closed), the
/// rest of it runs as a task of its own, its answer sent to `reply`: its bookkeeping (the
/// request's place among those in flight) and its answer are never lost.
struct Inline {
    task: Option<BoxFuture<'static, Option<Outgoing>>>,
    reply: mpsc::Sender<Outgoing>,
}

impl Inline {
    /// Runs the handler until it answers, a message comes first, the server closes or
    /// the time limit passes.
    async fn run(
        &mut self,
        rx: &mut mpsc::Receiver<Outgoing>,
        closing: Option<&CancellationToken>,
        deadline: Option<tokio::time::Instant>,
    ) -> Raced {
        let Some(task) = self.task.as_mut() else {
            return Raced::Answered(None);
        };
        let closed = async {
            match closing {
                Some(c) => c.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let time_limit = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let raced = tokio::select! {
            biased;
            answer = task => Raced::Answered(answer),
            // `self` holds a sender: the channel is open while the handler runs.
            Some(message) = rx.recv() => Raced::Sent(message),
            () = closed => Raced::Closing,
            () = time_limit => Raced::TimeLimit,
        };
        if matches!(raced, Raced::Answered(_)) {
            // Finished: nothing is left to run as a task.
            self.task = None;
        }
        raced
    }
}

impl Drop for Inline {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            // Outside a runtime (it is shutting down) there is nothing left to run it on.
            if tokio::runtime::Handle::try_current().is_ok() {
                spawn_answer(task, self.reply.clone());
            }
        }
    }
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
