//! The runtime's trace contexts as OpenTelemetry's: a request's remote parent (W3C Trace
//! Context and Baggage from its `_meta` or HTTP headers) becomes its span's parent, and
//! a client span's context becomes the `_meta` its request carries.

use std::collections::HashMap;

use mcp_runtime::observe::{TraceBridge, TraceContext, BAGGAGE, TRACEPARENT, TRACESTATE};
use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// W3C Trace Context and W3C Baggage, the propagation MCP's `_meta` carries.
pub(crate) fn propagator() -> TextMapCompositePropagator {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
}

/// The [`TraceBridge`] that `init` installs.
#[derive(Clone, Copy, Debug, Default)]
pub struct OtelTraceBridge;

impl TraceBridge for OtelTraceBridge {
    fn set_remote_parent(&self, span: &Span, remote: &TraceContext) {
        let mut carrier = HashMap::new();
        carrier.insert(TRACEPARENT.to_owned(), remote.parent.to_string());
        if let Some(state) = &remote.tracestate {
            carrier.insert(TRACESTATE.to_owned(), state.clone());
        }
        if let Some(baggage) = &remote.baggage {
            carrier.insert(BAGGAGE.to_owned(), baggage.clone());
        }
        let parent = propagator().extract(&carrier);
        // The conventions: the `_meta` context is the parent, and the ambient one (the
        // span the transport's own instrumentation opened, if any) a link.
        let ambient = Span::current().context();
        let ambient = ambient.span().span_context().clone();
        if ambient.is_valid() && ambient.trace_id() != remote_trace_id(remote) {
            span.add_link(ambient);
        }
        let _ = span.set_parent(parent);
    }

    fn context_of(&self, span: &Span) -> Option<TraceContext> {
        let cx = span.context();
        if !cx.span().span_context().is_valid() {
            return None;
        }
        let mut carrier: HashMap<String, String> = HashMap::new();
        propagator().inject_context(&cx, &mut carrier);
        TraceContext::from_headers(
            carrier.get(TRACEPARENT)?,
            carrier.get(TRACESTATE).map(String::as_str),
            carrier.get(BAGGAGE).map(String::as_str),
        )
    }
}

fn remote_trace_id(remote: &TraceContext) -> opentelemetry::trace::TraceId {
    opentelemetry::trace::TraceId::from_bytes(remote.parent.trace_id)
}
