//! A task record as each era writes it: 2025-11-25 through that revision's generated
//! task types (`ttl`, `pollInterval`, `CreateTaskResult.task`), 2026-07-28 through the
//! `io.modelcontextprotocol/tasks` extension's generated types
//! (`shape::tasks_extension`: `ttlMs`, `pollIntervalMs`, a flat `CreateTaskResult` with
//! `resultType: "task"`, results and errors inlined on `tasks/get`).

use serde_json::{json, Map, Value};

use super::store::iso8601;
use super::{TaskRecord, TaskStatus};
use crate::model::Implementation;
use crate::protocol::shape::{by_revision, project, project_open, tasks_extension};
use crate::protocol::version::ProtocolVersion;
use crate::wire::{self, Encoded, ErrorCode, Outgoing, RpcError};

/// `_meta` key relating a 2025-11-25 message to its task.
pub(super) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The `Task` fields both eras share, under each era's names.
fn task_fields(r: &TaskRecord, modern: bool) -> Map<String, Value> {
    let mut task = Map::new();
    task.insert("taskId".into(), json!(r.id));
    task.insert("status".into(), json!(r.status.as_str()));
    if let Some(m) = &r.status_message {
        task.insert("statusMessage".into(), json!(m));
    }
    task.insert("createdAt".into(), json!(iso8601(r.created_at_ms)));
    task.insert("lastUpdatedAt".into(), json!(iso8601(r.updated_at_ms)));
    let (ttl, poll) = if modern {
        ("ttlMs", "pollIntervalMs")
    } else {
        ("ttl", "pollInterval")
    };
    task.insert(ttl.into(), r.ttl_ms.map_or(Value::Null, |t| json!(t)));
    task.insert(poll.into(), json!(r.poll_interval_ms));
    task
}

/// The answer to a call that became a task.
pub(super) fn create_result(
    v: ProtocolVersion,
    info: &Implementation,
    r: &TaskRecord,
) -> Result<Encoded, RpcError> {
    if v.era() == crate::Era::Modern {
        return tasks_extension::create_task(v, info, task_fields(r, true));
    }
    let result = json!({"task": task_fields(r, false)});
    by_revision!(v, where tasks, |m| project_open::<m::CreateTaskResult>(
        "a task",
        result
    ), else Err(no_tasks(v)))
}

/// `tasks/get`: 2026-07-28's detailed task (result, error or `inputRequests` inlined),
/// 2025-11-25's task.
pub(super) fn get_result(
    v: ProtocolVersion,
    info: &Implementation,
    r: &TaskRecord,
) -> Result<Encoded, RpcError> {
    if v.era() == crate::Era::Modern {
        return tasks_extension::get_task(v, info, detailed_task(r));
    }
    let task = Value::Object(task_fields(r, false));
    by_revision!(v, where tasks, |m| project_open::<m::GetTaskResult>(
        "a task",
        task
    ), else Err(no_tasks(v)))
}

/// 2026-07-28's detailed task: the `Task` fields with the result, error or
/// `inputRequests` of its status inlined (`tasks/get`, `notifications/tasks`).
fn detailed_task(r: &TaskRecord) -> Map<String, Value> {
    let mut task = task_fields(r, true);
    match r.status {
        TaskStatus::Completed => {
            let mut result = r.result.clone().unwrap_or_else(|| json!({}));
            // The task id is the answer's own: a result carries no `related-task`.
            if let Some(Value::Object(meta)) = result.get_mut("_meta") {
                meta.remove(RELATED_TASK);
            }
            task.insert("result".into(), result);
        }
        TaskStatus::Failed => {
            task.insert(
                "error".into(),
                r.error
                    .clone()
                    .unwrap_or_else(|| RpcError::internal("the task failed").to_value()),
            );
        }
        TaskStatus::InputRequired => {
            task.insert(
                "inputRequests".into(),
                Value::Object(r.input_requests.clone()),
            );
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    task
}

/// 2026-07-28 `notifications/tasks` params for a record, tagged with a
/// `subscriptions/listen` stream's `_meta`.
pub(super) fn listen_notification(
    v: ProtocolVersion,
    r: &TaskRecord,
    meta: Value,
) -> Result<Value, RpcError> {
    let mut task = detailed_task(r);
    task.insert("_meta".into(), meta);
    tasks_extension::task_status_params(v, task)
}

/// 2025-11-25 `tasks/cancel`: the task, now cancelled.
pub(super) fn cancel_result(v: ProtocolVersion, r: &TaskRecord) -> Result<Encoded, RpcError> {
    let task = Value::Object(task_fields(r, false));
    by_revision!(v, where tasks, |m| project_open::<m::CancelTaskResult>(
        "a task",
        task
    ), else Err(no_tasks(v)))
}

/// 2025-11-25 `tasks/list`: one page of the caller's tasks.
pub(super) fn list_result(
    v: ProtocolVersion,
    records: &[TaskRecord],
    next_cursor: Option<String>,
) -> Result<Encoded, RpcError> {
    let tasks: Vec<Value> = records
        .iter()
        .map(|r| Value::Object(task_fields(r, false)))
        .collect();
    let mut result = json!({"tasks": tasks});
    if let (Some(c), Value::Object(m)) = (next_cursor, &mut result) {
        m.insert("nextCursor".into(), json!(c));
    }
    by_revision!(v, where tasks, |m| project_open::<m::ListTasksResult>(
        "the task list",
        result
    ), else Err(no_tasks(v)))
}

/// 2025-11-25 `tasks/result` of a terminal task: what the call would have answered (its
/// result, related to the task in `_meta`), or its error.
pub(super) fn payload_result(v: ProtocolVersion, r: &TaskRecord) -> Result<Encoded, RpcError> {
    match r.status {
        TaskStatus::Completed => {
            let mut result = r.result.clone().unwrap_or_else(|| json!({"content": []}));
            if let Value::Object(obj) = &mut result {
                let meta = obj
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(RELATED_TASK.into(), json!({"taskId": r.id}));
                }
            }
            // The task was a `tools/call`: its result is that method's result.
            by_revision!(v, |m| project_open::<m::CallToolResult>(
                "a task's result",
                result
            ))
        }
        TaskStatus::Failed => Err(stored_error(r)),
        _ => Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            format!("Task {} was cancelled: it has no result", r.id),
        )),
    }
}

fn stored_error(r: &TaskRecord) -> RpcError {
    let e = r.error.as_ref();
    let code = e
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
        .unwrap_or(-32603);
    let message = e
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("Internal error");
    let err = RpcError::new(ErrorCode(code), message);
    match e.and_then(|e| e.get("data")).filter(|d| !d.is_null()) {
        Some(d) => err.with_data(d.clone()),
        None => err,
    }
}

/// 2025-11-25 `notifications/tasks/status` for a record (`None` for other revisions).
pub(super) fn status_notification(r: &TaskRecord, _info: &Implementation) -> Option<Outgoing> {
    let v = ProtocolVersion::parse(&r.version)?;
    let params = Value::Object(task_fields(r, false));
    let params = by_revision!(v, where tasks, |m| project::<m::TaskStatusNotificationParams>(
        "a task status",
        params
    ).ok(), else None)?;
    Some(wire::notification(
        "notifications/tasks/status",
        Some(params),
    ))
}

fn no_tasks(v: ProtocolVersion) -> RpcError {
    RpcError::method_not_found(&format!("tasks (not part of MCP {v})"))
}
