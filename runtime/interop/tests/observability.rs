//! Observability from outside (issue 32): the example `conformance_server`, the example
//! `weather` and `mcp-bridge`, as built, export over OTLP when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is set — to a real OTLP/HTTP receiver on a loopback port
//! (`kit::otlp`, on the official protobuf definitions), over `http/protobuf` and
//! `http/json` — spans named and attributed by the OpenTelemetry MCP conventions that
//! continue the trace a request names in `params._meta.traceparent` (2026-07-28 and a
//! 2025-11-25 session; HTTP's `traceparent` header when `_meta` has none), and the
//! duration histograms. One trace runs from this test's client span through
//! `mcp-bridge` to the upstream server's span, over stdio and HTTP, in both eras.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use mcp_runtime::model::Implementation;
use mcp_runtime::protocol::version::Era;
use mcp_runtime::ProtocolVersion;
use mcp_runtime_client::Client;
use mcp_runtime_otel::{ExportConfig, DURATION_BOUNDARIES};
use serde_json::{json, Value};

mod kit;

use kit::otlp::{Receiver, SpanRecord};

const LEGACY_PARENT: (&str, &str) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
const MODERN_PARENT: (&str, &str) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
const HEADER_PARENT: (&str, &str) = ("11111111111111111111111111111111", "2222222222222222");
const SECRET: &str = "hunter2-do-not-export";

fn traceparent((trace, span): (&str, &str)) -> String {
    format!("00-{trace}-{span}-01")
}

/// The variables that make a process export to `receiver` over `protocol`, quickly.
fn exporting(command: &mut Command, receiver: &Receiver, protocol: &str) {
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("RUST_LOG");
}

/// A line-by-line stdio peer of an example process.
struct Lines {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Lines {
    fn spawn(mut command: Command) -> Lines {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Lines {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("open");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    /// The answer to `id` (notifications before it are skipped).
    fn answer(&mut self, id: i64) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).expect("read") > 0, "EOF");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Closes stdin and waits for the process to end (it flushes its export then).
    fn finish(mut self) {
        drop(self.stdin.take());
        let started = std::time::Instant::now();
        loop {
            if self.child.try_wait().expect("wait").is_some() {
                return;
            }
            assert!(
                started.elapsed() < kit::patience::patience(),
                "did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn find<'a>(
    spans: &'a [SpanRecord],
    service: &str,
    name: &str,
    trace: &str,
) -> Option<&'a SpanRecord> {
    spans
        .iter()
        .find(|s| s.service == service && s.name == name && s.trace_id == trace)
}

async fn wait_for_span(receiver: &Receiver, service: &str, name: &str, trace: &str) -> SpanRecord {
    kit::eventually_or(
        || find(&receiver.spans(), service, name, trace).is_some(),
        || {
            format!(
                "no span {name:?} of {service} in trace {trace}; received: {:#?}; errors: {:?}",
                receiver
                    .spans()
                    .iter()
                    .map(|s| (&s.service, &s.name, &s.trace_id))
                    .collect::<Vec<_>>(),
                receiver.errors()
            )
        },
    )
    .await;
    find(&receiver.spans(), service, name, trace)
        .cloned()
        .expect("found")
}

/// No attribute of any span carries the arguments' content.
fn assert_no_content(receiver: &Receiver) {
    for span in receiver.spans() {
        for (key, value) in &span.attributes {
            assert!(!value.contains(SECRET), "{key}={value} in {span:?}");
        }
        assert!(!span.status_message.contains(SECRET), "{span:?}");
    }
}

/// The duration histogram `metric` of `service` has a point whose attributes include
/// `attributes`, with the conventions' boundaries and unit.
async fn wait_for_point(
    receiver: &Receiver,
    service: &str,
    metric: &str,
    attributes: &[(&str, &str)],
) {
    let matches = || {
        receiver.points().into_iter().any(|p| {
            p.service == service
                && p.metric == metric
                && p.count >= 1
                && p.unit == "s"
                && p.bounds == DURATION_BOUNDARIES
                && attributes
                    .iter()
                    .all(|(k, v)| p.attributes.get(*k).map(String::as_str) == Some(*v))
        })
    };
    kit::eventually_or(matches, || {
        format!(
            "no {metric} point of {service} with {attributes:?}: {:#?}",
            receiver.points()
        )
    })
    .await;
}

async fn the_conformance_server_exports_over(protocol: &str) {
    let receiver = Receiver::start();
    let mut command = Command::new(kit::process::example());
    exporting(&mut command, &receiver, protocol);
    let mut server = Lines::spawn(command);
    // A 2026-07-28 request first (a dual-era stdio peer may send one before any
    // `initialize`), then a 2025-11-25 session.
    let mut meta = kit::modern_meta(json!({}));
    meta["traceparent"] = json!(traceparent(MODERN_PARENT));
    server.send(&kit::request(
        1,
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}, "_meta": meta}),
    ));
    assert!(server.answer(1)["result"].is_object());
    server.send(&kit::request(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    ));
    assert_eq!(server.answer(2)["result"]["protocolVersion"], "2025-11-25");
    server.send(&kit::notification("notifications/initialized", None));
    server.send(&kit::request(
        3,
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}, "_meta": {"traceparent": traceparent(LEGACY_PARENT), "tracestate": "rojo=00f067aa0ba902b7"}}),
    ));
    assert!(server.answer(3)["result"].is_object());
    server.send(&kit::request(
        4,
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {"password": SECRET}, "_meta": {"traceparent": traceparent(LEGACY_PARENT)}}),
    ));
    assert_eq!(server.answer(4)["error"]["code"], -32602);
    server.finish();

    let service = "conformance_server";
    let modern = wait_for_span(
        &receiver,
        service,
        "tools/call test_simple_text",
        MODERN_PARENT.0,
    )
    .await;
    assert_eq!(modern.parent_span_id, MODERN_PARENT.1, "{modern:?}");
    assert_eq!(modern.kind, 2, "server kind: {modern:?}");
    assert_eq!(modern.attr("mcp.protocol.version"), Some("2026-07-28"));
    assert_eq!(modern.attr("mcp.method.name"), Some("tools/call"));
    assert_eq!(modern.attr("jsonrpc.request.id"), Some("1"));
    assert_eq!(modern.attr("network.transport"), Some("pipe"));
    assert_eq!(modern.status_code, 0, "{modern:?}");

    let legacy = wait_for_span(
        &receiver,
        service,
        "tools/call test_simple_text",
        LEGACY_PARENT.0,
    )
    .await;
    assert_eq!(legacy.parent_span_id, LEGACY_PARENT.1, "{legacy:?}");
    assert_eq!(legacy.kind, 2);
    assert_eq!(legacy.attr("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(legacy.attr("jsonrpc.request.id"), Some("3"));
    assert_eq!(legacy.attr("gen_ai.tool.name"), Some("test_simple_text"));
    assert_eq!(legacy.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(legacy.attr("network.transport"), Some("pipe"));
    // The `tracing` bookkeeping fields are not attributes.
    assert!(
        legacy.attributes.keys().all(|k| !k.starts_with("otel.")),
        "{legacy:?}"
    );

    let failed = wait_for_span(
        &receiver,
        service,
        "tools/call no_such_tool",
        LEGACY_PARENT.0,
    )
    .await;
    assert_eq!(failed.attr("error.type"), Some("-32602"));
    assert_eq!(failed.attr("rpc.response.status_code"), Some("-32602"));
    assert_eq!(failed.status_code, 2, "error status: {failed:?}");
    let initialize = receiver
        .spans()
        .into_iter()
        .find(|s| s.service == service && s.name == "initialize")
        .expect("an initialize span");
    assert_eq!(initialize.attr("mcp.protocol.version"), Some("2025-11-25"));
    assert_no_content(&receiver);

    wait_for_point(
        &receiver,
        service,
        "mcp.server.operation.duration",
        &[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "test_simple_text"),
            ("mcp.protocol.version", "2025-11-25"),
        ],
    )
    .await;
    wait_for_point(
        &receiver,
        service,
        "mcp.server.operation.duration",
        &[("mcp.method.name", "tools/call"), ("error.type", "-32602")],
    )
    .await;
    wait_for_point(
        &receiver,
        service,
        "mcp.server.session.duration",
        &[
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "pipe"),
        ],
    )
    .await;
    let wanted = if protocol == "http/json" {
        "application/json"
    } else {
        "application/x-protobuf"
    };
    let types = receiver.content_types();
    assert!(
        !types.is_empty() && types.iter().all(|t| t == wanted),
        "{types:?}"
    );
    assert!(receiver.errors().is_empty(), "{:?}", receiver.errors());
}

#[tokio::test]
async fn the_conformance_server_exports_over_http_protobuf() {
    the_conformance_server_exports_over("http/protobuf").await;
}

#[tokio::test]
async fn the_conformance_server_exports_over_http_json() {
    the_conformance_server_exports_over("http/json").await;
}

/// An example serving HTTP with the export variables; killed on drop.
struct HttpExample {
    child: Child,
    base: String,
}

impl HttpExample {
    fn start(mut command: Command) -> HttpExample {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("listening on ") {
                    let url = rest.split_whitespace().next().unwrap_or_default();
                    let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
                }
            }
        });
        let base = rx
            .recv_timeout(kit::patience::patience())
            .expect("listening on …");
        HttpExample { child, base }
    }
}

impl Drop for HttpExample {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn weather_exports_over(protocol: &str) {
    let receiver = Receiver::start();
    let mut command = Command::new(kit::process::example_named("weather"));
    command.args(["--http", "127.0.0.1:0"]);
    exporting(&mut command, &receiver, protocol);
    let weather = HttpExample::start(command);
    let http = kit::http::Http::new(&weather.base);

    let mut meta = kit::modern_meta(json!({}));
    meta["traceparent"] = json!(traceparent(MODERN_PARENT));
    let r = http
        .post_modern(
            1,
            "tools/call",
            json!({"name": "cities", "arguments": {}, "_meta": meta}),
        )
        .await;
    assert!(r.json()["result"].is_object(), "{}", r.body);

    let session = http.session("2025-11-25", json!({})).await;
    let call = kit::request(
        2,
        "tools/call",
        json!({"name": "cities", "arguments": {}, "_meta": {"traceparent": traceparent(LEGACY_PARENT)}}),
    );
    let r = http.post(&[("mcp-session-id", &session)], &call).await;
    assert!(r.json()["result"].is_object(), "{}", r.body);
    // No `traceparent` in `_meta`: the HTTP header's is continued.
    let header = traceparent(HEADER_PARENT);
    let call = kit::request(3, "tools/call", json!({"name": "cities", "arguments": {}}));
    let r = http
        .post(
            &[("mcp-session-id", &session), ("traceparent", &header)],
            &call,
        )
        .await;
    assert!(r.json()["result"].is_object(), "{}", r.body);

    let service = "weather";
    let modern = wait_for_span(&receiver, service, "tools/call cities", MODERN_PARENT.0).await;
    assert_eq!(modern.parent_span_id, MODERN_PARENT.1);
    assert_eq!(modern.attr("mcp.protocol.version"), Some("2026-07-28"));
    assert_eq!(modern.attr("network.transport"), Some("tcp"));
    assert_eq!(modern.attr("network.protocol.name"), Some("http"));
    assert_eq!(modern.attr("network.protocol.version"), Some("1.1"));
    assert_eq!(modern.attr("client.address"), Some("127.0.0.1"));
    assert!(modern.attr("client.port").is_some(), "{modern:?}");
    let legacy = wait_for_span(&receiver, service, "tools/call cities", LEGACY_PARENT.0).await;
    assert_eq!(legacy.parent_span_id, LEGACY_PARENT.1);
    // A digest of the session id, which is a credential (never exported as it is).
    let digest: String = <sha2::Sha256 as sha2::Digest>::digest(session.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(legacy.attr("mcp.session.id"), Some(digest.as_str()));
    assert_eq!(digest.len(), 32);
    assert!(receiver
        .spans()
        .iter()
        .all(|s| s.attributes.values().all(|v| !v.contains(session.as_str()))));
    assert_eq!(legacy.attr("mcp.protocol.version"), Some("2025-11-25"));
    let by_header = wait_for_span(&receiver, service, "tools/call cities", HEADER_PARENT.0).await;
    assert_eq!(by_header.parent_span_id, HEADER_PARENT.1);
    wait_for_point(
        &receiver,
        service,
        "mcp.server.operation.duration",
        &[
            ("mcp.method.name", "tools/call"),
            ("network.transport", "tcp"),
        ],
    )
    .await;
    assert!(receiver.errors().is_empty(), "{:?}", receiver.errors());
}

#[tokio::test]
async fn weather_exports_over_http_protobuf() {
    weather_exports_over("http/protobuf").await;
}

#[tokio::test]
async fn weather_exports_over_http_json() {
    weather_exports_over("http/json").await;
}

/// How the test's client reaches the bridge.
#[derive(Clone, Copy, Debug)]
enum Downstream {
    Stdio,
    Http,
}

/// One trace from this test's client span, through `mcp-bridge` (its server span and
/// its client span), to the upstream `conformance_server`'s span — and back: every span
/// ends after its child, in the same trace.
async fn one_trace_through_the_bridge(downstream: Downstream, version: &str) {
    let receiver = Receiver::start();
    let config = ExportConfig {
        protocol: mcp_runtime_otel::Protocol::HttpBinary,
        service_name: "test-client".into(),
        endpoint: Some(receiver.base().to_owned()),
    };
    let (telemetry, dispatch) = mcp_runtime_otel::exporting_dispatch(&config).expect("pipeline");
    let _in_dispatch = tracing::dispatcher::set_default(&dispatch);

    let upstream = kit::process::example().display().to_string();
    let bridge = kit::process::example_named("bridge");
    let version = ProtocolVersion::parse(version).expect("a revision");
    let client = Client::builder(Implementation::new("otel-test", "1.0.0")).pin(version);
    let (client, _http_bridge) = match downstream {
        Downstream::Stdio => {
            let client = client
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base())
                .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
                .env("OTEL_BSP_SCHEDULE_DELAY", "50")
                .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
                .connect_command(
                    &bridge.display().to_string(),
                    ["--command", upstream.as_str()],
                )
                .await
                .expect("connect over stdio");
            (client, None)
        }
        Downstream::Http => {
            let mut command = Command::new(&bridge);
            command.args(["--command", upstream.as_str(), "--http", "127.0.0.1:0"]);
            exporting(&mut command, &receiver, "http/protobuf");
            let running = HttpExample::start(command);
            let client = client
                .connect_url(&format!("{}/mcp", running.base))
                .await
                .expect("connect over HTTP");
            (client, Some(running))
        }
    };
    let result = client
        .call_tool("test_simple_text", json!({}))
        .await
        .expect("a tool result");
    assert!(!result.is_error);
    client.close().await;
    telemetry.flush();

    let ours = receiver
        .spans()
        .into_iter()
        .find(|s| s.service == "test-client" && s.name == "tools/call test_simple_text")
        .unwrap_or_else(|| panic!("no client span: {:#?}", receiver.spans()));
    assert_eq!(ours.kind, 3, "client kind: {ours:?}");
    assert_eq!(ours.attr("mcp.protocol.version"), Some(version.as_str()));
    let trace = ours.trace_id.clone();
    let name = "tools/call test_simple_text";
    let bridge_server = kit_find_kind(&receiver, "mcp-bridge", name, &trace, 2).await;
    let bridge_client = kit_find_kind(&receiver, "mcp-bridge", name, &trace, 3).await;
    let upstream_server = wait_for_span(&receiver, "conformance_server", name, &trace).await;
    assert_eq!(bridge_server.kind, 2);
    assert_eq!(
        bridge_server.parent_span_id, ours.span_id,
        "{bridge_server:?}"
    );
    assert_eq!(
        bridge_server.attr("mcp.protocol.version"),
        Some(version.as_str())
    );
    assert_eq!(
        bridge_client.parent_span_id, bridge_server.span_id,
        "{bridge_client:?}"
    );
    assert_eq!(
        upstream_server.parent_span_id, bridge_client.span_id,
        "{upstream_server:?}"
    );
    let transport = match downstream {
        Downstream::Stdio => "pipe",
        Downstream::Http => "tcp",
    };
    assert_eq!(bridge_server.attr("network.transport"), Some(transport));
    wait_for_point(
        &receiver,
        "mcp-bridge",
        "mcp.client.operation.duration",
        &[("mcp.method.name", "tools/call")],
    )
    .await;
    if version.era() == Era::Legacy {
        // The test's client closed its legacy session: its length, as the client saw it.
        wait_for_point(
            &receiver,
            "test-client",
            "mcp.client.session.duration",
            &[
                ("mcp.protocol.version", version.as_str()),
                ("network.transport", transport),
            ],
        )
        .await;
    }
}

/// The span `name` of `service` in `trace` of `kind`.
async fn kit_find_kind(
    receiver: &Receiver,
    service: &str,
    name: &str,
    trace: &str,
    kind: i64,
) -> SpanRecord {
    let pick = || {
        receiver.spans().into_iter().find(|s| {
            s.service == service && s.name == name && s.trace_id == trace && s.kind == kind
        })
    };
    kit::eventually_or(
        || pick().is_some(),
        || {
            format!(
                "no {name} of {service} of kind {kind}: {:#?}",
                receiver.spans()
            )
        },
    )
    .await;
    pick().expect("found")
}

#[tokio::test(flavor = "current_thread")]
async fn one_trace_through_the_bridge_over_stdio_modern() {
    one_trace_through_the_bridge(Downstream::Stdio, "2026-07-28").await;
}

#[tokio::test(flavor = "current_thread")]
async fn one_trace_through_the_bridge_over_stdio_legacy() {
    one_trace_through_the_bridge(Downstream::Stdio, "2025-11-25").await;
}

#[tokio::test(flavor = "current_thread")]
async fn one_trace_through_the_bridge_over_http_modern() {
    one_trace_through_the_bridge(Downstream::Http, "2026-07-28").await;
}

#[tokio::test(flavor = "current_thread")]
async fn one_trace_through_the_bridge_over_http_legacy() {
    one_trace_through_the_bridge(Downstream::Http, "2025-11-25").await;
}

/// A trace begun by an official SDK client that propagates trace context: the Python SDK
/// 2.x (`mcp==2.3.0`, the pinned `py-2026-07-28` venv, with `opentelemetry-api`) injects
/// the current context into `params._meta`; the trace runs on through `mcp-bridge` (over
/// Streamable HTTP, 2026-07-28) to the upstream server. (The SDKs of the older revisions
/// and the TypeScript SDK 2.x propagate nothing: see issue 32's report.)
#[tokio::test]
async fn a_trace_begun_by_the_python_sdk_runs_through_the_bridge() {
    kit::pinned::ensure(kit::pinned::Pinned::PythonClients);
    let receiver = Receiver::start();
    let upstream = kit::process::example().display().to_string();
    let mut command = Command::new(kit::process::example_named("bridge"));
    command.args(["--command", upstream.as_str(), "--http", "127.0.0.1:0"]);
    exporting(&mut command, &receiver, "http/json");
    let bridge = HttpExample::start(command);
    let python = kit::pinned::clients_dir().join("py-2026-07-28/bin/python");
    let script = kit::pinned::clients_src().join("traced_client.py");
    let (trace, span) = ("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174");
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(format!("{}/mcp", bridge.base))
            .args([trace, span])
            .output()
            .map(|o| (o, bridge))
    })
    .await
    .expect("join")
    .expect("run the Python client");
    let (output, _bridge) = output;
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        printed.contains(r#""ok": true"#) && printed.contains(r#""isError": false"#),
        "{printed}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let name = "tools/call test_simple_text";
    let bridge_server = kit_find_kind(&receiver, "mcp-bridge", name, trace, 2).await;
    assert_eq!(bridge_server.parent_span_id, span, "{bridge_server:?}");
    assert_eq!(
        bridge_server.attr("mcp.protocol.version"),
        Some("2026-07-28")
    );
    let bridge_client = kit_find_kind(&receiver, "mcp-bridge", name, trace, 3).await;
    assert_eq!(bridge_client.parent_span_id, bridge_server.span_id);
    let upstream_server = wait_for_span(&receiver, "conformance_server", name, trace).await;
    assert_eq!(upstream_server.parent_span_id, bridge_client.span_id);
}
