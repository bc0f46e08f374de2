//! Issue 18: three replicas of the example (`conformance_server --http ADDR --redis URL`,
//! one `MCP_STATE_KEY`) sharing a real `redis-server`, driven in turn by URL — a
//! round-robin front with no affinity: a legacy session opened on one continues on the
//! others (revision, capabilities, log level), an elicitation is answered through another
//! replica and its stream resumed with `Last-Event-ID` on a third, a 2026-07-28
//! `input_required` retry verifies on another replica, `DELETE` ends the session
//! everywhere, answers and cancellations in a 2025-03-26 batch reach the replica
//! concerned, HTTP+SSE (2024-11-05) messages POSTed to any replica reach the one holding
//! the stream, a stream whose replica died ends with an error when resumed elsewhere
//! (never silence), and a Redis that is down gives 503, then recovery (the replicas'
//! channel included).
//!
//! Needs `redis-server` on the PATH (Debian: `apt-get install redis-server`; `.ci/run`
//! installs it). Without it the test fails, naming what to install.

#![allow(clippy::unwrap_used)]

mod kit;

use std::time::Instant;

use kit::http::Http;
use kit::process::HttpServer;
use kit::redis::Redis;
use kit::{notification, patience, request};
use reqwest::StatusCode;
use serde_json::{json, Value};

const STATE_KEY: &str = "replicas-test-shared-key-0123456789abcdef";

/// `n` replicas of the example sharing `redis`, with their clients.
fn replicas(redis: &Redis, n: usize) -> (Vec<HttpServer>, Vec<Http>) {
    // Inherited by the replicas: one key for the group.
    std::env::set_var("MCP_STATE_KEY", STATE_KEY);
    let url = redis.url();
    let servers: Vec<HttpServer> = (0..n)
        .map(|_| HttpServer::start_example_with("conformance_server", &["--redis", &url]))
        .collect();
    let clients = servers.iter().map(|s| Http::new(&s.url(""))).collect();
    (servers, clients)
}

fn sid(session: &str) -> [(&'static str, &str); 1] {
    [("mcp-session-id", session)]
}

fn echo(id: i64, message: &str) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}}),
    )
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

#[tokio::test]
async fn legacy_sessions_continue_on_any_replica_and_end_everywhere() {
    let redis = Redis::start();
    let (_servers, r) = replicas(&redis, 3);
    // Opened on replica 0 (initialize, initialized), continued on 1 and 2, in turn.
    let session = r[0].session("2025-06-18", json!({"elicitation": {}})).await;
    for (i, replica) in r.iter().cycle().take(6).enumerate() {
        let message = format!("call {i} of {session}");
        let reply = replica
            .post(&sid(&session), &echo(i as i64 + 1, &message))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "replica {}: {}",
            i % 3,
            reply.body
        );
        let answer = reply.messages();
        assert_eq!(text_of(&answer[0]), message, "replica {}", i % 3);
    }
    // The revision is the session's on every replica.
    let wrong = r[1]
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-03-26"),
            ],
            &request(10, "ping", None),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.body);
    // The log level set on replica 2 holds on replica 1: info messages are no longer sent.
    let set = r[2]
        .post(
            &sid(&session),
            &request(11, "logging/setLevel", json!({"level": "error"})),
        )
        .await;
    assert_eq!(set.messages()[0]["result"], json!({}), "{}", set.body);
    let call = request(12, "tools/call", json!({"name": "test_tool_with_logging"}));
    let logged = r[1].post(&sid(&session), &call).await.messages();
    assert_eq!(logged.len(), 1, "only the answer, no info logs: {logged:?}");
    // The capabilities declared on replica 0 hold on replica 2: elicitation is asked
    // (the request arrives on the POST's stream).
    let call = request(
        13,
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "Who?"}}),
    );
    let mut stream = r[2].post_stream(&sid(&session), &call).await;
    let (event_id, asked) = stream.next_message().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let event_id = event_id.expect("stored events have ids");
    // The client loses the stream, answers through replica 0 …
    drop(stream);
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}});
    let posted = r[0].post(&sid(&session), &answer).await;
    assert_eq!(posted.status, StatusCode::ACCEPTED, "{}", posted.body);
    // … and resumes on replica 1: the rest of the stream, from the shared history, ends
    // with the handler's answer (which ran on replica 2 and got the answer from 0).
    let mut resumed = r[1].get_stream(&session, Some(&event_id)).await;
    let (_, result) = resumed.next_message().await;
    assert_eq!(result["id"], 13, "{result}");
    let text = text_of(&result);
    assert!(
        text.contains("action=accept") && text.contains("ada"),
        "{text}"
    );
    // DELETE on replica 1 ends the session on every replica.
    assert_eq!(r[1].delete(&session).await, StatusCode::OK);
    for (i, replica) in r.iter().enumerate() {
        let after = replica.post(&sid(&session), &echo(20, "gone")).await;
        assert_eq!(
            after.status,
            StatusCode::NOT_FOUND,
            "replica {i}: {}",
            after.body
        );
    }
}

#[tokio::test]
async fn batched_answers_and_cancellations_reach_the_replica_concerned() {
    let redis = Redis::start();
    let (_servers, r) = replicas(&redis, 3);
    // Batches are 2025-03-26's; its server-to-client request here is sampling.
    let session = r[0].session("2025-03-26", json!({"sampling": {}})).await;
    let sample = |id: i64| {
        request(
            id,
            "tools/call",
            json!({"name": "test_sampling", "arguments": {"prompt": "Capital?"}}),
        )
    };
    let mut stream = r[0].post_stream(&sid(&session), &sample(5)).await;
    let (_, asked) = stream.next_message().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    // The answer, batched with a ping, through replica 1: the ping is answered there, the
    // answer goes on to replica 0, whose handler finishes.
    let batch = json!([
        {"jsonrpc": "2.0", "id": asked["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}},
        {"jsonrpc": "2.0", "id": 6, "method": "ping"},
    ]);
    let reply = r[1].post(&sid(&session), &batch).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let answers = reply.messages();
    let answers = answers[0].as_array().cloned().unwrap_or(answers);
    assert_eq!(
        answers.len(),
        1,
        "only the ping is answered: {}",
        reply.body
    );
    assert_eq!(answers[0]["id"], 6, "{}", reply.body);
    let (_, result) = stream.next_message().await;
    assert_eq!(result["id"], 5, "{result}");
    assert_eq!(text_of(&result), "LLM response: Paris");
    // A cancellation in a batch through replica 2 ends the request running on replica 0:
    // its stream ends with no result.
    let mut stream = r[0].post_stream(&sid(&session), &sample(7)).await;
    let (_, asked) = stream.next_message().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    let batch = json!([
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no longer needed"}},
        {"jsonrpc": "2.0", "id": 8, "method": "ping"},
    ]);
    let reply = r[2].post(&sid(&session), &batch).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let rest = tokio::time::timeout(patience(), stream.rest())
        .await
        .expect("the cancelled request's stream ends");
    assert!(
        rest.iter().all(|m| m.get("result").is_none()),
        "no result for a cancelled request: {rest:?}"
    );
}

#[tokio::test]
async fn http_sse_messages_reach_the_stream_through_any_replica() {
    let redis = Redis::start();
    let (_servers, r) = replicas(&redis, 3);
    // The stream on replica 0; its messages POSTed to every replica in turn.
    let mut sse = r[0].sse().await;
    let endpoint = sse.endpoint.data.clone();
    let post = |i: usize, body: Value| {
        let request = r[i]
            .client()
            .post(r[i].url(&endpoint))
            .header("content-type", "application/json")
            .body(body.to_string());
        async move { request.send().await.unwrap().status() }
    };
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(post(1, init).await, StatusCode::ACCEPTED);
    let answer = sse.recv().await;
    assert_eq!(
        answer["result"]["protocolVersion"], "2024-11-05",
        "{answer}"
    );
    let initialized = notification("notifications/initialized", None);
    assert_eq!(post(2, initialized).await, StatusCode::ACCEPTED);
    // Posted without waiting for answers, through replicas 0, 1, 2, 0, …: each reaches
    // the session after the ones posted before it (the handshake first), and every
    // answer comes back on the one stream.
    for i in 1..=6 {
        let status = post(i % 3, echo(i as i64, &format!("sse {i}"))).await;
        assert_eq!(status, StatusCode::ACCEPTED, "call {i}");
    }
    let mut answered: Vec<i64> = Vec::new();
    for _ in 1..=6 {
        let answer = sse.recv().await;
        let id = answer["id"].as_i64().unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(text_of(&answer), format!("sse {id}"), "{answer}");
        answered.push(id);
    }
    answered.sort_unstable();
    assert_eq!(answered, [1, 2, 3, 4, 5, 6]);
    // An unknown session is 404 on every replica; so is this one once its stream ends.
    let unknown = r[1]
        .client()
        .post(r[1].url("/messages?sessionId=00000000000000000000000000000000"))
        .header("content-type", "application/json")
        .body(echo(9, "x").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    drop(sse);
    let started = Instant::now();
    while post(2, echo(10, "after")).await != StatusCode::NOT_FOUND {
        assert!(
            started.elapsed() < patience(),
            "the session outlived its stream"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_stream_whose_replica_died_ends_with_an_error_when_resumed_elsewhere() {
    let redis = Redis::start();
    let (servers, r) = replicas(&redis, 2);
    // 2025-06-18: the example polls 2025-11-25 streams (priming events); not this one.
    let session = r[0].session("2025-06-18", json!({"elicitation": {}})).await;
    // A request that waits (for an elicitation answer) on replica 1, its stream stored.
    let call = request(
        7,
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "Who?"}}),
    );
    let mut stream = r[1].post_stream(&sid(&session), &call).await;
    let (event_id, asked) = stream.next_message().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let event_id = event_id.expect("stored events have ids");
    // Replica 1 dies (SIGKILL: no goodbye); the client resumes on replica 0. Not silence:
    // once replica 1's heartbeat has lapsed, the stream ends with an error for request 7.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &servers[1].pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    drop(stream);
    let mut resumed = r[0].get_stream(&session, Some(&event_id)).await;
    let rest = tokio::time::timeout(patience(), resumed.rest())
        .await
        .expect("the resumed stream ends");
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 7, "{rest:?}");
    assert_eq!(rest[0]["error"]["code"], -32603, "{rest:?}");
    // The session itself goes on, on replica 0.
    let reply = r[0].post(&sid(&session), &echo(8, "still here")).await;
    assert_eq!(
        text_of(&reply.messages()[0]),
        "still here",
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn an_input_required_retry_verifies_on_another_replica() {
    let redis = Redis::start();
    let (_servers, r) = replicas(&redis, 2);
    let caps = json!({"elicitation": {}});
    let params = json!({"name": "test_input_required_result_elicitation", "arguments": {}, "_meta": kit::modern_meta(caps.clone())});
    let first = r[0]
        .post_modern(1, "tools/call", params.clone())
        .await
        .json();
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let key = first["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .unwrap();
    let mut retry = params;
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Ada"}}});
    let done = r[1].post_modern(2, "tools/call", retry).await.json();
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(text_of(&done), "Hello, Ada!");
}

#[tokio::test]
async fn a_redis_restart_gives_503_then_recovery() {
    let mut redis = Redis::start();
    let port = redis.port;
    let (_servers, r) = replicas(&redis, 2);
    let session = r[0].session("2025-11-25", json!({})).await;
    redis.stop();
    // Down: a clear 503 with a JSON-RPC internal error, within the patience (no hang).
    let down = r[1].post(&sid(&session), &echo(1, "down")).await;
    assert_eq!(
        down.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        down.body
    );
    assert_eq!(down.json()["error"]["code"], -32603, "{}", down.body);
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let refused = r[0].post(&[], &init).await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.body
    );
    // Back (empty: its sessions are gone, so the old one is 404 and a new one works).
    let _redis = Redis::on_port(port);
    let started = Instant::now();
    let session = loop {
        let reply = r[1].post(&[], &init).await;
        if reply.status == StatusCode::OK {
            break reply.session.expect("Mcp-Session-Id");
        }
        assert!(
            started.elapsed() < patience(),
            "no recovery: {}",
            reply.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let initialized = notification("notifications/initialized", None);
    r[0].post(&sid(&session), &initialized).await;
    let reply = r[0].post(&sid(&session), &echo(2, "back")).await;
    assert_eq!(text_of(&reply.messages()[0]), "back", "{}", reply.body);
    // The replicas' channel is back too (each replica subscribes again on its own): a
    // change announced on replica 1 reaches the GET stream open on replica 0 …
    let mut stream = r[0].get_stream(&session, None).await;
    let trigger = request(3, "tools/call", json!({"name": "test_trigger_tool_change"}));
    let started = Instant::now();
    loop {
        let reply = r[1].post(&sid(&session), &trigger).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let heard =
            tokio::time::timeout(std::time::Duration::from_millis(300), stream.next_message());
        if let Ok((_, changed)) = heard.await {
            assert_eq!(
                changed["method"], "notifications/tools/list_changed",
                "{changed}"
            );
            break;
        }
        assert!(
            started.elapsed() < patience(),
            "the replicas' channel did not come back"
        );
    }
    drop(stream);
    // … and an elicitation asked on replica 0 is answered through replica 1.
    let session = r[1].session("2025-11-25", json!({"elicitation": {}})).await;
    let call = request(
        4,
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "Who?"}}),
    );
    let mut asking = r[0].post_stream(&sid(&session), &call).await;
    let (_, asked) = asking.next_message().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}});
    let posted = r[1].post(&sid(&session), &answer).await;
    assert_eq!(posted.status, StatusCode::ACCEPTED, "{}", posted.body);
    let (_, result) = asking.next_message().await;
    assert!(text_of(&result).contains("ada"), "{result}");
}
