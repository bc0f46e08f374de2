//! The client's side of shaping: the params of every request it sends are projected
//! through the revision's generated params type (nothing the revision does not define
//! leaves), and every result it receives is decoded as the revision's result type before
//! the neutral model reads it (a server's answer that is not a valid result of its
//! revision is an error naming what is wrong).
//!
//! What a 2026-07-28 client must assume of a result is filled in before decoding: an
//! absent `resultType` is `"complete"` (the spec: servers of earlier revisions do not
//! send it), and absent cache hints mean "do not cache" (`ttlMs: 0`, `private`).

use mcp_generated::{Method, Request};
use serde_json::{json, Map, Value};

use crate::error::ClientError;
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::shape::{by_revision, project};
use mcp_runtime::protocol::version::ProtocolVersion;
use mcp_runtime::wire::RpcError;

fn invalid(e: RpcError) -> ClientError {
    ClientError::invalid(e.message)
}

fn not_in(v: ProtocolVersion, method: McpMethod) -> ClientError {
    ClientError::unsupported(format!("`{}` is not part of MCP {v}", method.name()))
}

/// `$value` projected through the type `<marker as $tr>::$assoc` of `$method`'s marker in
/// revision `$v`: methods every revision defines, then methods that only the revisions with
/// a feature flag define (elsewhere: "not part of MCP v"). Any other method returns
/// `$value` as it is.
macro_rules! project_by_method {
    ($v:ident, $method:ident, $value:ident, $tr:ident :: $assoc:ident, $what:literal,
     every: [$($every:ident),* $(,)?], only: [$($flag:ident $only:ident),* $(,)?]) => {
        match $method {
            $(McpMethod::$every => by_revision!($v, |m| project::<<m::methods::$every as $tr>::$assoc>(
                concat!($what, stringify!($every)),
                $value
            )),)*
            $(McpMethod::$only => by_revision!($v, where $flag, |m| project::<<m::methods::$only as $tr>::$assoc>(
                concat!($what, stringify!($only)),
                $value
            ), else return Err(not_in($v, $method))),)*
            _ => return Ok($value),
        }
    };
}

/// The params of a request the client sends, projected through revision `v`'s type.
pub(crate) fn params(
    v: ProtocolVersion,
    method: McpMethod,
    params: Value,
) -> Result<Value, ClientError> {
    // Every revision lets a request's params carry `_meta` (its base `Request` type does),
    // but some params types do not name it: it is put back after projection.
    let meta = params.get("_meta").cloned();
    let projected = project_by_method!(v, method, params, Method::Params, "the params of ",
        every: [ListTools, CallTool, ListResources, ListResourceTemplates, ReadResource,
            ListPrompts, GetPrompt, Complete],
        only: [legacy Initialize, legacy Ping, legacy SetLevel, legacy Subscribe,
            legacy Unsubscribe, modern Discover, modern SubscriptionsListen]);
    let mut projected =
        projected.map_err(|e| ClientError::new(super::ClientErrorKind::Unsupported, e.message))?;
    if let (Some(meta), Value::Object(p)) = (meta, &mut projected) {
        p.entry("_meta").or_insert(meta);
    }
    Ok(projected)
}

/// The params of a notification the client sends, projected through revision `v`'s type.
pub(crate) fn notification_params(
    v: ProtocolVersion,
    method: McpMethod,
    params: Value,
) -> Result<Value, ClientError> {
    let projected = match method {
        McpMethod::Cancelled => by_revision!(v, |m| project::<m::CancelledNotificationParams>(
            "a cancellation",
            params
        )),
        McpMethod::Initialized => by_revision!(v, where legacy, |m| project::<
            <m::methods::Initialized as Method>::Params,
        >("the initialized notification", params), else return Err(not_in(v, method))),
        McpMethod::RootsListChanged => by_revision!(v, where legacy, |m| project::<
            <m::methods::RootsListChanged as Method>::Params,
        >("a roots change", params), else return Err(not_in(v, method))),
        _ => return Ok(params),
    };
    projected.map_err(invalid)
}

/// What a 2026-07-28 client assumes of a result its server left out.
fn fill_modern_defaults(v: ProtocolVersion, method: McpMethod, value: &mut Value) {
    let f = v.features();
    let Value::Object(result) = value else {
        return;
    };
    if f.result_type && !result.contains_key("resultType") {
        result.insert("resultType".into(), json!("complete"));
    }
    let cacheable = matches!(
        method,
        McpMethod::Discover
            | McpMethod::ListTools
            | McpMethod::ListPrompts
            | McpMethod::ListResources
            | McpMethod::ListResourceTemplates
            | McpMethod::ReadResource
    );
    if f.cache_hints && cacheable {
        result.entry("ttlMs").or_insert(json!(0));
        result.entry("cacheScope").or_insert(json!("private"));
    }
}

/// Whether a result asks for input (2026-07-28 `resultType: "input_required"`).
pub(crate) fn is_input_required(v: ProtocolVersion, value: &Value) -> bool {
    v.features().result_type && value.get("resultType") == Some(&json!("input_required"))
}

/// An `InputRequiredResult`, decoded: the requests by key and the state to echo.
pub(crate) fn input_required(
    v: ProtocolVersion,
    value: Value,
) -> Result<(Map<String, Value>, Option<String>), ClientError> {
    let projected = by_revision!(v, where modern, |m| project::<m::InputRequiredResult>(
        "an input-required result",
        value
    ), else return Err(ClientError::invalid(format!("input_required does not exist in MCP {v}"))))
    .map_err(invalid)?;
    let requests = projected
        .get("inputRequests")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let state = projected
        .get("requestState")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((requests, state))
}

/// A result of `method`, decoded as revision `v`'s result type.
pub(crate) fn result(
    v: ProtocolVersion,
    method: McpMethod,
    mut value: Value,
) -> Result<Value, ClientError> {
    fill_modern_defaults(v, method, &mut value);
    // Empty results (ping, setLevel, subscribe…) and raw requests: nothing to decode.
    let projected = project_by_method!(v, method, value, Request::Result, "the result of ",
        every: [ListTools, CallTool, ListResources, ListResourceTemplates, ReadResource,
            ListPrompts, GetPrompt, Complete],
        only: [legacy Initialize, modern Discover, modern SubscriptionsListen]);
    projected.map_err(|e| {
        ClientError::invalid(format!(
            "the server's answer to {} is not valid in MCP {v}: {}",
            method.name(),
            e.message
        ))
    })
}

/// The client's capabilities for revision `v`, from the neutral declaration.
pub(crate) fn client_capabilities(v: ProtocolVersion, neutral: &Value) -> Value {
    by_revision!(v, |m| project::<m::ClientCapabilities>(
        "the client capabilities",
        neutral.clone()
    ))
    .unwrap_or_else(|_| json!({}))
}

/// The client's identity for revision `v`.
pub(crate) fn implementation(
    v: ProtocolVersion,
    info: &mcp_runtime::model::Implementation,
) -> Value {
    let neutral = serde_json::to_value(info).unwrap_or_else(|_| json!({}));
    by_revision!(v, |m| project::<m::Implementation>(
        "the client info",
        neutral.clone()
    ))
    .unwrap_or(neutral)
}
