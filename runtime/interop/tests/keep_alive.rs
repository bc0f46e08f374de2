//! SSE keep-alive (`HttpConfig::keep_alive`), read byte for byte off the wire: every
//! stream the server holds open carries a comment line after each period of silence —
//! a legacy session's GET stream, a POST's stream while its tool runs, a slow POST that
//! has sent nothing yet (answered as a stream once the period passes), a 2026-07-28
//! `subscriptions/listen`, an HTTP+SSE stream, and a stream another replica writes,
//! replayed from the store — and none when it is turned off.

#![allow(clippy::unwrap_used)]

mod kit;

use std::time::Duration;

use futures_util::StreamExt;
use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::{Server, ToolError};
use mcp_runtime_http::HttpConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};

use kit::http::{serve, Http};
use kit::{modern_meta, patience, request, MODERN};

const PERIOD: Duration = Duration::from_millis(150);
const KEEP_ALIVE: &str = ": keep-alive\n";
const SLOW: Duration = Duration::from_millis(900);

/// `slow`: answers after [`SLOW`], sending nothing before. `slow_progress`: reports
/// progress at once, then answers after [`SLOW`].
fn server() -> Server {
    let empty = json!({"type": "object", "properties": {}});
    Server::builder(Implementation::new("keep-alive", "1"))
        .state_keys("keep-alive-test-key-0123456789abcdef", None)
        .tool(
            Tool::new("slow", "Answers late").input_schema(empty.clone()),
            |_, _| async move {
                tokio::time::sleep(SLOW).await;
                Ok::<_, ToolError>(ToolResult::text("done"))
            },
        )
        .tool(
            Tool::new("slow_progress", "Reports progress, then answers late").input_schema(empty),
            |_, ctx| async move {
                ctx.progress(1.0, Some(2.0), None).await;
                tokio::time::sleep(SLOW).await;
                Ok::<_, ToolError>(ToolResult::text("done"))
            },
        )
        .build()
}

fn config(keep_alive: Option<Duration>) -> HttpConfig {
    let mut config = HttpConfig::default();
    config.keep_alive = keep_alive;
    config
}

/// Reads a response's body as text until it ends or `until` passes.
async fn read_for(response: reqwest::Response, until: Duration) -> String {
    let mut body = response.bytes_stream();
    let mut text = String::new();
    let _ = tokio::time::timeout(until, async {
        while let Some(Ok(chunk)) = body.next().await {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    text
}

/// Reads a response's body to its end (within the patience).
async fn read_all(response: reqwest::Response) -> String {
    let text = read_for(response, patience()).await;
    assert!(!text.is_empty(), "an empty body");
    text
}

fn content_type(response: &reqwest::Response) -> String {
    response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned()
}

fn call(id: i64, tool: &str) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"progressToken": "p"}}),
    )
}

fn modern_call(id: i64, tool: &str) -> (Vec<(&'static str, String)>, Value) {
    let params = json!({"name": tool, "arguments": {}, "_meta": modern_meta(json!({}))});
    let headers = vec![
        ("mcp-protocol-version", MODERN.to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        ("mcp-name", tool.to_owned()),
    ];
    (headers, request(id, "tools/call", params))
}

async fn post(http: &Http, headers: &[(&str, &str)], body: &Value) -> reqwest::Response {
    http.post_request(headers, body).send().await.unwrap()
}

/// The comments come between events, each a line of its own: the answer still parses.
fn assert_answer_after_keep_alives(text: &str, at_least: usize) {
    let count = text.matches(KEEP_ALIVE).count();
    assert!(count >= at_least, "{count} keep-alives: {text:?}");
    let events = kit::frames::sse_events(text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
    let last = events.last().expect("an event").message().unwrap();
    assert_eq!(last["result"]["content"][0]["text"], "done", "{text:?}");
}

#[tokio::test]
async fn a_legacy_get_stream_and_a_running_tool_s_stream_are_kept_alive() {
    let http = serve(server(), config(Some(PERIOD))).await;
    let session = http.session("2025-11-25", json!({})).await;
    let sid = [("mcp-session-id", session.as_str())];

    // The GET stream, idle.
    let get = http
        .client()
        .get(http.url("/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    let text = read_for(get, PERIOD * 4).await;
    assert!(text.matches(KEEP_ALIVE).count() >= 2, "{text:?}");
    assert!(
        text.lines().all(|l| l.is_empty() || l.starts_with(':')),
        "{text:?}"
    );

    // A tool that reports progress at once, then works on: its stream.
    let answer = post(&http, &sid, &call(1, "slow_progress")).await;
    assert!(content_type(&answer).starts_with("text/event-stream"));
    assert_answer_after_keep_alives(&read_all(answer).await, 3);

    // A tool that sends nothing before its answer: after one period the answer becomes
    // a stream, kept alive until the answer.
    let answer = post(&http, &sid, &call(2, "slow")).await;
    assert!(content_type(&answer).starts_with("text/event-stream"));
    assert_answer_after_keep_alives(&read_all(answer).await, 3);

    // A client that accepts JSON only keeps its JSON answer (no stream, so no keep-alive).
    let answer = http
        .client()
        .post(http.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", &session)
        .body(call(3, "slow").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert!(content_type(&answer).starts_with("application/json"));
}

#[tokio::test]
async fn stateless_streams_are_kept_alive() {
    let http = serve(server(), config(Some(PERIOD))).await;
    // A silent slow call.
    let (headers, body) = modern_call(1, "slow");
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let answer = post(&http, &headers, &body).await;
    assert!(content_type(&answer).starts_with("text/event-stream"));
    assert_answer_after_keep_alives(&read_all(answer).await, 3);

    // A listen: acknowledged, then silent, kept alive.
    let params = json!({
        "_meta": modern_meta(json!({})),
        "notifications": {"toolsListChanged": true},
    });
    let listen = post(
        &http,
        &[
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "subscriptions/listen"),
        ],
        &request(2, "subscriptions/listen", params),
    )
    .await;
    assert!(content_type(&listen).starts_with("text/event-stream"));
    let text = read_for(listen, PERIOD * 4).await;
    assert!(
        text.contains("notifications/subscriptions/acknowledged"),
        "{text:?}"
    );
    assert!(text.matches(KEEP_ALIVE).count() >= 2, "{text:?}");
}

#[tokio::test]
async fn an_http_sse_stream_is_kept_alive() {
    let http = serve(server(), config(Some(PERIOD))).await;
    let sse = http
        .client()
        .get(http.url("/sse"))
        .header("accept", "text/event-stream")
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    let text = read_for(sse, PERIOD * 4).await;
    assert!(text.starts_with("event: endpoint\n"), "{text:?}");
    assert!(text.matches(KEEP_ALIVE).count() >= 2, "{text:?}");
}

#[tokio::test]
async fn no_keep_alive_when_it_is_off() {
    let http = serve(server(), config(None)).await;
    let session = http.session("2025-11-25", json!({})).await;
    let get = http
        .client()
        .get(http.url("/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(read_for(get, PERIOD * 4).await, "");
    // A silent slow call stays a JSON answer.
    let sid = [("mcp-session-id", session.as_str())];
    let answer = post(&http, &sid, &call(1, "slow")).await;
    assert!(content_type(&answer).starts_with("application/json"));
}

/// A slow call's stream written on replica A, its connection lost, resumed on replica B
/// with `Last-Event-ID`: B replays it from the store and keeps it alive while A's tool
/// still runs, then delivers the answer A wrote.
#[tokio::test]
async fn a_stream_resumed_on_another_replica_is_kept_alive() {
    let redis = kit::redis::Redis::start();
    let store = || async {
        mcp_runtime_redis::RedisStore::connect(&redis.url())
            .await
            .expect("redis")
    };
    let a = serve(server(), config(Some(PERIOD)).store(store().await)).await;
    let b = serve(server(), config(Some(PERIOD)).store(store().await)).await;
    let session = a.session("2025-11-25", json!({})).await;
    let sid = [("mcp-session-id", session.as_str())];
    let mut on_a = a.post_stream(&sid, &call(1, "slow_progress")).await;
    let progress = on_a.next().await.expect("the progress event");
    assert_eq!(
        progress.message().unwrap()["method"],
        "notifications/progress"
    );
    let last_event_id = progress.id.expect("an event id");
    drop(on_a);
    let resumed = b
        .client()
        .get(b.url("/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", &last_event_id)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), StatusCode::OK);
    assert_answer_after_keep_alives(&read_all(resumed).await, 2);
}
