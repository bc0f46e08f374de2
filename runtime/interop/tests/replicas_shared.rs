//! Issue 18, what only in-process replicas can show: two or three servers in this
//! process, each its own `Server` (its own events) with `HttpConfig::store(RedisStore)` on
//! one real `redis-server`, driven by URL in turn. `notifications/cancelled` posted to one
//! replica cancels the handler running on another; list changes and resource updates
//! announced on one replica reach the session's GET stream open on another, for the
//! subscriptions made through a third; a GET stream resumes with `Last-Event-ID` on
//! another replica (what it missed, then live); and idle expiry ends the session — its
//! GET stream too — on every replica, while a session kept busy on one replica keeps its
//! GET stream on another.
//!
//! Needs `redis-server` on the PATH (see tests/replicas.rs).

#![allow(clippy::unwrap_used)]

mod kit;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kit::http::{serve, Http};
use kit::redis::Redis;
use kit::{eventually, notification, request};
use mcp_runtime::model::{Implementation, Prompt, Resource, ResourceContents, Tool, ToolResult};
use mcp_runtime::{Server, ServerEvent, ToolError};
use mcp_runtime_http::HttpConfig;
use mcp_runtime_redis::RedisStore;
use reqwest::StatusCode;
use serde_json::{json, Value};

const WATCHED: &str = "mem://watched";

/// What the `wait` handlers of every replica saw.
#[derive(Default)]
struct Seen {
    started: AtomicBool,
    cancelled: AtomicBool,
}

/// Marks the handler's end (its future dropped).
struct Dropped(Arc<Seen>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
    }
}

/// One replica's server: `wait` (runs until cancelled, its end marked in `seen`), the resource `mem://watched`.
fn replica_server(seen: &Arc<Seen>) -> Server {
    let seen = Arc::clone(seen);
    Server::builder(Implementation::new("replica", "1"))
        .tool(Tool::new("wait", "Runs until cancelled"), move |_, ctx| {
            let seen = Arc::clone(&seen);
            async move {
                seen.started.store(true, Ordering::SeqCst);
                // A cancelled handler's future is dropped (so is this guard).
                let _guard = Dropped(seen);
                ctx.cancelled().await;
                Ok::<_, ToolError>(ToolResult::text("cancelled"))
            }
        })
        .resource(Resource::new(WATCHED, "watched"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "w")])
        })
        // Only so that prompt list changes exist: one test announces one as a marker.
        .prompt(Prompt::new("marker"), |_, _| async { "marker" })
        .build()
}

/// `n` replicas on `redis`, sessions idle for at most `idle`: their servers (to announce
/// events on) and clients.
async fn replicas(
    redis: &Redis,
    n: usize,
    idle: Duration,
    seen: &Arc<Seen>,
) -> (Vec<Server>, Vec<Http>) {
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    for _ in 0..n {
        let store = RedisStore::connect(&redis.url()).await.unwrap();
        let mut config = HttpConfig::default().store(store);
        config.session_idle_timeout = idle;
        let server = replica_server(seen);
        clients.push(serve(server.clone(), config).await);
        servers.push(server);
    }
    (servers, clients)
}

fn sid(session: &str) -> [(&'static str, &str); 1] {
    [("mcp-session-id", session)]
}

fn method(message: &Value) -> &str {
    message["method"].as_str().unwrap_or_default()
}

/// Waits until the replica behind `client` has the GET stream of `session` open: a
/// second GET there is refused (409) while it is.
async fn until_get_open(client: &Http, session: &str) {
    let start = std::time::Instant::now();
    loop {
        let second = client
            .client()
            .get(client.url("/mcp"))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .send()
            .await
            .unwrap();
        if second.status() == StatusCode::CONFLICT {
            return;
        }
        drop(second);
        assert!(start.elapsed() < kit::patience(), "GET stream not open");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_reaches_the_replica_running_the_handler() {
    let redis = Redis::start();
    let seen = Arc::new(Seen::default());
    let (_servers, r) = replicas(&redis, 2, Duration::from_secs(60), &seen).await;
    let session = r[0].session("2025-06-18", json!({})).await;
    let running = {
        let client = Http::new(r[0].base());
        let session = session.clone();
        tokio::spawn(async move {
            let call = request(7, "tools/call", json!({"name": "wait"}));
            client.post(&sid(&session), &call).await
        })
    };
    eventually("the handler runs on replica 0", || {
        seen.started.load(Ordering::SeqCst)
    })
    .await;
    // The cancellation arrives at replica 1, where nothing runs.
    let cancel = notification(
        "notifications/cancelled",
        json!({"requestId": 7, "reason": "changed my mind"}),
    );
    let posted = r[1].post(&sid(&session), &cancel).await;
    assert_eq!(posted.status, StatusCode::ACCEPTED, "{}", posted.body);
    eventually("the handler on replica 0 is cancelled", || {
        seen.cancelled.load(Ordering::SeqCst)
    })
    .await;
    // The cancelled request's POST ends (no answer is owed), it does not hang.
    let reply = tokio::time::timeout(kit::patience(), running)
        .await
        .expect("the cancelled request's POST ends")
        .unwrap();
    assert!(
        reply.messages().iter().all(|m| m.get("result").is_none()),
        "no result for a cancelled request: {}",
        reply.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn announcements_reach_the_get_stream_wherever_it_is_open() {
    let redis = Redis::start();
    let seen = Arc::new(Seen::default());
    let (servers, r) = replicas(&redis, 3, Duration::from_secs(60), &seen).await;
    let session = r[0].session("2025-11-25", json!({})).await;
    // The GET stream opens on replica 1; the subscription is made through replica 2.
    let mut stream = r[1].get_stream(&session, None).await;
    until_get_open(&r[1], &session).await;
    let subscribe = request(1, "resources/subscribe", json!({"uri": WATCHED}));
    let done = r[2].post(&sid(&session), &subscribe).await;
    assert_eq!(done.messages()[0]["result"], json!({}), "{}", done.body);
    // Announced on replica 0 (where the stream is not): heard on replica 1's stream.
    servers[0].notify(ServerEvent::ResourceUpdated("mem://other".into()));
    servers[0].notify(ServerEvent::ResourceUpdated(WATCHED.into()));
    let (_, updated) = stream.next_message().await;
    assert_eq!(method(&updated), "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], WATCHED, "{updated}");
    servers[2].notify(ServerEvent::ToolsChanged);
    let (_, changed) = stream.next_message().await;
    assert_eq!(method(&changed), "notifications/tools/list_changed");
    // Unsubscribed through replica 0: replica 1 no longer announces the updates; the list
    // change that follows is what arrives next.
    let unsubscribe = request(2, "resources/unsubscribe", json!({"uri": WATCHED}));
    let done = r[0].post(&sid(&session), &unsubscribe).await;
    assert_eq!(done.messages()[0]["result"], json!({}), "{}", done.body);
    servers[2].notify(ServerEvent::ResourceUpdated(WATCHED.into()));
    servers[0].notify(ServerEvent::ResourcesChanged);
    let (_, next) = stream.next_message().await;
    assert_eq!(
        method(&next),
        "notifications/resources/list_changed",
        "no update after unsubscribe: {next}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_resumes_on_another_replica() {
    let redis = Redis::start();
    let seen = Arc::new(Seen::default());
    let (servers, r) = replicas(&redis, 2, Duration::from_secs(60), &seen).await;
    let session = r[0].session("2025-06-18", json!({})).await;
    let mut stream = r[0].get_stream(&session, None).await;
    until_get_open(&r[0], &session).await;
    servers[0].notify(ServerEvent::ToolsChanged);
    let (last, first) = stream.next_message().await;
    assert_eq!(method(&first), "notifications/tools/list_changed");
    let last = last.expect("stored events have ids");
    // The stream is lost; replica 0 goes on writing it (into the shared history).
    drop(stream);
    servers[0].notify(ServerEvent::ResourcesChanged);
    servers[0].notify(ServerEvent::ToolsChanged);
    // Resumed on replica 1: what was missed, in order, then what comes (from anywhere).
    let mut resumed = r[1].get_stream(&session, Some(&last)).await;
    let mut missed = Vec::new();
    for _ in 0..2 {
        let (id, message) = resumed.next_message().await;
        assert!(id.is_some(), "{message}");
        missed.push(method(&message).to_owned());
    }
    assert_eq!(
        missed,
        [
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );
    until_get_open(&r[1], &session).await;
    // Live: an event announced now arrives. Known limit (ARCHITECTURE.md, "Replicas"): an
    // event announced while the stream moved — here the two missed ones, relayed to
    // replica 1 by the replicas' channel — may reach the resumed stream a second time
    // if the relay lands after replica 1 took the stream over; a list change told twice
    // only makes a client list again. A prompt list change is the marker: nothing else
    // announces one.
    servers[0].notify(ServerEvent::PromptsChanged);
    loop {
        let (_, live) = resumed.next_message().await;
        match method(&live) {
            "notifications/prompts/list_changed" => break,
            "notifications/resources/list_changed" | "notifications/tools/list_changed" => {}
            _ => panic!("not an event of this test: {live}"),
        }
    }
}

/// A GET stream resumed on another replica while the first replica still has it open (the
/// client lost that connection; the server did not notice): the older connection ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_resumed_elsewhere_ends_the_older_connection() {
    let redis = Redis::start();
    let seen = Arc::new(Seen::default());
    let (servers, r) = replicas(&redis, 2, Duration::from_secs(60), &seen).await;
    let session = r[0].session("2025-06-18", json!({})).await;
    let mut older = r[0].get_stream(&session, None).await;
    until_get_open(&r[0], &session).await;
    servers[0].notify(ServerEvent::ToolsChanged);
    let (last, first) = older.next_message().await;
    assert_eq!(method(&first), "notifications/tools/list_changed");
    let last = last.expect("stored events have ids");
    let _resumed = r[1].get_stream(&session, Some(&last)).await;
    assert!(
        older.rest().await.is_empty(),
        "the older connection ends, carrying nothing more"
    );
}

/// A new GET stream opened on another replica takes the session's GET stream there: the
/// older connection ends, and announcements reach the new stream only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_opened_elsewhere_takes_the_session_get_stream_there() {
    let redis = Redis::start();
    let seen = Arc::new(Seen::default());
    let (servers, r) = replicas(&redis, 2, Duration::from_secs(60), &seen).await;
    let session = r[0].session("2025-06-18", json!({})).await;
    let mut older = r[0].get_stream(&session, None).await;
    until_get_open(&r[0], &session).await;
    let mut newer = r[1].get_stream(&session, None).await;
    assert!(
        older.rest().await.is_empty(),
        "the older connection ends, carrying nothing"
    );
    until_get_open(&r[1], &session).await;
    servers[0].notify(ServerEvent::ToolsChanged);
    servers[1].notify(ServerEvent::PromptsChanged);
    let mut heard = Vec::new();
    for _ in 0..2 {
        let (_, m) = newer.next_message().await;
        heard.push(method(&m).to_owned());
    }
    heard.sort();
    assert_eq!(
        heard,
        [
            "notifications/prompts/list_changed",
            "notifications/tools/list_changed"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_expiry_ends_the_session_everywhere() {
    let redis = Redis::start();
    let seen = Arc::new(Seen::default());
    let idle = Duration::from_millis(800);
    let (servers, r) = replicas(&redis, 2, idle, &seen).await;
    let session = r[0].session("2025-06-18", json!({})).await;
    let mut stream = r[1].get_stream(&session, None).await;
    until_get_open(&r[1], &session).await;
    // Busy on replica 0 for three idle periods: alive everywhere, the GET stream on
    // replica 1 included.
    for i in 0..12 {
        let ping = r[0].post(&sid(&session), &request(i, "ping", None)).await;
        assert_eq!(ping.status, StatusCode::OK, "{}", ping.body);
        tokio::time::sleep(idle / 4).await;
    }
    servers[0].notify(ServerEvent::ToolsChanged);
    let (_, changed) = stream.next_message().await;
    assert_eq!(method(&changed), "notifications/tools/list_changed");
    // Idle: the session ends on both replicas, and so does its GET stream.
    tokio::time::sleep(idle * 3).await;
    assert!(stream.next().await.is_none(), "the GET stream ends");
    for (i, replica) in r.iter().enumerate() {
        let after = replica
            .post(&sid(&session), &request(99, "ping", None))
            .await;
        assert_eq!(
            after.status,
            StatusCode::NOT_FOUND,
            "replica {i}: {}",
            after.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_sse_post_on_another_replica_brings_its_headers_to_the_handler() {
    use mcp_runtime_http::HttpContext;
    // A tool that tells the headers of the POST that carried its call.
    let server = || {
        Server::builder(Implementation::new("headers", "1"))
            .tool(
                Tool::new("headers", "The request's headers"),
                |_, ctx| async move {
                    let head = ctx.http_request();
                    let header = |name: &str| {
                        head.and_then(|h| h.headers.get(name))
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned)
                    };
                    Ok::<_, ToolError>(ToolResult::text(
                        json!({
                            "seen": head.is_some(),
                            "tenant": header("x-tenant"),
                            "cookie": header("cookie"),
                            "uri": head.map(|h| h.uri.to_string()),
                        })
                        .to_string(),
                    ))
                },
            )
            .build()
    };
    let redis = Redis::start();
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::connect(&redis.url()).await.unwrap();
        replicas.push(serve(server(), HttpConfig::default().store(store)).await);
    }
    // The stream on replica 0; every POST to replica 1.
    let mut sse = replicas[0].sse().await;
    let endpoint = sse.endpoint.data.clone();
    let post_to_1 = |tenant: &'static str, body: Value| {
        replicas[1]
            .client()
            .post(replicas[1].url(&endpoint))
            .header("content-type", "application/json")
            .header("x-tenant", tenant)
            .header("cookie", "secret=1")
            .body(body.to_string())
            .send()
    };
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        post_to_1("blue", init).await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    assert!(sse.recv().await.get("result").is_some());
    let initialized = notification("notifications/initialized", None);
    assert_eq!(
        post_to_1("blue", initialized).await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    // Each POST's own head, relayed with it: not the first request's, nor the stream's.
    for (id, tenant) in [(1, "green"), (2, "red")] {
        let call = request(
            id,
            "tools/call",
            json!({"name": "headers", "arguments": {}}),
        );
        assert_eq!(
            post_to_1(tenant, call).await.unwrap().status(),
            StatusCode::ACCEPTED
        );
        let answer = sse.recv().await;
        let seen: Value =
            serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(seen["seen"], json!(true), "{seen}");
        assert_eq!(seen["tenant"], json!(tenant), "{seen}");
        assert!(
            seen["uri"]
                .as_str()
                .unwrap()
                .contains("/messages?sessionId="),
            "{seen}"
        );
        // Credentials stay on the replica that took the POST.
        assert_eq!(seen["cookie"], Value::Null, "{seen}");
    }
}
