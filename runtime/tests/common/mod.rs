//! Shared test support: the conformance example server on an in-memory stdio pair, a
//! client that sends one request at a time and records the whole conversation, and a
//! strict checker that every message is an exact instance of its revision's official
//! schema definition (valid, and carrying no key the schema does not define).
#![allow(dead_code, unreachable_pub)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

/// The example server (`runtime/examples/conformance_server.rs`), compiled into the test.
/// Its `main` is unused here.
#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "../../examples/conformance_server.rs"]
mod fixture;

pub use fixture::conformance_server;

// ───────────────────────────── in-memory session ─────────────────────────────

/// Who sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client to server.
    ToServer,
    /// Server to client.
    ToClient,
}

/// How long one answer may take before the test fails (instead of hanging).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);

/// A client connected to a server served by `transport::stdio::serve` over two
/// `tokio::io::duplex` pipes. Every message written or read is recorded in order.
pub struct Session {
    to_server: Option<DuplexStream>,
    from_server: Lines<BufReader<DuplexStream>>,
    server: Option<JoinHandle<std::io::Result<()>>>,
    /// Everything exchanged so far, in order.
    pub log: Vec<(Dir, Value)>,
}

impl Session {
    /// Serves `server` in a task of the current runtime.
    pub fn start(server: mcp_runtime::Server) -> Session {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let task = tokio::spawn(mcp_runtime::transport::stdio::serve(
            server, server_in, server_out,
        ));
        Session {
            to_server: Some(client_out),
            from_server: BufReader::new(client_in).lines(),
            server: Some(task),
            log: Vec::new(),
        }
    }

    /// Serves the conformance example server.
    pub fn conformance() -> Session {
        Session::start(conformance_server())
    }

    async fn write(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("encode");
        line.push(b'\n');
        let w = self.to_server.as_mut().expect("input still open");
        w.write_all(&line).await.expect("write to server");
        w.flush().await.expect("flush");
        self.log.push((Dir::ToServer, message.clone()));
    }

    async fn read(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(ANSWER_TIMEOUT, self.from_server.next_line())
            .await
            .expect("the server did not answer in time")
            .expect("read from server")?;
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"));
        self.log.push((Dir::ToClient, value.clone()));
        Some(value)
    }

    /// Writes one request and reads until its response arrives. Returns everything read,
    /// in order: the messages that came before the response (notifications), then the
    /// response itself (always last).
    pub async fn send(&mut self, request: Value) -> Vec<Value> {
        let id = request
            .get("id")
            .cloned()
            .expect("send() is for requests (with an id); use notify()");
        self.write(&request).await;
        let mut got = Vec::new();
        loop {
            let Some(message) = self.read().await else {
                panic!("the server closed its output before answering {request}");
            };
            let is_response = message.get("method").is_none()
                && (message.get("result").is_some() || message.get("error").is_some());
            let answers_this = is_response && message.get("id") == Some(&id);
            assert!(
                !is_response || answers_this,
                "a response to another request arrived while waiting for id {id}: {message}"
            );
            got.push(message);
            if answers_this {
                return got;
            }
        }
    }

    /// Writes one message that gets no response (a notification).
    pub async fn notify(&mut self, notification: Value) {
        assert!(
            notification.get("id").is_none(),
            "notify() is for notifications"
        );
        self.write(&notification).await;
    }

    /// Closes the client's output, reads whatever the server still writes until it
    /// closes its output, and waits for `serve` to return. Returns what was read after
    /// the close (normally nothing).
    pub async fn close(&mut self) -> Vec<Value> {
        drop(self.to_server.take());
        let mut trailing = Vec::new();
        while let Some(message) = self.read().await {
            trailing.push(message);
        }
        if let Some(task) = self.server.take() {
            tokio::time::timeout(ANSWER_TIMEOUT, task)
                .await
                .expect("serve() did not end after its input closed")
                .expect("serve task")
                .expect("serve() returned an error");
        }
        trailing
    }

    /// The conversation as text for a snapshot: each message numbered, its direction,
    /// and its JSON pretty-printed (keys in the order they were written on the wire).
    pub fn transcript(&self) -> String {
        let mut out = String::new();
        for (i, (dir, message)) in self.log.iter().enumerate() {
            let arrow = match dir {
                Dir::ToServer => "client → server",
                Dir::ToClient => "server → client",
            };
            out.push_str(&format!("── #{} {arrow}\n", i + 1));
            out.push_str(&serde_json::to_string_pretty(message).expect("encode"));
            out.push('\n');
        }
        out
    }
}

/// A request of `method` with `params` (omitted when `None`).
pub fn request(id: i64, method: &str, params: Option<Value>) -> Value {
    let mut r = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        r["params"] = p;
    }
    r
}

/// A notification of `method` with `params` (omitted when `None`).
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut n = json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params {
        n["params"] = p;
    }
    n
}

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
                let open = !constrained || open;
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
    let schema = schema(revision);
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
