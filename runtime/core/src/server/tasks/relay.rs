//! How a `tasks/cancel` or `tasks/update` served by one replica reaches a task's handler
//! running on another (HTTP with a session store): the serving replica changes the record
//! and sends a [`TaskSignal`] on the replicas' channel; the replica whose `Tasks::live`
//! holds the task acts on it, the others ignore it.

use std::sync::{Arc, PoisonError};

use serde_json::{json, Map, Value};

use super::{lock, wire_shape, Tasks};
use crate::model::Implementation;

/// What a replica that does not run a task hands to the replicas that may (HTTP with a
/// session store): the handler's cancellation, or the answers it waits for.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskSignal {
    /// `tasks/cancel`: the record is already `cancelled`; the handler is to stop.
    Cancel(String),
    /// `tasks/update`: answers by `inputRequests` key, already taken off the record.
    Answers(String, Map<String, Value>),
}

/// Sends a [`TaskSignal`] to the other replicas; whether it left (the transport sets it).
pub type TaskRelay =
    Arc<dyn Fn(TaskSignal) -> crate::combine::BoxFuture<'static, bool> + Send + Sync>;

impl TaskSignal {
    /// The signal as the replicas' channel carries it.
    #[doc(hidden)]
    pub fn to_note(&self) -> Value {
        match self {
            TaskSignal::Cancel(task) => json!({"kind": "task", "op": "cancel", "task": task}),
            TaskSignal::Answers(task, responses) => {
                json!({"kind": "task", "op": "answers", "task": task, "responses": responses})
            }
        }
    }

    /// A signal read from the replicas' channel.
    #[doc(hidden)]
    pub fn from_note(note: &Value) -> Option<TaskSignal> {
        let task = note.get("task")?.as_str()?.to_owned();
        Some(match note.get("op")?.as_str()? {
            "cancel" => TaskSignal::Cancel(task),
            "answers" => TaskSignal::Answers(task, note.get("responses")?.as_object()?.clone()),
            _ => return None,
        })
    }
}

impl Tasks {
    /// Lets a `tasks/cancel` or `tasks/update` served here reach a handler that runs on
    /// another replica.
    #[doc(hidden)]
    pub fn set_relay(&self, relay: TaskRelay) {
        *self.relay.write().unwrap_or_else(PoisonError::into_inner) = Some(relay);
    }

    /// Sends `signal` to the other replicas: `None` with no replicas, else whether it left.
    pub(super) async fn relay(&self, signal: TaskSignal) -> Option<bool> {
        let relay = self
            .relay
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        Some(relay(signal).await)
    }

    /// A signal from the replica that served a `tasks/cancel` or `tasks/update` for a
    /// task this one may run (nothing happens if it does not). The record was changed
    /// there already: here the handler is stopped, or handed its answers.
    #[doc(hidden)]
    pub async fn relayed(&self, signal: TaskSignal, info: &Implementation) {
        match signal {
            TaskSignal::Cancel(id) => {
                let Some(l) = lock(&self.live).remove(&id) else {
                    return;
                };
                l.cancel.cancel();
                l.ended.notify_waiters();
                if let Some(out) = l.status_to {
                    // The legacy client's session is here: it hears the status here.
                    if let Ok(Some(record)) = self.store().get(&id).await {
                        if let Some(note) = wire_shape::status_notification(&record, info) {
                            let _ = out.try_send(note);
                        }
                    }
                }
            }
            TaskSignal::Answers(id, responses) => {
                let mut live = lock(&self.live);
                let Some(l) = live.get_mut(&id) else { return };
                for (key, response) in responses {
                    if let Some(tx) = l.waiting.remove(&key) {
                        let _ = tx.send(response);
                    }
                }
            }
        }
    }

    /// Whether a relay is set (this server has other replicas).
    pub(super) fn relays(&self) -> bool {
        self.relay
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}
