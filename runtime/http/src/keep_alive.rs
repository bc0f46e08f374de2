//! SSE keep-alive: a comment line on every event stream that has been silent for
//! [`HttpConfig::keep_alive`](crate::HttpConfig::keep_alive), so that proxies, load
//! balancers and clients with an idle or body timeout (Node's is 300 s) do not cut a
//! stream that is only waiting — a long tool call, an idle GET stream, a
//! `subscriptions/listen`, an HTTP+SSE session.
//!
//! It wraps the body of every SSE answer where the answer is built, so every stream gets
//! it, whichever revision and transport, and whichever replica wrote its events (a stream
//! replayed from the session store is wrapped on the replica that holds the connection).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

/// The frame: one comment line and no blank line after it. A comment is ignored by every
/// SSE parser; a blank line is not always: httpx-sse (the Python SDK's parser) dispatches
/// an event with empty data on a blank line once the stream has carried an `id`, and the
/// Python SDK clients before 2025-11-25 fail to parse that event as a message.
pub(crate) const KEEP_ALIVE_FRAME: &[u8] = b": keep-alive\n";

/// `inner`, with [`KEEP_ALIVE_FRAME`] sent after every `period` of silence.
///
/// One timer per open stream, armed once per period: a frame that goes out only records
/// when it did, and the timer, when it fires early, is moved to the end of the silence
/// instead of being reset on every frame.
pub(crate) struct KeepAlive<S> {
    inner: S,
    period: Duration,
    last_sent: Instant,
    timer: Pin<Box<Sleep>>,
}

impl<S> KeepAlive<S> {
    pub(crate) fn new(inner: S, period: Duration) -> KeepAlive<S> {
        let now = Instant::now();
        KeepAlive {
            inner,
            period,
            last_sent: now,
            timer: Box::pin(tokio::time::sleep_until(now + period)),
        }
    }
}

impl<S, E> Stream for KeepAlive<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(frame)) => {
                this.last_sent = Instant::now();
                return Poll::Ready(Some(frame));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        loop {
            if this.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let now = Instant::now();
            let due = this.last_sent + this.period;
            if due > now {
                // Something went out since the timer was armed: wait for the rest of the
                // silence.
                this.timer.as_mut().reset(due);
                continue;
            }
            this.last_sent = now;
            this.timer.as_mut().reset(now + this.period);
            return Poll::Ready(Some(Ok(Bytes::from_static(KEEP_ALIVE_FRAME))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    type Frame = Result<Bytes, std::convert::Infallible>;

    /// Silence beyond the period brings a comment; frames in between postpone it.
    #[tokio::test(start_paused = true)]
    async fn a_silent_stream_gets_a_comment_after_each_period() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Frame>(4);
        let body = tokio_stream_of(rx);
        let mut stream = KeepAlive::new(body, Duration::from_secs(15));
        let started = Instant::now();
        let first = stream.next().await.unwrap().unwrap();
        assert_eq!(&first[..], KEEP_ALIVE_FRAME);
        assert_eq!(started.elapsed(), Duration::from_secs(15));
        // An event 10 s later: the next comment comes 15 s after it, not after the last
        // comment.
        let sender = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(10)).await;
            sender
                .send(Ok(Bytes::from_static(b"data: {}\n\n")))
                .await
                .unwrap();
        });
        let event = stream.next().await.unwrap().unwrap();
        assert_eq!(&event[..], b"data: {}\n\n");
        let at_event = Instant::now();
        let next = stream.next().await.unwrap().unwrap();
        assert_eq!(&next[..], KEEP_ALIVE_FRAME);
        assert_eq!(at_event.elapsed(), Duration::from_secs(15));
        drop(tx);
        assert!(
            stream.next().await.is_none(),
            "the stream ends with its body"
        );
    }

    fn tokio_stream_of(
        rx: tokio::sync::mpsc::Receiver<Frame>,
    ) -> futures_util::stream::BoxStream<'static, Frame> {
        futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|frame| (frame, rx))
        })
        .boxed()
    }
}
