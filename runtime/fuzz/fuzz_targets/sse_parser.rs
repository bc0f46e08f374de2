//! Fuzzes the client's SSE parser (`mcp_runtime_client::sse::Parser`, what reads every
//! Streamable HTTP and HTTP+SSE answer from a server the client may not control). Byte 0
//! is the chunk size (0: all at once), byte 1 picks the event limit (64, 1024, 64 KiB or
//! unbounded); the rest is the stream. Invariants: no panic; the same events and the same
//! last id and retry whatever the chunking, up to the point where one chunking went over
//! the limit (then the other did too, at the same event or later), and no dispatched
//! event is larger than the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime_client::sse::{Event, Parser};

/// Every event `data` gives in chunks of `chunk` bytes (0: one chunk), and whether the
/// limit stopped it.
fn parse(data: &[u8], chunk: usize, limit: usize) -> (Vec<Event>, Option<String>, Option<u64>, bool) {
    let mut p = Parser::new(limit);
    let mut events = Vec::new();
    let size = if chunk == 0 { data.len().max(1) } else { chunk };
    for piece in data.chunks(size) {
        match p.feed(piece) {
            Ok(more) => events.extend(more),
            Err(e) => {
                assert_eq!(e.limit, limit);
                return (events, p.last_id.clone(), p.retry_ms, true);
            }
        }
    }
    (events, p.last_id.clone(), p.retry_ms, false)
}

fuzz_target!(|input: &[u8]| {
    let [chunk, limit, stream @ ..] = input else {
        return;
    };
    let limit = match limit & 3 {
        0 => 64,
        1 => 1024,
        2 => 64 * 1024,
        _ => usize::MAX,
    };
    let (chunked, id, retry, stopped) = parse(stream, usize::from(*chunk), limit);
    let (whole, whole_id, whole_retry, whole_stopped) = parse(stream, 0, limit);
    for event in chunked.iter().chain(&whole) {
        assert!(event.data.len() <= limit, "an event over the limit was dispatched");
    }
    if !stopped && !whole_stopped {
        assert_eq!(chunked, whole, "the chunking changed the events");
        assert_eq!((id, retry), (whole_id, whole_retry));
    } else {
        // The limit may stop one reading an event earlier than the other (a chunk brings
        // more of a line at once); what both read before it is the same.
        let n = chunked.len().min(whole.len());
        assert_eq!(chunked[..n], whole[..n], "the chunking changed the events");
    }
});
