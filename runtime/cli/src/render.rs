//! What `mcp` prints: for people, short aligned text; with `--json`, one JSON document on
//! stdout that scripts can read (the protocol's own field names, whatever the revision).

use mcp_runtime::model::{
    Content, Prompt, PromptResult, Resource, ResourceContents, ResourceTemplate, Tool, ToolResult,
};
use mcp_runtime_client::ServerInfo;
use serde_json::{json, Value};

/// JSON of a model value (they all serialize; a failure would be a bug, shown as null).
fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

/// The names of a JSON Schema's properties with their types, required ones first and `?`
/// after optional ones: `city: string, days?: integer`.
fn signature(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let mut params: Vec<(bool, String)> = properties
        .iter()
        .map(|(name, p)| {
            let is_required = required.contains(&name.as_str());
            let optional = if is_required { "" } else { "?" };
            format!("{name}{optional}: {}", type_name(p, is_required))
        })
        .zip(properties.keys())
        .map(|(text, name)| (!required.contains(&name.as_str()), text))
        .collect();
    // Stable: required ones first, each group in the schema's order.
    params.sort_by_key(|(optional, _)| *optional);
    params
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A property's JSON type: `string`, `integer|string`; the `null` of an optional one is
/// left out (`?` says it).
fn type_name(property: &Value, required: bool) -> String {
    match property.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| required || *k != "null")
                .collect();
            kinds.join("|")
        }
        _ => "any".to_owned(),
    }
}

/// First line of a description, for a listing.
fn first_line(text: Option<&str>) -> String {
    text.and_then(|t| t.lines().find(|l| !l.trim().is_empty()))
        .map(|l| format!("  {}", l.trim()))
        .unwrap_or_default()
}

pub(crate) fn tools(tools: &[Tool], json: bool) {
    if json {
        return print_json(&json!({ "tools": tools.iter().map(to_json).collect::<Vec<_>>() }));
    }
    if tools.is_empty() {
        return println!("(no tools)");
    }
    for tool in tools {
        println!(
            "{}({}){}",
            tool.name,
            signature(&tool.input_schema),
            first_line(tool.description.as_deref())
        );
    }
}

pub(crate) fn resources(resources: &[Resource], templates: &[ResourceTemplate], json: bool) {
    if json {
        return print_json(&json!({
            "resources": resources.iter().map(to_json).collect::<Vec<_>>(),
            "resourceTemplates": templates.iter().map(to_json).collect::<Vec<_>>(),
        }));
    }
    if resources.is_empty() && templates.is_empty() {
        return println!("(no resources)");
    }
    for r in resources {
        let mime = r
            .mime_type
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        println!(
            "{}  {}{mime}{}",
            r.uri,
            r.name,
            first_line(r.description.as_deref())
        );
    }
    for t in templates {
        println!(
            "{}  {} (template){}",
            t.uri_template,
            t.name,
            first_line(t.description.as_deref())
        );
    }
}

pub(crate) fn prompts(prompts: &[Prompt], json: bool) {
    if json {
        return print_json(&json!({ "prompts": prompts.iter().map(to_json).collect::<Vec<_>>() }));
    }
    if prompts.is_empty() {
        return println!("(no prompts)");
    }
    for p in prompts {
        let args = p
            .arguments
            .iter()
            .map(|a| {
                let optional = if a.required == Some(true) { "" } else { "?" };
                format!("{}{optional}", a.name)
            })
            .collect::<Vec<_>>()
            .join(", ");
        println!("{}({args}){}", p.name, first_line(p.description.as_deref()));
    }
}

/// One content block for people: text as it is, anything else summarized on one line.
fn content(block: &Content) -> String {
    match block {
        Content::Text { text, .. } => text.clone(),
        Content::Image {
            data, mime_type, ..
        } => format!("[image {mime_type}, {} bytes of base64]", data.len()),
        Content::Audio {
            data, mime_type, ..
        } => format!("[audio {mime_type}, {} bytes of base64]", data.len()),
        Content::Resource { resource, .. } => resource_contents(resource),
        Content::ResourceLink(link) => format!("[resource link {}]", link.uri),
    }
}

fn resource_contents(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::Text { text, .. } => text.clone(),
        ResourceContents::Blob {
            uri,
            mime_type,
            blob,
            ..
        } => format!(
            "[{uri}: {}, {} bytes of base64]",
            mime_type.as_deref().unwrap_or("binary"),
            blob.len()
        ),
    }
}

/// A tool's result; whether it reports an error (`isError`).
pub(crate) fn tool_result(result: &ToolResult, json: bool) -> bool {
    if json {
        let mut out = serde_json::Map::new();
        out.insert(
            "content".into(),
            result
                .content
                .iter()
                .map(to_json)
                .collect::<Vec<_>>()
                .into(),
        );
        if let Some(structured) = &result.structured {
            out.insert("structuredContent".into(), structured.clone());
        }
        out.insert("isError".into(), result.is_error.into());
        print_json(&Value::Object(out));
        return result.is_error;
    }
    let mut lines: Vec<String> = result.content.iter().map(content).collect();
    let has_text = result
        .content
        .iter()
        .any(|c| matches!(c, Content::Text { .. }));
    if let (Some(structured), false) = (&result.structured, has_text) {
        lines.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let text = lines.join("\n");
    if result.is_error {
        eprintln!("the tool reports an error:\n{text}");
    } else {
        println!("{text}");
    }
    result.is_error
}

pub(crate) fn read(contents: &[ResourceContents], json: bool) {
    if json {
        return print_json(
            &json!({ "contents": contents.iter().map(to_json).collect::<Vec<_>>() }),
        );
    }
    for c in contents {
        println!("{}", resource_contents(c));
    }
}

pub(crate) fn prompt(result: &PromptResult, json: bool) {
    if json {
        return print_json(&to_json(result));
    }
    if let Some(description) = &result.description {
        println!("# {description}");
    }
    for m in &result.messages {
        let role = to_json(&m.role);
        println!("{}: {}", role.as_str().unwrap_or("?"), content(&m.content));
    }
}

pub(crate) fn info(server: &ServerInfo, json: bool) {
    let implementation = server.implementation.as_ref().map(to_json);
    if json {
        return print_json(&json!({
            "protocolVersion": server.version.as_str(),
            "supportedVersions": server.supported_versions,
            "serverInfo": implementation,
            "capabilities": server.capabilities,
            "instructions": server.instructions,
        }));
    }
    match &server.implementation {
        Some(i) => println!("server:       {} {}", i.name, i.version),
        None => println!("server:       (unnamed)"),
    }
    if let Some(title) = server
        .implementation
        .as_ref()
        .and_then(|i| i.title.as_ref())
    {
        println!("title:        {title}");
    }
    println!("revision:     {}", server.version);
    if !server.supported_versions.is_empty() {
        println!("serves:       {}", server.supported_versions.join(", "));
    }
    let capabilities = server
        .capabilities
        .as_object()
        .map(|c| c.keys().cloned().collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    println!("capabilities: {capabilities}");
    if let Some(text) = &server.instructions {
        println!("instructions: {}", text.trim());
    }
}
