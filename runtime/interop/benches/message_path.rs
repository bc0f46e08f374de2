//! The in-process message path — decode → route → handle → shape → encode — for a realistic
//! mix of messages in every revision, next to two baselines measured in the same run:
//! - `serde_json_value`: `serde_json` parsing the request's bytes *and the answer's bytes*
//!   into `Value`s and writing them back (the practical ceiling for a server that must
//!   read the one and write the other);
//! - `rmcp`: rmcp 3.11 (the official Rust SDK) answering the same request bytes with the
//!   same content through its own `ServerHandler` and service loop, over an in-memory
//!   transport that decodes and encodes exactly as its stdio transport does (no I/O);
//! - `null`: the cheapest possible server, a fixed reply with the request's id copied in
//!   and nothing parsed (`support/null_reply.rs`, as the `bench_server` null servers).
//!
//! `cargo bench -p mcp-interop --bench message_path` (criterion), or
//! `cargo bench -p mcp-interop --bench message_path -- --interleaved [FILTER]` for the
//! ratios with the three contenders taking turns (the table in BENCHMARKS.md).

#[path = "support/args.rs"]
mod args;
#[path = "support/null_reply.rs"]
mod null_reply;
#[path = "support/servers.rs"]
mod servers;

use args::{flag_value, median};

use std::time::{Duration, Instant};

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use mcp_runtime::server::connection::Connection;
use mcp_runtime::wire::Outgoing;
use mcp_runtime::Server;
use serde_json::{json, Value};
use tokio::sync::mpsc;

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
        ("tools_call_typed", req("tools/call", json!({"name": servers::TYPED_TOOL, "arguments": {"city": "Oslo", "days": 3}})), true),
        ("resources_read_64k", req("resources/read", json!({"uri": servers::BIG_URI})), true),
        ("notification", serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})).unwrap_or_default(), false),
    ]
}

fn initialize_request(version: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}).to_string().into_bytes()
}

const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A connection ready to serve `version` (a legacy session is initialized first).
async fn connection(
    server: &Server,
    version: &str,
    tx: &mpsc::Sender<Outgoing>,
    rx: &mut mpsc::Receiver<Outgoing>,
) -> std::sync::Arc<Connection> {
    let conn = Connection::new(server.clone(), tx.clone());
    if version != "2026-07-28" {
        conn.handle_frame(&initialize_request(version), tx).await;
        let _ = rx.recv().await;
        conn.handle_frame(INITIALIZED, tx).await;
    }
    conn
}

/// rmcp over an in-memory transport: request bytes in, answer bytes out, decoded and
/// encoded with serde_json as rmcp's own stdio codec does.
mod rmcp_in_memory {
    use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
    use tokio::sync::mpsc;

    pub(crate) struct BytesTransport {
        pub(crate) input: mpsc::Receiver<Vec<u8>>,
        pub(crate) output: mpsc::Sender<Vec<u8>>,
    }

    impl rmcp::transport::Transport<RoleServer> for BytesTransport {
        type Error = std::io::Error;

        fn send(
            &mut self,
            item: TxJsonRpcMessage<RoleServer>,
        ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
            let output = self.output.clone();
            let bytes = serde_json::to_vec(&item);
            async move {
                output
                    .send(bytes.map_err(std::io::Error::other)?)
                    .await
                    .map_err(std::io::Error::other)
            }
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
            loop {
                let bytes = self.input.recv().await?;
                if let Ok(message) = serde_json::from_slice(&bytes) {
                    return Some(message);
                }
            }
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }
}

/// An rmcp server on `rt` ready to serve `version`: the sender of request bytes and the
/// receiver of answer bytes.
fn rmcp_server(
    rt: &tokio::runtime::Runtime,
    version: &str,
) -> (mpsc::Sender<Vec<u8>>, mpsc::Receiver<Vec<u8>>) {
    use rmcp::ServiceExt;
    let (req_tx, req_rx) = mpsc::channel(16);
    let (ans_tx, mut ans_rx) = mpsc::channel(16);
    let transport = rmcp_in_memory::BytesTransport {
        input: req_rx,
        output: ans_tx,
    };
    let legacy = version != "2026-07-28";
    let init = initialize_request(version);
    rt.block_on(async {
        let serving = tokio::spawn(servers::RmcpBench::new(50).serve(transport));
        if legacy {
            let _ = req_tx.send(init).await;
            let _ = ans_rx.recv().await;
            let _ = req_tx.send(INITIALIZED.to_vec()).await;
        } else {
            // rmcp has no 2026-07-28 mode; it serves a first request that is not
            // `initialize`, but a notification as its first message ends its service (its
            // handshake fails, and every later send would fall into a closed channel).
            // One request first, as a client of this revision would send.
            let first = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": meta()}});
            let _ = req_tx.send(first.to_string().into_bytes()).await;
            let _ = ans_rx.recv().await;
        }
        tokio::spawn(async move {
            if let Ok(Ok(running)) = serving.await {
                let _ = running.waiting().await;
            }
        });
    });
    (req_tx, ans_rx)
}

fn value_round_trip(bytes: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(bytes).unwrap_or_default();
    serde_json::to_vec(&v).unwrap_or_default()
}

/// One message of the mix in one revision, with its three contenders ready to run one
/// iteration each (each returns the answer's length, so nothing is optimised away).
struct Case<'a> {
    version: &'static str,
    name: &'static str,
    runtime: Box<dyn FnMut() -> usize + 'a>,
    ceiling: Box<dyn FnMut() -> usize + 'a>,
    rmcp: Box<dyn FnMut() -> usize + 'a>,
    /// The null server: a fixed reply with the request's id, nothing parsed (the limit).
    null: Box<dyn FnMut() -> usize + 'a>,
}

const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

fn cases<'a>(
    rt: &'a tokio::runtime::Runtime,
    server: &'a Server,
    version: &'static str,
) -> Vec<Case<'a>> {
    let mut out = Vec::new();
    for (name, bytes, answered) in mix(version) {
        let fresh_connection = name == "initialize_or_discover" && version != "2026-07-28";
        // The answer's bytes, for the ceiling.
        let answer = rt.block_on(async {
            let (tx, mut rx) = mpsc::channel(16);
            let conn = if fresh_connection {
                Connection::new(server.clone(), tx.clone())
            } else {
                connection(server, version, &tx, &mut rx).await
            };
            conn.handle_frame(&bytes, &tx).await;
            if answered {
                rx.recv()
                    .await
                    .map(|a| a.json().as_bytes().to_vec())
                    .unwrap_or_default()
            } else {
                Vec::new()
            }
        });
        let runtime: Box<dyn FnMut() -> usize> = if fresh_connection {
            // initialize is answered once per session: measured on a fresh connection.
            let bytes = bytes.clone();
            Box::new(move || {
                rt.block_on(async {
                    let (tx, mut rx) = mpsc::channel(16);
                    let conn = Connection::new(server.clone(), tx.clone());
                    conn.handle_frame(&bytes, &tx).await;
                    let answer = rx.recv().await;
                    answer.map(|a| a.json().bytes().len()).unwrap_or_default()
                })
            })
        } else {
            let (tx, mut rx) = mpsc::channel(16);
            let conn = rt.block_on(connection(server, version, &tx, &mut rx));
            let bytes = bytes.clone();
            Box::new(move || {
                rt.block_on(async {
                    conn.handle_frame(&bytes, &tx).await;
                    if answered {
                        // The encoded answer, as rmcp's transport hands over its encoded
                        // Vec: neither is copied again here.
                        let answer = rx.recv().await;
                        answer.map(|a| a.json().bytes().len()).unwrap_or_default()
                    } else {
                        0
                    }
                })
            })
        };
        let request = bytes.clone();
        let ceiling: Box<dyn FnMut() -> usize> =
            Box::new(move || value_round_trip(&request).len() + value_round_trip(&answer).len());
        let rmcp: Box<dyn FnMut() -> usize> = if fresh_connection {
            // rmcp: a new service per initialize, as for the runtime.
            let bytes = bytes.clone();
            Box::new(move || {
                let (tx, mut rx) = rmcp_server(rt, "2026-07-28");
                rt.block_on(async {
                    let _ = tx.send(bytes.clone()).await;
                    rx.recv().await.unwrap_or_default().len()
                })
            })
        } else {
            let (tx, mut rx) = rmcp_server(rt, version);
            if !answered {
                // rmcp must still be listening after the message: measuring sends into a
                // closed channel would measure nothing.
                rt.block_on(async {
                    let _ = tx.send(bytes.clone()).await;
                    for _ in 0..10 {
                        tokio::task::yield_now().await;
                    }
                });
                assert!(!tx.is_closed(), "rmcp {version} {name}: its service ended");
            }
            if answered {
                // Both answer with a result, not an error: the comparison is fair.
                let first = rt.block_on(async {
                    let _ = tx.send(bytes.clone()).await;
                    rx.recv().await.unwrap_or_default()
                });
                let first: Value = serde_json::from_slice(&first).unwrap_or_default();
                let ours = runtime_answer_check(rt, server, version, &bytes);
                assert!(
                    first.get("result").is_some(),
                    "rmcp {version} {name}: {first}"
                );
                assert!(
                    ours.get("result").is_some(),
                    "runtime {version} {name}: {ours}"
                );
            }
            let bytes = bytes.clone();
            Box::new(move || {
                rt.block_on(async {
                    let _ = tx.send(bytes.clone()).await;
                    if answered {
                        rx.recv().await.unwrap_or_default().len()
                    } else {
                        // rmcp handles notifications in its loop; let it run.
                        tokio::task::yield_now().await;
                        0
                    }
                })
            })
        };
        let request = bytes.clone();
        let mut reply = Vec::with_capacity(256);
        let null: Box<dyn FnMut() -> usize> = Box::new(move || {
            reply.clear();
            null_reply::null_reply(&request, &mut reply);
            reply.len()
        });
        out.push(Case {
            version,
            name,
            runtime,
            ceiling,
            rmcp,
            null,
        });
    }
    out
}

/// Our answer to `bytes` on a fresh connection at `version`, decoded (a sanity check).
fn runtime_answer_check(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    version: &str,
    bytes: &[u8],
) -> Value {
    rt.block_on(async {
        let (tx, mut rx) = mpsc::channel(16);
        let conn = connection(server, version, &tx, &mut rx).await;
        conn.handle_frame(bytes, &tx).await;
        rx.recv()
            .await
            .map(|a| a.json().to_value())
            .unwrap_or_default()
    })
}

fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

fn bench(c: &mut Criterion) {
    let rt = current_thread_runtime();
    let server = servers::ours(50);
    for version in VERSIONS {
        let mut group = c.benchmark_group(format!("message_path/{version}"));
        group
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500))
            .sample_size(20);
        for mut case in cases(&rt, &server, version) {
            group.throughput(Throughput::Elements(1));
            group.bench_function(BenchmarkId::new("runtime", case.name), |b| {
                b.iter(|| (case.runtime)())
            });
            group.bench_function(BenchmarkId::new("serde_json_value", case.name), |b| {
                b.iter(|| (case.ceiling)())
            });
            group.bench_function(BenchmarkId::new("rmcp", case.name), |b| {
                b.iter(|| (case.rmcp)())
            });
            group.bench_function(BenchmarkId::new("null", case.name), |b| {
                b.iter(|| (case.null)())
            });
        }
        group.finish();
    }
}

/// `--interleaved [--rounds N] [FILTER]`: the four contenders of a case (this runtime,
/// the serde_json ceiling, rmcp, the null server) take turns, a batch of ~1 ms each per
/// round (100 rounds), and each ratio is the median of the per-round ratios (the rmcp
/// ratio's quartiles beside it).
/// Criterion measures one contender after the other; on a shared 2-core machine a busy
/// phase can fall on one of them only, and that is what a ratio must not see.
fn interleaved(rounds: usize, filter: Option<&str>) {
    let rt = current_thread_runtime();
    let server = servers::ours(50);
    println!("| revision | message | runtime (µs) | serde_json ceiling (µs) | rmcp 3.11 (µs) | null (µs) | % of ceiling | rmcp ÷ runtime (quartiles) |");
    println!("|---|---|---|---|---|---|---|---|");
    for version in VERSIONS {
        for mut case in cases(&rt, &server, version) {
            let id = format!("{}/{}", case.version, case.name);
            if filter.is_some_and(|f| !id.contains(f)) {
                continue;
            }
            let mut contenders = [
                &mut case.runtime,
                &mut case.ceiling,
                &mut case.rmcp,
                &mut case.null,
            ];
            // Iterations per batch: ~1 ms each, after a warm-up.
            let per_batch: Vec<u32> = contenders
                .iter_mut()
                .map(|run| {
                    let start = Instant::now();
                    let mut n = 0u32;
                    while start.elapsed() < Duration::from_millis(50) {
                        std::hint::black_box(run());
                        n += 1;
                    }
                    (n / 50).max(1)
                })
                .collect();
            let mut times: [Vec<f64>; 4] = Default::default();
            for round in 0..rounds {
                for k in 0..4 {
                    // Rotated, so no contender always runs right after another.
                    let i = (round + k) % 4;
                    let n = per_batch.get(i).copied().unwrap_or(1);
                    let Some(run) = contenders.get_mut(i) else {
                        continue;
                    };
                    let start = Instant::now();
                    for _ in 0..n {
                        std::hint::black_box(run());
                    }
                    let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
                    if let Some(t) = times.get_mut(i) {
                        t.push(ns);
                    }
                }
            }
            let [ours, ceiling, rmcp, null] = &times;
            let per_round = |other: &[f64]| -> Vec<f64> {
                ours.iter().zip(other).map(|(o, x)| x / o).collect()
            };
            let mut to_rmcp = per_round(rmcp);
            // The spread: the middle half of the per-round ratios (a round on this shared
            // machine can fall into another program's burst; the extremes say little).
            to_rmcp.sort_by(f64::total_cmp);
            let quartile = |q: f64| {
                to_rmcp
                    .get(((to_rmcp.len() as f64 - 1.0) * q) as usize)
                    .copied()
                    .unwrap_or(f64::NAN)
            };
            let (low, high) = (quartile(0.25), quartile(0.75));
            println!(
                "| {} | {} | {:.2} | {:.2} | {:.2} | {:.3} | {:.0}% | {:.2}× ({low:.2}–{high:.2}) |",
                case.version,
                case.name,
                median(ours.clone()) / 1000.0,
                median(ceiling.clone()) / 1000.0,
                median(rmcp.clone()) / 1000.0,
                median(null.clone()) / 1000.0,
                median(per_round(ceiling)) * 100.0,
                median(to_rmcp),
            );
        }
    }
}

/// `--count N [FILTER]`: only this runtime's contender, `N` iterations of each matching
/// case inside [`counted`], for instruction counts that a busy machine does not move:
/// `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*counted*' …`, the
/// total divided by `N` is one request's instructions (setup and the other contenders are
/// not collected).
fn count_only(iterations: u64, filter: Option<&str>) {
    let rt = current_thread_runtime();
    let server = servers::ours(50);
    for version in VERSIONS {
        for mut case in cases(&rt, &server, version) {
            let id = format!("{}/{}", case.version, case.name);
            if filter.is_some_and(|f| !id.contains(f)) {
                continue;
            }
            // A warm-up outside the collected function: first-use allocations and caches.
            for _ in 0..100 {
                std::hint::black_box((case.runtime)());
            }
            counted(&mut case.runtime, iterations);
            println!("{id}: {iterations} iterations");
        }
    }
}

/// The function callgrind collects in `--count` mode (never inlined, so it has a name).
#[inline(never)]
fn counted(run: &mut dyn FnMut() -> usize, iterations: u64) {
    for _ in 0..iterations {
        std::hint::black_box(run());
    }
}

criterion_group!(benches, bench);

/// glibc's allocator serves large blocks with `mmap` (a fresh mapping, page faults,
/// `munmap` on free) until a freed mapped block raises its threshold. Which contender
/// first frees a block above 128 KiB would otherwise decide how the others' large
/// buffers are served: one large block freed up front puts all three on the heap.
fn settle_allocator() {
    drop(std::hint::black_box(vec![0u8; 8 << 20]));
}

fn main() {
    settle_allocator();
    let args: Vec<String> = std::env::args().collect();
    let interleaved_mode = args.iter().any(|a| a == "--interleaved");
    let count = flag_value(&args, "--count").and_then(|n| n.parse().ok());
    if interleaved_mode || count.is_some() {
        let rounds = flag_value(&args, "--rounds")
            .and_then(|n| n.parse().ok())
            .unwrap_or(100);
        // The filter is the first argument that is neither a flag nor a flag's value.
        let values_at: Vec<usize> = ["--rounds", "--count"]
            .iter()
            .filter_map(|f| args.iter().position(|a| a == f).map(|i| i + 1))
            .collect();
        let filter = args
            .iter()
            .enumerate()
            .skip(1)
            .find(|(i, a)| !a.starts_with("--") && !values_at.contains(i))
            .map(|(_, a)| a);
        match count {
            Some(n) => count_only(n, filter.map(String::as_str)),
            None => interleaved(rounds, filter.map(String::as_str)),
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
