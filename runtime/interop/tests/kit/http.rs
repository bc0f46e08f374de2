//! The HTTP clients of the tests: Streamable HTTP on `/mcp` (legacy sessions with
//! `Mcp-Session-Id`, the stateless 2026-07-28 wire with its headers; answers as JSON or as
//! an SSE stream, parsed into messages), a session's GET stream and a POST's stream read
//! event by event, and the 2024-11-05 HTTP+SSE transport (`GET /sse`, its `endpoint`
//! event, `POST /messages`, answers on the stream).
//!
//! Every wait is bounded by the kit's one [`patience`]: a whole request and its body, or,
//! on a stream, each event. Parsing is strict ([`super::frames`]): a body that is not what
//! its type says, or an event whose data is not JSON, is a failure.

use futures_util::StreamExt;
use mcp_runtime_http::HttpConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::frames::{answer_messages, sse_events, SseEvent, SseParser};
use super::patience::patience;
use super::stdio::is_answer_to;
use super::{modern_meta, notification, request, MODERN};

/// Serves `server` over HTTP on 127.0.0.1:0 in a task of the current runtime; a client of
/// it.
pub async fn serve(server: mcp_runtime::Server, config: HttpConfig) -> Http {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(mcp_runtime_http::serve_listener(server, listener, config));
    Http::new(&format!("http://{addr}"))
}

/// The conformance example server over HTTP, default configuration.
pub async fn serve_conformance() -> Http {
    serve(super::conformance_server(), HttpConfig::default()).await
}

/// What can be the body of a POST.
pub trait ToBody {
    /// The body.
    fn to_body(self) -> reqwest::Body;
}

impl ToBody for &Value {
    fn to_body(self) -> reqwest::Body {
        self.to_string().into()
    }
}

impl ToBody for Value {
    fn to_body(self) -> reqwest::Body {
        self.to_string().into()
    }
}

impl ToBody for String {
    fn to_body(self) -> reqwest::Body {
        self.into()
    }
}

impl ToBody for &str {
    fn to_body(self) -> reqwest::Body {
        self.to_owned().into()
    }
}

impl ToBody for Vec<u8> {
    fn to_body(self) -> reqwest::Body {
        self.into()
    }
}

impl ToBody for &[u8] {
    fn to_body(self) -> reqwest::Body {
        self.to_vec().into()
    }
}

/// A complete answer to a POST.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// `Mcp-Session-Id`, if the answer carries one.
    pub session: Option<String>,
    /// `Content-Type` (empty when absent).
    pub content_type: String,
    /// The body.
    pub body: String,
}

impl Reply {
    async fn read(resp: reqwest::Response) -> Reply {
        let status = resp.status();
        let session = header(&resp, "mcp-session-id");
        let content_type = header(&resp, "content-type").unwrap_or_default();
        let body = resp.text().await.expect("the answer's body");
        Reply {
            status,
            session,
            content_type,
            body,
        }
    }

    /// The body as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }

    /// The messages of the answer: its JSON body, or every event of its SSE stream (none
    /// for an empty body).
    pub fn messages(&self) -> Vec<Value> {
        answer_messages(&self.content_type, &self.body)
            .unwrap_or_else(|e| panic!("{}: {e}", self.status))
    }

    /// The events of an SSE body.
    pub fn events(&self) -> Vec<SseEvent> {
        assert!(
            self.content_type.starts_with("text/event-stream"),
            "not an SSE stream: {} {:?} {}",
            self.status,
            self.content_type,
            self.body
        );
        sse_events(&self.body).unwrap_or_else(|e| panic!("{e}"))
    }
}

fn header(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A client of one server.
#[derive(Clone)]
pub struct Http {
    base: String,
    /// Where Streamable HTTP is served (`/mcp`, or the mount of an embedded service).
    endpoint: String,
    /// Where HTTP+SSE is served (`/sse`, or `sse` under the mount).
    sse_path: String,
    /// For requests: the whole exchange within the patience.
    client: reqwest::Client,
    /// For streams, which may stay open longer: each event within the patience.
    streams: reqwest::Client,
}

impl Http {
    /// A client of the server at `base` (`http://127.0.0.1:PORT`).
    pub fn new(base: &str) -> Http {
        Http::mounted(base, "/mcp", "/sse")
    }

    /// A client of a server at `base` whose Streamable HTTP endpoint is `endpoint` and
    /// HTTP+SSE stream `sse_path` (an MCP service nested in an application).
    pub fn mounted(base: &str, endpoint: &str, sse_path: &str) -> Http {
        Http {
            base: base.trim_end_matches('/').to_owned(),
            endpoint: endpoint.to_owned(),
            sse_path: sse_path.to_owned(),
            client: reqwest::Client::builder()
                .timeout(patience())
                .build()
                .expect("an HTTP client"),
            streams: reqwest::Client::builder()
                .connect_timeout(patience())
                .build()
                .expect("an HTTP client"),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The underlying client (the patience applies to each request), for requests the
    /// helpers below do not make: other routes, methods, headers.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// A POST to `/mcp` as a Streamable HTTP client makes it (JSON, accepting JSON or
    /// SSE), with `headers` added (they may replace those), to send as the test likes.
    pub fn post_request(
        &self,
        headers: &[(&str, &str)],
        body: impl ToBody,
    ) -> reqwest::RequestBuilder {
        self.build_post(&self.client, headers, body)
    }

    fn build_post(
        &self,
        client: &reqwest::Client,
        headers: &[(&str, &str)],
        body: impl ToBody,
    ) -> reqwest::RequestBuilder {
        let mut req = client
            .post(self.url(&self.endpoint))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_body());
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req
    }

    /// POSTs to `/mcp` and reads the whole answer.
    pub async fn post(&self, headers: &[(&str, &str)], body: impl ToBody) -> Reply {
        let resp = self
            .post_request(headers, body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST /mcp: {e}"));
        Reply::read(resp).await
    }

    /// POSTs to `/mcp` and returns its answer as a stream, read event by event.
    pub async fn post_stream(&self, headers: &[(&str, &str)], body: impl ToBody) -> Events {
        let send = self.build_post(&self.streams, headers, body).send();
        let resp = tokio::time::timeout(patience(), send)
            .await
            .unwrap_or_else(|_| panic!("POST /mcp: no answer within {:?}", patience()))
            .unwrap_or_else(|e| panic!("POST /mcp: {e}"));
        Events::new(resp)
    }

    /// A stateless 2026-07-28 request, with its `_meta` (empty client capabilities unless
    /// `params` carries `_meta`) and the headers the wire requires (`Mcp-Protocol-Version`,
    /// `Mcp-Method`, and `Mcp-Name` from the params' `name` or `uri`).
    pub async fn post_modern(&self, id: impl Into<Value>, method: &str, params: Value) -> Reply {
        let mut params = params;
        if params.get("_meta").is_none() {
            params["_meta"] = modern_meta(json!({}));
        }
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
        if let Some(name) = &name {
            headers.push(("mcp-name", name));
        }
        self.post(&headers, &request(id, method, params)).await
    }

    /// Opens a legacy Streamable HTTP session at `version`: `initialize` (answered 200
    /// with that revision and a session id of at least 32 visible ASCII characters), then
    /// `notifications/initialized` (202, no body). Returns the session id.
    pub async fn session(&self, version: &str, capabilities: Value) -> String {
        let init = request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "mcp-test-kit", "version": "1.0.0"}}),
        );
        let r = self.post(&[], &init).await;
        assert_eq!(r.status, StatusCode::OK, "initialize: {}", r.body);
        let answer = r.messages();
        assert_eq!(answer.len(), 1, "initialize: {}", r.body);
        assert_eq!(
            answer[0]["result"]["protocolVersion"], version,
            "initialize: {}",
            r.body
        );
        let session = r.session.expect("Mcp-Session-Id");
        assert!(
            session.len() >= 32 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "{session}"
        );
        let r = self
            .post(
                &[("mcp-session-id", &session)],
                &notification("notifications/initialized", None),
            )
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "initialized: {}", r.body);
        assert!(r.body.is_empty(), "initialized: {}", r.body);
        session
    }

    /// A session's GET stream (resumed after `last_event_id`), which must open (200).
    pub async fn get_stream(&self, session: &str, last_event_id: Option<&str>) -> Events {
        let mut req = self
            .streams
            .get(self.url(&self.endpoint))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session);
        if let Some(last) = last_event_id {
            req = req.header("last-event-id", last);
        }
        let resp = tokio::time::timeout(patience(), req.send())
            .await
            .unwrap_or_else(|_| panic!("GET /mcp: no answer within {:?}", patience()))
            .unwrap_or_else(|e| panic!("GET /mcp: {e}"));
        assert_eq!(resp.status(), StatusCode::OK, "GET /mcp");
        Events::new(resp)
    }

    /// DELETE `/mcp` of a session: its status.
    pub async fn delete(&self, session: &str) -> StatusCode {
        self.client
            .delete(self.url(&self.endpoint))
            .header("mcp-session-id", session)
            .send()
            .await
            .unwrap_or_else(|e| panic!("DELETE /mcp: {e}"))
            .status()
    }

    /// Connects an HTTP+SSE (2024-11-05) client: `GET /sse`, whose first event must name
    /// the connection's `/messages` endpoint.
    pub async fn sse(&self) -> LegacySse {
        let send = self
            .streams
            .get(self.url(&self.sse_path))
            .header("accept", "text/event-stream")
            .send();
        let resp = tokio::time::timeout(patience(), send)
            .await
            .unwrap_or_else(|_| panic!("GET /sse: no answer within {:?}", patience()))
            .unwrap_or_else(|e| panic!("GET /sse: {e}"));
        assert_eq!(resp.status(), StatusCode::OK, "GET /sse");
        let mut events = Events::new(resp);
        let endpoint = events.next().await.expect("the endpoint event");
        assert_eq!(endpoint.kind, "endpoint", "{:?}", endpoint.raw);
        let session = endpoint
            .data
            .split_once("sessionId=")
            .map(|(_, id)| id.to_owned())
            .unwrap_or_else(|| panic!("an endpoint without a session id: {:?}", endpoint.raw));
        LegacySse {
            poster: SsePoster {
                client: self.client.clone(),
                url: self.url(&endpoint.data),
            },
            endpoint,
            session,
            events,
        }
    }
}

/// A stream of server-sent events (a session's GET stream, a POST answered as a stream,
/// HTTP+SSE), read event by event.
pub struct Events {
    /// The response's status.
    pub status: StatusCode,
    /// Its `Content-Type`.
    pub content_type: String,
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    parser: SseParser,
    /// Why the stream ended, if it did not end cleanly (the connection was cut).
    pub broken: Option<String>,
}

impl Events {
    /// Reads `resp`'s body as a stream of events.
    pub fn new(resp: reqwest::Response) -> Events {
        Events {
            status: resp.status(),
            content_type: header(&resp, "content-type").unwrap_or_default(),
            body: resp.bytes_stream().boxed(),
            parser: SseParser::default(),
            broken: None,
        }
    }

    /// The next event, or `None` when the stream has ended. Fails if no event arrives
    /// within the patience.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Some(event.unwrap_or_else(|e| panic!("{e}")));
            }
            let chunk = tokio::time::timeout(patience(), self.body.next())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "expected an event within {:?} (MCP_TEST_TIMEOUT_MS); none arrived",
                        patience()
                    )
                });
            match chunk {
                Some(Ok(bytes)) => self.parser.push(&bytes),
                Some(Err(e)) => {
                    self.broken = Some(e.to_string());
                    return None;
                }
                None => {
                    assert!(
                        self.parser.rest().iter().all(u8::is_ascii_whitespace),
                        "the stream ended inside an event: {:?}",
                        String::from_utf8_lossy(self.parser.rest())
                    );
                    return None;
                }
            }
        }
    }

    /// The next event that carries a message (its id and the message); SSE polling's
    /// priming and retry-only events are skipped, any other event must be a message.
    pub async fn next_message(&mut self) -> (Option<String>, Value) {
        let event = loop {
            let event = self
                .next()
                .await
                .expect("a message event; the stream ended");
            if !carries_no_message(&event) {
                break event;
            }
        };
        assert_eq!(event.kind, "message", "{:?}", event.raw);
        let message = event.message().unwrap_or_else(|e| panic!("{e}"));
        (event.id, message)
    }

    /// The messages of every event until the stream ends (polling's priming and
    /// retry-only events skipped).
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(event) = self.next().await {
            if carries_no_message(&event) {
                continue;
            }
            assert_eq!(event.kind, "message", "{:?}", event.raw);
            messages.push(event.message().unwrap_or_else(|e| panic!("{e}")));
        }
        messages
    }
}

/// Whether an event is one of SSE polling's (2025-11-25) that carry no message: the priming
/// event (an id, empty data) or a bare `retry:` before the server closes the connection.
/// Tests that check those read them with [`Events::next`].
fn carries_no_message(event: &SseEvent) -> bool {
    event.is_priming() || event.is_retry_only()
}

/// Posts to an HTTP+SSE connection's endpoint; cheap to clone into a task.
#[derive(Clone)]
pub struct SsePoster {
    client: reqwest::Client,
    url: String,
}

impl SsePoster {
    /// POSTs one message to the endpoint; the status (202 when accepted).
    pub async fn post(&self, body: impl ToBody) -> StatusCode {
        self.client
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body.to_body())
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {}: {e}", self.url))
            .status()
    }
}

/// An HTTP+SSE (2024-11-05) connection: messages are POSTed to its endpoint and every
/// answer and notification arrives on its stream, in order, so the same strictness as over
/// stdio applies.
pub struct LegacySse {
    /// The `endpoint` event, as received.
    pub endpoint: SseEvent,
    /// The connection's session id (from the endpoint).
    pub session: String,
    poster: SsePoster,
    events: Events,
}

impl LegacySse {
    /// A poster for this connection's endpoint.
    pub fn poster(&self) -> SsePoster {
        self.poster.clone()
    }

    /// POSTs one message; the status.
    pub async fn post(&self, body: impl ToBody) -> StatusCode {
        self.poster.post(body).await
    }

    /// The stream, for reading events directly.
    pub fn events(&mut self) -> &mut Events {
        &mut self.events
    }

    /// The next message on the stream.
    pub async fn recv(&mut self) -> Value {
        self.events.next_message().await.1
    }

    /// Sends a request (accepted: 202) and returns its answer, which must be the next
    /// message on the stream.
    pub async fn request(
        &mut self,
        id: impl Into<Value>,
        method: &str,
        params: impl Into<Option<Value>>,
    ) -> Value {
        let id = id.into();
        let status = self.post(&request(id.clone(), method, params)).await;
        assert_eq!(status, StatusCode::ACCEPTED, "POST {method}");
        let answer = self.recv().await;
        assert!(
            is_answer_to(&answer, &id),
            "expected the answer to {id}, got {answer}"
        );
        answer
    }

    /// The handshake at `version`; returns the `initialize` response.
    pub async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let response = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "mcp-test-kit", "version": "1.0.0"}}),
            )
            .await;
        assert!(response.get("result").is_some(), "initialize: {response}");
        let status = self
            .post(&notification("notifications/initialized", None))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "notifications/initialized");
        response
    }
}
