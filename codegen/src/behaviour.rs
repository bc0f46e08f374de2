//! What differs between revisions beyond their types: the behaviour flags each revision
//! records in `schema/revisions.toml`, what each means, and the evidence in the revision's
//! own schema that every flag is checked against.
//!
//! The runtime reads these flags (generated into `mcp_generated::Features`) instead of
//! naming revisions, so a revision added with `cargo codegen add-revision --like REV` is
//! served with REV's behaviour and no hand-written edit. A flag whose value contradicts
//! the schema (say `batching = true` for a schema without a batch type) stops generation:
//! a copied behaviour cannot silently describe a schema it does not fit.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// How clients of a revision open a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// An `initialize` handshake starts a session at the negotiated revision.
    Legacy,
    /// Every request carries the revision in `_meta`; there is no session.
    Modern,
}

impl Era {
    /// The manifest's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// The type of a flag's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `"legacy"` or `"modern"`.
    Era,
    /// `true` or `false`.
    Bool,
    /// A JSON-RPC error code.
    ErrorCode,
}

/// One flag's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagValue {
    /// An [`Era`].
    Era(Era),
    /// A boolean.
    Bool(bool),
    /// A JSON-RPC error code.
    ErrorCode(i64),
}

impl fmt::Display for FlagValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagValue::Era(e) => write!(f, "\"{}\"", e.as_str()),
            FlagValue::Bool(b) => write!(f, "{b}"),
            FlagValue::ErrorCode(c) => write!(f, "{c}"),
        }
    }
}

/// Where a flag's truth can be read.
#[derive(Clone, Copy, Debug)]
pub enum Evidence {
    /// Legacy if the schema defines `InitializeRequest`, modern if it defines
    /// `DiscoverRequest` and no `InitializeRequest`.
    Era,
    /// True exactly when the schema defines this type.
    Defines(&'static str),
    /// True exactly when this property path exists (following `$ref` and `allOf`) below
    /// the named definition.
    Property(&'static str, &'static [&'static str]),
    /// True exactly when the property exists and is not constrained to an object.
    AnyJson(&'static str, &'static [&'static str]),
    /// True exactly when the `params` of every named request definition (following
    /// `$ref` and `allOf`) list this member as required.
    ParamsRequire(&'static [&'static str], &'static str),
    /// Not in the schema: the specification page that states it (the runtime's
    /// behaviour tests hold it).
    Spec(&'static str),
}

/// A behaviour flag: its name (the manifest key and the `Features` field), its type,
/// its documentation and its evidence.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// Manifest key and Rust field name.
    pub name: &'static str,
    /// Value type.
    pub kind: Kind,
    /// Documentation of the generated field.
    pub doc: &'static str,
    /// What the value is checked against.
    pub evidence: Evidence,
}

/// Every flag, in manifest and struct order. Each is read by the runtime; a flag nothing
/// reads does not belong here (the runtime's tests check that every field is used).
pub const FLAGS: &[Flag] = &[
    Flag {
        name: "era",
        kind: Kind::Era,
        doc: "How clients of this revision open a conversation.",
        evidence: Evidence::Era,
    },
    Flag {
        name: "batching",
        kind: Kind::Bool,
        doc: "JSON-RPC batches must be accepted.",
        evidence: Evidence::Defines("JSONRPCBatchRequest"),
    },
    Flag {
        name: "audio_content",
        kind: Kind::Bool,
        doc: "`AudioContent` exists (else audio becomes a text block saying it was omitted).",
        evidence: Evidence::Defines("AudioContent"),
    },
    Flag {
        name: "progress_message",
        kind: Kind::Bool,
        doc: "Progress notifications carry `message`.",
        evidence: Evidence::Property("ProgressNotification", &["params", "message"]),
    },
    Flag {
        name: "structured_output",
        kind: Kind::Bool,
        doc: "Tool results carry `structuredContent` (and tools `outputSchema`).",
        evidence: Evidence::Property("CallToolResult", &["structuredContent"]),
    },
    Flag {
        name: "structured_any_json",
        kind: Kind::Bool,
        doc: "`structuredContent` may be any JSON value and `outputSchema` any schema (else both must be objects).",
        evidence: Evidence::AnyJson("CallToolResult", &["structuredContent"]),
    },
    Flag {
        name: "resource_links",
        kind: Kind::Bool,
        doc: "`resource_link` content blocks exist (else a text block names the resource).",
        evidence: Evidence::Defines("ResourceLink"),
    },
    Flag {
        name: "elicitation",
        kind: Kind::Bool,
        doc: "`elicitation/create` exists.",
        evidence: Evidence::Defines("ElicitRequest"),
    },
    Flag {
        name: "elicitation_titled_enums",
        kind: Kind::Bool,
        doc: "Elicitation schemas have titled single-select enums (`oneOf` of `const` + `title`); else they become `enum` + `enumNames`.",
        evidence: Evidence::Defines("TitledSingleSelectEnumSchema"),
    },
    Flag {
        name: "url_elicitation",
        kind: Kind::Bool,
        doc: "URL-mode elicitation exists.",
        evidence: Evidence::Defines("ElicitRequestURLParams"),
    },
    Flag {
        name: "elicitation_complete",
        kind: Kind::Bool,
        doc: "`notifications/elicitation/complete` exists.",
        evidence: Evidence::Defines("ElicitationCompleteNotification"),
    },
    Flag {
        name: "sampling_tools",
        kind: Kind::Bool,
        doc: "Sampling requests may offer tools (`tools`, `toolChoice`).",
        evidence: Evidence::Property("CreateMessageRequest", &["params", "tools"]),
    },
    Flag {
        name: "tasks",
        kind: Kind::Bool,
        doc: "The core protocol has tasks (task-augmented requests, `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`); 2026-07-28 moved them to an extension.",
        evidence: Evidence::Defines("CreateTaskResult"),
    },
    Flag {
        name: "result_type",
        kind: Kind::Bool,
        doc: "Results carry `resultType`.",
        evidence: Evidence::Property("Result", &["resultType"]),
    },
    Flag {
        name: "cache_hints",
        kind: Kind::Bool,
        doc: "List and read results carry `ttlMs` and `cacheScope`.",
        evidence: Evidence::Property("ListToolsResult", &["ttlMs"]),
    },
    Flag {
        name: "server_info_in_meta",
        kind: Kind::Bool,
        doc: "Results name the server in `_meta` (`io.modelcontextprotocol/serverInfo`).",
        evidence: Evidence::Property("ResultMetaObject", &["io.modelcontextprotocol/serverInfo"]),
    },
    Flag {
        name: "resource_not_found_code",
        kind: Kind::ErrorCode,
        doc: "The JSON-RPC error code for an unknown resource on `resources/read`.",
        evidence: Evidence::Spec("server/resources.mdx, \"Error Handling\""),
    },
    Flag {
        name: "sse_polling",
        kind: Kind::Bool,
        doc: "Streamable HTTP servers may poll SSE streams: a priming event (an id, empty data) opens a stream, `retry` paces the client, and the server may close the connection after an event id for the client to resume with `Last-Event-ID` (SEP-1699).",
        evidence: Evidence::Spec("basic/transports.mdx, \"Sending Messages to the Server\""),
    },
    Flag {
        name: "params_meta_required",
        kind: Kind::Bool,
        doc: "The params of `tools/call` and `resources/read` require `_meta` (the request's revision and capabilities travel in it): their generated types also decode with `_meta` given apart (`support::FromParams`), which the runtime uses to decode it once per distinct `_meta`.",
        evidence: Evidence::ParamsRequire(&["CallToolRequest", "ReadResourceRequest"], "_meta"),
    },
];

/// The flag named `name`.
pub fn flag(name: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.name == name)
}

/// A revision's behaviour: one value for every flag of [`FLAGS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Behaviour {
    values: BTreeMap<&'static str, FlagValue>,
}

impl Behaviour {
    /// The value of every flag, in [`FLAGS`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Flag, FlagValue)> + '_ {
        FLAGS
            .iter()
            .filter_map(|f| self.values.get(f.name).map(|v| (f, *v)))
    }

    /// The value of a flag.
    pub fn get(&self, name: &str) -> Option<FlagValue> {
        self.values.get(name).copied()
    }

    /// The revision's era.
    pub fn era(&self) -> Era {
        match self.get("era") {
            Some(FlagValue::Era(e)) => e,
            _ => Era::Legacy,
        }
    }

    /// Whether a boolean flag is set.
    pub fn is(&self, name: &str) -> bool {
        self.get(name) == Some(FlagValue::Bool(true))
    }

    /// Sets one flag from its manifest spelling (`batching=true`, `era=modern`).
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, raw) = assignment
            .split_once('=')
            .ok_or_else(|| format!("`{assignment}`: expected FLAG=VALUE"))?;
        let flag = flag(name.trim()).ok_or_else(|| unknown_flag(name.trim()))?;
        let raw = raw.trim();
        let value = match flag.kind {
            Kind::Bool => raw.parse().ok().map(toml::Value::Boolean),
            Kind::ErrorCode => raw.parse().ok().map(toml::Value::Integer),
            Kind::Era => Some(toml::Value::String(raw.trim_matches('"').to_owned())),
        }
        .ok_or_else(|| format!("`{assignment}`: not a value of {}", kind_name(flag.kind)))?;
        self.values.insert(flag.name, parse_value(flag, &value)?);
        Ok(())
    }

    /// A behaviour with every boolean off, the legacy era and the legacy not-found code:
    /// what a schema fixture (which no runtime serves) is generated with.
    pub fn fixture() -> Behaviour {
        let values = FLAGS
            .iter()
            .map(|f| {
                let v = match f.kind {
                    Kind::Era => FlagValue::Era(Era::Legacy),
                    Kind::Bool => FlagValue::Bool(false),
                    Kind::ErrorCode => FlagValue::ErrorCode(-32002),
                };
                (f.name, v)
            })
            .collect();
        Behaviour { values }
    }

    /// Reads the manifest's `[revision.behaviour]` table: every flag exactly once, of its
    /// type; an unknown key is an error (a typo must not silently leave a flag unset).
    pub fn from_table(table: &toml::Table) -> Result<Behaviour, String> {
        if let Some(unknown) = table.keys().find(|k| flag(k).is_none()) {
            return Err(unknown_flag(unknown));
        }
        let mut values = BTreeMap::new();
        for f in FLAGS {
            let raw = table
                .get(f.name)
                .ok_or_else(|| format!("behaviour: flag `{}` is missing ({})", f.name, f.doc))?;
            values.insert(f.name, parse_value(f, raw)?);
        }
        Ok(Behaviour { values })
    }

    /// The `[revision.behaviour]` lines, in [`FLAGS`] order.
    pub fn to_toml_lines(&self) -> String {
        self.iter()
            .map(|(f, v)| format!("{} = {v}\n", f.name))
            .collect()
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Era => "\"legacy\" or \"modern\"",
        Kind::Bool => "true or false",
        Kind::ErrorCode => "an integer error code",
    }
}

fn unknown_flag(name: &str) -> String {
    let known: Vec<&str> = FLAGS.iter().map(|f| f.name).collect();
    format!(
        "behaviour: unknown flag `{name}` (known: {})",
        known.join(", ")
    )
}

fn parse_value(flag: &Flag, raw: &toml::Value) -> Result<FlagValue, String> {
    let value = match (flag.kind, raw) {
        (Kind::Bool, toml::Value::Boolean(b)) => Some(FlagValue::Bool(*b)),
        (Kind::ErrorCode, toml::Value::Integer(c)) => Some(FlagValue::ErrorCode(*c)),
        (Kind::Era, toml::Value::String(s)) if s == "legacy" => Some(FlagValue::Era(Era::Legacy)),
        (Kind::Era, toml::Value::String(s)) if s == "modern" => Some(FlagValue::Era(Era::Modern)),
        _ => None,
    };
    value.ok_or_else(|| {
        format!(
            "behaviour: flag `{}` must be {}, got {raw}",
            flag.name,
            kind_name(flag.kind)
        )
    })
}

impl Serialize for Behaviour {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let table: toml::Table = self
            .iter()
            .map(|(f, v)| {
                let raw = match v {
                    FlagValue::Era(e) => toml::Value::String(e.as_str().to_owned()),
                    FlagValue::Bool(b) => toml::Value::Boolean(b),
                    FlagValue::ErrorCode(c) => toml::Value::Integer(c),
                };
                (f.name.to_owned(), raw)
            })
            .collect();
        table.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Behaviour {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = toml::Table::deserialize(deserializer)?;
        Behaviour::from_table(&table).map_err(D::Error::custom)
    }
}

/// A flag whose recorded value the schema contradicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The flag.
    pub flag: &'static str,
    /// The value the manifest records.
    pub recorded: FlagValue,
    /// The value the schema shows.
    pub observed: FlagValue,
    /// What in the schema shows it.
    pub evidence: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{} = {}` but the schema says {} ({})",
            self.flag, self.recorded, self.observed, self.evidence
        )
    }
}

/// What the schema shows for `flag`, with a description of the evidence; `None` for a
/// flag the schema cannot show.
pub fn observe(flag: &Flag, schema: &Value) -> Option<(FlagValue, String)> {
    let defs = definitions(schema);
    let defines = |name: &str| defs.is_some_and(|d| d.contains_key(name));
    match flag.evidence {
        Evidence::Era => {
            let legacy = defines("InitializeRequest");
            let era = if !legacy && defines("DiscoverRequest") {
                Era::Modern
            } else {
                Era::Legacy
            };
            let why = if legacy {
                "it defines InitializeRequest"
            } else if era == Era::Modern {
                "it defines DiscoverRequest and no InitializeRequest"
            } else {
                "it defines neither InitializeRequest nor DiscoverRequest"
            };
            Some((FlagValue::Era(era), why.to_owned()))
        }
        Evidence::Defines(name) => {
            let present = defines(name);
            let why = format!(
                "it {} `{name}`",
                if present {
                    "defines"
                } else {
                    "does not define"
                }
            );
            Some((FlagValue::Bool(present), why))
        }
        Evidence::Property(def, path) => {
            let found = defs.and_then(|d| property_path(d, def, path)).is_some();
            let why = format!(
                "`{def}.{}` {}",
                path.join("."),
                if found { "exists" } else { "does not exist" }
            );
            Some((FlagValue::Bool(found), why))
        }
        Evidence::AnyJson(def, path) => {
            let node = defs.and_then(|d| property_path(d, def, path).map(|n| resolve(d, n)));
            let any = node.is_some_and(|n| n.get("type") != Some(&Value::from("object")));
            let why = match node {
                None => format!("`{def}.{}` does not exist", path.join(".")),
                Some(_) if any => format!("`{def}.{}` takes any JSON value", path.join(".")),
                Some(_) => format!("`{def}.{}` must be an object", path.join(".")),
            };
            Some((FlagValue::Bool(any), why))
        }
        Evidence::ParamsRequire(requests, member) => {
            let lacking = requests.iter().find(|request| {
                !defs
                    .and_then(|d| property_path(d, request, &["params"]).map(|p| (d, p)))
                    .is_some_and(|(d, params)| requires(d, params, member))
            });
            let why = match lacking {
                Some(request) => format!("`{request}.params` does not require `{member}`"),
                None => format!("`{}` params require `{member}`", requests.join("`, `")),
            };
            Some((FlagValue::Bool(lacking.is_none()), why))
        }
        Evidence::Spec(_) => None,
    }
}

/// Whether `node` (following `$ref` and `allOf`) lists `name` among its required members.
fn requires(defs: &serde_json::Map<String, Value>, node: &Value, name: &str) -> bool {
    let node = resolve(defs, node);
    let listed = node
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|m| m.as_str() == Some(name)));
    listed
        || node
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|all| all.iter().any(|member| requires(defs, member, name)))
}

/// Every flag of `behaviour` that `schema` contradicts.
pub fn check(behaviour: &Behaviour, schema: &Value) -> Vec<Mismatch> {
    behaviour
        .iter()
        .filter_map(|(flag, recorded)| {
            let (observed, evidence) = observe(flag, schema)?;
            (observed != recorded).then_some(Mismatch {
                flag: flag.name,
                recorded,
                observed,
                evidence,
            })
        })
        .collect()
}

fn definitions(schema: &Value) -> Option<&serde_json::Map<String, Value>> {
    schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
}

/// Follows `$ref` chains to the definition they name.
fn resolve<'a>(defs: &'a serde_json::Map<String, Value>, mut node: &'a Value) -> &'a Value {
    // A chain longer than this is a cycle; the node reached is as good an answer as any.
    for _ in 0..32 {
        let Some(target) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
            .and_then(|name| defs.get(name))
        else {
            break;
        };
        node = target;
    }
    node
}

/// The property `name` of `node`, looking through `$ref` and `allOf`.
fn property<'a>(
    defs: &'a serde_json::Map<String, Value>,
    node: &'a Value,
    name: &str,
) -> Option<&'a Value> {
    let node = resolve(defs, node);
    if let Some(p) = node.get("properties").and_then(|p| p.get(name)) {
        return Some(p);
    }
    node.get("allOf")
        .and_then(Value::as_array)?
        .iter()
        .find_map(|member| property(defs, member, name))
}

fn property_path<'a>(
    defs: &'a serde_json::Map<String, Value>,
    def: &str,
    path: &[&str],
) -> Option<&'a Value> {
    path.iter()
        .try_fold(defs.get(def)?, |node, name| property(defs, node, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_flag_is_read_back_as_written() {
        let mut b = Behaviour::fixture();
        b.set("era=modern").expect("era");
        b.set("batching=true").expect("bool");
        b.set("resource_not_found_code=-32602").expect("code");
        let table: toml::Table = toml::from_str(&b.to_toml_lines()).expect("toml");
        assert_eq!(Behaviour::from_table(&table).expect("parse"), b);
    }

    #[test]
    fn unknown_missing_and_mistyped_flags_are_errors() {
        let mut table: toml::Table =
            toml::from_str(&Behaviour::fixture().to_toml_lines()).expect("toml");
        table.insert("batchng".into(), toml::Value::Boolean(true));
        let e = Behaviour::from_table(&table).expect_err("typo");
        assert!(e.contains("unknown flag `batchng`"), "{e}");
        table.remove("batchng");
        table.remove("audio_content");
        let e = Behaviour::from_table(&table).expect_err("missing");
        assert!(e.contains("`audio_content` is missing"), "{e}");
        table.insert("audio_content".into(), toml::Value::String("yes".into()));
        let e = Behaviour::from_table(&table).expect_err("type");
        assert!(e.contains("must be true or false"), "{e}");
        assert!(Behaviour::fixture().set("era=stateless").is_err());
    }

    #[test]
    fn properties_are_found_through_refs_and_all_of() {
        let schema = json!({"$defs": {
            "Result": {"properties": {"_meta": {}}},
            "Paginated": {"allOf": [{"$ref": "#/$defs/Result"}, {"properties": {"ttlMs": {}}}]},
            "ListToolsResult": {"$ref": "#/$defs/Paginated"},
            "ProgressNotification": {"properties": {"params": {"$ref": "#/$defs/P"}}},
            "P": {"properties": {"message": {"type": "string"}}},
        }});
        let mut b = Behaviour::fixture();
        b.set("cache_hints=true").expect("set");
        b.set("progress_message=true").expect("set");
        assert_eq!(check(&b, &schema), vec![]);
        b.set("result_type=true").expect("set");
        let m = check(&b, &schema);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].flag, "result_type");
        assert!(m[0]
            .to_string()
            .contains("`Result.resultType` does not exist"));
    }
}
