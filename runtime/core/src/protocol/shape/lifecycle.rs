//! The lifecycle's results and the parts they share: the server's capabilities and
//! identity for a revision, `initialize` (legacy revisions) and `server/discover`
//! (modern revisions), each projected through the revision's generated types.

use serde_json::{json, Map, Value};

use super::{
    by_revision, neutral, object, project, project_open, project_stamped, stamp, CacheHint,
};
use crate::model::Implementation;
use crate::protocol::version::ProtocolVersion;
use crate::wire::{Encoded, RpcError};

/// The server's capabilities for revision `v`, from the neutral declaration.
///
/// Extensions are declared under `extensions`; a revision whose capabilities have no
/// `extensions` (before 2026-07-28) gets them under `experimental`, the only open place
/// it has (MCP Apps hosts of those revisions look there or in `extensions`, which the
/// revision's schema does not allow a server to send). The tasks extension is left out
/// of that: 2025-11-25 declares tasks as `capabilities.tasks`, and the revisions before
/// it have none.
pub fn server_capabilities(v: ProtocolVersion, neutral_caps: &Value) -> Result<Value, RpcError> {
    let mut caps = by_revision!(v, |m| project::<m::ServerCapabilities>(
        "the server capabilities",
        neutral_caps.clone()
    ))?;
    let declared = neutral_caps.get("extensions").and_then(Value::as_object);
    if let (Some(declared), Value::Object(projected)) = (declared, &mut caps) {
        if !projected.contains_key("extensions") {
            let experimental: Map<String, Value> = declared
                .iter()
                .filter(|(id, _)| id.as_str() != TASKS_EXTENSION_ID)
                .map(|(id, settings)| (id.clone(), settings.clone()))
                .collect();
            if !experimental.is_empty() {
                let slot = projected
                    .entry("experimental")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(slot) = slot {
                    slot.extend(experimental);
                }
            }
        }
    }
    Ok(caps)
}

/// The tasks extension's identifier (the runtime's own, declared per revision as above).
const TASKS_EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// The server's identity for revision `v`.
pub fn implementation(v: ProtocolVersion, server: &Implementation) -> Result<Value, RpcError> {
    by_revision!(v, |m| project::<m::Implementation>(
        "the server info",
        neutral(server)
    ))
}

/// The result of `initialize` (legacy revisions only).
pub fn initialize(
    v: ProtocolVersion,
    server: &Implementation,
    neutral_caps: &Value,
    instructions: Option<&str>,
) -> Result<Encoded, RpcError> {
    let mut result = object(json!({
        "protocolVersion": v.as_str(),
        "capabilities": server_capabilities(v, neutral_caps)?,
        "serverInfo": implementation(v, server)?,
    }));
    if let Some(i) = instructions {
        result.insert("instructions".into(), json!(i));
    }
    by_revision!(v, where legacy, |m| project_open::<m::InitializeResult>(
        "initialize",
        Value::Object(result)
    ), else Err(RpcError::method_not_found("initialize")))
}

/// The result of `server/discover` (modern revisions only).
pub fn discover(
    v: ProtocolVersion,
    server: &Implementation,
    neutral_caps: &Value,
    supported: &[&str],
    instructions: Option<&str>,
) -> Result<Encoded, RpcError> {
    let mut result = object(json!({
        "supportedVersions": supported,
        "capabilities": server_capabilities(v, neutral_caps)?,
    }));
    if let Some(i) = instructions {
        result.insert("instructions".into(), json!(i));
    }
    let left = stamp(v, &mut result, server, Some(CacheHint::NONE));
    by_revision!(v, where modern, |m| project_stamped::<m::DiscoverResult>(
        "the discover result",
        Value::Object(result),
        left,
        0
    ), else Err(RpcError::method_not_found("server/discover")))
}
