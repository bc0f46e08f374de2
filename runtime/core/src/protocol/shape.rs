//! Turning the author's revision-neutral answers into the negotiated revision's
//! messages. Every outgoing result is built as neutral JSON (the newest shape), adjusted
//! by the written downgrade rules below, then *projected* through the revision's generated
//! type: decoding drops every field that revision does not define (its types are closed,
//! see ARCHITECTURE.md), and the top-level kept-keys map is emptied before encoding. So
//! what leaves is an instance of that revision's type, with nothing it does not define.
//!
//! Downgrade rules (listed in `runtime/core/SHAPING.md`, tested in `tests/protocol_changes.rs`
//! and `tests/transcripts.rs`):
//! - audio content before 2025-03-26 → a text block saying audio was omitted;
//! - a resource link before 2025-06-18 → a text block naming the resource and its URI
//!   (the client can still `resources/read` it);
//! - structured tool output before 2025-06-18 (or, before 2026-07-28, structured output
//!   that is not an object) → no `structuredContent`; if the content has no text block,
//!   the JSON of the structured output is added as one (the text fallback the spec asks
//!   tools to provide); an output schema that is not an object schema is not listed
//!   before 2026-07-28;
//! - 2026-07-28 results carry `resultType: "complete"`, list and read results `ttlMs` and
//!   `cacheScope`, and `_meta` names the server; older revisions get none of these.
//!
//! Fields a revision lacks (`title`, `icons`, `annotations`, `outputSchema`, …) need no
//! rule: projection drops them. An extension's results are projected through the
//! extension's generated types in the same way ([`tasks_extension`]).

use mcp_generated::support::FromValue;
use mcp_generated::KeepsUnknownKeys;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::model::{
    Completion, Content, Implementation, Prompt, PromptResult, Resource, ResourceContents,
    ResourceTemplate, Tool, ToolResult,
};
use crate::protocol::version::{ProtocolVersion, META_SERVER_INFO};
use crate::wire::{Encoded, RpcError, ENVELOPE_ROOM};

// Generated from `schema/revisions.toml`: dispatches on a revision known at run time,
// over every revision or over those with a given behaviour flag.
pub use mcp_generated::by_revision;

mod lifecycle;
mod notifications;
#[cfg(feature = "tasks")]
pub mod tasks_extension;

pub use lifecycle::{discover, implementation, initialize, server_capabilities};
pub use notifications::{log_message, number, progress};

/// Projects a neutral value through a closed generated type.
pub fn project<T: FromValue + Serialize>(what: &str, value: Value) -> Result<Value, RpcError> {
    // Encoded and read back rather than `serde_json::to_value`: the same value, and each
    // generated type's `Serialize` is compiled for one serializer, the wire encoder,
    // instead of three (serde_json's value serializer and, with `raw_value`, its raw-value
    // emitter for every field), which a user's debug build would compile for every type
    // (BENCHMARKS.md §4.1). `project` serves small, rare values (capabilities,
    // server info, progress and log params, asks), never a tool's result.
    // `FromValue` takes the neutral value apart; `serde_json::from_value` would rebuild
    // it first. Errors are matched, not `map_err`ed: a closure per generated type and
    // revision is compiled code too.
    let typed = match T::from_value(value) {
        Ok(typed) => typed,
        Err(e) => return Err(shaping_error(what, &e)),
    };
    let json = match crate::wire::encode::to_vec(&typed) {
        Ok(json) => json,
        Err(e) => return Err(shaping_error(what, &e)),
    };
    serde_json::from_slice(&json).map_err(|e| shaping_error(what, &e))
}

/// Projects a neutral result through a generated type that keeps unknown keys, emptying
/// them first (an outgoing message carries only what its revision defines), and encodes
/// the typed value straight to its JSON text.
pub fn project_open<T: FromValue + Serialize + KeepsUnknownKeys>(
    what: &str,
    value: Value,
) -> Result<Encoded, RpcError> {
    project_stamped::<T>(what, value, MetaLeft::Nothing, 0)
}

/// Room for the encoded text beyond the large strings a result is known to carry.
const SMALL_PARTS: usize = 256;

/// [`project_open`], then adds what [`stamp`] left to the encoded text. `large` is the
/// length of the large strings the result carries (text, contents), if known: the
/// buffer starts that large rather than doubling its way there, a copy per step.
fn project_stamped<T: FromValue + Serialize + KeepsUnknownKeys>(
    what: &str,
    value: Value,
    left: MetaLeft<'_>,
    large: usize,
) -> Result<Encoded, RpcError> {
    // As in `project`, matched rather than `map_err`ed (this runs per generated type).
    let mut typed = match T::from_value(value) {
        Ok(typed) => typed,
        Err(e) => return Err(shaping_error(what, &e)),
    };
    typed.unknown_keys_mut().clear();
    encode_typed(what, &typed, left, large)
}

/// Encodes a typed result whose unknown keys are already emptied, then adds what
/// [`stamp`] left to the encoded text.
fn encode_typed<T: Serialize>(
    what: &str,
    typed: &T,
    left: MetaLeft<'_>,
    large: usize,
) -> Result<Encoded, RpcError> {
    // After room for the response's envelope, written there without copying the result.
    match crate::wire::encode::to_vec_after_room(typed, ENVELOPE_ROOM, large + SMALL_PARTS) {
        Ok(json) => Ok(stamped(json, left)),
        Err(e) => Err(shaping_error(what, &e)),
    }
}

/// The encoded result (after [`ENVELOPE_ROOM`] free bytes) with what [`stamp`] left
/// added.
fn stamped(mut json: Vec<u8>, left: MetaLeft<'_>) -> Encoded {
    if let MetaLeft::ServerInfo(server) = left {
        append_server_info(&mut json, server);
    }
    Encoded::after_room(json, ENVELOPE_ROOM)
}

/// Appends `"_meta": {"io.modelcontextprotocol/serverInfo": {name, version}}` to an
/// encoded JSON object that has no `_meta` member. Written as text rather than inserted
/// into the result before projection: it is the same few bytes in every result, and
/// building, hashing, projecting and encoding it as JSON values per answer cost more
/// than the rest of a small result (`tests/schema_conformance.rs` validates the output
/// against the revision's schema).
fn append_server_info(json: &mut Vec<u8>, server: &Implementation) {
    if json.last() != Some(&b'}') {
        return;
    }
    json.pop();
    if json.last() != Some(&b'{') {
        json.push(b',');
    }
    json.extend_from_slice(b"\"_meta\":{\"");
    // The key is plain ASCII, nothing to escape.
    json.extend_from_slice(META_SERVER_INFO.as_bytes());
    json.extend_from_slice(b"\":{\"name\":");
    crate::wire::encode::write_str(json, &server.name);
    json.extend_from_slice(b",\"version\":");
    crate::wire::encode::write_str(json, &server.version);
    json.extend_from_slice(b"}}}");
}

fn shaping_error(what: &str, e: &dyn std::fmt::Display) -> RpcError {
    RpcError::internal(format!(
        "cannot express {what} in this protocol revision: {e}"
    ))
}

fn neutral<T: Serialize>(value: &T) -> Value {
    // Model types serialize infallibly (no maps with non-string keys, no failing impls).
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Content blocks for revision `v`, after the downgrade rules. The blocks are moved, not
/// copied: a tool's text is its result's largest part.
pub fn content(v: ProtocolVersion, blocks: impl IntoIterator<Item = Content>) -> Vec<Value> {
    let f = v.features();
    blocks
        .into_iter()
        .map(|block| match block {
            // The common block, built directly (the same JSON `neutral` gives).
            Content::Text {
                text,
                annotations: None,
                meta: None,
            } => {
                let mut block = Map::with_capacity(2);
                block.insert("type".into(), Value::String("text".into()));
                block.insert("text".into(), Value::String(text));
                Value::Object(block)
            }
            Content::Audio { mime_type, .. } if !f.audio_content => json!({
                "type": "text",
                "text": format!("[audio content ({mime_type}) omitted: not supported by MCP {v}]"),
            }),
            Content::ResourceLink(link) if !f.resource_links => json!({
                "type": "text",
                "text": format!("Resource: {} <{}>", link.title.as_deref().unwrap_or(&link.name), link.uri),
            }),
            other => neutral(&other),
        })
        .collect()
}

/// What [`stamp`] left for the encoded text to carry.
#[must_use]
enum MetaLeft<'a> {
    Nothing,
    /// The server's identity under `_meta` (the result had no `_meta` of its own).
    ServerInfo(&'a Implementation),
}

/// Adds what every 2026-07-28 result carries: `resultType`, the server's identity in
/// `_meta`, and (for lists and reads) cache hints. The identity is left to the encoded
/// text when the result has no `_meta` yet (see [`append_server_info`]).
fn stamp<'a>(
    v: ProtocolVersion,
    result: &mut Map<String, Value>,
    server: &'a Implementation,
    cache: Option<CacheHint>,
) -> MetaLeft<'a> {
    let f = v.features();
    if f.result_type {
        result.insert("resultType".into(), Value::String("complete".into()));
    }
    if let (true, Some(hint)) = (f.cache_hints, cache) {
        result.insert("ttlMs".into(), json!(hint.ttl_ms));
        result.insert(
            "cacheScope".into(),
            json!(if hint.public { "public" } else { "private" }),
        );
    }
    if !f.server_info_in_meta {
        return MetaLeft::Nothing;
    }
    // Results are small objects: the key is found by comparison, not by hashing it.
    let meta = result
        .iter_mut()
        .find(|(k, _)| k.as_str() == "_meta")
        .map(|(_, v)| v);
    match meta {
        None => MetaLeft::ServerInfo(server),
        Some(Value::Object(meta)) => {
            meta.insert(
                META_SERVER_INFO.into(),
                json!({"name": server.name, "version": server.version}),
            );
            MetaLeft::Nothing
        }
        Some(_) => MetaLeft::Nothing,
    }
}

/// How long, and by whom, a 2026-07-28 list or read result may be cached: its `ttlMs`
/// and `cacheScope` (see [`ServerBuilder::list_cache_hint`](crate::ServerBuilder::list_cache_hint)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheHint {
    /// Milliseconds the result stays fresh (`0`: stale at once, fetch again when needed).
    pub ttl_ms: u64,
    /// `public` (no caller-specific data: shared caches may serve it to anyone) or
    /// `private` (only within the same authorization context).
    pub public: bool,
}

impl CacheHint {
    /// The default of lists: `ttlMs: 0`, `public` (a list is fetched again whenever it is
    /// needed, so none is served stale after a change).
    pub const LIST: CacheHint = CacheHint {
        ttl_ms: 0,
        public: true,
    };
    /// The default of reads: `ttlMs: 0`, `private` (a live resource is never cached).
    pub const READ: CacheHint = CacheHint {
        ttl_ms: 0,
        public: false,
    };
    /// Do not cache: `ttlMs: 0`, `private`.
    pub const NONE: CacheHint = CacheHint {
        ttl_ms: 0,
        public: false,
    };

    /// Fresh for `ttl`, for anyone (`cacheScope: public`).
    pub fn public(ttl: std::time::Duration) -> CacheHint {
        CacheHint {
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            public: true,
        }
    }

    /// Fresh for `ttl`, within the caller's authorization context only
    /// (`cacheScope: private`).
    pub fn private(ttl: std::time::Duration) -> CacheHint {
        CacheHint {
            public: false,
            ..CacheHint::public(ttl)
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The result of `tools/call`.
pub fn tool_result(
    v: ProtocolVersion,
    server: &Implementation,
    r: ToolResult,
) -> Result<Encoded, RpcError> {
    match plain_text_result(v, server, &r) {
        Some(encoded) => Ok(encoded),
        None => projected_tool_result(v, server, r),
    }
}

/// A tool result of plain text blocks only (no annotations, no structured output: the
/// usual answer), written straight as the text its projection gives — the same bytes in
/// every revision, since each defines `TextContent` with `text` and `type` and a
/// `CallToolResult` with `content`, `isError` and (by the flag `result_type`)
/// `resultType`, in that order. Building the neutral map, decoding it into the
/// revision's type and encoding that cost ~5k instructions per call for these few bytes;
/// `tests::plain_text_results_are_the_projected_bytes` holds the two paths together for
/// every revision. `None` for any other result, which is projected.
fn plain_text_result(
    v: ProtocolVersion,
    server: &Implementation,
    r: &ToolResult,
) -> Option<Encoded> {
    if r.structured.is_some() || r.meta.is_some() {
        return None;
    }
    let mut large = 0;
    for block in &r.content {
        match block {
            Content::Text {
                text,
                annotations: None,
                meta: None,
            } => large += text.len(),
            _ => return None,
        }
    }
    let f = v.features();
    let mut json = Vec::with_capacity(ENVELOPE_ROOM + large + SMALL_PARTS);
    json.resize(ENVELOPE_ROOM, b' ');
    json.extend_from_slice(b"{\"content\":[");
    for (i, block) in r.content.iter().enumerate() {
        if let Content::Text { text, .. } = block {
            if i > 0 {
                json.push(b',');
            }
            json.extend_from_slice(b"{\"text\":");
            crate::wire::encode::write_str(&mut json, text);
            json.extend_from_slice(b",\"type\":\"text\"}");
        }
    }
    json.push(b']');
    if r.is_error {
        json.extend_from_slice(b",\"isError\":true");
    }
    if f.result_type {
        json.extend_from_slice(b",\"resultType\":\"complete\"");
    }
    json.push(b'}');
    let left = if f.server_info_in_meta {
        MetaLeft::ServerInfo(server)
    } else {
        MetaLeft::Nothing
    };
    Some(stamped(json, left))
}

/// [`tool_result`] through the revision's generated `CallToolResult`.
fn projected_tool_result(
    v: ProtocolVersion,
    server: &Implementation,
    r: ToolResult,
) -> Result<Encoded, RpcError> {
    let f = v.features();
    let has_text = r.content.iter().any(|c| matches!(c, Content::Text { .. }));
    let large: usize = r
        .content
        .iter()
        .map(|c| match c {
            Content::Text { text, .. } => text.len(),
            _ => 0,
        })
        .sum();
    let mut blocks = content(v, r.content);
    // Room for content, structuredContent, isError, _meta and resultType: no growth on
    // insert.
    let mut result = Map::with_capacity(5);
    if let Some(meta) = r.meta {
        result.insert("_meta".into(), Value::Object(*meta));
    }
    if let Some(structured) = r.structured {
        // 2025-06-18 and 2025-11-25 allow only an object here; 2026-07-28 any JSON value.
        let expressible = f.structured_output && (structured.is_object() || f.structured_any_json);
        if expressible {
            result.insert("structuredContent".into(), structured);
        } else if !has_text {
            blocks.push(json!({"type": "text", "text": structured.to_string()}));
        }
    }
    result.insert("content".into(), Value::Array(blocks));
    if r.is_error {
        result.insert("isError".into(), json!(true));
    }
    let left = stamp(v, &mut result, server, None);
    by_revision!(v, |m| project_stamped::<m::CallToolResult>(
        "a tool result",
        Value::Object(result),
        left,
        large
    ))
}

/// A list result before projection: the items under `key`, the next cursor, and what
/// 2026-07-28 adds to a list (list cache hints).
fn list_result<'a>(
    v: ProtocolVersion,
    server: &'a Implementation,
    key: &str,
    items: Vec<Value>,
    next_cursor: Option<String>,
    hint: CacheHint,
) -> (Value, MetaLeft<'a>) {
    let mut result = Map::new();
    result.insert(key.into(), Value::Array(items));
    if let Some(c) = next_cursor {
        result.insert("nextCursor".into(), json!(c));
    }
    let left = stamp(v, &mut result, server, Some(hint));
    (Value::Object(result), left)
}

/// The result of `tools/list`.
pub fn list_tools(
    v: ProtocolVersion,
    server: &Implementation,
    tools: &[&Tool],
    next_cursor: Option<String>,
    hint: CacheHint,
) -> Result<Encoded, RpcError> {
    let f = v.features();
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut tool = neutral(t);
            // Before 2026-07-28 an output schema must be an object schema: a tool whose
            // schema is not one is listed without it (its results then fall back to text).
            let object_schema = t
                .output_schema
                .as_ref()
                .is_some_and(|s| s.get("type") == Some(&json!("object")));
            if !f.structured_any_json && !object_schema {
                if let Value::Object(obj) = &mut tool {
                    obj.remove("outputSchema");
                }
            }
            tool
        })
        .collect();
    let result = list_result(v, server, "tools", tools, next_cursor, hint);
    let (result, left) = result;
    by_revision!(v, |m| project_stamped::<m::ListToolsResult>(
        "the tool list",
        result,
        left,
        0
    ))
}

/// The result of `resources/list`.
pub fn list_resources(
    v: ProtocolVersion,
    server: &Implementation,
    resources: &[&Resource],
    next_cursor: Option<String>,
    hint: CacheHint,
) -> Result<Encoded, RpcError> {
    let items = resources.iter().map(neutral).collect();
    let result = list_result(v, server, "resources", items, next_cursor, hint);
    let (result, left) = result;
    by_revision!(v, |m| project_stamped::<m::ListResourcesResult>(
        "the resource list",
        result,
        left,
        0
    ))
}

/// The result of `resources/templates/list`.
pub fn list_resource_templates(
    v: ProtocolVersion,
    server: &Implementation,
    templates: &[&ResourceTemplate],
    next_cursor: Option<String>,
    hint: CacheHint,
) -> Result<Encoded, RpcError> {
    let items = templates.iter().map(neutral).collect();
    let result = list_result(v, server, "resourceTemplates", items, next_cursor, hint);
    let (result, left) = result;
    by_revision!(v, |m| project_stamped::<m::ListResourceTemplatesResult>(
        "the resource template list",
        result,
        left,
        0
    ))
}

/// The result of `resources/read`.
pub fn read_resource(
    v: ProtocolVersion,
    server: &Implementation,
    contents: Vec<ResourceContents>,
    hint: CacheHint,
) -> Result<Encoded, RpcError> {
    let large: usize = contents
        .iter()
        .map(|c| match c {
            ResourceContents::Text { text, .. } => text.len(),
            ResourceContents::Blob { blob, .. } => blob.len(),
        })
        .sum();
    // Inserted as a value: `json!` would serialize the contents into a new `Value`, a
    // copy of every text of a read, for nothing.
    let mut result = Map::with_capacity(4);
    let contents: Vec<Value> = contents.into_iter().map(contents_value).collect();
    result.insert("contents".into(), Value::Array(contents));
    let left = stamp(v, &mut result, server, Some(hint));
    by_revision!(v, |m| project_stamped::<m::ReadResourceResult>(
        "the resource contents",
        Value::Object(result),
        left,
        large
    ))
}

/// Contents as neutral JSON, moving the text rather than copying it (contents can be
/// large: this is the one copy of a big resource the shaping would otherwise add).
fn contents_value(contents: ResourceContents) -> Value {
    let (uri, mime_type, key, body, meta) = match contents {
        ResourceContents::Text {
            uri,
            mime_type,
            text,
            meta,
        } => (uri, mime_type, "text", text, meta),
        ResourceContents::Blob {
            uri,
            mime_type,
            blob,
            meta,
        } => (uri, mime_type, "blob", blob, meta),
    };
    let mut map = Map::new();
    map.insert("uri".into(), Value::String(uri));
    if let Some(m) = mime_type {
        map.insert("mimeType".into(), Value::String(m));
    }
    map.insert(key.into(), Value::String(body));
    if let Some(meta) = meta {
        map.insert("_meta".into(), Value::Object(*meta));
    }
    Value::Object(map)
}

/// The result of `prompts/list`.
pub fn list_prompts(
    v: ProtocolVersion,
    server: &Implementation,
    prompts: &[&Prompt],
    next_cursor: Option<String>,
    hint: CacheHint,
) -> Result<Encoded, RpcError> {
    let items = prompts.iter().map(neutral).collect();
    let result = list_result(v, server, "prompts", items, next_cursor, hint);
    let (result, left) = result;
    by_revision!(v, |m| project_stamped::<m::ListPromptsResult>(
        "the prompt list",
        result,
        left,
        0
    ))
}

/// The result of `prompts/get`.
pub fn get_prompt(
    v: ProtocolVersion,
    server: &Implementation,
    prompt: &PromptResult,
) -> Result<Encoded, RpcError> {
    let messages: Vec<Value> = prompt
        .messages
        .iter()
        .map(|msg| {
            let block = content(v, [msg.content.clone()])
                .pop()
                .unwrap_or(Value::Null);
            json!({"role": msg.role, "content": block})
        })
        .collect();
    // Moved in, not through `json!` (which would copy every message once more).
    let mut result = Map::with_capacity(4);
    result.insert("messages".into(), Value::Array(messages));
    if let Some(d) = &prompt.description {
        result.insert("description".into(), json!(d));
    }
    if let Some(meta) = &prompt.meta {
        result.insert("_meta".into(), Value::Object(meta.clone()));
    }
    let left = stamp(v, &mut result, server, None);
    by_revision!(v, |m| project_stamped::<m::GetPromptResult>(
        "the prompt",
        Value::Object(result),
        left,
        0
    ))
}

/// The result of `completion/complete` (at most 100 values, as the spec requires).
pub fn complete(
    v: ProtocolVersion,
    server: &Implementation,
    completion: &Completion,
) -> Result<Encoded, RpcError> {
    let mut c = completion.clone();
    if c.values.len() > 100 {
        c.total.get_or_insert(c.values.len() as u64);
        c.values.truncate(100);
        c.has_more = Some(true);
    }
    let meta = c.meta.take();
    let mut result = object(json!({"completion": c}));
    if let Some(meta) = meta {
        result.insert("_meta".into(), Value::Object(meta));
    }
    let left = stamp(v, &mut result, server, None);
    by_revision!(v, |m| project_stamped::<m::CompleteResult>(
        "the completion",
        Value::Object(result),
        left,
        0
    ))
}

/// An empty result (`ping`, `logging/setLevel`, subscriptions), exactly `{}` in legacy
/// revisions.
pub fn empty(v: ProtocolVersion, server: &Implementation) -> Encoded {
    let f = v.features();
    if !(f.result_type || f.server_info_in_meta) {
        return Encoded::empty_object();
    }
    let mut result = Map::new();
    let left = stamp(v, &mut result, server, None);
    // A `Value` always encodes (its map keys are strings).
    let mut json = crate::wire::encode::to_vec(&Value::Object(result)).unwrap_or_default();
    if let MetaLeft::ServerInfo(server) = left {
        append_server_info(&mut json, server);
    }
    Encoded::from_json(json)
}

/// The result of a custom method (an extension's, outside the specification): the
/// handler's JSON object as it is — no revision defines its type — with what every
/// 2026-07-28 result carries (`resultType`, the server's identity in `_meta`).
pub fn custom_result(
    v: ProtocolVersion,
    server: &Implementation,
    result: Value,
) -> Result<Encoded, RpcError> {
    let mut result = match result {
        Value::Object(result) => result,
        other => {
            return Err(RpcError::internal(format!(
                "a result must be a JSON object, not {other}"
            )))
        }
    };
    let left = stamp(v, &mut result, server, None);
    encode_typed("a custom method's result", &Value::Object(result), left, 0)
}

/// An `InputRequiredResult` (modern revisions): what the handler asked, and the signed
/// state the client echoes on its retry.
pub fn input_required(
    v: ProtocolVersion,
    server: &Implementation,
    input_requests: Value,
    request_state: String,
) -> Result<Encoded, RpcError> {
    let mut result =
        object(json!({"inputRequests": input_requests, "requestState": request_state}));
    let left = stamp(v, &mut result, server, None);
    result.insert("resultType".into(), json!("input_required"));
    by_revision!(v, where modern, |m| project_stamped::<m::InputRequiredResult>(
        "an input-required result",
        Value::Object(result),
        left,
        0
    ), else Err(RpcError::internal(format!(
        "input_required does not exist in MCP {v}"
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Annotations;

    /// The written plain-text tool result is, byte for byte, what projecting it through
    /// each revision's `CallToolResult` gives: texts that need escapes, several blocks,
    /// none, an error; and results the fast path leaves to projection.
    #[test]
    fn plain_text_results_are_the_projected_bytes() {
        let server = Implementation::new("srv \"q\"", "1.0.0");
        let text = |t: &str| Content::text(t);
        let results = [
            ToolResult::text("It will be sunny."),
            ToolResult::text("quote \" backslash \\ newline \n tab \t nul \u{0} é ☀"),
            ToolResult {
                content: vec![text("one"), text(""), text("three")],
                structured: None,
                is_error: false,
                meta: None,
            },
            ToolResult {
                content: vec![],
                structured: None,
                is_error: false,
                meta: None,
            },
            ToolResult {
                content: vec![text("failed")],
                structured: None,
                is_error: true,
                meta: None,
            },
        ];
        for v in ProtocolVersion::ALL {
            for r in &results {
                let fast = plain_text_result(v, &server, r).expect("plain text");
                let projected = projected_tool_result(v, &server, r.clone()).expect("projected");
                assert_eq!(
                    String::from_utf8_lossy(fast.as_bytes()),
                    String::from_utf8_lossy(projected.as_bytes()),
                    "{v}"
                );
            }
            let annotated =
                ToolResult::content(vec![Content::text("x").annotations(Annotations::default())]);
            assert!(plain_text_result(v, &server, &annotated).is_none());
            let structured = ToolResult::text("x").structured(json!({"a": 1}));
            assert!(plain_text_result(v, &server, &structured).is_none());
        }
    }
}
