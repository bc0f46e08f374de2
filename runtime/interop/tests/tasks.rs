//! Tasks in both eras, end to end over an in-memory stdio pair: 2025-11-25's experimental
//! tasks (capability, `execution.taskSupport`, task-augmented `tools/call`, `tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`, asks of a
//! task as session requests), each message checked against the revision's official
//! schema; the 2026-07-28 `io.modelcontextprotocol/tasks` extension (flat
//! `CreateTaskResult`, `tasks/get` with the result, error or `inputRequests` inlined,
//! `tasks/update`, `tasks/cancel`, `-32021` for a client without it; each result checked
//! against the extension's official schema when it is available); the bound on tasks
//! per client; and that a client which did not declare tasks sees exactly the messages
//! it saw before a tool opted in.

#![allow(clippy::unwrap_used)]

mod kit;

use std::time::Duration;

use kit::schema::{assert_schema_exact, check_extension_exact};
use kit::stdio::Stdio;
use kit::{code, modern_meta, MODERN};
use mcp_runtime::model::{Elicitation, Implementation, TaskSupport, Tool, ToolResult};
use mcp_runtime::{RpcError, Server, TaskOptions, ToolError};
use serde_json::{json, Value};

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn slow_tool(support: Option<TaskSupport>) -> Tool {
    let tool = Tool::new("slow", "Waits `ms`, then answers")
        .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}}));
    match support {
        Some(s) => tool.task_support(s),
        None => tool,
    }
}

/// The server under test: `slow` with the given task support (none: the server as it
/// was before tasks), and, when `tasks`, tools that ask, require a task or fail.
fn server(support: Option<TaskSupport>, tasks: bool, options: Option<TaskOptions>) -> Server {
    let mut builder = Server::builder(Implementation::new("tasks-test", "1.0.0")).tool(
        slow_tool(support),
        |args, ctx| async move {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
            ctx.progress(0.0, Some(1.0), Some("started")).await;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, ToolError>(ToolResult::text(format!("slept {ms} ms")))
        },
    );
    if tasks {
        builder = builder
            .tool(
                Tool::new("ask", "Asks a name, then greets").task_support(TaskSupport::Optional),
                |_, ctx| async move {
                    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
                    match ctx.elicit_with_schema("Name?", schema).await? {
                        Elicitation::Accept(c) => Ok::<_, ToolError>(ToolResult::text(format!(
                            "Hello, {}!",
                            c.get("name").and_then(Value::as_str).unwrap_or("?")
                        ))),
                        _ => Ok(ToolResult::text("No name")),
                    }
                },
            )
            .tool(
                Tool::new("required", "Runs only as a task").task_support(TaskSupport::Required),
                |_, _| async { "ran as a task" },
            )
            .tool(
                Tool::new("broken", "Fails with a protocol error").task_support(TaskSupport::Optional),
                |_, _| async { Err::<ToolResult, _>(ToolError::from(RpcError::internal("broken on purpose"))) },
            );
    }
    if let Some(o) = options {
        builder = builder.task_options(o);
    }
    builder.build()
}

fn task_server() -> Server {
    server(Some(TaskSupport::Optional), true, None)
}

const LEGACY: &str = "2025-11-25";

/// Reads messages until the answer to `id`, checking every notification and request the
/// server sent before it against the revision's schema; returns them and the answer.
async fn answer_with_notes(io: &mut Stdio, id: i64) -> (Vec<Value>, Value) {
    let (before, answer) = io.until_answer(&json!(id)).await;
    for note in &before {
        if note["method"] == "notifications/tasks/status" {
            assert_schema_exact(LEGACY, "TaskStatusNotification", note);
        }
    }
    (before, answer)
}

#[tokio::test]
async fn a_2025_11_25_client_runs_a_tool_as_a_task() {
    let mut io = Stdio::serve(task_server());
    let init = io
        .initialize(LEGACY, json!({"elicitation": {}, "tasks": {"cancel": {}}}))
        .await;
    assert_schema_exact(LEGACY, "InitializeResult", &init["result"]);
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    let list = io.request(1, "tools/list", None).await;
    assert_schema_exact(LEGACY, "ListToolsResult", &list["result"]);
    let support: Vec<(String, Value)> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["execution"].clone(),
            )
        })
        .collect();
    assert!(support.contains(&("required".into(), json!({"taskSupport": "required"}))));
    assert!(support.contains(&("slow".into(), json!({"taskSupport": "optional"}))));

    // Task-augmented: answered at once with the task.
    let created = io
        .request(
            2,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 200}, "task": {"ttl": 60000}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    assert_schema_exact(LEGACY, "CreateTaskResult", &created["result"]);
    let task = &created["result"]["task"];
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);

    // tasks/result waits for the end, then answers what the call would have.
    io.send(&kit::request(3, "tasks/result", json!({"taskId": id})))
        .await;
    let (before, payload) = answer_with_notes(&mut io, 3).await;
    assert_schema_exact(LEGACY, "CallToolResult", &payload["result"]);
    assert_eq!(payload["result"]["content"][0]["text"], "slept 200 ms");
    assert_eq!(
        payload["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
    // The progress token stays valid for the task's life; the end is announced.
    assert!(before
        .iter()
        .any(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "p"));
    assert!(before.iter().any(
        |m| m["method"] == "notifications/tasks/status" && m["params"]["status"] == "completed"
    ));

    let got = io.request(4, "tasks/get", json!({"taskId": id})).await;
    assert_schema_exact(LEGACY, "GetTaskResult", &got["result"]);
    assert_eq!(got["result"]["status"], "completed");
    let listed = io.request(5, "tasks/list", json!({})).await;
    assert_schema_exact(LEGACY, "ListTasksResult", &listed["result"]);
    assert_eq!(listed["result"]["tasks"][0]["taskId"], json!(id));
    // A terminal task cannot be cancelled.
    let refused = io.request(6, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(code(&refused), -32602);

    // Cancellation: the status is cancelled before the answer, and stays so.
    let created = io
        .request(
            7,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60000}, "task": {}}),
        )
        .await;
    let long = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, cancelled) = {
        io.send(&kit::request(8, "tasks/cancel", json!({"taskId": long})))
            .await;
        answer_with_notes(&mut io, 8).await
    };
    assert_schema_exact(LEGACY, "CancelTaskResult", &cancelled["result"]);
    assert_eq!(cancelled["result"]["status"], "cancelled");
    let got = io.request(9, "tasks/get", json!({"taskId": long})).await;
    assert_eq!(got["result"]["status"], "cancelled");

    // A tool that requires a task, called without one; one that forbids it, with one.
    let required = io
        .request(
            10,
            "tools/call",
            json!({"name": "required", "arguments": {}}),
        )
        .await;
    assert_eq!(code(&required), -32601);
    let unknown = io
        .request(11, "tasks/get", json!({"taskId": "no-such-task"}))
        .await;
    assert_eq!(code(&unknown), -32602);
    io.close().await;
}

#[tokio::test]
async fn a_2025_11_25_task_asks_the_client_on_the_session() {
    let mut io = Stdio::serve(task_server());
    io.open(LEGACY, json!({"elicitation": {}})).await;
    let created = io
        .request(
            1,
            "tools/call",
            json!({"name": "ask", "arguments": {}, "task": {}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The elicitation arrives on the session; meanwhile the task is input_required.
    let ask = loop {
        let m = io.recv().await;
        if m["method"] == "elicitation/create" {
            break m;
        }
        assert_eq!(m["method"], "notifications/tasks/status", "{m}");
        assert_schema_exact(LEGACY, "TaskStatusNotification", &m);
    };
    assert_eq!(
        ask["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id),
        "{ask}"
    );
    kit::schema::assert_schema_exact(LEGACY, "ElicitRequest", &ask);
    let got = io.request(2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "input_required");
    io.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    io.send(&kit::request(3, "tasks/result", json!({"taskId": id})))
        .await;
    let (_, payload) = answer_with_notes(&mut io, 3).await;
    assert_eq!(payload["result"]["content"][0]["text"], "Hello, Ada!");
    io.close().await;
}

/// A 2026-07-28 request's params with `_meta` declaring `capabilities`.
fn modern(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = modern_meta(capabilities);
    params
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

/// Checks a 2026-07-28 tasks-extension result against the extension's official schema
/// (an exact instance of `def`), when that schema is available here; returns it.
fn ext_exact<'a>(def: &str, answer: &'a Value) -> &'a Value {
    let result = &answer["result"];
    assert!(result.is_object(), "no result: {answer}");
    check_extension_exact(TASKS, def, result);
    result
}

/// Polls `tasks/get` until `status`, checking every answer against the extension schema.
async fn poll_until(io: &mut Stdio, next_id: &mut i64, task: &str, status: &str) -> Value {
    for _ in 0..200 {
        *next_id += 1;
        let got = io
            .request(
                *next_id,
                "tasks/get",
                modern(json!({"taskId": task}), with_tasks()),
            )
            .await;
        let result = ext_exact("GetTaskResult", &got);
        if result["status"] == status {
            return result.clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {task} never reached {status}");
}

#[tokio::test]
async fn a_2026_07_28_client_of_the_extension_polls_updates_and_cancels() {
    let mut io = Stdio::serve(task_server());
    let mut n = 100;
    let discovered = io
        .request(1, "server/discover", modern(json!({}), json!({})))
        .await;
    assert_eq!(
        discovered["result"]["capabilities"]["extensions"][TASKS],
        json!({})
    );
    assert!(discovered["result"]["capabilities"].get("tasks").is_none());

    let created = io
        .request(
            2,
            "tools/call",
            modern(
                json!({"name": "slow", "arguments": {"ms": 100}}),
                with_tasks(),
            ),
        )
        .await;
    let r = ext_exact("CreateTaskResult", &created);
    assert_eq!(r["resultType"], "task");
    assert_eq!(r["status"], "working");
    assert!(r["ttlMs"].as_u64().is_some() && r["pollIntervalMs"].as_u64().is_some());
    assert!(r.get("task").is_none() && r.get("ttl").is_none());
    let id = r["taskId"].as_str().unwrap().to_owned();
    let done = poll_until(&mut io, &mut n, &id, "completed").await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "slept 100 ms");

    // Asks become inputRequests, answered with tasks/update.
    let created = io
        .request(
            3,
            "tools/call",
            modern(json!({"name": "ask", "arguments": {}}), with_tasks()),
        )
        .await;
    let asking = ext_exact("CreateTaskResult", &created)["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let waiting = poll_until(&mut io, &mut n, &asking, "input_required").await;
    let (key, request) = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let ack = io
        .request(
            4,
            "tasks/update",
            modern(
                json!({"taskId": asking, "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}, "unknown": {}}}),
                with_tasks(),
            ),
        )
        .await;
    assert_eq!(
        ext_exact("UpdateTaskResult", &ack)["resultType"],
        "complete"
    );
    assert!(ack["result"].get("taskId").is_none());
    let done = poll_until(&mut io, &mut n, &asking, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");

    // A protocol error fails the task, with the error inlined.
    let created = io
        .request(
            5,
            "tools/call",
            modern(json!({"name": "broken", "arguments": {}}), with_tasks()),
        )
        .await;
    let broken = ext_exact("CreateTaskResult", &created)["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = poll_until(&mut io, &mut n, &broken, "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed.get("result").is_none());

    // Cancellation is acknowledged empty, and settles to cancelled.
    let created = io
        .request(
            6,
            "tools/call",
            modern(
                json!({"name": "slow", "arguments": {"ms": 60000}}),
                with_tasks(),
            ),
        )
        .await;
    let long = ext_exact("CreateTaskResult", &created)["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let ack = io
        .request(
            7,
            "tasks/cancel",
            modern(json!({"taskId": long}), with_tasks()),
        )
        .await;
    assert_eq!(
        ext_exact("CancelTaskResult", &ack)["resultType"],
        "complete"
    );
    // Idempotent: cancelling a task that already ended is acknowledged the same way.
    poll_until(&mut io, &mut n, &long, "cancelled").await;
    let again = io
        .request(
            12,
            "tasks/cancel",
            modern(json!({"taskId": long}), with_tasks()),
        )
        .await;
    assert_eq!(
        ext_exact("CancelTaskResult", &again)["resultType"],
        "complete"
    );

    // Params the extension's types do not admit are -32602.
    for (id, method) in [
        (13, "tasks/get"),
        (14, "tasks/cancel"),
        (15, "tasks/update"),
    ] {
        let refused = io
            .request(id, method, modern(json!({"taskId": 7}), with_tasks()))
            .await;
        assert_eq!(code(&refused), -32602, "{method}: {refused}");
    }

    // Without the extension: the methods and the required tool are -32021, an optional
    // tool runs directly.
    let refused = io
        .request(8, "tasks/get", modern(json!({"taskId": long}), json!({})))
        .await;
    assert_eq!(code(&refused), -32021);
    let refused = io
        .request(
            9,
            "tools/call",
            modern(json!({"name": "required", "arguments": {}}), json!({})),
        )
        .await;
    assert_eq!(code(&refused), -32021);
    assert!(refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object());
    let direct = io
        .request(
            10,
            "tools/call",
            modern(json!({"name": "slow", "arguments": {"ms": 1}}), json!({})),
        )
        .await;
    assert_eq!(direct["result"]["content"][0]["text"], "slept 1 ms");
    let removed = io
        .request(
            11,
            "tasks/result",
            modern(json!({"taskId": long}), with_tasks()),
        )
        .await;
    assert_eq!(code(&removed), -32601);
    io.close().await;
}

#[tokio::test]
async fn tasks_per_client_are_bounded_with_a_clear_error() {
    let mut options = TaskOptions::default();
    options.max_tasks_per_client = 2;
    let mut io = Stdio::serve(server(Some(TaskSupport::Optional), true, Some(options)));
    let call = |id: i64| {
        kit::request(
            id,
            "tools/call",
            modern(
                json!({"name": "slow", "arguments": {"ms": 60000}}),
                with_tasks(),
            ),
        )
    };
    for id in 1..=2 {
        io.send(&call(id)).await;
        let created = io.answer(&json!(id)).await;
        assert_eq!(created["result"]["resultType"], "task", "{created}");
    }
    io.send(&call(3)).await;
    let refused = io.answer(&json!(3)).await;
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("too many tasks") && message.contains('2'),
        "{refused}"
    );
    io.close().await;
}

/// Every message a client sees, over a whole conversation, for a server whose `slow`
/// tool has `support`.
async fn conversation(support: Option<TaskSupport>, version: &str) -> Vec<Value> {
    let mut io = Stdio::serve(server(support, false, None));
    let mut seen = Vec::new();
    if version == MODERN {
        for (id, method, params) in [
            (1, "tools/list", json!({})),
            (
                2,
                "tools/call",
                json!({"name": "slow", "arguments": {"ms": 1}, "_meta": {"progressToken": 1}}),
            ),
        ] {
            let (before, answer) = io
                .exchange(id, method, modern(params, json!({"elicitation": {}})))
                .await;
            seen.extend(before);
            seen.push(answer);
        }
    } else {
        seen.push(io.initialize(version, json!({"elicitation": {}})).await);
        for (id, method, params) in [
            (1, "tools/list", json!({})),
            (
                2,
                "tools/call",
                json!({"name": "slow", "arguments": {"ms": 1}, "_meta": {"progressToken": 1}}),
            ),
        ] {
            let (before, answer) = io.exchange(id, method, params).await;
            seen.extend(before);
            seen.push(answer);
        }
    }
    io.close().await;
    seen
}

#[tokio::test]
async fn clients_that_did_not_declare_tasks_see_the_same_messages_as_before() {
    for version in ["2025-06-18", "2025-03-26", MODERN] {
        let before = conversation(None, version).await;
        let after = conversation(Some(TaskSupport::Optional), version).await;
        assert_eq!(before, after, "{version}");
    }
    // 2025-11-25: only the capability and the tool's `execution` tell that tasks exist;
    // an ordinary call is answered as before.
    let before = conversation(None, LEGACY).await;
    let after = conversation(Some(TaskSupport::Optional), LEGACY).await;
    assert_eq!(before.len(), after.len());
    assert!(after[0]["result"]["capabilities"]["tasks"].is_object());
    assert_eq!(
        after[1]["result"]["tools"][0]["execution"]["taskSupport"],
        "optional"
    );
    assert_eq!(before[2..], after[2..]);
}

/// Calls `tool` as a 2026-07-28 task; returns its id.
async fn start_modern_task(io: &mut Stdio, id: i64, tool: &str, arguments: Value) -> String {
    let created = io
        .request(
            id,
            "tools/call",
            modern(json!({"name": tool, "arguments": arguments}), with_tasks()),
        )
        .await;
    ext_exact("CreateTaskResult", &created)["taskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Reads `notifications/tasks` of the listen stream `listen` until `done` holds of the
/// statuses heard so far (by task id, in order); each is checked against the extension's
/// schema and must carry the stream's subscription id. Returns the notifications.
async fn hear_tasks(
    io: &mut Stdio,
    listen: &str,
    heard: &mut std::collections::HashMap<String, Vec<Value>>,
    done: impl Fn(&std::collections::HashMap<String, Vec<Value>>) -> bool,
) {
    while !done(heard) {
        let note = io.recv().await;
        assert_eq!(note["method"], "notifications/tasks", "{note}");
        assert_eq!(
            note["params"]["_meta"][mcp_runtime::server::SUBSCRIPTION_ID],
            listen,
            "{note}"
        );
        check_extension_exact(TASKS, "TaskStatusNotification", &note);
        let id = note["params"]["taskId"].as_str().unwrap().to_owned();
        heard.entry(id).or_default().push(note["params"].clone());
    }
}

fn last_status<'a>(heard: &'a std::collections::HashMap<String, Vec<Value>>, id: &str) -> &'a str {
    heard
        .get(id)
        .and_then(|h| h.last())
        .and_then(|p| p["status"].as_str())
        .unwrap_or("")
}

#[tokio::test]
async fn a_2026_07_28_listener_hears_its_tasks_change_until_they_end() {
    let mut io = Stdio::serve(task_server());
    let slow = start_modern_task(&mut io, 1, "slow", json!({"ms": 300})).await;
    let ask = start_modern_task(&mut io, 2, "ask", json!({})).await;
    let params = modern(
        json!({"notifications": {"taskIds": [slow, ask, "no-such-task"]}}),
        with_tasks(),
    );
    io.send(&json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen", "params": params}))
        .await;
    let ack = io.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // Only the caller's own, existing tasks are agreed to.
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([slow, ask])
    );

    // Each task's state when the stream opened, then every change, up to its end.
    let mut heard = std::collections::HashMap::new();
    hear_tasks(&mut io, "listen", &mut heard, |h| {
        last_status(h, &slow) == "completed" && last_status(h, &ask) == "input_required"
    })
    .await;
    let done = heard[&slow].last().unwrap();
    assert_eq!(done["result"]["content"][0]["text"], "slept 300 ms");
    let waiting = heard[&ask].last().unwrap();
    let key = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    io.send(&kit::request(
        3,
        "tasks/update",
        modern(
            json!({"taskId": ask, "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}}),
            with_tasks(),
        ),
    ))
    .await;
    let (notes, ack) = io.until_answer(&json!(3)).await;
    assert!(ack.get("result").is_some(), "{ack}");
    for note in notes {
        let id = note["params"]["taskId"].as_str().unwrap().to_owned();
        heard.entry(id).or_default().push(note["params"].clone());
    }
    hear_tasks(&mut io, "listen", &mut heard, |h| {
        last_status(h, &ask) == "completed"
    })
    .await;
    assert_eq!(
        heard[&ask].last().unwrap()["result"]["content"][0]["text"],
        "Hello, Ada!"
    );
    // No state is told twice, and nothing follows a task's end.
    for (id, states) in &heard {
        for pair in states.windows(2) {
            assert_ne!(pair[0], pair[1], "{id}: the same state twice");
        }
        let ends = states
            .iter()
            .filter(|s| {
                ["completed", "failed", "cancelled"].contains(&s["status"].as_str().unwrap())
            })
            .count();
        assert_eq!(ends, 1, "{id}: {states:?}");
    }
    io.close().await;
}

#[tokio::test]
async fn a_listener_that_did_not_declare_tasks_cannot_ask_for_task_notifications() {
    let mut io = Stdio::serve(task_server());
    let task = start_modern_task(&mut io, 1, "slow", json!({"ms": 50})).await;
    let refused = io
        .request(
            2,
            "subscriptions/listen",
            modern(
                json!({"notifications": {"taskIds": [task]}}),
                json!({"elicitation": {}}),
            ),
        )
        .await;
    assert_eq!(code(&refused), -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
        json!({})
    );
    io.close().await;
}
