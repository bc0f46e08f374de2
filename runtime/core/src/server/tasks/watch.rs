//! `notifications/tasks` on a 2026-07-28 `subscriptions/listen` stream: the tasks the
//! listener named (its own), each sent as `tasks/get` would answer it when the stream
//! opens and again whenever it changes, until it ends or expires.
//!
//! A change made in this process wakes the stream at once; a task another replica runs
//! changes only in the shared store, which the stream reads again every poll interval.

use std::time::Duration;

use serde_json::Value;

use super::{wire_shape, TaskStatus, Tasks};
use crate::cancel::{first, First};
use crate::protocol::version::ProtocolVersion;
use crate::wire::RpcError;

/// The tasks one listen stream watches, with what it last sent of each.
pub(crate) struct TaskWatch {
    owner: String,
    /// `(task id, (status, last update) last sent)`.
    watched: Vec<(String, Option<(TaskStatus, u64)>)>,
}

impl TaskWatch {
    /// Watches those of `ids` that `owner` owns and that have not expired; the others are
    /// left out (the acknowledgement names the ones watched).
    pub(crate) async fn new(tasks: &Tasks, ids: &[String], owner: &str) -> TaskWatch {
        let mut watched = Vec::new();
        for id in ids {
            let known = watched.iter().any(|(w, _)| w == id);
            if !known && tasks.owned(id, owner).await.is_ok() {
                watched.push((id.clone(), None));
            }
        }
        TaskWatch {
            owner: owner.to_owned(),
            watched,
        }
    }

    /// The ids watched.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.watched.iter().map(|(id, _)| id.clone()).collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }

    /// The `notifications/tasks` params of every watched task that changed since it was
    /// last sent (each tagged with `meta`); a task that ended or expired leaves the watch
    /// (after its last state, for one that ended).
    pub(crate) async fn changes(
        &mut self,
        tasks: &Tasks,
        v: ProtocolVersion,
        meta: &Value,
    ) -> Vec<Result<Value, RpcError>> {
        let mut out = Vec::new();
        let mut left = Vec::with_capacity(self.watched.len());
        for (id, sent) in std::mem::take(&mut self.watched) {
            let Ok(record) = tasks.owned(&id, &self.owner).await else {
                // Expired (or the store is away): nothing more will be sent of it.
                continue;
            };
            let now = (record.status, record.updated_at_ms);
            if sent != Some(now) {
                out.push(wire_shape::listen_notification(v, &record, meta.clone()));
            }
            if !record.status.is_terminal() {
                left.push((id, Some(now)));
            }
        }
        self.watched = left;
        out
    }
}

impl Tasks {
    /// Waits until a task of this process changes, or the poll interval passes. The
    /// returned future is registered for changes from the moment it is created: create it
    /// before reading the tasks, so that no change between the read and the wait is lost.
    pub(crate) fn next_change(&self) -> impl std::future::Future<Output = ()> + '_ {
        let mut changed = Box::pin(self.changed.notified());
        changed.as_mut().enable();
        let poll = self.options.poll_interval.max(Duration::from_millis(10));
        async move {
            // Whichever comes first: a change here, or time to read the store again.
            let (First::A(()) | First::B(())) = first(changed, tokio::time::sleep(poll)).await;
        }
    }
}
