//! Resumable SSE streams of legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25):
//! every event of a session's streams is kept (up to a cap) under an id naming its stream
//! and position, so a client that lost a stream can `GET` with `Last-Event-ID` and receive
//! what it missed — that stream's events only, never another's. With SSE polling
//! (2025-11-25, [`SsePolling`]) each stream opens with a priming event and a connection
//! may end before its stream does ([`polled`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio::sync::{mpsc, Notify};

use super::config::SsePolling;
use super::store::{self, Shared};
use mcp_runtime::cancel::CancellationToken;
use mcp_runtime::wire::{self, ErrorCode, Outgoing, RequestId, RpcError};

/// An SSE body: frames as they are written.
pub(crate) type SseBody = BoxStream<'static, Result<Bytes, std::convert::Infallible>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Events {
    /// `None`: a priming event (an id, empty data).
    buffer: VecDeque<(u64, Option<Outgoing>)>,
    next: u64,
    done: bool,
}

/// One SSE stream's events, kept for replay.
pub(crate) struct StoredStream {
    id: u64,
    events: Mutex<Events>,
    changed: Notify,
    cap: usize,
    /// The `retry` of priming events (milliseconds).
    retry: Option<u64>,
    /// The connection reading the stream now, by its number: one at a time (see
    /// [`StoredStream::reader`]).
    reading: Mutex<Option<(u64, CancellationToken)>>,
    connections: AtomicU64,
}

impl StoredStream {
    fn new(id: u64, cap: usize, retry: Option<u64>) -> StoredStream {
        StoredStream {
            id,
            events: Mutex::new(Events {
                buffer: VecDeque::new(),
                next: 0,
                done: false,
            }),
            changed: Notify::new(),
            cap: cap.max(1),
            retry,
            reading: Mutex::new(None),
            connections: AtomicU64::new(0),
        }
    }

    /// Whether a connection reads the stream now.
    pub(crate) fn is_read(&self) -> bool {
        lock(&self.reading).is_some()
    }

    /// Appends an event; the oldest is dropped beyond the cap (bounded memory for a client
    /// that never reads). Returns its position.
    pub(crate) fn push(&self, message: Outgoing) -> u64 {
        self.push_event(Some(message))
    }

    /// Appends a priming event (an id and empty data, with `retry`): the client holds an
    /// id to resume from before the first message. Returns its position.
    pub(crate) fn push_priming(&self) -> u64 {
        self.push_event(None)
    }

    fn push_event(&self, message: Option<Outgoing>) -> u64 {
        let seq = {
            let mut e = lock(&self.events);
            let seq = e.next;
            e.next += 1;
            e.buffer.push_back((seq, message));
            while e.buffer.len() > self.cap {
                e.buffer.pop_front();
            }
            seq
        };
        self.changed.notify_waiters();
        seq
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
    /// frames with ids, for a new connection that takes the stream over: the connection
    /// reading it until now ends. One connection at a time, so that each event goes out
    /// once; the newest wins because a client resumes (`Last-Event-ID`) when its
    /// connection is lost, which the server may learn only later, or never.
    pub(crate) fn reader(self: &Arc<Self>, from: u64) -> SseBody {
        let mut reading = lock(&self.reading);
        if let Some((_, older)) = reading.take() {
            older.cancel();
        }
        self.read_from(from, &mut reading)
    }

    fn read_from(
        self: &Arc<Self>,
        from: u64,
        reading: &mut Option<(u64, CancellationToken)>,
    ) -> SseBody {
        let number = self.connections.fetch_add(1, Ordering::Relaxed);
        let taken_over = CancellationToken::new();
        *reading = Some((number, taken_over.clone()));
        struct State {
            stream: Arc<StoredStream>,
            position: u64,
            _guard: Release,
        }
        let state = State {
            stream: Arc::clone(self),
            position: from,
            _guard: Release {
                stream: Arc::clone(self),
                number,
            },
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
                        let id = event_id(stream.id, seq);
                        let frame = match &message {
                            Some(message) => format!("id: {id}\ndata: {}\n\n", message.json()),
                            None => priming_frame(&id, stream.retry),
                        };
                        return Some((Ok(Bytes::from(frame)), st));
                    }
                    Some(None) => return None,
                    None => notified.await,
                }
            }
        })
        .take_until(taken_over.cancelled_owned())
        .boxed()
    }
}

/// Frees a stream's reading slot when its connection ends, unless a newer connection
/// took it over meanwhile.
struct Release {
    stream: Arc<StoredStream>,
    number: u64,
}

impl Drop for Release {
    fn drop(&mut self) {
        let mut reading = lock(&self.stream.reading);
        if reading.as_ref().is_some_and(|(n, _)| *n == self.number) {
            *reading = None;
        }
    }
}

fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// A priming event: its id, empty data, and the reconnection delay.
fn priming_frame(id: &str, retry: Option<u64>) -> String {
    match retry {
        Some(ms) => format!("id: {id}\nretry: {ms}\ndata: \n\n"),
        None => format!("id: {id}\ndata: \n\n"),
    }
}

/// One connection of a polled stream: `body`'s frames until `deadline`, then a `retry`
/// field and the end of the connection — not of the stream, which the client resumes
/// with `Last-Event-ID`. A first frame that is ready is delivered even past the deadline
/// (on a POST it is the priming event: the client has an id before the connection ends);
/// a body that ends first (its stream finished) ends the connection as before.
pub(crate) fn polled(body: SseBody, deadline: tokio::time::Instant, retry_ms: u64) -> SseBody {
    struct Polled {
        body: SseBody,
        deadline: tokio::time::Instant,
        retry_ms: u64,
        first: bool,
        closed: bool,
    }
    let state = Polled {
        body,
        deadline,
        retry_ms,
        first: true,
        closed: false,
    };
    stream::unfold(state, |mut st| async move {
        if st.closed {
            return None;
        }
        // The first frame wins over a deadline already past when it is ready (a POST's
        // priming event); after it the deadline wins, or a busy stream never closes.
        let first = std::mem::replace(&mut st.first, false);
        let next = if first {
            tokio::select! {
                biased;
                next = st.body.next() => Some(next),
                () = tokio::time::sleep_until(st.deadline) => None,
            }
        } else {
            tokio::select! {
                biased;
                () = tokio::time::sleep_until(st.deadline) => None,
                next = st.body.next() => Some(next),
            }
        };
        match next {
            Some(next) => next.map(|frame| (frame, st)),
            None => {
                st.closed = true;
                let frame = Bytes::from(format!("retry: {}\n\n", st.retry_ms));
                Some((Ok(frame), st))
            }
        }
    })
    .boxed()
}

/// Parses a `Last-Event-ID` this server issued: (stream, position of the last event seen).
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// How often a stream being written on another replica is looked at again while it is
/// replayed.
const REPLAY_POLL: std::time::Duration = std::time::Duration::from_millis(25);

/// While a replayed stream has nothing new, whether its writer is still alive is asked
/// every this many looks (once a second).
const LIVENESS_POLLS: u32 = 40;

/// A session's streams: stream 0 is the standalone (GET) stream; each POST answered with
/// SSE gets the next id. At most `max_streams` are kept (finished ones are dropped first).
/// A session shared by replicas names its streams at random (odd: standalone) and copies
/// every event to the store, where any replica can replay it.
pub(crate) struct SessionStreams {
    next_id: AtomicU64,
    standalone_id: u64,
    streams: Mutex<HashMap<u64, Arc<StoredStream>>>,
    max_streams: usize,
    max_events: usize,
    mirror: Option<Mirror>,
    polling: Option<SsePolling>,
    /// Shared sessions: whether the session's GET stream lives on this replica — the last
    /// GET was opened or resumed here, and none since elsewhere. It outlives the GET's
    /// connections: between two polls (or while a lost connection is resumed) the server
    /// events relayed here still go into its history.
    home: AtomicBool,
}

/// Where a shared session's events are copied.
#[derive(Clone)]
pub(crate) struct Mirror {
    pub(crate) shared: Shared,
    pub(crate) session: String,
    pub(crate) ttl: std::time::Duration,
}

impl Mirror {
    async fn append(&self, stream: u64, seq: u64, message: &Outgoing, keep: usize) {
        let json = Bytes::copy_from_slice(message.json().as_bytes());
        let store = &self.shared.store;
        let session = self.session.clone();
        if let Err(e) = store
            .append(session, stream, seq, json, keep, self.ttl)
            .await
        {
            tracing::warn!("event {stream}-{seq} not stored for replay: {e}");
        }
    }

    async fn finish(&self, stream: u64) {
        let store = &self.shared.store;
        if let Err(e) = store.finish(self.session.clone(), stream, self.ttl).await {
            tracing::warn!("end of stream {stream} not stored: {e}");
        }
    }

    /// Records that this replica writes `stream`, answering `requests`.
    async fn claim(&self, stream: u64, requests: &[RequestId]) {
        let ids: Vec<serde_json::Value> = requests.iter().map(RequestId::to_value).collect();
        let note = serde_json::json!({"replica": &*self.shared.replica, "requests": ids});
        let key = store::stream_key(&self.session, stream);
        if let Err(e) = self
            .shared
            .store
            .save(key, note.to_string(), self.ttl)
            .await
        {
            tracing::warn!("writer of stream {stream} not stored: {e}");
        }
    }

    /// Ends `stream` in the store if the replica writing it died (its heartbeat is gone):
    /// an internal error for each of its requests not answered yet, then its end — what a
    /// client resuming it from any replica then reads. Whether it did.
    async fn end_if_orphaned(&self, stream: u64) -> bool {
        let store = &self.shared.store;
        let key = store::stream_key(&self.session, stream);
        let Ok(Some(note)) = store.load(key, self.ttl).await else {
            return false;
        };
        let Ok(note) = serde_json::from_str::<serde_json::Value>(&note) else {
            return false;
        };
        let Some(writer) = note.get("replica").and_then(serde_json::Value::as_str) else {
            return false;
        };
        if writer == &*self.shared.replica {
            return false;
        }
        match store.exists(store::replica_key(writer)).await {
            Ok(false) => {}
            // Alive, or the store cannot tell: waited on.
            _ => return false,
        }
        let Ok(stored) = store.read(self.session.clone(), stream, 0).await else {
            return false;
        };
        if stored.finished {
            return true;
        }
        let answered: Vec<serde_json::Value> = stored
            .events
            .iter()
            .filter_map(|(_, json)| serde_json::from_slice::<serde_json::Value>(json).ok())
            .filter(|m| m.get("method").is_none())
            .filter_map(|m| m.get("id").cloned())
            .collect();
        let mut next = stored.events.last().map_or(0, |(seq, _)| seq + 1);
        let requests = note.get("requests").and_then(serde_json::Value::as_array);
        for id in requests.into_iter().flatten() {
            if answered.contains(id) {
                continue;
            }
            let Some(id) = RequestId::from_value(id) else {
                continue;
            };
            let error = RpcError::new(
                ErrorCode::INTERNAL_ERROR,
                "Internal error: the server replica running this request stopped before \
                 answering (it may or may not have taken effect)",
            );
            let answer = wire::error_response(Some(&id), &error);
            self.append(stream, next, &answer, usize::MAX).await;
            next += 1;
        }
        tracing::warn!("stream {stream}: its replica {writer} died; ended with errors");
        self.finish(stream).await;
        true
    }
}

/// Fills `stream` with `first`, then from `rx` until it ends, copying each event to the
/// mirror.
/// With a mirror and `requests`, the stream's writer is recorded first.
fn fill(
    stream: Arc<StoredStream>,
    first: Option<Outgoing>,
    mut rx: mpsc::Receiver<Outgoing>,
    mirror: Option<Mirror>,
    keep: usize,
    requests: Vec<RequestId>,
) {
    tokio::spawn(async move {
        if let (Some(m), false) = (&mirror, requests.is_empty()) {
            m.claim(stream.id, &requests).await;
        }
        let mut first = first;
        loop {
            let message = match first.take() {
                Some(m) => m,
                None => match rx.recv().await {
                    Some(m) => m,
                    None => break,
                },
            };
            match &mirror {
                None => {
                    stream.push(message);
                }
                Some(m) => {
                    // Delivered here first; stored before the stream is marked finished,
                    // which a replay elsewhere waits for.
                    let seq = stream.push(message.clone());
                    m.append(stream.id, seq, &message, keep).await;
                }
            }
        }
        stream.finish();
        if let Some(m) = &mirror {
            m.finish(stream.id).await;
        }
    });
}

impl SessionStreams {
    /// `polling`: the session's rule, when its revision polls (see
    /// [`HttpConfig::polling_for`](super::HttpConfig::polling_for)).
    pub(crate) fn new(
        max_streams: usize,
        max_events: usize,
        mirror: Option<Mirror>,
        polling: Option<SsePolling>,
    ) -> SessionStreams {
        let standalone_id = match mirror {
            Some(_) => store::random_stream_id(true),
            None => 0,
        };
        let streams = SessionStreams {
            next_id: AtomicU64::new(1),
            standalone_id,
            streams: Mutex::new(HashMap::new()),
            max_streams: max_streams.max(2),
            max_events,
            mirror,
            polling,
            home: AtomicBool::new(false),
        };
        lock(&streams.streams).insert(
            standalone_id,
            Arc::new(StoredStream::new(
                standalone_id,
                max_events,
                streams.retry(),
            )),
        );
        streams
    }

    /// The session's polling rule, if its revision polls and the server was configured to.
    pub(crate) fn polling(&self) -> Option<SsePolling> {
        self.polling
    }

    fn retry(&self) -> Option<u64> {
        self.polling.map(|p| p.retry_millis())
    }

    /// One connection of a stream of this session: `body` as it is, or, when the session
    /// polls with a connection time limit, until `started` plus that limit.
    pub(crate) fn connection(&self, body: SseBody, started: tokio::time::Instant) -> SseBody {
        match self.polling {
            Some(SsePolling {
                retry,
                close_after: Some(after),
                ..
            }) => polled(
                body,
                started + after,
                u64::try_from(retry.as_millis()).unwrap_or(u64::MAX),
            ),
            _ => body,
        }
    }

    /// A new connection to the standalone stream, from what comes next (`None` while
    /// another connection reads it: a session has one GET stream): with polling, it opens
    /// with a priming event (so that the client can resume from there).
    pub(crate) fn standalone_reader(&self) -> Option<SseBody> {
        let standalone = self.standalone();
        let mut reading = lock(&standalone.reading);
        if reading.is_some() {
            return None;
        }
        let from = match self.polling {
            Some(_) => standalone.push_priming(),
            None => standalone.next_seq(),
        };
        Some(standalone.read_from(from, &mut reading))
    }

    /// Ends the connection reading `stream` here, if one does (the client resumed it on
    /// another replica).
    pub(crate) fn end_connection(&self, stream: u64) {
        let Some(stored) = lock(&self.streams).get(&stream).cloned() else {
            return;
        };
        let older = lock(&stored.reading).take();
        if let Some((_, reading)) = older {
            reading.cancel();
        }
    }

    /// Whether the session's GET stream lives here (see `home`): a GET connection reads
    /// it here now, or the last one did.
    pub(crate) fn is_home(&self) -> bool {
        self.home.load(Ordering::SeqCst) || self.standalone_open()
    }

    /// The session's GET stream now lives here (`true`: a GET was opened or resumed here)
    /// or elsewhere (`false`: one was on another replica; the connection reading it here,
    /// if any, ends).
    pub(crate) fn set_home(&self, here: bool) {
        self.home.store(here, Ordering::SeqCst);
        if !here {
            self.end_connection(self.standalone_id);
        }
    }

    /// Whether a connection reads the standalone (GET) stream here.
    pub(crate) fn standalone_open(&self) -> bool {
        lock(&self.streams)
            .get(&self.standalone_id)
            .is_some_and(|s| s.is_read())
    }

    /// The standalone stream.
    pub(crate) fn standalone(&self) -> Arc<StoredStream> {
        lock(&self.streams)
            .get(&self.standalone_id)
            .cloned()
            .unwrap_or_else(|| {
                Arc::new(StoredStream::new(
                    self.standalone_id,
                    self.max_events,
                    self.retry(),
                ))
            })
    }

    /// Fills the standalone stream with the session's own notifications (from `rx`).
    pub(crate) fn fill_standalone(&self, rx: mpsc::Receiver<Outgoing>) {
        fill(
            self.standalone(),
            None,
            rx,
            self.mirror.clone(),
            self.max_events,
            Vec::new(),
        );
    }

    /// The store's copy of the events, when the session is shared.
    pub(crate) fn mirror(&self) -> Option<&Mirror> {
        self.mirror.as_ref()
    }

    /// A new stream, filled from `rx` (starting with `first`, if the message is there)
    /// until `rx` ends, with the answers to `requests`; with polling, a priming event
    /// comes before everything.
    pub(crate) fn spawn(
        &self,
        first: Option<Outgoing>,
        rx: mpsc::Receiver<Outgoing>,
        requests: Vec<RequestId>,
    ) -> Arc<StoredStream> {
        let id = match self.mirror {
            Some(_) => store::random_stream_id(false),
            None => self.next_id.fetch_add(1, Ordering::Relaxed),
        };
        let stream = Arc::new(StoredStream::new(id, self.max_events, self.retry()));
        if self.polling.is_some() {
            // Here, not through the filler: nothing but this stream's own reconnections
            // resume from a priming event, so the store (shared sessions) need not hold it.
            stream.push_priming();
        }
        {
            let mut streams = lock(&self.streams);
            if streams.len() >= self.max_streams {
                let mut finished: Vec<u64> = streams
                    .iter()
                    .filter(|(k, s)| **k != self.standalone_id && lock(&s.events).done)
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
        match &self.mirror {
            None => {
                if let Some(first) = first {
                    stream.push(first);
                }
                fill(
                    Arc::clone(&stream),
                    None,
                    rx,
                    None,
                    self.max_events,
                    requests,
                );
            }
            // Through the filler, so that the store holds the events in order.
            Some(m) => fill(
                Arc::clone(&stream),
                first,
                rx,
                Some(m.clone()),
                self.max_events,
                requests,
            ),
        }
        stream
    }

    /// Replay after `Last-Event-ID` from the store (a shared session whose stream another
    /// replica wrote): what the named stream had after the client's last event, then, while
    /// it goes on, what comes; a standalone stream of another replica continues with this
    /// replica's own, read from its live position (taking it over, as a local resume does).
    pub(crate) fn resume_shared(&self, last_event_id: &str) -> Option<SseBody> {
        let mirror = self.mirror.clone()?;
        let (stream, seq) = parse_event_id(last_event_id)?;
        let live = store::is_standalone(stream).then(|| {
            let standalone = self.standalone();
            let from = standalone.next_seq();
            standalone.reader(from)
        });
        let retry = self.retry();
        struct Replay {
            mirror: Mirror,
            stream: u64,
            from: u64,
            pending: VecDeque<(u64, Bytes)>,
            live: Option<SseBody>,
            retry: Option<u64>,
            idle: u32,
        }
        let state = Replay {
            mirror,
            stream,
            from: seq + 1,
            pending: VecDeque::new(),
            live,
            retry,
            idle: 0,
        };
        Some(
            stream::unfold(state, |mut st| async move {
                loop {
                    if let Some((seq, json)) = st.pending.pop_front() {
                        let id = event_id(st.stream, seq);
                        let frame = if json.is_empty() {
                            priming_frame(&id, st.retry)
                        } else {
                            let text = String::from_utf8_lossy(&json);
                            format!("id: {id}\ndata: {text}\n\n")
                        };
                        return Some((Ok(Bytes::from(frame)), st));
                    }
                    let read =
                        st.mirror
                            .shared
                            .store
                            .read(st.mirror.session.clone(), st.stream, st.from);
                    let stored = match read.await {
                        Ok(stored) => stored,
                        Err(e) => {
                            // The client resumes again later.
                            tracing::warn!("replay of stream {}: {e}", st.stream);
                            return None;
                        }
                    };
                    if let Some((last, _)) = stored.events.last() {
                        st.from = last + 1;
                        st.pending.extend(stored.events);
                        continue;
                    }
                    if let Some(live) = st.live.as_mut() {
                        // Another replica's standalone stream: caught up, now this one's.
                        let next = live.next().await?;
                        return Some((next, st));
                    }
                    if stored.finished {
                        return None;
                    }
                    // The stream goes on on another replica: look again shortly — and
                    // now and then, whether that replica is still alive (if not, the
                    // stream is ended with errors, read on the next look).
                    st.idle += 1;
                    if st.idle % LIVENESS_POLLS == 0 {
                        st.mirror.end_if_orphaned(st.stream).await;
                        continue;
                    }
                    tokio::time::sleep(REPLAY_POLL).await;
                }
            })
            .boxed(),
        )
    }

    /// Replay after `Last-Event-ID`: the stream it names, from the next event.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<(Arc<StoredStream>, u64)> {
        let (stream, seq) = parse_event_id(last_event_id)?;
        let s = lock(&self.streams).get(&stream).cloned()?;
        Some((s, seq + 1))
    }
}
