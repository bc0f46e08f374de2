//! The results of the 2026-07-28 `io.modelcontextprotocol/tasks` extension, shaped as
//! every core result is: neutral JSON, stamped (`resultType`, the server's identity in
//! `_meta`), projected through the extension's generated type (`mcp_generated::ext::tasks`,
//! generated from the extension's official schema) with its kept-keys map emptied, and
//! encoded from that typed value. No revision schema defines these types, so
//! `by_revision!` cannot dispatch them: the extension says which revisions it extends.

use mcp_generated::ext::tasks as ext;
use mcp_generated::support::FromValue;
use serde_json::{Map, Value};

use super::{encode_typed, project_stamped, shaping_error, stamp};
use crate::model::Implementation;
use crate::protocol::version::ProtocolVersion;
use crate::wire::{Encoded, RpcError};

/// The extension's messages exist only in the revisions it extends.
fn extended(v: ProtocolVersion) -> Result<(), RpcError> {
    if ext::EXTENDS.contains(&v.as_str()) {
        Ok(())
    } else {
        Err(RpcError::internal(format!(
            "the {} extension does not extend MCP {v}",
            ext::ID
        )))
    }
}

/// The flat `CreateTaskResult` (`resultType: "task"`) answering a call that became a
/// task; `task` holds the `Task` fields.
pub fn create_task(
    v: ProtocolVersion,
    server: &Implementation,
    mut task: Map<String, Value>,
) -> Result<Encoded, RpcError> {
    extended(v)?;
    let left = stamp(v, &mut task, server, None);
    task.insert(
        "resultType".into(),
        Value::String(ext::CreateTaskResultResultType::VALUE.into()),
    );
    project_stamped::<ext::CreateTaskResult>("a task", Value::Object(task), left, 0)
}

/// The `tasks/get` result: the detailed task of its status (the result, error or
/// `inputRequests` inlined); the status selects the generated variant.
pub fn get_task(
    v: ProtocolVersion,
    server: &Implementation,
    mut task: Map<String, Value>,
) -> Result<Encoded, RpcError> {
    extended(v)?;
    let what = "a task";
    let left = stamp(v, &mut task, server, None);
    let mut typed = match ext::GetTaskResult::from_value(Value::Object(task)) {
        Ok(typed) => typed,
        Err(e) => return Err(shaping_error(what, &e)),
    };
    // An outgoing message carries only what the extension defines.
    match &mut typed {
        ext::GetTaskResult::WorkingTask(t) => t.extra.clear(),
        ext::GetTaskResult::InputRequiredTask(t) => t.extra.clear(),
        ext::GetTaskResult::CompletedTask(t) => t.extra.clear(),
        ext::GetTaskResult::FailedTask(t) => t.extra.clear(),
        ext::GetTaskResult::CancelledTask(t) => t.extra.clear(),
    }
    encode_typed(what, &typed, left, 0)
}

/// The empty acknowledgement of `tasks/update`.
pub fn update_task(v: ProtocolVersion, server: &Implementation) -> Result<Encoded, RpcError> {
    extended(v)?;
    let mut result = Map::new();
    let left = stamp(v, &mut result, server, None);
    project_stamped::<ext::UpdateTaskResult>("a task update", Value::Object(result), left, 0)
}

/// The empty acknowledgement of `tasks/cancel`.
pub fn cancel_task(v: ProtocolVersion, server: &Implementation) -> Result<Encoded, RpcError> {
    extended(v)?;
    let mut result = Map::new();
    let left = stamp(v, &mut result, server, None);
    project_stamped::<ext::CancelTaskResult>("a task cancellation", Value::Object(result), left, 0)
}

/// The params of `notifications/tasks` (sent on a `subscriptions/listen` stream): the
/// detailed task of its status, as `tasks/get` would answer it, with the stream's `_meta`
/// (`task` holds both); the status selects the generated variant.
pub fn task_status_params(v: ProtocolVersion, task: Map<String, Value>) -> Result<Value, RpcError> {
    extended(v)?;
    let what = "a task status notification";
    let mut typed = match ext::TaskStatusNotificationParams::from_value(Value::Object(task)) {
        Ok(typed) => typed,
        Err(e) => return Err(shaping_error(what, &e)),
    };
    // An outgoing message carries only what the extension defines.
    match &mut typed {
        ext::TaskStatusNotificationParams::WorkingTask(t) => t.extra.clear(),
        ext::TaskStatusNotificationParams::InputRequiredTask(t) => t.extra.clear(),
        ext::TaskStatusNotificationParams::CompletedTask(t) => t.extra.clear(),
        ext::TaskStatusNotificationParams::FailedTask(t) => t.extra.clear(),
        ext::TaskStatusNotificationParams::CancelledTask(t) => t.extra.clear(),
    }
    let json = match crate::wire::encode::to_vec(&typed) {
        Ok(json) => json,
        Err(e) => return Err(shaping_error(what, &e)),
    };
    serde_json::from_slice(&json).map_err(|e| shaping_error(what, &e))
}
