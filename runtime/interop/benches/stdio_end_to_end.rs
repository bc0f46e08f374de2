//! stdio end to end: a pipelined client (a window of requests in flight) drives the
//! `bench_server` example over real pipes — this runtime, and rmcp 3.11 in both of its
//! stdio modes, built the same way — and reports requests per second and p50/p99
//! latency for a cheap request (`ping`; `server/discover` in 2026-07-28, which has no
//! ping), `tools/list`, a cheap `tools/call`, a call whose arguments decode into a typed
//! struct and a 64 KiB `resources/read`, in a legacy revision and in 2026-07-28. Beside
//! them the null server (`bench_server null`: a fixed reply to every line, nothing
//! parsed), the limit of the path itself.
//!
//! The client is the measuring instrument and shares the machine with the servers, so it
//! is kept cheap and the same for all: request lines from one template, answers read in
//! place from a 1 MiB buffer, each checked by a scan of its top-level members (the id
//! must be one sent, a `result` must be there) instead of a full parse — the warm-up's
//! answers get the full parse too, and both must agree. Beside each server's rate, the
//! CPU time it spent per request (all its threads, from `/proc`).
//!
//! `cargo bench -p mcp-interop --bench stdio_end_to_end` (figures in BENCHMARKS.md);
//! `-- --requests N`, `-- --windows 1,64`, `-- --quick` (the CI smoke run). The servers
//! of a cell take turns in rounds of `N / 10` requests; figures are medians over rounds.

#[path = "support/answer_scan.rs"]
mod answer_scan;
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
        // Room for many answers, 64 KiB ones included: one read takes what is there.
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().ok_or("no stdout")?);
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
    /// The server's CPU time (every thread, user and system) per request.
    cpu_us: f64,
}

/// The CPU time process `pid` has spent so far, in nanoseconds: the sum of its threads'
/// `schedstat` (nanosecond resolution, unlike `stat`'s clock ticks); 0 where there is no
/// `/proc`.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// How closely answers are checked: every one by the scan, the warm-up's also by the full
/// parser (the two must agree).
#[derive(Clone, Copy, PartialEq)]
enum Check {
    Scan,
    Full,
}

/// Checks one answer line and returns its id (`None`: a notification, which is skipped).
fn check_answer(line: &[u8], check: Check) -> Result<Option<u64>, Error> {
    let head = answer_scan::scan(line)?;
    if check == Check::Full {
        let full = frames::answer_head(line)?;
        if full.id != head.id || full.result.is_some() != head.result {
            return Err(format!(
                "the scan read {head:?}, the parser {full:?}: {}",
                String::from_utf8_lossy(line)
            )
            .into());
        }
    }
    if head.id.is_some() && !head.result {
        return Err(format!("error answer: {}", String::from_utf8_lossy(line)).into());
    }
    Ok(head.id)
}

/// Sends `n` requests with at most `window` in flight; every answer must carry a result
/// (checked as `check` says).
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
    check: Check,
) -> Result<Figures, Error> {
    // The request line around its id, made once.
    let template = request(method, version, u64::MAX);
    let (head, tail) = template
        .split_once(&u64::MAX.to_string())
        .ok_or("the request template has no id")?;
    let cpu_before = cpu_ns(server.child.id());
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
                batch.extend_from_slice(head.as_bytes());
                write!(batch, "{}", first_id + i)?;
                batch.extend_from_slice(tail.as_bytes());
                batch.push(b'\n');
                if let Some(slot) = sent_at.get_mut(i as usize) {
                    *slot = now;
                }
            }
            server.input.write_all(&batch)?;
            next = allowed;
        }
        // One answer (blocking), then every complete one already buffered; each read
        // where it lies in the buffer, unless it spans reads.
        loop {
            let buffered = server.output.fill_buf()?;
            if buffered.is_empty() {
                return Err("the server closed its output".into());
            }
            let id = match memchr::memchr(b'\n', buffered) {
                Some(len) => {
                    let id = check_answer(buffered.get(..len).unwrap_or_default(), check)?;
                    server.output.consume(len + 1);
                    id
                }
                None => {
                    line.clear();
                    if server.output.read_until(b'\n', &mut line)? == 0 {
                        return Err("the server closed its output".into());
                    }
                    check_answer(line.strip_suffix(b"\n").unwrap_or(&line), check)?
                }
            };
            if let Some(id) = id {
                let i = id.checked_sub(first_id).ok_or("unexpected id")?;
                let sent = *sent_at.get(i as usize).ok_or("unexpected id")?;
                latencies.push(start.elapsed().as_nanos() as u64 - sent);
            }
            if memchr::memchr(b'\n', server.output.buffer()).is_none() {
                break;
            }
        }
    }
    let elapsed = start.elapsed();
    let cpu = cpu_ns(server.child.id()).saturating_sub(cpu_before);
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
        cpu_us: cpu as f64 / 1000.0 / n as f64,
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
        "| era | method | window | server | requests/s | p50 (µs) | p99 (µs) | server CPU (µs/request) | ours ÷ rmcp-pipes (spread) | ours ÷ null (spread) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
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
                        Check::Full,
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
                            Check::Scan,
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
                        "| {version} | {shown} | {window} | {which} | {:.0} | {:.0} | {:.0} | {:.2} | {to_rmcp} | {to_null} |",
                        of(|f| f.per_second),
                        of(|f| f.p50_us),
                        of(|f| f.p99_us),
                        of(|f| f.cpu_us)
                    );
                }
            }
        }
    }
    Ok(())
}
