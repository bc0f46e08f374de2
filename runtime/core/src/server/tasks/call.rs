//! A tool call that may become a task: whether it does (the tool's support, the client's
//! declaration, the revision), and running its handler as one — created before the
//! answer, or when the handler starts it after asking what it needs to decide.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::link::TaskLink;
use super::{declares_extension, extension_required, wire_shape, Tasks};
use crate::cancel::{first, CancellationToken, First};
use crate::model::{Implementation, TaskSupport, ToolResult};
use crate::protocol::shape;
use crate::protocol::version::ProtocolVersion;
use crate::server::context::Context;
use crate::server::handler::ToolFn;
use crate::server::Server;
use crate::wire::{Encoded, ErrorCode, RpcError};
use crate::Era;

/// How one tool call runs.
pub(crate) enum TaskMode {
    /// An ordinary call, answered with its result.
    Direct,
    /// A task from the start: answered at once with the task.
    Immediate,
    /// The handler starts the task itself (`Context::start_task`); until then it is an
    /// ordinary call (2026-07-28: its asks are `input_required` rounds).
    Deferred,
}

/// How a call that could become a task ended for its request.
pub(crate) enum TaskRun {
    /// It became a task: the answer is the task handle.
    Created(Encoded),
    /// The handler finished without starting its task: its result, answered directly.
    Finished(Result<ToolResult, RpcError>),
}

impl Server {
    /// Whether tasks are offered (some tool may run as one): the capability is declared
    /// and the `tasks/*` methods are served.
    pub(crate) fn offers_tasks(&self) -> bool {
        self.inner.offers_tasks
    }

    #[doc(hidden)]
    pub fn tasks(&self) -> &Arc<Tasks> {
        &self.inner.tasks
    }

    /// How a call of a tool with `support` runs for this request. 2025-11-25: a task when
    /// the client asked for one (`params.task`); 2026-07-28: whenever the request declared
    /// the extension; other revisions: never (their clients see no change). A tool that
    /// requires a task, called by a client that cannot take one, is an error.
    pub(crate) fn task_mode(
        &self,
        v: ProtocolVersion,
        tool: &str,
        support: Option<TaskSupport>,
        deferred: bool,
        ctx: &Context,
        task_param: Option<&Value>,
    ) -> Result<TaskMode, RpcError> {
        let support = support.unwrap_or(TaskSupport::Forbidden);
        let as_task = if deferred {
            TaskMode::Deferred
        } else {
            TaskMode::Immediate
        };
        if v.era() == Era::Modern {
            // A `task` param (2025-11-25's request flag) means nothing here: the server
            // decides, for clients that declared the extension on this request.
            return match (support, declares_extension(ctx.client_capabilities())) {
                (TaskSupport::Forbidden, _) => Ok(TaskMode::Direct),
                (_, true) => Ok(as_task),
                (TaskSupport::Required, false) => Err(extension_required(&format!(
                    "tool {tool:?} runs only as a task"
                ))),
                (_, false) => Ok(TaskMode::Direct),
            };
        }
        if !v.features().tasks {
            return Ok(TaskMode::Direct);
        }
        match (support, task_param.filter(|t| !t.is_null()).is_some()) {
            (TaskSupport::Forbidden, true) => Err(RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: tool {tool:?} does not run as a task (execution.taskSupport is forbidden)"),
            )),
            (TaskSupport::Required, false) => Err(RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: tool {tool:?} runs only as a task (execution.taskSupport is required): call it with params.task"),
            )),
            (_, true) => Ok(TaskMode::Immediate),
            (_, false) => Ok(TaskMode::Direct),
        }
    }

    /// Runs a call as a task (see [`TaskMode`]).
    pub(crate) async fn run_task(
        &self,
        v: ProtocolVersion,
        mode: TaskMode,
        handler: Arc<ToolFn>,
        arguments: Map<String, Value>,
        ctx: Context,
        task_param: Option<&Value>,
    ) -> Result<TaskRun, RpcError> {
        let tasks = Arc::clone(self.tasks());
        let info = self.inner.info.clone();
        let owner = ctx.task_owner().to_owned();
        let legacy_session = (v.era() == Era::Legacy)
            .then(|| ctx.session_channel())
            .flatten();
        let cancel = CancellationToken::new();
        if let TaskMode::Direct = mode {
            return Ok(TaskRun::Finished(handler(arguments, ctx).await));
        }
        if let TaskMode::Immediate = mode {
            let requested_ttl = task_param
                .and_then(|t| t.get("ttl"))
                .and_then(Value::as_u64);
            let record = tasks
                .create(
                    &owner,
                    v,
                    requested_ttl,
                    legacy_session.clone(),
                    cancel.clone(),
                )
                .await?;
            tasks.expire_later(record.id.clone(), record.ttl_ms, info.clone());
            let link = TaskLink::started(Arc::clone(&tasks), info.clone(), record.id.clone());
            let job_ctx = ctx.for_task(link.clone(), cancel.clone(), legacy_session);
            tokio::spawn(job(
                v,
                tasks,
                info.clone(),
                link,
                handler,
                arguments,
                job_ctx,
                cancel,
                None,
            ));
            return wire_shape::create_result(v, &info, &record).map(TaskRun::Created);
        }
        // Deferred: the handler runs now, as the request's; it may start its task.
        let (link, start) = TaskLink::pending(Arc::clone(&tasks), info.clone());
        let request_cancelled = ctx.cancellation();
        let job_ctx = ctx.for_task(link.clone(), cancel.clone(), None);
        let (done_tx, done) = oneshot::channel();
        tokio::spawn(job(
            v,
            Arc::clone(&tasks),
            info.clone(),
            link,
            handler,
            arguments,
            job_ctx,
            cancel.clone(),
            Some(done_tx),
        ));
        let internal = || RpcError::internal("Internal error: the handler ended without an answer");
        match first(request_cancelled.cancelled(), first(done, start)).await {
            First::A(()) => {
                cancel.cancel();
                Err(RpcError::internal("cancelled"))
            }
            First::B(First::A(done)) => {
                Ok(TaskRun::Finished(done.unwrap_or_else(|_| Err(internal()))))
            }
            First::B(First::B(Ok(ack))) => {
                match tasks.create(&owner, v, None, None, cancel.clone()).await {
                    Ok(record) => {
                        tasks.expire_later(record.id.clone(), record.ttl_ms, info.clone());
                        let _ = ack.send(Ok(record.id.clone()));
                        wire_shape::create_result(v, &info, &record).map(TaskRun::Created)
                    }
                    Err(e) => {
                        let _ = ack.send(Err(e.clone()));
                        cancel.cancel();
                        Err(e)
                    }
                }
            }
            // The handler dropped its link: it ended, and `done` says how.
            First::B(First::B(Err(_))) => Err(internal()),
        }
    }
}

/// A task's handler, spawned: its outcome ends the task, or — if it ends before its task
/// started — goes to the request (`done`).
#[allow(clippy::too_many_arguments)]
async fn job(
    v: ProtocolVersion,
    tasks: Arc<Tasks>,
    info: Implementation,
    link: Arc<TaskLink>,
    handler: Arc<ToolFn>,
    arguments: Map<String, Value>,
    ctx: Context,
    cancel: CancellationToken,
    done: Option<oneshot::Sender<Result<ToolResult, RpcError>>>,
) {
    let ends_with = ctx.tasks_end_with();
    let stop = async {
        match &ends_with {
            Some(end) => {
                if let First::B(()) = first(cancel.cancelled(), end.cancelled()).await {
                    // The connection ended: no one can ask about the task any more.
                    if let Some(id) = link.id() {
                        tasks.cancel(&id, &info).await;
                    }
                }
            }
            None => cancel.cancelled().await,
        }
    };
    let work = crate::combine::catch_unwind(AssertUnwindSafe(handler(arguments, ctx)));
    let outcome = match first(stop, work).await {
        // Cancelled: the status says so already; the handler's future is dropped.
        First::A(()) => return,
        First::B(Ok(outcome)) => outcome,
        First::B(Err(_panic)) => {
            tracing::error!("task handler panicked");
            Err(RpcError::internal("Internal error: the handler panicked"))
        }
    };
    let Some(id) = link.id() else {
        if let Some(done) = done {
            let _ = done.send(outcome);
        }
        return;
    };
    let shaped =
        outcome.and_then(|result| shape::tool_result(v, &info, result).map(|e| e.to_value()));
    tasks.finish(&id, &info, shaped).await;
}
