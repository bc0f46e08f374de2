//! The fixture the official MCP conformance suite expects (../shared/conformance/
//! FIXTURE_SPEC.md), written once with the author API and served to every revision, plus
//! the extras of §18 that make per-revision shaping visible (titles, icons, annotations,
//! structured output, resource links, audio).
//!
//! `cargo run -p mcp-interop --example conformance_server` serves one client on stdio;
//! `… -- --http 127.0.0.1:3001` serves `http://127.0.0.1:3001/mcp` (and `/sse`);
//! `… -- --http 127.0.0.1:3001 --authorization-server ISSUER` protects them as an OAuth
//! 2.1 resource server whose resource is `http://127.0.0.1:3001/mcp`: the issuer's
//! metadata and key set are discovered at start-up, and every request needs a JWT access
//! token of that issuer whose `aud` names the resource. Beside it, `--required-scope
//! SCOPE` (a scope every request needs) and `--tool-scope TOOL=SCOPE` (a scope calling
//! `TOOL` needs, and without which `TOOL` is not listed), each repeatable, so that 403
//! `insufficient_scope` can be driven from outside.

use std::time::Duration;

use mcp_runtime::model::{
    Annotations, Completion, Content, Icon, Implementation, LogLevel, Prompt, PromptArgument,
    PromptMessage, PromptResult, Resource, ResourceContents, ResourceLink, ResourceTemplate, Role,
    Tool, ToolAnnotations, ToolResult,
};
use mcp_runtime::model::{Elicitation, SamplingRequest};
use mcp_runtime::{Ask, AskError, AskErrorKind, RpcError, Server, ServerEvent, ToolError};
use mcp_runtime_http::auth::{AuthorizationServer, JwtVerifier, ResourceServer};
use mcp_runtime_http::{HttpConfig, SsePolling};
use serde_json::{json, Value};

#[path = "conformance/tasks.rs"]
mod tasks;
use tasks::TasksFixture;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn icon() -> Vec<Icon> {
    vec![Icon::new(
        format!("data:image/png;base64,{PNG}"),
        "image/png",
    )]
}

fn tool(name: &str, title: &str, description: &str) -> Tool {
    Tool::new(name, description)
        .title(title)
        .input_schema(json!({"type": "object", "properties": {}}))
        .annotations(
            ToolAnnotations::default()
                .read_only_hint(true)
                .destructive_hint(false)
                .idempotent_hint(true)
                .open_world_hint(false),
        )
        .icons(icon())
}

fn resource(uri: &str, name: &str, mime: &str, size: u64) -> Resource {
    Resource::new(uri, name)
        .title(format!("Test resource {name}"))
        .description(format!("The {name} test resource"))
        .mime_type(mime)
        .size(size)
        .annotations(
            Annotations::default()
                .audience([Role::User])
                .priority(1.0)
                .last_modified("2025-11-25T00:00:00Z"),
        )
        .icons(icon())
}

fn prompt(name: &str, description: &str, arguments: Vec<PromptArgument>) -> Prompt {
    let prompt = Prompt::new(name)
        .title(name.replace('_', " "))
        .description(description)
        .icons(icon());
    arguments.into_iter().fold(prompt, Prompt::argument)
}

fn argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument::new(name)
        .description(description)
        .required()
}

fn user(content: Content) -> PromptMessage {
    PromptMessage::user(content)
}

fn ok(result: ToolResult) -> Result<ToolResult, ToolError> {
    Ok(result)
}

fn tool_with_args(
    name: &str,
    title: &str,
    description: &str,
    properties: Value,
    required: &[&str],
) -> Tool {
    tool(name, title, description)
        .input_schema(json!({"type": "object", "properties": properties, "required": required}))
}

/// An elicitation of one required string field.
fn elicit(message: &str, field: &str) -> Ask {
    Ask::Elicit {
        message: message.into(),
        requested_schema: json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    }
}

fn confirm() -> Ask {
    Ask::Elicit {
        message: "Please confirm".into(),
        requested_schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    }
}

fn field(elicit_result: &Value, name: &str) -> String {
    elicit_result["content"][name]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn sampled_text(create_message_result: &Value) -> String {
    let content = &create_message_result["content"];
    let block = if content.is_array() {
        &content[0]
    } else {
        content
    };
    block["text"].as_str().unwrap_or_default().to_owned()
}

fn elicitation_result(
    label: &str,
    answer: Result<Elicitation<serde_json::Map<String, Value>>, AskError>,
) -> Result<ToolResult, ToolError> {
    let (action, content) = match answer {
        Ok(Elicitation::Accept(content)) => ("accept", Value::Object(content)),
        Ok(Elicitation::Decline) => ("decline", json!({})),
        Ok(Elicitation::Cancel) => ("cancel", json!({})),
        // In 2026-07-28 the first pass ends here and the runtime answers input_required.
        Err(e) if e.kind() == AskErrorKind::InputRequired => return Err(e.into()),
        Err(e) => return ok(ToolResult::error(format!("Elicitation failed: {e}"))),
    };
    ok(ToolResult::text(format!(
        "{label}: action={action}, content={content}"
    )))
}

/// The conformance fixture server.
pub fn conformance_server() -> Server {
    conformance_builder().build()
}

/// The conformance fixture server, to be built (the HTTP replica adds its shared key and
/// the `echo` tool).
pub fn conformance_builder() -> mcp_runtime::ServerBuilder {
    let mut info = Implementation::new("mcp-conformance-test-server", "1.0.0");
    info.title = Some("MCP multiversion conformance server".into());
    info.description =
        Some("Serves every MCP revision from one set of tools, resources and prompts".into());
    info.icons = icon();
    info.website_url = Some("https://modelcontextprotocol.io".into());
    Server::builder(info)
        .instructions("A test server for the MCP conformance suite.")
        .tool(tool("test_simple_text", "Simple text", "Returns a simple text response"), |_, _| async { ok(ToolResult::text("This is a simple text response for testing.")) })
        .tool(tool("test_image_content", "Image content", "Returns an image"), |_, _| async { ok(ToolResult::content(vec![Content::image(PNG, "image/png")])) })
        .tool(tool("test_audio_content", "Audio content", "Returns audio"), |_, _| async { ok(ToolResult::content(vec![Content::audio(WAV, "audio/wav")])) })
        .tool(tool("test_embedded_resource", "Embedded resource", "Returns an embedded resource"), |_, _| async {
            ok(ToolResult::content(vec![Content::resource(ResourceContents::text("test://embedded-resource", "text/plain", "This is an embedded resource content."))]))
        })
        .tool(tool("test_multiple_content_types", "Mixed content", "Returns text, an image and a resource"), |_, _| async {
            ok(ToolResult::content(vec![
                Content::text("Multiple content types test:"),
                Content::image(PNG, "image/png"),
                Content::resource(ResourceContents::text("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#)),
            ]))
        })
        .tool(tool("test_error_handling", "Error handling", "Always fails (in the result)"), |_, _| async { ok(ToolResult::error("This tool intentionally returns an error for testing")) })
        .tool(tool("test_tool_with_progress", "Progress", "Reports progress 0, 50, 100"), |_, ctx| async move {
            for p in [0.0, 50.0, 100.0] {
                ctx.progress(p, Some(100.0), Some("working")).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ok(ToolResult::text("Progress reported"))
        })
        .tool(tool("test_tool_with_logging", "Logging", "Logs three messages at info"), |_, ctx| async move {
            for msg in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                ctx.log(LogLevel::Info, Some("conformance"), json!(msg)).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ok(ToolResult::text("Tool with logging executed successfully"))
        })
        .tool(
            tool("test_structured_output", "Structured output", "Returns structured weather data")
                .output_schema(json!({"type": "object", "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}}, "required": ["temperature", "conditions"]})),
            |_, _| async {
                let data = json!({"temperature": 22.5, "conditions": "Partly cloudy"});
                ok(ToolResult::text(data.to_string()).structured(data))
            },
        )
        .tool(tool("test_resource_link", "Resource link", "Returns a link to a resource"), |_, _| async {
            ok(ToolResult::content(vec![
                Content::ResourceLink(ResourceLink::new("test://static-text", "static-text").title("Static text").mime_type("text/plain")),
                Content::text("The resource above holds static text."),
            ]))
        })
        .tool(
            tool("json_schema_2020_12_tool", "JSON Schema 2020-12", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)")
                .input_schema(json!({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
                    "$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
                    "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
                    "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
                    "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
                    "additionalProperties":false})),
            |_, _| async { ok(ToolResult::text("ok")) },
        )
        // Diagnostic tools of the stateless probe (FIXTURE_SPEC §6.3).
        .tool(tool("test_missing_capability", "Missing capability", "Needs the client's sampling capability"), |_, ctx| async move {
            if ctx.client_supports("sampling") {
                ok(ToolResult::text("Success"))
            } else {
                Err(ToolError::protocol(RpcError::new(mcp_runtime::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "Missing required client capability: sampling")
                    .with_data(json!({"requiredCapabilities": {"sampling": {}}}))))
            }
        })
        .tool(tool("test_streaming_elicitation", "Streaming", "Streams a progress notification, then answers"), |_, ctx| async move {
            ctx.progress(1.0, Some(1.0), Some("streaming")).await;
            ok(ToolResult::text("Streaming completed"))
        })
        .tool(tool("test_logging_tool", "Logging (per request)", "Logs only if the request asked for a level"), |_, ctx| async move {
            ctx.log(LogLevel::Info, Some("conformance"), json!("logging tool ran")).await;
            ok(ToolResult::text("Logging tool executed"))
        })
        .tool(tool("test_trigger_tool_change", "Trigger tool change", "Announces a tool list change"), |_, ctx| async move {
            ctx.announce(ServerEvent::ToolsChanged);
            ok(ToolResult::text("Tool list change announced"))
        })
        .tool(tool("test_trigger_prompt_change", "Trigger prompt change", "Announces a prompt list change"), |_, ctx| async move {
            ctx.announce(ServerEvent::PromptsChanged);
            ok(ToolResult::text("Prompt list change announced"))
        })
        // Asking the client: one handler API, every era (legacy requests, 2026-07-28
        // multi round-trip input_required results).
        .tool(tool_with_args("test_sampling", "Sampling", "Asks the client's model", json!({"prompt": {"type": "string"}}), &["prompt"]), |args, ctx| async move {
            let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default().to_owned();
            match ctx.create_message(SamplingRequest::new(100).user(prompt)).await {
                Ok(answer) => ok(ToolResult::text(format!("LLM response: {}", answer.text()))),
                Err(e) if e.kind() == AskErrorKind::InputRequired => Err(e.into()),
                Err(e) => ok(ToolResult::error(format!("Sampling failed: {e}"))),
            }
        })
        .tool(tool_with_args("test_elicitation", "Elicitation", "Asks the user", json!({"message": {"type": "string"}}), &["message"]), |args, ctx| async move {
            let message = args.get("message").and_then(Value::as_str).unwrap_or("Please provide your details").to_owned();
            let schema = json!({"type": "object", "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}}, "required": ["username", "email"]});
            elicitation_result("User response", ctx.elicit_with_schema(message, schema).await)
        })
        .tool(tool("test_elicitation_sep1034_defaults", "Elicitation defaults", "Asks with default values"), |_, ctx| async move {
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}}, "required": []});
            elicitation_result("Elicitation completed", ctx.elicit_with_schema("Please review the defaults", schema).await)
        })
        .tool(tool("test_elicitation_sep1330_enums", "Elicitation enums", "Asks with every enum form"), |_, ctx| async move {
            let schema = json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}}});
            elicitation_result("Elicitation completed", ctx.elicit_with_schema("Please choose", schema).await)
        })
        .tool(tool("test_input_required_result_elicitation", "Input required: elicitation", "Asks the user's name"), |_, ctx| async move {
            let answer = ctx.ask(vec![(Some("user_name".into()), elicit("What is your name?", "name"))]).await?;
            ok(ToolResult::text(format!("Hello, {}!", field(&answer[0], "name"))))
        })
        .tool(tool("test_input_required_result_sampling", "Input required: sampling", "Asks the client's model"), |_, ctx| async move {
            let ask = Ask::CreateMessage(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}], "maxTokens": 100}));
            let answer = ctx.ask(vec![(Some("capital_question".into()), ask)]).await?;
            ok(ToolResult::text(format!("The model said: {}", sampled_text(&answer[0]))))
        })
        .tool(tool("test_input_required_result_list_roots", "Input required: roots", "Asks for the client's roots"), |_, ctx| async move {
            let answer = ctx.ask(vec![(Some("client_roots".into()), Ask::ListRoots)]).await?;
            let n = answer[0]["roots"].as_array().map_or(0, Vec::len);
            ok(ToolResult::text(format!("Found {n} root(s)")))
        })
        .tool(tool("test_input_required_result_request_state", "Input required: state", "Asks for confirmation, keeps state"), |_, ctx| async move {
            let answer = ctx.ask(vec![(Some("confirm".into()), confirm())]).await?;
            ok(ToolResult::text(format!("state-ok: confirmed={}", answer[0]["content"]["ok"])))
        })
        .tool(tool("test_input_required_result_multiple_inputs", "Input required: several", "Asks three things at once"), |_, ctx| async move {
            let greeting = Ask::CreateMessage(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}], "maxTokens": 50}));
            let answers = ctx
                .ask(vec![(Some("user_name".into()), elicit("What is your name?", "name")), (Some("greeting".into()), greeting), (Some("client_roots".into()), Ask::ListRoots)])
                .await?;
            ok(ToolResult::text(format!("{} {}, {} root(s)", sampled_text(&answers[1]), field(&answers[0], "name"), answers[2]["roots"].as_array().map_or(0, Vec::len))))
        })
        .tool(tool("test_input_required_result_multi_round", "Input required: two rounds", "Asks twice, one after the other"), |_, ctx| async move {
            let first = ctx.ask(vec![(Some("step1".into()), elicit("Step 1: What is your name?", "name"))]).await?;
            let second = ctx.ask(vec![(Some("step2".into()), elicit("Step 2: What is your favorite color?", "color"))]).await?;
            ok(ToolResult::text(format!("{} likes {}", field(&first[0], "name"), field(&second[0], "color"))))
        })
        .tool(tool("test_input_required_result_tampered_state", "Input required: tampering", "Rejects an altered requestState"), |_, ctx| async move {
            ctx.ask(vec![(Some("confirm".into()), confirm())]).await?;
            ok(ToolResult::text("state verified"))
        })
        .tool(tool("test_input_required_result_capabilities", "Input required: capabilities", "Asks only what the client supports"), |_, ctx| async move {
            let mut asks = Vec::new();
            if ctx.client_supports("sampling") {
                asks.push((Some("sample".into()), Ask::CreateMessage(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}], "maxTokens": 20}))));
            }
            if ctx.client_supports("elicitation") {
                asks.push((Some("confirm".into()), confirm()));
            }
            if asks.is_empty() {
                return ok(ToolResult::error("the client supports neither sampling nor elicitation"));
            }
            ctx.ask(asks).await?;
            ok(ToolResult::text("capabilities respected"))
        })
        // A parameter mirrored into an `Mcp-Param-Region` header (2026-07-28, x-mcp-header).
        .tool(
            tool_with_args("test_header_param", "Header parameter", "Echoes a parameter the client mirrors into a header", json!({"region": {"type": "string", "x-mcp-header": "Region"}}), &[]),
            |args, _| async move { ok(ToolResult::text(format!("region={}", args.get("region").and_then(Value::as_str).unwrap_or("none")))) },
        )
        .tasks_fixture()
        .resource(resource("test://static-text", "static-text", "text/plain", 48), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "This is the content of the static text resource.")])
        })
        .resource(resource("test://static-binary", "static-binary", "image/png", 70), |uri, _| async move { Ok(vec![ResourceContents::blob(uri, "image/png", PNG)]) })
        .resource(resource("test://watched-resource", "watched-resource", "text/plain", 24), |uri, _| async move { Ok(vec![ResourceContents::text(uri, "text/plain", "Watched resource content")]) })
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template")
                .title("Template resource")
                .description("Data for an id")
                .mime_type("application/json")
                .icons(icon()),
            |uri, vars, _| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string();
                Ok(vec![ResourceContents::text(uri, "application/json", text)])
            },
        )
        .prompt(prompt("test_simple_prompt", "A simple prompt", vec![]), |_, _| async {
            Ok(PromptResult::new([user(Content::text("This is a simple prompt for testing."))]))
        })
        .prompt(prompt("test_prompt_with_arguments", "A prompt with arguments", vec![argument("arg1", "First argument"), argument("arg2", "Second argument")]), |args, _| async move {
            let get = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            Ok(PromptResult::new([user(Content::text(format!("Prompt with arguments: arg1='{}', arg2='{}'", get("arg1"), get("arg2"))))]))
        })
        .prompt(prompt("test_prompt_with_embedded_resource", "A prompt embedding a resource", vec![argument("resourceUri", "URI of the resource to embed")]), |args, _| async move {
            let uri = args.get("resourceUri").and_then(Value::as_str).unwrap_or("test://example-resource").to_owned();
            Ok(PromptResult::new([
                user(Content::resource(ResourceContents::text(uri, "text/plain", "Embedded resource content for testing."))),
                user(Content::text("Please process the embedded resource above.")),
            ]))
        })
        .prompt(prompt("test_prompt_with_image", "A prompt with an image", vec![]), |_, _| async {
            Ok(PromptResult::new([user(Content::image(PNG, "image/png")), user(Content::text("Please analyze the image above."))]))
        })
        .prompt(prompt("test_input_required_result_prompt", "A prompt that asks the user for context", vec![]), |_, ctx| async move {
            let answer = ctx.ask(vec![(Some("user_context".into()), elicit("What context should the prompt use?", "context"))]).await?;
            Ok(PromptResult::new([user(Content::text(format!("Prompt with context: {}", field(&answer[0], "context"))))]))
        })
        .completion(|req, _| async move {
            let candidates: &[&str] = match req.argument.as_str() {
                "arg1" | "arg2" => &["test", "testValue1", "testValue2"],
                _ => &[],
            };
            let values: Vec<String> = candidates.iter().filter(|c| c.starts_with(&req.value)).map(|c| (*c).to_owned()).collect();
            let total = values.len() as u64;
            Ok(Completion::new(values).total(total).has_more(false))
        })
}

/// FIXTURE_SPEC §19: `echo` answers one text block that is exactly the caller's
/// `message`, so that a client behind any number of replicas can tell its own answer.
fn with_echo(builder: mcp_runtime::ServerBuilder) -> mcp_runtime::ServerBuilder {
    let echo = Tool::new("echo", "Returns the message it was given")
        .title("Echo")
        .input_schema(json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}));
    builder.tool(echo, |args, _| async move {
        match args.get("message").and_then(Value::as_str) {
            Some(message) => Ok(ToolResult::text(message)),
            None => Err(ToolError::from(RpcError::invalid_params(
                "echo: `message` must be a string",
            ))),
        }
    })
}

/// How long a polled SSE stream of a 2025-11-25 session holds its connection over HTTP
/// (`server-sse-polling`): the server closes it then, and the client reconnects with
/// `Last-Event-ID` after the `retry` of [`POLL_RETRY`].
const POLL_CONNECTION: Duration = Duration::from_millis(1000);
const POLL_RETRY: Duration = Duration::from_millis(500);

/// `test_reconnection` (`server-sse-polling`, HTTP only): answers after one and a half
/// connection times, so that its POST stream's connection is closed after the priming
/// event, without the answer, and the answer reaches the client on its first
/// reconnection (held for another connection time).
fn with_reconnection(builder: mcp_runtime::ServerBuilder) -> mcp_runtime::ServerBuilder {
    let tool = Tool::new(
        "test_reconnection",
        "Answers after the server closed the connection of its SSE stream (SSE polling)",
    )
    .title("Reconnection")
    .input_schema(json!({"type": "object", "properties": {}}));
    builder.tool(tool, |_, _| async move {
        tokio::time::sleep(POLL_CONNECTION + POLL_CONNECTION / 2).await;
        Ok::<_, ToolError>(ToolResult::text(
            "Reconnected: the answer came after the reconnection",
        ))
    })
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(e) => {
                eprintln!("SIGTERM handler: {e}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves HTTP on `addr`, as a resource server of `issuer` if one is given.
/// The `requestState` key of a replica group, from `MCP_STATE_KEY` (and, while rotating,
/// the key it replaces from `MCP_STATE_KEY_PREVIOUS`); unset, a random key per process.
fn with_state_keys(builder: mcp_runtime::ServerBuilder) -> mcp_runtime::ServerBuilder {
    let Ok(current) = std::env::var("MCP_STATE_KEY") else {
        return builder;
    };
    if current.len() < 16 {
        eprintln!("MCP_STATE_KEY: use at least 16 characters (32 random bytes, say, in hex)");
        std::process::exit(2);
    }
    let previous = std::env::var("MCP_STATE_KEY_PREVIOUS").ok();
    builder.state_keys(current, previous.as_deref().map(str::as_bytes))
}

/// The scopes of `--required-scope` and `--tool-scope`.
#[derive(Default)]
struct Scopes {
    required: Vec<String>,
    /// Tool and scope, in the order given (a tool named twice needs both).
    per_tool: Vec<(String, String)>,
}

async fn serve_http(
    addr: &str,
    issuer: Option<&str>,
    redis: Option<&str>,
    scopes: &Scopes,
) -> std::io::Result<()> {
    let addr: std::net::SocketAddr = addr.parse().unwrap_or_else(|e| {
        eprintln!("--http {addr}: {e}");
        std::process::exit(2);
    });
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let mut config = HttpConfig::default();
    // SSE polling for 2025-11-25 sessions (older ones never see it), as
    // `server-sse-polling` expects: priming events, `retry`, closed connections.
    config.sse_polling = Some(SsePolling::new(POLL_RETRY).close_after(POLL_CONNECTION));
    if let Some(issuer) = issuer {
        match resource_server(&url, issuer, scopes).await {
            Ok(rs) => config.authorization = Some(std::sync::Arc::new(rs)),
            Err(e) => {
                eprintln!("--authorization-server {issuer}: {e}");
                std::process::exit(1);
            }
        }
        eprintln!("protected by {issuer} (resource {url})");
    }
    if let Some(redis) = redis {
        match mcp_runtime_redis::RedisStore::connect(redis).await {
            Ok(store) => config = config.store(store),
            Err(e) => {
                eprintln!("--redis {}: {e}", without_password(redis));
                std::process::exit(1);
            }
        }
        eprintln!("sessions shared through {}", without_password(redis));
    }
    eprintln!("listening on {url}");
    mcp_runtime_http::serve_listener_with_shutdown(
        with_reconnection(with_echo(with_state_keys(conformance_builder()))).build(),
        listener,
        config,
        terminated(),
    )
    .await
}

/// `resource` as a resource server of `issuer`: its metadata and key set discovered now,
/// so that a wrong issuer shows at start-up.
async fn resource_server(
    resource: &str,
    issuer: &str,
    scopes: &Scopes,
) -> Result<ResourceServer, Box<dyn std::error::Error>> {
    let server = AuthorizationServer::discover(issuer).await?;
    let verifier = JwtVerifier::for_server(&server, resource)?.build()?;
    verifier.prefetch_keys().await?;
    let mut builder = ResourceServer::builder(resource, verifier)
        .discovered_authorization_server(&server)
        .resource_name("MCP multiversion conformance server")
        .require_scopes(scopes.required.iter().cloned());
    let mut per_tool: Vec<(&str, Vec<&str>)> = Vec::new();
    for (tool, scope) in &scopes.per_tool {
        match per_tool.iter_mut().find(|(t, _)| t == tool) {
            Some((_, list)) => list.push(scope),
            None => per_tool.push((tool, vec![scope])),
        }
    }
    for (tool, list) in per_tool {
        builder = builder.tool_scopes(tool, list);
    }
    Ok(builder.build()?)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // Logs to stderr as `RUST_LOG` says; exports over OTLP when
    // `OTEL_EXPORTER_OTLP_ENDPOINT` is set (flushed when this is dropped).
    let telemetry = mcp_runtime_otel::init("conformance_server");
    let args: Vec<String> = std::env::args().skip(1).collect();
    // On SIGTERM/SIGINT: stop reading or accepting, give running requests
    // `Limits::shutdown_grace` (5 s) to finish, cancel the rest, exit 0.
    let usage = || -> ! {
        eprintln!(
            "usage: conformance_server [--stdio | --http ADDR [--authorization-server ISSUER [--required-scope SCOPE]... [--tool-scope TOOL=SCOPE]...] [--redis URL]]   (e.g. --http 127.0.0.1:3001; flags in any order; a replica group shares MCP_STATE_KEY)"
        );
        std::process::exit(2);
    };
    let (mut http, mut issuer, mut redis, mut stdio) = (None, None, None, false);
    let mut scopes = Scopes::default();
    let mut rest = args.iter().map(String::as_str);
    while let Some(flag) = rest.next() {
        let slot = match flag {
            "--stdio" => {
                stdio = true;
                continue;
            }
            "--required-scope" => {
                scopes
                    .required
                    .push(rest.next().unwrap_or_else(|| usage()).to_owned());
                continue;
            }
            "--tool-scope" => {
                let value = rest.next().unwrap_or_else(|| usage());
                match value.split_once('=') {
                    Some((tool, scope)) if !tool.is_empty() && !scope.is_empty() => {
                        scopes.per_tool.push((tool.to_owned(), scope.to_owned()));
                    }
                    _ => {
                        eprintln!("--tool-scope {value}: expected TOOL=SCOPE");
                        std::process::exit(2);
                    }
                }
                continue;
            }
            "--http" => &mut http,
            "--authorization-server" => &mut issuer,
            "--redis" => &mut redis,
            _ => usage(),
        };
        match (rest.next(), slot.is_none()) {
            (Some(value), true) => *slot = Some(value),
            _ => usage(),
        }
    }
    let scoped = !scopes.required.is_empty() || !scopes.per_tool.is_empty();
    if scoped && issuer.is_none() {
        eprintln!("--required-scope and --tool-scope need --authorization-server");
        std::process::exit(2);
    }
    let result = match (http, stdio) {
        (None, _) if issuer.is_none() && redis.is_none() => {
            mcp_runtime::transport::stdio::serve_stdio_with_shutdown(
                conformance_server(),
                terminated(),
            )
            .await
        }
        (Some(addr), false) => serve_http(addr, issuer, redis, &scopes).await,
        _ => usage(),
    };
    // Exported before the process exits (it does not wait for the runtime).
    telemetry.shutdown();
    match result {
        // stdin may still be open (a signal ended the session): tokio's stdin reader
        // thread cannot be interrupted, so leave without waiting for the runtime.
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("conformance_server: {e}");
            std::process::exit(1);
        }
    }
}

/// A Redis URL as it may be logged: a password in its user information masked.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    // The hosts hold no `@`: the last one ends the user information.
    match rest.rsplit_once('@') {
        Some((user_info, hosts)) => {
            let user = user_info
                .split_once(':')
                .map_or(user_info, |(user, _)| user);
            format!("{scheme}://{user}:***@{hosts}")
        }
        None => url.to_owned(),
    }
}
