//! Decoding into the generated types and encoding back is lossless, and what is encoded
//! is valid against the revision's official schema: the official 2026-07-28 examples, and
//! one message per method (with its result) for every older revision.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The official schema document of a revision, from the offline mirror (MCP_SCHEMA_DIR,
/// set by .cargo/config.toml) or the cache.
fn schema_doc(revision: &str) -> Value {
    let layout = mcp_codegen::Layout::workspace();
    let manifest = mcp_codegen::Manifest::load(&layout.manifest_path()).expect("manifest");
    let source = mcp_codegen::SchemaSource::offline(layout.cache_dir());
    let rev = manifest.get(revision).expect("revision in manifest");
    mcp_codegen::load::load(rev, &source)
        .unwrap_or_else(|e| panic!("{e}"))
        .json
}

/// A validator for one named definition of `doc`.
fn validator(doc: &Value, def: &str) -> jsonschema::Validator {
    let key = if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    let mut root = doc.clone();
    root["$ref"] = json!(format!("#/{key}/{def}"));
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("validator for {def}: {e}"))
}

fn assert_valid(doc: &Value, def: &str, instance: &Value, what: &str) {
    let v = validator(doc, def);
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: not a valid {def}: {errors:#?}\n{instance:#}"
    );
}

fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
    what: &str,
) -> Value {
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{what}: decode: {e}\n{value:#}"));
    let back = serde_json::to_value(&typed).unwrap_or_else(|e| panic!("{what}: encode: {e}"));
    // Value equality ignores key order but not number form: 50 and 50.0 differ.
    assert_eq!(&back, value, "{what}: re-encoded value differs");
    back
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

/// The official 2026-07-28 examples, as pinned in `schema/examples/2026-07-28.sha256`:
/// from the cache, or imported from the mirror (`cargo codegen fetch` downloads them).
fn examples_dir() -> PathBuf {
    let layout = mcp_codegen::Layout::workspace();
    let manifest = mcp_codegen::Manifest::load(&layout.manifest_path()).expect("manifest");
    let revision = manifest.get("2026-07-28").expect("2026-07-28 is listed");
    let source = mcp_codegen::SchemaSource::offline(layout.cache_dir());
    mcp_codegen::load::load_examples(revision, &layout.examples_listing("2026-07-28"), &source)
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("2026-07-28 lists its examples")
}

macro_rules! official_examples {
    ($($name:literal => $ty:ident,)*) => {
        #[test]
        fn official_2026_07_28_examples_roundtrip_and_validate() {
            use mcp_generated::v2026_07_28 as r;
            let doc = schema_doc("2026-07-28");
            let dir = examples_dir();
            let mut known = std::collections::BTreeSet::new();
            let mut count = 0;
            $(
                known.insert($name);
                for file in json_files(&dir.join($name)) {
                    let what = format!("{}", file.display());
                    let value = read(&file);
                    let back = roundtrip::<r::$ty>(&value, &what);
                    assert_valid(&doc, $name, &back, &what);
                    count += 1;
                }
            )*
            // Every example folder must be covered: a new upstream type fails here.
            for entry in std::fs::read_dir(&dir).expect("examples") {
                let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
                assert!(known.contains(name.as_str()), "example folder {name} has no type mapping in this test");
            }
            assert_eq!(count, 129, "the pinned schema commit has 129 official examples");
        }
    };
}

official_examples! {
        "AudioContent" => AudioContent,
        "BlobResourceContents" => BlobResourceContents,
        "BooleanSchema" => BooleanSchema,
        "CallToolRequest" => CallToolRequest,
        "CallToolRequestParams" => CallToolRequestParams,
        "CallToolResult" => CallToolResult,
        "CallToolResultResponse" => CallToolResultResponse,
        "CancelledNotification" => CancelledNotification,
        "CancelledNotificationParams" => CancelledNotificationParams,
        "ClientCapabilities" => ClientCapabilities,
        "CompleteRequest" => CompleteRequest,
        "CompleteRequestParams" => CompleteRequestParams,
        "CompleteResult" => CompleteResult,
        "CompleteResultResponse" => CompleteResultResponse,
        "CreateMessageRequest" => CreateMessageRequest,
        "CreateMessageRequestParams" => CreateMessageRequestParams,
        "CreateMessageResult" => CreateMessageResult,
        "DiscoverRequest" => DiscoverRequest,
        "DiscoverResult" => DiscoverResult,
        "DiscoverResultResponse" => DiscoverResultResponse,
        "ElicitRequest" => ElicitRequest,
        "ElicitRequestFormParams" => ElicitRequestFormParams,
        "ElicitRequestURLParams" => ElicitRequestUrlParams,
        "ElicitResult" => ElicitResult,
        "EmbeddedResource" => EmbeddedResource,
        "GetPromptRequest" => GetPromptRequest,
        "GetPromptRequestParams" => GetPromptRequestParams,
        "GetPromptResult" => GetPromptResult,
        "GetPromptResultResponse" => GetPromptResultResponse,
        "HeaderMismatchError" => HeaderMismatchError,
        "ImageContent" => ImageContent,
        "InputRequests" => InputRequests,
        "InputRequiredResult" => InputRequiredResult,
        "InputResponses" => InputResponses,
        "InternalError" => InternalError,
        "InvalidParamsError" => InvalidParamsError,
        "ListPromptsRequest" => ListPromptsRequest,
        "ListPromptsResult" => ListPromptsResult,
        "ListPromptsResultResponse" => ListPromptsResultResponse,
        "ListResourceTemplatesRequest" => ListResourceTemplatesRequest,
        "ListResourceTemplatesResult" => ListResourceTemplatesResult,
        "ListResourceTemplatesResultResponse" => ListResourceTemplatesResultResponse,
        "ListResourcesRequest" => ListResourcesRequest,
        "ListResourcesResult" => ListResourcesResult,
        "ListResourcesResultResponse" => ListResourcesResultResponse,
        "ListRootsRequest" => ListRootsRequest,
        "ListRootsResult" => ListRootsResult,
        "ListToolsRequest" => ListToolsRequest,
        "ListToolsResult" => ListToolsResult,
        "ListToolsResultResponse" => ListToolsResultResponse,
        "LoggingMessageNotification" => LoggingMessageNotification,
        "LoggingMessageNotificationParams" => LoggingMessageNotificationParams,
        "MethodNotFoundError" => MethodNotFoundError,
        "MissingRequiredClientCapabilityError" => MissingRequiredClientCapabilityError,
        "ModelPreferences" => ModelPreferences,
        "NumberSchema" => NumberSchema,
        "PaginatedRequestParams" => PaginatedRequestParams,
        "ParseError" => ParseError,
        "ProgressNotification" => ProgressNotification,
        "ProgressNotificationParams" => ProgressNotificationParams,
        "PromptListChangedNotification" => PromptListChangedNotification,
        "ReadResourceRequest" => ReadResourceRequest,
        "ReadResourceResult" => ReadResourceResult,
        "ReadResourceResultResponse" => ReadResourceResultResponse,
        "Resource" => Resource,
        "ResourceLink" => ResourceLink,
        "ResourceListChangedNotification" => ResourceListChangedNotification,
        "ResourceUpdatedNotification" => ResourceUpdatedNotification,
        "ResourceUpdatedNotificationParams" => ResourceUpdatedNotificationParams,
        "Root" => Root,
        "SamplingMessage" => SamplingMessage,
        "ServerCapabilities" => ServerCapabilities,
        "StringSchema" => StringSchema,
        "SubscriptionsAcknowledgedNotification" => SubscriptionsAcknowledgedNotification,
        "SubscriptionsListenRequest" => SubscriptionsListenRequest,
        "SubscriptionsListenResult" => SubscriptionsListenResult,
        "SubscriptionsListenResultResponse" => SubscriptionsListenResultResponse,
        "TextContent" => TextContent,
        "TextResourceContents" => TextResourceContents,
        "TitledMultiSelectEnumSchema" => TitledMultiSelectEnumSchema,
        "TitledSingleSelectEnumSchema" => TitledSingleSelectEnumSchema,
        "Tool" => Tool,
        "ToolListChangedNotification" => ToolListChangedNotification,
        "ToolResultContent" => ToolResultContent,
        "ToolUseContent" => ToolUseContent,
        "UnsupportedProtocolVersionError" => UnsupportedProtocolVersionError,
        "UntitledMultiSelectEnumSchema" => UntitledMultiSelectEnumSchema,
        "UntitledSingleSelectEnumSchema" => UntitledSingleSelectEnumSchema,
}

/// Keys of a message definition that the message itself carries (older revisions define
/// requests without `jsonrpc`/`id`: those live in the JSON-RPC envelope).
fn own_keys(doc: &Value, def: &str) -> Vec<String> {
    let key = if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    doc[key][def]["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

macro_rules! per_method {
    ($test:ident, $module:ident, $rev:literal) => {
        #[test]
        fn $test() {
            use mcp_generated::$module as r;
            use mcp_generated::{Direction, Kind};
            let doc = schema_doc($rev);
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/messages").join($rev);
            let mut seen = std::collections::BTreeSet::new();
            for file in json_files(&dir) {
                let fixture = read(&file);
                let method = fixture["method"].as_str().expect("method");
                let what = format!("{} ({method})", file.display());
                let info = r::method(method).unwrap_or_else(|| panic!("{what}: unknown method"));
                seen.insert(method.to_owned());
                let message = &fixture["message"];

                // The message alone, as the schema's union parses it (by `method`).
                let keys = own_keys(&doc, info.message);
                let inner: serde_json::Map<String, Value> = message.as_object().expect("object").iter()
                    .filter(|(k, _)| keys.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
                let inner = Value::Object(inner);
                let back = match (info.kind, info.direction) {
                    (Kind::Request, Direction::ServerToClient) => roundtrip::<r::ServerRequest>(&inner, &what),
                    (Kind::Request, _) => roundtrip::<r::ClientRequest>(&inner, &what),
                    (Kind::Notification, Direction::ServerToClient) => roundtrip::<r::ServerNotification>(&inner, &what),
                    (Kind::Notification, _) => roundtrip::<r::ClientNotification>(&inner, &what),
                };
                assert_valid(&doc, info.message, &back, &what);

                // The whole wire message through the JSON-RPC envelope union.
                let back = roundtrip::<r::JsonrpcMessage>(message, &what);
                assert_valid(&doc, "JSONRPCMessage", &back, &what);

                match (info.kind, fixture.get("result")) {
                    (Kind::Request, Some(result)) => {
                        let result_def = info.result.expect("requests have a result type");
                        let parsed = r::parse_result(method, result.clone())
                            .expect("a request method")
                            .unwrap_or_else(|e| panic!("{what}: result: {e}"));
                        let back = serde_json::to_value(&parsed).expect("encode");
                        assert_eq!(&back, result, "{what}: result re-encoded differently");
                        assert_valid(&doc, result_def, &back, &what);
                        let response = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                        let back = roundtrip::<r::JsonrpcMessage>(&response, &what);
                        assert_valid(&doc, "JSONRPCMessage", &back, &what);
                    }
                    (Kind::Request, None) => panic!("{what}: a request fixture needs a result"),
                    (Kind::Notification, _) => {}
                }
            }
            let all: std::collections::BTreeSet<String> = r::METHODS.iter().map(|m| m.name.to_owned()).collect();
            assert_eq!(seen, all, "one fixture per method of {}", $rev);
        }
    };
}

per_method!(
    every_2024_11_05_method_roundtrips_and_validates,
    v2024_11_05,
    "2024-11-05"
);
per_method!(
    every_2025_03_26_method_roundtrips_and_validates,
    v2025_03_26,
    "2025-03-26"
);
per_method!(
    every_2025_06_18_method_roundtrips_and_validates,
    v2025_06_18,
    "2025-06-18"
);
per_method!(
    every_2025_11_25_method_roundtrips_and_validates,
    v2025_11_25,
    "2025-11-25"
);
