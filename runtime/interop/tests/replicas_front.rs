//! Issue 18 behind a load balancer: three replicas of the example (`conformance_server
//! --http ADDR --redis URL`, one `MCP_STATE_KEY`) on a real `redis-server`, behind the
//! kit's round-robin front with no affinity (`kit::front`: each request to the next
//! replica). Official TypeScript and Python SDK clients of every revision complete their
//! sessions through it: 2024-11-05 (over Streamable HTTP and over HTTP+SSE, whose POSTs
//! reach the stream's replica through the store) and 2025-03-26 list, call, read and
//! get; 2025-06-18 and later also answer sampling and elicitation — as server-to-client
//! requests through other replicas before 2026-07-28, as `input_required` retries on
//! 2026-07-28. And a load run of unique echo messages from several sessions loses only
//! what the replica killed in its middle was running (each such client gets an error,
//! never silence, never another's answer), while every session goes on on the other
//! replicas. The full-size load run (300 clients, every era, a replica killed and
//! restarted) is `examples/replica_load.rs`, scaled down in `tests/replicas_load.rs`.
//!
//! Needs `redis-server` on the PATH (see tests/replicas.rs) and the pinned SDK clients
//! (installed on first use by `kit::pinned`).

#![allow(clippy::unwrap_used)]

mod kit;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use kit::http::Http;
use kit::pinned;
use kit::process::HttpServer;
use kit::redis::Redis;
use kit::request;
use reqwest::StatusCode;
use serde_json::{json, Value};

const STATE_KEY: &str = "replicas-front-shared-key-0123456789abcdef";

/// `n` replicas of the example sharing `redis`, and the front before them (its base URL).
async fn group(redis: &Redis, n: usize) -> (Vec<HttpServer>, String) {
    // Inherited by the replicas: one key for the group.
    std::env::set_var("MCP_STATE_KEY", STATE_KEY);
    let url = redis.url();
    let servers: Vec<HttpServer> = (0..n)
        .map(|_| HttpServer::start_example_with("conformance_server", &["--redis", &url]))
        .collect();
    let front = kit::front::start(servers.iter().map(|s| s.url("")).collect()).await;
    (servers, front)
}

/// Runs the pinned client `id` (its `scenario`, `ask` or `basic`) against `url`: its
/// summary.
async fn run_client(id: &'static str, scenario: &'static str, url: String) -> Value {
    tokio::task::spawn_blocking(move || {
        pinned::ensure_client(id);
        let out = Command::new("bash")
            .arg(pinned::clients_src().join("run-client.sh"))
            .env("MCP_CLIENTS_DIR", pinned::clients_dir())
            .args([id, "--scenario", scenario, "--url", &url])
            .output()
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout.lines().last().unwrap_or_default();
        serde_json::from_str(line).unwrap_or_else(|e| {
            panic!(
                "{id}: no JSON summary ({e}): {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    })
    .await
    .unwrap()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The logs of a group's replicas, for a failure's message.
fn logs(servers: &[HttpServer]) -> String {
    servers
        .iter()
        .map(HttpServer::log)
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The `ask` scenario through the front: `test_sampling` and `test_elicitation`, answered
/// by the client's handlers — as server-to-client requests (answered through whichever
/// replica the front chose) before 2026-07-28, as `input_required` retries (verified on
/// whichever replica) on 2026-07-28.
async fn check_ask(front: &str, servers: &[HttpServer], client: &'static str, revision: &str) {
    let s = run_client(client, "ask", format!("{front}/mcp")).await;
    assert_eq!(s["ok"], true, "{client}: {s}\n{}", logs(servers));
    assert_eq!(s["protocolVersion"], revision, "{client}: {s}");
    let tools = s["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "echo"), "{client}: {s}");
    assert_eq!(
        text(&s["samplingResult"]),
        "LLM response: Paris is the capital",
        "{client}: {s}"
    );
    let elicited = text(&s["elicitationResult"]);
    assert!(
        elicited.contains("action=accept") && elicited.contains(r#""username":"testuser""#),
        "{client}: {s}"
    );
    assert_eq!(
        s["asked"],
        json!(["sampling/createMessage", "elicitation/create"]),
        "{client}: {s}"
    );
    // How the server asked, where the client tells (the Python 1.x SDK does not count).
    let wire = &s["wire"];
    if revision == "2026-07-28" {
        assert_eq!(wire["inputRequiredResults"], 2, "{client}: {s}");
    } else if client.starts_with("ts-") {
        assert_eq!(wire["serverRequests"], 2, "{client}: {s}");
    }
}

/// The `basic` scenario through the front at `path` (`/mcp`, or `/sse` for HTTP+SSE),
/// for the revisions before elicitation: tools listed and one called, a resource read, a
/// prompt got — each request of the session on the next replica (over HTTP+SSE, each
/// POST; the stream stays where it was opened).
async fn check_basic(
    front: &str,
    servers: &[HttpServer],
    client: &'static str,
    path: &str,
    revision: &str,
) {
    let s = run_client(client, "basic", format!("{front}{path}")).await;
    assert_eq!(s["ok"], true, "{client}: {s}\n{}", logs(servers));
    let transport = match path {
        "/sse" => "sse",
        _ => "streamable-http",
    };
    assert_eq!(s["transport"], transport, "{client}: {s}");
    assert_eq!(s["protocolVersion"], revision, "{client}: {s}");
    let tools = s["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "echo"), "{client}: {s}");
    assert_eq!(
        text(&s["callResult"]),
        "This is a simple text response for testing.",
        "{client}: {s}"
    );
    assert_eq!(
        s["resource"]["contents"][0]["uri"], "test://static-text",
        "{client}: {s}"
    );
    assert_eq!(
        s["prompt"]["messages"][0]["content"]["text"], "This is a simple prompt for testing.",
        "{client}: {s}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_clients_complete_their_sessions_through_a_round_robin_front() {
    let redis = Redis::start();
    let (servers, front) = group(&redis, 3).await;
    for (client, revision) in [
        ("ts-2024-11-05", "2024-11-05"),
        ("ts-2025-03-26", "2025-03-26"),
    ] {
        check_basic(&front, &servers, client, "/mcp", revision).await;
    }
    for (client, revision) in [
        ("ts-2025-06-18", "2025-06-18"),
        ("ts-2025-11-25", "2025-11-25"),
        ("ts-2026-07-28-pinned", "2026-07-28"),
        ("ts-2026-07-28-auto", "2026-07-28"),
    ] {
        check_ask(&front, &servers, client, revision).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_clients_complete_their_sessions_through_a_round_robin_front() {
    let redis = Redis::start();
    let (servers, front) = group(&redis, 3).await;
    for (client, revision) in [
        ("py-2024-11-05", "2024-11-05"),
        ("py-2025-03-26", "2025-03-26"),
    ] {
        check_basic(&front, &servers, client, "/mcp", revision).await;
    }
    for (client, revision) in [
        ("py-2025-06-18", "2025-06-18"),
        ("py-2025-11-25", "2025-11-25"),
        ("py-2026-07-28-pinned", "2026-07-28"),
        ("py-2026-07-28-auto", "2026-07-28"),
    ] {
        check_ask(&front, &servers, client, revision).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sse_clients_complete_their_sessions_through_a_round_robin_front() {
    let redis = Redis::start();
    let (servers, front) = group(&redis, 3).await;
    // 2024-11-05's HTTP+SSE: the GET /sse stream on one replica, the POSTs to /messages
    // spread over all three and relayed to it. Two of these releases speak nothing else.
    for client in [
        "ts-2024-11-05",
        "ts-sse-1.9.0",
        "py-2024-11-05",
        "py-sse-1.7.1",
    ] {
        check_basic(&front, &servers, client, "/sse", "2024-11-05").await;
    }
}

/// One client's outcome in the load run.
#[derive(Default)]
struct Tally {
    answered: AtomicUsize,
    errors: AtomicUsize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_replica_mid_load_loses_only_what_it_was_running() {
    const CLIENTS: usize = 8;
    const CALLS: usize = 40;
    let redis = Redis::start();
    let (mut servers, front) = group(&redis, 3).await;
    let http = Http::new(&front);
    // Sessions of two legacy revisions, opened through the front (so on every replica).
    let mut sessions = Vec::new();
    for i in 0..CLIENTS {
        let revision = ["2025-06-18", "2025-11-25"][i % 2];
        sessions.push(http.session(revision, json!({})).await);
    }
    let tally = Arc::new(Tally::default());
    let mut tasks = Vec::new();
    for (c, session) in sessions.iter().cloned().enumerate() {
        let (http, tally) = (http.clone(), Arc::clone(&tally));
        tasks.push(tokio::spawn(async move {
            for n in 0..CALLS {
                let message = format!("client {c} call {n} session {session}");
                let call = request(
                    n as i64,
                    "tools/call",
                    json!({"name": "echo", "arguments": {"message": message}}),
                );
                // Bounded by the kit's patience: an answer, an error status or a cut
                // connection — never silence.
                let sent = http
                    .post_request(&[("mcp-session-id", &session)], &call)
                    .send()
                    .await;
                let body = match sent {
                    Ok(r) if r.status() == StatusCode::OK => r.text().await,
                    Ok(r) => {
                        assert!(
                            r.status().is_server_error(),
                            "client {c}: {} {:?}",
                            r.status(),
                            r.text().await
                        );
                        tally.errors.fetch_add(1, Ordering::SeqCst);
                        continue;
                    }
                    Err(e) => {
                        assert!(!e.is_timeout(), "client {c}: silence: {e}");
                        tally.errors.fetch_add(1, Ordering::SeqCst);
                        continue;
                    }
                };
                let Ok(body) = body else {
                    tally.errors.fetch_add(1, Ordering::SeqCst);
                    continue;
                };
                let answer: Value = serde_json::from_str(&body).unwrap();
                // Its own answer, never another caller's.
                assert_eq!(text(&answer["result"]), message, "client {c}: {answer}");
                tally.answered.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    // A third of the way in, replica 1 is killed (SIGKILL: no grace, no goodbye).
    let total = CLIENTS * CALLS;
    kit::eventually("a third of the calls answered", || {
        tally.answered.load(Ordering::SeqCst) >= total / 3
    })
    .await;
    let killed = Command::new("kill")
        .args(["-KILL", &servers[1].pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    for task in tasks {
        task.await.unwrap();
    }
    let (answered, errors) = (
        tally.answered.load(Ordering::SeqCst),
        tally.errors.load(Ordering::SeqCst),
    );
    eprintln!("{answered} answered, {errors} errors of {total} calls; replica 1 killed");
    assert_eq!(answered + errors, total);
    // Each client had one call outstanding: at most that one was running on the killed
    // replica.
    assert!(errors <= CLIENTS, "{errors} errors for {CLIENTS} clients");
    // Every session goes on, through the front, on the two replicas left.
    for (c, session) in sessions.iter().enumerate() {
        for n in 0..3 {
            let message = format!("after the kill: client {c} call {n}");
            let call = request(
                1000 + n,
                "tools/call",
                json!({"name": "echo", "arguments": {"message": message}}),
            );
            let reply = http.post(&[("mcp-session-id", session)], &call).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            assert_eq!(text(&reply.json()["result"]), message);
        }
    }
    servers.remove(1);
}
