//! A small server to copy from: a typed tool with a structured output, a plain tool, a
//! slow tool that runs as a task, a resource template and a prompt, written once and
//! served to clients of every revision.
//!
//! `cargo run -p mcp-interop --example weather` serves one client on stdio;
//! `… -- --http 127.0.0.1:3000` serves `http://127.0.0.1:3000/mcp` (and `/sse` for
//! 2024-11-05 clients).

use std::time::Duration;

use mcp_runtime::model::{Implementation, Prompt, ResourceTemplate, TaskSupport, Tool};
use mcp_runtime::Server;
use mcp_runtime_http::{self as transport, Transport};

/// What `forecast` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ForecastRequest {
    /// The city, e.g. "Oslo".
    city: String,
    /// How many days ahead (default 1).
    days: Option<u8>,
}

/// What `climate_report` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReportRequest {
    /// The city.
    city: String,
    /// How many years of records to go through (default 3).
    years: Option<u32>,
}

/// The variables of `weather://{city}/today`.
#[derive(serde::Deserialize)]
struct Today {
    city: String,
}

/// The arguments of the `packing_list` prompt.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Trip {
    /// Where to.
    city: String,
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
        // Slow: with `task_support`, a client that supports tasks (2025-11-25 `task`, the
        // 2026-07-28 tasks extension) gets a task at once and fetches the report later;
        // other clients wait for it as for any call.
        .typed_tool(
            Tool::new("climate_report", "A climate report of a city, from years of records")
                .read_only()
                .task_support(TaskSupport::Optional),
            |request: ReportRequest, ctx| async move {
                let years = request.years.unwrap_or(3);
                for year in 1..=years {
                    if ctx.is_cancelled() {
                        return "cancelled".to_owned(); // tasks/cancel reaches the handler here
                    }
                    let done = format!("read {year} of {years} years");
                    ctx.progress(f64::from(year), Some(f64::from(years)), Some(&done))
                        .await;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                format!("{}: {years} years of mild summers and wet winters", request.city)
            },
        )
        .tool(
            Tool::new("cities", "The cities this server knows").read_only(),
            |_args, _ctx| async { "Oslo, Lisbon, Nairobi" },
        )
        .typed_resource_template(
            ResourceTemplate::new("weather://{city}/today", "today")
                .title("Today's weather")
                .mime_type("text/plain"),
            |_uri, today: Today, _ctx| async move {
                format!("{}: 19 °C, partly cloudy", today.city)
            },
        )
        .typed_prompt(
            Prompt::new("packing_list").description("What to pack for a trip"),
            |trip: Trip, _ctx| async move {
                format!(
                    "Check the forecast for {} and suggest what to pack.",
                    trip.city
                )
            },
        )
        .build()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // Exports over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
    let _telemetry = mcp_runtime_otel::init("weather");
    transport::run(weather_server(), Transport::from_args()).await
}
