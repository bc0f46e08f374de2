//! The runtime's promises under abuse (RELIABILITY.md lists each with its test): no lost or
//! misrouted answers under load (a scaled-down run of `examples/load.rs`), faults
//! (disconnects, cancellation, panics, hung handlers, stalled readers, SIGTERM), and
//! hostile input (oversized, deeply nested, huge, invalid UTF-8, reused ids, forged
//! session ids, disabled revisions, DNS rebinding), and what the runtime logs.

mod kit;

// The load example, an example too, includes the kit's frames.rs and patience.rs itself.
#[path = "../examples/load.rs"]
#[allow(dead_code, unreachable_pub, clippy::duplicate_mod)]
mod load;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kit::http::{serve, Http, ToBody};
use kit::process::{sigterm, HttpServer};
use kit::stdio::Stdio;
use kit::{cancel, code, eventually, modern_meta};
use mcp_runtime::model::{Implementation, ResourceContents, ResourceTemplate, Tool, ToolResult};
use mcp_runtime::{Limits, ProtocolVersion, Server, ServerEvent, VersionSet};
use mcp_runtime_http::HttpConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};

// ───────────────────────────── 1. load ─────────────────────────────

/// `cargo run --release -p mcp-interop --example load -- http 1000 100`, scaled down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_load_loses_and_misroutes_nothing() {
    let report = load::http_load(100, 20).await;
    println!("{report}");
    assert!(report.clean(), "{report}");
    assert_eq!(report.calls, 2000);
}

/// `cargo run --release -p mcp-interop --example load -- stdio 1000000 256`, scaled down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_pipeline_answers_every_request_once() {
    let report = load::stdio_load(20_000, 256).await;
    println!("{report}");
    assert!(report.clean(), "{report}");
    assert_eq!(report.answered, 20_000);
}

// ───────────────────────────── test server ─────────────────────────────

/// What the fault server's handlers report.
#[derive(Clone, Default)]
struct Probe {
    /// `hang` handlers started.
    started: Arc<AtomicUsize>,
    /// `hang` handlers dropped (cancelled, timed out, or the server closed).
    dropped: Arc<AtomicUsize>,
    /// Messages `flood` has sent so far (its `ctx.log` calls that returned).
    flooded: Arc<AtomicUsize>,
    /// `flood` finished.
    flood_done: Arc<AtomicBool>,
}

/// Counts a handler's drop.
struct DropFlag(Arc<AtomicUsize>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name).input_schema(json!({"type": "object"}))
}

/// `hang` never finishes and ignores cancellation (only dropping it ends it); `flood`
/// sends `count` log messages of `size` bytes, then answers; `panics`; `echo`; a resource
/// template `r://{id}` to subscribe to.
fn fault_server(limits: Limits, versions: VersionSet) -> (Server, Probe) {
    let probe = Probe::default();
    let (p1, p2) = (probe.clone(), probe.clone());
    let server = Server::builder(Implementation::new("faults", "1.0.0"))
        .limits(limits)
        .versions(versions)
        .tool(tool("hang"), move |_, _| {
            let p = p1.clone();
            async move {
                p.started.fetch_add(1, Ordering::SeqCst);
                let _flag = DropFlag(Arc::clone(&p.dropped));
                std::future::pending::<()>().await;
                Ok(ToolResult::text("never"))
            }
        })
        .tool(tool("flood"), move |args, ctx| {
            let p = p2.clone();
            async move {
                let count = args.get("count").and_then(Value::as_u64).unwrap_or(0);
                let pad =
                    "x".repeat(args.get("size").and_then(Value::as_u64).unwrap_or(0) as usize);
                for i in 0..count {
                    ctx.log(
                        mcp_runtime::model::LogLevel::Info,
                        None,
                        json!({"i": i, "pad": pad}),
                    )
                    .await;
                    p.flooded.fetch_add(1, Ordering::SeqCst);
                }
                p.flood_done.store(true, Ordering::SeqCst);
                Ok(ToolResult::text("flooded"))
            }
        })
        .tool(tool("panics"), |_, _| async move {
            if true {
                panic!("handler bug");
            }
            Ok(ToolResult::text("unreachable"))
        })
        .tool(tool("echo"), |args, _| async move {
            Ok(ToolResult::text(Value::Object(args).to_string()))
        })
        .resource_template(
            ResourceTemplate::new("r://{id}", "r"),
            |uri, _, _| async move { Ok(vec![ResourceContents::text(uri, "text/plain", "r")]) },
        )
        .build();
    (server, probe)
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    kit::request(id, method, params)
}

/// Status and messages of a POST to `/mcp`.
async fn post(
    http: &Http,
    headers: &[(&str, &str)],
    body: impl ToBody,
) -> (StatusCode, Vec<Value>) {
    let r = http.post(headers, body).await;
    (r.status, r.messages())
}

// ───────────────────────────── 2. faults ─────────────────────────────

/// The POST-stream case is `http.rs` `a_dropped_sse_stream_is_resumed_with_last_event_id_
/// and_loses_nothing`; this is the session's GET stream, with events emitted while the
/// client is away.
#[tokio::test]
async fn a_get_stream_resumed_with_last_event_id_loses_no_event() {
    let (server, _) = fault_server(Limits::default(), VersionSet::ALL);
    let http = serve(server.clone(), HttpConfig::default()).await;
    let sid = http.session("2025-11-25", json!({})).await;
    let mut events = http.get_stream(&sid, None).await;
    let (_, subscribed) = post(
        &http,
        &[("mcp-session-id", &sid)],
        rpc(1, "resources/subscribe", json!({"uri": "r://a"})).to_string(),
    )
    .await;
    assert!(subscribed[0]["result"].is_object(), "{subscribed:?}");
    for _ in 0..5 {
        server.notify(ServerEvent::ResourceUpdated("r://a".into()));
    }
    server.notify(ServerEvent::ToolsChanged);
    // Read the first three, then lose the connection.
    let mut last = String::new();
    for _ in 0..3 {
        let (id, m) = events.next_message().await;
        assert_eq!(m["method"], "notifications/resources/updated");
        last = id.expect("events carry ids");
    }
    drop(events);
    // While away: more events.
    for _ in 0..20 {
        server.notify(ServerEvent::ResourceUpdated("r://a".into()));
        tokio::task::yield_now().await;
    }
    // The end marker: a list this server declares (it has no prompts, and a list it does
    // not declare is never announced).
    server.notify(ServerEvent::ResourcesChanged);
    let mut resumed = http.get_stream(&sid, Some(&last)).await;
    let mut got = Vec::new();
    while got.last().map(|m: &Value| m["method"].clone())
        != Some(json!("notifications/resources/list_changed"))
    {
        let (_, m) = resumed.next_message().await;
        got.push(m);
    }
    let methods: Vec<&str> = got
        .iter()
        .map(|m| m["method"].as_str().unwrap_or(""))
        .collect();
    let mut expected = vec!["notifications/resources/updated"; 2];
    expected.push("notifications/tools/list_changed");
    expected.extend(vec!["notifications/resources/updated"; 20]);
    expected.push("notifications/resources/list_changed");
    assert_eq!(
        methods, expected,
        "every event after the last one seen, in order, once"
    );
}

/// A GET with `Last-Event-ID` while the session's GET stream is still open (its client
/// lost it; the server does not know yet) takes the stream over: the older connection
/// ends, each later event goes to the resumed one only, and the session still has one GET
/// stream (a new GET without `Last-Event-ID` is refused, 409, even after the older
/// connection is gone).
#[tokio::test]
async fn a_resumed_get_stream_takes_over_the_open_one() {
    let (server, _) = fault_server(Limits::default(), VersionSet::ALL);
    let http = serve(server.clone(), HttpConfig::default()).await;
    let sid = http.session("2025-11-25", json!({})).await;
    let mut older = http.get_stream(&sid, None).await;
    server.notify(ServerEvent::ToolsChanged);
    let (last, m) = older.next_message().await;
    assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
    let last = last.expect("events carry ids");
    let mut resumed = http.get_stream(&sid, Some(&last)).await;
    assert!(
        older.rest().await.is_empty(),
        "the older connection ends, carrying nothing more"
    );
    server.notify(ServerEvent::ResourcesChanged);
    let (_, m) = resumed.next_message().await;
    assert_eq!(m["method"], "notifications/resources/list_changed", "{m}");
    drop(older);
    let fresh = http
        .client()
        .get(http.url("/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .expect("GET /mcp");
    assert_eq!(
        fresh.status(),
        StatusCode::CONFLICT,
        "one GET stream per session"
    );
}

#[tokio::test]
async fn a_cancelled_handler_is_dropped_and_never_answered() {
    // stdio (behaviour.rs `cancelled_requests_are_not_answered` covers a handler that
    // watches its cancellation; `hang` ignores it and must be dropped).
    let (server, probe) = fault_server(Limits::default(), VersionSet::ALL);
    let mut p = Stdio::serve(server);
    p.open("2025-06-18", json!({})).await;
    p.send(&rpc(7, "tools/call", json!({"name": "hang"}))).await;
    eventually("handlers started: 1", || {
        probe.started.load(Ordering::SeqCst) == 1
    })
    .await;
    p.send(&cancel(7)).await;
    eventually("the cancelled handler was dropped", || {
        probe.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    // No answer to the cancelled request: the next message is the answer to a ping reusing
    // its id, and nothing comes after it.
    assert_eq!(p.request(7, "ping", json!({})).await["result"], json!({}));
    p.finish().await;

    // A legacy HTTP session: the POST that carried the call ends with 202 and no answer.
    let (server, probe) = fault_server(Limits::default(), VersionSet::ALL);
    let http = serve(server, HttpConfig::default()).await;
    let sid = http.session("2025-11-25", json!({})).await;
    let call = {
        let (http, sid) = (http.clone(), sid.clone());
        tokio::spawn(async move {
            post(
                &http,
                &[("mcp-session-id", &sid)],
                rpc(8, "tools/call", json!({"name": "hang"})),
            )
            .await
        })
    };
    eventually("handlers started: 1", || {
        probe.started.load(Ordering::SeqCst) == 1
    })
    .await;
    let (status, _) = post(&http, &[("mcp-session-id", &sid)], cancel(8)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, messages) = call.await.expect("call");
    assert_eq!(
        (status, messages.len()),
        (StatusCode::ACCEPTED, 0),
        "{messages:?}"
    );
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 1);

    // Stateless 2026-07-28: a client that goes away cancels its request, even before
    // the first byte of the answer.
    let (server, probe) = fault_server(Limits::default(), VersionSet::ALL);
    let http = serve(server, HttpConfig::default()).await;
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "hang", "_meta": modern_meta(json!({}))}});
    let gone = http
        .post_request(
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "hang"),
            ],
            body.to_string(),
        )
        .timeout(Duration::from_millis(300))
        .send()
        .await;
    assert!(gone.is_err(), "the client gave up");
    eventually(
        "the handler of a vanished stateless client was dropped",
        || probe.dropped.load(Ordering::SeqCst) == 1,
    )
    .await;
}

/// Panics: behaviour.rs `a_panicking_handler_is_answered_and_the_server_keeps_serving`
/// (stdio); here a hung handler past `Limits::request_timeout`, and both over HTTP.
#[tokio::test]
async fn hung_and_panicking_handlers_are_answered_and_the_server_keeps_serving() {
    let mut limits = Limits::default();
    limits.request_timeout = Duration::from_millis(200);
    let (server, probe) = fault_server(limits.clone(), VersionSet::ALL);
    let mut p = Stdio::serve(server);
    p.open("2025-11-25", json!({})).await;
    let start = Instant::now();
    let r = p
        .request(json!(1), "tools/call", json!({"name": "hang"}))
        .await;
    assert_eq!(code(&r), -32603, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("did not finish within 200 ms"),
        "{r}"
    );
    assert!(start.elapsed() >= Duration::from_millis(200));
    eventually("the hung handler was dropped", || {
        probe.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    assert!(p
        .request(
            json!(2),
            "tools/call",
            json!({"name": "echo", "arguments": {"a": 1}})
        )
        .await["result"]
        .is_object());

    let (server, probe) = fault_server(limits, VersionSet::ALL);
    let http = serve(server, HttpConfig::default()).await;
    let sid = http.session("2025-06-18", json!({})).await;
    let h = [("mcp-session-id", sid.as_str())];
    let (_, m) = post(
        &http,
        &h,
        rpc(1, "tools/call", json!({"name": "hang"})).to_string(),
    )
    .await;
    assert_eq!(code(&m[0]), -32603);
    let (_, m) = post(
        &http,
        &h,
        rpc(2, "tools/call", json!({"name": "panics"})).to_string(),
    )
    .await;
    assert_eq!(code(&m[0]), -32603);
    let r = http
        .post_modern(3, "tools/call", json!({"name": "hang"}))
        .await;
    assert_eq!((r.status, code(&r.messages()[0])), (StatusCode::OK, -32603));
    let (_, m) = post(
        &http,
        &h,
        rpc(4, "tools/call", json!({"name": "echo"})).to_string(),
    )
    .await;
    assert!(m[0]["result"].is_object(), "{m:?}");
    eventually("handlers dropped: 2", || {
        probe.dropped.load(Ordering::SeqCst) == 2
    })
    .await;
}

/// A session whose GET stream is never read: its events are kept up to
/// `HttpConfig::max_stored_events` (oldest dropped), the server's announcements never
/// wait for it, and another session hears everything at once.
#[tokio::test]
async fn a_stalled_get_stream_is_bounded_and_blocks_no_one() {
    const CAP: usize = 50;
    const EVENTS: usize = 5_000;
    let mut config = HttpConfig::default();
    config.max_stored_events = CAP;
    let (server, _) = fault_server(Limits::default(), VersionSet::ALL);
    let http = serve(server.clone(), config).await;
    let stalled = http.session("2025-11-25", json!({})).await;
    let reader = http.session("2025-06-18", json!({})).await;
    // The stalled client opens its stream and never reads it.
    let never_read = http.get_stream(&stalled, None).await;
    let mut events = http.get_stream(&reader, None).await;
    for sid in [&stalled, &reader] {
        let (_, m) = post(
            &http,
            &[("mcp-session-id", sid)],
            rpc(1, "resources/subscribe", json!({"uri": "r://big"})).to_string(),
        )
        .await;
        assert!(m[0]["result"].is_object());
    }
    let started = Instant::now();
    for i in 0..EVENTS {
        server.notify(ServerEvent::ResourceUpdated("r://big".into()));
        if i % 32 == 0 {
            // Let the sessions' forwarders run (a burst beyond the broadcast queue is the
            // subject of `bursts_of_changes_are_never_lost_for_a_subscriber`).
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    server.notify(ServerEvent::ToolsChanged);
    // The reading session hears every event, the last one included.
    let mut heard = 0;
    loop {
        let (_, m) = events.next_message().await;
        if m["method"] == "notifications/tools/list_changed" {
            break;
        }
        assert_eq!(m["method"], "notifications/resources/updated", "{m}");
        assert_eq!(m["params"]["uri"], "r://big", "{m}");
        heard += 1;
    }
    assert_eq!(heard, EVENTS);
    let elapsed = started.elapsed();
    // The stalled session's store holds at most CAP events: a replay from its first
    // event id returns the newest CAP, ending with the last one.
    let mut replay = http.get_stream(&stalled, Some("0-0")).await;
    let mut ids = Vec::new();
    loop {
        let (id, m) = replay.next_message().await;
        ids.push(id.expect("id"));
        if m["method"] == "notifications/tools/list_changed" {
            break;
        }
    }
    assert_eq!(ids.len(), CAP, "the store keeps {CAP} events: {ids:?}");
    assert_eq!(
        ids.last().map(String::as_str),
        Some(format!("0-{EVENTS}").as_str())
    );
    drop(never_read);
    println!("{EVENTS} events to two sessions, one stalled: {elapsed:?}");
}

/// A POST whose SSE answer is never read: the handler is not held up (its stream is
/// stored, capped), and the answer is never among the events dropped.
#[tokio::test]
async fn a_stalled_post_stream_is_bounded_and_keeps_its_answer() {
    const CAP: usize = 50;
    let mut config = HttpConfig::default();
    config.max_stored_events = CAP;
    let (server, probe) = fault_server(Limits::default(), VersionSet::ALL);
    let http = serve(server, config).await;
    let sid = http.session("2025-11-25", json!({})).await;
    let mut events = http
        .post_stream(
            &[("mcp-session-id", &sid)],
            rpc(
                5,
                "tools/call",
                json!({"name": "flood", "arguments": {"count": 20_000, "size": 1000}}),
            ),
        )
        .await;
    // Read the first event only, to learn the stream's id.
    let (first, _) = events.next_message().await;
    let first = first.expect("id");
    // 20 MB of notifications: far beyond what sockets buffer, yet the handler finishes.
    kit::eventually_or(
        || probe.flood_done.load(Ordering::SeqCst),
        || {
            format!(
                "the handler was held up by a client that does not read ({} sent)",
                probe.flooded.load(Ordering::SeqCst)
            )
        },
    )
    .await;
    drop(events);
    let mut replay = http.get_stream(&sid, Some(&first)).await;
    let got = replay.rest().await;
    assert_eq!(got.len(), CAP, "at most {CAP} events stored");
    assert_eq!(got.last().expect("answer")["id"], 5, "the answer is kept");
    assert_eq!(got[CAP - 2]["params"]["data"]["i"], 19_999);
}

/// HTTP+SSE (2024-11-05) has no resumption: a stream that is not read fills the
/// session's queue (`Limits::outbound_queue`), then that session's handlers and POSTs
/// wait; memory stays bounded, other sessions and announcements are not held up, and
/// once the client reads again everything arrives.
#[tokio::test]
async fn a_stalled_sse_connection_waits_without_growing_or_blocking_others() {
    const TOTAL: usize = 20_000;
    let mut limits = Limits::default();
    limits.outbound_queue = 16;
    let (server, probe) = fault_server(limits, VersionSet::ALL);
    let http = serve(server.clone(), HttpConfig::default()).await;
    let mut sse = http.sse().await;
    let poster = sse.poster();
    let send = |body: Value| {
        let poster = poster.clone();
        async move { poster.post(body).await }
    };
    sse.initialize("2024-11-05", json!({})).await;
    // 40 MB of log messages while the client stops reading.
    assert_eq!(
        send(rpc(
            1,
            "tools/call",
            json!({"name": "flood", "arguments": {"count": TOTAL, "size": 2000}})
        ))
        .await,
        StatusCode::ACCEPTED
    );
    // The handler runs until the socket buffers and the queue are full, then waits.
    let mut sent = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = probe.flooded.load(Ordering::SeqCst);
        if now == sent && now > 0 {
            break;
        }
        sent = now;
    }
    println!("stalled HTTP+SSE stream: the handler sent {sent} of {TOTAL} messages, then waited");
    assert!(
        !probe.flood_done.load(Ordering::SeqCst),
        "the handler waits for the reader"
    );
    assert!(
        sent < TOTAL / 2,
        "bounded by the socket buffers and the queue: {sent} sent"
    );
    // A further POST on this session waits too (backpressure), instead of queueing.
    let waiting = tokio::spawn(send(rpc(2, "tools/call", json!({"name": "echo"}))));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "the POST waits while the stream is full"
    );
    // Others are not held up: a Streamable HTTP session and announcements.
    let other = http.session("2025-06-18", json!({})).await;
    let (_, m) = post(
        &http,
        &[("mcp-session-id", &other)],
        rpc(1, "tools/call", json!({"name": "echo"})).to_string(),
    )
    .await;
    assert!(m[0]["result"].is_object());
    for _ in 0..1000 {
        server.notify(ServerEvent::ToolsChanged);
    }
    // Reading again delivers everything, in order, and the waiting POST is accepted.
    let mut next_i = 0;
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let m = sse.recv().await;
        match m["method"].as_str() {
            Some("notifications/message") => {
                assert_eq!(m["params"]["data"]["i"], next_i, "in order, none lost");
                next_i += 1;
            }
            // The announcements above (or, for those this slow reader missed, the
            // resynchronisation that replaces them).
            Some("notifications/tools/list_changed" | "notifications/resources/list_changed") => {}
            None if m.get("id").is_some() => answers.push(m["id"].clone()),
            _ => panic!("unexpected on the stream: {m}"),
        }
    }
    assert_eq!(next_i, TOTAL);
    answers.sort_by_key(|id| id.as_i64());
    assert_eq!(answers, vec![json!(1), json!(2)]);
    assert_eq!(waiting.await.expect("POST"), StatusCode::ACCEPTED);
}

/// stdio: a client that writes without reading makes the server stop reading once the
/// outbound queue is full; nothing piles up, and everything is answered when it reads.
#[tokio::test]
async fn a_stdio_client_that_does_not_read_is_not_read_either() {
    const TOTAL: usize = 100_000;
    let mut limits = Limits::default();
    limits.outbound_queue = 16;
    let (server, _) = fault_server(limits, VersionSet::ALL);
    let mut p = Stdio::serve_with_buffer(server, 16 * 1024);
    p.open("2025-06-18", json!({})).await;
    let (mut writer, mut reader) = p.split();
    let written = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&written);
    let writing = tokio::spawn(async move {
        for i in 0..TOTAL {
            writer.send(&rpc(i as i64, "ping", json!({}))).await;
            counter.fetch_add(1, Ordering::SeqCst);
        }
        writer
    });
    // Wait until the writer is stuck.
    let mut last = usize::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = written.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        last = now;
    }
    // Both pipes hold 16 KiB (some 700 lines), the server's reader 64 KiB, the queue 16
    // answers: the server took a few thousand requests, not all of them.
    println!("stdio client that does not read: the server took {last} of {TOTAL} requests, then stopped reading");
    assert!(
        last < 5_000,
        "the server kept reading: {last} requests taken"
    );
    let mut answered = 0;
    while answered < TOTAL {
        let m = reader.recv().await;
        assert_eq!(m["id"], answered as i64, "in order, once each");
        answered += 1;
    }
    writing.await.expect("writer");
}

/// The largest pipe an unprivileged process may ask for (1 MiB unless this machine lowered
/// it).
#[cfg(target_os = "linux")]
fn pipe_max_size() -> usize {
    std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20)
}

/// stdio: the server's stdout pipe holds `Limits::stdout_pipe_bytes` (256 KiB), not the
/// kernel's 64 KiB, so answers leave while the client is busy rather than in turns with
/// it: with the client not reading, what the server writes piles up in the pipe well
/// past 64 KiB.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_stdout_pipe_holds_more_than_the_kernel_s_64_kib() {
    use std::os::fd::AsFd;
    let exe = kit::process::example_named("conformance_server");
    let mut child = tokio::process::Command::new(&exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawning the example server");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let max = pipe_max_size();
    let wanted = max.min(Limits::default().stdout_pipe_bytes);
    // `tools/list` answers, a few kilobytes each, until they would overfill the pipe.
    let lists = wanted / 1024;
    let writing = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "1"}}});
        let mut lines =
            format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
        for i in 0..lists {
            lines.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/list\"}}\n"
            ));
        }
        // Blocks once the server stops reading (its queue full behind the full pipe).
        let _ = stdin.write_all(lines.as_bytes()).await;
        stdin
    });
    // A 64 KiB pipe would stop the server at 64 KiB; this one takes twice that at least
    // (a full pipe can hold less than its size: the kernel gives each write that does
    // not fit in the last page a page of its own).
    let beyond = 2 * 64 * 1024;
    let mut held = 0;
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline && held <= beyond {
        held = rustix::io::ioctl_fionread(stdout.as_fd()).expect("FIONREAD") as usize;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let size = rustix::pipe::fcntl_getpipe_size(stdout.as_fd()).expect("F_GETPIPE_SZ");
    println!("stdout pipe: {size} bytes, {held} of them written and not yet read");
    assert_eq!(size, wanted, "the pipe's size");
    assert!(
        held > beyond,
        "the server stopped writing at {held} bytes in a pipe of {size}"
    );
    writing.abort();
    drop(child);
}

/// stdio: a stdout pipe the client already made larger than `Limits::stdout_pipe_bytes`
/// is left as it is (the server only ever enlarges it).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_larger_stdout_pipe_is_not_shrunk() {
    use std::io::{BufRead, Write};
    let (read_end, write_end) = rustix::pipe::pipe().expect("a pipe");
    let max = pipe_max_size();
    let larger = rustix::pipe::fcntl_setpipe_size(&write_end, max).expect("F_SETPIPE_SZ");
    assert!(larger > Limits::default().stdout_pipe_bytes, "{larger}");
    let exe = kit::process::example_named("conformance_server");
    let mut child = std::process::Command::new(&exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::from(write_end))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawning the example server");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "pipe", "version": "1"}}});
    writeln!(stdin, "{init}").expect("written");
    // Answered: the server has set its pipes up.
    let mut answer = String::new();
    let mut reader = std::io::BufReader::new(std::fs::File::from(
        read_end.try_clone().expect("a second descriptor"),
    ));
    reader.read_line(&mut answer).expect("an answer");
    assert!(answer.contains("\"id\":1"), "{answer}");
    let size = rustix::pipe::fcntl_getpipe_size(&read_end).expect("F_GETPIPE_SZ");
    assert_eq!(size, larger, "the client's larger pipe was changed");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

/// `Limits::max_in_flight`: beyond it, requests are refused at once and nothing runs.
#[tokio::test]
async fn requests_beyond_max_in_flight_are_refused() {
    let mut limits = Limits::default();
    limits.max_in_flight = 8;
    let (server, probe) = fault_server(limits, VersionSet::ALL);
    let mut p = Stdio::serve(server);
    p.open("2025-06-18", json!({})).await;
    for i in 0..8 {
        p.send(&rpc(i, "tools/call", json!({"name": "hang"}))).await;
    }
    eventually("handlers started: 8", || {
        probe.started.load(Ordering::SeqCst) == 8
    })
    .await;
    let r = p
        .request(json!(100), "tools/call", json!({"name": "hang"}))
        .await;
    assert_eq!(code(&r), -32603);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("too many requests in progress"),
        "{r}"
    );
    assert_eq!(
        probe.started.load(Ordering::SeqCst),
        8,
        "the refused request did not run"
    );
    p.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 0}}),
    )
    .await;
    eventually("handlers dropped: 1", || {
        probe.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(
        p.request(json!(101), "ping", json!({})).await["result"],
        json!({})
    );
}

/// A burst of changes larger than the server's announcement queue: every subscriber still
/// hears of its resource (missed announcements are replaced by a resynchronisation).
#[tokio::test]
async fn bursts_of_changes_are_never_lost_for_a_subscriber() {
    let (server, _) = fault_server(Limits::default(), VersionSet::ALL);
    let mut p = Stdio::serve(server.clone());
    p.open("2025-06-18", json!({})).await;
    let r = p
        .request(json!(1), "resources/subscribe", json!({"uri": "r://mine"}))
        .await;
    assert!(r["result"].is_object());
    // Synchronous: no forwarder runs in between.
    server.notify(ServerEvent::ResourceUpdated("r://mine".into()));
    for i in 0..1000 {
        server.notify(ServerEvent::ResourceUpdated(format!("r://other/{i}")));
    }
    // The update of the subscribed resource is not lost: it arrives, after nothing but the
    // resynchronisation that replaces missed announcements (the lists may have changed).
    loop {
        let m = p.recv().await;
        match m["method"].as_str() {
            Some("notifications/resources/updated") => {
                assert_eq!(m["params"]["uri"], "r://mine", "only subscribed resources");
                break;
            }
            Some("notifications/tools/list_changed" | "notifications/resources/list_changed") => {}
            _ => panic!("only subscribed resources and a resynchronisation: {m}"),
        }
    }
    // Announcements reach a session in order: a further update of the subscribed resource
    // is what arrives next, so no update of another resource was forwarded.
    server.notify(ServerEvent::ResourceUpdated("r://mine".into()));
    let m = p.recv().await;
    assert_eq!(
        (m["method"].as_str(), m["params"]["uri"].as_str()),
        (Some("notifications/resources/updated"), Some("r://mine")),
        "only subscribed resources: {m}"
    );
    p.finish().await;
}

// ───────────────────────────── graceful shutdown ─────────────────────────────

/// The example's grace period (`Limits::shutdown_grace`, default).
const GRACE: Duration = Duration::from_secs(5);

/// SIGTERM over stdio: input is no longer read; a call in progress finishes and is
/// answered; one still waiting at the end of the grace period is cancelled; exit 0.
#[tokio::test]
async fn sigterm_over_stdio_finishes_or_cancels_work_and_exits_0() {
    let mut p = Stdio::spawn_example("conformance_server");
    p.open("2025-06-18", json!({"sampling": {}})).await;
    // A call that asks the client's model (and is never answered), then one that takes
    // ~100 ms.
    p.send(&rpc(
        2,
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}),
    ))
    .await;
    let ask = p.recv().await;
    assert_eq!(
        ask["method"], "sampling/createMessage",
        "the server asks: {ask}"
    );
    p.send(&rpc(
        3,
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "p"}}),
    ))
    .await;
    let progress = p.recv().await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    let start = Instant::now();
    sigterm(p.pid().expect("a child process"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    p.send(&rpc(4, "ping", json!({}))).await;
    // Its input still open, the server ends by itself: everything it wrote until it
    // closed its output, then a successful exit.
    let after = p.until_closed().await;
    let elapsed = start.elapsed();
    let answered: Vec<&Value> = after
        .iter()
        .filter(|m| m.get("method").is_none())
        .map(|m| &m["id"])
        .collect();
    assert_eq!(
        answered,
        vec![&json!(3)],
        "the short call finished; the asking one was cancelled; the ping was not read: {after:?}"
    );
    assert!(
        elapsed >= GRACE - Duration::from_millis(500) && elapsed < GRACE + Duration::from_secs(2),
        "{elapsed:?}"
    );
}

/// SIGTERM over HTTP: no new connections or sessions; a call in progress is answered, one
/// still waiting at the end of the grace period is cancelled, open streams end; exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_over_http_finishes_or_cancels_work_and_exits_0() {
    let mut server = HttpServer::start_example("conformance_server");
    let http = Http::new(&server.url(""));
    let sid = http.session("2025-06-18", json!({"sampling": {}})).await;
    let mut get = http.get_stream(&sid, None).await;
    let h = [("mcp-session-id", sid.as_str())];
    let mut asking = http
        .post_stream(
            &h,
            rpc(
                2,
                "tools/call",
                json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}),
            ),
        )
        .await;
    let (_, ask) = asking.next_message().await;
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    let mut short = http
        .post_stream(
            &h,
            rpc(
                3,
                "tools/call",
                json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "p"}}),
            ),
        )
        .await;
    let (_, progress) = short.next_message().await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    let start = Instant::now();
    sigterm(server.pid());
    // The short call completes with its answer.
    let rest = short.rest().await;
    let last = rest.last().cloned().unwrap_or(Value::Null);
    assert_eq!(last["id"], 3, "answered during the grace period: {rest:?}");
    // No new connections (or, on one still open, no new sessions): a fresh client.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let fresh = Http::new(http.base())
        .client()
        .post(http.url("/mcp"))
        .header("content-type", "application/json")
        .body(rpc(1, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).to_string())
        .send()
        .await;
    assert!(
        fresh
            .as_ref()
            .map_or(true, |r| r.status() == StatusCode::SERVICE_UNAVAILABLE),
        "{fresh:?}"
    );
    // The asking call ends without an answer at the end of the grace period; the GET
    // stream ends too, having carried nothing.
    let tail = asking.rest().await;
    assert!(
        tail.iter().all(|m| m.get("method").is_some()),
        "no answer: {tail:?}"
    );
    let on_get = get.rest().await;
    assert!(on_get.is_empty(), "the GET stream carried {on_get:?}");
    let status = tokio::task::spawn_blocking(move || server.wait_exit())
        .await
        .expect("wait");
    let elapsed = start.elapsed();
    assert!(status.success(), "exit status {status}");
    assert!(
        elapsed >= GRACE - Duration::from_millis(500) && elapsed < GRACE + Duration::from_secs(2),
        "{elapsed:?}"
    );
}

/// The end of input drains the connection: an open `subscriptions/listen` (a request that
/// never ends on its own) ends at once with its result, instead of holding the end for the
/// whole grace period and being cancelled without an answer.
#[tokio::test]
async fn the_end_of_stdio_input_ends_an_open_listen_with_its_result() {
    let mut limits = Limits::default();
    // Far beyond the kit's patience: waiting for it fails the test.
    limits.shutdown_grace = Duration::from_secs(600);
    let (server, _) = fault_server(limits, VersionSet::ALL);
    let mut p = Stdio::serve(server);
    let params =
        json!({"_meta": modern_meta(json!({})), "notifications": {"toolsListChanged": true}});
    p.send(&rpc(7, "subscriptions/listen", params)).await;
    let ack = p.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let after = p.close().await;
    assert_eq!(after.len(), 1, "only the listen's result: {after:?}");
    assert_eq!(after[0]["id"], 7, "{after:?}");
    assert_eq!(after[0]["result"]["resultType"], "complete", "{after:?}");
}

/// SIGTERM over HTTP with a stateless `subscriptions/listen` open: its stream ends with the
/// listen's result and the server exits at once, not at the end of the grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_over_http_ends_an_open_listen_with_its_result() {
    let mut server = HttpServer::start_example("conformance_server");
    let http = Http::new(&server.url(""));
    let params =
        json!({"_meta": modern_meta(json!({})), "notifications": {"toolsListChanged": true}});
    let headers = [
        ("mcp-protocol-version", kit::MODERN),
        ("mcp-method", "subscriptions/listen"),
    ];
    let mut listen = http
        .post_stream(&headers, rpc(7, "subscriptions/listen", params))
        .await;
    let (_, ack) = listen.next_message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let start = Instant::now();
    sigterm(server.pid());
    let rest = listen.rest().await;
    let last = rest.last().cloned().unwrap_or(Value::Null);
    assert_eq!(
        last["id"], 7,
        "the listen's result ends its stream: {rest:?}"
    );
    assert_eq!(last["result"]["resultType"], "complete", "{rest:?}");
    let status = tokio::task::spawn_blocking(move || server.wait_exit())
        .await
        .expect("wait");
    assert!(status.success(), "exit status {status}");
    // Draining did not wait for the listen: the grace period is for work that ends.
    let elapsed = start.elapsed();
    assert!(elapsed < GRACE - Duration::from_secs(2), "{elapsed:?}");
}

// ───────────────────────────── 3. hostile input ─────────────────────────────

// Oversized: a stdio line over `Limits::max_message_bytes` is consumed and answered
// -32600 (behaviour.rs `malformed_input_gets_errors_and_the_server_still_answers`); an HTTP
// body over it is 413 on `/mcp` (http.rs `dns_rebinding_and_size_limits`) and, below,
// on `/messages`.
#[tokio::test]
async fn an_oversized_body_to_messages_is_413() {
    let http = serve(kit::conformance_server(), HttpConfig::default()).await;
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(5 << 20)
    );
    let r = http
        .client()
        .post(http.url("/messages?sessionId=whatever"))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .expect("POST");
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn deeply_nested_json_is_a_parse_error_not_a_stack_overflow() {
    let deep = [
        "[".repeat(100_000),
        r#"{"a":"#.repeat(100_000),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{}}}}}}}"#,
            "[".repeat(100_000)
        ),
    ];
    let (server, _) = fault_server(Limits::default(), VersionSet::ALL);
    let mut p = Stdio::serve(server.clone());
    p.open("2025-03-26", json!({})).await;
    for bad in &deep {
        p.send_raw(bad).await;
        let r = p.recv().await;
        assert_eq!((code(&r), r["id"].clone()), (-32700, Value::Null), "{r}");
    }
    // Nesting within serde_json's limit (128) is served.
    let ok = format!(r#"{{"x":{}0{}}}"#, "[".repeat(100), "]".repeat(100));
    let args: Value = serde_json::from_str(&ok).expect("within the limit");
    let r = p
        .request(
            json!(2),
            "tools/call",
            json!({"name": "echo", "arguments": args}),
        )
        .await;
    assert!(r["result"].is_object(), "{r}");

    let http = serve(server, HttpConfig::default()).await;
    for bad in &deep {
        let (status, m) = post(&http, &[], bad.clone()).await;
        assert_eq!((status, code(&m[0])), (StatusCode::BAD_REQUEST, -32700));
        let (status, m) = post(
            &http,
            &[("mcp-protocol-version", "2026-07-28")],
            bad.clone(),
        )
        .await;
        assert_eq!((status, code(&m[0])), (StatusCode::BAD_REQUEST, -32700));
    }
    let sid = http.session("2025-03-26", json!({})).await;
    for bad in &deep {
        let (status, m) = post(&http, &[("mcp-session-id", &sid)], bad.clone()).await;
        assert_eq!((status, code(&m[0])), (StatusCode::OK, -32700));
    }
}

#[tokio::test]
async fn huge_arrays_within_the_size_limit_are_served_in_bounded_time() {
    let (server, _) = fault_server(Limits::default(), VersionSet::ALL);
    let mut p = Stdio::serve(server.clone());
    p.open("2025-03-26", json!({})).await;
    // A 2 MB argument: one million numbers.
    let items = format!("[{}0]", "0,".repeat(999_999));
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"items":{items}}}}}}}"#
    );
    assert!(call.len() < Limits::default().max_message_bytes);
    let start = Instant::now();
    p.send_raw(&call).await;
    let r = p.answer(&json!(1)).await;
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.len() > 2_000_000));
    // A batch of 50,000 requests (2025-03-26): one array, every id answered once; those
    // beyond `Limits::max_in_flight` are refused rather than run.
    let batch: Vec<Value> = (0..50_000).map(|i| rpc(i, "ping", json!({}))).collect();
    let batch = serde_json::to_string(&batch).expect("encode");
    assert!(batch.len() < Limits::default().max_message_bytes);
    p.send_raw(&batch).await;
    let answers = p.recv().await;
    let answers = answers.as_array().expect("one array");
    let mut ids: Vec<i64> = answers
        .iter()
        .map(|a| a["id"].as_i64().expect("id"))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..50_000).collect::<Vec<_>>());
    let served = answers.iter().filter(|a| a["result"].is_object()).count();
    assert!(served >= Limits::default().max_in_flight, "{served}");
    assert!(answers
        .iter()
        .all(|a| a["result"].is_object() || code(a) == -32603));
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");
    assert_eq!(
        p.request(json!("after"), "ping", json!({})).await["result"],
        json!({})
    );
    // The same argument over HTTP.
    let http = serve(server, HttpConfig::default()).await;
    let sid = http.session("2025-06-18", json!({})).await;
    let (status, m) = post(&http, &[("mcp-session-id", &sid)], call).await;
    assert_eq!(status, StatusCode::OK);
    assert!(m[0]["result"].is_object());
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let bad: [&[u8]; 3] = [
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xc3\x28ng\"}",
        br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
    ];
    let (server, _) = fault_server(Limits::default(), VersionSet::ALL);
    let mut p = Stdio::serve(server.clone());
    p.open("2025-06-18", json!({})).await;
    for b in bad {
        p.send_raw(b).await;
        let r = p.recv().await;
        assert_eq!((code(&r), r["id"].clone()), (-32700, Value::Null), "{r}");
    }
    assert_eq!(
        p.request(json!(2), "ping", json!({})).await["result"],
        json!({})
    );
    let http = serve(server, HttpConfig::default()).await;
    let sid = http.session("2025-06-18", json!({})).await;
    for b in bad {
        let (status, m) = post(&http, &[], b.to_vec()).await;
        assert_eq!((status, code(&m[0])), (StatusCode::BAD_REQUEST, -32700));
        let (status, m) = post(&http, &[("mcp-session-id", &sid)], b.to_vec()).await;
        assert_eq!((status, code(&m[0])), (StatusCode::OK, -32700));
    }
}

/// session.rs `dispatch`: an id in use by a request in progress is -32600; the request
/// that holds it is unaffected, and the id is free again once it is done.
#[tokio::test]
async fn an_id_reused_while_in_flight_is_refused() {
    let (server, probe) = fault_server(Limits::default(), VersionSet::ALL);
    let mut p = Stdio::serve(server.clone());
    p.open("2025-06-18", json!({})).await;
    p.send(&rpc(7, "tools/call", json!({"name": "hang"}))).await;
    eventually("handlers started: 1", || {
        probe.started.load(Ordering::SeqCst) == 1
    })
    .await;
    let r = p.request(json!(7), "ping", json!({})).await;
    assert_eq!((code(&r), r["id"].clone()), (-32600, json!(7)));
    assert!(r["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("already in use"));
    assert_eq!(
        probe.dropped.load(Ordering::SeqCst),
        0,
        "the first request still runs"
    );
    p.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    )
    .await;
    eventually("handlers dropped: 1", || {
        probe.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(
        p.request(json!(7), "ping", json!({})).await["result"],
        json!({})
    );
    // Same over an HTTP session.
    let http = serve(server, HttpConfig::default()).await;
    let sid = http.session("2025-06-18", json!({})).await;
    let pending = {
        let (http, sid) = (http.clone(), sid.clone());
        tokio::spawn(async move {
            post(
                &http,
                &[("mcp-session-id", &sid)],
                rpc(7, "tools/call", json!({"name": "hang"})).to_string(),
            )
            .await
        })
    };
    eventually("handlers started: 2", || {
        probe.started.load(Ordering::SeqCst) == 2
    })
    .await;
    let (_, m) = post(
        &http,
        &[("mcp-session-id", &sid)],
        rpc(7, "ping", json!({})).to_string(),
    )
    .await;
    assert_eq!((code(&m[0]), m[0]["id"].clone()), (-32600, json!(7)));
    assert_eq!(http.delete(&sid).await, StatusCode::OK);
    let (status, _) = pending
        .await
        .expect("the pending POST ends with its session");
    assert_eq!(status, StatusCode::ACCEPTED);
}

// Forged or replayed `requestState` (2026-07-28): asks.rs
// `modern_tampered_states_are_invalid_params` and
// `modern_states_are_bound_to_the_method_target_and_arguments`.

/// Unknown, random or other-transport session ids: 404 everywhere.
#[tokio::test]
async fn forged_and_random_session_ids_are_404() {
    let http = serve(kit::conformance_server(), HttpConfig::default()).await;
    let real = http.session("2025-11-25", json!({})).await;
    // An HTTP+SSE session's id.
    let mut sse = http.sse().await;
    let sse_id = sse.session.clone();
    let random = |salt: u64| {
        use std::hash::{BuildHasher, Hasher};
        let state = std::collections::hash_map::RandomState::new();
        let mut h = state.build_hasher();
        h.write_u64(salt);
        let a = h.finish();
        h.write_u64(a);
        format!("{a:016x}{:016x}", h.finish())
    };
    let mut forged = vec![
        random(1),
        random(2),
        format!("{}0", &real[..31]),
        real.to_uppercase(),
        "".into(),
        "../../etc".into(),
        "x".repeat(10_000),
    ];
    forged.retain(|f| *f != real);
    let ping = rpc(1, "ping", json!({})).to_string();
    for id in forged.iter().map(String::as_str).chain([sse_id.as_str()]) {
        if id.is_empty() {
            continue;
        }
        let r = http.post(&[("mcp-session-id", id)], ping.clone()).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "POST {id:.40}");
        assert_eq!(r.json()["error"]["code"], -32001);
        let r = http
            .client()
            .get(http.url("/mcp"))
            .header("mcp-session-id", id)
            .send()
            .await
            .expect("GET");
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "GET {id:.40}");
        let r = http
            .client()
            .delete(http.url("/mcp"))
            .header("mcp-session-id", id)
            .send()
            .await
            .expect("DELETE");
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "DELETE {id:.40}");
    }
    for id in forged
        .iter()
        .filter(|f| !f.is_empty() && f.len() < 100)
        .chain([&real])
    {
        let r = http
            .client()
            .post(http.url(&format!("/messages?sessionId={id}")))
            .body(ping.clone())
            .send()
            .await
            .expect("POST /messages");
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "/messages {id}");
    }
    // The real ones still work.
    let (status, _) = post(&http, &[("mcp-session-id", &real)], ping.clone()).await;
    assert_eq!(status, StatusCode::OK);
    let r = http
        .client()
        .post(http.url(&format!("/messages?sessionId={sse_id}")))
        .body(ping.clone())
        .send()
        .await
        .expect("POST /messages");
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(sse.recv().await["id"], 1);
}

/// Session ids: 128 bits from the OS CSPRNG (http.rs `new_session_id`: `getrandom`), as
/// 32 hex digits; never repeated.
#[tokio::test]
async fn session_ids_are_128_bit_hex_and_distinct() {
    let http = serve(kit::conformance_server(), HttpConfig::default()).await;
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let id = http.session("2025-06-18", json!({})).await;
        assert!(
            id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
        assert!(seen.insert(id));
    }
}

/// A revision the server does not serve, named per request (`_meta`) or by header.
/// stdio: behaviour.rs `unknown_versions_get_the_newest_legacy_and_disabled_ones_are_never_
/// chosen` and `modern_removed_methods_and_bad_meta`.
#[tokio::test]
async fn a_disabled_revision_is_refused_with_the_right_error() {
    // No modern revision: a stateless request is a legacy bad request (never -32022), so a
    // dual-era client falls back to `initialize`.
    let (server, _) = fault_server(
        Limits::default(),
        VersionSet::ALL.without(ProtocolVersion::V2026_07_28),
    );
    let http = serve(server, HttpConfig::default()).await;
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta(json!({}))}});
    let (status, m) = post(
        &http,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ],
        discover.to_string(),
    )
    .await;
    assert_eq!((status, code(&m[0])), (StatusCode::BAD_REQUEST, -32000));
    // 2025-06-18 disabled: `_meta` naming it is -32022 listing what is served; a session
    // header naming it is 400.
    let (server, _) = fault_server(
        Limits::default(),
        VersionSet::ALL.without(ProtocolVersion::V2025_06_18),
    );
    let http = serve(server, HttpConfig::default()).await;
    let mut meta = modern_meta(json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-06-18");
    let body =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}});
    let (status, m) = post(
        &http,
        &[
            ("mcp-protocol-version", "2025-06-18"),
            ("mcp-method", "tools/list"),
        ],
        body.to_string(),
    )
    .await;
    assert_eq!(
        (status, code(&m[0])),
        (StatusCode::BAD_REQUEST, -32022),
        "{m:?}"
    );
    let supported = m[0]["error"]["data"]["supported"]
        .as_array()
        .expect("supported");
    assert!(!supported.contains(&json!("2025-06-18")) && supported.contains(&json!("2026-07-28")));
    let sid = http.session("2025-11-25", json!({})).await;
    let (status, _) = post(
        &http,
        &[
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        rpc(3, "ping", json!({})).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

// Header/_meta mismatches (2026-07-28): http.rs
// `the_stateless_wire_validates_headers_in_order` and
// `mirrored_parameter_headers_must_match_the_arguments`; a session's
// MCP-Protocol-Version: http.rs `legacy_sessions_serve_and_end`.

/// DNS rebinding: every route checks Host and Origin (http.rs
/// `dns_rebinding_and_size_limits` covers POST /mcp with a plain foreign name).
#[tokio::test]
async fn dns_rebinding_is_403_on_every_route() {
    let http = serve(kit::conformance_server(), HttpConfig::default()).await;
    let sid = http.session("2025-11-25", json!({})).await;
    let bad_hosts = [
        "evil.example",
        "localhost.evil.example",
        "127.0.0.1.nip.io",
        "localhost:80@evil.example",
        "localhost:http",
        "[::1].evil.example",
    ];
    let bad_origins = [
        "http://evil.example",
        "null",
        "http://localhost.evil.example",
        "http://localhost:80@evil.example",
        "http://localhost/x",
        "ftp://localhost",
        "http://127.0.0.1:1:2",
    ];
    let client = http.client();
    let base = http.base();
    let routes = |header: &'static str, value: &str| {
        let v = value.to_owned();
        let init = rpc(1, "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).to_string();
        vec![
            client
                .post(format!("{base}/mcp"))
                .header("content-type", "application/json")
                .header(header, v.clone())
                .body(init),
            client
                .post(format!("{base}/mcp"))
                .header("mcp-session-id", &sid)
                .header(header, v.clone())
                .body(rpc(2, "ping", json!({})).to_string()),
            client
                .get(format!("{base}/mcp"))
                .header("mcp-session-id", &sid)
                .header(header, v.clone()),
            client
                .delete(format!("{base}/mcp"))
                .header("mcp-session-id", &sid)
                .header(header, v.clone()),
            client.get(format!("{base}/sse")).header(header, v.clone()),
            client
                .post(format!("{base}/messages?sessionId=x"))
                .header(header, v)
                .body("{}"),
        ]
    };
    for (header, values) in [("host", &bad_hosts[..]), ("origin", &bad_origins[..])] {
        for value in values {
            for req in routes(header, value) {
                let r = req.send().await.expect("send");
                assert_eq!(r.status(), StatusCode::FORBIDDEN, "{header}: {value}");
            }
        }
    }
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://[::1]:8443",
        "http://LOCALHOST",
    ] {
        let (status, _) = post(
            &http,
            &[("mcp-session-id", &sid), ("origin", origin)],
            rpc(3, "ping", json!({})).to_string(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{origin}");
    }
}
