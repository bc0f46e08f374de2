//! What SSE keep-alive costs an idle server (BENCHMARKS.md §3.2): a server
//! process holding N idle legacy sessions, each with its GET stream open, measured from
//! outside through /proc over a quiet window — resident memory per stream, context
//! switches (wake-ups) and CPU time — with keep-alive off, at the default 15 s, and at 1 s.
//!
//! `cargo run --release -p mcp-interop --example keep_alive_cost -- [STREAMS] [WINDOW_SECS]`
//! (default 500 streams, 60 s). Linux only (/proc).

use std::time::Duration;

use futures_util::StreamExt;
use mcp_runtime::model::Implementation;
use mcp_runtime::Server;
use mcp_runtime_http::HttpConfig;

/// Server mode: `--serve KEEP_ALIVE_MS` (0: off) on 127.0.0.1:0, the address on stdout.
async fn serve(keep_alive_ms: u64) -> std::io::Result<()> {
    let mut config = HttpConfig::default();
    config.keep_alive = (keep_alive_ms > 0).then(|| Duration::from_millis(keep_alive_ms));
    config.max_sessions = 100_000;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    let server = Server::builder(Implementation::new("idle", "1")).build();
    mcp_runtime_http::serve_listener(server, listener, config).await
}

/// A `/proc` status file's field, as a number.
fn status_field(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
}

/// (resident KiB, voluntary + involuntary context switches of all its threads, CPU ms)
/// of process `pid`. A thread's context switch is one sleep and wake-up of it.
fn sample(pid: u32) -> (u64, u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status_field(&status, "VmRSS:");
    let mut switches = 0;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            switches += status_field(&status, "voluntary_ctxt_switches:")
                + status_field(&status, "nonvoluntary_ctxt_switches:");
        }
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are the 12th and
    // 13th (in clock ticks, 100 per second on Linux), for all the process's threads.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    (rss, switches, ticks.iter().sum::<u64>() * 10)
}

async fn measure(streams: usize, window: Duration, keep_alive_ms: u64) {
    let exe = std::env::current_exe().expect("this example");
    let mut child = tokio::process::Command::new(exe)
        .args(["--serve", &keep_alive_ms.to_string()])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the server");
    let pid = child.id().expect("a pid");
    let mut out = tokio::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut addr = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut out, &mut addr)
        .await
        .expect("the address");
    let url = format!("http://{}/mcp", addr.trim());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (rss_before, _, _) = sample(pid);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("a client");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}"#;
    let mut readers = Vec::new();
    for _ in 0..streams {
        let answer = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init)
            .send()
            .await
            .expect("initialize");
        let session = answer.headers()["mcp-session-id"]
            .to_str()
            .expect("a session id")
            .to_owned();
        let get = http
            .get(&url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .expect("the GET stream");
        // Read (and drop) whatever comes, as a client does.
        readers.push(tokio::spawn(async move {
            let mut body = get.bytes_stream();
            while body.next().await.is_some() {}
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (rss, switches_0, cpu_0) = sample(pid);
    tokio::time::sleep(window).await;
    let (_, switches_1, cpu_1) = sample(pid);
    let seconds = window.as_secs_f64();
    let setting = match keep_alive_ms {
        0 => "off".to_owned(),
        ms => format!("{} s", ms as f64 / 1000.0),
    };
    println!(
        "| {setting} | {streams} | {:.1} | {:.1} | {:.1} |",
        (rss.saturating_sub(rss_before)) as f64 / streams as f64,
        (switches_1 - switches_0) as f64 / seconds,
        (cpu_1 - cpu_0) as f64 / seconds * 60.0,
    );
    for reader in readers {
        reader.abort();
    }
    let _ = child.kill().await;
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let ["--serve", keep_alive] = args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        if let Err(e) = serve(keep_alive.parse().unwrap_or(0)).await {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let streams = args.first().and_then(|v| v.parse().ok()).unwrap_or(500);
    let window = Duration::from_secs(args.get(1).and_then(|v| v.parse().ok()).unwrap_or(60));
    println!("| keep-alive | idle GET streams | server RSS per stream (KiB) | server wake-ups/s | server CPU ms/min |");
    println!("|---|---:|---:|---:|---:|");
    for keep_alive_ms in [0, 15_000, 1_000] {
        measure(streams, window, keep_alive_ms).await;
    }
}
