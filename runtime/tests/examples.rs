//! The examples people copy work as their comments say: each is run as a process and
//! driven over stdio by a client of the oldest and of the newest revision.

mod kit;

use kit::http::Http;
use kit::process::HttpServer;
use kit::stdio::Stdio;
use reqwest::StatusCode;
use serde_json::{json, Value};

/// Sends `messages` in order to the example `name` on stdio; each request's answer must be
/// the next thing it writes. Then closes its input: it must write nothing more and exit
/// successfully. Returns the answers.
async fn converse(name: &str, messages: &[Value]) -> Vec<Value> {
    let mut example = Stdio::spawn_example(name);
    let mut answers = Vec::new();
    for message in messages {
        example.send(message).await;
        if let Some(id) = message.get("id") {
            answers.push(example.answer(id).await);
        }
    }
    example.finish().await;
    answers
}

fn request(id: i64, method: &str, params: Value) -> Value {
    kit::request(id, method, params)
}

#[tokio::test]
async fn weather_answers_a_2024_11_05_client_in_text_and_a_2026_07_28_client_structured() {
    let legacy = converse(
        "weather",
        &[
            request(
                1,
                "initialize",
                json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            ),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            request(
                2,
                "tools/call",
                json!({"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}),
            ),
            request(
                3,
                "resources/read",
                json!({"uri": "weather://Lisbon/today"}),
            ),
            request(
                4,
                "prompts/get",
                json!({"name": "packing_list", "arguments": {"city": "Nairobi"}}),
            ),
        ],
    )
    .await;
    assert_eq!(legacy[0]["result"]["protocolVersion"], "2024-11-05");
    let call = &legacy[1]["result"];
    assert!(call.get("structuredContent").is_none(), "{call}");
    let text: Value =
        serde_json::from_str(call["content"][0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(
        text,
        json!({"city": "Oslo", "temperature": 20.0, "conditions": "partly cloudy"})
    );
    assert_eq!(
        legacy[2]["result"]["contents"][0]["text"],
        "Lisbon: 19 °C, partly cloudy"
    );
    assert!(legacy[3]["result"]["messages"][0]["content"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("Nairobi")));

    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let modern = converse(
        "weather",
        &[
            request(1, "tools/list", json!({"_meta": meta})),
            request(
                2,
                "tools/call",
                json!({"name": "forecast", "arguments": {"city": "Oslo"}, "_meta": meta}),
            ),
        ],
    )
    .await;
    let forecast = &modern[0]["result"]["tools"][0];
    assert_eq!(forecast["name"], "forecast");
    assert_eq!(forecast["annotations"]["readOnlyHint"], true);
    assert_eq!(forecast["outputSchema"]["type"], "object", "{forecast}");
    assert_eq!(
        modern[1]["result"]["structuredContent"],
        json!({"city": "Oslo", "temperature": 19.0, "conditions": "partly cloudy"})
    );
}

#[tokio::test]
async fn weather_serves_a_session_over_streamable_http() {
    let server = HttpServer::start_example("weather");
    let http = Http::new(&server.url(""));
    let init = http
        .post(
            &[],
            &request(
                1,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            ),
        )
        .await;
    let session = init.session.clone().expect("a session id");
    assert_eq!(
        init.messages()[0]["result"]["serverInfo"]["title"],
        "Weather"
    );
    let h = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let initialized = http
        .post(
            &h,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
    assert_eq!(initialized.status, StatusCode::ACCEPTED);
    let call = http
        .post(
            &h,
            &request(
                2,
                "tools/call",
                json!({"name": "forecast", "arguments": {"city": "Lisbon"}}),
            ),
        )
        .await
        .messages();
    let last = call.last().expect("an answer");
    assert_eq!(last["id"], 2, "{call:?}");
    assert_eq!(
        last["result"]["structuredContent"]["city"],
        "Lisbon",
        "{}",
        server.log()
    );
}
