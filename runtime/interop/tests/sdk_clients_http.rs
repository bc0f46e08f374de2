//! Official SDK clients of every era (pinned in `tests/clients/`, installed on first use
//! under `target/clients` by `kit::pinned`) against the conformance example over
//! HTTP: Streamable HTTP at `/mcp` (legacy sessions, and the stateless 2026-07-28 wire) and
//! HTTP+SSE at `/sse` (2024-11-05, including two releases that speak nothing else). Each
//! runs the same scenario as `sdk_clients.rs`; the clients that can be asked (2025-06-18
//! and later) also answer the server's sampling and elicitation asks, over HTTP and over
//! stdio: as server-to-client requests before 2026-07-28, as `input_required` results the
//! SDK fulfils and retries on 2026-07-28.
//!
//! The clients of 2025-11-25 also poll: the example closes the connection of a slow call's SSE
//! stream (SSE polling), and they resume it with `Last-Event-ID` (`*_polls_a_closed_stream`).
//!
//! Every test starts its own `conformance_server --http 127.0.0.1:0`, killed on drop.

use std::process::Command;

use serde_json::Value;

mod kit;

use kit::pinned;
use kit::process::{example, HttpServer};

/// How the client reaches the example.
enum Target<'a> {
    /// `--url`: Streamable HTTP (`/mcp`) or HTTP+SSE (`/sse`).
    Http(&'a HttpServer, &'a str),
    /// `-- <example>`: spawned over stdio.
    Stdio,
}

fn run(client: &str, scenario: &str, target: Target<'_>) -> Value {
    pinned::ensure_client(client);
    let mut cmd = Command::new("bash");
    cmd.arg(pinned::clients_src().join("run-client.sh"))
        .env("MCP_CLIENTS_DIR", pinned::clients_dir())
        .arg(client)
        .args(["--scenario", scenario]);
    match &target {
        Target::Http(server, path) => cmd.arg("--url").arg(server.url(path)),
        Target::Stdio => cmd.arg("--").arg(example()),
    };
    let out = cmd.output().unwrap_or_else(|e| panic!("{client}: {e}"));
    let server_log = match &target {
        Target::Http(server, _) => server.log(),
        Target::Stdio => String::new(),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let summary: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "{client}: no JSON summary ({e}): {stdout}\n{}\nserver: {server_log}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        summary["ok"],
        true,
        "{client} failed: {summary}\n{}\nserver: {server_log}",
        String::from_utf8_lossy(&out.stderr)
    );
    summary
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The scenario of `sdk_clients.rs`, over HTTP at `path`.
fn check(client: &str, path: &str, transport: &str, revision: &str) {
    let server = HttpServer::start();
    let s = run(client, "basic", Target::Http(&server, path));
    assert_eq!(s["transport"], transport, "{client}: {s}");
    assert_eq!(
        s["protocolVersion"], revision,
        "{client}: negotiated revision"
    );
    let tools: Vec<&str> = s["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"test_simple_text") && tools.contains(&"test_structured_output"),
        "{client}: {tools:?}"
    );
    assert_eq!(
        text(&s["callResult"]),
        "This is a simple text response for testing.",
        "{client}: {s}"
    );
    let resource = &s["resource"]["contents"][0];
    assert_eq!(resource["uri"], "test://static-text", "{client}: {s}");
    assert!(
        resource["text"]
            .as_str()
            .unwrap_or_default()
            .contains("static text resource"),
        "{client}: {s}"
    );
    let prompt = &s["prompt"]["messages"][0]["content"]["text"];
    assert_eq!(
        prompt, "This is a simple prompt for testing.",
        "{client}: {s}"
    );
}

/// The ask scenario: `test_sampling` and `test_elicitation`, answered by the client's handlers.
fn check_ask(client: &str, http: bool, revision: &str) {
    let server;
    let target = if http {
        server = HttpServer::start();
        Target::Http(&server, "/mcp")
    } else {
        Target::Stdio
    };
    let s = run(client, "ask", target);
    assert_eq!(
        s["protocolVersion"], revision,
        "{client}: negotiated revision"
    );
    assert_eq!(
        text(&s["samplingResult"]),
        "LLM response: Paris is the capital",
        "{client}: {s}"
    );
    assert_ne!(s["samplingResult"]["isError"], true, "{client}: {s}");
    let elicited = text(&s["elicitationResult"]);
    assert!(
        elicited.contains("action=accept")
            && elicited.contains(r#""username":"testuser""#)
            && elicited.contains(r#""email":"testuser""#),
        "{client}: {s}"
    );
    assert_ne!(s["elicitationResult"]["isError"], true, "{client}: {s}");
    assert_eq!(
        s["asked"],
        serde_json::json!(["sampling/createMessage", "elicitation/create"]),
        "{client}: {s}"
    );
    // How the server asked, where the client can tell: 2026-07-28 has no server-to-client
    // requests, only input_required results (one per tool call); before it, requests.
    if revision == "2026-07-28" {
        assert_eq!(s["wire"]["inputRequiredResults"], 2, "{client}: {s}");
        if client.starts_with("ts-") {
            assert_eq!(s["wire"]["serverRequests"], 0, "{client}: {s}");
        }
    } else if client.starts_with("ts-") {
        assert_eq!(s["wire"]["serverRequests"], 2, "{client}: {s}");
        assert_eq!(s["wire"]["inputRequiredResults"], 0, "{client}: {s}");
    }
}

macro_rules! http_clients {
    ($($test:ident: $client:literal at $path:literal via $transport:literal => $revision:literal,)*) => {$(
        #[test]
        fn $test() {
            check($client, $path, $transport, $revision);
        }
    )*};
}

http_clients! {
    typescript_sdk_2024_11_05_streamable_http: "ts-2024-11-05" at "/mcp" via "streamable-http" => "2024-11-05",
    typescript_sdk_2024_11_05_sse: "ts-2024-11-05" at "/sse" via "sse" => "2024-11-05",
    typescript_sdk_1_9_0_sse_only: "ts-sse-1.9.0" at "/sse" via "sse" => "2024-11-05",
    typescript_sdk_2025_03_26_streamable_http: "ts-2025-03-26" at "/mcp" via "streamable-http" => "2025-03-26",
    typescript_sdk_2025_06_18_streamable_http: "ts-2025-06-18" at "/mcp" via "streamable-http" => "2025-06-18",
    typescript_sdk_2025_11_25_streamable_http: "ts-2025-11-25" at "/mcp" via "streamable-http" => "2025-11-25",
    typescript_client_2026_07_28_pinned_http: "ts-2026-07-28-pinned" at "/mcp" via "streamable-http" => "2026-07-28",
    typescript_client_2026_07_28_auto_http: "ts-2026-07-28-auto" at "/mcp" via "streamable-http" => "2026-07-28",
    python_sdk_2024_11_05_streamable_http: "py-2024-11-05" at "/mcp" via "streamable-http" => "2024-11-05",
    python_sdk_2024_11_05_sse: "py-2024-11-05" at "/sse" via "sse" => "2024-11-05",
    python_sdk_1_7_1_sse_only: "py-sse-1.7.1" at "/sse" via "sse" => "2024-11-05",
    python_sdk_2025_03_26_streamable_http: "py-2025-03-26" at "/mcp" via "streamable-http" => "2025-03-26",
    python_sdk_2025_06_18_streamable_http: "py-2025-06-18" at "/mcp" via "streamable-http" => "2025-06-18",
    python_sdk_2025_11_25_streamable_http: "py-2025-11-25" at "/mcp" via "streamable-http" => "2025-11-25",
    python_client_2026_07_28_pinned_http: "py-2026-07-28-pinned" at "/mcp" via "streamable-http" => "2026-07-28",
    python_client_2026_07_28_auto_http: "py-2026-07-28-auto" at "/mcp" via "streamable-http" => "2026-07-28",
}

macro_rules! ask_clients {
    ($($http:ident, $stdio:ident: $client:literal => $revision:literal,)*) => {$(
        #[test]
        fn $http() {
            check_ask($client, true, $revision);
        }
        #[test]
        fn $stdio() {
            check_ask($client, false, $revision);
        }
    )*};
}

ask_clients! {
    ask_typescript_sdk_2025_06_18_http, ask_typescript_sdk_2025_06_18_stdio: "ts-2025-06-18" => "2025-06-18",
    ask_typescript_sdk_2025_11_25_http, ask_typescript_sdk_2025_11_25_stdio: "ts-2025-11-25" => "2025-11-25",
    ask_typescript_client_2026_07_28_pinned_http, ask_typescript_client_2026_07_28_pinned_stdio: "ts-2026-07-28-pinned" => "2026-07-28",
    ask_typescript_client_2026_07_28_auto_http, ask_typescript_client_2026_07_28_auto_stdio: "ts-2026-07-28-auto" => "2026-07-28",
    ask_python_sdk_2025_06_18_http, ask_python_sdk_2025_06_18_stdio: "py-2025-06-18" => "2025-06-18",
    ask_python_sdk_2025_11_25_http, ask_python_sdk_2025_11_25_stdio: "py-2025-11-25" => "2025-11-25",
    ask_python_client_2026_07_28_pinned_http, ask_python_client_2026_07_28_pinned_stdio: "py-2026-07-28-pinned" => "2026-07-28",
    ask_python_client_2026_07_28_auto_http, ask_python_client_2026_07_28_auto_stdio: "py-2026-07-28-auto" => "2026-07-28",
}

/// SSE polling (2025-11-25): `test_reconnection` answers after the example closed the
/// connection of the call's SSE stream (priming event and `retry` first), so the SDK
/// receives the answer only by reconnecting with `GET` + `Last-Event-ID`.
fn check_poll(client: &str) {
    let server = HttpServer::start();
    let s = run(client, "poll", Target::Http(&server, "/mcp"));
    assert_eq!(s["protocolVersion"], "2025-11-25", "{client}: {s}");
    assert_eq!(
        text(&s["callResult"]),
        "Reconnected: the answer came after the reconnection",
        "{client}: {s}"
    );
    assert_ne!(s["callResult"]["isError"], true, "{client}: {s}");
}

#[test]
fn typescript_sdk_2025_11_25_polls_a_closed_stream() {
    check_poll("ts-2025-11-25");
}

#[test]
fn python_sdk_2025_11_25_polls_a_closed_stream() {
    check_poll("py-2025-11-25");
}
