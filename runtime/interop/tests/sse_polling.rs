//! SSE stream polling (SEP-1699, 2025-11-25 `basic/transports`) on the server's Streamable
//! HTTP transport, with the kit's HTTP client: a 2025-11-25 session's streams open with a
//! priming event (an id, empty data, `retry`), the server closes a stream's connection
//! after `close_after` (a `retry` field, then the end of the connection, not of the
//! stream), and a `GET` with `Last-Event-ID` continues the stream up to its answer — on
//! the same replica or, with a shared store, on another. Clients of 2025-03-26 and
//! 2025-06-18 see exactly what they saw before polling existed, and polling is off unless
//! configured.
//!
//! The handlers here wait on a gate the test opens, so that nothing depends on how fast
//! the machine is: the answer exists only after the test saw the connection close.
//! The official SDK clients of 2025-11-25 that reconnect are in `sdk_clients_http.rs`
//! (`*_polls_*`).

#![allow(clippy::unwrap_used)]

mod kit;

use std::sync::Arc;
use std::time::Duration;

use kit::http::{serve, Events, Http};
use kit::request;
use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::{Server, ServerEvent, ToolError};
use mcp_runtime_http::{HttpConfig, SsePolling};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

/// The `retry` the server advises.
const RETRY: Duration = Duration::from_millis(200);
/// How long a polled connection stays open.
const CONNECTION: Duration = Duration::from_millis(300);

/// A server whose `gate` tool answers when the test opens the gate (one permit per call),
/// and `gate_with_progress` sends a progress notification first; `announce` announces a
/// tool list change.
fn gated_server(gate: &Arc<Semaphore>) -> Server {
    let (g1, g2) = (Arc::clone(gate), Arc::clone(gate));
    Server::builder(Implementation::new("polling", "1"))
        .tool(
            Tool::new("gate", "Answers when the test lets it"),
            move |_, _| {
                let gate = Arc::clone(&g1);
                async move {
                    gate.acquire().await.unwrap().forget();
                    Ok::<_, ToolError>(ToolResult::text("through"))
                }
            },
        )
        .tool(
            Tool::new("gate_with_progress", "Progress, then the gate"),
            move |_, ctx| {
                let gate = Arc::clone(&g2);
                async move {
                    ctx.progress(1.0, None, None).await;
                    gate.acquire().await.unwrap().forget();
                    Ok::<_, ToolError>(ToolResult::text("through"))
                }
            },
        )
        .tool(
            Tool::new("announce", "Announces a tool list change"),
            |_, ctx| async move {
                ctx.announce(ServerEvent::ToolsChanged);
                Ok::<_, ToolError>(ToolResult::text("announced"))
            },
        )
        .build()
}

fn polling_config(close: bool) -> HttpConfig {
    let mut polling = SsePolling::new(RETRY);
    if close {
        polling = polling.close_after(CONNECTION);
    }
    let mut config = HttpConfig::default();
    config.sse_polling = Some(polling);
    config
}

fn call(id: i64, tool: &str) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"progressToken": format!("p{id}")}}),
    )
}

fn sid(session: &str) -> [(&'static str, &str); 1] {
    [("mcp-session-id", session)]
}

/// Reads a priming event: an id, empty data, `retry` as configured. Returns the id.
async fn priming(stream: &mut Events) -> String {
    let event = stream.next().await.expect("a priming event");
    assert!(event.is_priming(), "not a priming event: {:?}", event.raw);
    assert_eq!(
        event.retry(),
        Some(RETRY.as_millis() as u64),
        "{:?}",
        event.raw
    );
    event.id.unwrap()
}

/// The connection ends (cleanly, not cut) after a `retry` field, without a message.
async fn closed_for_polling(stream: &mut Events) {
    let event = stream.next().await.expect("a retry field before the close");
    assert!(event.is_retry_only(), "{:?}", event.raw);
    assert_eq!(event.retry(), Some(RETRY.as_millis() as u64));
    assert!(stream.next().await.is_none(), "the connection ends");
    assert!(stream.broken.is_none(), "{:?}", stream.broken);
}

/// Polls `session`'s stream from `last` until its answer comes (each connection that
/// finds nothing yet closes after a `retry` field), as a client does.
async fn poll_for_answer(http: &Http, session: &str, mut last: String) -> Value {
    for _ in 0..50 {
        let mut poll = http.get_stream(session, Some(&last)).await;
        while let Some(event) = poll.next().await {
            if event.is_retry_only() {
                continue;
            }
            let message = event.message().unwrap();
            if message.get("result").is_some() || message.get("error").is_some() {
                return message;
            }
            last = event.id.unwrap();
        }
    }
    panic!("no answer after 50 polls");
}

#[tokio::test]
async fn a_2025_11_25_stream_is_primed_closed_and_resumed_up_to_its_answer() {
    let gate = Arc::new(Semaphore::new(0));
    let http = serve(gated_server(&gate), polling_config(true)).await;
    let session = http.session("2025-11-25", json!({})).await;

    // Nothing comes within the connection time: an SSE stream anyway, primed, then closed.
    let mut stream = http.post_stream(&sid(&session), &call(7, "gate")).await;
    assert_eq!(stream.content_type, "text/event-stream");
    let primed = priming(&mut stream).await;
    closed_for_polling(&mut stream).await;

    // The answer exists only now; the client polls with the priming event's id.
    gate.add_permits(1);
    let mut resumed = http.get_stream(&session, Some(&primed)).await;
    let (id, answer) = resumed.next_message().await;
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "through");
    assert!(id.is_some_and(|id| id != primed));
    assert!(
        resumed.next().await.is_none(),
        "the stream ended with its answer"
    );

    // A stream that has something to say keeps it: progress first, then the close; the
    // answer after the progress event's id.
    let mut stream = http
        .post_stream(&sid(&session), &call(8, "gate_with_progress"))
        .await;
    priming(&mut stream).await;
    let (progress_id, progress) = stream.next_message().await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    closed_for_polling(&mut stream).await;
    gate.add_permits(1);
    let mut resumed = http.get_stream(&session, Some(&progress_id.unwrap())).await;
    let (_, answer) = resumed.next_message().await;
    assert_eq!(answer["id"], 8, "{answer}");
    assert!(resumed.next().await.is_none());
}

#[tokio::test]
async fn a_long_wait_is_polled_as_often_as_it_takes() {
    let gate = Arc::new(Semaphore::new(0));
    let http = serve(gated_server(&gate), polling_config(true)).await;
    let session = http.session("2025-11-25", json!({})).await;
    let mut stream = http.post_stream(&sid(&session), &call(3, "gate")).await;
    let primed = priming(&mut stream).await;
    closed_for_polling(&mut stream).await;
    // Two reconnections that find nothing: each is closed after a `retry` field.
    for _ in 0..2 {
        let mut poll = http.get_stream(&session, Some(&primed)).await;
        closed_for_polling(&mut poll).await;
    }
    gate.add_permits(1);
    let mut poll = http.get_stream(&session, Some(&primed)).await;
    let (_, answer) = poll.next_message().await;
    assert_eq!(answer["id"], 3, "{answer}");
}

#[tokio::test]
async fn older_revisions_see_what_they_saw_before() {
    let gate = Arc::new(Semaphore::new(0));
    let http = serve(gated_server(&gate), polling_config(true)).await;
    for version in ["2025-03-26", "2025-06-18"] {
        let session = http.session(version, json!({})).await;
        // Longer than a polled connection: still one JSON answer on the POST.
        let opener = Arc::clone(&gate);
        tokio::spawn(async move {
            tokio::time::sleep(CONNECTION * 3).await;
            opener.add_permits(1);
        });
        let reply = http.post(&sid(&session), &call(1, "gate")).await;
        assert!(
            reply.content_type.starts_with("application/json"),
            "{version}: {}",
            reply.content_type
        );
        assert_eq!(reply.json()["result"]["content"][0]["text"], "through");

        // An SSE answer: no priming event, no `retry`, the connection held to the end.
        let opener = Arc::clone(&gate);
        tokio::spawn(async move {
            tokio::time::sleep(CONNECTION * 3).await;
            opener.add_permits(1);
        });
        let mut stream = http
            .post_stream(&sid(&session), &call(2, "gate_with_progress"))
            .await;
        let mut raws = Vec::new();
        while let Some(event) = stream.next().await {
            raws.push(event.raw.clone());
            assert!(!event.raw.contains("retry:"), "{version}: {raws:?}");
            event.message().unwrap_or_else(|e| panic!("{version}: {e}"));
        }
        assert_eq!(raws.len(), 2, "{version}: progress and answer: {raws:?}");
        assert!(raws[1].contains(r#""id":2"#), "{version}: {raws:?}");

        // Nor on the GET stream.
        let mut get = http.get_stream(&session, None).await;
        http.post(&sid(&session), &call(3, "announce")).await;
        let first = get.next().await.unwrap();
        assert!(!first.raw.contains("retry:"), "{version}: {:?}", first.raw);
        assert_eq!(
            first.message().unwrap()["method"],
            "notifications/tools/list_changed"
        );
    }
}

#[tokio::test]
async fn polling_is_off_by_default() {
    let gate = Arc::new(Semaphore::new(0));
    let http = serve(gated_server(&gate), HttpConfig::default()).await;
    let session = http.session("2025-11-25", json!({})).await;
    let opener = Arc::clone(&gate);
    tokio::spawn(async move {
        tokio::time::sleep(CONNECTION * 2).await;
        opener.add_permits(1);
    });
    let mut stream = http
        .post_stream(&sid(&session), &call(1, "gate_with_progress"))
        .await;
    let messages = stream.rest().await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["method"], "notifications/progress");
    assert_eq!(messages[1]["id"], 1);
}

#[tokio::test]
async fn priming_without_closing_holds_the_connection() {
    let gate = Arc::new(Semaphore::new(0));
    let http = serve(gated_server(&gate), polling_config(false)).await;
    let session = http.session("2025-11-25", json!({})).await;
    let opener = Arc::clone(&gate);
    tokio::spawn(async move {
        tokio::time::sleep(CONNECTION * 2).await;
        opener.add_permits(1);
    });
    let mut stream = http
        .post_stream(&sid(&session), &call(4, "gate_with_progress"))
        .await;
    priming(&mut stream).await;
    // The rest are messages only: no `retry` field, no close before the answer.
    let messages = stream.rest().await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[1]["id"], 4);
    // A request answered at once is still answered with JSON.
    let reply = http
        .post(&sid(&session), &request(5, "tools/list", json!({})))
        .await;
    assert!(reply.content_type.starts_with("application/json"));
}

#[tokio::test]
async fn the_get_stream_is_primed_polled_and_loses_nothing_in_between() {
    let gate = Arc::new(Semaphore::new(0));
    let http = serve(gated_server(&gate), polling_config(true)).await;
    let session = http.session("2025-11-25", json!({})).await;
    let mut get = http.get_stream(&session, None).await;
    let primed = priming(&mut get).await;
    closed_for_polling(&mut get).await;
    // While no connection is open, the server announces a change.
    let reply = http.post(&sid(&session), &call(1, "announce")).await;
    assert_eq!(reply.json()["id"], 1);
    let mut get = http.get_stream(&session, Some(&primed)).await;
    let (_, announced) = get.next_message().await;
    assert_eq!(announced["method"], "notifications/tools/list_changed");
    closed_for_polling(&mut get).await;
}

/// Two replicas sharing a real `redis-server`: the POST stream is primed and closed on
/// one, the client polls the other, which finds the answer in the store.
#[tokio::test]
async fn a_polled_stream_resumes_on_another_replica() {
    use mcp_runtime_redis::RedisStore;
    let redis = kit::redis::Redis::start();
    let gate = Arc::new(Semaphore::new(0));
    let mut replicas: Vec<Http> = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::connect(&redis.url()).await.unwrap();
        let mut config = polling_config(true).store(store);
        config.session_idle_timeout = Duration::from_secs(60);
        replicas.push(serve(gated_server(&gate), config).await);
    }
    let (a, b) = (&replicas[0], &replicas[1]);
    let session = a.session("2025-11-25", json!({})).await;
    let mut stream = a.post_stream(&sid(&session), &call(6, "gate")).await;
    let primed = priming(&mut stream).await;
    closed_for_polling(&mut stream).await;
    gate.add_permits(1);
    let answer = poll_for_answer(b, &session, primed).await;
    assert_eq!(answer["id"], 6, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "through");
}

/// Two replicas, a polled GET stream opened on the first: a change announced on the second
/// while that stream's connection is closed between polls is kept in the stream's history
/// (the stream still lives on the first replica; only its connection ended) and reaches
/// the client when it polls again, here through the second replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_between_polls_of_a_shared_get_stream_is_kept() {
    use mcp_runtime_redis::RedisStore;
    let redis = kit::redis::Redis::start();
    let gate = Arc::new(Semaphore::new(0));
    let (mut servers, mut replicas) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let store = RedisStore::connect(&redis.url()).await.unwrap();
        let mut config = polling_config(true).store(store);
        config.session_idle_timeout = Duration::from_secs(60);
        let server = gated_server(&gate);
        replicas.push(serve(server.clone(), config).await);
        servers.push(server);
    }
    let (a, b) = (&replicas[0], &replicas[1]);
    let session = a.session("2025-11-25", json!({})).await;
    let mut get = a.get_stream(&session, None).await;
    let last = priming(&mut get).await;
    closed_for_polling(&mut get).await;
    drop(get);
    // Between polls: announced on the other replica, relayed to the first.
    servers[1].notify(ServerEvent::ToolsChanged);
    tokio::time::sleep(RETRY).await;
    let mut poll = b.get_stream(&session, Some(&last)).await;
    let (_, changed) = poll.next_message().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
}
