//! stdio end to end: a pipelined client (a window of requests in flight) drives the
//! `bench_server` example over real pipes — this runtime, and rmcp 3.9 in both of its
//! stdio modes, built the same way — and reports requests per second and p50/p99
//! latency for a cheap request (`ping`; `server/discover` in 2026-07-28, which has no
//! ping), `tools/list`, a cheap `tools/call`, a call whose arguments decode into a typed
//! struct and a 64 KiB `resources/read`, in a legacy revision and in 2026-07-28. Beside
//! them the null server (`bench_server null`: a fixed reply to every line, nothing
//! parsed), the limit of the path itself.
//!
//! `cargo bench -p mcp-runtime --bench stdio_end_to_end` (figures in BENCHMARKS.md);
//! `-- --requests N`, `-- --windows 1,64`, `-- --quick` (the CI smoke run). The servers
//! of a cell take turns in rounds of `N / 10` requests; figures are medians over rounds.

#[path = "support/args.rs"]
mod args;
#[path = "support/example.rs"]
mod support;
// The answer check the load generators share with the tests' kit.
#[allow(dead_code, unreachable_pub)]
#[path = "../tests/kit/frames.rs"]
mod frames;

use args::{flag_value, median};

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Turns each server takes per cell; each figure is the median over the rounds, the ratio
/// the median of the per-round ratios.
const ROUNDS: u64 = 10;

/// The row of a call whose arguments decode into a typed struct (`forecast`).
const TYPED_CALL: &str = "tools/call typed";

fn meta() -> &'static str {
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
}

/// The request line for `id` (without the newline).
fn request(method: &str, version: &str, id: u64) -> String {
    let modern = version == MODERN;
    let params = match (method, modern) {
        ("ping", false) => String::new(),
        ("ping", true) => format!(r#","params":{{{}}}"#, meta()),
        ("tools/list", false) => r#","params":{}"#.into(),
        ("tools/list", true) => format!(r#","params":{{{}}}"#, meta()),
        ("resources/read", false) => r#","params":{"uri":"mem://big"}"#.into(),
        ("resources/read", true) => format!(r#","params":{{"uri":"mem://big",{}}}"#, meta()),
        (TYPED_CALL, false) => {
            r#","params":{"name":"forecast","arguments":{"city":"Oslo","days":3}}"#.into()
        }
        (TYPED_CALL, true) => format!(
            r#","params":{{"name":"forecast","arguments":{{"city":"Oslo","days":3}},{}}}"#,
            meta()
        ),
        (_, false) => r#","params":{"name":"tool_1","arguments":{"city":"Oslo"}}"#.into(),
        (_, true) => format!(
            r#","params":{{"name":"tool_1","arguments":{{"city":"Oslo"}},{}}}"#,
            meta()
        ),
    };
    let method = if method == TYPED_CALL {
        "tools/call"
    } else {
        method
    };
    let method = if method == "ping" && modern {
        "server/discover"
    } else {
        method
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#)
}

struct Server {
    child: Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Server {
    fn start(exe: &str, which: &str, version: &str) -> Result<Server, Error> {
        let mut child = Command::new(exe)
            .arg(which)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut server = Server {
            child,
            input,
            output,
        };
        if version != MODERN {
            writeln!(
                server.input,
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"bench","version":"1"}}}}}}"#
            )?;
            let mut line = String::new();
            server.output.read_line(&mut line)?;
            if !line.contains(version) {
                return Err(format!("{which}: initialize answered {line}").into());
            }
            writeln!(
                server.input,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )?;
        }
        Ok(server)
    }

    fn stop(mut self) {
        drop(self.input);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy)]
struct Figures {
    per_second: f64,
    p50_us: f64,
    p99_us: f64,
}

/// Sends `n` requests with at most `window` in flight; every answer must carry a result.
///
/// One thread writes and reads: after each answer (and the others already buffered) it
/// tops the window up in one write. With a writer thread and a reader thread handing off
/// through a condition variable, every request at window 1 paid a futex wake-up in the
/// client — ~6 µs that both servers' figures carried (the gap between their round trip
/// and their p50), so the rate measured the client's hand-off as much as the server.
/// The write cannot block: what the server has not yet read is at most `window` requests
/// (~14 KiB at 64), well inside a pipe's 64 KiB.
fn drive(
    server: &mut Server,
    method: &str,
    version: &str,
    n: u64,
    window: u64,
    first_id: u64,
) -> Result<Figures, Error> {
    let start = Instant::now();
    let mut sent_at = vec![0u64; n as usize];
    let mut latencies = Vec::with_capacity(n as usize);
    let mut batch = Vec::with_capacity(64 * 1024);
    let mut line = Vec::new();
    let mut next = 0u64;
    while (latencies.len() as u64) < n {
        let allowed = (latencies.len() as u64 + window).min(n);
        if next < allowed {
            batch.clear();
            let now = start.elapsed().as_nanos() as u64;
            for i in next..allowed {
                batch.extend_from_slice(request(method, version, first_id + i).as_bytes());
                batch.push(b'\n');
                if let Some(slot) = sent_at.get_mut(i as usize) {
                    *slot = now;
                }
            }
            server.input.write_all(&batch)?;
            next = allowed;
        }
        // One answer (blocking), then every complete one already buffered.
        loop {
            line.clear();
            if server.output.read_until(b'\n', &mut line)? == 0 {
                return Err("the server closed its output".into());
            }
            let answer = frames::answer_head(&line)?;
            if let Some(id) = answer.id {
                if answer.result.is_none() {
                    return Err(format!("error answer: {}", String::from_utf8_lossy(&line)).into());
                }
                let i = id.checked_sub(first_id).ok_or("unexpected id")?;
                let sent = *sent_at.get(i as usize).ok_or("unexpected id")?;
                latencies.push(start.elapsed().as_nanos() as u64 - sent);
            }
            if !server.output.buffer().contains(&b'\n') {
                break;
            }
        }
    }
    let elapsed = start.elapsed();
    latencies.sort_unstable();
    let pick = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or(0) as f64
            / 1000.0
    };
    Ok(Figures {
        per_second: n as f64 / elapsed.as_secs_f64(),
        p50_us: pick(0.50),
        p99_us: pick(0.99),
    })
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| flag_value(&args, flag);
    let quick = args.iter().any(|a| a == "--quick" || a == "--test");
    let n: u64 = value("--requests")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 2_000 } else { 100_000 });
    let windows: Vec<u64> = value("--windows")
        .map(|w| w.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| if quick { vec![64] } else { vec![1, 64] });
    let impls: Vec<String> = value("--servers")
        .map(|s| s.split(',').map(str::to_owned).collect())
        .unwrap_or_else(|| {
            ["ours", "rmcp-pipes", "rmcp-stdio", "null"]
                .map(String::from)
                .to_vec()
        });
    let methods: Vec<String> = value("--methods")
        .map(|s| s.split(',').map(str::to_owned).collect())
        .unwrap_or_else(|| {
            [
                "ping",
                "tools/list",
                "tools/call",
                TYPED_CALL,
                "resources/read",
            ]
            .map(String::from)
            .to_vec()
        });
    let exe = support::build_bench_server(quick)?;
    println!(
        "| era | method | window | server | requests/s | p50 (µs) | p99 (µs) | ours ÷ rmcp-pipes (spread) | ours ÷ null (spread) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for version in [LEGACY, MODERN] {
        for method in methods.iter().map(String::as_str) {
            for &window in &windows {
                // All servers at once, idle but for the one being driven; they take turns
                // in rounds, so a busy phase of this shared machine falls on each alike
                // (one server after the other, a phase could fall on one only).
                let mut servers = Vec::with_capacity(impls.len());
                for which in &impls {
                    let mut server = Server::start(&exe, which, version)?;
                    // Warm up the process (allocator, caches, branch predictors).
                    drive(
                        &mut server,
                        method,
                        version,
                        (n / 20).max(500),
                        window,
                        1_000_000_000,
                    )?;
                    servers.push(server);
                }
                let chunk = (n / ROUNDS).max(100);
                let mut rounds: Vec<Vec<Figures>> = vec![Vec::new(); servers.len()];
                for round in 0..ROUNDS {
                    for k in 0..servers.len() {
                        let i = (k + round as usize) % servers.len();
                        let (Some(server), Some(figures)) = (servers.get_mut(i), rounds.get_mut(i))
                        else {
                            continue;
                        };
                        figures.push(drive(
                            server,
                            method,
                            version,
                            chunk,
                            window,
                            1 + round * chunk,
                        )?);
                    }
                }
                for server in servers {
                    server.stop();
                }
                let shown = if method == "ping" && version == MODERN {
                    "server/discover"
                } else {
                    method
                };
                let ours_at = impls.iter().position(|w| w == "ours");
                // The median of the per-round ratios of ours to `other`, and their range.
                let ratio_to = |other: usize| {
                    let (Some(ours), Some(theirs)) =
                        (ours_at.and_then(|o| rounds.get(o)), rounds.get(other))
                    else {
                        return String::new();
                    };
                    let per_round: Vec<f64> = ours
                        .iter()
                        .zip(theirs)
                        .map(|(o, t)| o.per_second / t.per_second)
                        .collect();
                    let low = per_round.iter().copied().fold(f64::INFINITY, f64::min);
                    let high = per_round.iter().copied().fold(0.0, f64::max);
                    format!("{:.2}× ({low:.2}–{high:.2})", median(per_round))
                };
                for (i, (which, figures)) in impls.iter().zip(&rounds).enumerate() {
                    let (to_rmcp, to_null) = match which.as_str() {
                        "rmcp-pipes" => (ratio_to(i), String::new()),
                        "null" => (String::new(), ratio_to(i)),
                        _ => (String::new(), String::new()),
                    };
                    let of = |f: fn(&Figures) -> f64| median(figures.iter().map(f).collect());
                    println!(
                        "| {version} | {shown} | {window} | {which} | {:.0} | {:.0} | {:.0} | {to_rmcp} | {to_null} |",
                        of(|f| f.per_second),
                        of(|f| f.p50_us),
                        of(|f| f.p99_us)
                    );
                }
            }
        }
    }
    Ok(())
}
