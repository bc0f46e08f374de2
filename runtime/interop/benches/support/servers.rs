//! The benchmark servers, once for this runtime and once for rmcp (the official Rust SDK):
//! the same tools (a number of small-schema tools answering a short text, one with
//! structured output) and the same 64 KiB text resource, so both answer the same
//! requests with the same content. The content and rmcp's server are in `rmcp_server.rs`.

#![allow(dead_code)] // Each bench or example uses part of this file.

use serde_json::json;

#[path = "rmcp_server.rs"]
mod rmcp_server;
#[allow(unused_imports)]
pub(crate) use rmcp_server::{
    big_text, forecast, tool_input_schema, ForecastArgs, RmcpBench, ANSWER, BIG_URI, TYPED_TOOL,
};

/// This runtime's benchmark server with `tools` text tools.
pub(crate) fn ours(tools: usize) -> mcp_runtime::Server {
    use mcp_runtime::model::{Implementation, Resource, ResourceContents, Tool, ToolResult};
    let mut builder = mcp_runtime::Server::builder(Implementation::new("bench", "1.0.0"));
    for i in 0..tools {
        let tool = Tool::new(format!("tool_{i}"), "A tool with a small object schema")
            .title(format!("Tool {i}"))
            .input_schema(tool_input_schema());
        builder = builder.tool(tool, |_, _| async { Ok(ToolResult::text(ANSWER)) });
    }
    let structured = Tool::new("structured", "Structured output")
        .input_schema(json!({"type": "object"}))
        .output_schema(
            json!({"type": "object", "properties": {"temperature": {"type": "number"}}}),
        );
    let resource = Resource::new(BIG_URI, "big").mime_type("text/plain");
    let text = big_text();
    builder
        .typed_tool(
            Tool::new(TYPED_TOOL, "A tool with typed arguments"),
            |args: ForecastArgs, _| async move { forecast(args) },
        )
        .tool(structured, |_, _| async {
            let data = json!({"temperature": 22.5});
            Ok(ToolResult::text(data.to_string()).structured(data))
        })
        .resource(resource, move |uri, _| {
            let text = text.clone();
            async move { Ok(vec![ResourceContents::text(uri, "text/plain", text)]) }
        })
        .build()
}
