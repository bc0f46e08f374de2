//! Task state shared by replicas: two servers in this process, each with
//! `HttpConfig::store(RedisStore)` on one real `redis-server` (which then holds task state
//! too). A task created through one replica is polled through the other until it
//! completes there with its result; the bound on tasks per client counts the tasks kept
//! by every replica.
//!
//! Needs `redis-server` on the PATH (see tests/replicas.rs).

#![allow(clippy::unwrap_used)]

mod kit;

use std::time::Duration;

use kit::http::{serve, Http};
use kit::redis::Redis;
use kit::{modern_meta, request, MODERN};
use mcp_runtime::model::{Implementation, TaskSupport, Tool};
use mcp_runtime::transport::http::{HttpConfig, RedisStore};
use mcp_runtime::{Server, TaskOptions};
use serde_json::{json, Value};

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
        .build()
}

fn caps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

async fn call(http: &Http, id: i64, ms: u64) -> Value {
    let params = json!({"name": "slow", "arguments": {"ms": ms}, "_meta": modern_meta(caps())});
    http.post_modern(id, "tools/call", params).await.json()
}

/// `tasks/get` with the headers SEP-2663 asks for (`Mcp-Name` is the task id).
async fn get(http: &Http, id: i64, task: &str) -> Value {
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tasks/get"),
        ("mcp-name", task),
    ];
    let body = request(
        id,
        "tasks/get",
        json!({"taskId": task, "_meta": modern_meta(caps())}),
    );
    http.post(&headers, &body).await.json()
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
