//! Throughput and per-request cost of legacy Streamable HTTP sessions: in memory, or
//! shared through Redis by 1 or more replicas (issue 18; BENCHMARKS.md §6 has the figures).
//!
//! ```sh
//! redis-server --port 6390 --save '' --appendonly no &
//! cargo run --release -p mcp-interop --example replica_bench -- memory 16 4000
//! cargo run --release -p mcp-interop --example replica_bench -- redis://127.0.0.1:6390/ 16 4000 1
//! cargo run --release -p mcp-interop --example replica_bench -- redis://127.0.0.1:6390/ 16 4000 3
//! ```
//!
//! Arguments: `memory` or a Redis URL, CLIENTS (concurrent sessions, each one call at a
//! time), CALLS (in all), REPLICAS (Redis only). Replicas and clients share this process
//! (loopback): each replica is its own server with its own store connection; each call
//! goes to the next replica in turn, whatever its session (round robin with no affinity,
//! as a front would spread them). Every answer is checked to carry its own message.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::{Server, ToolError};
use mcp_runtime_http::HttpConfig;
use mcp_runtime_redis::RedisStore;
use serde_json::{json, Value};

fn server() -> Server {
    Server::builder(Implementation::new("bench", "1"))
        .tool(
            Tool::new("echo", "Returns its message"),
            |args, _| async move {
                let message = args.get("message").and_then(Value::as_str).unwrap_or("");
                Ok::<_, ToolError>(ToolResult::text(message))
            },
        )
        .build()
}

async fn replica(store: Option<&str>) -> String {
    let mut config = HttpConfig::default();
    if let Some(url) = store {
        match RedisStore::connect(url).await {
            Ok(store) => config = config.store(store),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bind: {e}");
            std::process::exit(1);
        }
    };
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    tokio::spawn(mcp_runtime_http::serve_listener(server(), listener, config));
    format!("http://{addr}/mcp")
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> (Option<String>, String) {
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    match req.send().await {
        Ok(r) => {
            let session = r
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            (session, r.text().await.unwrap_or_default())
        }
        Err(e) => (None, format!("error: {e}")),
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let store = args.first().map(String::as_str).unwrap_or("memory");
    let store = (store != "memory").then_some(store);
    let (clients, calls, replicas) = (arg(1, 16), arg(2, 4000), arg(3, 1).max(1));
    let replicas = if store.is_some() { replicas } else { 1 };
    let mut urls = Vec::new();
    for _ in 0..replicas {
        urls.push(replica(store).await);
    }
    let urls = Arc::new(urls);
    let client = reqwest::Client::new();
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let per_client = calls / clients.max(1);
    // Sessions opened (and warmed with one call) before the clock starts.
    let mut sessions = Vec::new();
    for c in 0..clients {
        let url = &urls[c % urls.len()];
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
        let (session, body) = post(&client, url, None, init).await;
        let Some(session) = session else {
            eprintln!("initialize failed: {body}");
            std::process::exit(1);
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post(&client, url, Some(&session), initialized).await;
        sessions.push(session);
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (c, session) in sessions.into_iter().enumerate() {
        let (client, urls, next, errors) = (
            client.clone(),
            Arc::clone(&urls),
            Arc::clone(&next),
            Arc::clone(&errors),
        );
        tasks.push(tokio::spawn(async move {
            for n in 0..per_client {
                let message = format!("{c}-{n}");
                let url = &urls[next.fetch_add(1, Ordering::Relaxed) % urls.len()];
                let call = json!({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": message}}});
                let (_, body) = post(&client, url, Some(&session), call).await;
                let ok = serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|v| v["result"]["content"][0]["text"].as_str().map(|t| t == message))
                    .unwrap_or(false);
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let elapsed = started.elapsed();
    let done = per_client * clients;
    let rate = done as f64 / elapsed.as_secs_f64();
    let mean = elapsed.as_secs_f64() * 1e6 * clients as f64 / done.max(1) as f64;
    println!(
        "{} x{replicas}: {done} calls by {clients} sessions in {:.2?}: {rate:.0} calls/s, {mean:.0} µs per call (per session), {} errors",
        store.map_or("memory", |_| "redis"),
        elapsed,
        errors.load(Ordering::Relaxed)
    );
}
