//! The Streamable HTTP link (2025-03-26 and later): every message is a POST to the MCP
//! endpoint, answered with JSON, an SSE stream, or `202 Accepted`.
//!
//! - Legacy sessions (2025-03-26 … 2025-11-25): the `Mcp-Session-Id` the `initialize`
//!   answer names goes on every later request, with `MCP-Protocol-Version`; a GET stream
//!   carries what the server sends outside any request; a response stream that ends
//!   before its answer is resumed with a GET carrying `Last-Event-ID`, after the `retry`
//!   the server advised; closing sends a DELETE.
//! - 2026-07-28: no session, no GET stream, no resumption; the request metadata headers
//!   come from the core with each message, and closing a request's response stream is
//!   how it is cancelled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;

use super::sse;
use super::stdio::error_object;
use super::{Incoming, IncomingTx, Link, LinkFuture, LinkKind, Outbound, OutboundKind};
use crate::error::{ClientError, ClientErrorKind};
use mcp_runtime::wire::{self, Frame, Message, RequestId};

/// How often in a row a response stream that ended early is resumed without the server
/// sending anything before the request fails. A reconnection that reads anything (an
/// event, a `retry`) starts the count again: a server that polls (2025-11-25) closes
/// each connection of a long request's stream, as often as it takes.
const MAX_RESUMPTIONS: usize = 5;
/// The wait before resuming when the server gave no `retry` advice.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many times in a row the session's GET stream is re-opened after it ends without
/// the server sending anything (a polling server's connections that carry something
/// start the count again).
const MAX_GET_REOPENS: usize = 3;

/// Settings of an HTTP link.
#[derive(Clone, Debug)]
pub(crate) struct HttpSettings {
    /// The largest JSON body or SSE event read from the server, in bytes.
    pub(crate) max_message_bytes: usize,
    /// Headers sent with every request (authorization, for instance).
    pub(crate) headers: Vec<(String, String)>,
    /// Whether a legacy session opens its GET stream.
    pub(crate) get_stream: bool,
    /// OAuth, when configured: every request goes through it.
    pub(crate) auth: Option<Arc<crate::auth::Authorizer>>,
    /// An event stream silent for longer is dead (`ClientBuilder::stream_idle_timeout`).
    pub(crate) stream_idle_timeout: Option<Duration>,
}

/// How reading an SSE response ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StreamEnd {
    /// The answer to the request came (the stream is left).
    Answered,
    /// The server ended the stream, or the connection broke.
    Ended,
    /// Nothing arrived for longer than the idle bound: the connection is presumed dead.
    Silent,
}

/// The next chunk of `response`, or `Err(())` when none came within `bound`. (A keep-alive
/// comment is a chunk: it proves the connection alive.)
pub(crate) async fn chunk_within(
    response: &mut reqwest::Response,
    bound: Option<Duration>,
) -> Result<reqwest::Result<Option<bytes::Bytes>>, ()> {
    match bound {
        // `chunk` holds nothing between polls: dropping it loses no data.
        Some(bound) => tokio::time::timeout(bound, response.chunk())
            .await
            .map_err(|_| ()),
        None => Ok(response.chunk().await),
    }
}

struct State {
    session_id: Option<String>,
    protocol_version: Option<String>,
    exchanges: HashMap<RequestId, tokio::task::AbortHandle>,
    get_stream: Option<tokio::task::AbortHandle>,
}

struct Shared {
    http: reqwest::Client,
    url: reqwest::Url,
    settings: HttpSettings,
    incoming: IncomingTx,
    state: Mutex<State>,
}

pub(crate) struct HttpLink(Arc<Shared>);

fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn http_client() -> Result<reqwest::Client, ClientError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| ClientError::transport(format!("cannot build the HTTP client: {e}")))
}

pub(crate) fn parse_url(url: &str) -> Result<reqwest::Url, ClientError> {
    reqwest::Url::parse(url).map_err(|e| ClientError::transport(format!("bad URL `{url}`: {e}")))
}

impl HttpLink {
    pub(crate) fn new(
        url: &str,
        settings: HttpSettings,
        incoming: IncomingTx,
    ) -> Result<HttpLink, ClientError> {
        Ok(HttpLink(Arc::new(Shared {
            http: http_client()?,
            url: parse_url(url)?,
            settings,
            incoming,
            state: Mutex::new(State {
                session_id: None,
                protocol_version: None,
                exchanges: HashMap::new(),
                get_stream: None,
            }),
        })))
    }
}

impl Shared {
    /// The headers every request of the session carries.
    fn base_headers(&self, extra: &[(String, String)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let mut put = |name: &str, value: &str| match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => {
                headers.insert(n, v);
            }
            _ => tracing::warn!("not sending the malformed header `{name}`"),
        };
        for (name, value) in &self.settings.headers {
            put(name, value);
        }
        let (session, version) = {
            let state = lock(&self.state);
            (state.session_id.clone(), state.protocol_version.clone())
        };
        if let Some(session) = &session {
            put("mcp-session-id", session);
        }
        if let Some(version) = &version {
            put("mcp-protocol-version", version);
        }
        for (name, value) in extra {
            put(name, value);
        }
        headers
    }

    fn keep_session_id(&self, headers: &HeaderMap) {
        if let Some(id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            lock(&self.state).session_id = Some(id.to_owned());
        }
    }

    async fn post(&self, out: &Outbound) -> Result<reqwest::Response, ClientError> {
        let mut headers = self.base_headers(&out.headers);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let request = self
            .http
            .post(self.url.clone())
            .headers(headers)
            .body(out.json.clone());
        crate::auth::send(
            self.settings.auth.as_ref(),
            request,
            &format!("POST {}", self.url),
        )
        .await
    }

    fn fail(&self, id: &RequestId, error: ClientError) {
        let _ = self.incoming.send(Incoming::Failed {
            id: id.clone(),
            error,
        });
    }

    /// One request's exchange: the POST, then its JSON or SSE answer, resumed if its
    /// stream ends early in a legacy session.
    async fn exchange(self: Arc<Self>, id: RequestId, out: Outbound) {
        let sent_on = lock(&self.state).session_id.clone();
        let response = match self.post(&out).await {
            Ok(r) => r,
            Err(e) => return self.fail(&id, e),
        };
        if response.status() == StatusCode::NOT_FOUND {
            if let Some(ended) = sent_on {
                // The server no longer knows the session, and did not run the request:
                // the client starts a new session (the spec's MUST) and sends it again.
                self.forget_session(&ended);
                return self.fail(
                    &id,
                    ClientError::new(
                        ClientErrorKind::SessionExpired,
                        "the server ended the session (HTTP 404)",
                    ),
                );
            }
        }
        if out.opens_session && response.status().is_success() {
            self.keep_session_id(response.headers());
        }
        let status = response.status();
        let content_type = content_type(&response);
        if content_type.starts_with("text/event-stream") && status.is_success() {
            let mut parser = sse::Parser::new(self.settings.max_message_bytes);
            let end = self.read_events(response, &mut parser, Some(&id)).await;
            if end == StreamEnd::Answered {
                return;
            }
            self.resume(&id, parser, end).await;
            return;
        }
        let body = match read_body(response, self.settings.max_message_bytes).await {
            Ok(b) => b,
            Err(e) => return self.fail(&id, e),
        };
        if self.deliver(&body, Some(&id)) {
            return;
        }
        let message = match status {
            StatusCode::NOT_FOUND if lock(&self.state).session_id.is_some() => {
                "the server ended the session (404)".to_owned()
            }
            s if s.is_success() => format!("HTTP {s} without an answer to the request"),
            s => format!(
                "HTTP {s}{}",
                if body.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": {}",
                        String::from_utf8_lossy(&body)
                            .chars()
                            .take(200)
                            .collect::<String>()
                    )
                }
            ),
        };
        self.fail(&id, ClientError::transport(message));
    }

    /// Forgets session `ended` (the server answered 404 for it), unless a new one took
    /// its place already: later requests go without it until `initialize` opens the next,
    /// and its GET stream stops.
    fn forget_session(&self, ended: &str) {
        let mut state = lock(&self.state);
        if state.session_id.as_deref() == Some(ended) {
            state.session_id = None;
            if let Some(get) = state.get_stream.take() {
                get.abort();
            }
        }
    }

    /// Delivers a JSON body's messages; whether the answer to `id` was among them (an
    /// error answer with `id: null` counts: it is delivered as the request's failure).
    fn deliver(&self, bytes: &[u8], id: Option<&RequestId>) -> bool {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return false;
        }
        let messages = match wire::parse_frame(bytes) {
            Frame::Single(m) => vec![m],
            Frame::Batch(ms) => ms,
        };
        let mut answered = false;
        for m in messages {
            match m {
                Ok(message) => {
                    if let (Message::Response { id: rid, .. }, Some(id)) = (&message, id) {
                        answered |= rid == id;
                    }
                    let _ = self.incoming.send(Incoming::Message {
                        message,
                        related: id.cloned(),
                    });
                }
                Err(invalid) => match (invalid.id, id, error_object(bytes)) {
                    (None, Some(id), Some(error)) => {
                        self.fail(id, ClientError::from_rpc(error));
                        answered = true;
                    }
                    _ => tracing::warn!(
                        "ignoring an invalid message from the server: {}",
                        invalid.error.message
                    ),
                },
            }
        }
        answered
    }

    /// Reads an SSE response, delivering each message, until the answer to `id` came (the
    /// answer ends a request's stream), the stream ended, or it was silent for longer than
    /// the idle bound. An event over the size limit ends the stream, and fails the request
    /// `id` (it counts as answered: no resumption would bring anything but the same event).
    async fn read_events(
        &self,
        mut response: reqwest::Response,
        parser: &mut sse::Parser,
        id: Option<&RequestId>,
    ) -> StreamEnd {
        loop {
            match chunk_within(&mut response, self.settings.stream_idle_timeout).await {
                Ok(Ok(Some(chunk))) => {
                    let mut answered = false;
                    let events = match parser.feed(&chunk) {
                        Ok(events) => events,
                        Err(too_large) => {
                            tracing::warn!("{too_large}; the stream is dropped");
                            if let Some(id) = id {
                                self.fail(id, ClientError::transport(too_large.to_string()));
                                return StreamEnd::Answered;
                            }
                            return StreamEnd::Ended;
                        }
                    };
                    for event in events {
                        if (event.event.is_empty() || event.event == "message")
                            && !event.data.trim().is_empty()
                        {
                            answered |= self.deliver(event.data.as_bytes(), id);
                        }
                    }
                    if answered {
                        return StreamEnd::Answered;
                    }
                }
                Ok(Ok(None)) => return StreamEnd::Ended,
                Ok(Err(e)) => {
                    tracing::debug!("a response stream broke: {e}");
                    return StreamEnd::Ended;
                }
                Err(()) => {
                    tracing::debug!("a response stream went silent: presumed dead");
                    return StreamEnd::Silent;
                }
            }
        }
    }

    /// Resumes a request's stream that ended (or went silent) before its answer, in a
    /// legacy session with an event id to resume from; fails the request otherwise.
    async fn resume(&self, id: &RequestId, mut parser: sse::Parser, mut end: StreamEnd) {
        let legacy = lock(&self.state).protocol_version.is_some();
        let mut idle = 0;
        while idle < MAX_RESUMPTIONS {
            let Some(last_id) = parser.last_id.clone().filter(|_| legacy) else {
                break;
            };
            idle += 1;
            // A silent stream is resumed at once: its time was spent already.
            if end != StreamEnd::Silent {
                let wait = parser.retry_ms.map_or(DEFAULT_RETRY, Duration::from_millis);
                tokio::time::sleep(wait).await;
            }
            let Ok(response) = self.get(Some(&last_id)).await else {
                continue;
            };
            if !response.status().is_success() {
                break;
            }
            let before = parser.fields;
            end = self.read_events(response, &mut parser, Some(id)).await;
            if end == StreamEnd::Answered {
                return;
            }
            if parser.fields > before {
                idle = 0;
            }
        }
        let message = match (end, self.settings.stream_idle_timeout) {
            (StreamEnd::Silent, Some(bound)) => format!(
                "the response stream was silent for longer than {bound:?} (no event, no \
                 keep-alive) and cannot be resumed: the connection is presumed dead"
            ),
            _ => "the response stream ended before the answer".to_owned(),
        };
        self.fail(id, ClientError::transport(message));
    }

    async fn get(&self, last_event_id: Option<&str>) -> Result<reqwest::Response, ClientError> {
        let mut headers = self.base_headers(&[]);
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(Ok(v)) = last_event_id.map(HeaderValue::from_str) {
            headers.insert("last-event-id", v);
        }
        let request = self.http.get(self.url.clone()).headers(headers);
        crate::auth::send(
            self.settings.auth.as_ref(),
            request,
            &format!("GET {}", self.url),
        )
        .await
    }

    /// The session's GET stream: what the server sends outside any request. `opened`
    /// hears when the first attempt is answered.
    async fn listen(self: Arc<Self>, opened: tokio::sync::oneshot::Sender<()>) {
        let mut parser = sse::Parser::new(self.settings.max_message_bytes);
        let mut reopens = 0;
        let mut opened = Some(opened);
        loop {
            let response = self.get(parser.last_id.as_deref()).await;
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            let response = match response {
                Ok(r)
                    if r.status().is_success()
                        && content_type(&r).starts_with("text/event-stream") =>
                {
                    r
                }
                // 405: the server offers no GET stream; anything else: give up quietly.
                _ => return,
            };
            let before = parser.fields;
            let end = self.read_events(response, &mut parser, None).await;
            // A stream that carried something, or went silent (the connection, not the
            // server, is at fault), is opened again without counting.
            if parser.fields > before || end == StreamEnd::Silent {
                reopens = 0;
            }
            reopens += 1;
            if reopens > MAX_GET_REOPENS {
                return;
            }
            let wait = parser.retry_ms.map_or(DEFAULT_RETRY, Duration::from_millis);
            tokio::time::sleep(wait).await;
        }
    }
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// A JSON answer's body, refused (unread beyond the limit) when larger than `limit`.
async fn read_body(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, ClientError> {
    let too_large = || {
        ClientError::transport(format!(
            "the server's answer is larger than {limit} bytes (the client's max_message_bytes)"
        ))
    };
    if response
        .content_length()
        .is_some_and(|n| n > u64::try_from(limit).unwrap_or(u64::MAX))
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if body.len().saturating_add(chunk.len()) > limit => {
                return Err(too_large())
            }
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => return Ok(body),
            Err(e) => return Err(ClientError::transport(format!("reading an answer: {e}"))),
        }
    }
}

impl Drop for HttpLink {
    /// A client dropped without `close`: its streams end, and a legacy session is
    /// deleted in the background when a runtime is at hand.
    fn drop(&mut self) {
        let session = {
            let mut state = lock(&self.0.state);
            if let Some(get) = state.get_stream.take() {
                get.abort();
            }
            for (_, task) in state.exchanges.drain() {
                task.abort();
            }
            state.session_id.take()
        };
        if let (Some(session), Ok(runtime)) = (session, tokio::runtime::Handle::try_current()) {
            let (http, url) = (self.0.http.clone(), self.0.url.clone());
            let auth = self.0.settings.auth.clone();
            runtime.spawn(async move {
                let what = format!("DELETE {url}");
                let request = http
                    .delete(url)
                    .header("mcp-session-id", session)
                    .timeout(Duration::from_secs(5));
                let _ = crate::auth::send(auth.as_ref(), request, &what).await;
            });
        }
    }
}

impl Link for HttpLink {
    fn kind(&self) -> LinkKind {
        LinkKind::StreamableHttp
    }

    fn send(&self, out: Outbound) -> LinkFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            match &out.kind {
                OutboundKind::Request(id) => {
                    let id = id.clone();
                    let shared = self.0.clone();
                    let task = tokio::spawn(shared.clone().exchange(id.clone(), out));
                    let mut state = lock(&shared.state);
                    state.exchanges.retain(|_, t| !t.is_finished());
                    state.exchanges.insert(id, task.abort_handle());
                    Ok(())
                }
                OutboundKind::Notification | OutboundKind::Response => {
                    let response = self.0.post(&out).await?;
                    let status = response.status();
                    if status.is_success() {
                        Ok(())
                    } else {
                        Err(ClientError::transport(format!(
                            "the server refused a message: HTTP {status}"
                        )))
                    }
                }
            }
        })
    }

    fn abandon(&self, id: &RequestId) {
        if let Some(task) = lock(&self.0.state).exchanges.remove(id) {
            task.abort();
        }
    }

    fn has_session(&self) -> bool {
        let state = lock(&self.0.state);
        // A 2026-07-28 exchange has no session and needs none.
        state.session_id.is_some() || state.protocol_version.is_none()
    }

    fn session_opened(&self, version: crate::ProtocolVersion) {
        lock(&self.0.state).protocol_version = Some(version.as_str().to_owned());
    }

    fn listen(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            if !self.0.settings.get_stream || lock(&self.0.state).get_stream.is_some() {
                return;
            }
            // Open before the first request goes out, so that nothing the server sends
            // outside a request's stream is missed, and so that a request's resumption
            // is never confused with the opening of this stream.
            let (opened, is_open) = tokio::sync::oneshot::channel();
            let task = tokio::spawn(self.0.clone().listen(opened));
            lock(&self.0.state).get_stream = Some(task.abort_handle());
            let _ = tokio::time::timeout(Duration::from_secs(10), is_open).await;
        })
    }

    fn close(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            let session = {
                let mut state = lock(&self.0.state);
                if let Some(get) = state.get_stream.take() {
                    get.abort();
                }
                for (_, task) in state.exchanges.drain() {
                    task.abort();
                }
                state.session_id.is_some()
            };
            if session {
                let headers = self.0.base_headers(&[]);
                let request = self
                    .0
                    .http
                    .delete(self.0.url.clone())
                    .headers(headers)
                    .timeout(Duration::from_secs(5));
                let _ = crate::auth::send(
                    self.0.settings.auth.as_ref(),
                    request,
                    &format!("DELETE {}", self.0.url),
                )
                .await;
                lock(&self.0.state).session_id = None;
            }
        })
    }
}
