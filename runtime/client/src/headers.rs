//! The 2026-07-28 request metadata headers, written by the client: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-{Name}` headers that mirror the tool
//! arguments an input schema marks with `x-mcp-header` (the server side of these rules is
//! `protocol::http_headers`). Values that cannot travel as plain header text go in the
//! `=?base64?…?=` form.

use base64::Engine;
use mcp_runtime::protocol::http_headers::collect_header_params;
use serde_json::Value;

use mcp_runtime::protocol::method::{self, McpMethod};
use mcp_runtime::protocol::version::ProtocolVersion;

/// The headers of a 2026-07-28 request over HTTP.
pub(crate) fn request_headers(
    v: ProtocolVersion,
    method_name: &str,
    params: &Value,
    tool_schema: Option<&Value>,
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("mcp-protocol-version".to_owned(), v.as_str().to_owned()),
        ("mcp-method".to_owned(), method_name.to_owned()),
    ];
    let Some(m) = McpMethod::from_name(method_name) else {
        return headers;
    };
    if let Some(target) = method::target(m, Some(params)).and_then(Value::as_str) {
        headers.push(("mcp-name".to_owned(), encode(target)));
    }
    if let (McpMethod::CallTool, Some(schema)) = (m, tool_schema) {
        let arguments = params.get("arguments").unwrap_or(&Value::Null);
        headers.extend(param_headers(schema, arguments));
    }
    headers
}

/// A header value: as is when it is plain, visible ASCII (inner spaces allowed), else
/// Base64 in the sentinel form (also for a plain value that looks like the sentinel).
pub(crate) fn encode(value: &str) -> String {
    let visible = value
        .bytes()
        .all(|b| b == b' ' || (0x21..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = visible && !padded && !sentinel;
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

/// The `Mcp-Param-{Name}` headers for a call's arguments: one per annotated property that
/// has a value (absent and `null` send nothing).
fn param_headers(schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    let mut annotated = Vec::new();
    collect_header_params(schema, &mut Vec::new(), &mut annotated);
    let mut headers = Vec::new();
    for (path, name) in annotated {
        let mut value = arguments;
        for key in &path {
            value = value.get(key).unwrap_or(&Value::Null);
        }
        let text = match value {
            Value::String(s) => encode(s),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
            Value::Number(n) => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => (f as i64).to_string(),
                _ => n.to_string(),
            },
            _ => continue,
        };
        headers.push((format!("mcp-param-{}", name.to_ascii_lowercase()), text));
    }
    headers
}

/// Why a tool's `x-mcp-header` annotations are invalid, if they are (the client must then
/// leave the tool out of its list): an empty or non-token name, a name used twice
/// (case-insensitively), an annotation on a property that is not a string, integer or
/// boolean, or one that is not reachable from the root through `properties` alone.
pub(crate) fn invalid_annotation(schema: &Value) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    check(schema, true, &mut names).err()
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn check(schema: &Value, reachable: bool, names: &mut Vec<String>) -> Result<(), String> {
    match schema {
        Value::Object(map) => {
            if let Some(annotation) = map.get("x-mcp-header") {
                if !reachable {
                    return Err(
                        "x-mcp-header on a property not reachable through `properties` alone"
                            .into(),
                    );
                }
                let name = annotation.as_str().ok_or("x-mcp-header must be a string")?;
                if name.is_empty() {
                    return Err("x-mcp-header must not be empty".into());
                }
                if !name.chars().all(is_tchar) {
                    return Err(format!(
                        "x-mcp-header `{name}` is not an HTTP field-name token"
                    ));
                }
                let lower = name.to_ascii_lowercase();
                if names.contains(&lower) {
                    return Err(format!("x-mcp-header `{name}` is used twice"));
                }
                names.push(lower);
                match map.get("type").and_then(Value::as_str) {
                    Some("string" | "integer" | "boolean") => {}
                    other => {
                        return Err(format!(
                            "x-mcp-header `{name}` is on a property of type {}",
                            other.unwrap_or("(none)")
                        ))
                    }
                }
            }
            for (key, value) in map {
                if key == "properties" {
                    if let Value::Object(props) = value {
                        for prop in props.values() {
                            check(prop, reachable, names)?;
                        }
                    }
                } else {
                    check(value, false, names)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|v| check(v, false, names)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_plain_or_base64_as_the_spec_says() {
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("a b"), "a b");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(encode("\tx"), "=?base64?CXg=?=");
        assert_eq!(encode(""), "");
    }

    #[test]
    fn annotated_arguments_become_headers() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "v": {"type": "boolean", "x-mcp-header": "Verbose"},
            "q": {"type": "string"}
        }});
        let h = param_headers(
            &schema,
            &json!({"region": "eu", "n": 42, "v": null, "q": "x"}),
        );
        assert_eq!(
            h,
            vec![
                ("mcp-param-region".to_owned(), "eu".to_owned()),
                ("mcp-param-n".to_owned(), "42".to_owned())
            ]
        );
    }

    #[test]
    fn invalid_annotations_are_found() {
        let ok = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}});
        assert_eq!(invalid_annotation(&ok), None);
        for bad in [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A:B"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}}}),
            json!({"oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "X"}}}]}),
        ] {
            assert!(invalid_annotation(&bad).is_some(), "{bad}");
        }
    }
}
