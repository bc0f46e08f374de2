//! HTTP on 127.0.0.1:0: legacy Streamable HTTP sessions, the stateless 2026-07-28 wire on
//! the same endpoint, the 2024-11-05 HTTP+SSE transport, and the statuses for bad hosts,
//! bad headers, oversized bodies and unknown sessions.

#[path = "common/mod.rs"]
mod common;

use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn start() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(mcp_runtime::transport::http::serve_listener(
        common::conformance_server(),
        listener,
        Default::default(),
    ));
    format!("http://{addr}")
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

struct Reply {
    status: StatusCode,
    session: Option<String>,
    content_type: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `data:` payloads of an SSE body.
    fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    }
}

async fn post(base: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
    post_raw(base, headers, body.to_string()).await
}

async fn post_raw(base: &str, headers: &[(&str, &str)], body: String) -> Reply {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.body(body).send().await.expect("send");
    let status = resp.status();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = resp.text().await.expect("body");
    Reply {
        status,
        session,
        content_type,
        body,
    }
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn legacy_session(base: &str, version: &str) -> String {
    let r = post(base, &[], &rpc(1, "initialize", json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["result"]["protocolVersion"], version);
    let session = r.session.expect("Mcp-Session-Id");
    assert!(
        session.len() >= 32 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{session}"
    );
    let r = post(
        base,
        &[("mcp-session-id", &session)],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert!(r.body.is_empty());
    session
}

#[tokio::test]
async fn legacy_sessions_serve_and_end() {
    let base = start().await;
    let session = legacy_session(&base, "2025-06-18").await;
    let h = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let r = post(&base, &h, &rpc(2, "tools/list", json!({}))).await;
    assert_eq!(
        (r.status, r.content_type.as_str()),
        (StatusCode::OK, "application/json")
    );
    assert!(r.json()["result"]["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
    // Progress travels on the request's own SSE stream, before the result.
    let r = post(
        &base,
        &h,
        &rpc(
            3,
            "tools/call",
            json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "p1"}}),
        ),
    )
    .await;
    assert_eq!(r.content_type, "text/event-stream");
    let events = r.events();
    assert_eq!(events.len(), 4, "{}", r.body);
    assert!(events[..3]
        .iter()
        .all(|e| e["method"] == "notifications/progress" && e["params"]["progressToken"] == "p1"));
    assert_eq!(events[3]["id"], 3);
    // A contradicting MCP-Protocol-Version, an unsupported one.
    let r = post(
        &base,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        &rpc(4, "ping", json!({})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = post(
        &base,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "1999-01-01"),
        ],
        &rpc(5, "ping", json!({})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    // Missing header: the session's revision is used.
    assert_eq!(
        post(
            &base,
            &[("mcp-session-id", &session)],
            &rpc(6, "ping", json!({}))
        )
        .await
        .status,
        StatusCode::OK
    );
    // DELETE ends it; it is then unknown.
    let resp = reqwest::Client::new()
        .delete(format!("{base}/mcp"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        post(&base, &h, &rpc(7, "ping", json!({}))).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn sessions_are_required_and_must_exist() {
    let base = start().await;
    let r = post(&base, &[], &rpc(1, "tools/list", json!({}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = post(
        &base,
        &[("mcp-session-id", "no-such-session")],
        &rpc(1, "tools/list", json!({})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let resp = reqwest::Client::new()
        .get(format!("{base}/mcp"))
        .header("mcp-session-id", "nope")
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn dns_rebinding_and_size_limits() {
    let base = start().await;
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        post(&base, &[("host", "evil.example.com")], &init)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        post(&base, &[("origin", "http://evil.example.com")], &init)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        post(&base, &[("origin", "http://localhost:3000")], &init)
            .await
            .status,
        StatusCode::OK
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(5 * 1024 * 1024)
    );
    assert_eq!(
        post_raw(&base, &[], huge).await.status,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    assert_eq!(
        post_raw(&base, &[], "{not json".into()).await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn the_stateless_wire_validates_headers_in_order() {
    let base = start().await;
    let discover = json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": meta()}});
    let ok_headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    let r = post(&base, &ok_headers, &discover).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["result"]["resultType"], "complete");
    assert!(r.session.is_none(), "no session on the stateless wire");
    // Missing MCP-Protocol-Version: -32020.
    let r = post(&base, &[("mcp-method", "server/discover")], &discover).await;
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].clone(),
            r.json()["id"].clone()
        ),
        (StatusCode::BAD_REQUEST, json!(-32020), json!(7))
    );
    // A header but no _meta: -32602.
    let r = post(
        &base,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}}),
    )
    .await;
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].clone(),
            r.json()["id"].clone()
        ),
        (StatusCode::BAD_REQUEST, json!(-32602), json!(8))
    );
    // Header and _meta disagree: -32020 wins over the unsupported version.
    let mut odd = meta();
    odd["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let body =
        json!({"jsonrpc": "2.0", "id": 302, "method": "tools/list", "params": {"_meta": odd}});
    let r = post(
        &base,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &body,
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020))
    );
    let r = post(
        &base,
        &[
            ("mcp-protocol-version", "v999.0.0"),
            ("mcp-method", "tools/list"),
        ],
        &body,
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32022))
    );
    assert_eq!(r.json()["error"]["data"]["requested"], "v999.0.0");
    // Mcp-Method and Mcp-Name must match the body.
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "test_simple_text", "_meta": meta()}});
    let r = post(
        &base,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "TOOLS/CALL"),
            ("mcp-name", "test_simple_text"),
        ],
        &call,
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020))
    );
    let r = post(
        &base,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
        ],
        &call,
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = post(
        &base,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "  =?base64?dGVzdF9zaW1wbGVfdGV4dA==?=  "),
        ],
        &call,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Removed methods: 404 with -32601.
    let ping = json!({"jsonrpc": "2.0", "id": 500, "method": "ping", "params": {"_meta": meta()}});
    let r = post(
        &base,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "ping"),
        ],
        &ping,
    )
    .await;
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].clone(),
            r.json()["id"].clone()
        ),
        (StatusCode::NOT_FOUND, json!(-32601), json!(500))
    );
}

#[tokio::test]
async fn a_legacy_and_a_modern_client_at_the_same_time() {
    let base = start().await;
    let legacy = async {
        let session = legacy_session(&base, "2025-03-26").await;
        for i in 0..20 {
            let r = post(
                &base,
                &[("mcp-session-id", &session)],
                &rpc(100 + i, "tools/call", json!({"name": "test_audio_content"})),
            )
            .await;
            let v = r.json();
            assert_eq!(v["id"], 100 + i);
            assert_eq!(v["result"]["content"][0]["type"], "audio");
            assert!(v["result"].get("resultType").is_none());
        }
    };
    let modern = async {
        for i in 0..20 {
            let body = json!({"jsonrpc": "2.0", "id": 200 + i, "method": "tools/call", "params": {"name": "test_simple_text", "_meta": meta()}});
            let r = post(
                &base,
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "test_simple_text"),
                ],
                &body,
            )
            .await;
            let v = r.json();
            assert_eq!(v["id"], 200 + i);
            assert_eq!(v["result"]["resultType"], "complete");
        }
    };
    tokio::join!(legacy, modern);
}

#[tokio::test]
async fn http_sse_for_2024_11_05_clients() {
    let base = start().await;
    let resp = reqwest::Client::new()
        .get(format!("{base}/sse"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("get /sse");
    assert_eq!(resp.status(), StatusCode::OK);
    let mut stream = resp.bytes_stream();
    let mut buffer = String::new();
    // First event: `endpoint`, naming this connection's POST URL.
    while !buffer.contains("\n\n") {
        buffer.push_str(&String::from_utf8_lossy(
            &stream.next().await.expect("event").expect("bytes"),
        ));
    }
    let (first, rest) = buffer.split_once("\n\n").expect("event");
    assert!(
        first.starts_with("event: endpoint\ndata: /messages?sessionId="),
        "{first}"
    );
    let endpoint = first
        .trim_start_matches("event: endpoint\ndata: ")
        .to_owned();
    buffer = rest.to_owned();
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}),
    );
    let resp = reqwest::Client::new()
        .post(format!("{base}{endpoint}"))
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    while !buffer.contains("\n\n") {
        buffer.push_str(&String::from_utf8_lossy(
            &stream.next().await.expect("event").expect("bytes"),
        ));
    }
    let (event, _) = buffer.split_once("\n\n").expect("event");
    let data = event
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("data");
    let answer: Value = serde_json::from_str(data).expect("json");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");
    let r = reqwest::Client::new()
        .post(format!("{base}/messages?sessionId=nope"))
        .body("{}")
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_dropped_sse_stream_is_resumed_with_last_event_id_and_loses_nothing() {
    let base = start().await;
    let session = legacy_session(&base, "2025-11-25").await;
    let call = rpc(
        9,
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "resume"}}),
    );
    let resp = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .body(call.to_string())
        .send()
        .await
        .expect("post");
    assert_eq!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let mut stream = resp.bytes_stream();
    let mut buffer = String::new();
    while !buffer.contains("\n\n") {
        buffer.push_str(&String::from_utf8_lossy(
            &stream.next().await.expect("event").expect("bytes"),
        ));
    }
    let first = buffer.split("\n\n").next().expect("event").to_owned();
    let last_id = first
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("events carry ids")
        .to_owned();
    let first_data: Value = serde_json::from_str(
        first
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .expect("data"),
    )
    .expect("json");
    assert_eq!(first_data["params"]["progress"], 0);
    drop(stream); // the connection is lost after the first event
    let resumed = reqwest::Client::new()
        .get(format!("{base}/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("last-event-id", &last_id)
        .send()
        .await
        .expect("get");
    assert_eq!(resumed.status(), StatusCode::OK);
    let body = resumed.text().await.expect("body");
    let events: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    // Everything after the last event seen, in order, and nothing else.
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .map(|e| &e["params"]["progress"])
        .collect();
    assert_eq!(progress, vec![&json!(50), &json!(100)], "{body}");
    assert_eq!(events.last().expect("result")["id"], 9, "{body}");
    assert_eq!(events.len(), 3, "{body}");
    // An id of another session's (or no) stream is refused.
    let bad = reqwest::Client::new()
        .get(format!("{base}/mcp"))
        .header("mcp-session-id", &session)
        .header("last-event-id", "999-0")
        .send()
        .await
        .expect("get");
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn mirrored_parameter_headers_must_match_the_arguments() {
    let base = start().await;
    let call = |region: Value| json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "test_header_param", "arguments": {"region": region}, "_meta": meta()}});
    let std = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "test_header_param"),
    ];
    let with = |extra: &'static str| -> Vec<(&'static str, &'static str)> {
        let mut h = std.to_vec();
        h.push(("mcp-param-region", extra));
        h
    };
    assert_eq!(
        post(&base, &with("us-west1"), &call(json!("us-west1")))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        post(
            &base,
            &with("=?base64?dXMtd2VzdDE=?="),
            &call(json!("us-west1"))
        )
        .await
        .status,
        StatusCode::OK
    );
    for (headers, what) in [
        (std.to_vec(), "missing"),
        (with("eu-north1"), "different"),
        (with("=?base64?dXMtd2VzdDE?="), "bad padding"),
        (with("=?base64?!!!?="), "not base64"),
    ] {
        let r = post(&base, &headers, &call(json!("us-west1"))).await;
        assert_eq!(
            (r.status, r.json()["error"]["code"].clone()),
            (StatusCode::BAD_REQUEST, json!(-32020)),
            "{what}"
        );
    }
    // A null or absent argument needs no header.
    assert_eq!(
        post(&base, &std, &call(Value::Null)).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn sessions_are_capped_and_idle_ones_expire() {
    let mut config = mcp_runtime::transport::http::HttpConfig::default();
    config.max_sessions = 1;
    config.session_idle_timeout = std::time::Duration::from_millis(200);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(mcp_runtime::transport::http::serve_listener(
        common::conformance_server(),
        listener,
        config,
    ));
    let session = legacy_session(&base, "2025-06-18").await;
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        post(&base, &[], &init).await.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "one session at most"
    );
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert_eq!(
        post(
            &base,
            &[("mcp-session-id", &session)],
            &rpc(2, "ping", json!({}))
        )
        .await
        .status,
        StatusCode::NOT_FOUND,
        "expired"
    );
    assert_eq!(
        post(&base, &[], &init).await.status,
        StatusCode::OK,
        "room for a new session"
    );
}
