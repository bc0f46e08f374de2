//! The framing and parsing every client of the tests, the benchmarks and the load example
//! shares: server-sent events cut from a byte stream, the JSON-RPC messages of a
//! Streamable HTTP answer (a JSON body or an SSE stream), and the cheap look at an answer
//! that the load generators check (its id and whether it carries a result, read without
//! building a `Value`).
//!
//! Strict: a data line that is not JSON, or a body of an unexpected type, is an error for
//! the caller to report, never skipped. Depends on serde and serde_json only, so that
//! `examples/load.rs` and `benches/*.rs` include it by path.

use serde_json::Value;

/// One server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// `id:`, if the event has one.
    pub id: Option<String>,
    /// `event:`, `message` when absent.
    pub kind: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The event as it was written, without its blank line.
    pub raw: String,
}

impl SseEvent {
    /// The event's data as a JSON-RPC message.
    pub fn message(&self) -> Result<Value, String> {
        serde_json::from_str(&self.data)
            .map_err(|e| format!("an SSE event whose data is not JSON ({e}): {:?}", self.raw))
    }

    /// The `retry:` field (the reconnection delay a polling server advises), if any.
    pub fn retry(&self) -> Option<u64> {
        self.raw
            .lines()
            .find_map(|l| l.strip_prefix("retry:"))
            .and_then(|v| v.trim().parse().ok())
    }

    /// Whether it is a priming event (SSE polling, 2025-11-25): an id and empty data.
    pub fn is_priming(&self) -> bool {
        self.id.is_some() && self.data.is_empty() && self.raw.lines().any(|l| l.starts_with("data"))
    }

    /// Whether it carries nothing but a `retry:` field (what a polling server sends before
    /// it closes a connection).
    pub fn is_retry_only(&self) -> bool {
        self.retry().is_some() && self.raw.lines().all(|l| l.starts_with("retry:"))
    }

    fn parse(raw: &str) -> SseEvent {
        let mut id = None;
        let mut kind = String::from("message");
        let mut data: Vec<&str> = Vec::new();
        for line in raw.lines() {
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => id = Some(value.to_owned()),
                "event" => kind = value.to_owned(),
                "data" => data.push(value),
                _ => {} // comments (`:`) and fields SSE clients ignore
            }
        }
        SseEvent {
            id,
            kind,
            data: data.join("\n"),
            raw: raw.to_owned(),
        }
    }
}

/// Cuts server-sent events out of a stream of bytes as they arrive (an event may span
/// chunks, and a chunk may end inside a UTF-8 character).
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
}

impl SseParser {
    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event, if one has arrived. Blocks of comments only (keep-alives)
    /// are passed over.
    pub fn next_event(&mut self) -> Option<Result<SseEvent, String>> {
        loop {
            // A comment line between events (a keep-alive sent without a blank line) is
            // passed over as soon as it is complete.
            while self.buffer.first() == Some(&b':') {
                let line_end = self.buffer.iter().position(|b| *b == b'\n')?;
                self.buffer.drain(..=line_end);
            }
            let end = self.buffer.windows(2).position(|w| w == b"\n\n")?;
            let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
            let text = match String::from_utf8(block) {
                Ok(text) => text,
                Err(e) => return Some(Err(format!("an SSE event that is not UTF-8: {e}"))),
            };
            let raw = text.trim_end_matches('\n');
            if raw.lines().all(|l| l.starts_with(':')) {
                continue;
            }
            return Some(Ok(SseEvent::parse(raw)));
        }
    }

    /// What is left that is not a complete event (empty at a clean end of stream).
    pub fn rest(&self) -> &[u8] {
        &self.buffer
    }
}

/// Every event of a complete SSE body; a trailing incomplete event is an error.
pub fn sse_events(body: &str) -> Result<Vec<SseEvent>, String> {
    let mut parser = SseParser::default();
    parser.push(body.as_bytes());
    let mut events = Vec::new();
    while let Some(event) = parser.next_event() {
        events.push(event?);
    }
    if parser.rest().iter().any(|b| !b.is_ascii_whitespace()) {
        return Err(format!(
            "the SSE body ends inside an event: {:?}",
            String::from_utf8_lossy(parser.rest())
        ));
    }
    Ok(events)
}

/// The JSON-RPC messages of a Streamable HTTP answer, by its `Content-Type`: one JSON
/// value (a batch answer stays one array), every event of an SSE stream, or none for an
/// empty body (202 Accepted).
pub fn answer_messages(content_type: &str, body: &str) -> Result<Vec<Value>, String> {
    if body.is_empty() {
        return Ok(Vec::new());
    }
    if content_type.starts_with("text/event-stream") {
        return sse_events(body)?.iter().map(SseEvent::message).collect();
    }
    if content_type.starts_with("application/json") {
        return serde_json::from_str(body)
            .map(|v| vec![v])
            .map_err(|e| format!("a JSON answer that is not JSON ({e}): {body}"));
    }
    Err(format!(
        "an answer of type {content_type:?}, neither JSON nor SSE: {body}"
    ))
}

/// What a load generator checks of an answer, read without building a `Value`: its
/// numeric id (`None` for a notification) and whether it carries a result.
#[derive(Debug, serde::Deserialize)]
pub struct AnswerHead {
    /// The answer's id.
    pub id: Option<u64>,
    /// Present for a result, absent for an error.
    pub result: Option<serde::de::IgnoredAny>,
}

/// Reads an [`AnswerHead`] from one message's bytes.
pub fn answer_head(bytes: &[u8]) -> Result<AnswerHead, serde_json::Error> {
    serde_json::from_slice(bytes)
}
