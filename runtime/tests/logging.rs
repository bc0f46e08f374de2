//! What the runtime logs names nothing sensitive. Alone in its test binary on purpose:
//! the capture is a thread-local `tracing` subscriber, and tracing caches each log
//! statement's interest process-wide — a statement first reached by a concurrent test
//! (with no subscriber on its thread) can be cached as "never", and then this test misses
//! the lines it asserts (seen as a rare failure when it lived in `reliability.rs`).

mod common;

use std::sync::Arc;
use std::time::Duration;

use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::transport::http::HttpConfig;
use mcp_runtime::{Limits, Server};
use reqwest::StatusCode;
use serde_json::{json, Value};

/// A server whose tools echo, never finish, or panic.
fn faults(limits: Limits) -> Server {
    Server::builder(Implementation::new("faults", "1"))
        .limits(limits)
        .tool(
            Tool::new("echo", "Echoes its arguments"),
            |args, _| async move { Ok(ToolResult::text(Value::Object(args).to_string())) },
        )
        .tool(Tool::new("hang", "Never finishes"), |_, _| async move {
            std::future::pending::<()>().await;
            Ok(ToolResult::text("never"))
        })
        .tool(Tool::new("panics", "Panics"), |_, _| async move {
            if true {
                panic!("handler bug");
            }
            Ok(ToolResult::text("unreachable"))
        })
        .build()
}

async fn start_http(server: Server, config: HttpConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(mcp_runtime::transport::http::serve_listener(
        server, listener, config,
    ));
    format!("http://{addr}")
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POSTs one message; the answers it carries (a JSON body or SSE events).
async fn post(base: &str, headers: &[(&str, &str)], body: String) -> (StatusCode, Vec<Value>) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("send");
    let status = resp.status();
    let text = resp.text().await.expect("body");
    let messages = if text.starts_with('{') {
        vec![serde_json::from_str(&text).expect("JSON")]
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    };
    (status, messages)
}

/// A legacy Streamable HTTP session, initialized; its id.
async fn session(base: &str, version: &str) -> String {
    let resp = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(rpc(0, "initialize", json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).to_string())
        .send()
        .await
        .expect("initialize");
    assert_eq!(resp.status(), StatusCode::OK);
    let id = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("session id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = post(base, &[("mcp-session-id", &id)], initialized.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    id
}

/// What the runtime logs (every level, while serving sessions, stateless requests,
/// requestState rounds, timeouts and panics) names no session id, no argument and no
/// requestState.
#[tokio::test(flavor = "current_thread")]
async fn nothing_sensitive_is_logged() {
    #[derive(Clone, Default)]
    struct Sink(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("sink").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    const SECRET: &str = "s3cr3t-argument-value";
    let mut limits = Limits::default();
    limits.request_timeout = Duration::from_millis(50);
    let base = start_http(faults(limits), HttpConfig::default()).await;
    let sid = session(&base, "2025-06-18").await;
    let h = [("mcp-session-id", sid.as_str())];
    for (id, name) in [(1, "echo"), (2, "hang"), (3, "panics"), (4, "nope")] {
        post(
            &base,
            &h,
            rpc(
                id,
                "tools/call",
                json!({"name": name, "arguments": {"secret": SECRET}}),
            )
            .to_string(),
        )
        .await;
    }
    post(
        &base,
        &h,
        json!({"jsonrpc": "2.0", "id": 99, "result": {"secret": SECRET}}).to_string(),
    )
    .await;
    post(
        &base,
        &h,
        json!({"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"secret": SECRET}})
            .to_string(),
    )
    .await;
    // A requestState round trip (2026-07-28) on the conformance server.
    let base2 = start_http(common::conformance_server(), HttpConfig::default()).await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "test_input_required_result_request_state"),
    ];
    let (_, m) = post(&base2, &headers, json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "test_input_required_result_request_state", "arguments": {"secret": SECRET}, "_meta": meta}}).to_string()).await;
    let state = m[0]["result"]["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    post(&base2, &headers, json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "test_input_required_result_request_state", "arguments": {"secret": SECRET}, "requestState": format!("{state}x"), "_meta": meta}}).to_string()).await;
    let log = String::from_utf8_lossy(&sink.0.lock().expect("sink")).into_owned();
    assert!(
        log.contains("handler timed out") && log.contains("handler panicked"),
        "the subscriber captured the runtime's logs:\n{log}"
    );
    for (what, needle) in [
        ("session id", sid.as_str()),
        ("argument", SECRET),
        ("requestState", state.as_str()),
    ] {
        assert!(!log.contains(needle), "the {what} was logged:\n{log}");
    }
}
