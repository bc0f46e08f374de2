//! HTTP on loopback: the `bench_server` example (`ours-http`) in its own process, driven
//! by 1, 64 and 1,000 concurrent clients, each either a legacy Streamable HTTP session
//! (2025-11-25: initialize, then calls with its session id) or stateless 2026-07-28
//! requests, each on its own keep-alive connection. Three loads per client count:
//! - closed loop: every client sends its next call as soon as the last is answered —
//!   the server's throughput, and the latency a saturated server gives;
//! - open loop, per client: every client sends one call every 100 ms — a fixed offered
//!   load per client (so 1,000 clients offer 15× the load of 64);
//! - open loop, in total: the clients together send `TOTAL_RATE` calls per second, each
//!   at its share — the same load spread over more clients, so what the latency shows is
//!   the cost of concurrency itself.
//!
//! Open-loop send times are evenly spaced by a pacing thread; the client counts take
//! turns in rounds, and the p99 at 1 and 1,000 clients is compared with the p99 at 64 of
//! the same round. Every answer is checked (status 200, its own id, a result): errors and
//! lost answers are counted; server and load-generator CPU per call come from
//! `/proc/<pid>/stat`. First of all, on the fresh server, memory per idle legacy session:
//! the server's RSS before and after opening 1,000 sessions that stay idle.
//!
//! `cargo bench -p mcp-interop --bench http_load` (`-- --quick` for the CI smoke run,
//! `-- --era 2026-07-28` for one era, `-- --url U --server-pid P` to drive a server
//! started by hand, under a profiler for instance).
//!
//! `-- --servers ours,null,rmcp,rmcp-examples` instead puts servers side by side, taking
//! turns (`compare`): this runtime, the null server (`bench_server null-http`: a fixed
//! reply to every request, the limit of the path), and rmcp 3.11's Streamable HTTP server
//! (`benches/rmcp_http`, built on demand) with `TCP_NODELAY` and as rmcp's examples build
//! it, and `mcp-bridge` (`bridge`: `mcp-bridge --http` in front of `bench_server ours` on
//! stdio, so its figures beside `ours` are what the bridge adds; RSS is the bridge's own);
//! `--clients 1,64,1000`, `--rounds N`, `--round-ms M`. `--before PATH` adds the
//! contender `before`: another build's `bench_server` (`ours-http`), for this runtime
//! before and after a change, taking turns in one run (`--servers ours,before`);
//! `--rmcp-bin PATH` uses an `rmcp-http-bench` built already instead of building it.
//! `--placement auto|split|same|free` says which CPUs the generator and the servers run
//! on (see `Placement`; `auto` by default). The generator runs on one thread.

#[path = "support/args.rs"]
mod args;
#[path = "support/example.rs"]
mod support;
// The answer check the load generators share with the tests' kit.
#[allow(dead_code, unreachable_pub)]
#[path = "../tests/kit/frames.rs"]
mod frames;

use args::{flag_value, median};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// A server of the comparison (`--servers`): its name, process, URL and pid.
struct Contender {
    name: String,
    child: std::process::Child,
    url: String,
}

/// Builds rmcp's Streamable HTTP server (`benches/rmcp_http`, a package of its own so
/// that rmcp's HTTP stack is compiled only here) and returns its executable.
fn build_rmcp_http() -> Result<String, Error> {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/rmcp_http/Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["build", "--release", "--manifest-path", manifest])
        .args(["--message-format", "json-render-diagnostics"])
        .stderr(std::process::Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err("building benches/rmcp_http failed".into());
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == "rmcp-http-bench" && m["executable"].is_string())
        .and_then(|m| m["executable"].as_str().map(str::to_owned))
        .ok_or_else(|| "cargo did not name the rmcp-http-bench executable".into())
}

/// Starts the servers named in `names`: `ours` (this runtime), `null` (a fixed reply to
/// every request), `rmcp` (rmcp 3.11 with `TCP_NODELAY`) and `rmcp-examples` (rmcp as its
/// examples build it).
/// `before` is another build's `bench_server` (`--before PATH`); `rmcp_bin` an
/// `rmcp-http-bench` built already (`--rmcp-bin PATH`), else it is built here.
fn start_contenders(
    names: &[String],
    quick: bool,
    before: Option<&str>,
    rmcp_bin: Option<&str>,
) -> Result<Vec<Contender>, Error> {
    use std::io::BufRead;
    let ours = support::build_bench_server(quick)?;
    let bridge = if names.iter().any(|n| n == "bridge") {
        Some(support::build_example("bridge", quick)?)
    } else {
        None
    };
    let rmcp = if names.iter().any(|n| n.starts_with("rmcp")) {
        // `--rmcp-bin PATH`: an rmcp-http-bench built already (its release build is long).
        Some(match rmcp_bin {
            Some(path) => path.to_owned(),
            None => build_rmcp_http()?,
        })
    } else {
        None
    };
    let mut started = Vec::new();
    for name in names {
        if let Some(bridge) = bridge.as_deref().filter(|_| name == "bridge") {
            started.push(start_bridge(bridge, &ours)?);
            continue;
        }
        let (exe, arg) = match name.as_str() {
            "ours" => (ours.as_str(), "ours-http"),
            "before" => (before.ok_or("`before` needs --before PATH")?, "ours-http"),
            "null" => (ours.as_str(), "null-http"),
            "rmcp" => (rmcp.as_deref().unwrap_or_default(), "nodelay"),
            "rmcp-examples" => (rmcp.as_deref().unwrap_or_default(), "examples"),
            other => {
                return Err(format!(
                    "unknown server `{other}`: ours, before, null, rmcp, rmcp-examples, bridge"
                )
                .into())
            }
        };
        let mut child = std::process::Command::new(exe)
            .arg(arg)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut url = String::new();
        std::io::BufReader::new(stdout).read_line(&mut url)?;
        started.push(Contender {
            name: name.clone(),
            child,
            url: url.trim().to_owned(),
        });
    }
    Ok(started)
}

/// Which CPUs the load generator and the servers run on (`--placement`, for `--servers`).
/// Where the processes run decided a one-client cell more than any server did: on this
/// 2-vCPU machine, a request and its answer crossing from one CPU to the other cost each
/// side ~16 µs more CPU (waking an idle vCPU) than when both processes share one CPU.
/// Left to the scheduler, which of the two a cell got was chance (on a quiet machine one
/// era's one-client cell read half the other's, for every server alike, the null server
/// too). So the generator (one thread) is pinned to CPU 0, and the servers:
/// - `auto` (the default with 2 or more CPUs): at one client on CPU 0 with the generator
///   (a closed loop of one client never runs two things at once: one CPU serves it
///   without loss, and what is measured is the round trip's CPU, not the VM's wake-ups);
///   at more clients on the other CPUs, so the generator never takes the server's CPU;
/// - `split`: always on the other CPUs (the one-client cells then carry the wake-ups,
///   like a client on another machine); `same`: always on CPU 0;
/// - `free`: nothing pinned (the scheduler decides, as before).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Placement {
    Auto,
    Split,
    Same,
    Free,
}

impl Placement {
    fn parse(text: Option<&str>, cpus: usize) -> Result<Placement, Error> {
        match text {
            Some("auto") if cpus >= 2 => Ok(Placement::Auto),
            Some("split") if cpus >= 2 => Ok(Placement::Split),
            Some("same") => Ok(Placement::Same),
            Some("free") => Ok(Placement::Free),
            Some(other) => Err(format!(
                "placement `{other}` on {cpus} CPU(s): auto, split (2 CPUs or more), same or free"
            )
            .into()),
            // Without `taskset` (or with one CPU) nothing is pinned.
            None if cpus >= 2 && taskset_available() => Ok(Placement::Auto),
            None => Ok(Placement::Free),
        }
    }

    /// The servers' CPU list (`taskset -c`) for cells of `clients`, if pinned.
    fn server_cpus(self, cpus: usize, clients: usize) -> Option<String> {
        let others = format!("1-{}", cpus.saturating_sub(1).max(1));
        match self {
            Placement::Auto if clients > 1 => Some(others),
            Placement::Split => Some(others),
            Placement::Auto | Placement::Same => Some("0".into()),
            Placement::Free => None,
        }
    }
}

fn taskset_available() -> bool {
    std::process::Command::new("taskset")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Pins every thread of process `pid` to the CPUs in `list` (`taskset -a -p -c`).
fn pin(pid: u32, list: &str) -> Result<(), Error> {
    let out = std::process::Command::new("taskset")
        .args(["-a", "-p", "-c", list, &pid.to_string()])
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "taskset: {} (--placement free runs unpinned)",
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(())
}

/// `mcp-bridge --http` on a free loopback port in front of `bench_server ours` (stdio); its
/// URL is the `listening on` line it prints on stderr.
fn start_bridge(bridge: &str, bench_server: &str) -> Result<Contender, Error> {
    use std::io::BufRead;
    let mut child = std::process::Command::new(bridge)
        // As many sessions as `bench_server ours-http` takes: the idle ones stay open.
        .args(["--http", "127.0.0.1:0", "--max-sessions", "100000"])
        .args(["--", bench_server, "ours"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = std::io::BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().ok_or("mcp-bridge ended before listening")??;
        if let Some(rest) = line.strip_prefix("listening on ") {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
    };
    // Keeps draining stderr so the bridge never blocks on it.
    std::thread::spawn(move || lines.for_each(drop));
    Ok(Contender {
        name: "bridge".into(),
        child,
        url,
    })
}

/// `--servers a,b,…`: the servers side by side, taking turns. First memory per idle legacy
/// session on each fresh server; then, per era and client count, every server in closed
/// loop for `round` at a time, `rounds` times in rotated order. Figures are medians over
/// rounds; ratios are medians of the per-round ratios, with their range.
async fn compare(
    contenders: &[Contender],
    counts: &[usize],
    rounds: usize,
    round: Duration,
    sessions: usize,
    only: Option<&str>,
    server_cpus: &dyn Fn(usize) -> Option<String>,
) -> Result<(), Error> {
    println!(
        "| server | idle legacy sessions | RSS before (KiB) | RSS after (KiB) | KiB per session |"
    );
    println!("|---|---|---|---|---|");
    for c in contenders {
        let before = rss_kib(c.child.id());
        let mut opener = Client::connect(&Endpoint::parse(&c.url)?).await?;
        for _ in 0..sessions {
            opener.open_session().await?;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = rss_kib(c.child.id());
        println!(
            "| {} | {sessions} | {before} | {after} | {:.1} |",
            c.name,
            after.saturating_sub(before) as f64 / sessions as f64
        );
    }
    println!();
    println!("| era | clients | server | calls/s | p50 (ms) | p99 (ms) | server CPU µs/call | generator CPU µs/call | errors | ours ÷ this, calls/s (spread) | this p99 ÷ ours | RSS after (KiB) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for era in [LEGACY, MODERN] {
        if only.is_some_and(|o| o != era) {
            continue;
        }
        for &count in counts {
            if let Some(list) = server_cpus(count) {
                for c in contenders {
                    pin(c.child.id(), &list)?;
                }
            }
            let mut sets = Vec::with_capacity(contenders.len());
            for c in contenders {
                let endpoint = Endpoint::parse(&c.url)?;
                let mut set = Vec::with_capacity(count);
                for _ in 0..count {
                    set.push(Client::new(&endpoint, era).await?);
                }
                sets.push(set);
            }
            let mut figures: Vec<Vec<Figures>> = contenders.iter().map(|_| Vec::new()).collect();
            for r in 0..rounds {
                for k in 0..contenders.len() {
                    let i = (k + r) % contenders.len();
                    let (Some(c), Some(set), Some(f)) =
                        (contenders.get(i), sets.get_mut(i), figures.get_mut(i))
                    else {
                        continue;
                    };
                    f.push(run(set, c.child.id(), era, round, None).await?);
                }
            }
            // With the cell's clients still connected.
            let rss: Vec<u64> = contenders.iter().map(|c| rss_kib(c.child.id())).collect();
            let ours = contenders
                .iter()
                .position(|c| c.name == "ours")
                .and_then(|i| figures.get(i));
            for ((c, f), rss) in contenders.iter().zip(&figures).zip(&rss) {
                let of = |g: fn(&Figures) -> f64| median(f.iter().map(g).collect());
                let (mut ratio, mut p99) = (String::new(), String::new());
                if let (Some(ours), false) = (ours, c.name == "ours") {
                    let per_round: Vec<f64> = ours
                        .iter()
                        .zip(f)
                        .map(|(o, t)| o.per_second / t.per_second)
                        .collect();
                    let low = per_round.iter().copied().fold(f64::INFINITY, f64::min);
                    let high = per_round.iter().copied().fold(0.0, f64::max);
                    ratio = format!("{:.2}× ({low:.2}–{high:.2})", median(per_round));
                    p99 = format!(
                        "{:.2}×",
                        median(
                            ours.iter()
                                .zip(f)
                                .map(|(o, t)| t.p99_ms / o.p99_ms)
                                .collect()
                        )
                    );
                }
                println!(
                    "| {era} | {count} | {} | {:.0} | {:.2} | {:.2} | {:.0} | {:.0} | {} | {ratio} | {p99} | {rss} |",
                    c.name,
                    of(|f| f.per_second),
                    of(|f| f.p50_ms),
                    of(|f| f.p99_ms),
                    of(|f| f.server_cpu_us),
                    of(|f| f.client_cpu_us),
                    f.iter().map(|f| f.errors).sum::<u64>(),
                );
            }
        }
    }
    Ok(())
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

/// Where the server listens: `host:port` and the path, from its URL.
#[derive(Clone)]
struct Endpoint {
    authority: String,
    path: String,
}

impl Endpoint {
    fn parse(url: &str) -> Result<Endpoint, Error> {
        let rest = url
            .strip_prefix("http://")
            .ok_or("the server's URL is not http://")?;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        Ok(Endpoint {
            authority: authority.to_owned(),
            path: format!("/{path}"),
        })
    }
}

/// An answer as the load generator checks it: the body is `input[body]` (None: a chunked
/// answer's, in `chunked`), so a call's answer is checked where it was read, not copied.
struct Answer {
    status: u16,
    session: Option<String>,
    sse: bool,
    body: Option<std::ops::Range<usize>>,
}

/// One client on its own keep-alive connection: a legacy session (its id) or stateless
/// requests. It writes HTTP/1.1 itself and reads answers with `httparse`, as `wrk` does:
/// through reqwest (a pool, and hyper's hand-off from the request to the connection's
/// task) the load generator spent more CPU per call than the server (~80 against ~60
/// µs), and on 2 shared cores its cost became the server's latency. A call's request is
/// made once per client (`call_head`, `call_body`): only its id and length are written per
/// call, without `fmt`.
struct Client {
    endpoint: Endpoint,
    stream: tokio::net::TcpStream,
    input: Vec<u8>,
    request: Vec<u8>,
    session: Option<String>,
    /// A chunked answer's body, gathered from its chunks.
    chunked: Vec<u8>,
    /// The call's head up to its `content-length` value, and from the end of that value:
    /// (the era's headers, the session's id, the blank line).
    call_head: (Vec<u8>, Vec<u8>),
    /// The call's body before and after its id.
    call_body: (&'static [u8], &'static [u8]),
}

/// The `tools/call` every client sends, before and after its id, per era.
const LEGACY_CALL: (&[u8], &[u8]) = (
    br#"{"jsonrpc":"2.0","id":"#,
    br#","method":"tools/call","params":{"name":"tool_1","arguments":{"city":"Oslo"}}}"#,
);
const MODERN_CALL: (&[u8], &[u8]) = (
    br#"{"jsonrpc":"2.0","id":"#,
    br#","method":"tools/call","params":{"name":"tool_1","arguments":{"city":"Oslo"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
);

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

/// The number of decimal digits of `n`.
fn decimal_len(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

impl Client {
    /// A client of `era` on a connection of its own (a legacy one has opened its session).
    async fn new(endpoint: &Endpoint, era: &str) -> Result<Client, Error> {
        let mut client = Client::connect(endpoint).await?;
        if era == LEGACY {
            client.open_session().await?;
        }
        client.prepare_call();
        Ok(client)
    }

    async fn connect(endpoint: &Endpoint) -> Result<Client, Error> {
        let stream = tokio::net::TcpStream::connect(&endpoint.authority).await?;
        stream.set_nodelay(true)?;
        Ok(Client {
            endpoint: endpoint.clone(),
            stream,
            input: Vec::with_capacity(4096),
            request: Vec::with_capacity(1024),
            session: None,
            chunked: Vec::new(),
            call_head: (Vec::new(), Vec::new()),
            call_body: (b"", b""),
        })
    }

    /// Makes the call's request once: the same head and body as `post` would write,
    /// with the era's headers (and the session's id).
    fn prepare_call(&mut self) {
        use std::io::Write;
        let (mut head, mut tail) = (Vec::new(), Vec::new());
        let _ = write!(
            head,
            "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ",
            self.endpoint.path, self.endpoint.authority
        );
        tail.extend_from_slice(b"\r\n");
        if let Some(id) = &self.session {
            let _ = write!(tail, "mcp-session-id: {id}\r\n");
            tail.extend_from_slice(b"mcp-protocol-version: 2025-11-25\r\n");
            self.call_body = LEGACY_CALL;
        } else {
            tail.extend_from_slice(
                b"mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: tool_1\r\n",
            );
            self.call_body = MODERN_CALL;
        }
        tail.extend_from_slice(b"\r\n");
        self.call_head = (head, tail);
    }

    /// `initialize` and `notifications/initialized`: the client's (new) legacy session.
    async fn open_session(&mut self) -> Result<(), Error> {
        self.session = None;
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"load","version":"1"}}}}}}"#
        );
        let answer = self.post(&[], init.as_bytes()).await?;
        if answer.status != 200 {
            return Err(format!("initialize: status {}", answer.status).into());
        }
        self.session = Some(answer.session.ok_or("initialize gave no session id")?);
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let answer = self
            .post(&[("mcp-protocol-version", LEGACY)], note.as_bytes())
            .await?;
        if answer.status != 202 {
            return Err(format!("initialized: status {}", answer.status).into());
        }
        Ok(())
    }

    /// One POST with the era's headers (and `extra`); reads the whole answer.
    async fn post(&mut self, extra: &[(&str, &str)], body: &[u8]) -> Result<Answer, Error> {
        use std::io::Write;
        self.request.clear();
        write!(
            self.request,
            "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
            self.endpoint.path,
            self.endpoint.authority,
            body.len()
        )?;
        if let Some(id) = &self.session {
            write!(self.request, "mcp-session-id: {id}\r\n")?;
        }
        for (name, value) in extra {
            write!(self.request, "{name}: {value}\r\n")?;
        }
        self.request.extend_from_slice(b"\r\n");
        self.request.extend_from_slice(body);
        self.exchange(true).await
    }

    /// Writes `request` and reads its answer; the session header is kept only when
    /// `want_session` (opening one).
    async fn exchange(&mut self, want_session: bool) -> Result<Answer, Error> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        self.stream.write_all(&self.request).await?;
        // What follows the last answer belongs to this one (none, keep-alive, in turn).
        self.input.clear();
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut response = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(head) = response.parse(&self.input)? {
                let header = |name: &[u8]| {
                    response
                        .headers
                        .iter()
                        .find(|h| h.name.as_bytes().eq_ignore_ascii_case(name))
                        .map(|h| h.value)
                };
                let status = response.code.unwrap_or(0);
                let session = if want_session {
                    header(b"mcp-session-id")
                        .and_then(|v| std::str::from_utf8(v).ok())
                        .map(str::to_owned)
                } else {
                    None
                };
                let sse =
                    header(b"content-type").is_some_and(|t| t.starts_with(b"text/event-stream"));
                let length = header(b"content-length");
                let chunked = header(b"transfer-encoding")
                    .is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
                let body = match length {
                    Some(length) => {
                        let length: usize = std::str::from_utf8(length)?.parse()?;
                        while self.input.len() < head + length {
                            if self.stream.read_buf(&mut self.input).await? == 0 {
                                return Err("the server closed the connection".into());
                            }
                        }
                        Some(head..head + length)
                    }
                    // rmcp answers a POST with an SSE stream, chunked.
                    None if chunked => {
                        self.read_chunked(head).await?;
                        None
                    }
                    None => return Err("an answer without content-length".into()),
                };
                return Ok(Answer {
                    status,
                    session,
                    sse,
                    body,
                });
            }
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Err("the server closed the connection".into());
            }
        }
    }

    /// A chunked body whose head ends at `head` in the input: read to its last chunk,
    /// into `chunked`.
    async fn read_chunked(&mut self, head: usize) -> Result<(), Error> {
        use tokio::io::AsyncReadExt;
        self.chunked.clear();
        let mut at = head;
        loop {
            // A chunk: its size in hex, CRLF, the bytes, CRLF; the last has size 0.
            let line_end = loop {
                let rest = self.input.get(at..).unwrap_or_default();
                if let Some(i) = rest.windows(2).position(|w| w == b"\r\n") {
                    break at + i;
                }
                if self.stream.read_buf(&mut self.input).await? == 0 {
                    return Err("the server closed the connection".into());
                }
            };
            let size_text = std::str::from_utf8(self.input.get(at..line_end).unwrap_or_default())?;
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)?;
            while self.input.len() < line_end + 2 + size + 2 {
                if self.stream.read_buf(&mut self.input).await? == 0 {
                    return Err("the server closed the connection".into());
                }
            }
            self.chunked.extend_from_slice(
                self.input
                    .get(line_end + 2..line_end + 2 + size)
                    .unwrap_or_default(),
            );
            at = line_end + 2 + size + 2;
            if size == 0 {
                return Ok(());
            }
        }
    }

    /// The body of `answer`: in the input, or gathered from its chunks; an SSE body's
    /// response event.
    fn body_of(&self, answer: &Answer) -> Result<&[u8], Error> {
        let body = match &answer.body {
            Some(range) => self.input.get(range.clone()).unwrap_or_default(),
            None => self.chunked.as_slice(),
        };
        if answer.sse {
            sse_response(body)
        } else {
            Ok(body)
        }
    }

    /// One call, checked: status 200, the same id back, a result.
    async fn call(&mut self, id: u64) -> Result<(), Error> {
        let (before, after) = self.call_body;
        let length = before.len() + decimal_len(id) + after.len();
        self.request.clear();
        self.request.extend_from_slice(&self.call_head.0);
        push_decimal(&mut self.request, length as u64);
        self.request.extend_from_slice(&self.call_head.1);
        self.request.extend_from_slice(before);
        push_decimal(&mut self.request, id);
        self.request.extend_from_slice(after);
        let answer = self.exchange(false).await?;
        if answer.status != 200 {
            return Err(format!("status {}", answer.status).into());
        }
        let body = self.body_of(&answer)?;
        let reply = frames::answer_head(body)?;
        if reply.id != Some(id) || reply.result.is_none() {
            return Err(format!("wrong answer to {id}: {}", String::from_utf8_lossy(body)).into());
        }
        Ok(())
    }
}

/// The JSON-RPC response in an SSE body: the data of the event that carries an id (rmcp
/// sends a priming event first, whose data is empty).
fn sse_response(body: &[u8]) -> Result<&[u8], Error> {
    body.split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .map(|data| data.strip_prefix(b" ").unwrap_or(data))
        .find(|data| data.windows(5).any(|w| w == b"\"id\":"))
        .ok_or_else(|| {
            format!(
                "an SSE answer without a response: {}",
                String::from_utf8_lossy(body)
            )
            .into()
        })
}

struct Figures {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
    answered: u64,
    /// CPU time (user + system) per answered call, server and load generator.
    server_cpu_us: f64,
    client_cpu_us: f64,
}

/// CPU time (user + system) of a process so far, in microseconds (`/proc/<pid>/stat`,
/// fields 14 and 15, in clock ticks of 10 ms).
fn cpu_us(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name (field 2) may hold spaces; the fields after it are counted from
    // its closing parenthesis.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let field = |n: usize| -> f64 {
        after
            .split_whitespace()
            .nth(n - 3)
            .and_then(|f| f.parse().ok())
            .unwrap_or(0.0)
    };
    (field(14) + field(15)) * 10_000.0
}

/// Wakes open-loop clients at their send times, evenly spaced: client `i` at
/// `start + (k · clients + i) · interval / clients`. tokio's timers fire on whole
/// milliseconds, so clients sleeping on their own timers left in bursts — at 10,000
/// calls/s ten at the same instant, and the last of ten waited behind nine — which the
/// per-client load at 1,000 clients showed as latency the server had not caused. A thread
/// sleeping to each send time spaces them within the kernel's timer slack (~50 µs).
fn pace(
    wake: Vec<Arc<tokio::sync::Notify>>,
    interval: Duration,
    start: Instant,
    deadline: Instant,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let step = interval.div_f64(wake.len().max(1) as f64);
        for j in 0u64.. {
            let due = start + step.mul_f64(j as f64);
            if due >= deadline {
                break;
            }
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            if let Some(client) = wake.get((j % wake.len() as u64) as usize) {
                client.notify_one();
            }
        }
        // Past the deadline every client is woken once more, to see it and stop.
        if let Some(wait) = deadline.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        for client in &wake {
            client.notify_one();
        }
    })
}

/// `clients` clients for `duration`; `interval` (each client's time between calls) None
/// is a closed loop.
async fn run(
    connected: &mut Vec<Client>,
    server_pid: u32,
    era: &'static str,
    duration: Duration,
    interval: Option<Duration>,
) -> Result<Figures, Error> {
    let clients = connected.len();
    let errors = Arc::new(AtomicU64::new(0));
    let next_id = Arc::new(AtomicU64::new(1));
    let wake: Vec<Arc<tokio::sync::Notify>> = (0..clients)
        .map(|_| Arc::new(tokio::sync::Notify::new()))
        .collect();
    let (server_cpu, client_cpu) = (cpu_us(&server_pid.to_string()), cpu_us("self"));
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(clients);
    for (mut client, wake) in connected.drain(..).zip(wake.iter().cloned()) {
        let errors = Arc::clone(&errors);
        let next_id = Arc::clone(&next_id);
        let paced = interval.is_some();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                if paced {
                    wake.notified().await;
                }
                if Instant::now() >= deadline {
                    break;
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
            (client, latencies)
        }));
    }
    let pacer = interval.map(|every| pace(wake, every, start, deadline));
    let mut latencies = Vec::new();
    for task in tasks {
        let (client, own) = task.await?;
        connected.push(client);
        latencies.extend(own);
    }
    let elapsed = start.elapsed();
    if let Some(pacer) = pacer {
        pacer.join().map_err(|_| "the pacer panicked")?;
    }
    let answered = latencies.len() as u64;
    let per_call = |before: f64, after: f64| (after - before) / answered.max(1) as f64;
    let server_cpu_us = per_call(server_cpu, cpu_us(&server_pid.to_string()));
    let client_cpu_us = per_call(client_cpu, cpu_us("self"));
    latencies.sort_unstable();
    let pick = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q) as usize)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    Ok(Figures {
        per_second: answered as f64 / elapsed.as_secs_f64(),
        p50_ms: pick(0.50),
        p99_ms: pick(0.99),
        errors: errors.load(Ordering::Relaxed),
        answered,
        server_cpu_us,
        client_cpu_us,
    })
}

/// An open loop's time between one client's calls, given the number of clients.
type IntervalOf = fn(usize) -> Duration;

/// One table row: medians over `rounds` (sums for the counts); with `reference`, the
/// median of the per-round ratios of p99 to the reference's p99.
fn print_row(
    era: &str,
    clients: usize,
    load: &str,
    rounds: &[Figures],
    reference: Option<&[Figures]>,
) {
    let of = |f: fn(&Figures) -> f64| median(rounds.iter().map(f).collect());
    let ratio = reference.map_or(String::new(), |reference| {
        let per_round = rounds
            .iter()
            .zip(reference)
            .map(|(f, r)| f.p99_ms / r.p99_ms)
            .collect();
        format!("{:.2}×", median(per_round))
    });
    println!(
        "| {era} | {clients} | {load} | {:.0} | {:.2} | {:.2} | {} | {} | {:.0} | {:.0} | {ratio} |",
        of(|f| f.per_second),
        of(|f| f.p50_ms),
        of(|f| f.p99_ms),
        rounds.iter().map(|f| f.answered).sum::<u64>(),
        rounds.iter().map(|f| f.errors).sum::<u64>(),
        of(|f| f.server_cpu_us),
        of(|f| f.client_cpu_us),
    );
}

fn main() -> Result<(), Error> {
    let quick = std::env::args().any(|a| a == "--quick" || a == "--test");
    let duration = Duration::from_secs(if quick { 1 } else { 5 });
    // The open loops run in rounds (see below).
    let (rounds_of_open_loops, round_duration) = if quick {
        (1, Duration::from_millis(500))
    } else {
        (9, Duration::from_secs(3))
    };
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| flag_value(&args, flag);
    // `--servers ours,null,rmcp,rmcp-examples`: the servers side by side (see `compare`).
    if let Some(names) = value("--servers") {
        let names: Vec<String> = names.split(',').map(str::to_owned).collect();
        let counts: Vec<usize> = value("--clients")
            .map(|c| c.split(',').filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_else(|| {
                if quick {
                    vec![1, 64]
                } else {
                    vec![1, 64, 1000]
                }
            });
        let rounds = value("--rounds")
            .and_then(|n| n.parse().ok())
            .unwrap_or(if quick { 1 } else { 5 });
        let round = Duration::from_millis(
            value("--round-ms")
                .and_then(|n| n.parse().ok())
                .unwrap_or(if quick { 300 } else { 2000 }),
        );
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let placement = Placement::parse(value("--placement"), cpus)?;
        let mut contenders =
            start_contenders(&names, quick, value("--before"), value("--rmcp-bin"))?;
        if placement != Placement::Free {
            // Before the runtime's threads start (they inherit it); after the builds.
            pin(std::process::id(), "0")?;
        }
        println!(
            "placement: {placement:?} ({cpus} CPUs; the generator on {}; servers at one client on {}, at more on {})",
            if placement == Placement::Free { "any" } else { "CPU 0" },
            placement.server_cpus(cpus, 1).as_deref().unwrap_or("any"),
            placement.server_cpus(cpus, 2).as_deref().unwrap_or("any"),
        );
        println!();
        // The generator runs on one thread: its clients' tasks never wake one another
        // across threads, and it takes one core at most.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let result = rt.block_on(async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            compare(
                &contenders,
                &counts,
                rounds,
                round,
                if quick { 100 } else { 1000 },
                value("--era"),
                &|count| placement.server_cpus(cpus, count),
            )
            .await
        });
        for c in &mut contenders {
            let _ = c.child.kill();
            let _ = c.child.wait();
        }
        return result;
    }
    // `--url U --server-pid P` drives a server started by hand (under a profiler, say).
    let (mut child, url, pid) = match (value("--url"), value("--server-pid")) {
        (Some(url), Some(pid)) => (None, url.to_owned(), pid.parse()?),
        _ => {
            let (child, url) = build_and_start(quick)?;
            let pid = child.id();
            (Some(child), url, pid)
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        // Memory per idle legacy session, first: on a fresh server.
        let sessions = if quick { 100 } else { 1000 };
        tokio::time::sleep(Duration::from_millis(200)).await;
        let before = rss_kib(pid);
        // One connection opens them all, one after the other: what is measured is the
        // sessions, not connections.
        let endpoint = Endpoint::parse(&url)?;
        let mut opener = Client::connect(&endpoint).await?;
        for _ in 0..sessions {
            opener.open_session().await?;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = rss_kib(pid);
        println!(
            "idle legacy sessions: {sessions}; server RSS {before} KiB → {after} KiB: {:.1} KiB per session",
            (after.saturating_sub(before)) as f64 / sessions as f64
        );
        drop(opener);
        println!();
        println!("| era | clients | load | calls/s | p50 (ms) | p99 (ms) | answered | errors | server CPU µs/call | client CPU µs/call | p99 ÷ p99 at 64 clients |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        let counts: &[usize] = if quick { &[1, 64] } else { &[1, 64, 1000] };
        // `--era 2026-07-28` (or `2025-11-25`) runs one era only.
        let only = value("--era");
        for era in [LEGACY, MODERN] {
            if only.is_some_and(|o| o != era) {
                continue;
            }
            // One set of clients per count, connected once (legacy ones with their
            // session) and kept for every load of the era.
            let mut sets = Vec::with_capacity(counts.len());
            for &count in counts {
                let mut set = Vec::with_capacity(count);
                for _ in 0..count {
                    set.push(Client::new(&endpoint, era).await?);
                }
                sets.push(set);
            }
            for set in sets.iter_mut() {
                let f = run(set, pid, era, duration, None).await?;
                print_row(era, set.len(), "closed loop", &[f], None);
            }
            // The open loops compare client counts: the counts take turns in rounds, so
            // a busy phase of this shared machine falls on each alike; figures are
            // medians over the rounds, the ratio the median of the per-round ratios.
            let loads: [(&str, IntervalOf); 2] = [
                ("1 call / 100 ms each", |_| Duration::from_millis(100)),
                ("3000 calls/s in total", |count| {
                    Duration::from_secs_f64(count as f64 / TOTAL_RATE)
                }),
            ];
            for (load, interval) in loads {
                let spread = |count: usize| count > 1 || interval(count) >= Duration::from_millis(100);
                let mut rounds: Vec<Vec<Figures>> = sets.iter().map(|_| Vec::new()).collect();
                for round in 0..rounds_of_open_loops {
                    for k in 0..sets.len() {
                        let i = (k + round) % sets.len();
                        let (Some(set), Some(figures)) = (sets.get_mut(i), rounds.get_mut(i)) else {
                            continue;
                        };
                        if !spread(set.len()) {
                            continue; // one client cannot spread a load
                        }
                        let every = interval(set.len());
                        figures.push(run(set, pid, era, round_duration, Some(every)).await?);
                    }
                }
                let at_64 = counts.iter().position(|&c| c == 64);
                for (set, figures) in sets.iter().zip(&rounds) {
                    if figures.is_empty() {
                        continue;
                    }
                    let reference = at_64.and_then(|i| rounds.get(i)).filter(|_| set.len() != 64);
                    print_row(era, set.len(), load, figures, reference.map(Vec::as_slice));
                }
            }
        }
        Ok::<_, Error>(())
    });
    if let Some(child) = child.as_mut() {
        let _ = child.kill();
        let _ = child.wait();
    }
    result
}
