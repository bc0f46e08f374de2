//! Admission of what arrives on a connection, in arrival order: the era of each request,
//! the legacy lifecycle (`initialize`, `notifications/initialized`), the revision's method
//! table, the requests answered without a handler (`logging/setLevel`, subscriptions), the
//! notifications a server acts on, and the context a handler gets.

use super::*;
use crate::server::context::TaskScope;

impl Connection {
    pub(super) fn notification(&self, method: &str, params: Option<&Value>) {
        match McpMethod::from_name(method) {
            Some(McpMethod::Initialized) => {
                let mut state = lock(&self.state);
                if let Lifecycle::Initialized(v) = state.lifecycle {
                    state.lifecycle = Lifecycle::Operating(v);
                }
            }
            Some(McpMethod::Cancelled) => {
                let id = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value);
                // The id is free at once: the spec lets a client reuse the id of a request
                // it cancelled, and the cancelled handler's answer is dropped anyway.
                if let Some(id) = id {
                    if let Some(token) = lock(&self.in_flight).remove(&id) {
                        token.cancel();
                    }
                }
            }
            Some(McpMethod::RootsListChanged) => self.roots_changed(),
            // Unknown notifications are ignored, as JSON-RPC requires of a receiver that
            // does not understand them.
            _ => tracing::debug!(method, "notification ignored"),
        }
    }

    /// Runs the author's roots hook, with a context of the session (its asks go out on
    /// the session's channel and end with it).
    pub(super) fn roots_changed(&self) {
        let Some(hook) = self.server.inner.roots_changed.clone() else {
            return;
        };
        let (caps, v) = {
            let state = lock(&self.state);
            match state.lifecycle.version() {
                Some(v) => (state.client_capabilities.clone(), v),
                None => return,
            }
        };
        let peer = Peer {
            version: v,
            client_capabilities: caps,
            out: self.out.clone(),
            cancel: self.closed.clone(),
        };
        let ctx = Context::new(
            peer,
            None,
            LogFilter::Session(self.log_level.clone()),
            Asker::Legacy {
                pending: Arc::clone(&self.pending),
                timeout: self.server.limits().ask_timeout,
                related_task: None,
            },
            self.server.inner.events.clone(),
        );
        tokio::spawn(hook(ctx));
    }

    /// The progress token in a request's `_meta` value.
    pub(super) fn progress_token(meta: Option<&Value>) -> Option<Value> {
        wire::member(meta, "progressToken")
            .filter(|t| t.is_string() || t.is_number())
            .cloned()
    }

    /// Admits a request. `meta` is the `_meta` of a request served statelessly (see
    /// `modern_meta`), taken out of `params`; any other request has its `_meta` in
    /// `params`. The request's origin and remote trace go to the context of work admitted
    /// here (a custom method's handler).
    pub(super) fn admit_request(
        &self,
        method: &str,
        params: Option<&Value>,
        request_meta: Option<&RequestMeta>,
        cancel: CancellationToken,
        reply: &mpsc::Sender<Outgoing>,
        (origin, remote_trace): (&RequestOrigin, Option<&TraceContext>),
    ) -> Admission {
        let principal = origin.principal.as_ref();
        let server = &self.server;
        if let Some(request_meta) = request_meta {
            let meta_value = Some(request_meta.value());
            // Negotiated once per shared `_meta` value (a client sends the same one on every
            // request), for this server's revisions.
            let served = server.versions();
            let negotiate =
                |meta: &Value| (served, version::negotiate_modern_meta(Some(meta), served));
            let negotiated = match request_meta.derived(negotiate) {
                (set, negotiated) if set == served => negotiated,
                _ => version::negotiate_modern_meta(meta_value, served),
            };
            let meta = match negotiated {
                Ok(meta) => meta,
                Err(e) => return Admission::Answer(Err(e)),
            };
            let v = meta.version;
            #[cfg(feature = "tasks")]
            if server.serves_extension_method(method) {
                let owner = principal.map_or_else(
                    || MODERN_OWNER.to_owned(),
                    |p| format!("principal:{}", p.identity()),
                );
                let name = crate::server::tasks::methods::EXTENSION_METHODS
                    .into_iter()
                    .find(|m| *m == method)
                    .unwrap_or("tasks");
                let server = server.clone();
                // The extension's methods read their params whole.
                let params = wire::params_with_meta(params.cloned(), Some(request_meta.clone()));
                let caps = meta.client_capabilities;
                return Admission::Work(
                    name,
                    Box::pin(async move {
                        server
                            .extension_task_request(v, name, params, &caps, &owner)
                            .await
                    }),
                );
            }
            if let Some((name, handler)) = server.inner.extensions.admitted(method) {
                let log = match meta.log_level.as_deref().and_then(LogLevel::parse) {
                    Some(level) => LogFilter::AtLeast(level),
                    None => LogFilter::Off,
                };
                let peer = Peer {
                    version: v,
                    client_capabilities: meta.client_capabilities,
                    out: reply.clone(),
                    cancel,
                };
                let ctx = Context::new(
                    peer,
                    Self::progress_token(meta_value),
                    log,
                    Asker::None,
                    server.inner.events.clone(),
                )
                .with_origin(origin)
                .with_remote_trace(remote_trace.cloned());
                let mut ctx = ctx;
                ctx.set_request_meta(Some(request_meta.clone()));
                return custom_work(server, v, name, handler, params, ctx);
            }
            let method = match method::admit(v, method) {
                Ok(m) => m,
                Err(e) => return Admission::Answer(Err(e)),
            };
            // Middleware sees the lists too: they are answered by the handling it wraps.
            if !server.has_middleware() {
                if let Some(answer) = server.answer_now(
                    v,
                    method,
                    params,
                    Some(request_meta),
                    principal.map(|p| &**p),
                ) {
                    return Admission::Answer(answer);
                }
            }
            let log = match meta.log_level.as_deref().and_then(LogLevel::parse) {
                Some(level) => LogFilter::AtLeast(level),
                None => LogFilter::Off,
            };
            let asker = if method::may_ask(method) {
                match Round::from_params(v, method, params, principal, &server.inner.state_keys) {
                    Ok(round) => Asker::Modern(Arc::new(round)),
                    Err(e) => return Admission::Answer(Err(e)),
                }
            } else {
                Asker::None
            };
            let peer = Peer {
                version: v,
                client_capabilities: meta.client_capabilities,
                out: reply.clone(),
                cancel,
            };
            let mut ctx = Context::new(
                peer,
                Self::progress_token(meta_value),
                log,
                asker,
                self.server.inner.events.clone(),
            )
            .with_task_scope(TaskScope {
                owner: MODERN_OWNER.to_owned(),
                session: None,
                ends_with: self.tasks_end_with_it.then(|| self.closed.clone()),
            });
            ctx.set_request_meta(Some(request_meta.clone()));
            // A listen never ends on its own: draining ends it (with its result), or
            // draining would wait the whole grace period for it.
            let ctx = if method == McpMethod::SubscriptionsListen {
                ctx.with_draining(self.draining.clone(), self.stopping.clone())
            } else {
                ctx
            };
            return Admission::Handler(v, method, ctx);
        }
        let lifecycle = lock(&self.state).lifecycle;
        let v = match (lifecycle, McpMethod::from_name(method)) {
            (Lifecycle::New, Some(McpMethod::Initialize)) => {
                if !server.has_middleware() {
                    return Admission::Answer(self.initialize(params));
                }
                // Middleware sees it at the revision it negotiates; one that cannot be
                // negotiated has none, and is refused here.
                return match version::negotiate_initialize(params, server.versions()) {
                    Ok(v) => Admission::Bookkeeping(v, McpMethod::Initialize),
                    Err(e) => Admission::Answer(Err(e)),
                };
            }
            (_, Some(McpMethod::Initialize)) => {
                return Admission::Answer(Err(RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: initialize was already received",
                )))
            }
            (Lifecycle::New, Some(McpMethod::Ping)) => {
                return Admission::Answer(Ok(Encoded::empty_object()))
            }
            (Lifecycle::New, _) => {
                return Admission::Answer(Err(RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("Invalid Request: `{method}` before initialize; send initialize first"),
                )));
            }
            (Lifecycle::Initialized(v) | Lifecycle::Operating(v), _) => v,
        };
        if let Some((name, handler)) = server.inner.extensions.admitted(method) {
            let peer = Peer {
                version: v,
                client_capabilities: lock(&self.state).client_capabilities.clone(),
                out: reply.clone(),
                cancel,
            };
            let ctx = Context::new(
                peer,
                Self::progress_token(wire::member(params, "_meta")),
                LogFilter::Session(self.log_level.clone()),
                Asker::None,
                server.inner.events.clone(),
            )
            .with_origin(origin)
            .with_remote_trace(remote_trace.cloned());
            let mut ctx = ctx;
            ctx.set_request_meta(
                wire::member(params, "_meta").map(|meta| RequestMeta::new(meta.clone(), 0)),
            );
            // The handler reads the params without their `_meta` (it has `ctx.meta()`).
            let params = params.cloned().map(|mut p| {
                if let Value::Object(p) = &mut p {
                    p.remove("_meta");
                }
                p
            });
            return custom_work(server, v, name, handler, params.as_ref(), ctx);
        }
        let method = match method::admit(v, method) {
            Ok(m) => m,
            Err(e) => return Admission::Answer(Err(e)),
        };
        if !server.has_middleware() {
            if let Some(answer) =
                server.answer_now(v, method, params, None, principal.map(|p| &**p))
            {
                return Admission::Answer(answer);
            }
        }
        match method {
            McpMethod::SetLevel | McpMethod::Subscribe | McpMethod::Unsubscribe
                if server.has_middleware() =>
            {
                Admission::Bookkeeping(v, method)
            }
            McpMethod::SetLevel => Admission::Answer(self.set_level(v, params)),
            McpMethod::Subscribe | McpMethod::Unsubscribe => {
                Admission::Answer(self.subscription(v, method, params))
            }
            _ => {
                let caps = lock(&self.state).client_capabilities.clone();
                let peer = Peer {
                    version: v,
                    client_capabilities: caps,
                    out: reply.clone(),
                    cancel,
                };
                let sent_meta = wire::member(params, "_meta");
                let mut ctx = Context::new(
                    peer,
                    Self::progress_token(sent_meta),
                    LogFilter::Session(self.log_level.clone()),
                    Asker::Legacy {
                        pending: Arc::clone(&self.pending),
                        timeout: self.server.limits().ask_timeout,
                        related_task: None,
                    },
                    self.server.inner.events.clone(),
                )
                .with_task_scope(TaskScope {
                    owner: lock(&self.task_owner).clone(),
                    session: Some(self.out.clone()),
                    ends_with: Some(self.closed.clone()),
                });
                // A legacy request's `_meta` stays in its params; the handler gets a copy
                // (only requests that sent one pay for it).
                if let Some(meta) = sent_meta {
                    ctx.set_request_meta(Some(RequestMeta::new(meta.clone(), 0)));
                }
                Admission::Handler(v, method, ctx)
            }
        }
    }

    /// Runs a request the connection answers itself (see [`Admission::Bookkeeping`]).
    pub(super) fn bookkeeping(
        &self,
        v: ProtocolVersion,
        method: McpMethod,
        params: Option<&Value>,
    ) -> Result<Encoded, RpcError> {
        match method {
            McpMethod::Initialize => self.initialize(params),
            McpMethod::SetLevel => self.set_level(v, params),
            _ => self.subscription(v, method, params),
        }
    }

    pub(super) fn set_level(
        &self,
        v: ProtocolVersion,
        params: Option<&Value>,
    ) -> Result<Encoded, RpcError> {
        let level = params
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str)
            .and_then(LogLevel::parse)
            .ok_or_else(|| {
                RpcError::invalid_params("logging/setLevel: params.level must be a log level")
            })?;
        self.log_level.set(level);
        Ok(shape::empty(v, self.server.info()))
    }

    pub(super) fn subscription(
        &self,
        v: ProtocolVersion,
        method: McpMethod,
        params: Option<&Value>,
    ) -> Result<Encoded, RpcError> {
        let server = &self.server;
        if !server.declares("resources") {
            return Err(RpcError::method_not_found(method.name()));
        }
        let uri = params
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .ok_or_else(|| {
                RpcError::invalid_params(format!("{method}: params.uri must be a string"))
            })?;
        if method == McpMethod::Subscribe {
            if !server.has_resource(uri) {
                return Err(crate::server::resource_not_found(v, uri));
            }
            let added = lock(&self.state).subscriptions.insert(uri.to_owned());
            if added {
                server.interest_added(uri);
            }
        } else {
            let removed = lock(&self.state).subscriptions.remove(uri);
            if removed {
                server.interest_removed(uri);
            }
        }
        Ok(shape::empty(v, server.info()))
    }

    pub(super) fn initialize(&self, params: Option<&Value>) -> Result<Encoded, RpcError> {
        let server = &self.server;
        let v = version::negotiate_initialize(params, server.versions())?;
        let result = server.handshake(v, || {
            shape::initialize(
                v,
                server.info(),
                &server.neutral_capabilities(),
                server.inner.instructions.as_deref(),
            )
        })?;
        let mut state = lock(&self.state);
        // Checked again here: with middleware, two `initialize` requests may both have
        // been admitted before either ran.
        if state.lifecycle != Lifecycle::New {
            return Err(RpcError::new(
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: initialize was already received",
            ));
        }
        state.client_capabilities = Arc::new(
            params
                .and_then(|p| p.get("capabilities"))
                .filter(|c| c.is_object())
                .cloned()
                .unwrap_or_else(|| json!({})),
        );
        state.lifecycle = Lifecycle::Initialized(v);
        Ok(result)
    }
}

/// A custom method's handler run as the request's work (see
/// [`ServerBuilder::custom_method`](crate::ServerBuilder::custom_method)), its result
/// shaped for revision `v`.
fn custom_work(
    server: &Server,
    v: ProtocolVersion,
    name: &'static str,
    handler: std::sync::Arc<crate::server::extensions::CustomFn>,
    params: Option<&Value>,
    ctx: Context,
) -> Admission {
    let server = server.clone();
    let params = params.cloned();
    Admission::Work(
        name,
        Box::pin(async move {
            let result = handler(params, ctx).await?;
            shape::custom_result(v, server.info(), result)
        }),
    )
}

/// How a request is answered: at once (lifecycle, negotiation, utilities), or by a
/// handler run as a task at revision `v`.
pub(super) enum Admission {
    Answer(Result<Encoded, RpcError>),
    Handler(ProtocolVersion, McpMethod, Context),
    /// A request the connection answers itself (`initialize`, `logging/setLevel`,
    /// `resources/subscribe|unsubscribe`) at revision `v`, while middleware is
    /// installed: run through it like a handler, so that the session changes only if the
    /// middleware passes it on (its refusal leaves the session as it was).
    Bookkeeping(ProtocolVersion, McpMethod),
    /// Work prepared here, run like a handler (the tasks extension's methods, custom
    /// methods).
    Work(
        &'static str,
        crate::combine::BoxFuture<'static, Result<Encoded, RpcError>>,
    ),
}

/// Who owns the tasks of unauthenticated 2026-07-28 requests: without a principal or a
/// session there is no one else to bind them to (the task id is the only key).
const MODERN_OWNER: &str = "anonymous";
