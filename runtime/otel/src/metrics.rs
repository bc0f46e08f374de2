//! The conventions' duration histograms, derived from the runtime's spans and session
//! events: `mcp.server.operation.duration` and `mcp.client.operation.duration` from each
//! request span's lifetime, `mcp.server.session.duration` and
//! `mcp.client.session.duration` from the event that ends a session. Only the
//! conventions' low-cardinality attributes are kept (no request id, session id or URI).

use std::time::Instant;

use mcp_runtime::observe::{CLIENT_SPAN, SERVER_SPAN, TARGET};
use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::KeyValue;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The conventions' explicit bucket boundaries for every MCP duration, in seconds.
pub const DURATION_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The span attributes a duration metric keeps.
const METRIC_ATTRIBUTES: [&str; 9] = [
    "mcp.method.name",
    "error.type",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
    "rpc.response.status_code",
    "mcp.protocol.version",
    "network.transport",
    "network.protocol.name",
];

/// A `tracing` layer that records the MCP duration histograms.
#[derive(Clone, Debug)]
pub struct McpMetricsLayer {
    server_operation: Histogram<f64>,
    client_operation: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
}

fn histogram(meter: &Meter, name: &'static str, description: &'static str) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .with_boundaries(DURATION_BOUNDARIES.to_vec())
        .build()
}

impl McpMetricsLayer {
    /// The histograms, made with `meter`.
    pub fn new(meter: &Meter) -> McpMetricsLayer {
        McpMetricsLayer {
            server_operation: histogram(
                meter,
                "mcp.server.operation.duration",
                "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.",
            ),
            client_operation: histogram(
                meter,
                "mcp.client.operation.duration",
                "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.",
            ),
            server_session: histogram(
                meter,
                "mcp.server.session.duration",
                "The duration of the MCP session as observed on the MCP server.",
            ),
            client_session: histogram(
                meter,
                "mcp.client.session.duration",
                "The duration of the MCP session as observed on the MCP client.",
            ),
        }
    }
}

/// A request span being timed.
struct Timed {
    began: Instant,
    server: bool,
    attributes: Attributes9,
}

/// The kept attributes' values, by [`METRIC_ATTRIBUTES`]' order.
#[derive(Default)]
struct Attributes9([Option<String>; 9]);

impl Attributes9 {
    fn set(&mut self, field: &Field, value: String) {
        let at = METRIC_ATTRIBUTES
            .iter()
            .position(|name| *name == field.name());
        if let Some(slot) = at.and_then(|i| self.0.get_mut(i)) {
            *slot = Some(value);
        }
    }

    fn key_values(&self) -> Vec<KeyValue> {
        METRIC_ATTRIBUTES
            .iter()
            .zip(self.0.iter())
            .filter_map(|(name, value)| value.as_ref().map(|v| KeyValue::new(*name, v.clone())))
            .collect()
    }
}

impl Visit for Attributes9 {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, value.to_owned());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, value.to_string());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, format!("{value:?}"));
    }
}

/// A session event's duration and attributes.
#[derive(Default)]
struct SessionEvent {
    seconds: Option<f64>,
    attributes: Attributes9,
}

impl Visit for SessionEvent {
    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == "mcp.session.duration" {
            self.seconds = Some(value);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.attributes.record_str(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() != "message" {
            self.attributes.record_debug(field, value);
        }
    }
}

impl<S> Layer<S> for McpMetricsLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let metadata = attrs.metadata();
        if metadata.target() != TARGET {
            return;
        }
        let server = match metadata.name() {
            SERVER_SPAN => true,
            CLIENT_SPAN => false,
            _ => return,
        };
        let mut attributes = Attributes9::default();
        attrs.record(&mut attributes);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Timed {
                began: Instant::now(),
                server,
                attributes,
            });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(timed) = span.extensions_mut().get_mut::<Timed>() {
                values.record(&mut timed.attributes);
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let extensions = span.extensions();
        let Some(timed) = extensions.get::<Timed>() else {
            return;
        };
        let seconds = timed.began.elapsed().as_secs_f64();
        let histogram = if timed.server {
            &self.server_operation
        } else {
            &self.client_operation
        };
        histogram.record(seconds, &timed.attributes.key_values());
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != TARGET {
            return;
        }
        let mut session = SessionEvent::default();
        event.record(&mut session);
        let Some(seconds) = session.seconds else {
            return;
        };
        // The event's message names the side (see `mcp_runtime::observe::session_ended`).
        let client = is_client_event(event);
        let histogram = if client {
            &self.client_session
        } else {
            &self.server_session
        };
        histogram.record(seconds, &session.attributes.key_values());
    }
}

/// Whether a session event is the client's (its message is the client event's name).
fn is_client_event(event: &Event<'_>) -> bool {
    struct Message(bool);
    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}") == mcp_runtime::observe::CLIENT_SESSION_EVENT;
            }
        }
    }
    let mut message = Message(false);
    event.record(&mut message);
    message.0
}
