//! A Server-Sent Events reader (the WHATWG event-stream format): bytes in, events out,
//! with the last event id and the server's `retry` advice kept for reconnection.
//!
//! Linear in what it reads: each byte is searched for a line end once, however many
//! chunks an event arrives in (the first version searched its whole buffer again on every
//! chunk, quadratic in an event's size; BENCHMARKS.md §7, the SSE parser measures both), and an event
//! larger than the client's `max_message_bytes` is refused before it is buffered whole.

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// `event:` (empty means `message`).
    pub event: String,
    /// The `data:` lines, joined with newlines.
    pub data: String,
    /// The `id:` in force when it was dispatched, if any.
    pub id: Option<String>,
}

/// An event (its data and the line being read) larger than the parser's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The limit, in bytes.
    pub limit: usize,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server sent an SSE event of more than {} bytes (the client's max_message_bytes)",
            self.limit
        )
    }
}

/// Incremental parser state.
#[derive(Debug)]
pub struct Parser {
    /// Bytes of lines not yet complete.
    buf: Vec<u8>,
    /// How much of `buf` has been searched for a line end already.
    scanned: usize,
    event: String,
    data: String,
    has_data: bool,
    /// The largest event accepted: its data and any one line, in bytes.
    limit: usize,
    /// The last event id seen (sticky across events, as the format says).
    pub last_id: Option<String>,
    /// The last `retry:` advice, in milliseconds.
    pub retry_ms: Option<u64>,
    /// How many fields (`id`, `data`, `retry`, …) were read: a polling server's
    /// connection that carried any is one that worked, even without a message.
    pub fields: u64,
}

impl Parser {
    /// A parser refusing events of more than `limit` bytes.
    pub fn new(limit: usize) -> Parser {
        Parser {
            buf: Vec::new(),
            scanned: 0,
            event: String::new(),
            data: String::new(),
            has_data: false,
            limit,
            last_id: None,
            retry_ms: None,
            fields: 0,
        }
    }

    /// Feeds bytes; returns the events they complete, or the limit an event went past
    /// (the stream is then of no further use: the rest of that event cannot be told
    /// apart from the next).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Event>, TooLarge> {
        // Taken out so that lines can be read from it while the fields are updated.
        let mut buf = std::mem::take(&mut self.buf);
        buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        // Where the next search starts: past everything searched, unless a CR ends the
        // buffer (it may be the first half of a CRLF still on its way).
        let mut scanned_to = buf.len();
        while let Some(found) = buf
            .get(from..)
            .and_then(|rest| rest.iter().position(|b| *b == b'\n' || *b == b'\r'))
        {
            let end = from + found;
            let cr = buf.get(end) == Some(&b'\r');
            if cr && end + 1 == buf.len() {
                scanned_to = end;
                break;
            }
            let sep = if cr && buf.get(end + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            let line = buf.get(start..end).unwrap_or_default();
            if let Some(event) = self.line(&String::from_utf8_lossy(line)) {
                events.push(event);
            }
            if self.data.len() > self.limit {
                return Err(TooLarge { limit: self.limit });
            }
            start = end + sep;
            from = start;
        }
        // Only the incomplete line is kept: it lies in what this chunk brought (the bytes
        // before it ended a line), so moving it costs no more than the chunk.
        buf.drain(..start);
        self.scanned = scanned_to - start;
        // What is buffered will join this event's data (or be a field line of it).
        if buf.len().saturating_add(self.data.len()) > self.limit {
            return Err(TooLarge { limit: self.limit });
        }
        self.buf = buf;
        Ok(events)
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

    const BIG: usize = 1 << 30;

    #[test]
    fn events_split_anywhere_parse_the_same() {
        let text = "id: 1\nretry: 500\ndata: \n\n: comment\r\nevent: message\r\ndata: {\"a\":\ndata: 1}\r\n\r\nevent: endpoint\ndata: /messages?x=1\n\n";
        for split in 0..text.len() {
            let mut p = Parser::new(BIG);
            let mut events = p.feed(&text.as_bytes()[..split]).unwrap();
            events.extend(p.feed(&text.as_bytes()[split..]).unwrap());
            assert_eq!(events.len(), 3, "split at {split}");
            assert_eq!(events[0].data, "");
            assert_eq!(events[0].id.as_deref(), Some("1"));
            assert_eq!(events[1].event, "message");
            assert_eq!(events[1].data, "{\"a\":\n1}");
            assert_eq!(events[2].event, "endpoint");
            assert_eq!(p.retry_ms, Some(500));
        }
    }

    #[test]
    fn byte_by_byte_is_the_same_as_whole() {
        let text = "data: a\r\rdata: b\r\n\r\ndata: c\n\n:x\r\r\n";
        let mut whole = Parser::new(BIG);
        let expected = whole.feed(text.as_bytes()).unwrap();
        assert_eq!(expected.len(), 3, "{expected:?}");
        let mut p = Parser::new(BIG);
        let mut events = Vec::new();
        for b in text.as_bytes() {
            events.extend(p.feed(std::slice::from_ref(b)).unwrap());
        }
        assert_eq!(events, expected);
    }

    #[test]
    fn an_event_over_the_limit_is_refused_before_it_is_whole() {
        let mut p = Parser::new(1000);
        assert!(p.feed(b"data: small\n\n").unwrap().len() == 1);
        // One long line, in pieces: refused once the pieces pass the limit.
        let piece = [b'x'; 300];
        assert!(p.feed(b"data: ").unwrap().is_empty());
        assert!(p.feed(&piece).unwrap().is_empty());
        assert!(p.feed(&piece).unwrap().is_empty());
        assert!(p.feed(&piece).unwrap().is_empty());
        let e = p.feed(&piece).unwrap_err();
        assert_eq!(e.limit, 1000);
        assert!(e.to_string().contains("max_message_bytes"));
        // Many short data lines add up too.
        let mut p = Parser::new(1000);
        let lines = "data: 0123456789\n".repeat(100);
        assert!(p.feed(lines.as_bytes()).is_err());
        // At the limit exactly: accepted.
        let mut p = Parser::new(1000);
        let exact = format!("data: {}\n\n", "y".repeat(1000));
        assert_eq!(p.feed(exact.as_bytes()).unwrap()[0].data.len(), 1000);
    }

    /// One event of `size` bytes in 4 KiB chunks: how long it takes, and how many bytes
    /// were searched for a line end (the advance of `scanned` per feed is what each feed
    /// searched).
    fn read_one_event(size: usize) -> (std::time::Duration, usize) {
        let mut p = Parser::new(BIG);
        assert!(p.feed(b"data: ").unwrap().is_empty());
        let chunk = vec![b'z'; 4096];
        let started = std::time::Instant::now();
        let mut searched = 0;
        for _ in 0..size / chunk.len() {
            let before = p.scanned;
            assert!(p.feed(&chunk).unwrap().is_empty());
            searched += p.scanned - before;
        }
        let events = p.feed(b"\n\n").unwrap();
        let took = started.elapsed();
        assert_eq!(events[0].data.len(), size);
        (took, searched)
    }

    /// Linear time on a large event: each byte is searched once (counted, so that this
    /// holds on any machine), and eight times the size takes about eight times as long
    /// (the quadratic parser took 64 times as long; BENCHMARKS.md §7, the SSE parser).
    #[test]
    fn a_large_event_in_small_chunks_takes_linear_time() {
        let (small, searched) = read_one_event(2 << 20);
        assert_eq!(
            searched,
            2 << 20,
            "searched {searched} bytes for a 2 MiB event"
        );
        let (large, searched) = read_one_event(16 << 20);
        assert_eq!(searched, 16 << 20);
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
        println!("2 MiB: {small:?}, 16 MiB: {large:?}, ratio {ratio:.1}");
        assert!(ratio < 24.0, "2 MiB: {small:?}, 16 MiB: {large:?}");
    }
}
