//! What exporting the MCP spans and metrics costs a stateless 2026-07-28 `tools/call`: the
//! process's CPU time (user + system, every thread: the batch exporter's and the loopback
//! OTLP sink's included) per request, served in process on a connection of its own each
//! (as the HTTP transport serves one), without a subscriber and with
//! `mcp_runtime_otel::exporting_dispatch` (sampler: parent-based always-on, every span
//! kept; the request carries a sampled `traceparent`), its export flushed before the
//! clock stops.
//!
//! `cargo bench -p mcp-interop --bench otel_cost [-- --requests N]`

#[path = "support/args.rs"]
#[allow(dead_code)]
mod args;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::server::connection::Connection;
use mcp_runtime::{Server, ToolError};
use mcp_runtime_otel::{ExportConfig, Protocol};
use serde_json::json;
use tokio::sync::mpsc;

/// CPU seconds this process has used, all threads (`/proc/self/stat`'s utime + stime).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 14th
    // and 15th of the whole line (the 12th and 13th after it).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    ticks as f64 / rustix::param::clock_ticks_per_second() as f64
}

/// An OTLP/HTTP sink on loopback: reads each export and answers 200.
fn sink() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut writer = stream;
                loop {
                    let (mut line, mut length) = (String::new(), 0usize);
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line.trim().is_empty() {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
                    if writer.write_all(ok).is_err() {
                        return;
                    }
                }
            });
        }
    });
    base
}

fn server() -> Server {
    Server::builder(Implementation::new("otel-cost", "1.0.0"))
        .tool(Tool::new("echo", "Echoes"), |_, _| async {
            Ok::<_, ToolError>(ToolResult::text("echo"))
        })
        .build()
}

/// CPU seconds per request for `requests` stateless calls.
fn run(rt: &tokio::runtime::Runtime, requests: usize, flush: &dyn Fn()) -> f64 {
    let server = server();
    let request = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        }}
    }))
    .unwrap_or_default();
    let started = cpu_seconds();
    rt.block_on(async {
        let (tx, mut rx) = mpsc::channel(16);
        for _ in 0..requests {
            let conn = Connection::stateless(server.clone(), tx.clone());
            conn.handle_frame(&request, &tx).await;
            let _ = rx.recv().await;
        }
    });
    flush();
    (cpu_seconds() - started) / requests as f64
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let requests = args::flag_value(&argv, "--requests")
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Warm-up, then the baseline without a subscriber.
    run(&rt, requests / 10, &|| {});
    let off = run(&rt, requests, &|| {});
    let config = ExportConfig {
        protocol: Protocol::HttpBinary,
        service_name: "otel-cost".into(),
        endpoint: Some(sink()),
    };
    let (telemetry, dispatch) = mcp_runtime_otel::exporting_dispatch(&config).expect("pipeline");
    let on = tracing::dispatcher::with_default(&dispatch, || {
        run(&rt, requests / 10, &|| telemetry.flush());
        run(&rt, requests, &|| telemetry.flush())
    });
    println!("requests: {requests} stateless tools/call, in process");
    println!("no subscriber:        {:.2} µs CPU/request", off * 1e6);
    println!("exporting every span: {:.2} µs CPU/request", on * 1e6);
    println!(
        "added: {:.2} µs ({:.1}%)",
        (on - off) * 1e6,
        (on - off) / off * 100.0
    );
}
