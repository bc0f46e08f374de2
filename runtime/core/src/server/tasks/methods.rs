//! The `tasks/*` requests: 2025-11-25's `tasks/get`, `tasks/result` (blocking until the
//! task ends), `tasks/list` and `tasks/cancel`; the 2026-07-28 extension's `tasks/get`,
//! `tasks/update` and `tasks/cancel`. A task is only ever visible to its owner.

use mcp_generated::ext::tasks as ext;
use serde_json::{Map, Value};

use super::{declares_extension, extension_required, wire_shape, TaskStatus};
use crate::cancel::CancellationToken;
use crate::protocol::shape::tasks_extension;
use crate::protocol::version::ProtocolVersion;
use crate::server::router::decode_params;
use crate::server::Server;
use crate::wire::{Encoded, RpcError};
use crate::Era;

pub(crate) use crate::protocol::method::TASKS_EXTENSION_METHODS as EXTENSION_METHODS;

fn task_id(params: Option<&Value>) -> Result<&str, RpcError> {
    params
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("params.taskId must be a string"))
}

fn encode_cursor(offset: usize) -> String {
    crate::primitives::base64::encode_url_safe(format!("t{offset}"))
}

fn decode_cursor(params: Option<&Value>) -> Result<usize, RpcError> {
    let Some(cursor) = params
        .and_then(|p| p.get("cursor"))
        .filter(|c| !c.is_null())
    else {
        return Ok(0);
    };
    let bad = || RpcError::invalid_params("invalid cursor");
    let bytes = crate::primitives::base64::decode_url_safe(cursor.as_str().ok_or_else(bad)?)
        .map_err(|_| bad())?;
    String::from_utf8(bytes)
        .ok()
        .and_then(|s| s.strip_prefix('t').and_then(|n| n.parse().ok()))
        .ok_or_else(bad)
}

impl Server {
    /// Whether a 2026-07-28 request of `method` is the extension's, for this server:
    /// then [`Server::extension_task_request`] serves it (else the revision's method
    /// table decides, and refuses it).
    pub(crate) fn serves_extension_method(&self, method: &str) -> bool {
        self.offers_tasks() && EXTENSION_METHODS.contains(&method)
    }

    /// A 2026-07-28 `tasks/get`, `tasks/update` or `tasks/cancel`; `-32021` when the
    /// request did not declare the extension.
    pub(crate) async fn extension_task_request(
        &self,
        v: ProtocolVersion,
        method: &str,
        params: Option<Value>,
        client_capabilities: &Value,
        owner: &str,
    ) -> Result<Encoded, RpcError> {
        if !declares_extension(client_capabilities) {
            return Err(extension_required(method));
        }
        let info = self.info();
        let tasks = self.tasks();
        // `tasks/get` and `tasks/cancel` params are decoded through the extension's
        // generated types (`_meta` stays at the envelope, read by the caller).
        // `tasks/update` is read by hand: each of its `inputResponses` goes as it is to
        // the ask waiting under its key, and one under a key not outstanding is ignored
        // (`Tasks::answer`), so one odd answer must not refuse the whole update, as
        // decoding the map through the extension's `InputResponses` union would.
        let (id, params) = match method {
            "tasks/get" => (
                decode_params::<ext::methods::GetTask>(params)?.task_id,
                None,
            ),
            "tasks/cancel" => (
                decode_params::<ext::methods::CancelTask>(params)?.task_id,
                None,
            ),
            _ => (task_id(params.as_ref())?.to_owned(), params),
        };
        let params = params.as_ref();
        let id = id.as_str();
        let record = tasks.owned(id, owner).await?;
        match method {
            "tasks/get" => wire_shape::get_result(v, info, &record),
            "tasks/update" => {
                let responses = match params.and_then(|p| p.get("inputResponses")) {
                    Some(Value::Object(r)) => r.clone(),
                    None | Some(Value::Null) => Map::new(),
                    Some(_) => {
                        return Err(RpcError::invalid_params(
                            "params.inputResponses must be an object",
                        ))
                    }
                };
                tasks.answer(id, info, responses).await?;
                tasks_extension::update_task(v, info)
            }
            _ => {
                // Idempotent: a task that already ended is acknowledged as it is.
                if !record.status.is_terminal() {
                    tasks.cancel(id, info).await;
                }
                tasks_extension::cancel_task(v, info)
            }
        }
    }

    /// A 2025-11-25 `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel` (`stop`:
    /// the request's cancellation, which ends a waiting `tasks/result`).
    pub(crate) async fn legacy_task_request(
        &self,
        v: ProtocolVersion,
        method: crate::protocol::method::McpMethod,
        params: Option<&Value>,
        owner: &str,
        stop: &CancellationToken,
    ) -> Result<Encoded, RpcError> {
        use crate::protocol::method::McpMethod;
        if !self.offers_tasks() || v.era() != Era::Legacy || !v.features().tasks {
            return Err(RpcError::method_not_found(method.name()));
        }
        let tasks = self.tasks();
        match method {
            McpMethod::ListTasks => {
                let offset = decode_cursor(params)?;
                let all = tasks.list(owner).await?;
                let page = self.limits().page_size.max(1);
                let end = offset.saturating_add(page).min(all.len());
                let slice = all.get(offset.min(end)..end).unwrap_or_default();
                let next = (end < all.len()).then(|| encode_cursor(end));
                wire_shape::list_result(v, slice, next)
            }
            McpMethod::GetTask => {
                let record = tasks.owned(task_id(params)?, owner).await?;
                wire_shape::get_result(v, self.info(), &record)
            }
            McpMethod::GetTaskPayload => {
                let record = tasks.wait_terminal(task_id(params)?, owner, stop).await?;
                wire_shape::payload_result(v, &record)
            }
            McpMethod::CancelTask => {
                let id = task_id(params)?;
                let record = tasks.owned(id, owner).await?;
                if record.status.is_terminal() {
                    return Err(RpcError::invalid_params(format!(
                        "Cannot cancel task {id}: it is already {}",
                        record.status.as_str()
                    )));
                }
                let after = tasks.cancel(id, self.info()).await.unwrap_or(record);
                if after.status != TaskStatus::Cancelled {
                    // It ended between the check and the cancellation.
                    return Err(RpcError::invalid_params(format!(
                        "Cannot cancel task {id}: it is already {}",
                        after.status.as_str()
                    )));
                }
                wire_shape::cancel_result(v, &after)
            }
            _ => Err(RpcError::method_not_found(method.name())),
        }
    }
}
