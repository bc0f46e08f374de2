//! Load with checks: many concurrent HTTP clients of every era at once, or a long pipeline
//! of stdio requests, verifying that every request gets exactly one answer, with its own
//! id and its own session's data, and that no client ever hears a notification meant for
//! another (RELIABILITY.md has the figures).
//!
//! ```sh
//! cargo run --release -p mcp-interop --example load -- http [CLIENTS [REQUESTS]]   # 1000 100
//! cargo run --release -p mcp-interop --example load -- stdio [REQUESTS [WINDOW]]   # 1000000 256
//! ```
//!
//! Server and clients share this process (loopback / an in-memory pipe). The HTTP run
//! mixes, by client number: stateless 2026-07-28 requests (2 in 10), 2024-11-05 over the
//! HTTP+SSE transport (1 in 10), and legacy Streamable HTTP sessions of 2024-11-05 …
//! 2025-11-25 (7 in 10; one in 10 of all clients also holds the session's GET stream,
//! subscribes to a resource of its own and has the server announce updates to it). Every
//! second call asks for a progress notification and a log message, which then travel on
//! the request's own SSE stream. `tests/reliability.rs` runs both at a smaller size.
//!
//! The clients here are the load generator's own (they count problems instead of failing,
//! and must not slow the server they load), but the SSE framing and answer parsing and the
//! timeout policy are the test kit's (`tests/kit/frames.rs`, `tests/kit/patience.rs`): a
//! request, event or line not there within the patience (20 s, `MCP_TEST_TIMEOUT_MS`)
//! counts as an error.

// The framing and parsing, and the timeout policy, of the tests' kit.
#[allow(dead_code, unreachable_pub)]
#[path = "../tests/kit/frames.rs"]
mod frames;
#[allow(dead_code, unreachable_pub)]
#[path = "../tests/kit/patience.rs"]
pub(crate) mod patience;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mcp_runtime::model::{
    Implementation, LogLevel, ResourceContents, ResourceTemplate, Tool, ToolResult,
};
use mcp_runtime::{Limits, Server, ServerEvent};
use mcp_runtime_http::HttpConfig;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};

/// What one run observed.
#[derive(Debug, Default)]
pub struct Report {
    /// `http` or `stdio`.
    pub transport: &'static str,
    /// Concurrent clients.
    pub clients: usize,
    /// Tool calls sent (each must be answered once).
    pub calls: u64,
    /// HTTP requests or stdio lines sent in all (handshakes and subscriptions included).
    pub messages: u64,
    /// Calls answered once, with their own id and their own session's data.
    pub answered: u64,
    /// Error answers, HTTP failures and timeouts.
    pub errors: u64,
    /// Of those, the ones of calls (the rest: handshakes, streams, other requests).
    pub call_errors: u64,
    /// Answers 503 (the shared session store unavailable), calls or not.
    pub unavailable: u64,
    /// Calls that never got an answer.
    pub lost: u64,
    /// Answers to a call that was already answered.
    pub duplicated: u64,
    /// Answers with an id the client was not waiting for, or another session's data.
    pub misrouted: u64,
    /// Notifications the calls asked for (progress, log, resource updates).
    pub notifications_expected: u64,
    /// Notifications received that belonged to this client and request.
    pub notifications: u64,
    /// Notifications received that belonged to another client or request.
    pub foreign: u64,
    /// GET streams cut (their replica died) and resumed through another replica
    /// (`examples/replica_load.rs`).
    pub resumed: u64,
    /// Resource updates announced while a client's cut GET stream was not open anywhere
    /// (notifications are not queued for a session without a GET stream).
    pub missed_while_cut: u64,
    /// Resource updates that never reached a GET stream that was not cut.
    pub updates_missed: u64,
    /// Clients whose last call was answered, with their own data.
    pub last_ok: u64,
    /// HTTP+SSE sessions opened again after their stream was cut (their replica died).
    pub reopened: u64,
    /// POST answers (SSE) cut before their answer and resumed with `Last-Event-ID`.
    pub answers_resumed: u64,
    /// Answers and notifications of HTTP+SSE calls whose POST had failed (the replica
    /// that took it died before its 202), arriving later on their own stream.
    pub late: u64,
    /// Wall time of the whole run.
    pub elapsed: Duration,
    /// Peak resident memory of this process (server and clients), KiB, if known.
    pub peak_rss_kib: Option<u64>,
    /// Most file descriptors open at once in this process (sampled every 50 ms).
    pub peak_fds: u64,
    /// File descriptors open before the run and once the clients closed their
    /// connections (the server must have closed its ends too).
    pub fds_after: Option<(u64, u64)>,
    /// The first problem seen, for the record.
    pub first_problem: Option<String>,
}

impl Report {
    /// Nothing lost, duplicated, misrouted or foreign, and no error.
    pub fn clean(&self) -> bool {
        self.errors == 0
            && self.lost == 0
            && self.duplicated == 0
            && self.misrouted == 0
            && self.foreign == 0
            && self.updates_missed == 0
            && self.answered == self.calls
            && self.notifications == self.notifications_expected
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        writeln!(
            f,
            "{}: {} clients, {} calls ({} messages) in {:.2} s = {:.0} calls/s, {:.0} messages/s",
            self.transport,
            self.clients,
            self.calls,
            self.messages,
            secs,
            self.calls as f64 / secs,
            self.messages as f64 / secs
        )?;
        writeln!(
            f,
            "answered: {}, errors: {} ({} of calls, {} answers 503), lost: {}, duplicated: {}, misrouted: {}",
            self.answered,
            self.errors,
            self.call_errors,
            self.unavailable,
            self.lost,
            self.duplicated,
            self.misrouted
        )?;
        write!(
            f,
            "notifications: {} of {} expected, foreign: {}, resource updates missed: {}",
            self.notifications, self.notifications_expected, self.foreign, self.updates_missed
        )?;
        if let Some(kib) = self.peak_rss_kib {
            write!(f, "\npeak RSS (server and clients): {} MiB", kib / 1024)?;
        }
        if self.peak_fds > 0 {
            write!(f, ", peak open files: {}", self.peak_fds)?;
        }
        if let Some((before, after)) = self.fds_after {
            write!(f, " ({before} before the run, {after} after it)")?;
        }
        if self.resumed + self.missed_while_cut + self.reopened + self.answers_resumed > 0 {
            write!(
                f,
                "\nafter a cut: POST answers resumed {}, GET streams resumed {} (resource \
                 updates missed {}), HTTP+SSE sessions opened again {}, late messages of \
                 failed HTTP+SSE POSTs {}",
                self.answers_resumed, self.resumed, self.missed_while_cut, self.reopened, self.late
            )?;
        }
        if let Some(p) = &self.first_problem {
            write!(f, "\nfirst problem: {p}")?;
        }
        Ok(())
    }
}

/// Counters shared by the client tasks.
#[derive(Default)]
pub struct Tally {
    calls: AtomicU64,
    messages: AtomicU64,
    answered: AtomicU64,
    errors: AtomicU64,
    call_errors: AtomicU64,
    unavailable: AtomicU64,
    lost: AtomicU64,
    duplicated: AtomicU64,
    misrouted: AtomicU64,
    notifications_expected: AtomicU64,
    notifications: AtomicU64,
    foreign: AtomicU64,
    resumed: AtomicU64,
    missed_while_cut: AtomicU64,
    updates_missed: AtomicU64,
    last_ok: AtomicU64,
    reopened: AtomicU64,
    answers_resumed: AtomicU64,
    late: AtomicU64,
    /// Clients past their handshake (sessions open), calling.
    started: AtomicU64,
    peak_fds: AtomicU64,
    first_problem: Mutex<Option<String>>,
}

impl Tally {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    fn problem(&self, counter: &AtomicU64, what: String) {
        Tally::add(counter, 1);
        // MCP_LOAD_VERBOSE=1: every problem, not only the first.
        if std::env::var_os("MCP_LOAD_VERBOSE").is_some() {
            eprintln!("problem: {what}");
        }
        let mut first = self
            .first_problem
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        first.get_or_insert(what);
    }

    /// A failed request: silence (no answer within the patience) counts as lost, anything
    /// else (an error status, a cut connection) as an error.
    fn failed(&self, what: String) {
        let counter = match what.contains("silence") {
            true => &self.lost,
            false => &self.errors,
        };
        self.problem(counter, what);
    }

    /// A call that failed: counted as a call, and as silence (lost) or an error (with the
    /// HTTP status it got, if any: 503 is the store being unavailable).
    fn call_failed(&self, what: String, status: Option<u16>) {
        Tally::add(&self.calls, 1);
        if status == Some(503) {
            Tally::add(&self.unavailable, 1);
        }
        if !what.contains("silence") {
            Tally::add(&self.call_errors, 1);
        }
        self.failed(what);
    }

    /// Calls answered so far, with their own data.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Clients past their handshake so far.
    pub fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    pub fn report(&self, transport: &'static str, clients: usize, elapsed: Duration) -> Report {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Report {
            transport,
            clients,
            calls: get(&self.calls),
            messages: get(&self.messages),
            answered: get(&self.answered),
            errors: get(&self.errors),
            call_errors: get(&self.call_errors),
            unavailable: get(&self.unavailable),
            lost: get(&self.lost),
            duplicated: get(&self.duplicated),
            misrouted: get(&self.misrouted),
            notifications_expected: get(&self.notifications_expected),
            notifications: get(&self.notifications),
            foreign: get(&self.foreign),
            resumed: get(&self.resumed),
            missed_while_cut: get(&self.missed_while_cut),
            updates_missed: get(&self.updates_missed),
            last_ok: get(&self.last_ok),
            reopened: get(&self.reopened),
            answers_resumed: get(&self.answers_resumed),
            late: get(&self.late),
            peak_fds: get(&self.peak_fds),
            fds_after: None,
            elapsed,
            peak_rss_kib: peak_rss_kib(),
            first_problem: self
                .first_problem
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        }
    }
}

/// Samples this process's open file descriptors into `tally.peak_fds` until dropped.
fn watch_fds(tally: &Arc<Tally>) -> tokio::task::JoinHandle<()> {
    let tally = Arc::clone(tally);
    tokio::spawn(async move {
        loop {
            tally.peak_fds.fetch_max(open_fds(), Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64)
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The soft limit on open files, if known (Linux).
pub fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

// ───────────────────────────── the server ─────────────────────────────

fn tool(name: &str, properties: Value) -> Tool {
    Tool::new(name, name).input_schema(json!({"type": "object", "properties": properties}))
}

/// The server under load. `echo` answers with what makes its answer this request's and
/// this session's alone: the client's nonce, the client name it declared in its
/// capabilities (`experimental.load.client`, kept by the session or sent with each
/// stateless request), the revision and the request id; with `notify`, it first sends a
/// progress notification (the client's token) and a log message (the client name and
/// nonce). `touch` announces an update of the resource it names.
pub fn load_server(limits: Limits) -> Server {
    Server::builder(Implementation::new("load", "1.0.0"))
        .limits(limits)
        .tool(
            tool(
                "echo",
                json!({"nonce": {"type": "string"}, "notify": {"type": "boolean"}}),
            ),
            |args, ctx| async move {
                let nonce = args.get("nonce").cloned().unwrap_or(Value::Null);
                let client = ctx
                    .client_capabilities()
                    .pointer("/experimental/load/client")
                    .cloned()
                    .unwrap_or(Value::Null);
                if args.get("notify").and_then(Value::as_bool) == Some(true) {
                    ctx.progress(1.0, Some(1.0), None).await;
                    ctx.log(
                        LogLevel::Info,
                        Some("load"),
                        json!({"client": client, "nonce": nonce}),
                    )
                    .await;
                }
                let id = ctx.request_id().map_or(Value::Null, |id| id.to_value());
                let body = json!({"nonce": nonce, "client": client, "version": ctx.version().to_string(), "id": id});
                Ok(ToolResult::text(body.to_string()))
            },
        )
        .tool(
            tool("touch", json!({"uri": {"type": "string"}})),
            |args, ctx| async move {
                let uri = args
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                ctx.announce(ServerEvent::ResourceUpdated(uri));
                Ok(ToolResult::text("touched"))
            },
        )
        .resource_template(
            ResourceTemplate::new("load://client/{id}", "client").mime_type("text/plain"),
            |uri, _, _| async move { Ok(vec![ResourceContents::text(uri, "text/plain", "x")]) },
        )
        .build()
}

// ───────────────────────────── checks ─────────────────────────────

/// What a client expects of the answer to one `echo` call.
struct Expect<'a> {
    id: i64,
    nonce: &'a str,
    client: &'a str,
    version: &'a str,
    /// The progress token sent, if the call asked for notifications.
    token: Option<&'a str>,
    /// The client's last call (its success shows the client's session went on to the end).
    last: bool,
}

/// Checks the messages that one call produced (its notifications, then its answer).
fn check_call(tally: &Tally, expect: &Expect<'_>, messages: &[Value]) {
    Tally::add(&tally.calls, 1);
    // A call that failed (its replica died) owes no notifications: only those it got
    // count, and must be its own.
    let failed = messages
        .iter()
        .any(|m| m.get("method").is_none() && m.get("error").is_some());
    if expect.token.is_some() {
        let owed = match failed {
            true => messages
                .iter()
                .filter(|m| m.get("method").is_some())
                .count() as u64,
            false => 2,
        };
        Tally::add(&tally.notifications_expected, owed);
    }
    let mut answers = 0;
    for m in messages {
        if m.get("method").is_some() {
            check_notification(tally, expect, m);
            continue;
        }
        answers += 1;
        if answers > 1 {
            tally.problem(&tally.duplicated, format!("second answer: {m}"));
            continue;
        }
        check_answer(tally, expect, m);
    }
    if answers == 0 {
        tally.problem(
            &tally.lost,
            format!("no answer to {} of {}", expect.id, expect.client),
        );
    }
}

fn check_answer(tally: &Tally, expect: &Expect<'_>, m: &Value) {
    if m.get("id") != Some(&json!(expect.id)) {
        tally.problem(
            &tally.misrouted,
            format!("{} waited for {}, got {m}", expect.client, expect.id),
        );
        return;
    }
    if m.get("error").is_some() {
        Tally::add(&tally.call_errors, 1);
        tally.problem(&tally.errors, format!("{}: {m}", expect.client));
        return;
    }
    let echoed: Option<Value> = m
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .and_then(|t| serde_json::from_str(t).ok());
    let own = echoed.is_some_and(|e| {
        e["nonce"] == expect.nonce
            && e["client"] == expect.client
            && e["version"] == expect.version
            && e["id"] == expect.id
    });
    if own {
        Tally::add(&tally.answered, 1);
        if expect.last {
            Tally::add(&tally.last_ok, 1);
        }
    } else {
        tally.problem(
            &tally.misrouted,
            format!(
                "{} ({}) call {}: another's data: {m}",
                expect.client, expect.nonce, expect.id
            ),
        );
    }
}

fn check_notification(tally: &Tally, expect: &Expect<'_>, n: &Value) {
    let own = match n["method"].as_str() {
        Some("notifications/progress") => {
            expect.token.is_some() && n["params"]["progressToken"].as_str() == expect.token
        }
        Some("notifications/message") => {
            expect.token.is_some()
                && n["params"]["data"]["client"] == expect.client
                && n["params"]["data"]["nonce"] == expect.nonce
        }
        _ => false,
    };
    if own {
        Tally::add(&tally.notifications, 1);
    } else {
        tally.problem(
            &tally.foreign,
            format!("{} call {} heard {n}", expect.client, expect.id),
        );
    }
}

/// A small, seeded xorshift: nonces that differ between clients and calls.
struct Nonces(u64);

impl Nonces {
    fn next(&mut self) -> String {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        format!("{:016x}", self.0)
    }
}

// ───────────────────────────── HTTP ─────────────────────────────

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN: &str = "2026-07-28";

/// What a POST brought back: its status, session id, and messages (one JSON answer, or
/// every event of its SSE stream).
struct Posted {
    status: u16,
    session: Option<String>,
    messages: Vec<Value>,
    /// Times its SSE answer was cut and resumed with `Last-Event-ID`.
    resumed: u64,
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Result<Posted, String> {
    let mut req = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let silence = |e: &reqwest::Error| match e.is_timeout() {
        true => "silence: ",
        false => "",
    };
    let resp = req
        .send()
        .await
        .map_err(|e| format!("{}POST {url}: {e}", silence(&e)))?;
    let status = resp.status().as_u16();
    // A client that honours `Retry-After` (the store was unavailable: 503) waits before
    // its next request, as SDK clients do, rather than spend its calls on the outage.
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|_| status == 503)
        .map(|s| Duration::from_secs(s.min(2)));
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if !content_type.starts_with("text/event-stream") {
        let text = resp
            .text()
            .await
            .map_err(|e| format!("{}body: {e}", silence(&e)))?;
        let messages = frames::answer_messages(&content_type, &text)?;
        if let Some(wait) = retry_after {
            tokio::time::sleep(wait).await;
        }
        return Ok(Posted {
            status,
            session,
            messages,
            resumed: 0,
        });
    }
    let (messages, resumed) = read_answer_stream(http, url, headers, resp).await?;
    Ok(Posted {
        status,
        session,
        messages,
        resumed,
    })
}

/// The messages of a POST's SSE answer, and how many times it was resumed. A stream cut
/// before its answer (its replica died) is resumed with `Last-Event-ID`, as SDK clients
/// do — through whichever replica takes the GET — and read on until it ends.
async fn read_answer_stream(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    resp: reqwest::Response,
) -> Result<(Vec<Value>, u64), String> {
    let mut messages = Vec::new();
    let mut events = SseReader::new(resp);
    let (mut last_id, mut resumes) = (None::<String>, 0u64);
    loop {
        while let Some(event) = events.next().await {
            let event = event?;
            if event.id.is_some() {
                last_id.clone_from(&event.id);
            }
            if !event.data.is_empty() {
                messages.push(event.message()?);
            }
        }
        let answered = messages.iter().any(|m| m.get("method").is_none());
        match events.cut.take() {
            None => return Ok((messages, resumes)),
            Some(e) if answered => return Err(format!("body, after the answer: {e}")),
            Some(e) if e.contains("silence") || resumes == 3 => return Err(format!("body: {e}")),
            Some(e) => {
                let Some(last) = &last_id else {
                    return Err(format!("body, cut before any event: {e}"));
                };
                resumes += 1;
                let mut get = http
                    .get(url)
                    .header("accept", "text/event-stream")
                    .header("last-event-id", last.as_str());
                for (k, v) in headers {
                    get = get.header(*k, *v);
                }
                let resumed = get.send().await.map_err(|e| format!("resume: {e}"))?;
                if resumed.status().as_u16() != 200 {
                    return Err(format!("resume: HTTP {}", resumed.status()));
                }
                events = SseReader::new(resumed);
            }
        }
    }
}

fn call(id: i64, nonce: &str, token: Option<&str>, meta: Option<Value>) -> Value {
    let mut m = meta.unwrap_or_else(|| json!({}));
    if let Some(t) = token {
        m["progressToken"] = json!(t);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"nonce": nonce, "notify": token.is_some()}, "_meta": m}})
}

fn capabilities(client: &str) -> Value {
    json!({"experimental": {"load": {"client": client}}})
}

fn initialize(client: &str, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities(client),
        "clientInfo": {"name": client, "version": "1"}}})
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// What every client task gets.
struct Setup {
    tally: Arc<Tally>,
    /// For requests (with a timeout).
    http: reqwest::Client,
    /// For long-lived streams (no overall timeout).
    streams: reqwest::Client,
    base: String,
    /// The client's number.
    n: usize,
    /// Calls to make.
    calls: usize,
}

/// One legacy Streamable HTTP session on `/mcp`.
async fn streamable_client(setup: Setup, version: &'static str, get_stream: bool) {
    let Setup {
        tally,
        http,
        streams,
        base,
        n,
        calls,
    } = setup;
    let client = format!("c{n}");
    let url = format!("{base}/mcp");
    let mut nonces = Nonces(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1));
    Tally::add(&tally.messages, 2);
    let session = match post(&http, &url, &[], &initialize(&client, version)).await {
        Ok(Posted {
            status: 200,
            session: Some(s),
            ..
        }) => s,
        Ok(p) => {
            return tally.problem(
                &tally.errors,
                format!("{client}: initialize: {} {:?}", p.status, p.messages),
            )
        }
        Err(e) => return tally.problem(&tally.errors, format!("{client}: {e}")),
    };
    let h = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", version),
    ];
    let initialized: Value = serde_json::from_str(INITIALIZED).unwrap_or_default();
    if let Err(e) = post(&http, &url, &h, &initialized).await {
        tally.problem(&tally.errors, format!("{client}: initialized: {e}"));
    }
    Tally::add(&tally.started, 1);
    // The session's GET stream: resource updates for this client's resource only.
    let own_uri = format!("load://client/{n}");
    let mut listener = None;
    // Set before the session is ended: the GET stream's end is then expected.
    let ending = Arc::new(AtomicBool::new(false));
    if get_stream {
        let resp = streams
            .get(&url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", version)
            .send()
            .await;
        Tally::add(&tally.messages, 2);
        let resp = match resp {
            Ok(r) if r.status().as_u16() == 200 => r,
            other => {
                return tally.problem(
                    &tally.errors,
                    format!("{client}: GET stream: {:?}", other.map(|r| r.status())),
                )
            }
        };
        let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": own_uri}});
        match post(&http, &url, &h, &subscribe).await {
            Ok(p)
                if p.messages
                    .first()
                    .is_some_and(|m| m.get("result").is_some()) => {}
            other => {
                return tally.problem(
                    &tally.errors,
                    format!("{client}: subscribe: {:?}", other.map(|p| p.messages)),
                )
            }
        }
        let (t, uri, who) = (Arc::clone(&tally), own_uri.clone(), client.clone());
        let (streams, url, session, ending) = (
            streams.clone(),
            url.clone(),
            session.clone(),
            Arc::clone(&ending),
        );
        listener = Some(tokio::spawn(async move {
            let (mut heard, mut cut) = (0u64, false);
            let mut last_id: Option<String> = None;
            let mut events = SseReader::new(resp);
            loop {
                while let Some(event) = events.next().await {
                    let event = match event {
                        Ok(event) => event,
                        Err(e) => {
                            t.problem(&t.errors, format!("{who}'s GET stream: {e}"));
                            continue;
                        }
                    };
                    if event.id.is_some() {
                        last_id.clone_from(&event.id);
                    }
                    // An event with no data (an SSE priming event) carries no message.
                    if event.data.is_empty() {
                        continue;
                    }
                    match event.message() {
                        Ok(m)
                            if m["method"] == "notifications/resources/updated"
                                && m["params"]["uri"] == uri.as_str() =>
                        {
                            heard += 1
                        }
                        Ok(m) => t.problem(&t.foreign, format!("{who}'s GET stream heard {m}")),
                        Err(e) => t.problem(&t.errors, format!("{who}'s GET stream: {e}")),
                    }
                }
                if ending.load(Ordering::SeqCst) {
                    break;
                }
                // Cut before the session ended (its replica died): resumed, from the last
                // event seen, on whichever replica takes the new GET.
                cut = true;
                let reopened =
                    reopen_get_stream(&streams, &url, &session, version, last_id.as_deref());
                match reopened.await {
                    Ok(resp) => {
                        Tally::add(&t.resumed, 1);
                        events = SseReader::new(resp);
                    }
                    Err(e) => {
                        if !ending.load(Ordering::SeqCst) {
                            t.problem(&t.errors, format!("{who}'s GET stream: {e}"));
                        }
                        break;
                    }
                }
            }
            (heard, cut)
        }));
    }
    let mut touches = 0u64;
    for k in 0..calls {
        let id = 10 + k as i64;
        let nonce = nonces.next();
        let token = format!("{client}-{k}");
        let token = (k % 2 == 1).then_some(token.as_str());
        Tally::add(&tally.messages, 1);
        match post(&http, &url, &h, &call(id, &nonce, token, None)).await {
            Ok(p) if p.status == 200 => {
                Tally::add(&tally.answers_resumed, p.resumed);
                check_call(
                    &tally,
                    &Expect {
                        id,
                        nonce: &nonce,
                        client: &client,
                        version,
                        token,
                        last: k + 1 == calls,
                    },
                    &p.messages,
                )
            }
            Ok(p) => tally.call_failed(
                format!("{client}: call {id}: HTTP {} {:?}", p.status, p.messages),
                Some(p.status),
            ),
            Err(e) => tally.call_failed(format!("{client}: call {id}: {e}"), None),
        }
        if listener.is_some() && k % 10 == 9 {
            let touch = json!({"jsonrpc": "2.0", "id": -id, "method": "tools/call", "params": {"name": "touch", "arguments": {"uri": own_uri}}});
            Tally::add(&tally.messages, 1);
            match post(&http, &url, &h, &touch).await {
                Ok(p)
                    if p.messages
                        .first()
                        .is_some_and(|m| m.get("result").is_some()) =>
                {
                    touches += 1
                }
                other => {
                    if other.as_ref().is_ok_and(|p| p.status == 503) {
                        Tally::add(&tally.unavailable, 1);
                    }
                    tally.problem(
                        &tally.errors,
                        format!("{client}: touch: {:?}", other.map(|p| p.messages)),
                    )
                }
            }
        }
    }
    if let Some(listener) = listener {
        // Updates travel asynchronously: wait for them before ending the session.
        tokio::time::sleep(Duration::from_millis(200)).await;
        ending.store(true, Ordering::SeqCst);
        end_session(&tally, &http, &url, &session).await;
        match tokio::time::timeout(patience::patience(), listener).await {
            Ok(Ok((heard, cut))) => {
                Tally::add(&tally.notifications, heard.min(touches));
                // Missing updates are counted apart (never as heard, nor as owed).
                let missed = touches.saturating_sub(heard);
                Tally::add(&tally.notifications_expected, touches - missed);
                if heard > touches {
                    tally.problem(
                        &tally.duplicated,
                        format!("{client}: {heard} resource updates for {touches} touches"),
                    );
                } else if missed > 0 && cut {
                    // Announced while its GET stream was open nowhere: not delivered, and
                    // not stored for a resume either.
                    Tally::add(&tally.missed_while_cut, missed);
                } else if missed > 0 {
                    Tally::add(&tally.updates_missed, missed - 1);
                    tally.problem(
                        &tally.updates_missed,
                        format!("{client}: {heard} of {touches} resource updates"),
                    );
                }
            }
            _ => {
                Tally::add(&tally.notifications_expected, touches);
                tally.problem(
                    &tally.errors,
                    format!("{client}: the GET stream did not end"),
                )
            }
        }
    } else {
        end_session(&tally, &http, &url, &session).await;
    }
}

/// A session's GET stream opened again after a cut, resuming after `last_id` if any event
/// was seen; retried (a replica may be refusing connections) within the patience.
async fn reopen_get_stream(
    streams: &reqwest::Client,
    url: &str,
    session: &str,
    version: &str,
    last_id: Option<&str>,
) -> Result<reqwest::Response, String> {
    let started = Instant::now();
    loop {
        let mut req = streams
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", version);
        if let Some(id) = last_id {
            req = req.header("last-event-id", id);
        }
        let status = match req.send().await {
            Ok(r) if r.status().as_u16() == 200 => return Ok(r),
            Ok(r) if r.status().as_u16() == 404 => return Err("the session ended".into()),
            Ok(r) => r.status().to_string(),
            Err(e) => e.to_string(),
        };
        if started.elapsed() > patience::patience() {
            return Err(format!("not reopened within the patience: {status}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn end_session(tally: &Tally, http: &reqwest::Client, url: &str, session: &str) {
    Tally::add(&tally.messages, 1);
    match http
        .delete(url)
        .header("mcp-session-id", session)
        .send()
        .await
    {
        Ok(r) if r.status().as_u16() == 200 => {}
        other => tally.problem(
            &tally.errors,
            format!("DELETE: {:?}", other.map(|r| r.status())),
        ),
    }
}

/// Stateless 2026-07-28 requests, each on its own.
async fn stateless_client(setup: Setup) {
    let Setup {
        tally,
        http,
        base,
        n,
        calls,
        ..
    } = setup;
    let client = format!("c{n}");
    let url = format!("{base}/mcp");
    let mut nonces = Nonces(0x2545_f491_4f6c_dd1d ^ (n as u64 + 1));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities(&client),
        "io.modelcontextprotocol/logLevel": "info",
    });
    let h = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    Tally::add(&tally.started, 1);
    for k in 0..calls {
        let id = 10 + k as i64;
        let nonce = nonces.next();
        let token = format!("{client}-{k}");
        let token = (k % 2 == 1).then_some(token.as_str());
        Tally::add(&tally.messages, 1);
        match post(
            &http,
            &url,
            &h,
            &call(id, &nonce, token, Some(meta.clone())),
        )
        .await
        {
            Ok(p) if p.status == 200 => check_call(
                &tally,
                &Expect {
                    id,
                    nonce: &nonce,
                    client: &client,
                    version: MODERN,
                    token,
                    last: k + 1 == calls,
                },
                &p.messages,
            ),
            Ok(p) => tally.call_failed(
                format!("{client}: call {id}: HTTP {} {:?}", p.status, p.messages),
                Some(p.status),
            ),
            Err(e) => tally.call_failed(format!("{client}: call {id}: {e}"), None),
        }
    }
}

/// Reads the SSE events of a response body (framing by the kit's `frames`).
struct SseReader {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    parser: frames::SseParser,
    /// Why the stream ended, if it was cut (or timed out: "silence") rather than ended.
    cut: Option<String>,
}

impl SseReader {
    fn new(resp: reqwest::Response) -> SseReader {
        SseReader {
            body: resp.bytes_stream().boxed(),
            parser: frames::SseParser::default(),
            cut: None,
        }
    }

    /// The next event, or `None` when the stream ends (or is cut: see `cut`).
    async fn next(&mut self) -> Option<Result<frames::SseEvent, String>> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Some(event);
            }
            match self.body.next().await? {
                Ok(chunk) => self.parser.push(&chunk),
                Err(e) => {
                    let silence = if e.is_timeout() { "silence: " } else { "" };
                    self.cut = Some(format!("{silence}{e}"));
                    return None;
                }
            }
        }
    }

    /// The messages up to and including the answer to `id`, each within the patience.
    async fn until_answer(&mut self, id: i64) -> Result<Vec<Value>, String> {
        let mut got = Vec::new();
        loop {
            let event = tokio::time::timeout(patience::patience(), self.next())
                .await
                .map_err(|_| format!("silence: no event within {:?}", patience::patience()))?
                .ok_or("the stream ended")??;
            let m = event.message()?;
            let answer = m.get("method").is_none();
            let mine = m.get("id") == Some(&json!(id));
            got.push(m);
            if answer && mine {
                return Ok(got);
            }
            // Someone else's answer is recorded by the caller's checks: keep reading.
        }
    }
}

/// An HTTP+SSE connection: its stream, and the URL its messages are POSTed to.
struct SseConnection {
    events: SseReader,
    endpoint: String,
}

/// `GET /sse` and the 2024-11-05 handshake over it, or why not.
async fn sse_connect(
    tally: &Tally,
    http: &reqwest::Client,
    streams: &reqwest::Client,
    base: &str,
    client: &str,
) -> Result<SseConnection, String> {
    Tally::add(&tally.messages, 1);
    let resp = match streams
        .get(format!("{base}/sse"))
        .header("accept", "text/event-stream")
        .send()
        .await
    {
        Ok(r) if r.status().as_u16() == 200 => r,
        other => {
            return Err(format!(
                "{client}: GET /sse: {:?}",
                other.map(|r| r.status())
            ))
        }
    };
    let mut events = SseReader::new(resp);
    let endpoint = match tokio::time::timeout(patience::patience(), events.next()).await {
        Ok(Some(Ok(e))) if e.kind == "endpoint" => format!("{base}{}", e.data),
        other => return Err(format!("{client}: no endpoint: {other:?}")),
    };
    Tally::add(&tally.messages, 2);
    let sent = sse_send(http, &endpoint, initialize(client, "2024-11-05")).await;
    if sent != Some(202) {
        return Err(format!("{client}: initialize over /sse: {sent:?}"));
    }
    if let Err(e) = events.until_answer(0).await {
        return Err(format!("{client}: initialize over /sse: {e}"));
    }
    let initialized: Value = serde_json::from_str(INITIALIZED).unwrap_or_default();
    sse_send(http, &endpoint, initialized).await;
    Ok(SseConnection { events, endpoint })
}

/// [`sse_connect`] again after a stream was cut, as a client would: retried (the server
/// may answer 503 for a moment) within the patience.
async fn sse_reconnect(
    tally: &Tally,
    http: &reqwest::Client,
    streams: &reqwest::Client,
    base: &str,
    client: &str,
) -> Result<SseConnection, String> {
    let started = Instant::now();
    loop {
        match sse_connect(tally, http, streams, base, client).await {
            Ok(conn) => return Ok(conn),
            Err(e) if started.elapsed() > patience::patience() => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// POSTs one message to an HTTP+SSE endpoint: its status, if it got one (after the wait a
/// 503's `Retry-After` asks for, as in [`post`]).
async fn sse_send(http: &reqwest::Client, endpoint: &str, body: Value) -> Option<u16> {
    let resp = http
        .post(endpoint)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .ok()?;
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|_| status == 503);
    if let Some(seconds) = retry_after {
        tokio::time::sleep(Duration::from_secs(seconds.min(2))).await;
    }
    Some(status)
}

/// A 2024-11-05 client of the HTTP+SSE transport (`GET /sse`, `POST /messages`). If its
/// stream is cut (its replica died: an HTTP+SSE session cannot be resumed), the call it
/// waited for fails and it connects again, as a client would, for the rest of its calls.
async fn sse_client(setup: Setup) {
    let Setup {
        tally,
        http,
        streams,
        base,
        n,
        calls,
    } = setup;
    let client = format!("c{n}");
    let mut nonces = Nonces(0x6a09_e667_f3bc_c909 ^ (n as u64 + 1));
    let mut conn = match sse_connect(&tally, &http, &streams, &base, &client).await {
        Ok(conn) => conn,
        Err(e) => return tally.problem(&tally.errors, e),
    };
    Tally::add(&tally.started, 1);
    // The calls whose POST failed on this stream: the message may still have reached the
    // session (the replica that took it died before saying 202), so its answer and
    // notifications may come later on the stream — late, but its own.
    let mut failed: Vec<(i64, String, String)> = Vec::new();
    for k in 0..calls {
        let id = 10 + k as i64;
        let nonce = nonces.next();
        let token = format!("{client}-{k}");
        let token = (k % 2 == 1).then_some(token.as_str());
        Tally::add(&tally.messages, 1);
        let sent = sse_send(&http, &conn.endpoint, call(id, &nonce, token, None)).await;
        let refused = sent.filter(|status| *status != 202);
        let outcome = match sent {
            Some(202) => conn.events.until_answer(id).await,
            other => Err(format!("POST /messages: {other:?}")),
        };
        let messages = match outcome {
            Ok(mut messages) => {
                let before = messages.len();
                messages.retain(|m| !failed.iter().any(|f| belongs_to(m, f)));
                Tally::add(&tally.late, (before - messages.len()) as u64);
                messages
            }
            Err(e) => {
                tally.call_failed(format!("{client}: call {id}: {e}"), refused);
                failed.push((id, nonce.clone(), format!("{client}-{k}")));
                // Its stream cut, or its session ended (404): a new connection.
                if e.contains("the stream ended") || refused == Some(404) {
                    failed.clear();
                    match sse_reconnect(&tally, &http, &streams, &base, &client).await {
                        Ok(again) => {
                            Tally::add(&tally.reopened, 1);
                            conn = again;
                        }
                        Err(e) => return tally.problem(&tally.errors, e),
                    }
                }
                continue;
            }
        };
        check_call(
            &tally,
            &Expect {
                id,
                nonce: &nonce,
                client: &client,
                version: "2024-11-05",
                token,
                last: k + 1 == calls,
            },
            &messages,
        );
    }
}

/// Whether message `m` is the answer or a notification of the call `(id, nonce, token)`.
fn belongs_to(m: &Value, (id, nonce, token): &(i64, String, String)) -> bool {
    match m.get("method") {
        None => m.get("id") == Some(&json!(id)),
        Some(_) => {
            m["params"]["progressToken"] == token.as_str()
                || m["params"]["data"]["nonce"] == nonce.as_str()
        }
    }
}

/// Which kind of client number `n` is.
fn kind_of(n: usize) -> &'static str {
    match n % 10 {
        0 | 5 => "stateless",
        1 => "sse",
        3 => "streamable+get",
        _ => "streamable",
    }
}

/// `clients` concurrent HTTP clients, `calls` calls each, against a server on
/// 127.0.0.1:0 in this process.
pub async fn http_load(clients: usize, calls: usize) -> Report {
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            let tally = Tally::default();
            tally.problem(&tally.errors, format!("bind: {e}"));
            return tally.report("http", clients, Duration::ZERO);
        }
    };
    let base = format!(
        "http://{}",
        listener
            .local_addr()
            .map_or_else(|e| e.to_string(), |a| a.to_string())
    );
    let mut config = HttpConfig::default();
    config.max_sessions = clients + 16;
    let server = tokio::spawn(mcp_runtime_http::serve_listener(
        load_server(Limits::default()),
        listener,
        config,
    ));
    let tally = Arc::new(Tally::default());
    let fds_before = open_fds();
    let fds = watch_fds(&tally);
    let elapsed = drive(&tally, &base, clients, calls).await;
    fds.abort();
    let mut fds_after = open_fds();
    for _ in 0..50 {
        if fds_after <= fds_before + 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        fds_after = open_fds();
    }
    server.abort();
    let mut report = tally.report("http", clients, elapsed);
    report.fds_after = Some((fds_before, fds_after));
    report
}

/// `clients` concurrent HTTP clients of the mix [`kind_of`] makes, `calls` calls each,
/// against the server at `base` (`http://HOST:PORT`: one server, or a front before
/// replicas), counted in `tally`; the time they took. The clients' connections are
/// closed when it returns.
pub async fn drive(tally: &Arc<Tally>, base: &str, clients: usize, calls: usize) -> Duration {
    let http = reqwest::Client::builder()
        .timeout(patience::patience())
        .tcp_nodelay(true)
        .build()
        .unwrap_or_default();
    // Streams stay open for the whole run: no overall timeout on them (each event of an
    // HTTP+SSE answer is awaited within the patience).
    let streams = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap_or_default();
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|n| {
            let setup = Setup {
                tally: Arc::clone(tally),
                http: http.clone(),
                streams: streams.clone(),
                base: base.to_owned(),
                n,
                calls,
            };
            let version = LEGACY[(n / 10) % LEGACY.len()];
            match kind_of(n) {
                "stateless" => tokio::spawn(stateless_client(setup)),
                "sse" => tokio::spawn(sse_client(setup)),
                "streamable+get" => tokio::spawn(streamable_client(setup, version, true)),
                _ => tokio::spawn(streamable_client(setup, version, false)),
            }
        })
        .collect();
    for task in tasks {
        if let Err(e) = task.await {
            tally.problem(&tally.errors, format!("client task: {e}"));
        }
    }
    start.elapsed()
}

// ───────────────────────────── stdio ─────────────────────────────

/// `calls` pipelined calls on one stdio connection (`transport::stdio::serve` over an
/// in-memory pipe), at most `window` unanswered at any time. Every tenth call asks for a
/// progress notification and a log message, which must arrive while that call is
/// outstanding.
pub async fn stdio_load(calls: u64, window: usize) -> Report {
    let tally = Arc::new(Tally::default());
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server_end);
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve(
        load_server(Limits::default()),
        server_in,
        server_out,
    ));
    let (client_in, client_out) = tokio::io::split(client);
    let mut lines = BufReader::with_capacity(1 << 20, client_in).lines();
    let mut writer = BufWriter::with_capacity(1 << 20, client_out);
    let version = "2025-06-18";
    let handshake = async {
        let mut init = serde_json::to_vec(&initialize("stdio", version)).ok()?;
        init.push(b'\n');
        init.extend_from_slice(INITIALIZED.as_bytes());
        init.push(b'\n');
        writer.write_all(&init).await.ok()?;
        writer.flush().await.ok()?;
        let answer: Value = serde_json::from_str(&lines.next_line().await.ok()??).ok()?;
        answer.get("result").map(|_| ())
    };
    if handshake.await.is_none() {
        tally.problem(&tally.errors, "stdio handshake failed".into());
        return tally.report("stdio", 1, Duration::ZERO);
    }
    // 0: not sent, 1: sent and outstanding, 2: answered.
    let state: Arc<Vec<AtomicU8>> = Arc::new((0..calls).map(|_| AtomicU8::new(0)).collect());
    let window_permits = Arc::new(tokio::sync::Semaphore::new(window));
    let start = Instant::now();
    let writing = {
        let (state, permits) = (Arc::clone(&state), Arc::clone(&window_permits));
        tokio::spawn(async move {
            let mut line = Vec::with_capacity(256);
            for i in 0..calls {
                let permit = match permits.try_acquire() {
                    Ok(p) => p,
                    Err(_) => {
                        // The window is full: let the server see what is buffered.
                        writer.flush().await?;
                        permits
                            .acquire()
                            .await
                            .map_err(|_| std::io::Error::other("closed"))?
                    }
                };
                permit.forget();
                if let Some(s) = state.get(i as usize) {
                    s.store(1, Ordering::SeqCst);
                }
                line.clear();
                let notify = i % 10 == 0;
                line.extend_from_slice(format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"nonce":"n{i}","notify":{notify}}}{}}}}}"#,
                    if notify { format!(r#","_meta":{{"progressToken":{i}}}"#) } else { String::new() }
                ).as_bytes());
                line.push(b'\n');
                writer.write_all(&line).await?;
            }
            writer.flush().await?;
            Ok::<_, std::io::Error>(writer)
        })
    };
    let outstanding = |i: &Value| -> bool {
        i.as_u64()
            .and_then(|i| state.get(i as usize))
            .is_some_and(|s| s.load(Ordering::SeqCst) == 1)
    };
    let mut answered = 0u64;
    while answered < calls {
        let line = match tokio::time::timeout(patience::patience(), lines.next_line()).await {
            Ok(Ok(Some(line))) => line,
            other => {
                tally.problem(&tally.errors, format!("stdio read: {other:?}"));
                break;
            }
        };
        let Ok(m) = serde_json::from_str::<Value>(&line) else {
            tally.problem(&tally.errors, format!("not JSON: {line}"));
            continue;
        };
        match m["method"].as_str() {
            Some("notifications/progress") => {
                if outstanding(&m["params"]["progressToken"]) {
                    Tally::add(&tally.notifications, 1);
                } else {
                    tally.problem(&tally.foreign, format!("progress of no call: {m}"));
                }
                continue;
            }
            Some("notifications/message") => {
                let i = m["params"]["data"]["nonce"]
                    .as_str()
                    .and_then(|n| n.strip_prefix('n'))
                    .and_then(|n| n.parse::<u64>().ok())
                    .map(Value::from)
                    .unwrap_or(Value::Null);
                if outstanding(&i) {
                    Tally::add(&tally.notifications, 1);
                } else {
                    tally.problem(&tally.foreign, format!("log of no call: {m}"));
                }
                continue;
            }
            Some(_) => {
                tally.problem(&tally.foreign, format!("unexpected: {m}"));
                continue;
            }
            None => {}
        }
        let slot = m["id"].as_u64().and_then(|i| state.get(i as usize));
        let Some(slot) = slot else {
            tally.problem(&tally.misrouted, format!("unknown id: {m}"));
            continue;
        };
        match slot.swap(2, Ordering::SeqCst) {
            1 => {}
            2 => {
                tally.problem(&tally.duplicated, format!("answered twice: {m}"));
                continue;
            }
            _ => {
                tally.problem(&tally.misrouted, format!("answer before its call: {m}"));
                continue;
            }
        }
        answered += 1;
        window_permits.add_permits(1);
        let nonce = m
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|e| (e["id"] == m["id"]).then(|| e["nonce"].clone()));
        if m.get("error").is_some() {
            tally.problem(&tally.errors, format!("{m}"));
        } else if nonce == Some(json!(format!("n{}", m["id"]))) {
            Tally::add(&tally.answered, 1);
        } else {
            tally.problem(&tally.misrouted, format!("another call's data: {m}"));
        }
    }
    let elapsed = start.elapsed();
    Tally::add(&tally.calls, calls);
    Tally::add(&tally.messages, calls + 2);
    Tally::add(&tally.notifications_expected, 2 * calls.div_ceil(10));
    let never = state
        .iter()
        .filter(|s| s.load(Ordering::SeqCst) != 2)
        .count() as u64;
    if never > 0 {
        tally.problem(&tally.lost, format!("{never} calls never answered"));
        Tally::add(&tally.lost, never - 1);
    }
    // End of input: the server finishes and returns.
    if let Ok(Ok(mut writer)) = writing.await {
        let _ = writer.shutdown().await;
    }
    drop(lines);
    match tokio::time::timeout(patience::patience(), serving).await {
        Ok(Ok(Ok(()))) => {}
        other => tally.problem(&tally.errors, format!("serve ended with {other:?}")),
    }
    tally.report("stdio", 1, elapsed)
}

// ───────────────────────────── main ─────────────────────────────

#[allow(dead_code)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: u64| -> u64 {
        args.get(i)
            .map(|a| a.replace('_', "").parse().unwrap_or(default))
            .unwrap_or(default)
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("runtime: {e}");
            std::process::exit(2);
        }
    };
    let report = match args.first().map(String::as_str) {
        Some("http") => {
            let clients = num(1, 1000) as usize;
            let calls = num(2, 100) as usize;
            // Each client holds a connection or two, and the server the other ends.
            let needed = clients as u64 * 5 + 64;
            if let Some(limit) = open_files_limit().filter(|l| *l < needed) {
                eprintln!(
                    "open-files limit {limit} < {needed}: raise it first (ulimit -n {needed})"
                );
                std::process::exit(2);
            }
            runtime.block_on(http_load(clients, calls))
        }
        Some("stdio") => {
            let calls = num(1, 1_000_000);
            let window = num(2, 256) as usize;
            runtime.block_on(stdio_load(calls, window))
        }
        _ => {
            eprintln!("usage: load http [CLIENTS [CALLS]] | load stdio [CALLS [WINDOW]]");
            std::process::exit(2);
        }
    };
    println!("{report}");
    std::process::exit(if report.clean() { 0 } else { 1 });
}
