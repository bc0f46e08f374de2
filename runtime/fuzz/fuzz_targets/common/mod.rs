//! What the transport targets share: a small server (one tool that reports progress and
//! logs, one tool that asks the client, one resource, one template, one prompt, completion),
//! a runtime whose clock is paused (timers fire as soon as everything is idle, so grace
//! periods and timeouts never make an input slow), and the JSON-RPC check of what the
//! server writes.
#![allow(dead_code)]

use std::time::Duration;

use mcp_runtime::model::{
    Completion, Implementation, LogLevel, Prompt, PromptArgument, PromptMessage, PromptResult,
    Resource, ResourceContents, ResourceTemplate, Tool, ToolResult,
};
use mcp_runtime::{Limits, Server};
use serde_json::{json, Value};

fn tool(name: &str, input_schema: Value) -> Tool {
    Tool::new(name, "A fuzzing tool")
        .title("A tool")
        .input_schema(input_schema)
}

/// The server every transport target serves; `max_message_bytes` as given.
pub fn server(max_message_bytes: usize) -> Server {
    let mut limits = Limits::default();
    limits.max_message_bytes = max_message_bytes;
    limits.page_size = 1;
    limits.outbound_queue = 16;
    limits.shutdown_grace = Duration::from_secs(1);
    limits.ask_timeout = Duration::from_secs(2);
    limits.request_timeout = Duration::from_secs(3);
    let resource = Resource::new("test://static-text", "static-text")
        .description("Static text")
        .mime_type("text/plain");
    let template = ResourceTemplate::new("test://template/{id}/data", "template")
        .mime_type("application/json");
    let prompt = Prompt::new("test_prompt_with_arguments")
        .description("A prompt with arguments")
        .argument(PromptArgument::new("arg1").required());
    // `city` is mirrored into an `Mcp-Param-City` header (2026-07-28 x-mcp-header).
    let schema = json!({"type": "object", "properties": {"city": {"type": "string", "x-mcp-header": "City"}, "days": {"type": "integer"}}});
    Server::builder(Implementation::new("fuzz", "1.0.0"))
        .limits(limits)
        .tool(tool("test_simple_text", schema), |args, ctx| async move {
            ctx.progress(0.5, Some(1.0), Some("half")).await;
            ctx.log(LogLevel::Info, Some("fuzz"), json!({"args": args.len()})).await;
            Ok(ToolResult::text(format!("{} arguments", args.len())))
        })
        .tool(tool("test_sampling", json!({"type": "object"})), |_, ctx| async move {
            let answer = ctx
                .create_message(mcp_runtime::model::SamplingRequest::new(10).user("hi"))
                .await?;
            Ok(ToolResult::text(answer.text()))
        })
        .resource(resource, |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "static text")])
        })
        .resource_template(template, |uri, vars, _| async move {
            Ok(vec![ResourceContents::text(uri, "application/json", json!(vars).to_string())])
        })
        .prompt(prompt, |args, _| async move {
            Ok(PromptResult::new([PromptMessage::user(format!("{args:?}"))]))
        })
        .completion(|req, _| async move {
            Ok(Completion::new([format!("{}1", req.value)]).total(1).has_more(false))
        })
        .build()
}

/// A single-threaded runtime with a paused clock: when every task waits, time jumps to the
/// next timer, so nothing here waits in real time.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds")
}

/// Whether `message` is a JSON-RPC 2.0 message the server may send: a request or
/// notification (string `method`), or a response (`id` string, number or null, exactly one
/// of `result` and `error`, an error having an integer code and a string message). A batch
/// answer is a non-empty array of responses.
pub fn check_outgoing(message: &Value, what: &str) {
    if let Value::Array(items) = message {
        assert!(!items.is_empty(), "{what}: empty batch answer");
        for item in items {
            assert!(
                item.get("method").is_none(),
                "{what}: a batch answer holds {item}"
            );
            check_outgoing(item, what);
        }
        return;
    }
    let obj = message
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object: {message}"));
    assert_eq!(obj.get("jsonrpc"), Some(&json!("2.0")), "{what}: {message}");
    if let Some(method) = obj.get("method") {
        assert!(method.is_string(), "{what}: {message}");
        assert!(
            !obj.contains_key("result") && !obj.contains_key("error"),
            "{what}: {message}"
        );
        if let Some(params) = obj.get("params") {
            assert!(params.is_object() || params.is_array(), "{what}: {message}");
        }
        if let Some(id) = obj.get("id") {
            assert!(id.is_string() || id.is_number(), "{what}: {message}");
        }
        return;
    }
    let id = obj
        .get("id")
        .unwrap_or_else(|| panic!("{what}: no method and no id: {message}"));
    assert!(
        id.is_string() || id.is_number() || id.is_null(),
        "{what}: {message}"
    );
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => assert!(!id.is_null(), "{what}: a result for a null id: {message}"),
        (None, Some(error)) => {
            assert!(
                error.get("code").is_some_and(Value::is_i64),
                "{what}: {message}"
            );
            assert!(
                error.get("message").is_some_and(Value::is_string),
                "{what}: {message}"
            );
        }
        _ => panic!("{what}: a response needs exactly one of result and error: {message}"),
    }
}
