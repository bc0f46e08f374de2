//! HTTP on 127.0.0.1:0: legacy Streamable HTTP sessions, the stateless 2026-07-28 wire on
//! the same endpoint, the 2024-11-05 HTTP+SSE transport, and the statuses for bad hosts,
//! bad headers, oversized bodies and unknown sessions.

mod kit;

use kit::http::{serve, serve_conformance, Http};
use kit::{modern_meta, request};
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn start() -> Http {
    serve_conformance().await
}

fn meta() -> Value {
    modern_meta(json!({}))
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    request(id, method, params)
}

#[tokio::test]
async fn legacy_sessions_serve_and_end() {
    let http = start().await;
    let session = http.session("2025-06-18", json!({})).await;
    let h = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let r = http.post(&h, &rpc(2, "tools/list", json!({}))).await;
    assert_eq!(
        (r.status, r.content_type.as_str()),
        (StatusCode::OK, "application/json")
    );
    assert!(r.json()["result"]["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
    // Progress travels on the request's own SSE stream, before the result.
    let r = http
        .post(
            &h,
            &rpc(
                3,
                "tools/call",
                json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "p1"}}),
            ),
        )
        .await;
    assert_eq!(r.content_type, "text/event-stream");
    let events = r.messages();
    assert_eq!(events.len(), 4, "{}", r.body);
    assert!(events[..3]
        .iter()
        .all(|e| e["method"] == "notifications/progress" && e["params"]["progressToken"] == "p1"));
    assert_eq!(events[3]["id"], 3);
    // A contradicting MCP-Protocol-Version, an unsupported one.
    let r = http
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &rpc(4, "ping", json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = http
        .post(
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
        http.post(&[("mcp-session-id", &session)], &rpc(6, "ping", json!({})))
            .await
            .status,
        StatusCode::OK
    );
    // DELETE ends it; it is then unknown.
    assert_eq!(http.delete(&session).await, StatusCode::OK);
    assert_eq!(
        http.post(&h, &rpc(7, "ping", json!({}))).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn sessions_are_required_and_must_exist() {
    let http = start().await;
    let r = http.post(&[], &rpc(1, "tools/list", json!({}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = http
        .post(
            &[("mcp-session-id", "no-such-session")],
            &rpc(1, "tools/list", json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let resp = http
        .client()
        .get(http.url("/mcp"))
        .header("mcp-session-id", "nope")
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn dns_rebinding_and_size_limits() {
    let http = start().await;
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        http.post(&[("host", "evil.example.com")], &init)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        http.post(&[("origin", "http://evil.example.com")], &init)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        http.post(&[("origin", "http://localhost:3000")], &init)
            .await
            .status,
        StatusCode::OK
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(5 * 1024 * 1024)
    );
    assert_eq!(
        http.post(&[], huge).await.status,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    assert_eq!(
        http.post(&[], "{not json").await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn the_stateless_wire_validates_headers_in_order() {
    let http = start().await;
    let discover = json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": meta()}});
    let ok_headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    let r = http.post(&ok_headers, &discover).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["result"]["resultType"], "complete");
    assert!(r.session.is_none(), "no session on the stateless wire");
    // Missing MCP-Protocol-Version: -32020.
    let r = http
        .post(&[("mcp-method", "server/discover")], &discover)
        .await;
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].clone(),
            r.json()["id"].clone()
        ),
        (StatusCode::BAD_REQUEST, json!(-32020), json!(7))
    );
    // A header but no _meta: -32602.
    let r = http
        .post(
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
    let r = http
        .post(
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
    let r = http
        .post(
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
    let r = http
        .post(
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
    let r = http
        .post(
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
            ],
            &call,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = http
        .post(
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
    let r = http
        .post(
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
    let http = start().await;
    let legacy = async {
        let session = http.session("2025-03-26", json!({})).await;
        for i in 0..20 {
            let r = http
                .post(
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
            let r = http
                .post(
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
    let http = start().await;
    let mut sse = http.sse().await;
    // First event: `endpoint`, naming this connection's POST URL.
    assert!(
        sse.endpoint
            .raw
            .starts_with("event: endpoint\ndata: /messages?sessionId="),
        "{}",
        sse.endpoint.raw
    );
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}),
    );
    assert_eq!(sse.post(&init).await, StatusCode::ACCEPTED);
    let answer = sse.recv().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");
    let r = http
        .client()
        .post(http.url("/messages?sessionId=nope"))
        .body("{}")
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_dropped_sse_stream_is_resumed_with_last_event_id_and_loses_nothing() {
    let http = start().await;
    let session = http.session("2025-11-25", json!({})).await;
    let call = rpc(
        9,
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "resume"}}),
    );
    let mut stream = http
        .post_stream(&[("mcp-session-id", &session)], &call)
        .await;
    assert_eq!(stream.content_type, "text/event-stream");
    let (last_id, first) = stream.next_message().await;
    let last_id = last_id.expect("events carry ids");
    assert_eq!(first["params"]["progress"], 0);
    drop(stream); // the connection is lost after the first event
    let mut resumed = http.get_stream(&session, Some(&last_id)).await;
    let events = resumed.rest().await;
    // Everything after the last event seen, in order, and nothing else.
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .map(|e| &e["params"]["progress"])
        .collect();
    assert_eq!(progress, vec![&json!(50), &json!(100)], "{events:?}");
    assert_eq!(events.last().expect("result")["id"], 9, "{events:?}");
    assert_eq!(events.len(), 3, "{events:?}");
    // An id of another session's (or no) stream is refused.
    let bad = http
        .client()
        .get(http.url("/mcp"))
        .header("mcp-session-id", &session)
        .header("last-event-id", "999-0")
        .send()
        .await
        .expect("get");
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn mirrored_parameter_headers_must_match_the_arguments() {
    let http = start().await;
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
        http.post(&with("us-west1"), &call(json!("us-west1")))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        http.post(&with("=?base64?dXMtd2VzdDE=?="), &call(json!("us-west1")))
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
        let r = http.post(&headers, &call(json!("us-west1"))).await;
        assert_eq!(
            (r.status, r.json()["error"]["code"].clone()),
            (StatusCode::BAD_REQUEST, json!(-32020)),
            "{what}"
        );
    }
    // A null or absent argument needs no header.
    assert_eq!(
        http.post(&std, &call(Value::Null)).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn sessions_are_capped_and_idle_ones_expire() {
    let mut config = mcp_runtime_http::HttpConfig::default();
    config.max_sessions = 1;
    config.session_idle_timeout = std::time::Duration::from_millis(200);
    let http = serve(kit::conformance_server(), config).await;
    let session = http.session("2025-06-18", json!({})).await;
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        http.post(&[], &init).await.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "one session at most"
    );
    // Idle expiry is the subject: a timed wait.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert_eq!(
        http.post(&[("mcp-session-id", &session)], &rpc(2, "ping", json!({})))
            .await
            .status,
        StatusCode::NOT_FOUND,
        "expired"
    );
    assert_eq!(
        http.post(&[], &init).await.status,
        StatusCode::OK,
        "room for a new session"
    );
}
