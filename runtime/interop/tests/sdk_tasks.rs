//! Official SDK clients that support tasks run one to completion against the conformance
//! example: the TypeScript SDK 1.32.2 (`client.experimental.tasks.callToolStream`) and the
//! Python SDK 1.30.0 (`session.experimental.call_tool_as_task`, `poll_task`,
//! `get_task_result`), both releases of 2025-11-25's experimental tasks (pinned in
//! `tests/clients/`; the 2026-07-28 releases pinned there do not implement the tasks
//! extension), over Streamable HTTP and over stdio. Each calls `slow_compute` as a task,
//! polls it to its end, fetches its result and lists its tasks.

use std::process::Command;

use serde_json::Value;

mod kit;

use kit::pinned;
use kit::process::{example, HttpServer};

fn run_task_scenario(client: &str, server: Option<&HttpServer>) -> Value {
    pinned::ensure_client(client);
    let mut cmd = Command::new("bash");
    cmd.arg(pinned::clients_src().join("run-client.sh"))
        .env("MCP_CLIENTS_DIR", pinned::clients_dir())
        .arg(client)
        .args(["--scenario", "task"]);
    match server {
        Some(s) => cmd.arg("--url").arg(s.url("/mcp")),
        None => cmd.arg("--").arg(example()),
    };
    let out = cmd.output().unwrap_or_else(|e| panic!("{client}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let log = server.map(HttpServer::log).unwrap_or_default();
    let summary: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "{client}: no JSON summary ({e}): {stdout}\n{}\nserver: {log}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        summary["ok"],
        true,
        "{client} failed: {summary}\n{}\nserver: {log}",
        String::from_utf8_lossy(&out.stderr)
    );
    summary
}

fn check(client: &str, summary: &Value) {
    let task_id = summary["taskId"].as_str().unwrap_or_default();
    assert!(
        !task_id.is_empty(),
        "{client}: no task was created: {summary}"
    );
    assert_eq!(
        summary["taskResult"]["content"][0]["text"], "sdk: done after 1 s",
        "{client}: {summary}"
    );
    assert_eq!(
        summary["task"]["status"], "completed",
        "{client}: {summary}"
    );
    assert!(
        summary["tasksListed"]
            .as_array()
            .is_some_and(|ids| ids.iter().any(|id| id == task_id)),
        "{client}: the task is not listed: {summary}"
    );
    if let Some(messages) = summary["taskMessages"].as_array() {
        assert_eq!(
            messages.first().and_then(Value::as_str),
            Some("taskCreated"),
            "{client}: {summary}"
        );
        assert_eq!(
            messages.last().and_then(Value::as_str),
            Some("result"),
            "{client}: {summary}"
        );
    }
    if let Some(statuses) = summary["taskStatuses"].as_array() {
        assert_eq!(
            statuses.last().and_then(Value::as_str),
            Some("completed"),
            "{client}: {summary}"
        );
    }
}

#[test]
fn typescript_sdk_runs_a_task_over_http_and_stdio() {
    let server = HttpServer::start();
    check(
        "ts-2025-11-25 http",
        &run_task_scenario("ts-2025-11-25", Some(&server)),
    );
    check(
        "ts-2025-11-25 stdio",
        &run_task_scenario("ts-2025-11-25", None),
    );
}

#[test]
fn python_sdk_runs_a_task_over_http_and_stdio() {
    let server = HttpServer::start();
    check(
        "py-2025-11-25 http",
        &run_task_scenario("py-2025-11-25", Some(&server)),
    );
    check(
        "py-2025-11-25 stdio",
        &run_task_scenario("py-2025-11-25", None),
    );
}
