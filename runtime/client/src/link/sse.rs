//! A Server-Sent Events reader (the WHATWG event-stream format): bytes in, events out,
//! with the last event id and the server's `retry` advice kept for reconnection.

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// `event:` (empty means `message`).
    pub(crate) event: String,
    /// The `data:` lines, joined with newlines.
    pub(crate) data: String,
    /// The `id:` in force when it was dispatched, if any.
    pub(crate) id: Option<String>,
}

/// Incremental parser state.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// The last event id seen (sticky across events, as the format says).
    pub(crate) last_id: Option<String>,
    /// The last `retry:` advice, in milliseconds.
    pub(crate) retry_ms: Option<u64>,
    /// How many fields (`id`, `data`, `retry`, …) were read: a polling server's
    /// connection that carried any is one that worked, even without a message.
    pub(crate) fields: u64,
}

impl Parser {
    /// Feeds bytes; returns the events they complete.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buf.iter().position(|b| *b == b'\n' || *b == b'\r') {
            // A CR at the very end may be the first half of a CRLF still on its way.
            if self.buf.get(end) == Some(&b'\r') && end + 1 == self.buf.len() {
                break;
            }
            let line: Vec<u8> = self.buf.drain(..end).collect();
            let sep = if self.buf.first() == Some(&b'\r') && self.buf.get(1) == Some(&b'\n') {
                2
            } else {
                1
            };
            self.buf.drain(..sep);
            if let Some(event) = self.line(&String::from_utf8_lossy(&line)) {
                events.push(event);
            }
        }
        events
    }

    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        self.fields += 1;
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<Event> {
        let event = std::mem::take(&mut self.event);
        let data = std::mem::take(&mut self.data);
        let had_data = std::mem::replace(&mut self.has_data, false);
        had_data.then(|| Event {
            event,
            data,
            id: self.last_id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_parse_the_same() {
        let text = "id: 1\nretry: 500\ndata: \n\n: comment\r\nevent: message\r\ndata: {\"a\":\ndata: 1}\r\n\r\nevent: endpoint\ndata: /messages?x=1\n\n";
        for split in 0..text.len() {
            let mut p = Parser::default();
            let mut events = p.feed(&text.as_bytes()[..split]);
            events.extend(p.feed(&text.as_bytes()[split..]));
            assert_eq!(events.len(), 3, "split at {split}");
            assert_eq!(events[0].data, "");
            assert_eq!(events[0].id.as_deref(), Some("1"));
            assert_eq!(events[1].event, "message");
            assert_eq!(events[1].data, "{\"a\":\n1}");
            assert_eq!(events[2].event, "endpoint");
            assert_eq!(p.retry_ms, Some(500));
        }
    }
}
