//! Task state shared by replicas: two servers in this process, each with
//! `HttpConfig::store(RedisStore)` on one real `redis-server` (which then holds task state
//! too). A task created through one replica is polled through the other until it
//! completes there with its result; the bound on tasks per client counts the tasks kept
//! by every replica. A `tasks/cancel` or `tasks/update` served by the replica that does
//! not run the task's handler reaches the handler (through the replicas' channel): it
//! sees the cancellation, or gets its answers and completes. A `subscriptions/listen`
//! stream on the replica that does not run a task hears the task change.
//!
//! Needs `redis-server` on the PATH (see tests/replicas.rs).

#![allow(clippy::unwrap_used)]

mod kit;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kit::http::{serve, Http};
use kit::redis::Redis;
use kit::{modern_meta, request, MODERN};
use mcp_runtime::model::{Elicitation, Implementation, TaskSupport, Tool};
use mcp_runtime::{Server, TaskOptions, ToolError};
use mcp_runtime_http::HttpConfig;
use mcp_runtime_redis::RedisStore;
use serde_json::{json, Value};

/// Set when the `wait` handler is stopped (only one test uses it): a cancelled task's
/// handler is dropped where it runs, which is how a handler sees its cancellation.
static CANCEL_SEEN: AtomicBool = AtomicBool::new(false);

/// The same for `legacy_wait`, which the 2025-11-25 test runs.
static LEGACY_CANCEL_SEEN: AtomicBool = AtomicBool::new(false);

/// Held by a waiting handler while it runs; sets its flag when dropped.
struct Running(&'static AtomicBool);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits a minute unless dropped first (cancelled), which sets `seen`.
async fn wait_a_minute(seen: &'static AtomicBool) -> &'static str {
    let running = Running(seen);
    tokio::time::sleep(Duration::from_secs(60)).await;
    std::mem::forget(running);
    "not cancelled"
}

fn replica() -> Server {
    let mut options = TaskOptions::default();
    options.max_tasks_per_client = 2;
    Server::builder(Implementation::new("replica", "1"))
        .task_options(options)
        .tool(
            Tool::new("slow", "Waits `ms`, then answers").task_support(TaskSupport::Optional),
            |args, _| async move {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                format!("slept {ms} ms")
            },
        )
        .tool(
            Tool::new("wait", "Waits a minute, unless cancelled").task_support(TaskSupport::Optional),
            |_, _| wait_a_minute(&CANCEL_SEEN),
        )
        .tool(
            Tool::new("legacy_wait", "Waits a minute, unless cancelled")
                .task_support(TaskSupport::Optional),
            |_, _| wait_a_minute(&LEGACY_CANCEL_SEEN),
        )
        .tool(
            Tool::new("ask", "Asks a name, then greets").task_support(TaskSupport::Optional),
            |_, ctx| async move {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
                match ctx.elicit_with_schema("Name?", schema).await? {
                    Elicitation::Accept(c) => Ok::<_, ToolError>(format!(
                        "Hello, {}!",
                        c.get("name").and_then(Value::as_str).unwrap_or("?")
                    )),
                    _ => Ok("No name".to_owned()),
                }
            },
        )
        .build()
}

fn caps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

async fn call(http: &Http, id: i64, ms: u64) -> Value {
    let params = json!({"name": "slow", "arguments": {"ms": ms}, "_meta": modern_meta(caps())});
    http.post_modern(id, "tools/call", params).await.json()
}

/// A `tasks/*` request with the headers SEP-2663 asks for (`Mcp-Name` is the task id).
async fn task_request(http: &Http, id: i64, method: &str, task: &str, extra: Value) -> Value {
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", method),
        ("mcp-name", task),
    ];
    let mut params = json!({"taskId": task, "_meta": modern_meta(caps())});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    http.post(&headers, &request(id, method, params))
        .await
        .json()
}

async fn get(http: &Http, id: i64, task: &str) -> Value {
    task_request(http, id, "tasks/get", task, json!({})).await
}

/// Polls `tasks/get` through `http` until the task has `status` (about five seconds).
async fn poll_until(http: &Http, first_id: i64, task: &str, status: &str) -> Value {
    let mut last = Value::Null;
    for n in 0..200 {
        last = get(http, first_id + n, task).await;
        if last["result"]["status"] == status {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {task} never became {status}: {last}");
}

async fn two_replicas(redis: &Redis) -> Vec<Http> {
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::connect(&redis.url()).await.unwrap();
        replicas.push(serve(replica(), HttpConfig::default().store(store)).await);
    }
    replicas
}

#[tokio::test]
async fn a_task_created_on_one_replica_is_polled_and_bounded_on_another() {
    let redis = Redis::start();
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::connect(&redis.url()).await.unwrap();
        replicas.push(serve(replica(), HttpConfig::default().store(store)).await);
    }
    let (a, b) = (&replicas[0], &replicas[1]);

    let created = call(a, 1, 300).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let seen = get(b, 2, &task).await;
    assert_eq!(seen["result"]["taskId"], json!(task), "{seen}");
    let mut done = Value::Null;
    for n in 0..200 {
        let got = get(b, 10 + n, &task).await;
        if got["result"]["status"] == "completed" {
            done = got;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "slept 300 ms",
        "{done}"
    );

    // Two unexpired tasks (the ended one through A, one more through B) reach the bound
    // for this client on every replica.
    assert_eq!(call(b, 4, 60_000).await["result"]["resultType"], "task");
    let refused = call(a, 5, 60_000).await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("too many tasks"), "{refused}");
}

#[tokio::test]
async fn a_cancel_through_another_replica_stops_the_handler() {
    let redis = Redis::start();
    let replicas = two_replicas(&redis).await;
    let (a, b) = (&replicas[0], &replicas[1]);

    let params = json!({"name": "wait", "arguments": {}, "_meta": modern_meta(caps())});
    let created = a.post_modern(1, "tools/call", params).await.json();
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let cancelled = task_request(b, 2, "tasks/cancel", &task, json!({})).await;
    assert!(cancelled["result"].is_object(), "{cancelled}");
    for _ in 0..200 {
        if CANCEL_SEEN.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        CANCEL_SEEN.load(Ordering::SeqCst),
        "the handler on A never saw the cancellation served by B"
    );
    // Through either replica, the task stays cancelled (the handler's answer is dropped).
    for (n, http) in [a, b].into_iter().enumerate() {
        let got = get(http, 10 + n as i64, &task).await;
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
    }
}

#[tokio::test]
async fn answers_through_another_replica_reach_the_handler() {
    let redis = Redis::start();
    let replicas = two_replicas(&redis).await;
    let (a, b) = (&replicas[0], &replicas[1]);

    let meta = modern_meta(
        json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}),
    );
    let params = json!({"name": "ask", "arguments": {}, "_meta": meta});
    let created = a.post_modern(1, "tools/call", params).await.json();
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = poll_until(b, 100, &task, "input_required").await;
    let key = waiting["result"]["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .unwrap_or_else(|| panic!("no inputRequests: {waiting}"));
    let answers =
        json!({"inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}});
    let ack = task_request(b, 2, "tasks/update", &task, answers).await;
    assert!(ack["result"].is_object(), "{ack}");
    let done = poll_until(b, 300, &task, "completed").await;
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
}

#[tokio::test]
async fn a_2025_11_25_cancel_through_another_replica_stops_the_handler() {
    let redis = Redis::start();
    let replicas = two_replicas(&redis).await;
    let (a, b) = (&replicas[0], &replicas[1]);
    const LEGACY: &str = "2025-11-25";

    let session = a.session(LEGACY, json!({"tasks": {"cancel": {}}})).await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", LEGACY),
    ];
    let call = request(
        1,
        "tools/call",
        json!({"name": "legacy_wait", "arguments": {}, "task": {"ttl": 60000}}),
    );
    let created = a.post(&headers, &call).await.json();
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    // The session's tasks are found through either replica.
    let cancel = request(2, "tasks/cancel", json!({"taskId": task}));
    let cancelled = b.post(&headers, &cancel).await.json();
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    for _ in 0..200 {
        if LEGACY_CANCEL_SEEN.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        LEGACY_CANCEL_SEEN.load(Ordering::SeqCst),
        "the handler on A never saw the cancellation served by B"
    );
    let get = request(3, "tasks/get", json!({"taskId": task}));
    let got = a.post(&headers, &get).await.json();
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
}

#[tokio::test]
async fn a_listener_on_another_replica_hears_the_task_change() {
    let redis = Redis::start();
    let replicas = two_replicas(&redis).await;
    let (a, b) = (&replicas[0], &replicas[1]);

    let caps = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let params = json!({"name": "ask", "arguments": {}, "_meta": modern_meta(caps.clone())});
    let created = a.post_modern(1, "tools/call", params).await.json();
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    poll_until(b, 100, &task, "input_required").await;

    // B does not run the task: it hears of it through the shared store.
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "subscriptions/listen"),
    ];
    let listen = json!({"notifications": {"taskIds": [task]}, "_meta": modern_meta(caps)});
    let mut stream = b
        .post_stream(&headers, &request(2, "subscriptions/listen", listen))
        .await;
    let (_, ack) = stream.next_message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task]));
    let (_, opened) = stream.next_message().await;
    assert_eq!(opened["method"], "notifications/tasks", "{opened}");
    assert_eq!(opened["params"]["status"], "input_required", "{opened}");
    let key = opened["params"]["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .unwrap_or_else(|| panic!("no inputRequests: {opened}"));

    // Answered through A, where the handler runs: the task ends there, and B's listener
    // hears it end.
    let answers =
        json!({"inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}});
    let ack = task_request(a, 3, "tasks/update", &task, answers).await;
    assert!(ack["result"].is_object(), "{ack}");
    let done = loop {
        let (_, note) = stream.next_message().await;
        assert_eq!(note["method"], "notifications/tasks", "{note}");
        if note["params"]["status"] == "completed" {
            break note;
        }
    };
    assert_eq!(
        done["params"]["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
}
