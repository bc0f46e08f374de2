//! The lifecycle's results and the parts they share: the server's capabilities and
//! identity for a revision, `initialize` (legacy revisions) and `server/discover`
//! (modern revisions), each projected through the revision's generated types.

use serde_json::{json, Value};

use super::{
    by_revision, neutral, object, project, project_open, project_stamped, stamp, CacheHint,
};
use crate::model::Implementation;
use crate::protocol::version::ProtocolVersion;
use crate::wire::{Encoded, RpcError};

/// The server's capabilities for revision `v`, from the neutral declaration.
pub fn server_capabilities(v: ProtocolVersion, neutral_caps: &Value) -> Result<Value, RpcError> {
    by_revision!(v, |m| project::<m::ServerCapabilities>(
        "the server capabilities",
        neutral_caps.clone()
    ))
}

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
