//! The HTTP+SSE link (2024-11-05): a GET opens an event stream whose first event,
//! `endpoint`, names the URL to POST messages to; every answer, request and
//! notification of the server arrives on that stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};

use super::http::{chunk_within, http_client, parse_url, HttpSettings};
use super::sse;
use super::stdio::{deliver, deliver_noting};
use super::{Incoming, IncomingTx, Link, LinkFuture, LinkKind, Outbound, OutboundKind};
use crate::error::ClientError;
use mcp_runtime::wire::RequestId;

pub(crate) struct LegacySseLink {
    http: reqwest::Client,
    auth: Option<std::sync::Arc<crate::auth::Authorizer>>,
    endpoint: reqwest::Url,
    headers: HeaderMap,
    incoming: IncomingTx,
    stream: Mutex<Option<tokio::task::AbortHandle>>,
    /// The requests sent and not answered yet: while there are any, a stream silent for
    /// longer than the idle bound is dead.
    waiting: Waiting,
}

/// The requests waiting for their answer, with when each was sent.
type Waiting = Arc<Mutex<HashMap<RequestId, Instant>>>;

fn waiting_lock(w: &Waiting) -> std::sync::MutexGuard<'_, HashMap<RequestId, Instant>> {
    w.lock().unwrap_or_else(PoisonError::into_inner)
}

fn header_map(pairs: &[(String, String)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.insert(n, v);
        }
    }
    headers
}

impl LegacySseLink {
    /// Opens the stream at `url` and waits for its `endpoint` event.
    pub(crate) async fn connect(
        url: &str,
        settings: &HttpSettings,
        incoming: IncomingTx,
    ) -> Result<LegacySseLink, ClientError> {
        let http = http_client()?;
        let url = parse_url(url)?;
        let headers = header_map(&settings.headers);
        let request = http
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream");
        let mut response =
            crate::auth::send(settings.auth.as_ref(), request, &format!("GET {url}")).await?;
        if !response.status().is_success() {
            return Err(ClientError::transport(format!(
                "GET {url}: HTTP {} (not an HTTP+SSE endpoint)",
                response.status()
            )));
        }
        let mut parser = sse::Parser::new(settings.max_message_bytes);
        let mut early = Vec::new();
        let endpoint = 'found: loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| ClientError::transport(format!("reading {url}: {e}")))?
                .ok_or_else(|| {
                    ClientError::transport(format!("{url}: the stream ended before its endpoint"))
                })?;
            let events = parser
                .feed(&chunk)
                .map_err(|e| ClientError::transport(format!("{url}: {e}")))?;
            for event in events {
                if event.event == "endpoint" {
                    let endpoint = url.join(event.data.trim()).map_err(|e| {
                        ClientError::transport(format!("bad endpoint `{}`: {e}", event.data))
                    })?;
                    break 'found endpoint;
                }
                early.push(event);
            }
        };
        // Messages before the endpoint are not expected; keep them anyway.
        for event in early {
            deliver(event.data.as_bytes(), &incoming, None);
        }
        let waiting = Waiting::default();
        let task = tokio::spawn(read_stream(
            response,
            parser,
            incoming.clone(),
            Arc::clone(&waiting),
            settings.stream_idle_timeout,
        ));
        Ok(LegacySseLink {
            http,
            auth: settings.auth.clone(),
            endpoint,
            headers,
            incoming,
            stream: Mutex::new(Some(task.abort_handle())),
            waiting,
        })
    }
}

async fn read_stream(
    mut response: reqwest::Response,
    mut parser: sse::Parser,
    incoming: IncomingTx,
    waiting: Waiting,
    idle_bound: Option<Duration>,
) {
    let why = loop {
        match chunk_within(&mut response, idle_bound).await {
            Ok(Ok(Some(chunk))) => {
                // An event over the limit ends the session: what follows it in the stream
                // cannot be told apart from it.
                let events = match parser.feed(&chunk) {
                    Ok(events) => events,
                    Err(too_large) => break too_large.to_string(),
                };
                for event in events {
                    if (event.event.is_empty() || event.event == "message")
                        && !event.data.trim().is_empty()
                    {
                        deliver_noting(event.data.as_bytes(), &incoming, None, &mut |id| {
                            waiting_lock(&waiting).remove(id);
                        });
                    }
                }
            }
            Ok(Ok(None)) => break "the server closed the event stream".to_owned(),
            Ok(Err(e)) => break format!("the event stream broke: {e}"),
            // Silent for the whole bound, but no request has waited that long (idle with
            // nothing asked: a server without keep-alive, quiet for now).
            Err(())
                if !waiting_lock(&waiting)
                    .values()
                    .any(|sent| sent.elapsed() >= idle_bound.unwrap_or_default()) => {}
            Err(()) => {
                break format!(
                    "the event stream was silent for longer than {:?} (no event, no \
                     keep-alive) while requests waited: the connection is presumed dead \
                     (HTTP+SSE cannot resume a stream)",
                    idle_bound.unwrap_or_default()
                )
            }
        }
    };
    let _ = incoming.send(Incoming::Closed(why));
}

impl Drop for LegacySseLink {
    fn drop(&mut self) {
        if let Some(task) = self.stream.lock().ok().and_then(|mut s| s.take()) {
            task.abort();
        }
    }
}

impl Link for LegacySseLink {
    fn kind(&self) -> LinkKind {
        LinkKind::LegacySse
    }

    fn send(&self, out: Outbound) -> LinkFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if let OutboundKind::Request(id) = &out.kind {
                waiting_lock(&self.waiting).insert(id.clone(), Instant::now());
            }
            let mut headers = self.headers.clone();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            let request = self
                .http
                .post(self.endpoint.clone())
                .headers(headers)
                .body(out.json.clone());
            let result = crate::auth::send(
                self.auth.as_ref(),
                request,
                &format!("POST {}", self.endpoint),
            )
            .await;
            let failure = match result {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) => {
                    ClientError::transport(format!("POST {}: HTTP {}", self.endpoint, r.status()))
                }
                Err(e) => e,
            };
            if let OutboundKind::Request(id) = &out.kind {
                waiting_lock(&self.waiting).remove(id);
                let _ = self.incoming.send(Incoming::Failed {
                    id: id.clone(),
                    error: failure.clone(),
                });
            }
            Err(failure)
        })
    }

    fn abandon(&self, id: &RequestId) {
        waiting_lock(&self.waiting).remove(id);
    }

    fn session_opened(&self, _version: crate::ProtocolVersion) {}

    fn close(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            if let Some(task) = self.stream.lock().ok().and_then(|mut s| s.take()) {
                task.abort();
            }
        })
    }
}
