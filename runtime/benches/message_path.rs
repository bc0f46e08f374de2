//! The in-process message path — decode → route → handle → shape → encode — for a realistic
//! mix of messages in every revision, next to the practical ceiling measured in the same
//! run: `serde_json` parsing the same bytes into a `Value` and writing them back.
//!
//! `cargo bench -p mcp-runtime --bench message_path` (figures in BENCHMARKS.md).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcp_runtime::jsonrpc::Outgoing;
use mcp_runtime::model::{Content, Implementation, Resource, ResourceContents, Tool, ToolResult};
use mcp_runtime::session::Connection;
use mcp_runtime::Server;
use serde_json::{json, Value};
use tokio::sync::mpsc;

fn server() -> Server {
    let mut builder = Server::builder(Implementation::new("bench", "1.0.0"));
    for i in 0..50 {
        let tool = Tool {
            name: format!("tool_{i}"),
            title: Some(format!("Tool {i}")),
            description: Some("A tool with a small object schema".into()),
            input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}),
            output_schema: None,
            annotations: None,
            icons: vec![],
        };
        builder = builder.tool(tool, |_, _| async {
            Ok(ToolResult::text("It will be sunny."))
        });
    }
    let structured = Tool {
        name: "structured".into(),
        title: None,
        description: Some("Structured output".into()),
        input_schema: json!({"type": "object"}),
        output_schema: Some(
            json!({"type": "object", "properties": {"temperature": {"type": "number"}}}),
        ),
        annotations: None,
        icons: vec![],
    };
    let text = "x".repeat(64 * 1024);
    let resource = Resource {
        uri: "mem://big".into(),
        name: "big".into(),
        title: None,
        description: None,
        mime_type: Some("text/plain".into()),
        size: None,
        annotations: None,
        icons: vec![],
    };
    builder
        .tool(structured, |_, _| async {
            let data = json!({"temperature": 22.5});
            Ok(ToolResult {
                content: vec![Content::text(data.to_string())],
                structured: Some(data),
                is_error: false,
            })
        })
        .resource(resource, move |uri, _| {
            let text = text.clone();
            async move { Ok(vec![ResourceContents::text(uri, "text/plain", text)]) }
        })
        .build()
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

/// The mix for one revision: (name, request bytes, whether it is answered).
fn mix(version: &str) -> Vec<(&'static str, Vec<u8>, bool)> {
    let modern = version == "2026-07-28";
    let params = |p: Value| {
        let mut p = p;
        if modern {
            p["_meta"] = meta();
        }
        p
    };
    let req = |method: &str, p: Value| {
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params(p)}),
        )
        .unwrap_or_default()
    };
    let first = if modern {
        req("server/discover", json!({}))
    } else {
        req(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}),
        )
    };
    vec![
        ("initialize_or_discover", first, true),
        ("tools_list_50", req("tools/list", json!({})), true),
        ("tools_call_text", req("tools/call", json!({"name": "tool_3", "arguments": {"city": "Oslo"}})), true),
        ("tools_call_structured", req("tools/call", json!({"name": "structured", "arguments": {}})), true),
        ("resources_read_64k", req("resources/read", json!({"uri": "mem://big"})), true),
        ("notification", serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})).unwrap_or_default(), false),
    ]
}

/// A connection ready to serve `version` (a legacy session is initialized first).
async fn connection(
    server: &Server,
    version: &str,
    tx: &mpsc::Sender<Outgoing>,
    rx: &mut mpsc::Receiver<Outgoing>,
) -> std::sync::Arc<Connection> {
    let conn = Connection::new(server.clone(), tx.clone());
    if version != "2026-07-28" {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}});
        conn.handle_frame(init.to_string().as_bytes(), tx).await;
        let _ = rx.recv().await;
        conn.handle_frame(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            tx,
        )
        .await;
    }
    conn
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let server = server();
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let mut group = c.benchmark_group(format!("message_path/{version}"));
        group
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500))
            .sample_size(20);
        for (name, bytes, answered) in mix(version) {
            if name == "initialize_or_discover" && version != "2026-07-28" {
                // initialize is answered once per session: measured on a fresh connection.
                group.throughput(Throughput::Bytes(bytes.len() as u64));
                group.bench_function(BenchmarkId::new("runtime", name), |b| {
                    b.to_async(&rt).iter(|| async {
                        let (tx, mut rx) = mpsc::channel(16);
                        let conn = Connection::new(server.clone(), tx.clone());
                        conn.handle_frame(&bytes, &tx).await;
                        let answer = rx.recv().await;
                        answer
                            .map(|a| a.json().as_bytes().to_vec())
                            .unwrap_or_default()
                    })
                });
            } else {
                let (tx, mut rx) = mpsc::channel(16);
                let conn = rt.block_on(connection(&server, version, &tx, &mut rx));
                group.throughput(Throughput::Bytes(bytes.len() as u64));
                group.bench_function(BenchmarkId::new("runtime", name), |b| {
                    b.iter(|| {
                        rt.block_on(async {
                            conn.handle_frame(&bytes, &tx).await;
                            if answered {
                                let answer = rx.recv().await;
                                answer
                                    .map(|a| a.json().as_bytes().to_vec())
                                    .unwrap_or_default()
                            } else {
                                Vec::new()
                            }
                        })
                    })
                });
            }
            group.bench_function(BenchmarkId::new("serde_json_value", name), |b| {
                b.iter(|| {
                    let v: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                    serde_json::to_vec(&v).unwrap_or_default()
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
