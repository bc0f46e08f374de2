//! The client's conversation with one server, whatever the transport: request ids, the
//! requests waiting for their answers, timeouts and cancellation, the per-request
//! `_meta` and HTTP headers of 2026-07-28, and everything that arrives — answers, the
//! server's own requests (answered by the client handlers), notifications.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, Weak};
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::error::{ClientError, ClientErrorKind};
use super::handlers::ClientHandlers;
use super::link::{Incoming, Link, LinkKind, Outbound, OutboundKind};
use super::notification::Notification;
use super::{headers, shape, RequestOptions, ServerInfo};
use mcp_runtime::model::{Implementation, LogLevel};
use mcp_runtime::observe;
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::version::{
    Era, ProtocolVersion, VersionSet, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
};
use mcp_runtime::wire::{self, Message, RequestId, RpcError};

/// What the builder fixed.
pub(crate) struct Config {
    pub(crate) info: Implementation,
    pub(crate) handlers: ClientHandlers,
    pub(crate) url_elicitation: bool,
    pub(crate) versions: VersionSet,
    pub(crate) timeout: Duration,
    pub(crate) probe_timeout: Duration,
    pub(crate) max_rounds: usize,
    pub(crate) experimental: Option<Value>,
    /// Whether tool results are checked against their tools' output schemas (with the
    /// feature `output-validation`).
    #[cfg_attr(not(feature = "output-validation"), allow(dead_code))]
    pub(crate) validate_output: bool,
}

impl Config {
    /// The client's capabilities, neutral (newest shape).
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = self.handlers.capabilities(self.url_elicitation);
        if let Some(e) = &self.experimental {
            caps.insert("experimental".into(), e.clone());
        }
        Value::Object(caps)
    }
}

/// What negotiation settled.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) server: Option<ServerInfo>,
    pub(crate) log_level: Option<LogLevel>,
    /// The resources the caller subscribed to in this legacy session (renewal subscribes
    /// again: subscriptions are session state the server forgot with the session).
    pub(crate) subscriptions: std::collections::BTreeSet<String>,
}

struct Waiting {
    tx: oneshot::Sender<Result<Value, ClientError>>,
    handlers: Option<ClientHandlers>,
}

use super::ProgressFn;

pub(crate) struct Core {
    link: Box<dyn Link>,
    kind: LinkKind,
    next_id: AtomicI64,
    waiting: Mutex<HashMap<RequestId, Waiting>>,
    progress: Mutex<HashMap<String, ProgressFn>>,
    pub(crate) config: Config,
    state: RwLock<State>,
    notifications: Mutex<Option<broadcast::Sender<Notification>>>,
    serving: Mutex<HashMap<RequestId, tokio::task::AbortHandle>>,
    tool_schemas: Mutex<HashMap<String, Value>>,
    #[cfg(feature = "output-validation")]
    pub(crate) output_schemas: crate::output_schema::OutputSchemas,
    closed: Mutex<Option<String>>,
    modern_meta: Mutex<HashMap<ProtocolVersion, Map<String, Value>>>,
    /// Held while a new legacy session replaces one the server ended (one renewal for
    /// every request that saw the 404).
    pub(crate) renewing: tokio::sync::Mutex<()>,
    /// When the current legacy session began (its `initialize` answered) and at what
    /// revision: its end is reported for `mcp.client.session.duration`.
    session_began: Mutex<Option<(std::time::Instant, ProtocolVersion)>>,
}

impl Drop for Core {
    fn drop(&mut self) {
        // A client dropped without `close`, its link still open: its session ends here.
        let session = self
            .session_began
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.report_session(session);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How many notifications wait for a slow reader before the oldest are dropped.
const NOTIFICATION_BUFFER: usize = 1024;

impl Core {
    /// A core over `link`, reading what arrives on `incoming`.
    pub(crate) fn start(
        link: Box<dyn Link>,
        incoming: mpsc::UnboundedReceiver<Incoming>,
        config: Config,
    ) -> Arc<Core> {
        let (notifications, _) = broadcast::channel(NOTIFICATION_BUFFER);
        let core = Arc::new(Core {
            kind: link.kind(),
            link,
            next_id: AtomicI64::new(1),
            waiting: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            config,
            state: RwLock::new(State::default()),
            notifications: Mutex::new(Some(notifications)),
            serving: Mutex::new(HashMap::new()),
            tool_schemas: Mutex::new(HashMap::new()),
            #[cfg(feature = "output-validation")]
            output_schemas: crate::output_schema::OutputSchemas::default(),
            closed: Mutex::new(None),
            modern_meta: Mutex::new(HashMap::new()),
            renewing: tokio::sync::Mutex::new(()),
            session_began: Mutex::new(None),
        });
        tokio::spawn(read(Arc::downgrade(&core), incoming));
        core
    }

    pub(crate) fn link_kind(&self) -> LinkKind {
        self.kind
    }

    pub(crate) fn link(&self) -> &dyn Link {
        self.link.as_ref()
    }

    /// The revision in force (after negotiation).
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.server_info().map(|s| s.version)
    }

    pub(crate) fn server_info(&self) -> Option<ServerInfo> {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .server
            .clone()
    }

    pub(crate) fn set_server(&self, server: ServerInfo) {
        self.state
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .server = Some(server);
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        self.state
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .log_level = Some(level);
    }

    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .log_level
    }

    /// Records a subscription the server accepted (`true`) or ended (`false`).
    pub(crate) fn record_subscription(&self, uri: &str, subscribed: bool) {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        if subscribed {
            state.subscriptions.insert(uri.to_owned());
        } else {
            state.subscriptions.remove(uri);
        }
    }

    /// The resources subscribed to, in URI order.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .subscriptions
            .iter()
            .cloned()
            .collect()
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Notification> {
        match lock(&self.notifications).as_ref() {
            Some(tx) => tx.subscribe(),
            // Closed: a receiver whose sender is gone at once.
            None => broadcast::channel(1).1,
        }
    }

    pub(crate) fn remember_tool_schema(&self, name: &str, schema: &Value) {
        lock(&self.tool_schemas).insert(name.to_owned(), schema.clone());
    }

    pub(crate) fn knows_tool(&self, name: &str) -> bool {
        lock(&self.tool_schemas).contains_key(name)
    }

    fn check_open(&self) -> Result<(), ClientError> {
        match lock(&self.closed).as_ref() {
            Some(why) => Err(ClientError::new(ClientErrorKind::Closed, why.clone())),
            None => Ok(()),
        }
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed).into())
    }

    /// The `_meta` every 2026-07-28 request carries (shaped once per revision).
    fn modern_meta(&self, v: ProtocolVersion, meta: &mut Map<String, Value>) {
        let base = {
            let mut cache = lock(&self.modern_meta);
            cache
                .entry(v)
                .or_insert_with(|| {
                    let mut base = Map::new();
                    base.insert(META_PROTOCOL_VERSION.into(), json!(v.as_str()));
                    base.insert(
                        META_CLIENT_CAPABILITIES.into(),
                        shape::client_capabilities(v, &self.config.capabilities()),
                    );
                    base.insert(
                        META_CLIENT_INFO.into(),
                        shape::implementation(v, &self.config.info),
                    );
                    base
                })
                .clone()
        };
        meta.extend(base);
        if let Some(level) = self.log_level() {
            meta.insert(META_LOG_LEVEL.into(), json!(level));
        }
    }

    /// Sends request `method` at revision `v` and waits for its answer (the raw result).
    /// The params get what `v` requires (`_meta` in 2026-07-28, a progress token when
    /// `options` listens to progress) and are projected through `v`'s params type.
    /// Runs in a client span by the MCP conventions, whose trace context the request
    /// carries in its `_meta`.
    pub(crate) async fn request(
        self: &Arc<Self>,
        v: ProtocolVersion,
        method: &str,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let span = observe::client_span(
            method,
            Some(&params),
            Some(v.as_str()),
            None,
            self.transport(),
        );
        let outcome = tracing::Instrument::instrument(
            self.request_in(&span, v, method, params, options),
            span.clone(),
        )
        .await;
        if !span.is_disabled() {
            match &outcome {
                Err(e) => match e.rpc() {
                    Some(rpc) => observe::record_error(&span, rpc),
                    None => observe::record_failure(&span, failure_kind(e.kind())),
                },
                Ok(result) if method == "tools/call" => {
                    if result.get("isError").and_then(Value::as_bool) == Some(true) {
                        observe::record_tool_error(&span);
                    }
                }
                Ok(_) => {}
            }
        }
        outcome
    }

    /// The transport as the conventions' attributes describe it.
    fn transport(&self) -> observe::Transport {
        match self.kind {
            LinkKind::Stdio => observe::Transport::Pipe,
            LinkKind::StreamableHttp | LinkKind::LegacySse => observe::Transport::Http {
                version: "1.1",
                peer: None,
            },
        }
    }

    async fn request_in(
        self: &Arc<Self>,
        span: &tracing::Span,
        v: ProtocolVersion,
        method: &str,
        mut params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        self.check_open()?;
        let id = self.next_id();
        observe::record_request_id(span, &id);
        let mcp_method = McpMethod::from_name(method);
        let mut progress_key = None;
        {
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                if let Some(extra) = &options.meta {
                    for (k, val) in extra {
                        meta.insert(k.clone(), val.clone());
                    }
                }
                if v.era() == Era::Modern {
                    self.modern_meta(v, meta);
                    if let Some(capabilities) = &options.capabilities {
                        meta.insert(
                            META_CLIENT_CAPABILITIES.into(),
                            shape::client_capabilities(v, capabilities),
                        );
                    }
                }

                if let Some(on_progress) = &options.on_progress {
                    let token = json!(format!("progress-{id}"));
                    let key = token.to_string();
                    lock(&self.progress).insert(key.clone(), on_progress.clone());
                    progress_key = Some(key);
                    meta.insert("progressToken".into(), token);
                }
            }
            if params
                .get("_meta")
                .is_some_and(|m| m.as_object().is_some_and(Map::is_empty))
            {
                params.remove("_meta");
            }
        }
        let params = Value::Object(params);
        let params = match mcp_method {
            Some(m) => match shape::params(v, m, params) {
                Ok(p) => p,
                Err(e) => {
                    if let Some(key) = &progress_key {
                        lock(&self.progress).remove(key);
                    }
                    return Err(e);
                }
            },
            None => params,
        };
        // Written after the projection: W3C trace context is `_meta`'s in every revision
        // (SEP-414 reserves its keys), though a revision's `_meta` type may not name them.
        let params = match observe::context_to_send(span, options.trace.as_ref()) {
            Some(trace) => with_trace(params, &trace),
            None => params,
        };
        let http_headers = if self.kind == LinkKind::StreamableHttp && v.era() == Era::Modern {
            let tool = params.get("name").and_then(Value::as_str);
            let schemas = lock(&self.tool_schemas);
            let schema = match (mcp_method, tool) {
                (Some(McpMethod::CallTool), Some(name)) => schemas.get(name).cloned(),
                _ => None,
            };
            drop(schemas);
            headers::request_headers(v, method, &params, schema.as_ref())
        } else {
            Vec::new()
        };
        let message = wire::request(&id, method, Some(params));
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(
            id.clone(),
            Waiting {
                tx,
                handlers: options.handlers.clone(),
            },
        );
        let mut guard = Pending {
            core: self,
            id: id.clone(),
            version: v,
            cancel_on_drop: mcp_method != Some(McpMethod::Initialize),
            progress_key,
            done: false,
        };
        self.link
            .send(Outbound {
                json: message.json().bytes(),
                kind: OutboundKind::Request(id.clone()),
                headers: http_headers,
                opens_session: mcp_method == Some(McpMethod::Initialize),
            })
            .await
            .inspect_err(|_| guard.done = true)?;
        let timeout = options.timeout.unwrap_or(self.config.timeout);
        let answer = if timeout.is_zero() {
            rx.await.map_err(|_| ClientError::closed())
        } else {
            match tokio::time::timeout(timeout, rx).await {
                Ok(answer) => answer.map_err(|_| ClientError::closed()),
                Err(_) => {
                    return Err(ClientError::new(
                        ClientErrorKind::Timeout,
                        format!("no answer to {method} within {timeout:?}"),
                    ))
                }
            }
        };
        guard.done = true;
        answer?
    }

    /// Sends a notification at revision `v`.
    pub(crate) async fn notify(
        &self,
        v: ProtocolVersion,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), ClientError> {
        self.check_open()?;
        let params = match (McpMethod::from_name(method), params) {
            (Some(m), Some(p)) => Some(shape::notification_params(v, m, p)?),
            (_, p) => p,
        };
        let message = wire::notification(method, params);
        self.link
            .send(Outbound {
                json: message.json().bytes(),
                kind: OutboundKind::Notification,
                headers: if self.kind == LinkKind::StreamableHttp && v.era() == Era::Modern {
                    vec![
                        ("mcp-protocol-version".into(), v.as_str().into()),
                        ("mcp-method".into(), method.into()),
                    ]
                } else {
                    Vec::new()
                },
                opens_session: false,
            })
            .await
    }

    /// Closes the connection; waiting requests fail with `why`.
    pub(crate) async fn close(&self, why: &str) {
        self.mark_closed(why);
        self.link.close().await;
    }

    /// Notes that a legacy session began at revision `v`; one it replaces (the server
    /// ended it) is reported ended.
    pub(crate) fn session_began(&self, v: ProtocolVersion) {
        let previous = lock(&self.session_began).replace((std::time::Instant::now(), v));
        self.report_session(previous);
    }

    /// Reports a session's end (`mcp.client.session.duration`), as the conventions
    /// describe it: its revision and its transport.
    fn report_session(&self, session: Option<(std::time::Instant, ProtocolVersion)>) {
        let Some((began, v)) = session else {
            return;
        };
        let transport = match self.kind {
            LinkKind::Stdio => observe::Transport::Pipe,
            LinkKind::StreamableHttp | LinkKind::LegacySse => observe::Transport::Http {
                version: "1.1",
                peer: None,
            },
        };
        observe::session_ended(
            observe::CLIENT_SESSION_EVENT,
            began.elapsed(),
            Some(v.as_str()),
            transport,
        );
    }

    fn mark_closed(&self, why: &str) {
        let session = lock(&self.session_began).take();
        self.report_session(session);
        {
            let mut closed = lock(&self.closed);
            if closed.is_none() {
                *closed = Some(why.to_owned());
            }
        }
        let waiting: Vec<Waiting> = lock(&self.waiting).drain().map(|(_, w)| w).collect();
        for w in waiting {
            let _ =
                w.tx.send(Err(ClientError::new(ClientErrorKind::Closed, why)));
        }
        for (_, task) in lock(&self.serving).drain() {
            task.abort();
        }
        lock(&self.notifications).take();
    }

    fn complete(&self, id: &RequestId, outcome: Result<Value, ClientError>) {
        if let Some(w) = lock(&self.waiting).remove(id) {
            let _ = w.tx.send(outcome);
        }
    }

    /// The handlers for a server request: those of the request whose exchange carried
    /// it, or of the one request in flight that has its own, else the client's.
    fn handlers_for(&self, related: Option<&RequestId>) -> ClientHandlers {
        let waiting = lock(&self.waiting);
        let own = match related.and_then(|id| waiting.get(id)) {
            Some(w) => w.handlers.clone(),
            None => {
                let mut with_handlers = waiting.values().filter_map(|w| w.handlers.as_ref());
                match (with_handlers.next(), with_handlers.next()) {
                    (Some(h), None) => Some(h.clone()),
                    _ => None,
                }
            }
        };
        drop(waiting);
        match own {
            Some(h) => h.or(&self.config.handlers),
            None => self.config.handlers.clone(),
        }
    }

    fn broadcast(&self, notification: Notification) {
        if let Some(tx) = lock(&self.notifications).as_ref() {
            let _ = tx.send(notification);
        }
    }

    fn on_notification(&self, method: &str, params: Option<Value>) {
        let Some(v) = self.version().or(ProtocolVersion::ALL.last().copied()) else {
            return;
        };
        if method == "notifications/cancelled" {
            let id = params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value);
            if let Some(task) = id.and_then(|id| lock(&self.serving).remove(&id)) {
                task.abort();
            }
            return;
        }
        let notification = Notification::decode(v, method, params);
        if let Notification::Progress {
            token,
            progress,
            total,
            message,
        } = &notification
        {
            let callback = lock(&self.progress).get(&token.to_string()).cloned();
            if let Some(callback) = callback {
                callback(super::Progress {
                    progress: *progress,
                    total: *total,
                    message: message.clone(),
                });
            }
        }
        self.broadcast(notification);
    }

    fn on_request(
        self: &Arc<Self>,
        id: RequestId,
        method: String,
        params: Option<Value>,
        related: Option<RequestId>,
    ) {
        let core = Arc::downgrade(self);
        let handlers = self.handlers_for(related.as_ref());
        let v = self.version();
        let served_id = id.clone();
        let task = tokio::spawn(async move {
            let outcome = match v {
                Some(v) => handlers.answer(v, &method, params).await,
                None => Err(RpcError::new(
                    wire::ErrorCode::INVALID_REQUEST,
                    "the session is not initialized",
                )),
            };
            let Some(core) = core.upgrade() else {
                return;
            };
            lock(&core.serving).remove(&id);
            let message = match outcome {
                Ok(result) => match wire::Encoded::of(&result) {
                    Ok(encoded) => wire::result_response(&id, encoded),
                    Err(e) => wire::error_response(Some(&id), &RpcError::internal(e.to_string())),
                },
                Err(error) => wire::error_response(Some(&id), &error),
            };
            let headers = match (core.kind, v) {
                (LinkKind::StreamableHttp, Some(v)) if v.era() == Era::Modern => {
                    vec![("mcp-protocol-version".into(), v.as_str().into())]
                }
                _ => Vec::new(),
            };
            if let Err(e) = core
                .link
                .send(Outbound {
                    json: message.json().bytes(),
                    kind: OutboundKind::Response,
                    headers,
                    opens_session: false,
                })
                .await
            {
                tracing::warn!("could not answer the server's {method}: {e}");
            }
        });
        lock(&self.serving).insert(served_id, task.abort_handle());
    }
}

/// A request waiting for its answer: dropped before the answer came (the caller gave up,
/// or the timeout struck), it stops waiting and tells the server — `notifications/cancelled`,
/// or on 2026-07-28 over HTTP, closing the request's stream.
struct Pending<'a> {
    core: &'a Arc<Core>,
    id: RequestId,
    version: ProtocolVersion,
    cancel_on_drop: bool,
    progress_key: Option<String>,
    done: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(key) = &self.progress_key {
            lock(&self.core.progress).remove(key);
        }
        let still_waiting = lock(&self.core.waiting).remove(&self.id).is_some();
        if self.done || !still_waiting || !self.cancel_on_drop {
            return;
        }
        self.core.link.abandon(&self.id);
        let modern_http =
            self.core.kind == LinkKind::StreamableHttp && self.version.era() == Era::Modern;
        if modern_http || lock(&self.core.closed).is_some() {
            return;
        }
        let core = self.core.clone();
        let id = self.id.clone();
        let v = self.version;
        tokio::spawn(async move {
            let params = json!({"requestId": id.to_value(), "reason": "cancelled by the client"});
            let _ = core
                .notify(v, "notifications/cancelled", Some(params))
                .await;
        });
    }
}

/// `params` with `trace` in its `_meta` (made if absent).
fn with_trace(mut params: Value, trace: &observe::TraceContext) -> Value {
    if let Value::Object(members) = &mut params {
        let meta = members
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            trace.write_meta(meta);
        }
    }
    params
}

/// `error.type` of a request that got no answer.
fn failure_kind(kind: ClientErrorKind) -> &'static str {
    match kind {
        ClientErrorKind::Timeout => "timeout",
        ClientErrorKind::Cancelled => "cancelled",
        ClientErrorKind::Transport => "transport",
        ClientErrorKind::Closed => "closed",
        ClientErrorKind::InvalidResult => "invalid_result",
        ClientErrorKind::Unauthorized => "unauthorized",
        _ => "_OTHER",
    }
}

/// Reads what arrives until the link closes or the client is gone.
async fn read(core: Weak<Core>, mut incoming: mpsc::UnboundedReceiver<Incoming>) {
    while let Some(item) = incoming.recv().await {
        let Some(core) = core.upgrade() else {
            return;
        };
        match item {
            Incoming::Message { message, related } => match message {
                Message::Response { id, outcome } => {
                    if related.as_ref() != Some(&id) {
                        // Answered on another stream (a resumed or the session's GET
                        // stream): the request's own exchange has nothing left to wait for.
                        core.link.abandon(&id);
                    }
                    core.complete(&id, outcome.map_err(ClientError::from_rpc));
                }
                Message::Request {
                    id,
                    method,
                    params,
                    meta,
                } => {
                    // A client's handlers read a server's request as it was sent.
                    let params = wire::params_with_meta(params, meta);
                    core.on_request(id, method, params, related);
                }
                Message::Notification { method, params } => core.on_notification(&method, params),
            },
            Incoming::Failed { id, error } => core.complete(&id, Err(error)),
            Incoming::Closed(why) => {
                core.mark_closed(&why);
                return;
            }
        }
    }
}
