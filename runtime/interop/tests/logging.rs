//! What the runtime logs names nothing sensitive. Alone in its test binary on purpose:
//! the capture is a thread-local `tracing` subscriber, and tracing caches each log
//! statement's interest process-wide — a statement first reached by a concurrent test
//! (with no subscriber on its thread) can be cached as "never", and then this test misses
//! the lines it asserts (seen as a rare failure when it lived in `reliability.rs`).

mod kit;

use std::sync::Arc;
use std::time::Duration;

use kit::http::serve;
use kit::request as rpc;
use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::{Limits, Server};
use mcp_runtime_http::HttpConfig;
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
    let http = serve(faults(limits), HttpConfig::default()).await;
    let sid = http.session("2025-06-18", json!({})).await;
    let h = [("mcp-session-id", sid.as_str())];
    for (id, name) in [(1, "echo"), (2, "hang"), (3, "panics"), (4, "nope")] {
        let r = http
            .post(
                &h,
                rpc(
                    id,
                    "tools/call",
                    json!({"name": name, "arguments": {"secret": SECRET}}),
                ),
            )
            .await;
        assert_eq!(r.messages().last().expect("an answer")["id"], id, "{name}");
    }
    http.post(
        &h,
        json!({"jsonrpc": "2.0", "id": 99, "result": {"secret": SECRET}}),
    )
    .await;
    http.post(
        &h,
        json!({"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"secret": SECRET}}),
    )
    .await;
    // A requestState round trip (2026-07-28) on the conformance server.
    let http2 = kit::http::serve_conformance().await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "test_input_required_result_request_state"),
    ];
    let m = http2.post(&headers, json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "test_input_required_result_request_state", "arguments": {"secret": SECRET}, "_meta": meta}})).await.messages();
    let state = m[0]["result"]["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    http2.post(&headers, json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "test_input_required_result_request_state", "arguments": {"secret": SECRET}, "requestState": format!("{state}x"), "_meta": meta}})).await;
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
