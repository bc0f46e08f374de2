//! Fuzzes HTTP request handling (`mcp_runtime_http::router`, Streamable HTTP
//! on `/mcp` for both eras and HTTP+SSE on `/sse` + `/messages`) in process, through
//! `tower::ServiceExt::oneshot`. The input (structured with `arbitrary`) chooses a set-up
//! (nothing, a legacy session opened with a real `initialize`, or an open HTTP+SSE stream),
//! then one request: its method, path, the headers Host, Origin, Content-Type, Accept,
//! Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-City and
//! Last-Event-ID (each absent, a known value, the set-up's session id or fuzz bytes), and
//! the rest of the input as its body. Invariants: handling never panics, every request is
//! answered with a status, never a 5xx (client input is never the server's error), JSON
//! answers are valid JSON-RPC, and so is every event of an SSE answer read within a
//! (virtual, paused-clock) second of the previous one, which bounds streaming answers.
#![no_main]

mod common;

use std::time::Duration;

use arbitrary::Arbitrary;
use axum::body::Body;
use axum::http::{header, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use mcp_runtime_http::{router, HttpConfig};
use mcp_runtime::{Era, ProtocolVersion};
use serde_json::{json, Value};
use tower::ServiceExt;

/// Header values the fuzzer can pick by index (hosts, origins, media types, revisions,
/// methods, names, event ids), so that valid combinations are one choice away.
const KNOWN: &[&str] = &[
    "localhost",
    "127.0.0.1:8080",
    "[::1]:3000",
    "evil.example",
    "localhost:",
    "http://localhost",
    "https://127.0.0.1:3000/",
    "http://evil.example",
    "null",
    "file://",
    "application/json",
    "text/event-stream",
    "application/json, text/event-stream",
    "text/plain",
    "*/*",
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
    "2099-01-01",
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "server/discover",
    "subscriptions/listen",
    "logging/setLevel",
    "notifications/initialized",
    "resources/subscribe",
    "test_simple_text",
    "test_sampling",
    "test_prompt_with_arguments",
    "test://static-text",
    "test://template/42/data",
    "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?=",
    "0-0",
    "0-1",
    "1-0",
    "999-0",
    "Paris",
    "",
];

#[derive(Arbitrary)]
enum Text {
    Known(u8),
    Fuzzed([u8; 32]),
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.bytes()))
    }
}

/// Bytes, shown as (lossy) text in crash reports.
#[derive(Arbitrary)]
struct Bytes<'a>(&'a [u8]);

impl std::fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.0))
    }
}

impl Text {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Text::Known(i) => KNOWN[usize::from(*i) % KNOWN.len()].as_bytes().to_vec(),
            Text::Fuzzed(raw) => {
                let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
                raw[..end].to_vec()
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Setup {
    Nothing,
    /// A Streamable HTTP session of a legacy revision (`initialize`, then `initialized`):
    /// the n-th, modulo their number, of the generated revision list.
    Session(u8),
    /// An open HTTP+SSE (2024-11-05) stream, kept open during the request.
    SseStream,
}

/// The legacy revisions, from the generated table (a revision added to the manifest is
/// fuzzed too).
fn legacy_revision(n: u8) -> &'static str {
    let legacy: Vec<ProtocolVersion> = ProtocolVersion::ALL
        .into_iter()
        .filter(|v| v.era() == Era::Legacy)
        .collect();
    legacy[usize::from(n) % legacy.len()].as_str()
}

#[derive(Arbitrary, Debug)]
enum HttpMethod {
    Get,
    Post,
    Delete,
    Put,
    Options,
    Head,
    Patch,
}

#[derive(Arbitrary, Debug)]
enum Path {
    Mcp,
    Sse,
    Messages,
    /// `/messages?sessionId=` the set-up's session.
    MessagesOfSession,
    /// `/messages?sessionId=` these bytes.
    MessagesOf(Text),
    /// `/` these bytes.
    Other(Text),
}

/// A session id: the set-up's, or given.
#[derive(Arbitrary, Debug)]
enum SessionRef {
    Setup,
    Given(Text),
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    setup: Setup,
    method: HttpMethod,
    path: Path,
    host: Option<Text>,
    origin: Option<Text>,
    content_type: Option<Text>,
    accept: Option<Text>,
    session_id: Option<SessionRef>,
    protocol_version: Option<Text>,
    mcp_method: Option<Text>,
    mcp_name: Option<Text>,
    param_city: Option<Text>,
    last_event_id: Option<Text>,
    /// The rest of the input.
    body: Bytes<'a>,
}

/// Largest body the server accepts (413 above).
const BODY_LIMIT: usize = 2048;
/// How long (virtual time) to wait for the next piece of a streamed answer.
const STREAM_WAIT: Duration = Duration::from_secs(1);

/// Reads a body until it ends, or nothing comes for `STREAM_WAIT`; returns what came.
async fn read_body(body: &mut Body) -> Vec<u8> {
    let mut out = Vec::new();
    // A streaming answer may go on forever: at most this many pieces.
    for _ in 0..64 {
        match tokio::time::timeout(STREAM_WAIT, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    out.extend_from_slice(data);
                }
            }
            Ok(Some(Err(e))) => panic!("body error: {e}"),
            Ok(None) | Err(_) => break,
        }
    }
    out
}

/// Checks an answer: never 5xx; JSON and SSE bodies are valid JSON-RPC; the answer to a
/// HEAD request has no body (its headers are those of the GET answer).
async fn check_response(response: Response<Body>, head: bool, what: &str) -> StatusCode {
    let status = response.status();
    assert!(!status.is_server_error(), "{what}: answered {status}");
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let mut body = response.into_body();
    let bytes = read_body(&mut body).await;
    if head {
        assert!(bytes.is_empty(), "{what}: a HEAD answer with a body");
    } else if content_type.starts_with("application/json") {
        let value: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "{what}: JSON answer is not JSON ({e}): {}",
                String::from_utf8_lossy(&bytes)
            )
        });
        common::check_outgoing(&value, what);
    } else if content_type.starts_with("text/event-stream") {
        let text =
            std::str::from_utf8(&bytes).unwrap_or_else(|e| panic!("{what}: SSE not UTF-8: {e}"));
        // Only complete events (a cut-off stream may end mid-event).
        let complete = text.rfind("\n\n").map_or("", |end| &text[..end]);
        for event in complete.split("\n\n").filter(|e| !e.is_empty()) {
            let mut kind = "message";
            let mut data = String::new();
            for line in event.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    kind = v;
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            if kind == "endpoint" {
                assert!(
                    data.starts_with("/messages?sessionId="),
                    "{what}: endpoint event {data}"
                );
                continue;
            }
            let value: Value = serde_json::from_str(&data)
                .unwrap_or_else(|e| panic!("{what}: SSE event data is not JSON ({e}): {event}"));
            common::check_outgoing(&value, what);
        }
    }
    status
}

fn local_request(
    method: Method,
    uri: &str,
    body: Value,
    version: Option<&str>,
    session: Option<&str>,
) -> Request<Body> {
    let mut r = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(v) = version {
        r = r.header("mcp-protocol-version", v);
    }
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    r.body(Body::from(body.to_string()))
        .expect("a valid request")
}

/// Runs the set-up; returns the session id it opened and the stream to keep open.
async fn setup(app: &Router, setup: &Setup) -> (Option<String>, Option<Body>) {
    match setup {
        Setup::Nothing => (None, None),
        Setup::Session(rev) => {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": legacy_revision(*rev), "capabilities": {"sampling": {}},
                "clientInfo": {"name": "fuzz", "version": "1.0.0"}}});
            let response = app
                .clone()
                .oneshot(local_request(Method::POST, "/mcp", init, None, None))
                .await
                .expect("infallible");
            let session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
                .expect("initialize opens a session");
            let status = check_response(response, false, "set-up initialize").await;
            assert_eq!(status, StatusCode::OK);
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let response = app
                .clone()
                .oneshot(local_request(
                    Method::POST,
                    "/mcp",
                    initialized,
                    Some(legacy_revision(*rev)),
                    Some(&session),
                ))
                .await
                .expect("infallible");
            let status = check_response(response, false, "set-up initialized").await;
            assert_eq!(status, StatusCode::ACCEPTED);
            (Some(session), None)
        }
        Setup::SseStream => {
            let get = Request::builder()
                .method(Method::GET)
                .uri("/sse")
                .header(header::HOST, "localhost")
                .body(Body::empty())
                .expect("a valid request");
            let response = app.clone().oneshot(get).await.expect("infallible");
            assert_eq!(response.status(), StatusCode::OK);
            let mut body = response.into_body();
            let first = tokio::time::timeout(STREAM_WAIT, body.frame()).await;
            let Ok(Some(Ok(frame))) = first else {
                panic!("no endpoint event: {first:?}")
            };
            let data = String::from_utf8_lossy(frame.data_ref().expect("data")).into_owned();
            let id = data
                .split("sessionId=")
                .nth(1)
                .map(|rest| rest.trim().to_owned())
                .expect("the endpoint event names the session");
            (Some(id), Some(body))
        }
    }
}

fn build_request(input: &Input<'_>, session: Option<&str>) -> Option<Request<Body>> {
    let method = match input.method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
    };
    let text = |t: &Text| String::from_utf8_lossy(&t.bytes()).into_owned();
    let uri = match &input.path {
        Path::Mcp => "/mcp".to_owned(),
        Path::Sse => "/sse".to_owned(),
        Path::Messages => "/messages".to_owned(),
        Path::MessagesOfSession => format!("/messages?sessionId={}", session.unwrap_or_default()),
        Path::MessagesOf(t) => format!("/messages?sessionId={}", text(t)),
        Path::Other(t) => format!("/{}", text(t)),
    };
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .body(Body::from(input.body.0.to_vec()))
        .ok()?;
    let headers = request.headers_mut();
    let mut set = |name: &'static str, value: Option<Vec<u8>>| {
        if let Some(v) = value.and_then(|v| HeaderValue::from_bytes(&v).ok()) {
            headers.insert(HeaderName::from_static(name), v);
        }
    };
    set("host", input.host.as_ref().map(Text::bytes));
    set("origin", input.origin.as_ref().map(Text::bytes));
    set("content-type", input.content_type.as_ref().map(Text::bytes));
    set("accept", input.accept.as_ref().map(Text::bytes));
    set(
        "mcp-session-id",
        input.session_id.as_ref().map(|s| match s {
            SessionRef::Setup => session.unwrap_or_default().as_bytes().to_vec(),
            SessionRef::Given(t) => t.bytes(),
        }),
    );
    set(
        "mcp-protocol-version",
        input.protocol_version.as_ref().map(Text::bytes),
    );
    set("mcp-method", input.mcp_method.as_ref().map(Text::bytes));
    set("mcp-name", input.mcp_name.as_ref().map(Text::bytes));
    set("mcp-param-city", input.param_city.as_ref().map(Text::bytes));
    set(
        "last-event-id",
        input.last_event_id.as_ref().map(Text::bytes),
    );
    Some(request)
}

fuzz_target!(|input: Input<'_>| {
    common::runtime().block_on(async {
        let mut config = HttpConfig::default();
        config.max_sessions = 8;
        let app = router(common::server(BODY_LIMIT), config);
        let (session, _stream) = setup(&app, &input.setup).await;
        let Some(request) = build_request(&input, session.as_deref()) else {
            return;
        };
        let head = request.method() == Method::HEAD;
        let response = app
            .clone()
            .oneshot(request)
            .await
            .expect("the router is infallible");
        check_response(response, head, "fuzzed request").await;
    });
});
