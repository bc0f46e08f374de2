//! An OTLP/HTTP receiver on a loopback port: `POST /v1/traces` and `/v1/metrics`, in
//! `http/protobuf` (decoded with the official protobuf definitions, `opentelemetry-proto`)
//! or `http/json` (read by hand by the OTLP/JSON rules: hex ids, camelCase keys), kept as
//! plain records for the tests to query.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::metric;
use prost::Message;
use serde_json::Value;

/// A received span.
#[derive(Clone, Debug)]
pub struct SpanRecord {
    pub service: String,
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub name: String,
    /// OTLP's `SpanKind`: 2 server, 3 client.
    pub kind: i64,
    pub attributes: BTreeMap<String, String>,
    /// OTLP's `StatusCode`: 0 unset, 1 ok, 2 error.
    pub status_code: i64,
    pub status_message: String,
    /// Linked spans' (trace id, span id).
    pub links: Vec<(String, String)>,
}

impl SpanRecord {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// One histogram data point.
#[derive(Clone, Debug)]
pub struct HistogramPoint {
    pub service: String,
    pub metric: String,
    pub unit: String,
    pub attributes: BTreeMap<String, String>,
    pub count: u64,
    pub sum: f64,
    pub bounds: Vec<f64>,
}

#[derive(Default)]
struct Received {
    spans: Vec<SpanRecord>,
    points: Vec<HistogramPoint>,
    content_types: Vec<String>,
    errors: Vec<String>,
}

/// The receiver; its thread serves until the process ends.
#[derive(Clone)]
pub struct Receiver {
    base: String,
    received: Arc<Mutex<Received>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the OTLP receiver");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let received = Arc::new(Mutex::new(Received::default()));
        let sink = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let sink = Arc::clone(&sink);
                std::thread::spawn(move || serve(stream, &sink));
            }
        });
        Receiver { base, received }
    }

    /// The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn spans(&self) -> Vec<SpanRecord> {
        self.lock().spans.clone()
    }

    pub fn points(&self) -> Vec<HistogramPoint> {
        self.lock().points.clone()
    }

    /// The `Content-Type` of every export received.
    pub fn content_types(&self) -> Vec<String> {
        self.lock().content_types.clone()
    }

    /// Exports that could not be decoded.
    pub fn errors(&self) -> Vec<String> {
        self.lock().errors.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Received> {
        self.received.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn serve(stream: TcpStream, sink: &Mutex<Received>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let (mut length, mut content_type) = (0usize, String::new());
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "content-type" => content_type = value.trim().to_owned(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let json = content_type.starts_with("application/json");
        {
            let mut received = sink.lock().unwrap_or_else(|e| e.into_inner());
            received.content_types.push(content_type.clone());
            let decoded = match (path.as_str(), json) {
                ("/v1/traces", false) => ExportTraceServiceRequest::decode(body.as_slice())
                    .map_err(|e| e.to_string())
                    .map(|r| received.spans.extend(spans_of_proto(&r))),
                ("/v1/traces", true) => serde_json::from_slice::<Value>(&body)
                    .map_err(|e| e.to_string())
                    .map(|v| received.spans.extend(spans_of_json(&v))),
                ("/v1/metrics", false) => ExportMetricsServiceRequest::decode(body.as_slice())
                    .map_err(|e| e.to_string())
                    .map(|r| received.points.extend(points_of_proto(&r))),
                ("/v1/metrics", true) => serde_json::from_slice::<Value>(&body)
                    .map_err(|e| e.to_string())
                    .map(|v| received.points.extend(points_of_json(&v))),
                (other, _) => Err(format!("unexpected path {other}")),
            };
            if let Err(e) = decoded {
                received.errors.push(format!("{path}: {e}"));
            }
        }
        let answer: &[u8] = if json { b"{}" } else { b"" };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n",
            if json {
                "application/json"
            } else {
                "application/x-protobuf"
            },
            answer.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(answer).is_err() {
            return;
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn proto_value(v: Option<&any_value::Value>) -> String {
    match v {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        other => format!("{other:?}"),
    }
}

fn proto_attributes(kvs: &[KeyValue]) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| {
            (
                kv.key.clone(),
                proto_value(kv.value.as_ref().and_then(|v| v.value.as_ref())),
            )
        })
        .collect()
}

fn spans_of_proto(request: &ExportTraceServiceRequest) -> Vec<SpanRecord> {
    let mut out = Vec::new();
    for rs in &request.resource_spans {
        let resource = proto_attributes(rs.resource.as_ref().map_or(&[][..], |r| &r.attributes));
        let service = resource.get("service.name").cloned().unwrap_or_default();
        for ss in &rs.scope_spans {
            for s in &ss.spans {
                let status = s.status.clone().unwrap_or_default();
                out.push(SpanRecord {
                    service: service.clone(),
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: hex(&s.parent_span_id),
                    name: s.name.clone(),
                    kind: i64::from(s.kind),
                    attributes: proto_attributes(&s.attributes),
                    status_code: i64::from(status.code),
                    status_message: status.message,
                    links: s
                        .links
                        .iter()
                        .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
                        .collect(),
                });
            }
        }
    }
    out
}

fn points_of_proto(request: &ExportMetricsServiceRequest) -> Vec<HistogramPoint> {
    let mut out = Vec::new();
    for rm in &request.resource_metrics {
        let resource = proto_attributes(rm.resource.as_ref().map_or(&[][..], |r| &r.attributes));
        let service = resource.get("service.name").cloned().unwrap_or_default();
        for sm in &rm.scope_metrics {
            for m in &sm.metrics {
                if let Some(metric::Data::Histogram(h)) = &m.data {
                    for p in &h.data_points {
                        out.push(HistogramPoint {
                            service: service.clone(),
                            metric: m.name.clone(),
                            unit: m.unit.clone(),
                            attributes: proto_attributes(&p.attributes),
                            count: p.count,
                            sum: p.sum.unwrap_or_default(),
                            bounds: p.explicit_bounds.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

fn json_scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn json_attributes(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_array)
        .map(|kvs| {
            kvs.iter()
                .map(|kv| {
                    let key = kv["key"].as_str().unwrap_or_default().to_owned();
                    let value = kv["value"]
                        .as_object()
                        .and_then(|o| o.values().next())
                        .map(json_scalar)
                        .unwrap_or_default();
                    (key, value)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn json_int(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap_or_default(),
        Value::String(s) => s.parse().unwrap_or_default(),
        _ => 0,
    }
}

fn json_list<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v[key].as_array().into_iter().flatten()
}

fn spans_of_json(request: &Value) -> Vec<SpanRecord> {
    let mut out = Vec::new();
    for rs in json_list(request, "resourceSpans") {
        let resource = json_attributes(rs["resource"].get("attributes"));
        let service = resource.get("service.name").cloned().unwrap_or_default();
        for ss in json_list(rs, "scopeSpans") {
            for s in json_list(ss, "spans") {
                out.push(SpanRecord {
                    service: service.clone(),
                    trace_id: s["traceId"].as_str().unwrap_or_default().to_owned(),
                    span_id: s["spanId"].as_str().unwrap_or_default().to_owned(),
                    parent_span_id: s["parentSpanId"].as_str().unwrap_or_default().to_owned(),
                    name: s["name"].as_str().unwrap_or_default().to_owned(),
                    kind: json_int(&s["kind"]),
                    attributes: json_attributes(s.get("attributes")),
                    status_code: json_int(&s["status"]["code"]),
                    status_message: s["status"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    links: json_list(s, "links")
                        .map(|l| {
                            (
                                l["traceId"].as_str().unwrap_or_default().to_owned(),
                                l["spanId"].as_str().unwrap_or_default().to_owned(),
                            )
                        })
                        .collect(),
                });
            }
        }
    }
    out
}

fn points_of_json(request: &Value) -> Vec<HistogramPoint> {
    let mut out = Vec::new();
    for rm in json_list(request, "resourceMetrics") {
        let resource = json_attributes(rm["resource"].get("attributes"));
        let service = resource.get("service.name").cloned().unwrap_or_default();
        for sm in json_list(rm, "scopeMetrics") {
            for m in json_list(sm, "metrics") {
                for p in json_list(&m["histogram"], "dataPoints") {
                    out.push(HistogramPoint {
                        service: service.clone(),
                        metric: m["name"].as_str().unwrap_or_default().to_owned(),
                        unit: m["unit"].as_str().unwrap_or_default().to_owned(),
                        attributes: json_attributes(p.get("attributes")),
                        count: u64::try_from(json_int(&p["count"])).unwrap_or_default(),
                        sum: p["sum"].as_f64().unwrap_or_default(),
                        bounds: json_list(p, "explicitBounds")
                            .filter_map(Value::as_f64)
                            .collect(),
                    });
                }
            }
        }
    }
    out
}
