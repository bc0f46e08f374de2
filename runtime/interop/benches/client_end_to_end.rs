//! The client end to end: this runtime's client next to rmcp 3.9's client, each driving
//! the same server (the `bench_server` example, this runtime, over real stdio pipes) with
//! a cheap `tools/call`, one request at a time (latency) and pipelined (a window of 64
//! requests in flight; throughput); and `mcp-bridge`'s added latency: this runtime's
//! client one request at a time against the server directly and through the bridge
//! (`mcp-bridge --command "bench_server ours"`, stdio on both sides).
//!
//! The limit beside them: the null client (`NullClient`), the cheapest client on the same
//! path — it writes a prepared request line per call (only the id changes), and matches
//! each answer line to its call by the bytes after `"id":`, parsing nothing — driving the
//! same server in both eras; `ours ÷ null` is the distance to it.
//!
//! `cargo bench -p mcp-interop --bench client_end_to_end` (figures in BENCHMARKS.md);
//! `-- --requests N`, `-- --quick` (a smoke run). The clients take turns in rounds of
//! `N / 10` requests; figures are medians over the rounds, ratios medians of the
//! per-round ratios.

#[path = "support/args.rs"]
mod args;
#[path = "support/example.rs"]
mod support;

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use args::{flag_value, median};
use mcp_runtime::model::Implementation;
use mcp_runtime::ProtocolVersion;
use mcp_runtime_client::Client;
use serde_json::json;

type Error = Box<dyn std::error::Error + Send + Sync>;

const ROUNDS: usize = 10;
const WINDOW: usize = 64;

/// One contender: sends one `tools/call` and waits for its answer.
#[derive(Clone)]
enum Contender {
    Ours(Client),
    Rmcp(Arc<rmcp::service::RunningService<rmcp::RoleClient, ()>>),
    Null(Arc<NullClient>),
}

/// The cheapest client of the server's stdio: one prepared request line per call with a
/// fresh id, answers matched to calls by their id's digits (found by searching the line,
/// not parsing it). Legacy revisions get `initialize` first; 2026-07-28 requests carry
/// their `_meta`, as every client of that revision must send.
struct NullClient {
    stdin: tokio::sync::Mutex<tokio::process::ChildStdin>,
    waiting: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<()>>>,
    next_id: AtomicU64,
    /// The request line around its id: `before`, the id, `after`.
    before: Vec<u8>,
    after: Vec<u8>,
}

impl NullClient {
    async fn start(server: &str, version: ProtocolVersion) -> Result<Arc<NullClient>, Error> {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let mut child = tokio::process::Command::new(server)
            .arg("ours")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let (Some(stdout), Some(mut stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err("no pipes".into());
        };
        // The child lives as long as the process; killed on exit.
        std::mem::forget(child);
        let mut lines = tokio::io::BufReader::new(stdout);
        let revision = version.as_str();
        let params = if revision == "2026-07-28" {
            format!(
                r#"{{"name":"tool_0","arguments":{{"city":"Paris"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{revision}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}"#
            )
        } else {
            let initialize = format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"null","version":"1"}}}}}}"#
            );
            stdin.write_all(initialize.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            let mut answer = Vec::new();
            lines.read_until(b'\n', &mut answer).await?;
            if !answer.windows(9).any(|w| w == b"\"result\":") {
                return Err(
                    format!("initialize failed: {}", String::from_utf8_lossy(&answer)).into(),
                );
            }
            stdin
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
                .await?;
            r#"{"name":"tool_0","arguments":{"city":"Paris"}}"#.to_owned()
        };
        let client = Arc::new(NullClient {
            stdin: tokio::sync::Mutex::new(stdin),
            waiting: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            before: br#"{"jsonrpc":"2.0","id":"#.to_vec(),
            after: format!(r#","method":"tools/call","params":{params}}}"#).into_bytes(),
        });
        let reader = Arc::clone(&client);
        tokio::spawn(async move {
            let mut line = Vec::with_capacity(256);
            loop {
                line.clear();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let Some(at) = line.windows(5).position(|w| w == b"\"id\":") else {
                    continue;
                };
                let id = line
                    .iter()
                    .skip(at + 5)
                    .take_while(|b| b.is_ascii_digit())
                    .fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
                let waiter = reader
                    .waiting
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&id);
                if let Some(waiter) = waiter {
                    let _ = waiter.send(());
                }
            }
        });
        Ok(client)
    }

    async fn call(&self) -> Result<(), Error> {
        use tokio::io::AsyncWriteExt;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, tx);
        let mut line = Vec::with_capacity(self.before.len() + self.after.len() + 21);
        line.extend_from_slice(&self.before);
        line.extend_from_slice(id.to_string().as_bytes());
        line.extend_from_slice(&self.after);
        line.push(b'\n');
        self.stdin.lock().await.write_all(&line).await?;
        rx.await.map_err(|_| "the server closed its output")?;
        Ok(())
    }
}

impl Contender {
    async fn call(&self) -> Result<(), Error> {
        match self {
            Contender::Null(c) => c.call().await?,
            Contender::Ours(c) => {
                c.call_tool("tool_0", json!({"city": "Paris"})).await?;
            }
            Contender::Rmcp(c) => {
                let mut args = serde_json::Map::new();
                args.insert("city".into(), json!("Paris"));
                c.call_tool(rmcp::model::CallToolRequestParams::new("tool_0").with_arguments(args))
                    .await?;
            }
        }
        Ok(())
    }
}

/// `n` calls one after the other: per-call latencies in microseconds.
async fn one_at_a_time(c: &Contender, n: usize) -> Result<Vec<f64>, Error> {
    let mut latencies = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        c.call().await?;
        latencies.push(start.elapsed().as_secs_f64() * 1e6);
    }
    Ok(latencies)
}

/// `n` calls with `WINDOW` in flight: calls per second.
async fn pipelined(c: &Contender, n: usize) -> Result<f64, Error> {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..WINDOW {
        let c = c.clone();
        let share = n / WINDOW + usize::from(w < n % WINDOW);
        tasks.push(tokio::spawn(async move {
            for _ in 0..share {
                c.call().await?;
            }
            Ok::<(), Error>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(n as f64 / start.elapsed().as_secs_f64())
}

fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let i = ((xs.len() as f64 - 1.0) * p).round() as usize;
    xs.get(i).copied().unwrap_or(f64::NAN)
}

async fn ours(program: &str, args: &[&str], v: ProtocolVersion) -> Result<Contender, Error> {
    let client = Client::builder(Implementation::new("bench-client", "1.0.0"))
        .pin(v)
        .inherit_stderr(false)
        .connect_command(program, args.iter().map(|a| a.to_string()))
        .await?;
    Ok(Contender::Ours(client))
}

async fn rmcp_client(server: &str) -> Result<(Contender, String), Error> {
    use rmcp::ServiceExt;
    let mut child = tokio::process::Command::new(server)
        .arg("ours")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("no pipes".into());
    };
    // The child lives as long as the process; killed on exit.
    std::mem::forget(child);
    let client = ().serve((stdout, stdin)).await?;
    let version = client
        .peer_info()
        .map(|i| i.protocol_version.to_string())
        .unwrap_or_default();
    Ok((Contender::Rmcp(Arc::new(client)), version))
}

fn build(target: &[&str], name: &str, quick: bool) -> Result<String, Error> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["build", "--profile", if quick { "dev" } else { "release" }])
        .args(["-p", "mcp-interop"])
        .args(target)
        .args(["--message-format", "json-render-diagnostics"])
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(format!("building {name} failed").into());
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == name && m["executable"].is_string())
        .and_then(|m| m["executable"].as_str().map(str::to_owned))
        .ok_or_else(|| format!("cargo did not name the {name} executable").into())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n: usize = flag_value(&args, "--requests")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 200 } else { 20_000 });
    let per_round = (n / ROUNDS).max(WINDOW);
    let server = support::build_bench_server(quick)?;
    let bridge = build(&["--example", "bridge"], "bridge", quick)?;

    // rmcp's client speaks what it negotiates with initialize; this client is pinned to
    // the same revision, and measured in 2026-07-28 too.
    let (theirs, rmcp_version) = rmcp_client(&server).await?;
    let legacy = ProtocolVersion::parse(&rmcp_version)
        .or(ProtocolVersion::parse("2025-11-25"))
        .ok_or("no legacy revision")?;
    let modern = ProtocolVersion::parse("2026-07-28").ok_or("no 2026-07-28")?;
    let ours_legacy = ours(&server, &["ours"], legacy).await?;
    let ours_modern = ours(&server, &["ours"], modern).await?;
    let bridged_command = format!("{server} ours");
    let bridged = ours(&bridge, &["--command", &bridged_command], legacy).await?;
    let bridged_modern = ours(&bridge, &["--command", &bridged_command], modern).await?;

    let null_legacy = Contender::Null(NullClient::start(&server, legacy).await?);
    let null_modern = Contender::Null(NullClient::start(&server, modern).await?);

    // The null clients first, the rest in the order of the table (indices below).
    let contenders: Vec<(String, Contender)> = vec![
        (format!("null client ({legacy})"), null_legacy),
        (format!("null client ({modern})"), null_modern),
        (format!("rmcp client ({rmcp_version})"), theirs),
        (format!("ours ({legacy})"), ours_legacy),
        (format!("ours ({modern})"), ours_modern),
        (format!("ours through mcp-bridge ({legacy})"), bridged),
        (
            format!("ours through mcp-bridge ({modern})"),
            bridged_modern,
        ),
    ];
    // Warm up.
    for (_, c) in &contenders {
        one_at_a_time(c, 50).await?;
    }
    let mut p50 = vec![Vec::new(); contenders.len()];
    let mut p99 = vec![Vec::new(); contenders.len()];
    let mut rps = vec![Vec::new(); contenders.len()];
    for _ in 0..ROUNDS {
        for (i, (_, c)) in contenders.iter().enumerate() {
            let lat = one_at_a_time(c, per_round / 4).await?;
            p50[i].push(percentile(lat.clone(), 0.5));
            p99[i].push(percentile(lat, 0.99));
            rps[i].push(pipelined(c, per_round).await?);
        }
    }
    println!(
        "client end to end: tools/call over stdio against bench_server (this runtime), {} profile, \
         {ROUNDS} rounds; one at a time: {} calls a round, pipelined: {per_round} calls a round, {WINDOW} in flight",
        if quick { "dev" } else { "release" },
        per_round / 4
    );
    println!(
        "| client | one at a time p50 | p99 | pipelined calls/s | p50 ÷ null p50 (spread) | calls/s ÷ null calls/s (spread) |"
    );
    println!("|---|---|---|---|---|---|");
    // Each client beside the null client of the revision it speaks to the server: the
    // legacy one (index 0) for rmcp's client and the legacy rows, 2026-07-28 (1) else.
    let null_of = |i: usize| match i {
        0 | 2 | 3 | 5 => 0usize,
        _ => 1,
    };
    for (i, (name, _)) in contenders.iter().enumerate() {
        let n = null_of(i);
        let ratio = |xs: &[f64], of: &[f64]| {
            let per_round: Vec<f64> = xs.iter().zip(of).map(|(x, o)| x / o).collect();
            let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!("{:.2} ({lo:.2}–{hi:.2})", median(per_round))
        };
        let (to_null_p50, to_null_rps) = if i == n {
            (String::new(), String::new())
        } else {
            (ratio(&p50[i], &p50[n]), ratio(&rps[i], &rps[n]))
        };
        println!(
            "| {name} | {:.0} µs | {:.0} µs | {:.0} | {to_null_p50} | {to_null_rps} |",
            median(p50[i].clone()),
            median(p99[i].clone()),
            median(rps[i].clone())
        );
    }
    // The bridge's added latency, per round, one at a time (p50).
    for (bridged, direct) in [(5usize, 3usize), (6, 4)] {
        let added: Vec<f64> = p50[bridged]
            .iter()
            .zip(&p50[direct])
            .map(|(b, d)| b - d)
            .collect();
        println!(
            "mcp-bridge adds {:.0} µs per call at p50 ({})",
            median(added),
            contenders[bridged].0
        );
    }
    Ok(())
}
