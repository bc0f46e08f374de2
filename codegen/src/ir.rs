//! The intermediate representation between schema and code: the method table (derived
//! from the schema's own `ClientRequest`/`ServerRequest`/`ClientNotification`/
//! `ServerNotification` unions) and how each union is told apart on deserialize.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::prepass::{ref_target, resolve_alias, Definitions, Prepared};

/// Who sends a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// Sent by the client to the server.
    ClientToServer,
    /// Sent by the server to the client.
    ServerToClient,
    /// Sent by either side (`ping`, `notifications/cancelled`, `notifications/progress`).
    Both,
}

impl Direction {
    /// The name used in digests and in generated code.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client→server",
            Direction::ServerToClient => "server→client",
            Direction::Both => "both",
        }
    }
}

/// Whether a method is a request (answered) or a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Expects a response.
    Request,
    /// Never answered.
    Notification,
}

/// One row of the method table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    /// The wire method name, e.g. `tools/call`.
    pub name: String,
    /// Request or notification.
    pub kind: Kind,
    /// Who sends it.
    pub direction: Direction,
    /// The schema definition of the whole message, e.g. `CallToolRequest`.
    pub message: String,
    /// The schema definition of `params`, if the message has params.
    pub params: Option<String>,
    /// Whether `params` is required.
    pub params_required: bool,
    /// The schema definition of the result (requests only).
    pub result: Option<String>,
}

/// How a union's members are told apart on deserialize.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// By the string value of one property (`method`, `type`, …); `default` takes any
    /// other value (used for `resultType`, whose non-`input_required` value is open).
    Tag {
        /// The discriminating property.
        key: String,
        /// Tag value → member definition.
        cases: Vec<(String, String)>,
        /// Member for any other value, if the union has one.
        default: Option<String>,
    },
    /// By shape: among members whose required keys are present and whose `const`
    /// properties match, the one that declares the most of the value's keys (ties: the
    /// one declaring fewer keys, then schema order). Used for the JSON-RPC envelope
    /// (a request has `id` and `method`, a notification only `method`), results and the
    /// elicitation schema unions, where no single property tells members apart.
    BestMatch {
        /// Members in schema order.
        members: Vec<MemberShape>,
    },
    /// No exact rule: members are tried in order (catch-alls last), serde's `untagged`.
    Untagged,
}

/// What `BestMatch` dispatch knows of one member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberShape {
    /// The member definition.
    pub name: String,
    /// Its required keys.
    pub required: Vec<String>,
    /// Every key it declares.
    pub declared: Vec<String>,
    /// Properties restricted to a set of strings (`const`/`enum`), and that set.
    pub consts: Vec<(String, Vec<String>)>,
}

/// The IR of one revision.
#[derive(Clone, Debug)]
pub struct Ir {
    /// The revision id.
    pub revision: String,
    /// Every method, sorted by name.
    pub methods: Vec<Method>,
    /// Union definitions → how to dispatch them.
    pub unions: BTreeMap<String, Dispatch>,
}

const REQUEST_UNIONS: [(&str, Kind, Direction); 4] = [
    ("ClientRequest", Kind::Request, Direction::ClientToServer),
    ("ServerRequest", Kind::Request, Direction::ServerToClient),
    (
        "ClientNotification",
        Kind::Notification,
        Direction::ClientToServer,
    ),
    (
        "ServerNotification",
        Kind::Notification,
        Direction::ServerToClient,
    ),
];

/// Builds the IR from a prepared schema.
pub fn build(prepared: &Prepared) -> Ir {
    let defs = &prepared.defs;
    let mut methods: BTreeMap<String, Method> = BTreeMap::new();
    for (union, kind, direction) in REQUEST_UNIONS {
        for member in union_members(defs, union) {
            let Some(def) = defs.get(&member) else {
                continue;
            };
            let Some(name) = single_enum_value(def.pointer("/properties/method")) else {
                continue;
            };
            let params = def
                .pointer("/properties/params")
                .and_then(ref_target)
                .map(str::to_owned);
            let params_required = is_required(def, "params");
            let result = (kind == Kind::Request).then(|| result_type(defs, &member));
            methods
                .entry(name.clone())
                .and_modify(|m| {
                    if m.direction != direction {
                        m.direction = Direction::Both;
                    }
                })
                .or_insert(Method {
                    name,
                    kind,
                    direction,
                    message: member.clone(),
                    params,
                    params_required,
                    result,
                });
        }
    }
    let unions = defs
        .iter()
        .filter(|(_, def)| def.get("oneOf").is_some())
        .map(|(name, def)| (name.clone(), dispatch(defs, def)))
        .collect();
    Ir {
        revision: prepared.revision.clone(),
        methods: methods.into_values().collect(),
        unions,
    }
}

/// Member definition names of a union definition (`anyOf`/`oneOf` of refs).
pub fn union_members(defs: &Definitions, union: &str) -> Vec<String> {
    let Some(def) = defs.get(union) else {
        return Vec::new();
    };
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| def.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(ref_target)
        .map(str::to_owned)
        .collect()
}

fn single_enum_value(schema: Option<&Value>) -> Option<String> {
    let schema = schema?;
    if let Some(Value::String(c)) = schema.get("const") {
        return Some(c.clone());
    }
    match schema.get("enum")?.as_array()?.as_slice() {
        [Value::String(v)] => Some(v.clone()),
        _ => None,
    }
}

/// The allowed values of a string `enum`/`const` property.
fn string_enum(schema: &Value) -> Option<Vec<String>> {
    if let Some(Value::String(c)) = schema.get("const") {
        return Some(vec![c.clone()]);
    }
    schema
        .get("enum")?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn is_required(def: &Value, key: &str) -> bool {
    def.get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|k| k == key))
}

/// The result of a request: the `result` of its `…ResultResponse` definition where the
/// schema has one (2026-07-28), else `…Result`, else the empty result.
fn result_type(defs: &Definitions, message: &str) -> String {
    let stem = message.strip_suffix("Request").unwrap_or(message);
    if let Some(result) = defs
        .get(&format!("{stem}ResultResponse"))
        .and_then(|d| d.pointer("/properties/result"))
        .and_then(ref_target)
    {
        return result.to_owned();
    }
    let named = format!("{stem}Result");
    if defs.contains_key(&named) {
        return named;
    }
    ["EmptyResult", "Result"]
        .iter()
        .find(|n| defs.contains_key(**n))
        .map(|n| (*n).to_owned())
        .unwrap_or_else(|| "Result".to_owned())
}

/// The object members of a union as (variant member, shape definition). A member that is
/// itself a union of objects contributes each of its members' shapes under its own name,
/// so the outer union can still choose by shape (`PrimitiveSchemaDefinition` holds
/// `EnumSchema`, itself a union).
fn object_members(defs: &Definitions, union: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for name in union
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(ref_target)
    {
        expand_member(defs, name, name, 0, &mut out);
    }
    out
}

fn expand_member(
    defs: &Definitions,
    variant: &str,
    name: &str,
    depth: usize,
    out: &mut Vec<(String, Value)>,
) {
    let Some(def) = resolve_alias(defs, name) else {
        return;
    };
    if let Some(Value::Array(members)) = def.get("oneOf") {
        if depth < 4 {
            for inner in members.iter().filter_map(ref_target) {
                expand_member(defs, variant, inner, depth + 1, out);
            }
        }
        return;
    }
    if def.get("properties").is_some() || def.get("type") == Some(&Value::from("object")) {
        out.push((variant.to_owned(), def.clone()));
    }
}

fn dispatch(defs: &Definitions, union: &Value) -> Dispatch {
    let members = object_members(defs, union);
    if members.len() < 2 {
        return Dispatch::Untagged;
    }
    let expanded = members
        .iter()
        .map(|(n, _)| n)
        .collect::<BTreeSet<_>>()
        .len()
        != members.len();
    // A property that every member requires with one distinct string value.
    let mut candidates: Vec<String> = vec!["method".into(), "type".into()];
    if let Some((_, first)) = members.first() {
        if let Some(Value::Object(props)) = first.get("properties") {
            candidates.extend(props.keys().cloned());
        }
    }
    for key in candidates {
        let mut cases = Vec::new();
        let mut values = BTreeSet::new();
        let ok = members.iter().all(|(name, def)| {
            match (
                is_required(def, &key),
                single_enum_value(def.pointer(&format!("/properties/{key}"))),
            ) {
                (true, Some(v)) if values.insert(v.clone()) => {
                    cases.push((v, name.clone()));
                    true
                }
                _ => false,
            }
        });
        if ok && !expanded {
            return Dispatch::Tag {
                key,
                cases,
                default: None,
            };
        }
    }
    let members = members
        .iter()
        .map(|(name, def)| {
            let strings = |v: Option<&Value>| -> Vec<String> {
                v.and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            };
            let props = def.get("properties").and_then(Value::as_object);
            MemberShape {
                name: name.clone(),
                required: strings(def.get("required")),
                declared: props
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default(),
                consts: props
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| Some((k.clone(), string_enum(v)?)))
                    .collect(),
            }
        })
        .collect();
    Dispatch::BestMatch { members }
}
