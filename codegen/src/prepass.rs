//! Schema → schema rewrites that run before typify, so that what typify produces is
//! correct and not merely compiling. Each rewrite answers one measured failure of typify on
//! the MCP schemas (see ARCHITECTURE.md, "Why a pre-pass").

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::manifest::Dialect;

/// Definitions keyed by their schema name, after normalisation.
pub type Definitions = BTreeMap<String, Value>;

/// Name of the definition the pre-pass adds for the `"jsonrpc": "2.0"` discriminator.
pub const JSONRPC_VERSION_DEF: &str = "JSONRPCVersion";

const REF_PREFIX: &str = "#/definitions/";

/// A revision's schema after the pre-pass, ready for typify and for the IR.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The revision id.
    pub revision: String,
    /// Definitions as published (refs normalised to `#/definitions/`), for digests and diffs.
    pub published: Definitions,
    /// Definitions after every rewrite (hoisted inline types included), fed to typify.
    pub defs: Definitions,
    /// Names of the definitions the pre-pass added (hoisted inline types and helpers).
    pub hoisted: BTreeSet<String>,
}

impl Prepared {
    /// The root schema handed to typify: only `definitions`.
    pub fn root_schema(&self) -> Value {
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": self.defs,
        })
    }
}

/// Runs the whole pre-pass over a schema document.
pub fn prepare(revision: &str, dialect: Dialect, schema: &Value) -> Result<Prepared> {
    prepare_inner(revision, dialect, schema, false)
}

/// The pre-pass of an extension's schema: [`prepare`], after replacing each inline
/// subschema that repeats a named definition by a reference to it. Extension schemas
/// generated from zod (tasks) inline every type where it is used (`DetailedTask` repeats
/// `WorkingTask` … `CancelledTask`); named, the union is dispatched like the revisions'
/// unions, and the types are shared instead of repeated.
pub fn prepare_extension(id: &str, dialect: Dialect, schema: &Value) -> Result<Prepared> {
    prepare_inner(id, dialect, schema, true)
}

fn prepare_inner(
    revision: &str,
    dialect: Dialect,
    schema: &Value,
    reuse_named: bool,
) -> Result<Prepared> {
    let published = normalize(revision, dialect, schema)?;
    let mut defs = published.clone();
    let mut hoisted = BTreeSet::new();
    drop_vacuous_keywords(&mut defs);
    if reuse_named {
        merge_const_unions(&mut defs);
        reuse_named_definitions(&mut defs);
        distribute_all_of_over_unions(&mut defs, &mut hoisted);
    }
    flatten_all_of(revision, &mut defs)?;
    hoist_inline_types(&mut defs, &mut hoisted);
    open_messages(&mut defs);
    open_meta_objects(&mut defs);
    open_json_schema_documents(&mut defs);
    consts_to_enums(&mut defs, &mut hoisted);
    any_of_to_one_of(&mut defs);
    for schema in defs.values_mut() {
        autolink_descriptions(schema);
    }
    Ok(Prepared {
        revision: revision.to_owned(),
        published,
        defs,
        hoisted,
    })
}

/// Takes the named definitions of either dialect, rewrites every `$ref` to
/// `#/definitions/<Name>` and checks that each one resolves.
pub fn normalize(revision: &str, dialect: Dialect, schema: &Value) -> Result<Definitions> {
    let key = dialect.definitions_key();
    let defs = schema
        .get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| Error::InvalidSchema {
            revision: revision.to_owned(),
            message: format!("no `{key}` object"),
        })?;
    let names: BTreeSet<&str> = defs.keys().map(String::as_str).collect();
    let mut out = Definitions::new();
    for (name, def) in defs {
        let mut def = def.clone();
        rewrite_refs(&mut def, &mut |reference| {
            let target = reference
                .strip_prefix("#/$defs/")
                .or_else(|| reference.strip_prefix(REF_PREFIX))
                .map(|t| t.replace("~1", "/").replace("~0", "~"));
            match target {
                Some(t) if names.contains(t.as_str()) => Ok(format!("{REF_PREFIX}{t}")),
                _ => Err(Error::UnresolvedRef {
                    revision: revision.to_owned(),
                    reference: reference.to_owned(),
                    location: name.clone(),
                }),
            }
        })?;
        out.insert(name.clone(), def);
    }
    Ok(out)
}

/// Calls `f` on each direct subschema of `schema` (property schemas, items, union members,
/// …). Walking by keyword, never by key, matters: MCP's elicitation schemas have
/// *properties* named `const`, `enum` and `anyOf`.
fn for_each_subschema_mut(schema: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                if let Value::Object(props) = value {
                    props.values_mut().for_each(&mut *f);
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "additionalItems"
            | "unevaluatedProperties"
            | "if"
            | "then"
            | "else" => match value {
                Value::Array(items) => items.iter_mut().for_each(&mut *f),
                Value::Object(_) => f(value),
                _ => {}
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    items.iter_mut().for_each(&mut *f);
                }
            }
            _ => {}
        }
    }
}

fn for_each_subschema(schema: &Value, f: &mut dyn FnMut(&Value)) {
    let mut copy = schema.clone();
    for_each_subschema_mut(&mut copy, &mut |v| f(v));
}

fn rewrite_refs(value: &mut Value, f: &mut dyn FnMut(&str) -> Result<String>) -> Result<()> {
    if let Some(Value::String(r)) = value.get_mut("$ref") {
        *r = f(r)?;
    }
    let mut result = Ok(());
    for_each_subschema_mut(value, &mut |sub| {
        if result.is_ok() {
            result = rewrite_refs(sub, f);
        }
    });
    result
}

/// The definition name a `$ref` points at, if it is a local definition reference.
pub fn ref_target(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix(REF_PREFIX)
}

fn ref_to(name: &str) -> Value {
    json!({ "$ref": format!("{REF_PREFIX}{name}") })
}

/// Removes keywords that constrain nothing but that typify cannot merge: a `$schema` on a
/// definition (extension schemas generated by zod repeat it on each), and
/// `propertyNames: {"type": "string"}` (every JSON object key is a string; typify asserts
/// when it meets `propertyNames` inside an `allOf`); and relaxes an object that must be
/// empty to an object. The revision schemas have none of these.
fn drop_vacuous_keywords(defs: &mut Definitions) {
    fn walk(value: &mut Value) {
        for_each_subschema_mut(value, &mut walk);
        let Value::Object(map) = value else { return };
        // shift_remove keeps the order of the other keywords, and so the generated code's.
        map.shift_remove("$schema");
        if map.get("propertyNames") == Some(&json!({ "type": "string" })) {
            map.shift_remove("propertyNames");
        }
        // `additionalProperties: {"not": {}}` (an object that must stay empty: the tasks
        // capability, which has no settings yet) is generated as an empty struct; typify
        // would ask for `deny_unknown_fields`, which the serde impls do not write, and a
        // reader should accept settings a later version of the extension adds.
        if map.get("additionalProperties") == Some(&json!({ "not": {} })) {
            map.shift_remove("additionalProperties");
        }
    }
    defs.values_mut().for_each(walk);
}

/// Replaces each inline subschema equal to the body of exactly one named definition (an
/// object or a union: never a bare scalar) by a `$ref` to that definition.
fn reuse_named_definitions(defs: &mut Definitions) {
    let mut by_body: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, def) in defs.iter() {
        let structured = ["properties", "anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| def.get(*k).is_some())
            || def
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|values| values.len() > 1);
        if structured {
            by_body
                .entry(canonical(def))
                .or_default()
                .push(name.clone());
        }
    }
    let unique: BTreeMap<String, String> = by_body
        .into_iter()
        .filter_map(|(body, names)| match names.as_slice() {
            [one] => Some((body, one.clone())),
            _ => None,
        })
        .collect();
    fn walk(value: &mut Value, unique: &BTreeMap<String, String>) {
        if let Some(name) = unique.get(&canonical(value)) {
            *value = ref_to(name);
            return;
        }
        for_each_subschema_mut(value, &mut |sub| walk(sub, unique));
    }
    for def in defs.values_mut() {
        // The definition itself stays; only what it contains is replaced.
        for_each_subschema_mut(def, &mut |sub| walk(sub, &unique));
    }
}

/// Rewrites a union whose members are each one string constant (`anyOf: [{"type":
/// "string", "const": "working"}, …]`, zod's form of a string enum) as the string `enum`
/// it is; typify would make a struct of optional members of it.
fn merge_const_unions(defs: &mut Definitions) {
    fn walk(value: &mut Value) {
        for_each_subschema_mut(value, &mut walk);
        let Value::Object(map) = value else { return };
        for key in ["anyOf", "oneOf"] {
            let Some(Value::Array(members)) = map.get(key) else {
                continue;
            };
            let consts: Option<Vec<Value>> = members
                .iter()
                .map(|m| match m.as_object() {
                    Some(o)
                        if o.len() == 2
                            && o.get("type") == Some(&json!("string"))
                            && o.get("const").is_some_and(Value::is_string) =>
                    {
                        o.get("const").cloned()
                    }
                    _ => None,
                })
                .collect();
            if let Some(consts) = consts.filter(|c| !c.is_empty()) {
                map.shift_remove(key);
                map.insert("type".into(), json!("string"));
                map.insert("enum".into(), Value::Array(consts));
            }
        }
    }
    defs.values_mut().for_each(walk);
}

/// Turns a definition `allOf: [A, anyOf: [X, Y], B]` into the union `anyOf: [DX, DY]` of
/// new definitions `DX = allOf: [A, X, B]` (named after the definition and the member:
/// `GetTaskResult` + `WorkingTask`), which the `allOf` flattening then makes plain
/// structs. A result that is "the common fields and one of the task shapes" becomes a
/// union of complete shapes, dispatched by tag like any other.
fn distribute_all_of_over_unions(defs: &mut Definitions, hoisted: &mut BTreeSet<String>) {
    let names: Vec<String> = defs.keys().cloned().collect();
    for name in names {
        let Some(def) = defs.get(&name) else { continue };
        let Some(Value::Array(parts)) = def.get("allOf") else {
            continue;
        };
        // A member is a union inline, or a reference to a union definition.
        let union_of = |part: &Value| -> Option<Vec<String>> {
            let part = match ref_target(part) {
                Some(target) => defs.get(target)?,
                None => part,
            };
            let members = ["anyOf", "oneOf"]
                .iter()
                .find_map(|k| part.get(*k).and_then(Value::as_array))?;
            members
                .iter()
                .map(|m| ref_target(m).map(str::to_owned))
                .collect()
        };
        let unions: Vec<(usize, Vec<String>)> = parts
            .iter()
            .enumerate()
            .filter_map(|(i, p)| union_of(p).map(|m| (i, m)))
            .collect();
        let [(at, members)] = unions.as_slice() else {
            continue;
        };
        let (at, members) = (*at, members.clone());
        let mut union = Map::new();
        if let Some(description) = def.get("description") {
            union.insert("description".into(), description.clone());
        }
        let mut refs = Vec::new();
        let mut new_defs = Vec::new();
        for member in members {
            let mut branch_parts = parts.clone();
            branch_parts[at] = ref_to(&member);
            let branch = unique_name(defs, &format!("{name}{member}"), &Value::Null);
            refs.push(ref_to(&branch));
            // Its own description wins over the merged members' ("Common result fields.").
            let description = format!("`{name}` when it is a [`{member}`].");
            new_defs.push((
                branch,
                json!({ "allOf": branch_parts, "description": description }),
            ));
        }
        union.insert("anyOf".into(), Value::Array(refs));
        for (branch, schema) in new_defs {
            hoisted.insert(branch.clone());
            defs.insert(branch, schema);
        }
        defs.insert(name, Value::Object(union));
    }
}

/// `value` as JSON text with the keys of every object sorted: equal schemas, equal text.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let ordered: BTreeMap<&String, Value> =
                    map.iter().map(|(k, v)| (k, sorted(v))).collect();
                json!(ordered)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Replaces every `allOf` by the merge of its members (refs resolved). typify panics on
/// `allOf: [Result, Task]` in 2025-11-25 and produces awkward wrappers elsewhere.
fn flatten_all_of(revision: &str, defs: &mut Definitions) -> Result<()> {
    let names: Vec<String> = defs.keys().cloned().collect();
    let mut done = BTreeSet::new();
    for name in names {
        flatten_def(revision, defs, &name, &mut done, &mut Vec::new())?;
    }
    Ok(())
}

fn flatten_def(
    revision: &str,
    defs: &mut Definitions,
    name: &str,
    done: &mut BTreeSet<String>,
    stack: &mut Vec<String>,
) -> Result<()> {
    if done.contains(name) {
        return Ok(());
    }
    if stack.iter().any(|s| s == name) {
        return Err(Error::InvalidSchema {
            revision: revision.to_owned(),
            message: format!("allOf cycle through {}", stack.join(" → ")),
        });
    }
    stack.push(name.to_owned());
    let Some(mut def) = defs.get(name).cloned() else {
        stack.pop();
        return Ok(());
    };
    // Flatten the definitions this one inherits from first.
    let mut deps = Vec::new();
    collect_all_of_refs(&def, &mut deps);
    for dep in deps {
        flatten_def(revision, defs, &dep, done, stack)?;
    }
    flatten_node(&mut def, defs);
    defs.insert(name.to_owned(), def);
    stack.pop();
    done.insert(name.to_owned());
    Ok(())
}

fn collect_all_of_refs(value: &Value, out: &mut Vec<String>) {
    if let Some(Value::Array(members)) = value.get("allOf") {
        out.extend(members.iter().filter_map(ref_target).map(str::to_owned));
    }
    for_each_subschema(value, &mut |sub| collect_all_of_refs(sub, out));
}

fn flatten_node(value: &mut Value, defs: &Definitions) {
    for_each_subschema_mut(value, &mut |sub| flatten_node(sub, defs));
    let Value::Object(map) = value else { return };
    if let Some(Value::Array(members)) = map.remove("allOf") {
        let mut merged = Map::new();
        for member in members {
            let member = match ref_target(&member) {
                Some(target) => defs.get(target).cloned().unwrap_or(Value::Null),
                None => member,
            };
            if let Value::Object(m) = member {
                merge_object_schema(&mut merged, m);
            }
        }
        // The node's own keywords (description, extra properties) win.
        let own = std::mem::take(map);
        merge_object_schema(&mut merged, own);
        *map = merged;
    }
}

fn merge_object_schema(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(props)) => {
                for (p, s) in props {
                    existing.insert(p, s);
                }
            }
            ("required", Some(Value::Array(existing)), Value::Array(req)) => {
                for r in req {
                    if !existing.contains(&r) {
                        existing.push(r);
                    }
                }
            }
            (_, _, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// Gives inline types that the IR and the union dispatch need to name a definition of
/// their own: request/notification `params`, and unions of refs in properties or array
/// items. typify would invent the same names; hoisting makes them known, not guessed.
fn hoist_inline_types(defs: &mut Definitions, hoisted: &mut BTreeSet<String>) {
    let mut work: Vec<String> = defs.keys().cloned().collect();
    while let Some(name) = work.pop() {
        let Some(mut def) = defs.get(&name).cloned() else {
            continue;
        };
        let is_message = def
            .pointer("/properties/method/const")
            .is_some_and(Value::is_string);
        let Some(Value::Object(props)) = def.get_mut("properties") else {
            continue;
        };
        let mut changed = false;
        for (prop, schema) in props.iter_mut() {
            let base = format!("{name}{}", prop.to_upper_camel_case());
            let hoist_whole = (prop == "params" && is_message && is_inline_object(schema))
                || is_union_of_refs(schema);
            let (slot, wanted) = if hoist_whole {
                (schema, base)
            } else {
                match schema.get_mut("items") {
                    Some(items) if is_union_of_refs(items) => (items, format!("{base}Item")),
                    _ => continue,
                }
            };
            let chosen = unique_name(defs, &wanted, slot);
            let inline = std::mem::replace(slot, ref_to(&chosen));
            if !defs.contains_key(&chosen) {
                defs.insert(chosen.clone(), inline);
                hoisted.insert(chosen.clone());
                work.push(chosen);
            }
            changed = true;
        }
        if changed {
            defs.insert(name, def);
        }
    }
}

fn unique_name(defs: &Definitions, wanted: &str, schema: &Value) -> String {
    let mut candidate = wanted.to_owned();
    let mut n = 2;
    while let Some(existing) = defs.get(&candidate) {
        if existing == schema {
            break;
        }
        candidate = format!("{wanted}{n}");
        n += 1;
    }
    candidate
}

fn is_inline_object(schema: &Value) -> bool {
    schema.get("$ref").is_none()
        && (schema.get("properties").is_some()
            || schema.get("type").and_then(Value::as_str) == Some("object"))
}

/// A union with at least one ref member whose other members differ by JSON kind: worth a
/// named type of its own so that it gets a dispatching `Deserialize`.
fn is_union_of_refs(schema: &Value) -> bool {
    ["anyOf", "oneOf"].iter().any(|k| {
        schema.get(*k).and_then(Value::as_array).is_some_and(|m| {
            m.len() > 1 && m.iter().any(|s| ref_target(s).is_some()) && distinguishable_by_kind(m)
        })
    })
}

/// Messages and results keep keys their definition does not declare; every other object
/// drops them unless the schema itself declares it open (`_meta`, capability objects,
/// JSON Schema objects). Why:
/// - requests and notifications (a `method` discriminator) pass through routers and
///   proxies whole, and the older revisions define them without the `jsonrpc`/`id` of
///   their envelope (the official 2026-07-28 examples carry such keys);
/// - results (`…Result`): every revision declares the base `Result` open
///   (`additionalProperties: {}`), and a client must not lose what a newer server sends;
/// - everything inside (content, tools, resources, capabilities) is closed, so that what
///   the runtime builds for a revision has exactly that revision's shape. The runtime
///   never fills the kept-keys map of an outgoing message.
fn open_messages(defs: &mut Definitions) {
    for (name, def) in defs.iter_mut() {
        let is_message = def
            .pointer("/properties/method/const")
            .is_some_and(Value::is_string);
        let is_result = name.ends_with("Result") && def.get("properties").is_some();
        if let (true, Value::Object(map)) = (is_message || is_result, def) {
            map.entry("additionalProperties")
                .or_insert_with(|| json!({}));
        }
    }
}

/// Every type a `_meta` member refers to keeps the keys it does not declare. A `_meta`
/// is open by definition (`MetaObject`: "clients and servers use [it] to attach
/// additional metadata", any key that follows the naming rules), but 2026-07-28 types it
/// as `RequestMetaObject`/`ResultMetaObject`/`NotificationMetaObject`, objects with a
/// few reserved properties and no `additionalProperties`, where the older revisions
/// wrote `additionalProperties: {}` on theirs. Closed, they would drop every key an
/// application sets (a trace context, MCP Apps' `ui`) from what is sent in 2026-07-28.
/// Runs after hoisting, so an inline `_meta` object is a named definition by then.
fn open_meta_objects(defs: &mut Definitions) {
    let mut targets = BTreeSet::new();
    for def in defs.values() {
        if let Some(target) = def.pointer("/properties/_meta").and_then(ref_target) {
            targets.insert(target.to_owned());
        }
    }
    for target in targets {
        if let Some(Value::Object(map)) = defs.get_mut(&target) {
            if map.contains_key("properties") {
                map.entry("additionalProperties")
                    .or_insert_with(|| json!({}));
            }
        }
    }
}

/// Properties whose value is a JSON Schema document that the protocol carries verbatim.
const JSON_SCHEMA_DOCUMENTS: [&str; 2] = ["inputSchema", "outputSchema"];

/// A tool's `inputSchema`/`outputSchema` is a JSON Schema document of the tool author's
/// (any keyword: `$schema`, `$defs`, `allOf`, `if`/`then`/`else`, `additionalProperties`):
/// the MCP schema only constrains a few keywords, and dropping the others would change
/// what the tool accepts. They keep every key. (`requestedSchema` of elicitation stays
/// closed: the spec restricts it to a flat subset.)
fn open_json_schema_documents(defs: &mut Definitions) {
    for def in defs.values_mut() {
        let Some(Value::Object(props)) = def.get_mut("properties") else {
            continue;
        };
        for name in JSON_SCHEMA_DOCUMENTS {
            if let Some(Value::Object(schema)) = props.get_mut(name) {
                if schema.contains_key("properties") || schema.get("type") == Some(&json!("object"))
                {
                    schema
                        .entry("additionalProperties")
                        .or_insert_with(|| json!({}));
                }
            }
        }
    }
}

/// `const` becomes a one-value `enum`, which typify turns into a typed discriminator
/// (it ignores `const`). All `"jsonrpc": "2.0"` fields share one definition.
fn consts_to_enums(defs: &mut Definitions, hoisted: &mut BTreeSet<String>) {
    let mut uses_jsonrpc = false;
    for def in defs.values_mut() {
        if let Some(Value::Object(props)) = def.get_mut("properties") {
            if let Some(jsonrpc) = props.get_mut("jsonrpc") {
                if jsonrpc.get("const") == Some(&json!("2.0")) {
                    *jsonrpc = ref_to(JSONRPC_VERSION_DEF);
                    uses_jsonrpc = true;
                }
            }
        }
        const_walk(def);
    }
    if uses_jsonrpc && !defs.contains_key(JSONRPC_VERSION_DEF) {
        defs.insert(
            JSONRPC_VERSION_DEF.to_owned(),
            json!({
                "description": "The JSON-RPC protocol version; always \"2.0\".",
                "type": "string",
                "enum": ["2.0"],
            }),
        );
        hoisted.insert(JSONRPC_VERSION_DEF.to_owned());
    }
}

fn const_walk(value: &mut Value) {
    for_each_subschema_mut(value, &mut const_walk);
    let Value::Object(map) = value else { return };
    if let Some(c) = map.remove("const") {
        if !map.contains_key("type") {
            let ty = match &c {
                Value::String(_) => Some("string"),
                Value::Bool(_) => Some("boolean"),
                Value::Number(n) if n.is_f64() => Some("number"),
                Value::Number(_) => Some("integer"),
                _ => None,
            };
            if let Some(ty) = ty {
                map.insert("type".into(), json!(ty));
            }
        }
        map.insert("enum".into(), json!([c]));
    }
}

/// `anyOf` of refs becomes `oneOf` (typify otherwise builds a struct of optional
/// `subtype_N` fields that never fills the right member), with catch-all members (objects
/// with no required property) moved last so that the untagged fallback tries them last.
fn any_of_to_one_of(defs: &mut Definitions) {
    let snapshot = defs.clone();
    for def in defs.values_mut() {
        any_of_walk(def, &snapshot);
    }
}

fn any_of_walk(value: &mut Value, defs: &Definitions) {
    for_each_subschema_mut(value, &mut |sub| any_of_walk(sub, defs));
    let Value::Object(map) = value else { return };
    let convert = matches!(map.get("anyOf"), Some(Value::Array(m)) if distinguishable_by_kind(m));
    if convert {
        if let Some(Value::Array(mut members)) = map.remove("anyOf") {
            // Stable: only catch-alls move.
            members.sort_by_key(|m| is_catch_all(m, defs));
            map.insert("oneOf".into(), Value::Array(members));
        }
    }
}

/// Members that are refs (to objects) or schemas of pairwise distinct non-object JSON
/// types can be told apart by the kind of JSON value alone, so `oneOf` is exact.
fn distinguishable_by_kind(members: &[Value]) -> bool {
    let mut seen = BTreeSet::new();
    members.iter().all(|m| {
        if ref_target(m).is_some() {
            return true;
        }
        match m.get("type") {
            // Several array members are allowed (batch request, batch response): they
            // are tried in order.
            Some(Value::String(t)) if t == "array" => true,
            Some(Value::String(t)) => t != "object" && seen.insert(t.clone()),
            Some(Value::Array(ts)) => ts.iter().all(|t| {
                t.as_str()
                    .is_some_and(|t| t != "object" && seen.insert(t.to_owned()))
            }),
            _ => false,
        }
    })
}

fn is_catch_all(member: &Value, defs: &Definitions) -> bool {
    let target = ref_target(member).and_then(|t| resolve_alias(defs, t));
    match target {
        Some(def) => def
            .get("required")
            .and_then(Value::as_array)
            .is_none_or(|r| r.iter().all(|k| k == "_meta" || k == "resultType")),
        None => false,
    }
}

/// Follows definitions that are nothing but a `$ref` to another one (e.g. `EmptyResult`).
pub fn resolve_alias<'a>(defs: &'a Definitions, name: &str) -> Option<&'a Value> {
    let mut current = defs.get(name)?;
    for _ in 0..16 {
        match ref_target(current) {
            Some(next) if current.as_object().is_some_and(|m| m.len() <= 2) => {
                current = defs.get(next)?;
            }
            _ => break,
        }
    }
    Some(current)
}

/// Makes every bare URL in the schema's descriptions (they become rustdoc comments) an
/// autolink, `<https://…>`: rustdoc renders a bare URL as text and warns about it
/// (`rustdoc::bare_urls`), so `cargo doc` of the generated crate would not be clean.
fn autolink_descriptions(schema: &mut Value) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = autolink_bare_urls(text);
    }
    for_each_subschema_mut(schema, &mut autolink_descriptions);
}

/// `text` with each `http://` or `https://` URL that is not already a link target
/// (`<…>`, `](…)`) wrapped in `<…>`; a sentence's final punctuation stays outside.
pub(crate) fn autolink_bare_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(at) = ["https://", "http://"]
        .iter()
        .filter_map(|scheme| rest.find(scheme))
        .min()
    {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let end = from
            .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '`'))
            .unwrap_or(from.len());
        let url = from[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
        let linked = before.ends_with('<') || before.ends_with("](");
        if linked {
            out.push_str(url);
        } else {
            out.push('<');
            out.push_str(url);
            out.push('>');
        }
        rest = &from[url.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod autolink_tests {
    use super::autolink_bare_urls;

    #[test]
    fn bare_urls_become_autolinks_and_links_stay() {
        assert_eq!(
            autolink_bare_urls("As described in https://www.jsonrpc.org/specification#batch."),
            "As described in <https://www.jsonrpc.org/specification#batch>."
        );
        assert_eq!(
            autolink_bare_urls("Levels (https://x.org/a), then http://y.org"),
            "Levels (<https://x.org/a>), then <http://y.org>"
        );
        for linked in [
            "see <https://x.org/a>.",
            "see [x](https://x.org/a).",
            "no URL here",
        ] {
            assert_eq!(autolink_bare_urls(linked), linked);
        }
    }
}
