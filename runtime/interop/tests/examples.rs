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
async fn weather_runs_its_climate_report_as_a_task_for_clients_that_support_tasks() {
    let mut example = Stdio::spawn_example("weather");
    let meta = kit::modern_meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let created = example
        .request(
            1,
            "tools/call",
            json!({"name": "climate_report", "arguments": {"city": "Oslo", "years": 2}, "_meta": meta}),
        )
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].clone();
    let mut id = 1;
    let done = loop {
        id += 1;
        let got = example
            .request(id, "tasks/get", json!({"taskId": task, "_meta": meta}))
            .await;
        if got["result"]["status"] == "completed" {
            break got;
        }
        assert!(id < 400, "the report never completed: {got}");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "Oslo: 2 years of mild summers and wet winters"
    );
    assert_eq!(done["result"]["statusMessage"], "read 2 of 2 years");
    example.finish().await;

    // A 2025-06-18 client (no tasks in its revision) waits for the report as before.
    let legacy = converse(
        "weather",
        &[
            request(
                1,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            ),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            request(
                2,
                "tools/call",
                json!({"name": "climate_report", "arguments": {"city": "Lisbon", "years": 1}, "task": {}}),
            ),
        ],
    )
    .await;
    assert_eq!(
        legacy[1]["result"]["content"][0]["text"],
        "Lisbon: 1 years of mild summers and wet winters"
    );
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

/// The README's quickstart is `examples/quickstart.rs`, word for word (the README block is
/// also compiled, as a doctest).
#[test]
fn the_readme_quickstart_is_the_quickstart_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README");
    let example = std::fs::read_to_string(format!("{root}/runtime/core/examples/quickstart.rs"))
        .expect("example");
    let code = &example[example.find("use mcp_runtime").expect("code")..];
    let block = readme
        .split("```rust,no_run\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a rust block in the README");
    assert_eq!(block, code, "README.md and examples/quickstart.rs differ");
}

#[tokio::test]
async fn quickstart_greets_clients_of_both_eras_on_stdio() {
    let legacy = converse(
        "quickstart",
        &[
            request(
                1,
                "initialize",
                json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            ),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            request(2, "tools/list", json!({})),
            request(
                3,
                "tools/call",
                json!({"name": "greet", "arguments": {"name": "Ada"}}),
            ),
            request(4, "tools/call", json!({"name": "greet", "arguments": {}})),
        ],
    )
    .await;
    let greet = &legacy[1]["result"]["tools"][0];
    assert_eq!(greet["inputSchema"]["properties"]["name"]["type"], "string");
    assert_eq!(greet["inputSchema"]["required"], json!(["name"]));
    assert!(
        greet.get("annotations").is_none(),
        "2024-11-05 has no annotations: {greet}"
    );
    assert_eq!(legacy[2]["result"]["content"][0]["text"], "Hello, Ada!");
    assert_eq!(kit::code(&legacy[3]), -32602, "{}", legacy[3]);

    let modern = converse(
        "quickstart",
        &[request(
            1,
            "tools/call",
            json!({
                "name": "greet",
                "arguments": {"name": "Grace"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }),
        )],
    )
    .await;
    let answer = &modern[0];
    assert_eq!(
        answer["result"]["content"][0]["text"], "Hello, Grace!",
        "{answer}"
    );
    assert_eq!(answer["result"]["resultType"], "complete");
}

const ASKING_CAPABILITIES: &str =
    r#"{"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}}"#;

/// `asking` over stdio at 2025-06-18: each tool's ask arrives as a server request, the
/// client's answer reaches the handler, and the roots hook asks again when told.
#[tokio::test]
async fn asking_asks_a_legacy_client_with_server_requests() {
    let mut client = Stdio::spawn_example("asking");
    let capabilities: Value = serde_json::from_str(ASKING_CAPABILITIES).expect("JSON");
    client.open("2025-06-18", capabilities).await;

    // A typed form: its schema is derived from the Rust struct.
    client
        .send(&request(
            1,
            "tools/call",
            json!({"name": "book_table", "arguments": {}}),
        ))
        .await;
    let ask = client.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let schema = &ask["params"]["requestedSchema"];
    assert_eq!(
        schema["properties"]["party_size"]["type"], "integer",
        "{schema}"
    );
    // 2025-06-18 has no titled single-select: the enum's titles become `enumNames`.
    assert_eq!(
        schema["properties"]["seating"]["enum"],
        json!(["Indoor", "Terrace"])
    );
    assert_eq!(
        schema["properties"]["seating"]["enumNames"],
        json!(["Inside", "On the terrace"])
    );
    assert_eq!(schema["required"], json!(["date", "party_size", "seating"]));
    client
        .send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept",
            "content": {"date": "2026-12-01", "party_size": 4, "seating": "Terrace", "notes": "window"}}}))
        .await;
    let booked = client.answer(&json!(1)).await;
    assert_eq!(
        booked["result"]["content"][0]["text"],
        "Booked for 4 people on 2026-12-01, on the terrace (window).",
        "{booked}"
    );

    // Sampling: the typed request is written in the revision's shape.
    client
        .send(&request(
            2,
            "tools/call",
            json!({"name": "summarise", "arguments": {"text": "A long story."}}),
        ))
        .await;
    let ask = client.recv().await;
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    assert_eq!(ask["params"]["maxTokens"], 200);
    assert_eq!(
        ask["params"]["systemPrompt"],
        "You write one-sentence summaries."
    );
    assert_eq!(
        ask["params"]["messages"][0]["content"]["text"],
        "Summarise: A long story."
    );
    client
        .send(
            &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"role": "assistant",
            "content": {"type": "text", "text": "A story."}, "model": "tiny-model"}}),
        )
        .await;
    let summary = client.answer(&json!(2)).await;
    assert_eq!(
        summary["result"]["content"][0]["text"],
        "A story. (by tiny-model)"
    );

    // Roots, then the hook: the client says they changed, the server asks again.
    client
        .send(&request(
            3,
            "tools/call",
            json!({"name": "workspace", "arguments": {}}),
        ))
        .await;
    let ask = client.recv().await;
    assert_eq!(ask["method"], "roots/list", "{ask}");
    client
        .send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///a", "name": "A"}]}}))
        .await;
    let listed = client.answer(&json!(3)).await;
    assert_eq!(
        listed["result"]["content"][0]["text"],
        "1 root(s): A: file:///a"
    );
    client
        .notify("notifications/roots/list_changed", None)
        .await;
    let ask = client.recv().await;
    assert_eq!(
        ask["method"], "roots/list",
        "the hook asks for the new roots: {ask}"
    );
    client
        .send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///b"}, {"uri": "file:///c"}]}}))
        .await;
    // The hook logs once it has stored them (the session never set a level: all pass).
    let note = client.recv().await;
    assert_eq!(note["method"], "notifications/message", "{note}");
    assert_eq!(note["params"]["data"], "2 root(s) now");
    let roots = client
        .request(4, "resources/read", json!({"uri": "asking://roots"}))
        .await;
    assert_eq!(
        roots["result"]["contents"][0]["text"],
        "file:///b\nfile:///c"
    );

    // A declined form is an answer too; a client without sampling gets nothing sent.
    client
        .send(&request(
            5,
            "tools/call",
            json!({"name": "book_table", "arguments": {}}),
        ))
        .await;
    let ask = client.recv().await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}))
        .await;
    let declined = client.answer(&json!(5)).await;
    assert_eq!(declined["result"]["content"][0]["text"], "No booking made.");
    client.finish().await;
}

/// `asking` over stateless HTTP at 2026-07-28: the ask comes back as `input_required`,
/// and the retry with the answer and the signed state runs the handler to its end.
#[tokio::test]
async fn asking_asks_a_2026_07_28_client_with_input_required_rounds() {
    let server = HttpServer::start_example("asking");
    let http = Http::new(&server.url(""));
    let meta = kit::modern_meta(serde_json::from_str(ASKING_CAPABILITIES).expect("JSON"));
    let first = http
        .post_modern(
            1,
            "tools/call",
            json!({"name": "book_table", "arguments": {}, "_meta": meta}),
        )
        .await
        .messages();
    let result = &first[0]["result"];
    assert_eq!(result["resultType"], "input_required", "{result}");
    let (key, ask) = result["inputRequests"]
        .as_object()
        .and_then(|m| m.iter().next())
        .expect("one input request");
    assert_eq!(ask["method"], "elicitation/create");
    // 2026-07-28 keeps the titled single-select.
    assert_eq!(
        ask["params"]["requestedSchema"]["properties"]["seating"]["oneOf"][1],
        json!({"const": "Terrace", "title": "On the terrace"})
    );
    let retry = http
        .post_modern(
            2,
            "tools/call",
            json!({"name": "book_table", "arguments": {}, "_meta": meta,
                "inputResponses": {key.clone(): {"action": "accept",
                    "content": {"date": "2027-01-02", "party_size": 2, "seating": "Indoor"}}},
                "requestState": result["requestState"]}),
        )
        .await
        .messages();
    assert_eq!(
        retry[0]["result"]["content"][0]["text"], "Booked for 2 people on 2027-01-02, inside.",
        "{}",
        retry[0]
    );
    // A client that did not declare sampling is refused before anything is asked.
    let refused = http
        .post_modern(
            3,
            "tools/call",
            json!({"name": "summarise", "arguments": {"text": "x"}}),
        )
        .await
        .messages();
    assert_eq!(kit::code(&refused[0]), -32021, "{}", refused[0]);
}
