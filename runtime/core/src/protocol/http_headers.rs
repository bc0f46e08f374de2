//! The 2026-07-28 HTTP header rules, shared by the server (which checks them) and a
//! client (which writes them): `MCP-Protocol-Version` must equal the body's revision,
//! `Mcp-Method` its method, `Mcp-Name` its target, and every argument a tool's input
//! schema mirrors with `x-mcp-header` must arrive as `Mcp-Param-{Name}`; values are
//! literal or in the `=?base64?…?=` form. Nothing here knows an HTTP library: headers are
//! read through [`HeaderLookup`].

use serde_json::Value;

use crate::protocol::method::{self, McpMethod};
use crate::protocol::version::{self, VersionSet};
use crate::wire::{ErrorCode, RpcError};

/// Reads request headers: the value of the header `name` (lower case), trimmed, if it
/// is present and valid text.
pub trait HeaderLookup {
    /// The header's value.
    fn header(&self, name: &str) -> Option<&str>;
}

/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Session-Id` (legacy Streamable HTTP sessions).
pub const SESSION_ID: &str = "mcp-session-id";
/// `Mcp-Method`.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub const NAME: &str = "mcp-name";

/// Checks a stateless request's headers against its body, in the order the spec gives
/// (version present, params readable, version equal, version served, method, name):
/// the error to answer, with HTTP 400, or `Ok` when it may be served. The tool
/// parameter headers are checked apart ([`check_param_headers`]): they need the tool.
pub fn check_request_headers(
    headers: &impl HeaderLookup,
    method: &str,
    params: Option<&Value>,
    meta: Option<&Value>,
    served: VersionSet,
) -> Result<(), RpcError> {
    let mismatch = |message: String| RpcError::new(ErrorCode::HEADER_MISMATCH, message);
    let Some(header_version) = headers.header(PROTOCOL_VERSION) else {
        return Err(mismatch(
            "Header mismatch: MCP-Protocol-Version header is required".into(),
        ));
    };
    let meta_version = meta
        .and_then(|m| m.get(version::META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let any_revision = version::negotiate_modern_meta(meta, VersionSet::ALL);
    if let Err(e) = &any_revision {
        if e.code == ErrorCode::INVALID_PARAMS {
            return Err(e.clone());
        }
    }
    if meta_version != Some(header_version) {
        return Err(mismatch("Header mismatch: MCP-Protocol-Version header does not match params._meta protocol version".into()));
    }
    if !any_revision.is_ok_and(|meta| served.contains(meta.version)) {
        version::negotiate_modern_meta(meta, served)?;
    }
    match headers.header(METHOD) {
        Some(m) if m == method => {}
        Some(m) => {
            return Err(mismatch(format!(
            "Header mismatch: Mcp-Method header value '{m}' does not match body value '{method}'"
        )))
        }
        None => {
            return Err(mismatch(
                "Header mismatch: Mcp-Method header is required".into(),
            ))
        }
    }
    let target = McpMethod::from_name(method)
        .and_then(|m| method::target(m, params))
        .or_else(|| method::extension_target(method, params));
    if let Some(expected) = target.and_then(Value::as_str) {
        match headers.header(NAME).map(decode_header_value) {
            Some(Some(v)) if v == expected => {}
            Some(Some(v)) => return Err(mismatch(format!("Header mismatch: Mcp-Name header value '{v}' does not match body value '{expected}'"))),
            Some(None) => return Err(mismatch("Header mismatch: Mcp-Name header is not valid base64".into())),
            None => return Err(mismatch("Header mismatch: Mcp-Name header is required".into())),
        }
    }
    Ok(())
}

/// `x-mcp-header` (2026-07-28): every tool parameter its input schema mirrors into an
/// `Mcp-Param-{Name}` header must arrive with a header whose (decoded) value equals the
/// argument; an argument that is absent or null needs no header.
pub fn check_param_headers(
    schema: &Value,
    arguments: &Value,
    headers: &impl HeaderLookup,
) -> Result<(), String> {
    // Most tools mirror nothing: known without building a path for every property.
    if !mirrors_any_header(schema) {
        return Ok(());
    }
    let mut annotated = Vec::new();
    collect_header_params(schema, &mut Vec::new(), &mut annotated);
    for (path, name) in annotated {
        let mut value = arguments;
        for key in &path {
            value = value.get(key).unwrap_or(&Value::Null);
        }
        if value.is_null() {
            continue;
        }
        let header_name = format!("mcp-param-{name}");
        let Some(raw) = headers.header(header_name.as_str()) else {
            return Err(format!(
                "Header mismatch: Mcp-Param-{name} header is required"
            ));
        };
        let decoded = decode_header_value(raw).ok_or_else(|| {
            format!("Header mismatch: Mcp-Param-{name} header is not valid base64")
        })?;
        let matches = match value {
            Value::String(s) => *s == decoded,
            Value::Bool(b) => decoded == b.to_string(),
            Value::Number(n) => decoded
                .parse::<f64>()
                .ok()
                .zip(n.as_f64())
                .is_some_and(|(a, b)| a == b),
            _ => false,
        };
        if !matches {
            return Err(format!("Header mismatch: Mcp-Param-{name} header value '{decoded}' does not match the argument"));
        }
    }
    Ok(())
}

/// Annotated properties reachable from the root through `properties` only: each one's
/// path of property names and its header name.
pub fn collect_header_params(
    schema: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (key, sub) in props {
        path.push(key.clone());
        if let Some(name) = sub.get("x-mcp-header").and_then(Value::as_str) {
            out.push((path.clone(), name.to_owned()));
        }
        collect_header_params(sub, path, out);
        path.pop();
    }
}

/// Whether [`collect_header_params`] would find an annotated property.
fn mirrors_any_header(schema: &Value) -> bool {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return false;
    };
    props
        .values()
        .any(|sub| sub.get("x-mcp-header").is_some_and(Value::is_string) || mirrors_any_header(sub))
}

/// A header value, literal or in the `=?base64?…?=` sentinel form.
pub(crate) fn decode_header_value(raw: &str) -> Option<String> {
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = crate::primitives::base64::decode_standard(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(raw.to_owned()),
    }
}
