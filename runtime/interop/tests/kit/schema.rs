//! The official schemas and the strict wire checker: every message a server sends must be
//! an exact instance of its revision's official schema definition (valid, and carrying no
//! key the schema does not define). The schemas are loaded once per test binary, from the
//! offline mirror or the cache, checked against the manifest's SHA-256.
//!
//! Extension messages (`io.modelcontextprotocol/tasks`, …) are checked the same way
//! against the extension's official schema ([`extension_schema`],
//! [`check_extension_exact`]) when that schema is available (cache,
//! `MCP_EXTENSION_SCHEMA_DIR`, or `$MCP_SCHEMA_DIR/extensions/`); the shared mirror CI uses
//! holds only the revisions, so without it those checks are skipped, saying so once, unless
//! `MCP_REQUIRE_EXTENSION_SCHEMAS=1` makes the absence a failure.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};

// ───────────────────────────── official schemas ─────────────────────────────

/// One revision's official schema document and compiled validators for places in it.
pub struct Schema {
    /// The revision id (`2025-06-18`).
    pub revision: String,
    doc: Value,
    /// `definitions` (draft-07) or `$defs` (2020-12).
    defs_key: &'static str,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

/// The schema of `revision`, loaded once (from the offline mirror or the cache, checked
/// against the manifest's SHA-256), exactly as `generated/tests/roundtrip.rs` loads it.
pub fn schema(revision: &str) -> Arc<Schema> {
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Arc<Schema>>>> = OnceLock::new();
    let mut all = SCHEMAS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Arc::clone(all.entry(revision.to_owned()).or_insert_with(|| {
        let layout = mcp_codegen::Layout::workspace();
        let manifest = mcp_codegen::Manifest::load(&layout.manifest_path()).expect("manifest");
        let source = mcp_codegen::SchemaSource::offline(layout.cache_dir());
        let rev = manifest.get(revision).expect("revision in manifest");
        let doc = mcp_codegen::load::load(rev, &source)
            .unwrap_or_else(|e| panic!("{e}"))
            .json;
        let defs_key = if doc.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        Arc::new(Schema {
            revision: revision.to_owned(),
            doc,
            defs_key,
            validators: Mutex::new(HashMap::new()),
        })
    }))
}

/// The official schema of the extension `id` (e.g. `io.modelcontextprotocol/tasks`),
/// loaded once and checked against the manifest's SHA-256 exactly as `mcp-codegen` loads
/// it; `None` when it is not available offline (a file with the wrong hash panics: it is
/// not the pinned schema). With `MCP_REQUIRE_EXTENSION_SCHEMAS=1`, absence panics too.
pub fn extension_schema(id: &str) -> Option<Arc<Schema>> {
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Option<Arc<Schema>>>>> = OnceLock::new();
    let mut all = SCHEMAS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    all.entry(id.to_owned())
        .or_insert_with(|| {
            let layout = mcp_codegen::Layout::workspace();
            let manifest = mcp_codegen::Manifest::load(&layout.manifest_path()).expect("manifest");
            let ext = manifest
                .extension(id)
                .unwrap_or_else(|| panic!("extension {id} is not in the manifest"));
            let source = mcp_codegen::extension::ExtensionSource::for_schema_source(
                &mcp_codegen::SchemaSource::offline(layout.cache_dir()),
                None,
            );
            let doc = match mcp_codegen::extension::load(ext, &source) {
                Ok(loaded) => loaded.json,
                Err(e @ mcp_codegen::Error::ExtensionSchemaMissing { .. }) => {
                    assert!(
                        std::env::var_os("MCP_REQUIRE_EXTENSION_SCHEMAS").is_none_or(|v| v != "1"),
                        "MCP_REQUIRE_EXTENSION_SCHEMAS=1: {e}"
                    );
                    eprintln!(
                        "note: messages of {id} are NOT checked against its official schema: {e}"
                    );
                    return None;
                }
                Err(e) => panic!("{e}"),
            };
            Some(Arc::new(Schema {
                revision: id.to_owned(),
                doc,
                defs_key: "$defs",
                validators: Mutex::new(HashMap::new()),
            }))
        })
        .clone()
}

/// [`schema_exact_errors`] against the extension `id`'s schema: `None` when the schema is
/// not available (see [`extension_schema`]).
pub fn extension_exact_errors(id: &str, defs: &[&str], instance: &Value) -> Option<Vec<String>> {
    let schema = extension_schema(id)?;
    Some(exact_errors(&schema, defs, instance))
}

/// Asserts that `instance` is an exact instance of `def_name` (e.g. `GetTaskResult`) of
/// the extension `id`'s official schema; returns whether it could check (false: the
/// schema is not available here, and a note said so).
pub fn check_extension_exact(id: &str, def_name: &str, instance: &Value) -> bool {
    let Some(errors) = extension_exact_errors(id, &[def_name], instance) else {
        return false;
    };
    assert!(
        errors.is_empty(),
        "{id}: not an exact {def_name}:\n  {}\ninstance: {instance:#}",
        errors.join("\n  ")
    );
    true
}

/// Escapes a key for a JSON pointer.
fn esc(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

/// Properties whose value is a JSON Schema document written by the server author (a
/// tool's `inputSchema`/`outputSchema`): every JSON Schema keyword may appear there
/// (the spec: "A JSON Schema object defining the expected parameters for the tool";
/// 2025-11-25+ "any JSON Schema 2020-12 keyword"), while the MCP schema of the older
/// revisions lists only `type`/`properties`/`required`. The strict key walk does not
/// enter them; they are still validated against the schema (part (a)).
const JSON_SCHEMA_DOCUMENTS: &[(&str, &str)] = &[("Tool", "inputSchema"), ("Tool", "outputSchema")];

impl Schema {
    fn at(&self, pointer: &str) -> &Value {
        self.doc
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{}: no schema at {pointer}", self.revision))
    }

    /// The JSON pointer of a definition. A name that the schema does not define but the
    /// generated method table uses is an inline type the generator hoisted and named
    /// `<Definition><Property>` (e.g. 2026-07-28 `CallToolResultResponseResult` is
    /// `CallToolResultResponse.properties.result`): it resolves to that place.
    pub fn pointer(&self, name: &str) -> String {
        let defs = &self.doc[self.defs_key];
        if defs.get(name).is_some() {
            return format!("/{}/{}", self.defs_key, esc(name));
        }
        for (i, c) in name.char_indices().skip(1) {
            if !c.is_ascii_uppercase() {
                continue;
            }
            let (def, prop) = name.split_at(i);
            let prop = lower_first(prop);
            if defs
                .get(def)
                .and_then(|d| d.get("properties"))
                .and_then(|p| p.get(&prop))
                .is_some()
            {
                return format!("/{}/{}/properties/{}", self.defs_key, esc(def), esc(&prop));
            }
        }
        panic!("{}: no definition named {name}", self.revision)
    }

    /// The schema of a definition (hoisted names resolved as in [`Schema::pointer`]).
    pub fn definition(&self, name: &str) -> &Value {
        self.at(&self.pointer(name))
    }

    /// Whether the schema defines `name` (directly, not hoisted).
    pub fn has_definition(&self, name: &str) -> bool {
        self.doc[self.defs_key].get(name).is_some()
    }

    fn validator(&self, pointer: &str) -> Arc<jsonschema::Validator> {
        let mut cache = self
            .validators
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(cache.entry(pointer.to_owned()).or_insert_with(|| {
            let mut root = self.doc.clone();
            root["$ref"] = json!(format!("#{pointer}"));
            Arc::new(
                jsonschema::validator_for(&root)
                    .unwrap_or_else(|e| panic!("{}: validator for {pointer}: {e}", self.revision)),
            )
        }))
    }

    /// JSON Schema validation errors of `instance` against the schema at `pointer`.
    pub fn validation_errors(&self, pointer: &str, instance: &Value) -> Vec<String> {
        self.validator(pointer)
            .iter_errors(instance)
            .map(|e| format!("{e} (at {:?})", e.instance_path().to_string()))
            .collect()
    }

    fn validates(&self, pointer: &str, instance: &Value) -> bool {
        self.validator(pointer).is_valid(instance)
    }

    /// Keys the conjunction of the schemas at `pointers` does not define, anywhere in
    /// `instance` (empty: exact). `path` names the instance location in messages.
    pub fn undefined_keys(&self, pointers: &[String], instance: &Value, path: &str) -> Vec<String> {
        self.walk(pointers.to_vec(), instance, path, &BTreeSet::new())
    }

    /// The strict walk. `pointers` is a conjunction (all apply); `chosen` holds the
    /// `anyOf`/`oneOf` groups already resolved to a branch for this instance.
    fn walk(
        &self,
        pointers: Vec<String>,
        instance: &Value,
        path: &str,
        chosen: &BTreeSet<String>,
    ) -> Vec<String> {
        // Flatten `$ref` and `allOf` into the list of schema objects that apply.
        let mut conj: Vec<String> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut stack = pointers;
        while let Some(p) = stack.pop() {
            if !seen.insert(p.clone()) {
                continue;
            }
            let s = self.at(&p);
            let Value::Object(obj) = s else {
                continue; // `true`/`false`: no keys defined or refused here (validation judges)
            };
            if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
                let target = r
                    .strip_prefix('#')
                    .unwrap_or_else(|| panic!("{}: external $ref {r}", self.revision));
                stack.push(target.to_owned());
            }
            if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
                for i in 0..all.len() {
                    stack.push(format!("{p}/allOf/{i}"));
                }
            }
            conj.push(p);
        }
        conj.sort();

        // A union: the instance must be exact for at least one branch it validates against.
        for p in &conj {
            for kw in ["anyOf", "oneOf"] {
                let Some(branches) = self.at(p).get(kw).and_then(Value::as_array) else {
                    continue;
                };
                let group = format!("{p}/{kw}");
                if chosen.contains(&group) {
                    continue;
                }
                let mut chosen = chosen.clone();
                chosen.insert(group.clone());
                let mut failures = Vec::new();
                for i in 0..branches.len() {
                    let branch = format!("{group}/{i}");
                    if !self.validates(&branch, instance) {
                        failures.push(format!("{branch}: not valid"));
                        continue;
                    }
                    let mut with_branch = conj.clone();
                    with_branch.push(branch.clone());
                    let errors = self.walk(with_branch, instance, path, &chosen);
                    if errors.is_empty() {
                        return Vec::new();
                    }
                    failures.push(format!("{branch}: {}", errors.join("; ")));
                }
                return vec![format!(
                    "{path}: no branch of {group} is both valid and exact [{}]",
                    failures.join(" | ")
                )];
            }
        }

        let mut errors = Vec::new();
        match instance {
            Value::Object(map) => {
                // Keys defined by any member (union); open only if every member that
                // constrains keys declares `additionalProperties` other than `false`.
                let mut props: BTreeMap<&str, Vec<String>> = BTreeMap::new();
                let mut constrained = false;
                let mut open = true;
                let mut extra_schemas = Vec::new();
                for p in &conj {
                    let s = self.at(p);
                    let declared = s.get("properties").and_then(Value::as_object);
                    if let Some(declared) = declared {
                        for k in declared.keys() {
                            props
                                .entry(k.as_str())
                                .or_default()
                                .push(format!("{p}/properties/{}", esc(k)));
                        }
                    }
                    let additional = s.get("additionalProperties");
                    let patterns = s.get("patternProperties").is_some();
                    if declared.is_some() || additional.is_some() || patterns {
                        constrained = true;
                        match additional {
                            None | Some(Value::Bool(false)) if !patterns => open = false,
                            Some(Value::Object(_)) => {
                                extra_schemas.push(format!("{p}/additionalProperties"))
                            }
                            _ => {}
                        }
                    }
                }
                // A `_meta` object is open whatever its type declares: `MetaObject` admits
                // any key that follows its naming rules, and 2026-07-28's
                // `ResultMetaObject` & co. only name the reserved ones (without the
                // `additionalProperties: {}` the older revisions wrote). Its reserved
                // keys are still walked.
                let meta_object = path.ends_with("/_meta");
                let open = !constrained || open || meta_object;
                for (k, v) in map {
                    let here = format!("{path}/{}", esc(k));
                    if let Some(ps) = props.get(k.as_str()) {
                        let document = ps.iter().any(|p| {
                            JSON_SCHEMA_DOCUMENTS.iter().any(|(def, prop)| {
                                p.ends_with(&format!("/{def}/properties/{prop}"))
                            })
                        });
                        if !document {
                            errors.extend(self.walk(ps.clone(), v, &here, &BTreeSet::new()));
                        }
                    } else if open {
                        if !extra_schemas.is_empty() {
                            errors.extend(self.walk(
                                extra_schemas.clone(),
                                v,
                                &here,
                                &BTreeSet::new(),
                            ));
                        }
                    } else {
                        errors.push(format!(
                            "{here}: key `{k}` is not defined by the schema ({})",
                            conj.join(" ∧ ")
                        ));
                    }
                }
            }
            Value::Array(items) => {
                let item_schemas: Vec<String> = conj
                    .iter()
                    .filter(|p| self.at(p).get("items").is_some_and(Value::is_object))
                    .map(|p| format!("{p}/items"))
                    .collect();
                if !item_schemas.is_empty() {
                    for (i, item) in items.iter().enumerate() {
                        errors.extend(self.walk(
                            item_schemas.clone(),
                            item,
                            &format!("{path}/{i}"),
                            &BTreeSet::new(),
                        ));
                    }
                }
            }
            _ => {}
        }
        errors
    }
}

/// Everything wrong with `instance` as an exact instance of all of `defs` at once (a
/// conjunction, e.g. `["JSONRPCNotification", "ProgressNotification"]` for a 2024-11-05
/// notification whose definition omits the `jsonrpc` of its envelope): (a) validation
/// errors against each definition, (b) keys no definition defines. Empty: exact.
pub fn schema_exact_errors(revision: &str, defs: &[&str], instance: &Value) -> Vec<String> {
    exact_errors(&schema(revision), defs, instance)
}

fn exact_errors(schema: &Schema, defs: &[&str], instance: &Value) -> Vec<String> {
    let pointers: Vec<String> = defs.iter().map(|d| schema.pointer(d)).collect();
    let mut errors = Vec::new();
    for (def, p) in defs.iter().zip(&pointers) {
        errors.extend(
            schema
                .validation_errors(p, instance)
                .into_iter()
                .map(|e| format!("(a) not a valid {def}: {e}")),
        );
    }
    errors.extend(
        schema
            .undefined_keys(&pointers, instance, "")
            .into_iter()
            .map(|e| format!("(b) {e}")),
    );
    errors
}

/// Asserts that `instance` validates against `def_name` of `revision`'s official schema
/// and that no object in it carries a key the schema does not define for that object.
pub fn assert_schema_exact(revision: &str, def_name: &str, instance: &Value) {
    assert_schema_exact_all(revision, &[def_name], instance);
}

/// [`assert_schema_exact`] for a conjunction of definitions.
pub fn assert_schema_exact_all(revision: &str, defs: &[&str], instance: &Value) {
    let errors = schema_exact_errors(revision, defs, instance);
    assert!(
        errors.is_empty(),
        "{revision}: not an exact {}:\n  {}\ninstance: {instance:#}",
        defs.join(" ∧ "),
        errors.join("\n  ")
    );
}

/// The generated method table entry of `method` in `revision`.
pub fn method_info(revision: &str, method: &str) -> Option<&'static mcp_generated::MethodInfo> {
    let v = mcp_runtime::ProtocolVersion::parse(revision)
        .unwrap_or_else(|| panic!("unknown revision {revision}"));
    mcp_generated::by_revision!(v, |m| m::method(method))
}

/// Checks what the server sent in each exchange `(label, method, received)` of a session
/// at `rev`: the messages before the response are notifications (never requests), each
/// an exact instance of its method's definition; the response an exact result of the
/// method's result type, or an exact error (by its named definition where the revision
/// names it).
pub fn check_server_messages(rev: &str, exchanges: &[(&str, &str, &[Value])]) {
    let s = schema(rev);
    let split_responses = s.has_definition("JSONRPCResultResponse");
    for &(label, method, received) in exchanges {
        let (last, before) = received.split_last().expect("a response");
        for message in before {
            assert!(
                message.get("id").is_none(),
                "{rev} {}: the server sent a request: {message}",
                label
            );
            check_notification(rev, message);
        }
        let what = format!("{rev} {}", label);
        if let Some(result) = last.get("result") {
            if split_responses {
                assert_schema_exact(rev, "JSONRPCResponse", last);
                assert_schema_exact(rev, "JSONRPCResultResponse", last);
            } else {
                assert_schema_exact(rev, "JSONRPCResponse", last);
            }
            let info = method_info(rev, method)
                .unwrap_or_else(|| panic!("{what}: answered, but {rev} has no such method"));
            // The method's own response definition, where the schema has one (2026-07-28).
            let specific = info.message.replace("Request", "ResultResponse");
            if s.has_definition(&specific) {
                assert_schema_exact(rev, &specific, last);
            }
            let result_def = info.result.expect("a request has a result");
            assert_schema_exact(rev, result_def, result);
        } else {
            let error = last
                .get("error")
                .unwrap_or_else(|| panic!("{what}: neither result nor error: {last}"));
            if split_responses {
                assert_schema_exact(rev, "JSONRPCResponse", last);
                assert_schema_exact(rev, "JSONRPCErrorResponse", last);
            } else {
                assert_schema_exact(rev, "JSONRPCError", last);
            }
            // 2026-07-28 names its standard errors.
            let named = match error["code"].as_i64() {
                Some(-32601) => "MethodNotFoundError",
                Some(-32602) => "InvalidParamsError",
                Some(-32603) => "InternalError",
                _ => "",
            };
            if !named.is_empty() && s.has_definition(named) {
                assert_schema_exact(rev, named, error);
            }
        }
    }
}

/// A notification: an exact `JSONRPCNotification`, and an exact instance of its
/// method's definition. Before 2025-11-25 the method definitions omit the envelope's
/// `jsonrpc`, so there the check is of both definitions at once (their union of keys).
pub fn check_notification(rev: &str, message: &Value) {
    let method = message["method"].as_str().expect("method");
    let info = method_info(rev, method)
        .unwrap_or_else(|| panic!("{rev}: the server sent {method}, which {rev} does not have"));
    assert_eq!(info.kind, mcp_generated::Kind::Notification, "{method}");
    assert_ne!(
        info.direction,
        mcp_generated::Direction::ClientToServer,
        "{rev}: {method} is sent by clients only"
    );
    assert_schema_exact(rev, "JSONRPCNotification", message);
    let s = schema(rev);
    let defines_envelope = s
        .definition(info.message)
        .pointer("/properties/jsonrpc")
        .is_some();
    if defines_envelope {
        assert_schema_exact(rev, info.message, message);
    } else {
        assert_schema_exact_all(rev, &["JSONRPCNotification", info.message], message);
    }
}

/// A request the server sent (an ask of a legacy revision): `method`, with an `s-` id of
/// its own, a server-to-client request of `rev`'s table, an exact `JSONRPCRequest` and an
/// exact instance of the method's definition (before 2025-11-25 those omit the envelope,
/// so there both at once).
pub fn check_server_request(rev: &str, message: &Value, method: &str) {
    assert_eq!(message["method"], method, "{rev}: {message}");
    let id = message["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{rev}: a server request id: {message}"));
    assert!(id.starts_with("s-"), "{rev}: {message}");
    let info = method_info(rev, method)
        .unwrap_or_else(|| panic!("{rev}: the server sent {method}, which {rev} does not have"));
    assert_eq!(info.kind, mcp_generated::Kind::Request, "{rev} {method}");
    assert_ne!(
        info.direction,
        mcp_generated::Direction::ClientToServer,
        "{rev}: {method} is sent by clients only"
    );
    assert_schema_exact(rev, "JSONRPCRequest", message);
    let defines_envelope = schema(rev)
        .definition(info.message)
        .pointer("/properties/jsonrpc")
        .is_some();
    if defines_envelope {
        assert_schema_exact(rev, info.message, message);
    } else {
        assert_schema_exact_all(rev, &["JSONRPCRequest", info.message], message);
    }
}
