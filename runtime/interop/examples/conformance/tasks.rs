//! The conformance fixture's tools for the `tasks-*` scenarios (the 2026-07-28
//! `io.modelcontextprotocol/tasks` extension, SEP-2663; 2025-11-25 tasks for clients that
//! ask for one), apart from `conformance_server.rs` to keep each file short.

use std::time::Duration;

use mcp_runtime::model::{Elicitation, TaskSupport, Tool, ToolResult};
use mcp_runtime::{RpcError, ToolError};
use serde_json::{json, Value};

use super::{elicit, field, ok, tool, tool_with_args};

/// The tools of the `tasks-*` scenarios (2026-07-28 extension `io.modelcontextprotocol/tasks`,
/// SEP-2663; 2025-11-25 tasks for clients that ask for one): a sync tool, and tools that run
/// as tasks — slow, failing in the result, failing with a protocol error, asking the user
/// once or twice at once, and one that asks before it becomes a task.
pub(crate) trait TasksFixture {
    fn tasks_fixture(self) -> Self;
}

impl TasksFixture for mcp_runtime::ServerBuilder {
    fn tasks_fixture(self) -> Self {
        let task = |t: Tool, support| t.task_support(support);
        let confirm_schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]});
        self.tool(
            tool_with_args(
                "greet",
                "Greet",
                "Says hello (never a task)",
                json!({"name": {"type": "string"}}),
                &["name"],
            ),
            |args, _| async move {
                ok(ToolResult::text(format!(
                    "Hello, {}!",
                    args.get("name").and_then(Value::as_str).unwrap_or("World")
                )))
            },
        )
        .tool(
            task(
                tool_with_args(
                    "slow_compute",
                    "Slow compute",
                    "Sleeps `seconds`, then answers (a task when the client supports tasks)",
                    json!({"seconds": {"type": "number"}, "label": {"type": "string"}}),
                    &[],
                ),
                TaskSupport::Optional,
            ),
            |args, ctx| async move {
                let seconds = args
                    .get("seconds")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    .clamp(0.0, 3600.0);
                let label = args
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or("compute")
                    .to_owned();
                ctx.task_status(format!("computing {label} for {seconds} s"))
                    .await;
                tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                ok(ToolResult::text(format!("{label}: done after {seconds} s")))
            },
        )
        .tool(
            task(
                tool(
                    "failing_job",
                    "Failing job",
                    "Runs only as a task, then reports a tool error",
                ),
                TaskSupport::Required,
            ),
            |_, _| async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                ok(ToolResult::error("failing_job failed, as it always does"))
            },
        )
        .tool(
            task(
                tool(
                    "protocol_error_job",
                    "Protocol error job",
                    "Runs as a task, then fails with a protocol error",
                ),
                TaskSupport::Optional,
            ),
            |_, _| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err::<ToolResult, _>(ToolError::from(RpcError::internal(
                    "protocol_error_job: the job crashed",
                )))
            },
        )
        .tool(
            task(
                tool_with_args(
                    "confirm_delete",
                    "Confirm delete",
                    "Asks the user to confirm, then deletes (a task)",
                    json!({"filename": {"type": "string"}}),
                    &[],
                ),
                TaskSupport::Optional,
            ),
            move |args, ctx| {
                let schema = confirm_schema.clone();
                async move {
                    let file = args
                        .get("filename")
                        .and_then(Value::as_str)
                        .unwrap_or("file")
                        .to_owned();
                    let answer = ctx
                        .elicit_with_schema(format!("Delete {file}?"), schema)
                        .await?;
                    Ok(match answer {
                        Elicitation::Accept(c) if c.get("confirm") == Some(&json!(true)) => {
                            ToolResult::text(format!("Deleted {file}"))
                        }
                        _ => ToolResult::text(format!("Kept {file}")),
                    })
                }
            },
        )
        .tool(
            task(
                tool(
                    "multi_input",
                    "Several inputs",
                    "Asks two things at once (a task)",
                ),
                TaskSupport::Optional,
            ),
            |_, ctx| async move {
                let answers = ctx
                    .ask(vec![
                        (None, elicit("First name?", "name")),
                        (None, elicit("Second name?", "name")),
                    ])
                    .await?;
                ok(ToolResult::text(format!(
                    "Got {} and {}",
                    field(&answers[0], "name"),
                    field(&answers[1], "name")
                )))
            },
        )
        .tool(
            task(
                tool(
                    "test_tool_with_task",
                    "Ask, then a task",
                    "Asks the user's name, then becomes a task that greets them",
                ),
                TaskSupport::Required,
            )
            .task_started_by_handler(),
            |_, ctx| async move {
                let answer = ctx
                    .ask(vec![(
                        Some("user_name".into()),
                        elicit("What is your name?", "name"),
                    )])
                    .await?;
                let name = field(&answer[0], "name");
                ctx.start_task().await?;
                tokio::time::sleep(Duration::from_millis(200)).await;
                ok(ToolResult::text(format!("Hello, {name}! (from a task)")))
            },
        )
    }
}
