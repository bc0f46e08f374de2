//! HTTP on loopback: the `bench_server` example (`ours-http`) in its own process, driven
//! by 1, 64 and 1,000 concurrent clients, each either a legacy Streamable HTTP session
//! (2025-11-25: initialize, then calls with its session id) or stateless 2026-07-28
//! requests. Three loads per client count:
//! - closed loop: every client sends its next call as soon as the last is answered —
//!   the server's throughput, and the latency a saturated server gives;
//! - open loop, per client: every client sends one call every 100 ms — a fixed offered
//!   load per client (so 1,000 clients offer 15× the load of 64);
//! - open loop, in total: the clients together send `TOTAL_RATE` calls per second, each
//!   at its share — the same load spread over more clients, so what the latency shows is
//!   the cost of concurrency itself.
//!
//! Every answer is checked (status 200, its own id, a result): errors and lost answers
//! are counted. Then memory per idle legacy session: the server's RSS before and after
//! opening 1,000 sessions that stay idle.
//!
//! `cargo bench -p mcp-runtime --bench http_load` (`-- --quick` for the CI smoke run,
//! `-- --era 2026-07-28` for one era).

#[path = "support/example.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

type Error = Box<dyn std::error::Error + Send + Sync>;

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
/// The aggregate rate of the "in total" open loop: well under what client and server
/// together reach on 2 cores (about 10,000 calls/s), so that it measures concurrency,
/// not saturation.
const TOTAL_RATE: f64 = 3000.0;

/// Builds the example server (in release mode, unless `quick`: the smoke run only proves
/// the benchmark works), starts it and returns it with its URL.
fn build_and_start(quick: bool) -> Result<(std::process::Child, String), Error> {
    use std::io::BufRead;
    let exe = support::build_bench_server(quick)?;
    let mut child = std::process::Command::new(exe)
        .arg("ours-http")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut url = String::new();
    std::io::BufReader::new(stdout).read_line(&mut url)?;
    Ok((child, url.trim().to_owned()))
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// One client: a legacy session (its id) or stateless requests.
struct Client {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
}

impl Client {
    async fn new(http: reqwest::Client, url: &str, era: &str) -> Result<Client, Error> {
        let mut client = Client {
            http,
            url: url.to_owned(),
            session: None,
        };
        if era == LEGACY {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}}});
            let response = client.post_legacy_handshake(&init).await?;
            client.session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if client.session.is_none() {
                return Err("initialize gave no session id".into());
            }
            response.bytes().await?;
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            client.post(&note, None).await?.bytes().await?;
        }
        Ok(client)
    }

    /// `initialize`: no session and no protocol-version header yet.
    async fn post_legacy_handshake(&self, body: &Value) -> Result<reqwest::Response, Error> {
        Ok(self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string())
            .send()
            .await?)
    }

    async fn post(&self, body: &Value, tool: Option<&str>) -> Result<reqwest::Response, Error> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        match &self.session {
            Some(id) => {
                request = request
                    .header("mcp-session-id", id)
                    .header("mcp-protocol-version", LEGACY);
            }
            None => {
                request = request.header("mcp-protocol-version", MODERN);
                if let Some(name) = tool {
                    request = request
                        .header("mcp-method", "tools/call")
                        .header("mcp-name", name);
                }
            }
        }
        Ok(request.send().await?)
    }

    /// One call, checked: status 200, the same id back, a result.
    async fn call(&self, id: u64) -> Result<(), Error> {
        let mut params = json!({"name": "tool_1", "arguments": {"city": "Oslo"}});
        if self.session.is_none() {
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}});
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let response = self.post(&body, Some("tool_1")).await?;
        if response.status() != 200 {
            return Err(format!("status {}", response.status()).into());
        }
        let answer: Value = serde_json::from_slice(&response.bytes().await?)?;
        if answer["id"] != json!(id) || answer.get("result").is_none() {
            return Err(format!("wrong answer to {id}: {answer}").into());
        }
        Ok(())
    }
}

struct Figures {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
    answered: u64,
}

/// `clients` clients for `duration`; `interval` None is a closed loop.
async fn run(
    url: &str,
    era: &'static str,
    clients: usize,
    duration: Duration,
    interval: Option<Duration>,
) -> Result<Figures, Error> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(usize::MAX)
        .tcp_nodelay(true)
        .build()?;
    let mut connected = Vec::with_capacity(clients);
    for _ in 0..clients {
        connected.push(Client::new(http.clone(), url, era).await?);
    }
    let errors = Arc::new(AtomicU64::new(0));
    let next_id = Arc::new(AtomicU64::new(1));
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(clients);
    for (i, client) in connected.into_iter().enumerate() {
        let errors = Arc::clone(&errors);
        let next_id = Arc::clone(&next_id);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            // Open-loop clients start spread over one interval.
            if let Some(every) = interval {
                tokio::time::sleep(every.mul_f64(i as f64 / clients as f64)).await;
            }
            let mut tick = interval.map(|every| {
                let mut t = tokio::time::interval(every);
                t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                t
            });
            while Instant::now() < deadline {
                if let Some(t) = tick.as_mut() {
                    t.tick().await;
                }
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let sent = Instant::now();
                match client.call(id).await {
                    Ok(()) => latencies.push(sent.elapsed()),
                    Err(e) => {
                        if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                            eprintln!("{era}: {e}");
                        }
                    }
                }
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await?);
    }
    let elapsed = start.elapsed();
    latencies.sort_unstable();
    let pick = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q) as usize)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    Ok(Figures {
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50_ms: pick(0.50),
        p99_ms: pick(0.99),
        errors: errors.load(Ordering::Relaxed),
        answered: latencies.len() as u64,
    })
}

fn main() -> Result<(), Error> {
    let quick = std::env::args().any(|a| a == "--quick" || a == "--test");
    let duration = Duration::from_secs(if quick { 1 } else { 5 });
    let (mut child, url) = build_and_start(quick)?;
    let pid = child.id();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        // Memory per idle legacy session, first: on a fresh server.
        let sessions = if quick { 100 } else { 1000 };
        tokio::time::sleep(Duration::from_millis(200)).await;
        let before = rss_kib(pid);
        let http = reqwest::Client::new();
        let mut idle = Vec::with_capacity(sessions);
        for _ in 0..sessions {
            idle.push(Client::new(http.clone(), &url, LEGACY).await?);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = rss_kib(pid);
        println!(
            "idle legacy sessions: {sessions}; server RSS {before} KiB → {after} KiB: {:.1} KiB per session",
            (after.saturating_sub(before)) as f64 / sessions as f64
        );
        drop(idle);
        println!();
        println!("| era | clients | load | calls/s | p50 (ms) | p99 (ms) | answered | errors |");
        println!("|---|---|---|---|---|---|---|---|");
        let counts: &[usize] = if quick { &[1, 64] } else { &[1, 64, 1000] };
        // `--era 2026-07-28` (or `2025-11-25`) runs one era only.
        let only = std::env::args()
            .skip_while(|a| a != "--era")
            .nth(1);
        for era in [LEGACY, MODERN] {
            if only.as_deref().is_some_and(|o| o != era) {
                continue;
            }
            for &clients in counts {
                let loads = [
                    (None, "closed loop".to_owned()),
                    (Some(Duration::from_millis(100)), "1 call / 100 ms each".to_owned()),
                    (
                        Some(Duration::from_secs_f64(clients as f64 / TOTAL_RATE)),
                        format!("{TOTAL_RATE:.0} calls/s in total"),
                    ),
                ];
                for (interval, load) in loads {
                    if clients == 1 && interval.is_some_and(|i| i < Duration::from_millis(100)) {
                        continue; // one client cannot spread a load
                    }
                    let f = run(&url, era, clients, duration, interval).await?;
                    println!(
                        "| {era} | {clients} | {load} | {:.0} | {:.2} | {:.2} | {} | {} |",
                        f.per_second, f.p50_ms, f.p99_ms, f.answered, f.errors
                    );
                }
            }
        }
        Ok::<_, Error>(())
    });
    let _ = child.kill();
    let _ = child.wait();
    result
}
