//! What a handler gets besides its arguments: the revision in force, the client's
//! capabilities, and the means to report progress, log, ask the client and notice
//! cancellation. The runtime routes what a handler emits to the right place for the
//! transport and era.

use std::any::Any;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::broadcast;

use crate::auth::Principal;
use crate::cancel::CancellationToken;
use crate::model::LogLevel;
use crate::model::{Elicitation, Root, SampledMessage, SamplingRequest};
use crate::protocol::asks::{self, Ask, AskError, AskErrorKind, Asker};
use crate::protocol::logging::LogFilter;
use crate::protocol::peer::Peer;
use crate::protocol::shape;
use crate::protocol::version::ProtocolVersion;
use crate::server::connection::RequestOrigin;
use crate::server::events::ServerEvent;
#[cfg(feature = "tasks")]
use crate::server::tasks::{TaskLink, TaskStatus};
use crate::wire::Outgoing;
use crate::wire::{self, RequestId, RequestMeta, RpcError};
use tokio::sync::mpsc;

/// The context of one request: the revision it is served at, what the client declared,
/// and the means to report progress, log, ask the client, announce changes and notice
/// cancellation. It is a narrow handle on the request's client, never the whole server.
///
/// # Asking the client, in every revision
///
/// [`Context::elicit`], [`Context::create_message`], [`Context::list_roots`] and
/// [`Context::ask`] are one API for two wires:
///
/// - **2024-11-05 … 2025-11-25**: the ask is a request the server sends the client on the
///   session (`elicitation/create`, `sampling/createMessage`, `roots/list`); the handler
///   waits for the answer (at most `Limits::ask_timeout`), and a cancelled request tells
///   the client to stop.
/// - **2026-07-28** has no server-to-client requests. The handler's first run records what
///   it asks, and the ask fails with [`AskErrorKind::InputRequired`]; propagate it with
///   `?` (the runtime answers the request `input_required` whatever the handler returned).
///   The client asks its user or model and **retries the request with the answers**; the
///   runtime runs the handler again, from the start, and this time each ask returns its
///   answer. A handler that asks twice in sequence runs three times. The answers of
///   earlier rounds travel in a `requestState` the server signed and bound to the tool
///   and its arguments, so they cannot be altered or replayed on another call.
///
/// What this means for a handler: work done **before** an ask runs again on every retry.
/// Keep it free of side effects (or idempotent), and do what must happen once — a
/// payment, a write — after the last ask. Ask the same things in the same order for the
/// same arguments: answers are matched to asks by key (`input-1`, `input-2`, … unless
/// [`Context::ask`] names them).
#[derive(Clone, Debug)]
pub struct Context {
    peer: Peer,
    progress_token: Option<Value>,
    /// The request's `_meta` as sent (shared with every request that sent the same text).
    request_meta: Option<RequestMeta>,
    log: LogFilter,
    asker: Asker,
    request_id: Option<RequestId>,
    /// The connection's draining and, for a connection never drained on its own, the
    /// server's shutdown (see `Context::draining`); only requests that never end on their
    /// own carry them.
    draining: Option<(CancellationToken, Option<CancellationToken>)>,
    events: broadcast::Sender<ServerEvent>,
    principal: Option<Arc<Principal>>,
    /// The trace context the request arrived with (`params._meta`, else the HTTP
    /// `traceparent` header).
    remote_trace: Option<Arc<crate::observe::TraceContext>>,
    /// What the transport attached to the request that carried this one (over HTTP, the
    /// request's head); see [`Context::transport_request`].
    transport_request: Option<Arc<dyn Any + Send + Sync>>,
    /// The task this call runs as (or may start), if any.
    #[cfg(feature = "tasks")]
    task: Option<Arc<TaskLink>>,
    /// Who owns the tasks this request creates or names, and (legacy) the session's
    /// channel, where a task's messages go once its request has been answered.
    task_scope: Arc<TaskScope>,
}

/// See [`Context::task_scope`].
#[derive(Debug, Default)]
// Admission sets the scope with or without the feature `tasks` (one path for both); only
// the task machinery reads it.
#[cfg_attr(not(feature = "tasks"), allow(dead_code))]
pub(crate) struct TaskScope {
    pub(crate) owner: String,
    pub(crate) session: Option<mpsc::Sender<Outgoing>>,
    /// Fires when the connection the tasks belong to ends (stdio, a legacy session):
    /// its tasks are cancelled then, since no one can ask about them any more.
    pub(crate) ends_with: Option<crate::cancel::CancellationToken>,
}

impl Context {
    pub(crate) fn new(
        peer: Peer,
        progress_token: Option<Value>,
        log: LogFilter,
        asker: Asker,
        events: broadcast::Sender<ServerEvent>,
    ) -> Context {
        Context {
            peer,
            progress_token,
            request_meta: None,
            log,
            asker,
            request_id: None,
            draining: None,
            events,
            principal: None,
            remote_trace: None,
            transport_request: None,
            #[cfg(feature = "tasks")]
            task: None,
            task_scope: Arc::new(TaskScope::default()),
        }
    }

    /// Sets who owns this request's tasks (the caller's principal, the legacy session)
    /// and the session's channel.
    pub(crate) fn with_task_scope(mut self, scope: TaskScope) -> Context {
        self.task_scope = Arc::new(scope);
        self
    }

    #[cfg(feature = "tasks")]
    /// The owner of this request's tasks: the principal when there is one, else the
    /// scope admission gave (the legacy session, or nobody in particular).
    pub(crate) fn task_owner(&self) -> String {
        match &self.principal {
            Some(p) => format!("principal:{}", p.identity()),
            None => self.task_scope.owner.clone(),
        }
    }

    #[cfg(feature = "tasks")]
    /// The legacy session's channel, if the request belongs to one.
    pub(crate) fn session_channel(&self) -> Option<mpsc::Sender<Outgoing>> {
        self.task_scope.session.clone()
    }

    #[cfg(feature = "tasks")]
    /// When the tasks this request starts must end (see [`TaskScope::ends_with`]).
    pub(crate) fn tasks_end_with(&self) -> Option<crate::cancel::CancellationToken> {
        self.task_scope.ends_with.clone()
    }

    #[cfg(feature = "tasks")]
    /// The request's cancellation.
    pub(crate) fn cancellation(&self) -> crate::cancel::CancellationToken {
        self.peer.cancel.clone()
    }

    #[cfg(feature = "tasks")]
    /// This context for a handler running as a task (or that may start one): cancelled
    /// by the task's token, its messages to `out` when given (a legacy session).
    pub(crate) fn for_task(
        &self,
        link: Arc<TaskLink>,
        cancel: crate::cancel::CancellationToken,
        out: Option<mpsc::Sender<Outgoing>>,
    ) -> Context {
        let mut ctx = self.clone();
        ctx.peer.cancel = cancel;
        if let Some(out) = out {
            ctx.peer.out = out;
        }
        ctx.task = Some(link);
        ctx
    }

    /// The session this request belongs to, as an opaque key: the same for every request
    /// of one legacy session (a stdio connection, an HTTP session, replicas sharing it),
    /// different from any other session's; `None` for a 2026-07-28 request, which has no
    /// session. For what a session may see or do
    /// ([`ServerBuilder::visible_if`](crate::ServerBuilder::visible_if)), not for display.
    pub fn session(&self) -> Option<&str> {
        self.task_scope
            .session
            .as_ref()
            .map(|_| self.task_scope.owner.as_str())
    }

    #[cfg(feature = "tasks")]
    /// The id of the task this call runs as, once it is one.
    pub fn task_id(&self) -> Option<String> {
        self.task.as_ref().and_then(|t| t.id())
    }

    #[cfg(feature = "tasks")]
    /// Makes this call a task now, for a tool registered with
    /// [`Tool::task_started_by_handler`](crate::model::Tool::task_started_by_handler):
    /// the client is answered with the task handle and the handler goes on; `Ok(true)`
    /// once the call is a task, `Ok(false)` when it cannot be one (the client did not
    /// declare tasks, or the tool does not run as a task) and goes on as an ordinary
    /// call. Asks made before it are ordinary asks of the call; asks made after it go
    /// through the task (2026-07-28: `inputRequests` answered with `tasks/update`).
    /// An error when the task could not be created (the client has too many).
    pub async fn start_task(&self) -> Result<bool, RpcError> {
        match &self.task {
            Some(link) => link.start().await,
            None => Ok(false),
        }
    }

    #[cfg(feature = "tasks")]
    /// Sets the status message of the task this call runs as (what `tasks/get` reports
    /// in `statusMessage`); nothing outside a task.
    pub async fn task_status(&self, message: impl Into<String>) {
        if let Some(link) = self.started_task() {
            link.set_status(None, Some(message.into())).await;
        }
    }

    #[cfg(feature = "tasks")]
    fn started_task(&self) -> Option<&Arc<TaskLink>> {
        self.task.as_ref().filter(|t| t.id().is_some())
    }

    /// A 2026-07-28 task whose request has been answered: nothing is sent to the client
    /// on its behalf (the extension has no progress or log messages for tasks).
    #[cfg(feature = "tasks")]
    fn silent_task(&self) -> bool {
        self.peer.version.era() == crate::Era::Modern && self.started_task().is_some()
    }

    /// Without the feature `tasks` no call runs as a task.
    #[cfg(not(feature = "tasks"))]
    fn silent_task(&self) -> bool {
        false
    }

    /// The caller, as the HTTP transport authenticated it (see [`crate::auth`]), and the
    /// transport's request.
    pub(crate) fn with_origin(mut self, origin: &RequestOrigin) -> Context {
        self.principal.clone_from(&origin.principal);
        self.transport_request.clone_from(&origin.transport);
        self
    }

    /// Gives the request the trace context it arrived with.
    pub(crate) fn with_remote_trace(
        mut self,
        remote: Option<crate::observe::TraceContext>,
    ) -> Context {
        self.remote_trace = remote.map(Arc::new);
        self
    }

    /// The W3C trace context this request arrived with (`params._meta`'s `traceparent`,
    /// `tracestate` and `baggage`, else the HTTP `traceparent` header): what a handler
    /// that calls another MCP server passes on when no tracing backend is installed (with
    /// one, the request's span is the parent of whatever the handler starts).
    pub fn remote_trace(&self) -> Option<&crate::observe::TraceContext> {
        self.remote_trace.as_deref()
    }

    /// What the transport that carried this request attached to it, when it is a `T`.
    ///
    /// Over HTTP (`mcp-runtime-http`) it is the HTTP request's head, `http::request::Parts`:
    /// its headers, and the request extensions the application's middleware inserted (an
    /// identity a trusted proxy vouched for, a tenant, a trace context). Read it with that
    /// crate's `HttpContext::http_request`, which names the type for you. Each request has
    /// its own: in a legacy session, every POST's own headers, not those of `initialize`.
    /// On stdio there is none.
    pub fn transport_request<T: Any>(&self) -> Option<&T> {
        self.transport_request.as_deref()?.downcast_ref()
    }

    /// Who sent this request: the principal its access token names, when the HTTP server
    /// is a resource server (`mcp-runtime-http`'s `auth::ResourceServer`); `None` on stdio and on an
    /// HTTP server without authorization.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// Lets this request see its connection drain (`subscriptions/listen`).
    pub(crate) fn with_draining(
        mut self,
        draining: CancellationToken,
        stopping: Option<CancellationToken>,
    ) -> Context {
        self.draining = Some((draining, stopping));
        self
    }

    /// Resolves when the connection drains (its input ended, the server shuts down), for
    /// a request given the connection's draining (see `with_draining`); never otherwise.
    pub(crate) async fn draining(&self) {
        match &self.draining {
            Some((draining, None)) => draining.cancelled().await,
            Some((draining, Some(stopping))) => {
                crate::cancel::first(draining.cancelled(), stopping.cancelled()).await;
            }
            None => std::future::pending().await,
        }
    }

    pub(crate) fn with_request_id(mut self, id: RequestId) -> Context {
        self.request_id = Some(id);
        self
    }

    /// The JSON-RPC id of the request being served.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// Gives the handler the request's `_meta` (see [`Context::meta`]). Set in place:
    /// a by-value setter copies the whole context in and out on every request.
    pub(crate) fn set_request_meta(&mut self, meta: Option<RequestMeta>) {
        self.request_meta = meta;
    }

    /// The request's `_meta`, exactly as the client sent it (empty when it sent none, or
    /// sent something other than an object).
    ///
    /// Nothing is removed: the keys the runtime acts on stay visible but are still
    /// handled by it — `progressToken` (use [`Context::progress`]) and, in 2026-07-28, the
    /// `io.modelcontextprotocol/…` keys that carry the revision, the client's
    /// capabilities ([`Context::client_capabilities`]), its identity and its log level.
    /// Everything else reaches the handler untouched, such as the W3C trace context
    /// 2026-07-28 reserves (`traceparent`, `tracestate`, `baggage`) or an extension's
    /// own keys.
    ///
    /// ```no_run
    /// # use mcp_runtime::Context;
    /// # fn trace(ctx: &Context) {
    /// if let Some(parent) = ctx.meta().get("traceparent").and_then(|v| v.as_str()) {
    ///     // continue the caller's trace
    /// #   let _ = parent;
    /// }
    /// # }
    /// ```
    pub fn meta(&self) -> &crate::model::Meta {
        static EMPTY: std::sync::OnceLock<crate::model::Meta> = std::sync::OnceLock::new();
        match self.request_meta.as_ref().map(RequestMeta::value) {
            Some(Value::Object(meta)) => meta,
            _ => EMPTY.get_or_init(crate::model::Meta::new),
        }
    }

    /// Asks the user to fill in a `T` (`elicitation/create`, form mode; 2025-06-18+).
    /// The requested schema is derived from `T` (a struct of strings, numbers, integers,
    /// booleans and enums; anything else is refused with [`AskErrorKind::Unsupported`]
    /// before anything is sent), and the accepted content decodes into `T`.
    ///
    /// ```no_run
    /// # async fn handler(ctx: mcp_runtime::Context) -> Result<String, mcp_runtime::AskError> {
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Contact {
    ///     /// Your name
    ///     name: String,
    ///     newsletter: bool,
    /// }
    /// use mcp_runtime::model::Elicitation;
    /// Ok(match ctx.elicit::<Contact>("Who are you?").await? {
    ///     Elicitation::Accept(c) => format!("Hello, {}", c.name),
    ///     Elicitation::Decline | Elicitation::Cancel => "Maybe later".into(),
    /// })
    /// # }
    /// ```
    #[cfg(feature = "typed-tools")]
    pub async fn elicit<T>(&self, message: impl Into<String>) -> Result<Elicitation<T>, AskError>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema,
    {
        let schema = crate::server::elicit_schema::elicitation_schema::<T>()?;
        let answer = self.elicit_with_schema(message, schema).await?;
        match answer {
            Elicitation::Accept(content) => serde_json::from_value(Value::Object(content))
                .map(Elicitation::Accept)
                .map_err(|e| {
                    AskError::new(
                        AskErrorKind::InvalidAnswer,
                        RpcError::internal(format!("the user's answer does not decode: {e}")),
                    )
                }),
            Elicitation::Decline => Ok(Elicitation::Decline),
            Elicitation::Cancel => Ok(Elicitation::Cancel),
        }
    }

    /// Asks the user for input described by a requested schema written by hand (a flat
    /// object of primitive properties, as the spec defines it); the accepted content
    /// comes back as a JSON object.
    pub async fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Result<Elicitation<Map<String, Value>>, AskError> {
        let answer = self
            .ask_one(Ask::Elicit {
                message: message.into(),
                requested_schema,
            })
            .await?;
        Ok(elicitation_outcome(&answer))
    }

    /// Sends the user to a URL (`elicitation/create`, URL mode; 2025-11-25+; the client
    /// must have declared `elicitation.url`): `Accept(())` means the user agreed to open
    /// it (the outcome arrives out of band).
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<Elicitation<()>, AskError> {
        let answer = self
            .ask_one(Ask::ElicitUrl {
                message: message.into(),
                url: url.into(),
                elicitation_id: elicitation_id.into(),
            })
            .await?;
        Ok(match elicitation_outcome(&answer) {
            Elicitation::Accept(_) => Elicitation::Accept(()),
            Elicitation::Decline => Elicitation::Decline,
            Elicitation::Cancel => Elicitation::Cancel,
        })
    }

    /// Tells the client that a URL-mode elicitation finished
    /// (`notifications/elicitation/complete`). Only 2025-11-25 has this notification; in
    /// other revisions nothing is sent.
    pub async fn elicitation_complete(&self, elicitation_id: &str) {
        if self.peer.version.features().elicitation_complete {
            self.send(wire::notification(
                "notifications/elicitation/complete",
                Some(serde_json::json!({"elicitationId": elicitation_id})),
            ))
            .await;
        }
    }

    /// Asks the client's model (`sampling/createMessage`).
    ///
    /// ```no_run
    /// # async fn handler(ctx: mcp_runtime::Context) -> Result<String, mcp_runtime::AskError> {
    /// use mcp_runtime::model::SamplingRequest;
    /// let answer = ctx
    ///     .create_message(SamplingRequest::new(200).user("Summarise: …"))
    ///     .await?;
    /// Ok(answer.text())
    /// # }
    /// ```
    pub async fn create_message(
        &self,
        request: SamplingRequest,
    ) -> Result<SampledMessage, AskError> {
        let answer = self
            .ask_one(Ask::CreateMessage(request.to_params()))
            .await?;
        Ok(SampledMessage::from_result(&answer))
    }

    /// Asks the client for its roots (`roots/list`).
    pub async fn list_roots(&self) -> Result<Vec<Root>, AskError> {
        let answer = self.ask_one(Ask::ListRoots).await?;
        Ok(Root::from_result(&answer))
    }

    /// Asks several things at once, as JSON (one round trip in 2026-07-28; concurrent
    /// requests before): each answer is the client's result for its ask, already checked
    /// against the revision's type. Each ask may carry a key naming it in
    /// `inputRequests` (default `input-N`).
    pub async fn ask(&self, asks: Vec<(Option<String>, Ask)>) -> Result<Vec<Value>, AskError> {
        #[cfg(feature = "tasks")]
        if let Some(task) = self.started_task() {
            if self.peer.version.era() == crate::Era::Modern {
                let asker = Asker::Task(Arc::clone(task) as Arc<dyn asks::TaskInput>);
                return asks::ask_all(&self.peer, &asker, asks).await;
            }
            // 2025-11-25: server requests on the session, related to the task, the task
            // `input_required` while they wait.
            let asker = match &self.asker {
                Asker::Legacy {
                    pending, timeout, ..
                } => Asker::Legacy {
                    pending: Arc::clone(pending),
                    timeout: *timeout,
                    related_task: task.id().map(Into::into),
                },
                other => other.clone(),
            };
            task.set_status(Some(TaskStatus::InputRequired), None).await;
            let answers = asks::ask_all(&self.peer, &asker, asks).await;
            task.set_status(Some(TaskStatus::Working), None).await;
            return answers;
        }
        asks::ask_all(&self.peer, &self.asker, asks).await
    }

    /// 2026-07-28: the keys of the answers this request carries (a retry's
    /// `inputResponses` and those of earlier rounds in its `requestState`); empty in
    /// other revisions and on a first round. A handler that keeps work running across
    /// rounds — asking under keys of its own with [`Context::ask`] — finds it again by
    /// these keys, instead of starting it over.
    pub fn answered_keys(&self) -> Vec<String> {
        match &self.asker {
            Asker::Modern(round) => round.answered_keys(),
            _ => Vec::new(),
        }
    }

    async fn ask_one(&self, ask: Ask) -> Result<Value, AskError> {
        let mut answers = self.ask(vec![(None, ask)]).await?;
        answers.pop().ok_or_else(|| {
            AskError::new(AskErrorKind::InvalidAnswer, RpcError::internal("no answer"))
        })
    }

    pub(crate) fn asker(&self) -> &Asker {
        &self.asker
    }

    /// Announces a change to every client that can hear it (list changes, a resource
    /// update), as [`Server::notify`](crate::Server::notify) does.
    pub fn announce(&self, event: ServerEvent) {
        // No receiver simply means no client is connected.
        let _ = self.events.send(event);
    }

    /// The revision this request is served at.
    pub fn version(&self) -> ProtocolVersion {
        self.peer.version
    }

    /// The client's declared capabilities (an object).
    pub fn client_capabilities(&self) -> &Value {
        &self.peer.client_capabilities
    }

    /// Whether the client declared a capability (e.g. `"sampling"`).
    pub fn client_supports(&self, capability: &str) -> bool {
        self.peer.client_supports(capability)
    }

    /// Reports progress, if the request asked for it (it carried a `progressToken`).
    /// Numbers are written in their shortest form (`50`, not `50.0`).
    ///
    /// In a task, the message also becomes the task's `statusMessage`; a 2026-07-28
    /// task sends no progress notification (the extension has none), a 2025-11-25 task
    /// sends it on the session (the request's token stays valid for the task's life).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        #[cfg(feature = "tasks")]
        if let (Some(task), Some(m)) = (self.started_task(), message) {
            task.set_status(None, Some(m.to_owned())).await;
        }
        if self.silent_task() {
            return;
        }
        let Some(token) = &self.progress_token else {
            return;
        };
        if let Ok(params) = shape::progress(self.peer.version, token, progress, total, message) {
            self.send(wire::notification("notifications/progress", Some(params)))
                .await;
        }
    }

    /// Sends a log message if the session's or request's level lets it through.
    pub async fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        if !self.log.allows(level) || self.silent_task() {
            return;
        }
        if let Ok(params) = shape::log_message(self.peer.version, level, logger, data) {
            self.send(wire::notification("notifications/message", Some(params)))
                .await;
        }
    }

    /// Whether the client cancelled this request (its answer will not be sent).
    pub fn is_cancelled(&self) -> bool {
        self.peer.cancel.is_cancelled()
    }

    /// Resolves when the client cancels this request.
    pub async fn cancelled(&self) {
        self.peer.cancel.cancelled().await;
    }

    /// Sends a notification on this request's channel (crate-internal: handlers use the
    /// typed helpers above).
    pub(crate) async fn notify(&self, method: &str, params: Value) {
        self.peer.notify(method, params).await;
    }

    async fn send(&self, message: wire::Outgoing) {
        self.peer.send(message).await;
    }
}

/// Reads an `ElicitResult` (already checked against the revision's type).
fn elicitation_outcome(answer: &Value) -> Elicitation<Map<String, Value>> {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Elicitation::Accept(
            answer
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        ),
        Some("decline") => Elicitation::Decline,
        _ => Elicitation::Cancel,
    }
}
