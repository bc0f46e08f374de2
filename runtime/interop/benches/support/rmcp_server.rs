//! The benchmark content (a number of small-schema tools answering a short text, one with
//! structured output, a 64 KiB text resource) and rmcp's server of it, through rmcp's
//! `ServerHandler`. Apart from `servers.rs` because it needs nothing of this runtime: the
//! rmcp Streamable HTTP server (`benches/rmcp_http`, a package of its own) serves the
//! same content from this same file.

#![allow(dead_code)] // Each bench or example uses part of this file.

use std::sync::Arc;

use serde_json::{json, Value};
/// The small input schema every listed tool has.
pub(crate) fn tool_input_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]})
}

/// The text the text tools answer.
pub(crate) const ANSWER: &str = "It will be sunny.";

/// The arguments of the typed tool, `forecast` (decoded into this struct on both sides).
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct ForecastArgs {
    pub(crate) city: String,
    pub(crate) days: Option<u32>,
}

/// The typed tool's name.
pub(crate) const TYPED_TOOL: &str = "forecast";

/// The typed tool's answer.
pub(crate) fn forecast(args: ForecastArgs) -> String {
    format!("{}: sunny for {} days", args.city, args.days.unwrap_or(1))
}

/// The typed tool's input schema as rmcp lists it (ours derives the same with schemars).
fn forecast_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"], "format": "uint32", "minimum": 0}}, "required": ["city"]})
}

/// The 64 KiB resource's URI.
pub(crate) const BIG_URI: &str = "mem://big";

pub(crate) fn big_text() -> String {
    "x".repeat(64 * 1024)
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
        list.push(Tool::new(
            TYPED_TOOL,
            "A tool with typed arguments",
            schema(forecast_schema()),
        ));
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
        if request.name == TYPED_TOOL {
            let arguments = Value::Object(request.arguments.unwrap_or_default());
            let args: ForecastArgs = serde_json::from_value(arguments).map_err(|e| {
                rmcp::ErrorData::invalid_params(format!("invalid arguments: {e}"), None)
            })?;
            return Ok(CallToolResult::success(vec![ContentBlock::text(forecast(args))]).into());
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
