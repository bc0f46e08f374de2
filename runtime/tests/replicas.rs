//! Issue 18: three replicas of the example (`conformance_server --http ADDR --redis URL`,
//! one `MCP_STATE_KEY`) sharing a real `redis-server`, driven in turn by URL — a
//! round-robin front with no affinity: a legacy session opened on one continues on the
//! others (revision, capabilities, log level), an elicitation is answered through another
//! replica and its stream resumed with `Last-Event-ID` on a third, a 2026-07-28
//! `input_required` retry verifies on another replica, `DELETE` ends the session
//! everywhere, and a Redis that is down gives 503, then recovery.
//!
//! Needs `redis-server` on the PATH (Debian: `apt-get install redis-server`; `.ci/run`
//! installs it). Without it the test fails, naming what to install.

#![allow(clippy::unwrap_used)]

mod kit;

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use kit::http::Http;
use kit::process::HttpServer;
use kit::{notification, patience, request};
use reqwest::StatusCode;
use serde_json::{json, Value};

const STATE_KEY: &str = "replicas-test-shared-key-0123456789abcdef";

/// A `redis-server` on a free loopback port, in a temporary directory, killed on drop.
struct Redis {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    fn start() -> Redis {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status();
        assert!(
            found.is_ok_and(|s| s.success()),
            "redis-server is not installed: these tests need a real Redis \
             (Debian/Ubuntu: `apt-get install -y redis-server`; `.ci/run` installs it)"
        );
        let port = {
            // A port that was free a moment ago (redis-server cannot take port 0).
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        Redis::on_port(port)
    }

    fn on_port(port: u16) -> Redis {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning redis-server: {e}"));
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < patience(),
                "redis-server did not listen on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Redis {
            child,
            port,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

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
}
