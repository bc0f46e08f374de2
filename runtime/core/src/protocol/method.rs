//! Which method a message names, as a type ([`McpMethod`], generated from every
//! revision's method table), whether the revision it is served at lets a client send it,
//! and a request's target (the tool, prompt or resource it is about) — worked out here
//! and nowhere else.

use serde_json::Value;

use crate::protocol::version::ProtocolVersion;
use crate::wire::RpcError;

pub use mcp_generated::McpMethod;

/// The method `name` names, if revision `v` defines it as a request a client sends
/// (by its generated method table); else `-32601`.
pub(crate) fn admit(v: ProtocolVersion, name: &str) -> Result<McpMethod, RpcError> {
    let method = McpMethod::from_name(name).ok_or_else(|| RpcError::method_not_found(name))?;
    match v.method_info(method) {
        Some(info)
            if info.kind == mcp_generated::Kind::Request
                && info.direction != mcp_generated::Direction::ServerToClient =>
        {
            Ok(method)
        }
        _ => Err(RpcError::method_not_found(name)),
    }
}

/// The target of a request, as sent: the `name` of `tools/call` and `prompts/get`, the
/// `uri` of `resources/read`; `None` for other methods or when absent. The 2026-07-28
/// `Mcp-Name` header must repeat it, and a `requestState` is bound to it.
pub fn target(method: McpMethod, params: Option<&Value>) -> Option<&Value> {
    let key = match method {
        McpMethod::CallTool | McpMethod::GetPrompt => "name",
        McpMethod::ReadResource => "uri",
        _ => return None,
    };
    crate::wire::member(params, key)
}

/// The methods of the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`),
/// which that revision's method table does not hold.
pub(crate) const TASKS_EXTENSION_METHODS: [&str; 3] = ["tasks/get", "tasks/update", "tasks/cancel"];

/// The target of an extension request, by its method name: the `taskId` of the tasks
/// extension's methods (SEP-2663 has `Mcp-Name` repeat it, for routing).
pub(crate) fn extension_target<'a>(method: &str, params: Option<&'a Value>) -> Option<&'a Value> {
    if TASKS_EXTENSION_METHODS.contains(&method) {
        crate::wire::member(params, "taskId")
    } else {
        None
    }
}

/// Whether a handler serving `method` may ask the client (and so end `input_required`
/// in 2026-07-28): only calls that run an author's handler; lists never do.
pub(crate) fn may_ask(method: McpMethod) -> bool {
    matches!(
        method,
        McpMethod::CallTool | McpMethod::GetPrompt | McpMethod::ReadResource
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_follows_each_revision_table() {
        for v in ProtocolVersion::ALL {
            assert!(admit(v, "tools/call").is_ok());
            // Server-to-client requests and notifications are never admitted.
            assert!(admit(v, "sampling/createMessage").is_err());
            assert!(admit(v, "notifications/initialized").is_err());
            assert!(admit(v, "no/such").is_err());
            assert_eq!(
                admit(v, "server/discover").is_ok(),
                v.era() == crate::Era::Modern
            );
        }
    }

    #[test]
    fn the_target_is_the_name_or_the_uri() {
        let p = serde_json::json!({"name": "n", "uri": "u"});
        assert_eq!(
            target(McpMethod::CallTool, Some(&p)),
            Some(&Value::from("n"))
        );
        assert_eq!(
            target(McpMethod::ReadResource, Some(&p)),
            Some(&Value::from("u"))
        );
        assert_eq!(target(McpMethod::ListTools, Some(&p)), None);
    }
}
