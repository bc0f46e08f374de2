//! Fuzzes the stdio transport end to end: `mcp_runtime::transport::stdio::serve` reads the
//! fuzz bytes as its input (delivered in chunks of a size the input chooses, optionally
//! interleaved with "not ready yet" reads, so lines and UTF-8 sequences straddle reads) with
//! a small `Limits::max_message_bytes`, and writes to memory. Byte 0 is the chunk size
//! (0: all at once), byte 1 picks the line limit (64, 256, 1024 or 4096 bytes) and whether
//! reads interleave; the rest is the stream. Invariants: `serve` returns (no panic, no
//! hang: the clock is paused, so grace periods and timeouts pass at once) without an I/O
//! error, every output line is one valid JSON-RPC 2.0 message, and every line over the
//! limit is answered -32600.
#![no_main]

mod common;

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Gives `data` in reads of at most `chunk` bytes; with `interleave`, every other read is
/// "pending" first (and wakes itself), so the server works between chunks.
struct ChunkReader<'a> {
    data: &'a [u8],
    chunk: usize,
    interleave: bool,
    ready: bool,
}

impl AsyncRead for ChunkReader<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.interleave && !self.ready {
            self.ready = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.ready = false;
        let n = self.chunk.min(self.data.len()).min(buf.remaining());
        let (head, rest) = self.data.split_at(n);
        buf.put_slice(head);
        self.data = rest;
        Poll::Ready(Ok(()))
    }
}

/// An in-memory output the test keeps a handle on.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

const LIMITS: [usize; 4] = [64, 256, 1024, 4096];

fuzz_target!(|data: &[u8]| {
    let [chunk, mode, stream @ ..] = data else {
        return;
    };
    let chunk = if *chunk == 0 {
        usize::MAX
    } else {
        usize::from(*chunk)
    };
    let limit = LIMITS[usize::from(mode & 3)];
    let interleave = mode & 4 != 0;
    let output = Output::default();
    let reader = ChunkReader {
        data: stream,
        chunk,
        interleave,
        ready: false,
    };
    let server = common::server(limit);
    common::runtime()
        .block_on(mcp_runtime::transport::stdio::serve(
            server,
            reader,
            output.clone(),
        ))
        .expect("in-memory I/O never fails");

    let out = output.0.lock().expect("not poisoned").clone();
    assert!(
        out.is_empty() || out.ends_with(b"\n"),
        "output ends mid-line"
    );
    let too_long = stream
        .split(|b| *b == b'\n')
        .filter(|line| line.len() > limit)
        .count();
    let mut limit_errors = 0;
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line).unwrap_or_else(|e| {
            panic!(
                "output line is not JSON ({e}): {}",
                String::from_utf8_lossy(line)
            )
        });
        common::check_outgoing(&message, "stdio output");
        let is_limit_error = message["id"].is_null()
            && message
                .pointer("/error/message")
                .and_then(Value::as_str)
                .is_some_and(|m| {
                    m.starts_with("Invalid Request: message of ")
                        && m.ends_with(&format!(" exceeds the limit of {limit} bytes"))
                });
        if is_limit_error {
            assert_eq!(message.pointer("/error/code"), Some(&Value::from(-32600)));
            limit_errors += 1;
        }
    }
    assert_eq!(limit_errors, too_long, "one -32600 per over-long line");
});
