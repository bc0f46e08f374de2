//! One peer's conversation (a stdio process; later an HTTP session): era detection per
//! request, the legacy lifecycle, admission of each method against the negotiated
//! revision's generated method table, concurrency, cancellation and batches.

mod admission;
mod events;
mod replica;

use std::collections::{BTreeSet, HashMap};

use admission::Admission;
use std::ops::Deref;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::auth::Principal;
use crate::cancel::{first, CancellationToken, First};
use crate::combine::{self, BoxFuture};
use crate::model::LogLevel;
use crate::observe::{self, TraceContext, Transport};
use crate::protocol::asks::{Asker, Pending, Round};
use crate::protocol::lifecycle::Lifecycle;
use crate::protocol::logging::{LogFilter, SharedLogLevel};
use crate::protocol::method::{self, McpMethod};
use crate::protocol::peer::Peer;
use crate::protocol::shape;
use crate::protocol::version::{self, Era, ProtocolVersion};
use crate::server::context::Context;
use crate::server::{middleware, Server, ServerEvent};
use crate::wire::{
    self, Encoded, ErrorCode, Frame, Invalid, Message, Outgoing, RequestId, RequestMeta, RpcError,
};

struct State {
    lifecycle: Lifecycle,
    client_capabilities: Arc<Value>,
    subscriptions: BTreeSet<String>,
    /// When the legacy session began (its `initialize` was answered) and on what
    /// transport: its end is reported for `mcp.server.session.duration`.
    session_began: Option<(std::time::Instant, Transport)>,
}

/// A legacy session's state as replicas share it (see `mcp-runtime-http`'s `store`).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub lifecycle: Lifecycle,
    pub client_capabilities: Value,
    pub log_level: Option<LogLevel>,
    pub subscriptions: BTreeSet<String>,
}

/// Where a frame came from, beyond its connection: who sent it, what the transport
/// knows of the request that carried it, and what that request's spans record of it.
/// Handlers see the first two on their [`Context`] ([`Context::principal`],
/// [`Context::transport_request`]); the rest goes to the server span (`crate::observe`)
/// and, for a trace context, to [`Context::remote_trace`]. stdio has none of it but
/// its transport.
#[doc(hidden)]
#[derive(Clone, Default)]
pub struct RequestOrigin {
    /// The caller the HTTP transport authenticated (a verified bearer token).
    pub principal: Option<Arc<Principal>>,
    /// The transport's own request, type-erased so that the core needs no HTTP types:
    /// `mcp-runtime-http` puts the HTTP request's head (`http::request::Parts`) here and
    /// reads it back with its typed accessor.
    pub transport: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// The transport it came on, as the span's network attributes describe it.
    pub network: Transport,
    /// The session it belongs to (`Mcp-Session-Id`), filled only while spans are
    /// recorded (the span records a digest of it).
    pub session_id: Option<String>,
    /// The trace context of the transport's own message (the HTTP `traceparent`
    /// header): a request whose `_meta` has none continues this one.
    pub trace: Option<TraceContext>,
}

impl std::fmt::Debug for RequestOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // No session id: it is a credential.
        f.debug_struct("RequestOrigin")
            .field("principal", &self.principal)
            .field("transport", &self.transport.is_some())
            .field("network", &self.network)
            .field("trace", &self.trace)
            .finish_non_exhaustive()
    }
}

/// The conversation with one peer. Messages to the peer go to `out`, in order.
pub struct Connection {
    server: Server,
    out: mpsc::Sender<Outgoing>,
    state: Mutex<State>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    log_level: SharedLogLevel,
    closed: CancellationToken,
    /// Draining began (end of input, server shutdown): requests that would never end on
    /// their own (`subscriptions/listen`) finish now, so that draining waits only for
    /// work that ends.
    draining: CancellationToken,
    /// The server's shutdown, for a connection that is never drained on its own (a
    /// stateless HTTP request): it ends the connection's listens too, but the connection
    /// never cancels it.
    stopping: Option<CancellationToken>,
    pending: Arc<Pending>,
    /// Owns the tasks a legacy client creates here (unique per connection: a session's
    /// tasks are its own; a session shared by replicas is named by its id instead, the
    /// same on every replica, see `own_tasks_as`).
    task_owner: Mutex<String>,
    /// Whether the tasks started here end with the connection (a stdio peer, a legacy
    /// session); a stateless HTTP request's tasks outlive it.
    tasks_end_with_it: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; recover the data if something did.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Connection {
    /// A connection whose outgoing messages are sent to `out`.
    pub fn new(server: Server, out: mpsc::Sender<Outgoing>) -> Arc<Connection> {
        let mut conn = Connection::stateless(server, out);
        if let Some(c) = Arc::get_mut(&mut conn) {
            c.tasks_end_with_it = true;
        }
        Connection::forward_events(&conn);
        conn
    }

    /// A connection for one stateless (2026-07-28) HTTP request: no lifecycle and no
    /// session notifications, so nothing is spawned for it.
    pub fn stateless(server: Server, out: mpsc::Sender<Outgoing>) -> Arc<Connection> {
        Connection::stateless_stopping_with(server, out, None)
    }

    /// [`Connection::stateless`] whose listens also end when `stopping` is cancelled (an
    /// HTTP server's shutdown), as they do when [`Connection::drain`] is called.
    #[doc(hidden)]
    pub fn stateless_stopping_with(
        server: Server,
        out: mpsc::Sender<Outgoing>,
        stopping: Option<CancellationToken>,
    ) -> Arc<Connection> {
        Arc::new(Connection {
            server,
            out,
            state: Mutex::new(State {
                lifecycle: Lifecycle::New,
                client_capabilities: Arc::new(json!({})),
                subscriptions: BTreeSet::new(),
                session_began: None,
            }),
            in_flight: Mutex::new(HashMap::new()),
            log_level: SharedLogLevel::default(),
            closed: CancellationToken::new(),
            draining: CancellationToken::new(),
            stopping,
            pending: Arc::new(Pending::default()),
            task_owner: Mutex::new(session_owner()),
            tasks_end_with_it: false,
        })
    }

    /// The legacy revision negotiated on this connection, if any.
    pub fn version(&self) -> Option<ProtocolVersion> {
        lock(&self.state).lifecycle.version()
    }

    /// Waits until no request is running, or `grace` has passed.
    /// Open `subscriptions/listen` requests end first, each with its result.
    pub async fn drain(&self, grace: std::time::Duration) {
        self.draining.cancel();
        let deadline = tokio::time::Instant::now() + grace;
        while !lock(&self.in_flight).is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Ends the conversation: running handlers are cancelled and their answers dropped.
    pub fn close(&self) {
        self.release_subscriptions();
        self.closed.cancel();
        for token in lock(&self.in_flight).values() {
            token.cancel();
        }
    }

    /// The session's resource subscriptions end with it (the server's interest counts).
    fn release_subscriptions(&self) {
        let ended = std::mem::take(&mut lock(&self.state).subscriptions);
        for uri in &ended {
            self.server.interest_removed(uri);
        }
    }

    async fn send(&self, message: Outgoing) {
        // A closed channel means the peer is gone; there is no one left to answer.
        let _ = self.out.send(message).await;
    }

    /// Handles one frame (a stdio line, an HTTP body). Requests run concurrently as tasks;
    /// their answers (a batch's as one array) and the notifications their handlers emit go
    /// to `reply`; the session's own notifications go to the connection's channel.
    /// Returns how many requests the frame held (0: nothing will be answered, unless the
    /// frame itself was invalid).
    pub async fn handle_frame(
        self: &Arc<Self>,
        bytes: &[u8],
        reply: &mpsc::Sender<Outgoing>,
    ) -> usize {
        self.handle_parsed(wire::parse_frame(bytes), reply).await
    }

    /// [`Connection::handle_frame`] for a frame already parsed (the HTTP transport reads a
    /// request once, to route it and check its headers).
    pub(crate) async fn handle_parsed(
        self: &Arc<Self>,
        frame: Frame,
        reply: &mpsc::Sender<Outgoing>,
    ) -> usize {
        let origin = RequestOrigin {
            network: Transport::Pipe,
            ..RequestOrigin::default()
        };
        self.handle_parsed_as(frame, reply, &origin).await
    }

    /// [`Connection::handle_parsed`] for a frame that came from `origin` (an HTTP
    /// request): its handlers see the principal and the transport's request on their
    /// `Context`, and a 2026-07-28 `requestState` is bound to the principal.
    #[doc(hidden)]
    pub async fn handle_parsed_as(
        self: &Arc<Self>,
        frame: Frame,
        reply: &mpsc::Sender<Outgoing>,
        origin: &RequestOrigin,
    ) -> usize {
        match self.start_parsed_as(frame, reply, origin).await {
            // Sent from here: a task would only add a hop on the way to the writer.
            Started::Answer(answer) => {
                let _ = reply.send(answer).await;
                1
            }
            Started::Handler(task) => {
                answer_or_spawn(task, reply).await;
                1
            }
            Started::Sent(count) => count,
        }
    }

    /// [`Connection::handle_parsed_as`], except that a single request's answer or handler
    /// is given back instead of sent or spawned: an HTTP POST answers it itself (JSON,
    /// with no hop through a task and a channel), or spawns it with [`spawn_answer`]
    /// when a stream must carry it.
    #[doc(hidden)]
    pub async fn start_parsed_as(
        self: &Arc<Self>,
        frame: Frame,
        reply: &mpsc::Sender<Outgoing>,
        origin: &RequestOrigin,
    ) -> Started {
        match frame {
            Frame::Single(Err(invalid)) => {
                Started::Answer(wire::error_response(invalid.id.as_ref(), &invalid.error))
            }
            Frame::Single(Ok(message)) => match self.dispatch(message, reply, origin) {
                Dispatched::Ready(answer) => Started::Answer(answer),
                Dispatched::Task(task) => Started::Handler(task),
                Dispatched::Nothing => Started::Sent(0),
            },
            Frame::Batch(items) => Started::Sent(self.handle_batch(items, reply, origin).await),
        }
    }

    async fn handle_batch(
        self: &Arc<Self>,
        items: Vec<Result<Message, Invalid>>,
        reply: &mpsc::Sender<Outgoing>,
        origin: &RequestOrigin,
    ) -> usize {
        let batching = self.version().is_some_and(|v| v.features().batching);
        if !batching {
            let err = RpcError::new(
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: batches are not accepted in this protocol revision",
            );
            let _ = reply.send(wire::error_response(None, &err)).await;
            return 1;
        }
        let mut tasks = Vec::new();
        for item in items {
            match item {
                Err(invalid) => tasks.push(ready(wire::error_response(
                    invalid.id.as_ref(),
                    &invalid.error,
                ))),
                Ok(message) => match self.dispatch(message, reply, origin) {
                    Dispatched::Ready(answer) => {
                        tasks.push(ready(answer));
                    }
                    Dispatched::Task(task) => tasks.push(task),
                    Dispatched::Nothing => {}
                },
            }
        }
        let count = tasks.len();
        if count == 0 {
            return 0;
        }
        let reply = reply.clone();
        tokio::spawn(async move {
            let answers: Vec<Outgoing> = combine::join_all(tasks)
                .await
                .into_iter()
                .flatten()
                .collect();
            // Only cancelled requests: nothing to send.
            if !answers.is_empty() {
                let _ = reply.send(wire::batch(&answers)).await;
            }
        });
        count
    }

    /// Notifications and responses are handled at once; a request is answered at once
    /// when it needs no handler (an error, `ping`, a list, `server/discover`), else it
    /// becomes a future that yields its answer (or nothing, if it was cancelled).
    fn dispatch(
        self: &Arc<Self>,
        message: Message,
        reply: &mpsc::Sender<Outgoing>,
        origin: &RequestOrigin,
    ) -> Dispatched {
        let principal = origin.principal.as_ref();
        match message {
            Message::Notification { method, params } => {
                let span =
                    observe::server_span(&method, None, params.as_ref(), None, origin, || {
                        self.version().map(|v| v.as_str().to_owned())
                    });
                let _in_span = span.enter();
                self.notification(&method, params.as_ref());
                Dispatched::Nothing
            }
            Message::Response { id, outcome } => {
                if !self.pending.resolve(&id, outcome) {
                    tracing::debug!(%id, "response to an unknown request ignored");
                }
                Dispatched::Nothing
            }
            Message::Request {
                id,
                method,
                params,
                meta,
            } => {
                let meta_value = meta.as_ref().map(RequestMeta::value);
                let span = observe::server_span(
                    &method,
                    Some(&id),
                    params.as_ref(),
                    meta_value,
                    origin,
                    || match self.version() {
                        Some(v) => Some(v.as_str().to_owned()),
                        // A modern request names its revision.
                        None => wire::member(meta_value, version::META_PROTOCOL_VERSION)
                            .or_else(|| {
                                wire::member(
                                    wire::member(params.as_ref(), "_meta"),
                                    version::META_PROTOCOL_VERSION,
                                )
                            })
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    },
                );
                if let Some(refused) = self.refuse_id(&id, lock(&self.in_flight).deref()) {
                    observe::record_failure(&span, "refused");
                    return Dispatched::Ready(refused);
                }
                // A `_meta` lookup: what a handler passes on to the servers it calls.
                let remote_trace = meta
                    .as_ref()
                    .map(RequestMeta::value)
                    .or_else(|| wire::member(params.as_ref(), "_meta"))
                    .and_then(TraceContext::from_meta)
                    .or_else(|| origin.trace.clone());
                let (params, meta) = self.modern_meta(params, meta);
                let token = CancellationToken::new();
                let is_initialize = method == McpMethod::Initialize.name();
                // Admission (era, lifecycle, method table) is decided now, in arrival
                // order: a request that follows `initialize` sees the session it opened.
                let admitted = match self.admit_request(
                    &method,
                    params.as_ref(),
                    meta.as_ref(),
                    token.clone(),
                    reply,
                    (origin, remote_trace.as_ref()),
                ) {
                    Admission::Answer(outcome) => {
                        // Answered at once: it was never in progress, so it takes no
                        // place among the requests in flight.
                        match &outcome {
                            Err(error) => observe::record_error(&span, error),
                            Ok(_) if is_initialize => self.session_began(origin.network, &span),
                            Ok(_) => {}
                        }
                        let answer = match outcome {
                            Ok(result) => wire::result_response(&id, result),
                            Err(error) => wire::error_response(Some(&id), &error),
                        };
                        return Dispatched::Ready(answer);
                    }
                    Admission::Handler(v, m, ctx) => Work::Handler(
                        v,
                        m,
                        ctx.with_request_id(id.clone())
                            .with_origin(origin)
                            .with_remote_trace(remote_trace),
                    ),
                    Admission::Work(method, work) => Work::Given(method, work),
                    Admission::Bookkeeping(v, method) => Work::Bookkeeping(v, method),
                };
                {
                    // Checked again with the insertion: HTTP session POSTs are handled
                    // concurrently, and another may have taken the id meanwhile.
                    let mut in_flight = lock(&self.in_flight);
                    if let Some(refused) = self.refuse_id(&id, &in_flight) {
                        return Dispatched::Ready(refused);
                    }
                    in_flight.insert(id.clone(), token.clone());
                }
                let wrapped = self.server.has_middleware().then(|| {
                    let version = match &admitted {
                        Work::Handler(v, ..) | Work::Bookkeeping(v, _) => Some(*v),
                        Work::Given(..) => self.version(),
                    };
                    let target = ["name", "uri"]
                        .into_iter()
                        .find_map(|key| wire::member(params.as_ref(), key))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    let sent_meta = meta
                        .as_ref()
                        .map(|m| m.value().clone())
                        .or_else(|| wire::member(params.as_ref(), "_meta").cloned());
                    (version, target, sent_meta, principal.cloned())
                });
                let network = origin.network;
                let conn = Arc::clone(self);
                Dispatched::Task(Box::pin(async move {
                    let server = conn.server.clone();
                    let (method, work) = match admitted {
                        Work::Handler(v, method, ctx) => {
                            let server = server.clone();
                            let work: BoxFuture<'static, _> = Box::pin(async move {
                                server.handle(v, method, params, meta, ctx).await
                            });
                            (method.name(), work)
                        }
                        Work::Given(method, work) => (method, work),
                        Work::Bookkeeping(v, method) => {
                            let conn = Arc::clone(&conn);
                            let work: BoxFuture<'static, _> =
                                Box::pin(
                                    async move { conn.bookkeeping(v, method, params.as_ref()) },
                                );
                            (method.name(), work)
                        }
                    };
                    let work = match wrapped {
                        Some((Some(version), target, meta, principal)) => {
                            let info = middleware::RequestInfo {
                                method,
                                id: id.clone(),
                                target,
                                version,
                                principal,
                                meta,
                            };
                            let chain = Arc::clone(&server.inner.middleware);
                            Box::pin(middleware::run_chain(chain, info, work))
                        }
                        _ => work,
                    };
                    let work = combine::catch_unwind(AssertUnwindSafe(
                        tracing::Instrument::instrument(work, span.clone()),
                    ));
                    let timeout = server.limits().request_timeout;
                    let outcome =
                        match first(token.cancelled(), tokio::time::timeout(timeout, work)).await {
                            First::A(()) => None,
                            First::B(r) => Some(r),
                        };
                    {
                        // Only this request's entry: a cancelled id may already
                        // name a new request.
                        let mut in_flight = lock(&conn.in_flight);
                        if in_flight.get(&id).is_some_and(|t| t.same_as(&token)) {
                            in_flight.remove(&id);
                        }
                    }
                    let Some(outcome) = outcome else {
                        observe::record_failure(&span, "cancelled");
                        return None;
                    };
                    let _in_span = span.enter();
                    Some(match outcome {
                        Ok(Ok(Ok(result))) => {
                            if is_initialize {
                                conn.session_began(network, &span);
                            }
                            wire::result_response(&id, result)
                        }
                        Ok(Ok(Err(error))) => {
                            observe::record_error(&span, &error);
                            wire::error_response(Some(&id), &error)
                        }
                        Err(_elapsed) => {
                            // Dropping the handler's future cancels it; its asks end too.
                            token.cancel();
                            tracing::warn!(%method, ?timeout, "handler timed out");
                            let error = RpcError::internal(format!(
                                "Internal error: the handler did not finish within {} ms",
                                timeout.as_millis()
                            ));
                            observe::record_error(&span, &error);
                            wire::error_response(Some(&id), &error)
                        }
                        Ok(Err(_panic)) => {
                            tracing::error!(%method, "handler panicked");
                            let error = RpcError::internal("Internal error: the handler panicked");
                            observe::record_error(&span, &error);
                            wire::error_response(Some(&id), &error)
                        }
                    })
                }))
            }
        }
    }

    /// A request's params and `_meta` as its handling reads them: `_meta` stays apart only
    /// in a request served statelessly (it names a modern revision, and this server serves
    /// one), whose every reader takes it from there; any other request is handled with its
    /// params as sent.
    #[inline]
    fn modern_meta(
        &self,
        params: Option<Value>,
        meta: Option<RequestMeta>,
    ) -> (Option<Value>, Option<RequestMeta>) {
        if meta.is_none() {
            return (params, None);
        }
        let modern = meta
            .as_ref()
            .is_some_and(|m| version::meta_is_modern(Some(m.value())))
            && self.server.versions().of_era(Era::Modern).next().is_some();
        if modern {
            (params, meta)
        } else {
            (wire::params_with_meta(params, meta), None)
        }
    }

    /// The error for a request whose id is in use by a request in progress, or that
    /// would exceed `Limits::max_in_flight`.
    fn refuse_id(
        &self,
        id: &RequestId,
        in_flight: &HashMap<RequestId, CancellationToken>,
    ) -> Option<Outgoing> {
        let err = if in_flight.contains_key(id) {
            RpcError::new(
                ErrorCode::INVALID_REQUEST,
                format!("Invalid Request: id {id} is already in use by a request in progress"),
            )
        } else if in_flight.len() >= self.server.limits().max_in_flight {
            RpcError::internal(format!("Internal error: too many requests in progress on this connection (at most {}); retry when some have finished", in_flight.len()))
        } else {
            return None;
        };
        Some(wire::error_response(Some(id), &err))
    }
}

/// A fresh owner name for one connection's tasks: a random name of this process (drawn
/// once) and a counter. It must differ from every other connection's, in this process and
/// in every replica sharing a task store; it is never shown to a client, so it need not be
/// unguessable, and drawing and formatting random bits for each connection would be a
/// noticeable share of a stateless HTTP request, which opens a connection each.
fn session_owner() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static PROCESS: OnceLock<String> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let process = PROCESS.get_or_init(|| {
        let mut bytes = [0u8; 16];
        if crate::primitives::random::fill(&mut bytes).is_err() {
            // Without OS randomness, the process id and the time still tell processes
            // apart.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            return format!("{:x}-{nanos:x}", std::process::id());
        }
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    });
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // Written by hand: `format!` was most of what a stateless request's connection cost.
    let mut owner = String::with_capacity("session:".len() + process.len() + 17);
    owner.push_str("session:");
    owner.push_str(process);
    owner.push('-');
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(1);
    for shift in (0..digits).rev() {
        let nibble = (n >> (shift * 4)) & 0xf;
        owner.push(char::from_digit(nibble as u32, 16).unwrap_or('0'));
    }
    owner
}

impl Connection {
    /// Notes that the legacy session began (its `initialize` was answered).
    fn session_began(&self, transport: Transport, span: &tracing::Span) {
        let mut state = lock(&self.state);
        if let Some(v) = state.lifecycle.version() {
            observe::record_version(span, v.as_str());
            if state.session_began.is_none() {
                state.session_began = Some((std::time::Instant::now(), transport));
            }
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some((began, transport)) = state.session_began {
            let version = state.lifecycle.version();
            observe::session_ended(
                observe::SERVER_SESSION_EVENT,
                began.elapsed(),
                version.as_ref().map(|v| v.as_str()),
                transport,
            );
        }
        // Ends the task that forwards server events to this peer (it only holds a weak
        // reference, and would otherwise wait for the next event to notice).
        self.closed.cancel();
        self.release_subscriptions();
    }
}

/// What an admitted request runs: the author's handler through the router, or work
/// admission prepared (the 2026-07-28 tasks extension's methods), named by its method.
// Built once per request and moved straight into its future: boxing the context would
// add an allocation to every request for nothing.
#[allow(clippy::large_enum_variant)]
enum Work {
    Handler(ProtocolVersion, McpMethod, Context),
    /// See [`Admission::Bookkeeping`].
    Bookkeeping(ProtocolVersion, McpMethod),
    Given(&'static str, BoxFuture<'static, Result<Encoded, RpcError>>),
}

/// A batch member answered at once, as a task like the others.
fn ready(answer: Outgoing) -> BoxFuture<'static, Option<Outgoing>> {
    Box::pin(std::future::ready(Some(answer)))
}

/// What a frame became in [`Connection::start_parsed_as`].
pub enum Started {
    /// The frame's requests (none, or a batch's) were handled: their answers, if any, go
    /// to the reply channel. The count is [`Connection::handle_parsed_as`]'s.
    Sent(usize),
    /// A single request (or an invalid message), answered at once; nothing was sent.
    Answer(Outgoing),
    /// A single request's handler, not started: it yields the answer, or nothing if the
    /// request was cancelled. Its notifications go to the reply channel meanwhile.
    Handler(BoxFuture<'static, Option<Outgoing>>),
}

/// Runs a request's handler as a task of its own, its answer sent to `reply`.
pub fn spawn_answer(task: BoxFuture<'static, Option<Outgoing>>, reply: mpsc::Sender<Outgoing>) {
    tokio::spawn(async move {
        if let Some(answer) = task.await {
            let _ = reply.send(answer).await;
        }
    });
}

/// Runs a request's handler here as far as it goes without waiting: most handlers finish
/// in that first poll (they compute an answer and return), and then the answer is sent
/// from here, with no task spawned for it (a task cell allocated, scheduled, perhaps
/// stolen by another worker and its answer's allocations freed across threads: ~5k
/// instructions and a cross-thread wake-up per request on the stdio path). A handler
/// that waits (on a client's answer, I/O, a timer) is moved into a task of its own at
/// its first wait, and runs on concurrently as before; it is polled there with that
/// task's waker, so the wake-up it registered here only costs a spurious poll of the
/// caller. A handler that computes for long without ever waiting holds up the reading of
/// the next message meanwhile — in a task it held a worker thread the same way; tokio's
/// advice for such work (`spawn_blocking`) applies to both.
pub(crate) async fn answer_or_spawn(
    mut task: BoxFuture<'static, Option<Outgoing>>,
    reply: &mpsc::Sender<Outgoing>,
) {
    use std::task::Poll;
    let first = std::future::poll_fn(|cx| Poll::Ready(task.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(Some(answer)) => {
            let _ = reply.send(answer).await;
        }
        // Cancelled before it finished: nothing to send.
        Poll::Ready(None) => {}
        Poll::Pending => spawn_answer(task, reply.clone()),
    }
}

/// What a message became in [`Connection::dispatch`].
enum Dispatched {
    /// Nothing to answer (a notification, a response).
    Nothing,
    /// The answer, already known.
    Ready(Outgoing),
    /// The request's handler, to run concurrently; it yields the answer, or nothing if
    /// the request was cancelled.
    Task(BoxFuture<'static, Option<Outgoing>>),
}

#[cfg(test)]
mod tests {
    use super::session_owner;
    use super::{CancellationToken, Connection};
    use crate::model::Implementation;
    use crate::Server;

    /// A stateless connection's listens end with the server's shutdown, but draining the
    /// connection never shuts the server down (the token is the server's, not its own).
    #[tokio::test]
    async fn draining_a_stateless_connection_leaves_the_server_running() {
        let stopping = CancellationToken::new();
        let (out, _rx) = tokio::sync::mpsc::channel(1);
        let server = Server::builder(Implementation::new("t", "1")).build();
        let conn = Connection::stateless_stopping_with(server, out, Some(stopping.clone()));
        conn.drain(std::time::Duration::ZERO).await;
        assert!(conn.draining.is_cancelled());
        assert!(!stopping.is_cancelled());
    }

    /// Every connection's task owner is its own, and none can be a replica-shared
    /// session's name (`session:` and 32 hex digits, without a `-`).
    #[test]
    fn task_owners_differ() {
        let owners: Vec<String> = (0..300).map(|_| session_owner()).collect();
        let distinct: std::collections::BTreeSet<&String> = owners.iter().collect();
        assert_eq!(distinct.len(), owners.len());
        for owner in &owners {
            let (process, counter) = owner
                .strip_prefix("session:")
                .and_then(|rest| rest.rsplit_once('-'))
                .unwrap_or_default();
            assert_eq!(process.len(), 32, "{owner}");
            assert!(u64::from_str_radix(counter, 16).is_ok(), "{owner}");
        }
    }
}
