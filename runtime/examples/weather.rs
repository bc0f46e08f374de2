//! A small server to copy from: a typed tool with a structured output, a plain tool, a
//! resource template and a prompt, written once and served to clients of every revision.
//!
//! `cargo run -p mcp-runtime --example weather` serves one client on stdio;
//! `… -- --http 127.0.0.1:3000` serves `http://127.0.0.1:3000/mcp` (and `/sse` for
//! 2024-11-05 clients).

use mcp_runtime::model::{
    Implementation, Prompt, PromptArgument, PromptMessage, PromptResult, ResourceContents,
    ResourceTemplate, Tool, ToolResult,
};
use mcp_runtime::{RpcError, Server};
use serde_json::Value;

/// What `forecast` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ForecastRequest {
    /// The city, e.g. "Oslo".
    city: String,
    /// How many days ahead (default 1).
    days: Option<u8>,
}

/// What `forecast` answers: clients of 2025-06-18 and later get it as `structuredContent`
/// (and its schema as `outputSchema`), older ones as JSON text.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    /// Degrees Celsius.
    temperature: f64,
    /// In words.
    conditions: String,
}

fn weather_server() -> Server {
    Server::builder(Implementation::new("weather", "1.0.0").title("Weather"))
        .instructions("Ask `forecast` for the weather in a city.")
        .structured_tool::<ForecastRequest, Forecast, _, _>(
            Tool::new("forecast", "The weather in a city, some days ahead")
                .title("Forecast")
                .read_only(),
            |request, _ctx| async move {
                let days = request.days.unwrap_or(1);
                Ok(Forecast {
                    temperature: 18.0 + f64::from(days),
                    conditions: "partly cloudy".into(),
                    city: request.city,
                })
            },
        )
        .tool(
            Tool::new("cities", "The cities this server knows").read_only(),
            |_args, _ctx| async { Ok(ToolResult::text("Oslo, Lisbon, Nairobi")) },
        )
        .resource_template(
            ResourceTemplate::new("weather://{city}/today", "today")
                .title("Today's weather")
                .mime_type("text/plain"),
            |uri, vars, _ctx| async move {
                let city = vars.get("city").cloned().unwrap_or_default();
                Ok(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    format!("{city}: 19 °C, partly cloudy"),
                )])
            },
        )
        .prompt(
            Prompt::new("packing_list")
                .description("What to pack for a trip")
                .argument(PromptArgument::new("city").required()),
            |args, _ctx| async move {
                let city = args
                    .get("city")
                    .and_then(Value::as_str)
                    .unwrap_or("anywhere");
                Ok::<_, RpcError>(PromptResult::new([PromptMessage::user(format!(
                    "Check the forecast for {city} and suggest what to pack."
                ))]))
            },
        )
        .build()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => mcp_runtime::transport::stdio::serve_stdio(weather_server()).await,
        ["--http", addr] => {
            let addr: std::net::SocketAddr = addr.parse().unwrap_or_else(|e| {
                eprintln!("--http {addr}: {e}");
                std::process::exit(2);
            });
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            mcp_runtime::transport::http::serve_listener(
                weather_server(),
                listener,
                Default::default(),
            )
            .await
        }
        _ => {
            eprintln!("usage: weather [--http ADDR]");
            std::process::exit(2);
        }
    }
}
