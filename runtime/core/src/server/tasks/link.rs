//! A running handler's link to its task, shared by the clones of its `Context`: whether
//! the call is a task yet, and the way a handler that starts its task itself
//! (`Tool::task_started_by_handler`) asks the request to answer with the task handle.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::oneshot;

use super::{lock, TaskStatus, Tasks};
use crate::model::Implementation;
use crate::protocol::asks::{AskError, TaskInput};
use crate::wire::RpcError;

/// The request side's answer to a handler starting its task: the task id, or why no
/// task could be created.
pub(super) type StartAck = oneshot::Sender<Result<String, RpcError>>;

enum LinkState {
    /// Not a task yet: `start` sends an acknowledgement channel to the waiting request
    /// (taken by the first `start`).
    Pending(Option<oneshot::Sender<StartAck>>),
    /// A task with this id.
    Started(String),
}

/// See the module documentation.
pub(crate) struct TaskLink {
    tasks: Arc<Tasks>,
    info: Implementation,
    state: Mutex<LinkState>,
}

impl std::fmt::Debug for TaskLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskLink")
            .field("task", &self.id())
            .finish_non_exhaustive()
    }
}

impl TaskLink {
    /// The link of a handler running as task `id` from its start.
    pub(super) fn started(tasks: Arc<Tasks>, info: Implementation, id: String) -> Arc<TaskLink> {
        Arc::new(TaskLink {
            tasks,
            info,
            state: Mutex::new(LinkState::Started(id)),
        })
    }

    /// The link of a handler that will start its task itself; the receiver hears it.
    pub(super) fn pending(
        tasks: Arc<Tasks>,
        info: Implementation,
    ) -> (Arc<TaskLink>, oneshot::Receiver<StartAck>) {
        let (tx, rx) = oneshot::channel();
        let link = Arc::new(TaskLink {
            tasks,
            info,
            state: Mutex::new(LinkState::Pending(Some(tx))),
        });
        (link, rx)
    }

    /// The task's id, once the call is a task.
    pub(crate) fn id(&self) -> Option<String> {
        match &*lock(&self.state) {
            LinkState::Started(id) => Some(id.clone()),
            LinkState::Pending(_) => None,
        }
    }

    /// Makes the call a task now (see `Context::start_task`): `Ok(true)` once it is one.
    pub(crate) async fn start(&self) -> Result<bool, RpcError> {
        let start = match &mut *lock(&self.state) {
            LinkState::Started(_) => return Ok(true),
            LinkState::Pending(start) => start.take(),
        };
        let Some(start) = start else {
            return Ok(false);
        };
        let (ack, answer) = oneshot::channel();
        if start.send(ack).is_err() {
            return Err(RpcError::internal(
                "the request ended before its task started",
            ));
        }
        let id = answer
            .await
            .map_err(|_| RpcError::internal("the request ended before its task started"))??;
        *lock(&self.state) = LinkState::Started(id);
        Ok(true)
    }

    /// Sets the status message and, between `working` and `input_required`, the status.
    pub(crate) async fn set_status(&self, status: Option<TaskStatus>, message: Option<String>) {
        if let Some(id) = self.id() {
            self.tasks
                .set_status(&id, &self.info, status, message)
                .await;
        }
    }
}

impl TaskInput for TaskLink {
    fn request_input(
        &self,
        requests: Vec<(Option<String>, Value)>,
    ) -> crate::combine::BoxFuture<'_, Result<Vec<Value>, AskError>> {
        Box::pin(async move {
            match self.id() {
                Some(id) => self.tasks.request_input(&id, &self.info, requests).await,
                None => Err(AskError::new(
                    crate::protocol::asks::AskErrorKind::CannotAsk,
                    RpcError::internal("not a task"),
                )),
            }
        })
    }
}
