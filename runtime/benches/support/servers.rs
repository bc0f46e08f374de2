//! The benchmark servers, once for this runtime and once for rmcp (the official Rust SDK):
//! the same tools (a number of small-schema tools answering a short text, one with
//! structured output) and the same 64 KiB text resource, so both answer the same
//! requests with the same content.

#![allow(dead_code)] // Each bench or example uses part of this file.

use std::sync::Arc;

use serde_json::{json, Value};

/// The small input schema every listed tool has.
pub(crate) fn tool_input_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]})
}

/// The text the text tools answer.
pub(crate) const ANSWER: &str = "It will be sunny.";

/// The 64 KiB resource's URI.
pub(crate) const BIG_URI: &str = "mem://big";

fn big_text() -> String {
    "x".repeat(64 * 1024)
}

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

/// rmcp's benchmark server: the same tools and resource through rmcp's `ServerHandler`.
#[derive(Clone)]
pub(crate) struct RmcpBench {
    tools: Arc<Vec<rmcp::model::Tool>>,
    big: Arc<String>,
}

impl RmcpBench {
    /// A server with `tools` text tools (and the structured one).
    pub(crate) fn new(tools: usize) -> RmcpBench {
        use rmcp::model::Tool;
        let schema = |v: Value| match v {
            Value::Object(m) => Arc::new(m),
            _ => Arc::new(serde_json::Map::new()),
        };
        let mut list: Vec<Tool> = (0..tools)
            .map(|i| {
                Tool::new(
                    format!("tool_{i}"),
                    "A tool with a small object schema",
                    schema(tool_input_schema()),
                )
                .with_title(format!("Tool {i}"))
            })
            .collect();
        list.push(
            Tool::new(
                "structured",
                "Structured output",
                schema(json!({"type": "object"})),
            )
            .with_raw_output_schema(schema(
                json!({"type": "object", "properties": {"temperature": {"type": "number"}}}),
            )),
        );
        RmcpBench {
            tools: Arc::new(list),
            big: Arc::new(big_text()),
        }
    }
}

impl rmcp::ServerHandler for RmcpBench {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("bench", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListToolsResult::with_all_items(
            self.tools.as_ref().clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        use rmcp::model::{CallToolResult, ContentBlock};
        if request.name == "structured" {
            return Ok(CallToolResult::structured(json!({"temperature": 22.5})).into());
        }
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(rmcp::ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(ANSWER)]).into())
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        use rmcp::model::{ReadResourceResult, ResourceContents};
        if request.uri != BIG_URI {
            return Err(rmcp::ErrorData::resource_not_found(
                format!("Unknown resource: {}", request.uri),
                None,
            ));
        }
        Ok(
            ReadResourceResult::new(vec![ResourceContents::text(self.big.as_str(), request.uri)])
                .into(),
        )
    }
}
