//! Resumable SSE streams of legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25):
//! every event of a session's streams is kept (up to a cap) under an id naming its stream
//! and position, so a client that lost a stream can `GET` with `Last-Event-ID` and receive
//! what it missed — that stream's events only, never another's.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio::sync::{mpsc, Notify};

use crate::wire::Outgoing;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Events {
    buffer: VecDeque<(u64, Outgoing)>,
    next: u64,
    done: bool,
}

/// One SSE stream's events, kept for replay.
pub(crate) struct StoredStream {
    id: u64,
    events: Mutex<Events>,
    changed: Notify,
    cap: usize,
}

impl StoredStream {
    fn new(id: u64, cap: usize) -> StoredStream {
        StoredStream {
            id,
            events: Mutex::new(Events {
                buffer: VecDeque::new(),
                next: 0,
                done: false,
            }),
            changed: Notify::new(),
            cap: cap.max(1),
        }
    }

    /// Appends an event; the oldest is dropped beyond the cap (bounded memory for a client
    /// that never reads).
    pub(crate) fn push(&self, message: Outgoing) {
        {
            let mut e = lock(&self.events);
            let seq = e.next;
            e.next += 1;
            e.buffer.push_back((seq, message));
            while e.buffer.len() > self.cap {
                e.buffer.pop_front();
            }
        }
        self.changed.notify_waiters();
    }

    /// No more events will come.
    pub(crate) fn finish(&self) {
        lock(&self.events).done = true;
        self.changed.notify_waiters();
    }

    fn next_seq(&self) -> u64 {
        lock(&self.events).next
    }

    /// The stream's events from position `from` on, live until it is finished, as SSE
    /// frames with ids.
    pub(crate) fn reader(
        self: &Arc<Self>,
        from: u64,
        on_end: Option<Box<dyn FnOnce() + Send>>,
    ) -> BoxStream<'static, Result<Bytes, std::convert::Infallible>> {
        struct State {
            stream: Arc<StoredStream>,
            position: u64,
            _guard: EndGuard,
        }
        let state = State {
            stream: Arc::clone(self),
            position: from,
            _guard: EndGuard(on_end),
        };
        stream::unfold(state, |mut st| async move {
            loop {
                let stream = Arc::clone(&st.stream);
                let notified = stream.changed.notified();
                tokio::pin!(notified);
                // Registered before looking, so a push between the look and the wait is seen.
                notified.as_mut().enable();
                let found = {
                    let e = lock(&stream.events);
                    match e.buffer.iter().find(|(seq, _)| *seq >= st.position) {
                        Some((seq, message)) => Some(Some((*seq, message.clone()))),
                        None if e.done => Some(None),
                        None => None,
                    }
                };
                match found {
                    Some(Some((seq, message))) => {
                        st.position = seq + 1;
                        let frame = format!(
                            "id: {}\ndata: {}\n\n",
                            event_id(stream.id, seq),
                            message.json()
                        );
                        return Some((Ok(Bytes::from(frame)), st));
                    }
                    Some(None) => return None,
                    None => notified.await,
                }
            }
        })
        .boxed()
    }
}

struct EndGuard(Option<Box<dyn FnOnce() + Send>>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// Parses a `Last-Event-ID` this server issued: (stream, position of the last event seen).
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// A session's streams: stream 0 is the standalone (GET) stream; each POST answered with
/// SSE gets the next id. At most `max_streams` are kept (finished ones are dropped first).
pub(crate) struct SessionStreams {
    next_id: AtomicU64,
    streams: Mutex<HashMap<u64, Arc<StoredStream>>>,
    max_streams: usize,
    max_events: usize,
}

impl SessionStreams {
    pub(crate) fn new(max_streams: usize, max_events: usize) -> SessionStreams {
        let streams = SessionStreams {
            next_id: AtomicU64::new(1),
            streams: Mutex::new(HashMap::new()),
            max_streams: max_streams.max(2),
            max_events,
        };
        lock(&streams.streams).insert(0, Arc::new(StoredStream::new(0, max_events)));
        streams
    }

    /// The standalone stream.
    pub(crate) fn standalone(&self) -> Arc<StoredStream> {
        lock(&self.streams)
            .get(&0)
            .cloned()
            .unwrap_or_else(|| Arc::new(StoredStream::new(0, self.max_events)))
    }

    /// A new stream, filled from `rx` (starting with `first`) until `rx` ends.
    pub(crate) fn spawn(
        &self,
        first: Outgoing,
        mut rx: mpsc::Receiver<Outgoing>,
    ) -> Arc<StoredStream> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let stream = Arc::new(StoredStream::new(id, self.max_events));
        {
            let mut streams = lock(&self.streams);
            if streams.len() >= self.max_streams {
                let mut finished: Vec<u64> = streams
                    .iter()
                    .filter(|(k, s)| **k != 0 && lock(&s.events).done)
                    .map(|(k, _)| *k)
                    .collect();
                finished.sort_unstable();
                let excess = streams.len() + 1 - self.max_streams;
                for k in finished.into_iter().take(excess) {
                    streams.remove(&k);
                }
            }
            streams.insert(id, Arc::clone(&stream));
        }
        stream.push(first);
        let filler = Arc::clone(&stream);
        tokio::spawn(async move {
            while let Some(message) = rx.recv().await {
                filler.push(message);
            }
            filler.finish();
        });
        stream
    }

    /// Replay after `Last-Event-ID`: the stream it names, from the next event.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<(Arc<StoredStream>, u64)> {
        let (stream, seq) = parse_event_id(last_event_id)?;
        let s = lock(&self.streams).get(&stream).cloned()?;
        Some((s, seq + 1))
    }

    /// Where a new reader of the standalone stream starts: only what comes next.
    pub(crate) fn standalone_live_position(&self) -> u64 {
        self.standalone().next_seq()
    }
}
