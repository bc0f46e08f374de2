//! The examples people copy work as their comments say: each is run as a process and
//! driven over stdio by a client of the oldest and of the newest revision.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// Sends `requests` (one per line) to the example `name` on stdio, closes its input, and
/// returns every line it wrote; the process must then exit successfully.
fn converse(name: &str, requests: &[Value]) -> Vec<Value> {
    let mut child = Command::new(support::server::example_named(name))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the example");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    let mut answers = Vec::new();
    for request in requests {
        writeln!(stdin, "{request}").expect("write");
        stdin.flush().expect("flush");
        if request.get("id").is_some() {
            let line = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("the example answered in time");
            answers.push(serde_json::from_str(&line).expect("a JSON line"));
        }
    }
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{name} exited with {status}");
    answers
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn weather_answers_a_2024_11_05_client_in_text_and_a_2026_07_28_client_structured() {
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
    );
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
    );
    let forecast = &modern[0]["result"]["tools"][0];
    assert_eq!(forecast["name"], "forecast");
    assert_eq!(forecast["annotations"]["readOnlyHint"], true);
    assert_eq!(forecast["outputSchema"]["type"], "object", "{forecast}");
    assert_eq!(
        modern[1]["result"]["structuredContent"],
        json!({"city": "Oslo", "temperature": 19.0, "conditions": "partly cloudy"})
    );
}

/// The answers in a Streamable HTTP response: a JSON body or the SSE `data:` lines.
fn answers(body: &str) -> Vec<Value> {
    if body.starts_with('{') {
        return vec![serde_json::from_str(body).expect("JSON body")];
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

#[test]
fn weather_serves_a_session_over_streamable_http() {
    let server = support::server::HttpServer::start_example("weather");
    let client = reqwest::blocking::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut req = client
            .post(server.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(id) = session {
            req = req
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-06-18");
        }
        req.send().expect("POST /mcp")
    };
    let init = post(
        None,
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
    );
    let session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    let init = answers(&init.text().expect("body"));
    assert_eq!(init[0]["result"]["serverInfo"]["title"], "Weather");
    let initialized = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(initialized.status(), reqwest::StatusCode::ACCEPTED);
    let call = post(
        Some(&session),
        request(
            2,
            "tools/call",
            json!({"name": "forecast", "arguments": {"city": "Lisbon"}}),
        ),
    );
    let call = answers(&call.text().expect("body"));
    let last = call.last().expect("an answer");
    assert_eq!(
        last["result"]["structuredContent"]["city"],
        "Lisbon",
        "{}",
        server.log()
    );
}
