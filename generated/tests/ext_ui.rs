//! The generated `io.modelcontextprotocol/ui` types (`mcp_generated::ext::ui`, MCP Apps):
//! the `_meta.ui` shapes of tools and resources and the app–host messages decode into them
//! and encode back unchanged, the unions zod wrote inline (content blocks, text or blob
//! contents) pick their member, and (where the extension schema is available) each
//! instance is valid against the official schema.
#![cfg(all(feature = "ext_ui", feature = "v2026_07_28"))]

use mcp_generated::ext::ui;
use serde_json::{json, Value};

/// The official extension schema, if available offline (cache, MCP_EXTENSION_SCHEMA_DIR,
/// or $MCP_SCHEMA_DIR/extensions/).
fn schema_doc() -> Option<Value> {
    let layout = mcp_codegen::Layout::workspace();
    let manifest = mcp_codegen::Manifest::load(&layout.manifest_path()).expect("manifest");
    let ext = manifest.extension(ui::ID).expect("ui in the manifest");
    let source = mcp_codegen::extension::ExtensionSource::for_schema_source(
        &mcp_codegen::SchemaSource::offline(layout.cache_dir()),
        None,
    );
    match mcp_codegen::extension::load(ext, &source) {
        Ok(loaded) => Some(loaded.json),
        Err(e @ mcp_codegen::Error::ExtensionSchemaMissing { .. }) => {
            eprintln!("note: not validated against the official schema: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn assert_valid(doc: &Value, def: &str, instance: &Value) {
    let mut root = doc.clone();
    root["$ref"] = json!(format!("#/$defs/{def}"));
    let validator =
        jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("validator for {def}: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {def}: {errors:#?}\n{instance:#}"
    );
}

fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(value: &Value) -> T {
    let typed: T =
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("decode: {e}\n{value:#}"));
    let back = serde_json::to_value(&typed).expect("encode");
    assert_eq!(&back, value, "re-encoded value differs");
    typed
}

fn resource_meta() -> Value {
    json!({
        "csp": {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
            "frameDomains": [],
            "baseUriDomains": ["https://example.com"]
        },
        "permissions": {"clipboardWrite": {}, "geolocation": {}},
        "domain": "a1b2c3.example-content.com",
        "prefersBorder": true
    })
}

fn contents_items() -> Value {
    json!([
        {"type": "resource", "resource": {"uri": "file:///report.csv", "mimeType": "text/csv", "text": "a,b\n1,2\n"}},
        {"type": "resource", "resource": {"uri": "file:///chart.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}},
        {"type": "resource_link", "uri": "https://example.com/full.pdf", "name": "full.pdf", "mimeType": "application/pdf"}
    ])
}

/// `(definition, instance)`: the `_meta` shapes and one of each kind of message.
fn examples() -> Vec<(&'static str, Value)> {
    vec![
        (
            "McpUiToolMeta",
            json!({"resourceUri": "ui://weather/forecast.html", "visibility": ["model", "app"]}),
        ),
        ("McpUiToolMeta", json!({"visibility": ["app"]})),
        ("McpUiResourceMeta", resource_meta()),
        (
            "McpUiDownloadFileRequest",
            json!({"method": "ui/download-file", "params": {"contents": contents_items()}}),
        ),
        (
            "McpUiMessageRequest",
            json!({"method": "ui/message", "params": {"role": "user", "content": [{"type": "text", "text": "Show me Paris"}]}}),
        ),
        (
            "McpUiSizeChangedNotification",
            json!({"method": "ui/notifications/size-changed", "params": {"width": 640, "height": 480}}),
        ),
        (
            "McpUiOpenLinkRequest",
            json!({"method": "ui/open-link", "params": {"url": "https://example.com/"}}),
        ),
        (
            "McpUiToolInputNotification",
            json!({"method": "ui/notifications/tool-input", "params": {"arguments": {"city": "Paris"}}}),
        ),
    ]
}

fn roundtrip_as(def: &str, value: &Value) {
    match def {
        "McpUiToolMeta" => drop(roundtrip::<ui::McpUiToolMeta>(value)),
        "McpUiResourceMeta" => drop(roundtrip::<ui::McpUiResourceMeta>(value)),
        "McpUiDownloadFileRequest" => drop(roundtrip::<ui::McpUiDownloadFileRequest>(value)),
        "McpUiMessageRequest" => drop(roundtrip::<ui::McpUiMessageRequest>(value)),
        "McpUiSizeChangedNotification" => {
            drop(roundtrip::<ui::McpUiSizeChangedNotification>(value))
        }
        "McpUiOpenLinkRequest" => drop(roundtrip::<ui::McpUiOpenLinkRequest>(value)),
        "McpUiToolInputNotification" => drop(roundtrip::<ui::McpUiToolInputNotification>(value)),
        other => panic!("no type for {other}"),
    }
}

#[test]
fn every_shape_decodes_and_encodes_back_unchanged_and_is_valid() {
    let doc = schema_doc();
    for (def, value) in examples() {
        roundtrip_as(def, &value);
        if let Some(doc) = &doc {
            assert_valid(doc, def, &value);
        }
    }
}

#[test]
fn inline_unions_pick_their_member() {
    let items: Vec<ui::McpUiDownloadFileRequestParamsContentsItem> =
        serde_json::from_value(contents_items()).expect("decode");
    use ui::McpUiDownloadFileRequestParamsContentsItem as Item;
    use ui::McpUiDownloadFileRequestParamsContentsItemResourceResource as Contents;
    match &items[..] {
        [Item::Variant0(text), Item::Variant0(blob), Item::Variant1(link)] => {
            assert!(matches!(&text.resource, Contents::Text(t) if t.text == "a,b\n1,2\n"));
            assert!(matches!(&blob.resource, Contents::Blob(b) if b.blob == "iVBORw0KGgo="));
            assert_eq!(link.uri, "https://example.com/full.pdf");
        }
        other => panic!("members picked wrongly: {other:?}"),
    }
    // A block of a type the extension does not list is refused, not taken as another.
    let unknown = json!({"type": "video", "uri": "x", "name": "y"});
    assert!(serde_json::from_value::<Item>(unknown).is_err());
}

#[test]
fn the_tool_meta_reads_visibility_and_leaves_out_what_belongs_to_the_resource() {
    let meta: ui::McpUiToolMeta = serde_json::from_value(json!({
        "resourceUri": "ui://app/main.html",
        "visibility": ["app"],
        // Forbidden on a tool by the schema (`not: {}`): dropped on reading.
        "csp": {"connectDomains": ["https://x.example"]}
    }))
    .expect("decode");
    assert_eq!(meta.resource_uri.as_deref(), Some("ui://app/main.html"));
    assert_eq!(meta.visibility, Some(vec![ui::McpUiToolVisibility::App]));
    let back = serde_json::to_value(&meta).expect("encode");
    assert_eq!(
        back,
        json!({"resourceUri": "ui://app/main.html", "visibility": ["app"]})
    );
}

#[test]
fn the_module_records_its_provenance() {
    assert_eq!(ui::ID, "io.modelcontextprotocol/ui");
    assert_eq!(ui::EXTENDS, ["2025-06-18", "2025-11-25", "2026-07-28"]);
    assert!(ui::SCHEMA_URL.contains("@modelcontextprotocol/ext-apps@2.0.4/"));
    assert_eq!(ui::SCHEMA_SHA256.len(), 64);
}
