//! OpenTelemetry for servers, clients and bridges built on `mcp-runtime`: the spans the
//! runtime opens by the OpenTelemetry semantic conventions for MCP, and the conventions'
//! duration metrics, exported over OTLP (`http/protobuf` or `http/json`).
//!
//! ```no_run
//! // Logs to stderr as `RUST_LOG` says; exports when `OTEL_EXPORTER_OTLP_ENDPOINT` is
//! // set. Flushed at `shutdown` (or when `telemetry` is dropped).
//! let telemetry = mcp_runtime_otel::init("my-mcp-server");
//! // ... serve ...
//! telemetry.shutdown();
//! ```
//!
//! [`init`] reads the standard variables:
//!
//! | variable | meaning |
//! |---|---|
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL (`/v1/traces`, `/v1/metrics` appended); unset, nothing is exported and nothing is installed beyond the log to stderr |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `…_METRICS_ENDPOINT` | one signal's full URL |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` | `http/protobuf` (default) or `http/json`; `grpc` is not built in (warned, and `http/protobuf` used) |
//! | `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT` | as the OTLP exporter specification says |
//! | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource (the name given to [`init`] when unset) |
//! | `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG` | the sampler (default: parent-based, always on) |
//! | `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_METRIC_EXPORT_INTERVAL` | how often spans and metrics leave |
//! | `OTEL_SDK_DISABLED=true` | export nothing |
//!
//! What is exported: every span of the `mcp` target (one per request and notification a
//! server handles, one per request a client sends — `{mcp.method.name} {target}`, kind
//! server or client, with the conventions' attributes and status), the spans and events of
//! other targets that `RUST_LOG` enables (events become span events: the runtime's own
//! diagnostics and a handler's `tracing` events land on the request's span), and the
//! histograms `mcp.server.operation.duration`, `mcp.client.operation.duration`,
//! `mcp.server.session.duration` and `mcp.client.session.duration` (seconds, the
//! conventions' bucket boundaries). A request's trace continues the one its
//! `params._meta.traceparent` names (else its HTTP `traceparent` header), and the client
//! sends its span's context in `_meta`.
//!
//! The protocol's own logging (`notifications/message`, set by `logging/setLevel` or a
//! 2026-07-28 request's log level) is not changed by any of this: it goes to the client
//! exactly as its revision defines. A handler that wants the same message in
//! OpenTelemetry emits a `tracing` event beside it (it becomes an event of the request's
//! span).

mod bridge;
mod http_client;
mod metrics;

use std::str::FromStr;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

pub use bridge::OtelTraceBridge;
pub use metrics::{McpMetricsLayer, DURATION_BOUNDARIES};
/// The OTLP wire protocols ([`ExportConfig::protocol`]).
pub use opentelemetry_otlp::Protocol;

/// The instrumentation scope of the exported spans and metrics.
pub const SCOPE: &str = "mcp-runtime";

/// What [`init`] installed; flushes and stops the exporters when dropped (or at
/// [`Telemetry::shutdown`]).
#[derive(Debug, Default)]
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl Telemetry {
    /// Whether spans and metrics are exported.
    pub fn exporting(&self) -> bool {
        self.tracer.is_some()
    }

    /// Exports what is pending now.
    pub fn flush(&self) {
        if let Some(tracer) = &self.tracer {
            if let Err(e) = tracer.force_flush() {
                eprintln!("OpenTelemetry: flushing spans failed: {e}");
            }
        }
        if let Some(meter) = &self.meter {
            if let Err(e) = meter.force_flush() {
                eprintln!("OpenTelemetry: flushing metrics failed: {e}");
            }
        }
    }

    /// Exports what is pending and stops the exporters.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        // Spans first: a span closed by the last requests is in no metric yet otherwise.
        if let Some(tracer) = self.tracer.take() {
            let _ = tracer.shutdown();
        }
        if let Some(meter) = self.meter.take() {
            let _ = meter.shutdown();
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Where and how to export, as the environment says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportConfig {
    /// `http/protobuf` or `http/json`.
    pub protocol: Protocol,
    /// The resource's service name.
    pub service_name: String,
    /// The collector's base URL (`/v1/traces` and `/v1/metrics` are appended); `None`:
    /// the OTLP exporter reads its variables itself.
    pub endpoint: Option<String>,
}

impl ExportConfig {
    /// The configuration the environment asks for, or `None` when nothing is to be
    /// exported (no endpoint, or `OTEL_SDK_DISABLED=true`).
    pub fn from_env(default_service_name: &str) -> Option<ExportConfig> {
        ExportConfig::from_lookup(default_service_name, |key| std::env::var(key).ok())
    }

    /// [`ExportConfig::from_env`] over any source of variables.
    pub fn from_lookup(
        default_service_name: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Option<ExportConfig> {
        let set = |key: &str| var(key).filter(|v| !v.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return None;
        }
        let endpoint = [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        ]
        .iter()
        .any(|key| set(key).is_some());
        if !endpoint {
            return None;
        }
        let protocol = match set("OTEL_EXPORTER_OTLP_PROTOCOL").as_deref().map(str::trim) {
            Some("http/json") => Protocol::HttpJson,
            None | Some("http/protobuf") => Protocol::HttpBinary,
            Some(other) => {
                eprintln!("OpenTelemetry: OTEL_EXPORTER_OTLP_PROTOCOL={other} is not built in; exporting over http/protobuf");
                Protocol::HttpBinary
            }
        };
        Some(ExportConfig {
            protocol,
            service_name: set("OTEL_SERVICE_NAME")
                .unwrap_or_else(|| default_service_name.to_owned()),
            endpoint: None,
        })
    }
}

/// Installs the process's `tracing` subscriber: a log to stderr filtered by `RUST_LOG`
/// (as `tracing_subscriber::fmt` with `EnvFilter::from_default_env()` would), and, when
/// the environment asks for export ([`ExportConfig::from_env`]), OpenTelemetry: the
/// runtime's spans and `RUST_LOG`'s, the MCP metrics, W3C trace context and baggage
/// propagation. Without an endpoint nothing else is installed, and the runtime's spans
/// cost what a disabled span costs.
///
/// If a global subscriber is installed already, it is left as it is and nothing is
/// exported (said on stderr).
pub fn init(default_service_name: &str) -> Telemetry {
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(EnvFilter::from_default_env());
    let Some(config) = ExportConfig::from_env(default_service_name) else {
        if tracing_subscriber::registry()
            .with(stderr)
            .try_init()
            .is_err()
        {
            eprintln!("OpenTelemetry: a tracing subscriber is installed already");
        }
        return Telemetry::default();
    };
    let (telemetry, tracer, meter) = match providers(&config, true) {
        Ok(built) => built,
        Err(e) => {
            eprintln!("OpenTelemetry: export not started: {e}");
            let _ = tracing_subscriber::registry().with(stderr).try_init();
            return Telemetry::default();
        }
    };
    let installed = tracing_subscriber::registry()
        .with(stderr)
        .with(exporting_layers(tracer, &meter))
        .try_init();
    if installed.is_err() {
        eprintln!("OpenTelemetry: a tracing subscriber is installed already; not exporting");
        return Telemetry::default();
    }
    install_bridge();
    telemetry
}

/// Installs [`OtelTraceBridge`] as the runtime's trace bridge (once per process; [`init`]
/// and [`exporting_dispatch`] do).
pub fn install_bridge() {
    static BRIDGE: OtelTraceBridge = OtelTraceBridge;
    mcp_runtime::observe::install_trace_bridge(&BRIDGE);
}

/// The span and metric layers of an exporting subscriber.
fn exporting_layers<S>(
    tracer: opentelemetry_sdk::trace::Tracer,
    meter: &opentelemetry::metrics::Meter,
) -> impl Layer<S> + Send + Sync
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a> + Send + Sync,
{
    let exported = exported_filter();
    // Without the layer's extras (code location, thread, busy/idle timings, an
    // OpenTelemetry context attached at every enter): each costs per span, and none is
    // in the conventions. Parents follow `tracing`'s current span.
    let spans = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_level(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_context_activation(false)
        .with_filter(exported.clone());
    let metrics = McpMetricsLayer::new(meter).with_filter(exported);
    spans.and_then(metrics)
}

/// An exporting subscriber as a [`tracing::Dispatch`] of its own, not installed: for a
/// program that sets it where it wants (`tracing::dispatcher::set_default` on a thread,
/// as tests do), or several in one process. Installs the trace bridge.
pub fn exporting_dispatch(
    config: &ExportConfig,
) -> Result<(Telemetry, tracing::Dispatch), Box<dyn std::error::Error + Send + Sync>> {
    let (telemetry, tracer, meter) = providers(config, false)?;
    let subscriber = tracing_subscriber::registry().with(exporting_layers(tracer, &meter));
    install_bridge();
    Ok((telemetry, tracing::Dispatch::new(subscriber)))
}

/// What is exported: the runtime's `mcp` target at INFO, and what `RUST_LOG` enables
/// (its plain `target=level` directives).
fn exported_filter() -> Targets {
    let from_env = std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| Targets::from_str(&directives).ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::OFF));
    from_env.with_target(mcp_runtime::observe::TARGET, LevelFilter::INFO)
}

/// The tracer and meter providers (installed as the global ones when `global`), the
/// tracer and the meter.
fn providers(
    config: &ExportConfig,
    global: bool,
) -> Result<
    (
        Telemetry,
        opentelemetry_sdk::trace::Tracer,
        opentelemetry::metrics::Meter,
    ),
    Box<dyn std::error::Error + Send + Sync>,
> {
    use opentelemetry::metrics::MeterProvider as _;
    let resource = Resource::builder()
        .with_service_name(config.service_name.clone())
        .build();
    let url = |signal: &str| {
        config
            .endpoint
            .as_ref()
            .map(|base| format!("{}/v1/{signal}", base.trim_end_matches('/')))
    };
    let mut spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(config.protocol)
        .with_http_client(http_client::BlockingClient::default());
    if let Some(url) = url("traces") {
        spans = spans.with_endpoint(url);
    }
    let tracer_provider = SdkTracerProvider::builder()
        .with_batch_exporter(spans.build()?)
        .with_resource(resource.clone())
        .build();
    let mut metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(config.protocol)
        .with_http_client(http_client::BlockingClient::default());
    if let Some(url) = url("metrics") {
        metrics = metrics.with_endpoint(url);
    }
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics.build()?)
        .with_resource(resource)
        .build();
    if global {
        opentelemetry::global::set_tracer_provider(tracer_provider.clone());
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        opentelemetry::global::set_text_map_propagator(bridge::propagator());
    }
    let tracer = tracer_provider.tracer(SCOPE);
    let meter = meter_provider.meter(SCOPE);
    Ok((
        Telemetry {
            tracer: Some(tracer_provider),
            meter: Some(meter_provider),
        },
        tracer,
        meter,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        assert_eq!(ExportConfig::from_lookup("s", lookup(&[])), None);
        assert_eq!(
            ExportConfig::from_lookup("s", lookup(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])),
            None
        );
        assert_eq!(
            ExportConfig::from_lookup(
                "s",
                lookup(&[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                    ("OTEL_SDK_DISABLED", "TRUE")
                ])
            ),
            None
        );
    }

    #[test]
    fn protocol_and_service_name_come_from_the_environment() {
        let config = ExportConfig::from_lookup(
            "default-name",
            lookup(&[
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://127.0.0.1:4318/v1/traces",
                ),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ]),
        )
        .unwrap();
        assert_eq!(config.protocol, Protocol::HttpJson);
        assert_eq!(config.service_name, "default-name");
        let config = ExportConfig::from_lookup(
            "default-name",
            lookup(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_SERVICE_NAME", "weather"),
            ]),
        )
        .unwrap();
        assert_eq!(config.protocol, Protocol::HttpBinary);
        assert_eq!(config.service_name, "weather");
    }
}
