//! Routing of an admitted client request to what answers it: the lists and `server/discover` at once, everything else through the author's handler; the result shaped for the request's revision.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_generated::support::{FromParams, FromValue};
use serde_json::{Map, Value};

use super::handler::CompletionRequest;
use super::registry::{decode_cursor, read_lock, Audience, ListKind};
use super::{resource_not_found, Server};
use crate::auth::Principal;
use crate::model::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use crate::protocol::asks::{binding_parts, Asker};
use crate::protocol::method::McpMethod;
use crate::protocol::shape::{self, by_revision};
use crate::protocol::version::ProtocolVersion;
use crate::server::context::Context;
#[cfg(feature = "tasks")]
use crate::server::tasks::call::{TaskMode, TaskRun};

/// Without the feature `tasks` every call runs directly (the one mode there is).
#[cfg(not(feature = "tasks"))]
#[derive(Clone, Copy)]
enum TaskMode {
    Direct,
}
use crate::wire::{self, Encoded, ErrorCode, RequestMeta, RpcError};

/// Decodes `params` into the revision's generated params type of method `M`: params that
/// do not decode are `-32602`, with the decoder's message.
pub(super) fn check_params<M: mcp_generated::Method>(params: Option<&Value>) -> Result<(), RpcError>
where
    M::Params: FromValue,
{
    match params {
        None if M::PARAMS_REQUIRED => Err(RpcError::invalid_params(format!(
            "{}: params are required",
            M::METHOD
        ))),
        None => Ok(()),
        Some(p) => <M::Params as FromValue>::from_value(p.clone())
            .map(|_| ())
            .map_err(|e| RpcError::invalid_params(format!("{}: {e}", M::METHOD))),
    }
}

/// Decodes `params` into the generated params type of method `M`, a revision's or an
/// extension's (required params absent, or params that do not decode, are `-32602`).
/// The params are taken apart by `FromValue`, not copied: the caller keeps what it needs
/// from the typed value.
pub(super) fn decode_params<M: mcp_generated::Method>(
    params: Option<Value>,
) -> Result<M::Params, RpcError>
where
    M::Params: FromValue,
{
    let p = params
        .ok_or_else(|| RpcError::invalid_params(format!("{}: params are required", M::METHOD)))?;
    <M::Params as FromValue>::from_value(p)
        .map_err(|e| RpcError::invalid_params(format!("{}: {e}", M::METHOD)))
}

/// [`check_params`] of params whose `_meta` (if any) was taken out as `meta`: checked as
/// sent, `_meta` put back.
fn check_params_sent<M: mcp_generated::Method>(
    params: Option<&Value>,
    meta: Option<&RequestMeta>,
) -> Result<(), RpcError>
where
    M::Params: FromValue,
{
    match meta {
        None => check_params::<M>(params),
        Some(meta) => {
            check_params::<M>(wire::params_with_meta(params.cloned(), Some(meta.clone())).as_ref())
        }
    }
}

/// [`decode_params`] of a request's params whose `_meta` was taken out as `meta`, in a
/// revision whose params type requires `_meta` (the generated flag
/// `params_meta_required`: 2026-07-28 and any revision like it), then `parts` of them:
/// what the caller needs, the typed `_meta` handed back to the request's `_meta` given
/// (if any: [`RequestMeta::give_back`]). `_meta` is decoded once per shared `_meta` value
/// and lent to the params ([`RequestMeta::lend`]), not copied; a `_meta` that does not
/// decode is decoded again with the params as sent, for the same error as ever.
fn decode_modern_params<M: mcp_generated::Method, R>(
    params: Option<Value>,
    meta: Option<RequestMeta>,
    parts: impl FnOnce(M::Params, Option<&RequestMeta>) -> R,
) -> Result<R, RpcError>
where
    M::Params: FromParams,
    <M::Params as FromParams>::Meta: FromValue + Send + Sync + 'static,
{
    let lent = match (&params, &meta) {
        (Some(_), Some(meta)) => meta.lend::<<M::Params as FromParams>::Meta>(),
        _ => None,
    };
    let decoded = match (params, lent) {
        (Some(p), Some(lent)) => <M::Params as FromParams>::from_params(p, Some(lent))
            .map_err(|e| RpcError::invalid_params(format!("{}: {e}", M::METHOD)))?,
        (params, _) => decode_params::<M>(wire::params_with_meta(params, meta.clone()))?,
    };
    Ok(parts(decoded, meta.as_ref()))
}

/// Hands a lent `_meta` back (see [`decode_modern_params`]).
fn give_back<T: Send + Sync + 'static>(lender: Option<&RequestMeta>, meta: T) {
    if let Some(lender) = lender {
        lender.give_back(meta);
    }
}

fn object_arg(params: Option<&Value>, key: &str) -> Map<String, Value> {
    params
        .and_then(|p| p.get(key))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn string_arg(params: Option<&Value>, key: &str) -> Result<String, RpcError> {
    params
        .and_then(|p| p.get(key))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| RpcError::invalid_params(format!("params.{key} must be a string")))
}

impl Server {
    /// Serves one client request that the session layer has already admitted (era,
    /// lifecycle, method exists in revision `v` and is sent by clients).
    /// Answers at once what needs no handler — `ping`, the lists (pages shaped once per
    /// revision and cached) and `server/discover` — so the session sends it without a
    /// task of its own; `None` for everything else.
    /// `meta`: the request's `_meta` when it was taken out of `params` (see
    /// `wire::RequestMeta`). `principal`: the caller, whose token's scopes may hide tools.
    /// With an author's predicate on what callers see
    /// ([`ServerBuilder::visible_if`](crate::ServerBuilder::visible_if)) the lists need
    /// the request's `Context`, so they are left to [`Server::handle`].
    pub(crate) fn answer_now(
        &self,
        v: ProtocolVersion,
        method: McpMethod,
        params: Option<&Value>,
        meta: Option<&RequestMeta>,
        principal: Option<&Principal>,
    ) -> Option<Result<Encoded, RpcError>> {
        let audience = Audience {
            principal,
            ..Audience::default()
        };
        match method {
            McpMethod::Ping | McpMethod::Discover => {
                Some(self.answer_sync(v, method, params, meta, &audience))
            }
            McpMethod::ListTools
            | McpMethod::ListResources
            | McpMethod::ListResourceTemplates
            | McpMethod::ListPrompts
                if self.inner.visible.is_none() =>
            {
                Some(self.answer_sync(v, method, params, meta, &audience))
            }
            _ => None,
        }
    }

    /// Who `ctx`'s request is from, for what it may see.
    fn audience<'a>(&'a self, ctx: &'a Context) -> Audience<'a> {
        Audience {
            principal: ctx.principal(),
            ctx: Some(ctx),
            predicate: self.inner.visible.as_deref(),
        }
    }

    fn answer_sync(
        &self,
        v: ProtocolVersion,
        method: McpMethod,
        params: Option<&Value>,
        meta: Option<&RequestMeta>,
        audience: &Audience<'_>,
    ) -> Result<Encoded, RpcError> {
        let hints = &self.inner.cache_hints;
        let info = &self.inner.info;
        match method {
            McpMethod::Ping => Ok(shape::empty(v, info)),
            McpMethod::ListTools => {
                self.require("tools", method)?;
                by_revision!(v, |m| check_params_sent::<m::methods::ListTools>(
                    params, meta
                ))?;
                let offset = decode_cursor(params)?;
                read_lock(&self.inner.tools).page(
                    v,
                    offset,
                    self.page_size(),
                    audience,
                    |items, next, per_caller| {
                        let items: Vec<&Tool> = items.iter().map(|t| &t.tool).collect();
                        let hint = hints.list(ListKind::Tools, per_caller);
                        shape::list_tools(v, info, &items, next, hint)
                    },
                )
            }
            McpMethod::ListResources => {
                self.require("resources", method)?;
                by_revision!(v, |m| check_params_sent::<m::methods::ListResources>(
                    params, meta
                ))?;
                let offset = decode_cursor(params)?;
                read_lock(&self.inner.resources).page(
                    v,
                    offset,
                    self.page_size(),
                    audience,
                    |items, next, per_caller| {
                        let items: Vec<&Resource> = items.iter().map(|r| &r.resource).collect();
                        let hint = hints.list(ListKind::Resources, per_caller);
                        shape::list_resources(v, info, &items, next, hint)
                    },
                )
            }
            McpMethod::ListResourceTemplates => {
                self.require("resources", method)?;
                by_revision!(
                    v,
                    |m| check_params_sent::<m::methods::ListResourceTemplates>(params, meta)
                )?;
                let offset = decode_cursor(params)?;
                read_lock(&self.inner.templates).page(
                    v,
                    offset,
                    self.page_size(),
                    audience,
                    |items, next, per_caller| {
                        let items: Vec<&ResourceTemplate> =
                            items.iter().map(|t| &t.template).collect();
                        let hint = hints.list(ListKind::ResourceTemplates, per_caller);
                        shape::list_resource_templates(v, info, &items, next, hint)
                    },
                )
            }
            McpMethod::ListPrompts => {
                self.require("prompts", method)?;
                by_revision!(v, |m| check_params_sent::<m::methods::ListPrompts>(
                    params, meta
                ))?;
                let offset = decode_cursor(params)?;
                read_lock(&self.inner.prompts).page(
                    v,
                    offset,
                    self.page_size(),
                    audience,
                    |items, next, per_caller| {
                        let items: Vec<&Prompt> = items.iter().map(|p| &p.prompt).collect();
                        let hint = hints.list(ListKind::Prompts, per_caller);
                        shape::list_prompts(v, info, &items, next, hint)
                    },
                )
            }
            McpMethod::Discover => self.handshake(v, || {
                let versions: Vec<&str> = self
                    .inner
                    .versions
                    .iter()
                    .rev()
                    .map(ProtocolVersion::as_str)
                    .collect();
                shape::discover(
                    v,
                    info,
                    &self.neutral_capabilities(),
                    &versions,
                    self.inner.instructions.as_deref(),
                )
            }),
            _ => Err(RpcError::method_not_found(method.name())),
        }
    }

    pub(crate) async fn handle(
        &self,
        v: ProtocolVersion,
        method: McpMethod,
        owned_params: Option<Value>,
        meta: Option<RequestMeta>,
        ctx: Context,
    ) -> Result<Encoded, RpcError> {
        if matches!(
            method,
            McpMethod::Ping
                | McpMethod::Discover
                | McpMethod::ListTools
                | McpMethod::ListResources
                | McpMethod::ListResourceTemplates
                | McpMethod::ListPrompts
        ) {
            let audience = self.audience(&ctx);
            return self.answer_sync(v, method, owned_params.as_ref(), meta.as_ref(), &audience);
        }
        // `tools/call` and `resources/read` decode a 2026-07-28 request's params with the
        // `_meta` taken out at parse time (see `decode_modern_params`); every other method
        // reads its params as sent.
        let (owned_params, meta) = match method {
            McpMethod::CallTool | McpMethod::ReadResource => (owned_params, meta),
            _ => (wire::params_with_meta(owned_params, meta), None),
        };
        let params = owned_params.as_ref();
        let info = &self.inner.info;
        match method {
            McpMethod::CallTool => {
                self.require("tools", method)?;
                // 2025-11-25's task flag, read before the params are taken apart.
                let task_param = params.and_then(|p| p.get("task")).cloned();
                // Decoded once into the revision's params type, from the params
                // themselves; name and arguments are moved out of it.
                let (name, arguments) = by_revision!(
                    v,
                    where params_meta_required,
                    |m| decode_modern_params::<m::methods::CallTool, _>(owned_params, meta, |p, lender| {
                        give_back(lender, p.meta);
                        (p.name, p.arguments)
                    })?,
                    else {
                        let owned_params = wire::params_with_meta(owned_params, meta);
                        by_revision!(v, |m| {
                            let p = decode_params::<m::methods::CallTool>(owned_params)?;
                            (p.name, p.arguments)
                        })
                    }
                );
                #[cfg(feature = "tasks")]
                let (handler, by_ref, mode) = {
                    let audience = self.audience(&ctx);
                    let (handler, by_ref, support, deferred) = read_lock(&self.inner.tools)
                        .iter()
                        .find(|t| t.tool.name == name && audience.serves(*t))
                        .map(|t| {
                            (
                                Arc::clone(&t.handler),
                                t.by_ref.clone(),
                                t.tool.task_support,
                                t.tool.task_started_by_handler,
                            )
                        })
                        .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {name}")))?;
                    let mode =
                        self.task_mode(v, &name, support, deferred, &ctx, task_param.as_ref())?;
                    (handler, by_ref, mode)
                };
                #[cfg(not(feature = "tasks"))]
                let (handler, by_ref, mode) = {
                    let audience = self.audience(&ctx);
                    let (handler, by_ref) = read_lock(&self.inner.tools)
                        .iter()
                        .find(|t| t.tool.name == name && audience.serves(*t))
                        .map(|t| (Arc::clone(&t.handler), t.by_ref.clone()))
                        .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {name}")))?;
                    // What a server whose tools never run as tasks answers a 2025-11-25
                    // client asking for one (the same words as with the feature).
                    if v.features().tasks && task_param.is_some_and(|t| !t.is_null()) {
                        return Err(RpcError::new(
                            ErrorCode::METHOD_NOT_FOUND,
                            format!("Method not found: tool {name:?} does not run as a task (execution.taskSupport is forbidden)"),
                        ));
                    }
                    (handler, by_ref, TaskMode::Direct)
                };
                let round = ctx.asker().clone();
                // A modern call may end `input_required`, with a state bound to the tool
                // and the arguments as sent (absent ones are `null`, not `{}`): keep a copy
                // of what the handler consumes, unless the binding is known already (a
                // retry's state was verified against it).
                let keep = matches!(&round, Asker::Modern(r) if !r.is_bound());
                let mut kept_arguments = None;
                let result = match (mode, by_ref) {
                    // A handler that reads the arguments in place is given them so, and
                    // they are kept without a copy (absent ones read as `{}`, as below).
                    (TaskMode::Direct, Some(by_ref)) if keep => {
                        let sent = arguments.map_or(Value::Null, Value::Object);
                        let empty = Value::Object(Map::new());
                        let given = if sent.is_null() { &empty } else { &sent };
                        let result = by_ref(given, ctx).await;
                        kept_arguments = Some(sent);
                        result
                    }
                    (TaskMode::Direct, _) => {
                        if keep {
                            kept_arguments =
                                Some(arguments.clone().map_or(Value::Null, Value::Object));
                        }
                        handler(arguments.unwrap_or_default(), ctx).await
                    }
                    #[cfg(feature = "tasks")]
                    (mode, _) => {
                        if keep {
                            kept_arguments =
                                Some(arguments.clone().map_or(Value::Null, Value::Object));
                        }
                        match self
                            .run_task(
                                v,
                                mode,
                                handler,
                                arguments.unwrap_or_default(),
                                ctx,
                                task_param.as_ref(),
                            )
                            .await?
                        {
                            TaskRun::Created(answer) => return Ok(answer),
                            TaskRun::Finished(result) => result,
                        }
                    }
                };
                let arguments = kept_arguments.unwrap_or(Value::Null);
                if let Some(answer) =
                    input_required(v, info, &round, &Value::String(name), &arguments)?
                {
                    return Ok(answer);
                }
                let result = result?;
                if result.is_error {
                    crate::observe::record_tool_error(&tracing::Span::current());
                }
                shape::tool_result(v, info, result)
            }
            McpMethod::ReadResource => {
                self.require("resources", method)?;
                let uri = by_revision!(
                    v,
                    where params_meta_required,
                    |m| decode_modern_params::<m::methods::ReadResource, _>(owned_params, meta, |p, lender| {
                        give_back(lender, p.meta);
                        p.uri
                    })?,
                    else {
                        let owned_params = wire::params_with_meta(owned_params, meta);
                        by_revision!(v, |m| {
                            decode_params::<m::methods::ReadResource>(owned_params)?.uri
                        })
                    }
                );
                // The resource's own hint is named by its URI, a template's resources' by
                // the template.
                let audience = self.audience(&ctx);
                let found = read_lock(&self.inner.resources)
                    .iter()
                    .find(|r| r.resource.uri == uri && audience.serves(*r))
                    .map(|r| (Arc::clone(&r.handler), BTreeMap::new(), None))
                    .or_else(|| {
                        read_lock(&self.inner.templates)
                            .iter()
                            .filter(|t| audience.serves(*t))
                            .find_map(|t| {
                                t.parsed.matches(&uri).map(|vars| {
                                    let template = t.template.uri_template.clone();
                                    (Arc::clone(&t.handler), vars, Some(template))
                                })
                            })
                    });
                let Some((handler, vars, template)) = found else {
                    return Err(resource_not_found(v, &uri));
                };
                let hints = &self.inner.cache_hints;
                let hint = hints
                    .per_resource
                    .get(&uri)
                    .or_else(|| template.and_then(|t| hints.per_resource.get(&t)))
                    .copied()
                    .unwrap_or(hints.read);
                let round = ctx.asker().clone();
                let contents = handler(uri.clone(), vars, ctx).await;
                let target = Value::String(uri.clone());
                if let Some(answer) = input_required(v, info, &round, &target, &Value::Null)? {
                    return Ok(answer);
                }
                let contents = contents?;
                if contents.is_empty() {
                    return Err(resource_not_found(v, &uri));
                }
                shape::read_resource(v, info, contents, hint)
            }
            McpMethod::GetPrompt => {
                self.require("prompts", method)?;
                by_revision!(v, |m| check_params::<m::methods::GetPrompt>(params))?;
                let name = string_arg(params, "name")?;
                let audience = self.audience(&ctx);
                let (prompt, handler) = read_lock(&self.inner.prompts)
                    .iter()
                    .find(|p| p.prompt.name == name && audience.serves(*p))
                    .map(|p| (p.prompt.clone(), Arc::clone(&p.handler)))
                    .ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {name}")))?;
                let args = object_arg(params, "arguments");
                if let Some(missing) = prompt
                    .arguments
                    .iter()
                    .find(|a| a.required == Some(true) && !args.contains_key(&a.name))
                {
                    return Err(RpcError::invalid_params(format!(
                        "missing required argument `{}`",
                        missing.name
                    )));
                }
                let round = ctx.asker().clone();
                let result = handler(args, ctx).await;
                let (target, arguments) = binding_parts(method, params);
                if let Some(answer) = input_required(v, info, &round, target, arguments)? {
                    return Ok(answer);
                }
                shape::get_prompt(v, info, &result?)
            }
            McpMethod::Complete => {
                let Some(handler) = self.inner.completion.clone() else {
                    return Err(RpcError::method_not_found(method.name()));
                };
                by_revision!(v, |m| check_params::<m::methods::Complete>(params))?;
                let r = params.and_then(|p| p.get("ref"));
                let a = params.and_then(|p| p.get("argument"));
                let text = |v: Option<&Value>, k: &str| {
                    v.and_then(|v| v.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let request = CompletionRequest {
                    ref_type: text(r, "type"),
                    ref_name: r
                        .and_then(|r| r.get("name").or_else(|| r.get("uri")))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    argument: text(a, "name"),
                    value: text(a, "value"),
                    context: params
                        .and_then(|p| p.get("context"))
                        .and_then(|c| c.get("arguments"))
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default(),
                };
                let completion = handler(request, ctx).await?;
                shape::complete(v, info, &completion)
            }
            // Boxed: a listen's state is large and every request's future would carry it.
            McpMethod::SubscriptionsListen => Box::pin(self.listen(v, params, ctx)).await,
            // Tasks (2025-11-25): served when some tool runs as a task, else -32601.
            #[cfg(feature = "tasks")]
            McpMethod::GetTask
            | McpMethod::GetTaskPayload
            | McpMethod::ListTasks
            | McpMethod::CancelTask => {
                let owner = ctx.task_owner();
                self.legacy_task_request(v, method, params, &owner, &ctx.cancellation())
                    .await
            }
            _ => Err(RpcError::method_not_found(method.name())),
        }
    }

    fn require(&self, capability: &str, method: McpMethod) -> Result<(), RpcError> {
        if self.declares(capability) {
            Ok(())
        } else {
            Err(RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method} (this server does not offer {capability})"),
            ))
        }
    }

    /// Runs `f` on a tool's input schema, by name (`None`: no such tool), without copying
    /// the schema.
    #[doc(hidden)]
    pub fn with_tool_input_schema<R>(&self, name: &str, f: impl FnOnce(&Value) -> R) -> Option<R> {
        read_lock(&self.inner.tools)
            .iter()
            .find(|t| t.tool.name == name)
            .map(|t| f(&t.tool.input_schema))
    }

    /// Whether `uri` names a resource this server has and has not disabled (direct or by
    /// template).
    pub(crate) fn has_resource(&self, uri: &str) -> bool {
        read_lock(&self.inner.resources)
            .iter()
            .any(|r| r.enabled && r.resource.uri == uri)
            || read_lock(&self.inner.templates)
                .iter()
                .any(|t| t.enabled && t.parsed.matches(uri).is_some())
    }
}

/// A modern handler that asked for something unanswered is answered `input_required`,
/// whatever it returned (even if it turned the ask's error into a result of its own).
/// `target` and `arguments` are what the request's state is bound to.
fn input_required(
    v: ProtocolVersion,
    info: &Implementation,
    asker: &Asker,
    target: &Value,
    arguments: &Value,
) -> Result<Option<Encoded>, RpcError> {
    match asker {
        Asker::Modern(round) => match round.input_required(target, arguments) {
            Some((requests, state)) => shape::input_required(v, info, requests, state).map(Some),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::CancellationToken;
    use crate::protocol::logging::LogFilter;
    use crate::protocol::peer::Peer;

    /// The future of every request holds the state of the largest arm of
    /// [`Server::handle`], and it is moved into its box for each request: once a change
    /// grew the `subscriptions/listen` arm's state, every call in both eras paid ~9k
    /// instructions more for the copies (d20140f boxed that arm). This holds the size
    /// where it is (2,816 bytes; 10,584 with that arm unboxed), with a margin: an arm that
    /// needs more state belongs in a box.
    #[test]
    fn a_request_future_stays_small() {
        let server = Server::builder(Implementation::new("t", "1")).build();
        let (out, _rx) = tokio::sync::mpsc::channel(1);
        for v in ProtocolVersion::ALL {
            let peer = Peer {
                version: v,
                client_capabilities: Arc::new(Value::Null),
                out: out.clone(),
                cancel: CancellationToken::new(),
            };
            let ctx = Context::new(
                peer,
                None,
                LogFilter::Off,
                Asker::None,
                server.inner.events.clone(),
            );
            let future = server.handle(v, McpMethod::Ping, None, None, ctx);
            let size = std::mem::size_of_val(&future);
            println!("{v}: the request future is {size} bytes");
            assert!(size <= 4096, "{v}: the request future is {size} bytes");
        }
    }
}
