//! Issue 18 behind a load balancer: three replicas of the example (`conformance_server
//! --http ADDR --redis URL`, one `MCP_STATE_KEY`) on a real `redis-server`, behind the
//! kit's round-robin front with no affinity (`kit::front`: each request to the next
//! replica). Official SDK clients complete their sessions through it (tools listed and
//! called, sampling and elicitation answered — as server-to-client requests through other
//! replicas before 2026-07-28, as `input_required` retries on 2026-07-28); and a load run
//! of unique echo messages from several sessions loses only what the replica killed in
//! its middle was running (each such client gets an error, never silence, never another's
//! answer), while every session goes on on the other replicas.
//!
//! Needs `redis-server` on the PATH (see tests/replicas.rs) and the pinned TypeScript
//! clients (installed on first use by `kit::pinned`).

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

/// Runs the pinned client `id` (its `ask` scenario) against `url`: its summary.
async fn run_client(id: &'static str, url: String) -> Value {
    tokio::task::spawn_blocking(move || {
        pinned::ensure_client(id);
        let out = Command::new("bash")
            .arg(pinned::clients_src().join("run-client.sh"))
            .env("MCP_CLIENTS_DIR", pinned::clients_dir())
            .args([id, "--scenario", "ask", "--url", &url])
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_clients_complete_their_sessions_through_a_round_robin_front() {
    let redis = Redis::start();
    let (servers, front) = group(&redis, 3).await;
    let logs = || {
        servers
            .iter()
            .map(HttpServer::log)
            .collect::<Vec<_>>()
            .join("\n---\n")
    };
    for (client, revision, asked_by_request) in [
        ("ts-2025-06-18", "2025-06-18", true),
        ("ts-2025-11-25", "2025-11-25", true),
        ("ts-2026-07-28-pinned", "2026-07-28", false),
    ] {
        let s = run_client(client, format!("{front}/mcp")).await;
        assert_eq!(s["ok"], true, "{client}: {s}\n{}", logs());
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
        // How the server asked: requests (answered through whichever replica the front
        // chose) or input_required retries (verified on whichever replica).
        let wire = &s["wire"];
        if asked_by_request {
            assert_eq!(wire["serverRequests"], 2, "{client}: {s}");
        } else {
            assert_eq!(wire["inputRequiredResults"], 2, "{client}: {s}");
        }
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
