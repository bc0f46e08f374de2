//! A compact, comparable summary of a revision (types, fields, methods, capabilities):
//! what the API digest prints and what `diff` compares.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::ir::{Ir, Kind};
use crate::prepass::{ref_target, Prepared};
use crate::render::types::rust_name;

/// One field of an object type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// A short rendering of the field's schema (`string`, `Tool[]`, `"text"`, `A | B`).
    pub ty: String,
    /// Whether the field is required.
    pub required: bool,
}

/// The shape of one named type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// An object with named fields.
    Object(BTreeMap<String, Field>),
    /// A union of other types.
    Union(Vec<String>),
    /// Anything else (string enums, aliases, primitives), rendered.
    Other(String),
}

/// A method's signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// `request` or `notification`, and who sends it.
    pub kind: String,
    /// Params type.
    pub params: String,
    /// Result type (requests).
    pub result: String,
}

/// The summary of a revision.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The revision id.
    pub revision: String,
    /// Schema name → shape, for every definition (published and hoisted).
    pub types: BTreeMap<String, Shape>,
    /// Method → signature.
    pub methods: BTreeMap<String, Signature>,
    /// `client.<path>` / `server.<path>` → type, for every capability.
    pub capabilities: BTreeMap<String, String>,
}

/// Summarises a prepared revision and its IR.
pub fn summarize(prepared: &Prepared, ir: &Ir) -> Summary {
    let types = prepared
        .defs
        .iter()
        .map(|(name, def)| (name.clone(), shape(def)))
        .collect();
    let methods = ir
        .methods
        .iter()
        .map(|m| {
            let kind = match m.kind {
                Kind::Request => "request",
                Kind::Notification => "notification",
            };
            (
                m.name.clone(),
                Signature {
                    kind: format!("{kind}, {}", m.direction.as_str()),
                    params: match (&m.params, m.params_required) {
                        (Some(p), true) => p.clone(),
                        (Some(p), false) => format!("{p}?"),
                        (None, _) => "-".into(),
                    },
                    result: m.result.clone().unwrap_or_else(|| "-".into()),
                },
            )
        })
        .collect();
    let mut capabilities = BTreeMap::new();
    for (side, def) in [
        ("client", "ClientCapabilities"),
        ("server", "ServerCapabilities"),
    ] {
        if let Some(def) = prepared.defs.get(def) {
            collect_capabilities(&prepared.defs, def, side, 0, &mut capabilities);
        }
    }
    Summary {
        revision: prepared.revision.clone(),
        types,
        methods,
        capabilities,
    }
}

fn collect_capabilities(
    defs: &crate::prepass::Definitions,
    schema: &Value,
    path: &str,
    depth: usize,
    out: &mut BTreeMap<String, String>,
) {
    let schema = ref_target(schema)
        .and_then(|t| defs.get(t))
        .unwrap_or(schema);
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (name, sub) in props {
        let key = format!("{path}.{name}");
        out.insert(key.clone(), render_schema(sub));
        if depth < 2 {
            collect_capabilities(defs, sub, &key, depth + 1, out);
        }
    }
}

fn shape(def: &Value) -> Shape {
    if let Some(Value::Array(members)) = def.get("oneOf").or_else(|| def.get("anyOf")) {
        return Shape::Union(members.iter().map(render_schema).collect());
    }
    if let Some(Value::Object(props)) = def.get("properties") {
        let required: Vec<&str> = def
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        return Shape::Object(
            props
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        Field {
                            ty: render_schema(v),
                            required: required.contains(&k.as_str()),
                        },
                    )
                })
                .collect(),
        );
    }
    Shape::Other(render_schema(def))
}

/// A one-line rendering of a schema.
pub fn render_schema(s: &Value) -> String {
    if let Some(t) = ref_target(s) {
        return t.to_owned();
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        return values
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(Value::Array(members)) = s.get("oneOf").or_else(|| s.get("anyOf")) {
        return members
            .iter()
            .map(render_schema)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match s.get("type") {
        Some(Value::String(t)) if t == "array" => match s.get("items") {
            Some(items) => {
                let inner = render_schema(items);
                if inner.contains(" | ") {
                    format!("({inner})[]")
                } else {
                    format!("{inner}[]")
                }
            }
            None => "array".into(),
        },
        Some(Value::String(t)) if t == "object" || s.get("properties").is_some() => {
            match (s.get("properties"), s.get("additionalProperties")) {
                (Some(Value::Object(p)), _) if !p.is_empty() => {
                    let keys: Vec<&str> = p.keys().map(String::as_str).collect();
                    format!("{{{}}}", keys.join(", "))
                }
                (_, Some(Value::Object(a))) if !a.is_empty() => {
                    format!("{{[key]: {}}}", render_schema(&Value::Object(a.clone())))
                }
                _ => "object".into(),
            }
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if s.get("properties").is_some() => "object".into(),
        _ => "any".into(),
    }
}

/// The per-revision API digest reviewed in `snapshots/digest/`: the method table, then
/// every type (schema name, and the Rust name where they differ).
pub fn digest(prepared: &Prepared, ir: &Ir, replaced: &[(&str, &str)]) -> String {
    let mut out = format!("# MCP {} API digest\n\n## Methods\n\n", prepared.revision);
    out.push_str(
        "| method | kind | direction | marker | params | result |\n|---|---|---|---|---|---|\n",
    );
    for m in &ir.methods {
        let kind = match m.kind {
            Kind::Request => "request",
            Kind::Notification => "notification",
        };
        let params = match (&m.params, m.params_required) {
            (Some(p), true) => p.clone(),
            (Some(p), false) => format!("{p}?"),
            (None, _) => "-".into(),
        };
        out.push_str(&format!(
            "| `{}` | {kind} | {} | `{}` | {params} | {} |\n",
            m.name,
            m.direction.as_str(),
            crate::render::methods::marker_name(m),
            m.result.as_deref().unwrap_or("-"),
        ));
    }
    out.push_str("\n## Unions\n\n");
    for (name, dispatch) in &ir.unions {
        let how = match dispatch {
            crate::ir::Dispatch::Tag {
                key,
                cases,
                default,
            } => format!(
                "by `{key}`: {}{}",
                cases
                    .iter()
                    .map(|(t, m)| format!("{t}→{m}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                default
                    .as_ref()
                    .map(|d| format!(", otherwise→{d}"))
                    .unwrap_or_default()
            ),
            crate::ir::Dispatch::BestMatch { members } => format!(
                "by shape: {}",
                members
                    .iter()
                    .map(|m| format!("{}[{}]", m.name, m.required.join(",")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            crate::ir::Dispatch::Untagged => "untagged (members in order)".into(),
        };
        out.push_str(&format!("- `{name}` {how}\n"));
    }
    out.push_str(&format!("\n## Types ({})\n\n", prepared.defs.len()));
    for name in prepared.defs.keys() {
        let rust = rust_name(name);
        let mut line = format!("- `{name}`");
        if let Some((_, ty)) = replaced.iter().find(|(n, _)| *n == rust) {
            line.push_str(&format!(" → `{ty}` (arbitrary JSON: not a generated type)"));
        } else if rust != *name {
            line.push_str(&format!(" → `{rust}`"));
        }
        if prepared.hoisted.contains(name) {
            line.push_str(" (named by the generator)");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
