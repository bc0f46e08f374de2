//! Legacy revisions: a handler's ask is a server-to-client request on the request's own channel, matched to its answer by id, with a timeout and cancellation forwarded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::ask::Ask;
use super::error::{AskError, AskErrorKind};
use crate::cancel::{first, First};
use crate::protocol::peer::Peer;
use crate::wire::{RequestId, RpcError};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Server-to-client requests awaiting an answer on one connection (legacy).
#[derive(Debug, Default)]
pub(crate) struct Pending {
    next: AtomicU64,
    /// Empty, or `-` and the replica's name: ids are `s-N` or `s-REPLICA-N`.
    prefix: String,
    waiting: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, RpcError>>>>,
}

impl Pending {
    /// Registers a new request; returns its id and the receiver of its answer.
    pub(crate) fn register(&self) -> (RequestId, oneshot::Receiver<Result<Value, RpcError>>) {
        let id = RequestId::String(format!(
            "s{}-{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        ));
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), tx);
        (id, rx)
    }

    /// Ids of the form `s-REPLICA-N` (a session shared by replicas).
    pub(crate) fn prefixed(replica: &str) -> Pending {
        Pending {
            prefix: format!("-{replica}"),
            ..Pending::default()
        }
    }

    /// Whether a request with this id waits for its answer.
    pub(crate) fn contains(&self, id: &RequestId) -> bool {
        lock(&self.waiting).contains_key(id)
    }

    /// Delivers an answer; false if nothing was waiting for that id.
    pub(crate) fn resolve(&self, id: &RequestId, outcome: Result<Value, RpcError>) -> bool {
        match lock(&self.waiting).remove(id) {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// Forgets a request (timed out or cancelled).
    pub(crate) fn forget(&self, id: &RequestId) {
        lock(&self.waiting).remove(id);
    }
}

pub(super) async fn ask(
    peer: &Peer,
    pending: &Arc<Pending>,
    timeout: Duration,
    ask: &Ask,
    related_task: Option<&str>,
) -> Result<Value, AskError> {
    let v = peer.version;
    let mut params = ask.request_params(v)?;
    if let (Some(task), Value::Object(p)) = (related_task, &mut params) {
        // Added after projection: `_meta` is an open object in every revision.
        let meta = p
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(
                "io.modelcontextprotocol/related-task".into(),
                serde_json::json!({"taskId": task}),
            );
        }
    }
    let (id, rx) = pending.register();
    // If this future is dropped before the answer (the asking request was cancelled and its
    // handler dropped), the guard forgets the request and tells the client to stop.
    let mut guard = AskGuard {
        pending: Arc::clone(pending),
        id: id.clone(),
        peer: peer.clone(),
        reason: "the request that asked was cancelled",
        armed: true,
    };
    peer.send_request(&id, ask.method(), params).await;
    let raced = first(
        rx,
        first(tokio::time::sleep(timeout), peer.cancel.cancelled()),
    )
    .await;
    let outcome = match raced {
        First::A(r) => {
            guard.armed = false;
            match r {
                Ok(Ok(answer)) => answer,
                Ok(Err(refused)) => return Err(AskError::new(AskErrorKind::Refused, refused)),
                Err(_) => {
                    return Err(AskError::new(
                        AskErrorKind::Cancelled,
                        RpcError::internal("the connection closed before the client answered"),
                    ))
                }
            }
        }
        First::B(First::A(())) => {
            guard.reason = "timed out";
            drop(guard);
            return Err(AskError::new(
                AskErrorKind::TimedOut,
                RpcError::internal(format!(
                    "the client did not answer `{}` within {:?}",
                    ask.method(),
                    timeout
                )),
            ));
        }
        First::B(First::B(())) => {
            drop(guard);
            return Err(AskError::new(
                AskErrorKind::Cancelled,
                RpcError::internal("cancelled"),
            ));
        }
    };
    let answer = outcome;
    ask.check_answer(v, &answer).map_err(|e| {
        AskError::new(
            AskErrorKind::InvalidAnswer,
            RpcError::internal(format!(
                "the client's answer to `{}` is invalid: {e}",
                ask.method()
            )),
        )
    })?;
    Ok(answer)
}

/// Forgets an unanswered server request and sends `notifications/cancelled` for it, also
/// when the asking handler is dropped mid-wait.
struct AskGuard {
    pending: Arc<Pending>,
    id: RequestId,
    peer: Peer,
    reason: &'static str,
    armed: bool,
}

impl Drop for AskGuard {
    fn drop(&mut self) {
        if self.armed {
            self.pending.forget(&self.id);
            self.peer.try_send_cancel(&self.id, self.reason);
        }
    }
}
