//! The client's stream idle bound (`ClientBuilder::stream_idle_timeout`) against this
//! crate's HTTP server, with and without the server's keep-alive: keep-alive comments
//! keep a slow call's stream alive past the bound (the client reads and ignores them);
//! without them a silent stream is dead once the bound passes — a legacy session resumes
//! it with `Last-Event-ID` and still gets its answer, a 2026-07-28 call and an HTTP+SSE
//! call fail with an error that says what happened.

#![allow(clippy::unwrap_used)]

mod kit;

use std::time::Duration;

use mcp_runtime::model::{Content, Implementation, Tool, ToolResult};
use mcp_runtime::{ProtocolVersion, Server, ToolError};
use mcp_runtime_client::{Client, ClientBuilder, RequestOptions};
use mcp_runtime_http::HttpConfig;
use serde_json::json;

const BOUND: Duration = Duration::from_millis(400);
const WORK: Duration = Duration::from_millis(1200);

/// `slow`: reports progress at once (so its answer is a stream), then works for [`WORK`]
/// without a word.
fn server() -> Server {
    Server::builder(Implementation::new("idle", "1"))
        .tool(
            Tool::new("slow", "Reports progress, then is silent a while")
                .input_schema(json!({"type": "object", "properties": {}})),
            |_, ctx| async move {
                ctx.progress(1.0, Some(2.0), None).await;
                tokio::time::sleep(WORK).await;
                Ok::<_, ToolError>(ToolResult::text("done"))
            },
        )
        .build()
}

async fn serve(keep_alive: Option<Duration>) -> String {
    let mut config = HttpConfig::default();
    config.keep_alive = keep_alive;
    kit::http::serve(server(), config).await.base().to_owned()
}

fn client(version: &str) -> ClientBuilder {
    Client::builder(Implementation::new("idle-test", "1"))
        .timeout(kit::patience())
        .stream_idle_timeout(Some(BOUND))
        .pin(ProtocolVersion::parse(version).unwrap())
}

async fn call_slow(client: &Client) -> Result<String, mcp_runtime_client::ClientError> {
    let options = RequestOptions::new().on_progress(|_| {});
    let result = client.call_tool_with("slow", json!({}), options).await?;
    Ok(match &result.content[0] {
        Content::Text { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    })
}

#[tokio::test]
async fn keep_alives_hold_a_silent_stream_past_the_bound_in_every_era() {
    let base = serve(Some(Duration::from_millis(100))).await;
    for version in ["2026-07-28", "2025-11-25"] {
        let client = client(version)
            .connect_url(&format!("{base}/mcp"))
            .await
            .unwrap();
        assert_eq!(call_slow(&client).await.unwrap(), "done", "{version}");
    }
    let client = client("2024-11-05")
        .connect_sse(&format!("{base}/sse"))
        .await
        .unwrap();
    assert_eq!(call_slow(&client).await.unwrap(), "done", "HTTP+SSE");
}

#[tokio::test]
async fn a_silent_stream_fails_a_2026_call_with_a_clear_error() {
    let base = serve(None).await;
    let client = client("2026-07-28")
        .connect_url(&format!("{base}/mcp"))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let error = call_slow(&client).await.unwrap_err();
    assert!(
        error.message().contains("silent for longer than"),
        "{error}"
    );
    assert!(
        started.elapsed() < WORK,
        "failed after the bound, not the work"
    );
}

#[tokio::test]
async fn a_silent_legacy_stream_is_resumed_and_answered() {
    let base = serve(None).await;
    let client = client("2025-11-25")
        .connect_url(&format!("{base}/mcp"))
        .await
        .unwrap();
    // Each silent connection is given up after the bound and resumed with
    // `Last-Event-ID`; the answer comes on a resumed one.
    assert_eq!(call_slow(&client).await.unwrap(), "done");
}

#[tokio::test]
async fn a_silent_http_sse_stream_with_a_request_waiting_is_dead() {
    let base = serve(None).await;
    let client = client("2024-11-05")
        .connect_sse(&format!("{base}/sse"))
        .await
        .unwrap();
    // Idle with nothing waiting: left alone past the bound.
    tokio::time::sleep(BOUND * 2).await;
    assert_eq!(client.list_tools(None).await.unwrap().items.len(), 1);
    let error = call_slow(&client).await.unwrap_err();
    assert!(
        error.message().contains("silent for longer than"),
        "{error}"
    );
}
