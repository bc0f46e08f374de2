//! The requested schema of a typed elicitation, derived from the Rust type with schemars
//! and held to what elicitation can express: a flat object whose properties are strings
//! (optionally an enum, titled or not), numbers, integers, booleans, or (2025-11-25+)
//! arrays of enum values. Anything else is refused before anything is sent, naming the
//! field.

use serde_json::{Map, Value};

use crate::protocol::asks::{AskError, AskErrorKind};
use crate::wire::RpcError;

/// The requested schema [`Context::elicit::<T>`](crate::Context::elicit) sends for `T`,
/// or the error it would fail with. Whether elicitation can express `T` is known without
/// a client: call this in a test (or at start-up) to find out before a user does.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Contact {
///     name: String,
///     age: Option<u8>,
/// }
/// let schema = mcp_runtime::elicitation_schema::<Contact>().expect("expressible");
/// assert_eq!(schema["required"], serde_json::json!(["name"]));
/// ```
pub fn elicitation_schema<T: schemars::JsonSchema>() -> Result<Value, AskError> {
    let root = serde_json::to_value(schemars::schema_for!(T))
        .map_err(|e| unsupported(format!("the schema of the type does not serialize: {e}")))?;
    flatten(&root)
}

fn unsupported(message: String) -> AskError {
    AskError::new(
        AskErrorKind::Unsupported,
        RpcError::internal(format!("cannot elicit this type: {message}")),
    )
}

fn flatten(root: &Value) -> Result<Value, AskError> {
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(unsupported(
            "an elicitation asks for an object (a struct)".into(),
        ));
    }
    let defs = root.get("$defs").and_then(Value::as_object);
    let mut properties = Map::new();
    if let Some(Value::Object(props)) = root.get("properties") {
        for (name, schema) in props {
            properties.insert(name.clone(), field(name, schema, defs)?);
        }
    }
    let mut out = Map::new();
    out.insert("type".into(), Value::from("object"));
    out.insert("properties".into(), Value::Object(properties));
    if let Some(required) = root.get("required") {
        out.insert("required".into(), required.clone());
    }
    Ok(Value::Object(out))
}

/// One property, inlined (`$ref` into `$defs`, as schemars writes enums) and checked.
fn field(name: &str, schema: &Value, defs: Option<&Map<String, Value>>) -> Result<Value, AskError> {
    let mut schema = resolve(schema, defs);
    let Value::Object(obj) = &mut schema else {
        return Err(unsupported(format!("field `{name}` has no schema")));
    };
    // `Option<T>` is `"type": [T, "null"]`: optional is expressed by `required` instead.
    if let Some(Value::Array(types)) = obj.get("type") {
        let kept: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        if let [one] = kept.as_slice() {
            let one = (*one).clone();
            obj.insert("type".into(), one);
        }
    }
    // A field-level `anyOf: [{$ref}, {type: null}]` (an optional enum).
    if let Some(Value::Array(any)) = obj.get("anyOf").cloned() {
        let kept: Vec<Value> = any
            .iter()
            .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
            .map(|s| resolve(s, defs))
            .collect();
        if let [one] = kept.as_slice() {
            obj.remove("anyOf");
            if let Value::Object(inner) = one {
                for (k, v) in inner {
                    obj.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    // A Rust enum of unit variants with docs: `oneOf` of `{const, description}` — the
    // titled form elicitation has uses `title`.
    if let Some(Value::Array(options)) = obj.get_mut("oneOf") {
        for o in options.iter_mut() {
            if let Value::Object(o) = o {
                if let Some(d) = o.remove("description") {
                    o.entry("title").or_insert(d);
                }
                o.remove("type");
            }
        }
        obj.entry("type").or_insert(Value::from("string"));
    }
    let kind = obj
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let kind = kind.as_str();
    let ok = match kind {
        "string" | "number" | "integer" | "boolean" => true,
        "array" => obj.get("items").is_some_and(|items| {
            let items = resolve(items, defs);
            items.get("enum").is_some()
                || items.get("anyOf").is_some()
                || items.get("oneOf").is_some()
        }),
        _ => false,
    };
    if !ok {
        return Err(unsupported(format!(
            "field `{name}` is not a string, number, integer, boolean or list of choices"
        )));
    }
    if kind == "array" {
        if let Some(items) = obj.get("items").map(|i| resolve(i, defs)) {
            obj.insert("items".into(), items);
        }
    }
    // schemars writes `format: uint32` and the like; elicitation knows string formats only.
    let string_format = obj
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| kind == "string" && matches!(f, "email" | "uri" | "date" | "date-time"));
    if !string_format {
        obj.remove("format");
    }
    Ok(schema)
}

fn resolve(schema: &Value, defs: Option<&Map<String, Value>>) -> Value {
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs?.get(name));
    match target {
        Some(def) => {
            let mut merged = def.clone();
            if let (Value::Object(m), Value::Object(s)) = (&mut merged, schema) {
                for (k, v) in s {
                    if k != "$ref" {
                        m.insert(k.clone(), v.clone());
                    }
                }
            }
            merged
        }
        None => schema.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    enum Colour {
        /// Red as a rose
        Red,
        /// Blue as the sea
        Blue,
    }

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    enum Size {
        Small,
        Large,
    }

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    struct Form {
        /// Your name
        name: String,
        age: Option<u32>,
        subscribe: bool,
        colour: Colour,
        size: Option<Size>,
        ratio: f64,
    }

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    struct Nested {
        address: Address,
    }

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    struct Address {
        street: String,
    }

    #[test]
    fn a_flat_struct_becomes_a_flat_requested_schema() {
        let schema = elicitation_schema::<Form>().expect("expressible");
        let props = &schema["properties"];
        assert_eq!(schema["type"], "object");
        assert_eq!(
            props["name"],
            json!({"type": "string", "description": "Your name"})
        );
        assert_eq!(props["age"]["type"], "integer");
        assert!(props["age"].get("format").is_none(), "{}", props["age"]);
        assert_eq!(props["subscribe"]["type"], "boolean");
        assert_eq!(props["ratio"]["type"], "number");
        assert_eq!(props["colour"]["type"], "string");
        assert_eq!(
            props["colour"]["oneOf"],
            json!([{"const": "Red", "title": "Red as a rose"}, {"const": "Blue", "title": "Blue as the sea"}])
        );
        assert_eq!(props["size"]["type"], "string");
        assert_eq!(props["size"]["enum"], json!(["Small", "Large"]));
        let required: Vec<&str> = schema["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(required, ["name", "subscribe", "colour", "ratio"]);
        assert!(schema.get("$defs").is_none() && schema.get("$schema").is_none());
    }

    #[test]
    fn what_elicitation_cannot_express_is_refused_naming_the_field() {
        let err = elicitation_schema::<Nested>().expect_err("nested");
        assert_eq!(err.kind(), AskErrorKind::Unsupported);
        assert!(err.to_string().contains("`address`"), "{err}");
        let err = elicitation_schema::<Vec<String>>().expect_err("not an object");
        assert_eq!(err.kind(), AskErrorKind::Unsupported);
    }
}
