//! The builder an author writes a server with: identity, limits, revisions, and the handlers of tools, resources, templates, prompts and completion.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};

#[cfg(feature = "typed-tools")]
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use super::handler::{
    box_tool, CompleteFn, CompletionRequest, PromptFn, ResourceFn, ResourceInterestFn,
    RootsChangedFn,
};
use super::handler_output::{IntoPromptResult, IntoResourceContents};
use super::registry::{
    ListKind, Listed, Listing, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry, VisibleFn,
};
use super::tool_output::IntoToolResult;
#[cfg(feature = "typed-tools")]
use super::tool_output::ToolError;
use super::{Inner, Limits, Server};
#[cfg(feature = "typed-tools")]
use crate::model::ToolResult;
use crate::model::{Completion, Implementation, Prompt, Resource, ResourceTemplate, Tool};
use crate::protocol::shape::CacheHint;
use crate::protocol::version::VersionSet;
use crate::server::context::Context;
use crate::server::uri_template::UriTemplate;
use crate::wire::RpcError;

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    versions: VersionSet,
    limits: Limits,
    tools: Vec<ToolEntry>,
    resources: Vec<ResourceEntry>,
    templates: Vec<TemplateEntry>,
    prompts: Vec<PromptEntry>,
    completion: Option<Arc<CompleteFn>>,
    roots_changed: Option<Arc<RootsChangedFn>>,
    resource_interest: Option<Arc<ResourceInterestFn>>,
    state_keys: Option<Arc<crate::protocol::asks::StateKeys>>,
    visible: Option<Arc<VisibleFn>>,
    cache_hints: super::CacheHints,
    #[cfg(feature = "tasks")]
    task_options: Option<super::tasks::TaskOptions>,
    #[cfg(feature = "tasks")]
    task_store: Option<Arc<dyn super::tasks::TaskStore>>,
    middleware: Vec<Arc<dyn super::middleware::Middleware>>,
    extensions: BTreeMap<String, Value>,
    custom_methods: HashMap<&'static str, super::extensions::CustomMethod>,
}

impl Server {
    /// Starts building a server with this identity.
    pub fn builder(info: Implementation) -> ServerBuilder {
        ServerBuilder {
            info,
            instructions: None,
            versions: VersionSet::ALL,
            limits: Limits::default(),
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            completion: None,
            roots_changed: None,
            resource_interest: None,
            state_keys: None,
            visible: None,
            cache_hints: super::CacheHints::default(),
            #[cfg(feature = "tasks")]
            task_options: None,
            #[cfg(feature = "tasks")]
            task_store: None,
            middleware: Vec::new(),
            extensions: BTreeMap::new(),
            custom_methods: HashMap::new(),
        }
    }
}

/// The JSON Schema of `T`, without the `title` schemars derives from the type's name (the
/// tool's name and description say it).
#[cfg(feature = "typed-tools")]
fn schema_of<T: schemars::JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T))
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    if let Value::Object(obj) = &mut schema {
        obj.remove("title");
    }
    schema
}

impl ServerBuilder {
    /// Declares extension `id` (e.g. `io.modelcontextprotocol/ui`) with its settings (an
    /// object; `{}` for none): announced as `capabilities.extensions[id]` in revisions
    /// that have `extensions` (2026-07-28) and as `capabilities.experimental[id]` in the
    /// older ones, whose capabilities have no other open place. Its custom methods are
    /// admitted while it is declared (see also [`Server::declare_extension`]).
    pub fn extension(mut self, id: impl Into<String>, settings: Value) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Serves `method`, a method outside the specification, for extension `extension`:
    /// admitted in every revision while the extension is declared, `-32601` otherwise.
    /// The params (without `_meta`, which [`Context::meta`] gives) decode into `P`
    /// (`-32602` naming the problem when they do not; absent params are `{}`); the
    /// result `R` must encode as a JSON object, to which 2026-07-28 adds what every
    /// result carries there (`resultType`, the server's identity in `_meta`).
    ///
    /// Panics if `method` is a method of the specification (of any revision): those are
    /// the runtime's (a programming error in the server, found at start-up).
    ///
    /// ```no_run
    /// use mcp_runtime::model::Implementation;
    /// use mcp_runtime::{RpcError, Server};
    /// use serde_json::{json, Value};
    ///
    /// let server = Server::builder(Implementation::new("notes", "1.0.0"))
    ///     .extension("com.example/notes", json!({"maxLength": 280}))
    ///     .custom_method("com.example/notes", "notes/count", |params: Value, _ctx| async move {
    ///         let words = params["text"].as_str().unwrap_or_default().split_whitespace().count();
    ///         Ok::<_, RpcError>(json!({"words": words}))
    ///     })
    ///     .build();
    /// ```
    pub fn custom_method<P, R, F, Fut>(
        mut self,
        extension: impl Into<String>,
        method: &'static str,
        handler: F,
    ) -> Self
    where
        P: serde::de::DeserializeOwned + Send + 'static,
        R: serde::Serialize + Send + 'static,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
    {
        #[allow(clippy::panic)] // documented: the author's bug, found at start-up
        if crate::protocol::method::McpMethod::from_name(method).is_some() {
            panic!("`{method}` is a method of the specification, not a custom method");
        }
        self.custom_methods.insert(
            method,
            super::extensions::CustomMethod {
                extension: extension.into(),
                handler: super::extensions::box_custom(method, handler),
            },
        );
        self
    }

    /// Instructions for the model, sent on `initialize` and `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// The revisions to accept (default: all). A revision left out can never be selected.
    pub fn versions(mut self, versions: VersionSet) -> Self {
        self.versions = versions;
        self
    }

    /// Limits (message size, page size, queue length).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The secret that signs the 2026-07-28 `requestState` (HMAC-SHA256), and the one it
    /// replaces while a rotation is under way: states are signed with `current` and
    /// verified with `current`, then `previous`. Replicas of one server that share these
    /// accept each other's states, so an `input_required` retry may reach any of them.
    /// Use at least 32 random bytes. To rotate: give every replica `(new, Some(old))`,
    /// then, once the longest retry window has passed, `(new, None)`.
    ///
    /// Default: a random key per process (a retry must come back to the same process).
    pub fn state_keys(mut self, current: impl AsRef<[u8]>, previous: Option<&[u8]>) -> Self {
        self.state_keys = Some(Arc::new(crate::protocol::asks::StateKeys::new(
            current.as_ref(),
            previous,
        )));
        self
    }

    /// How tasks are kept: time to live, polling interval, tasks per client
    /// ([`TaskOptions`](crate::TaskOptions)). Tasks are offered (the capability declared,
    /// `tasks/*` served) when a tool has [`Tool::task_support`] or when this or
    /// [`ServerBuilder::task_store`] is called. Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_options(mut self, options: super::tasks::TaskOptions) -> Self {
        self.task_options = Some(options);
        self
    }

    /// Where task state lives (default: [`MemoryTaskStore`](crate::MemoryTaskStore), this
    /// process's memory). The handlers still run in the process that started them.
    #[cfg(feature = "tasks")]
    pub fn task_store(mut self, store: Arc<dyn super::tasks::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// A tool whose arguments arrive as a JSON object.
    pub fn tool<F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoToolResult,
    {
        self.tools.push(ToolEntry {
            tool,
            handler: box_tool(handler),
            by_ref: None,
            enabled: true,
        });
        self
    }

    /// A tool whose arguments decode into `A`; its input schema is derived from `A`
    /// with schemars. Arguments that do not decode are a `-32602` error. The handler
    /// returns anything [`IntoToolResult`] (text, a `ToolResult`, content, or a `Result`
    /// of them with a [`ToolError`](crate::ToolError)).
    #[cfg(feature = "typed-tools")]
    pub fn typed_tool<A, F, Fut>(self, mut tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoToolResult,
    {
        tool.input_schema = schema_of::<A>();
        let handler = Arc::new(handler);
        let by_value = Arc::clone(&handler);
        let mut builder = self.tool(tool, move |args, ctx| {
            let handler = Arc::clone(&by_value);
            async move {
                let typed: A =
                    serde_json::from_value(Value::Object(args)).map_err(invalid_arguments)?;
                handler(typed, ctx)
                    .await
                    .into_tool_result()
                    .map_err(ToolError::protocol)
            }
        });
        // The same, decoding from the arguments in place (when they are kept after the
        // call, see `ToolByRefFn`): the same `Deserialize`, from `&Value` instead of
        // `Value` — the same outcome and errors, the strings copied into `A` rather than
        // the whole arguments copied for the keeping.
        let by_ref = super::handler::box_tool_by_ref(move |args: &Value, ctx| {
            let typed = A::deserialize(args);
            let handler = Arc::clone(&handler);
            async move {
                let typed = typed.map_err(invalid_arguments)?;
                handler(typed, ctx)
                    .await
                    .into_tool_result()
                    .map_err(ToolError::protocol)
            }
        });
        if let Some(entry) = builder.tools.last_mut() {
            entry.by_ref = Some(by_ref);
        }
        builder
    }

    /// A tool with typed arguments and a typed structured output: `A`'s JSON Schema
    /// becomes the tool's `inputSchema` and `T`'s its `outputSchema`; the value the handler
    /// returns becomes `structuredContent` (2025-06-18 and later) and, as its JSON text, the
    /// text block every revision gets (the fallback the spec asks tools to provide).
    #[cfg(feature = "typed-tools")]
    pub fn structured_tool<A, T, F, Fut>(self, mut tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        T: serde::Serialize + schemars::JsonSchema + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ToolError>> + Send + 'static,
    {
        tool.output_schema = Some(schema_of::<T>());
        let handler = Arc::new(handler);
        self.typed_tool::<A, _, _>(tool, move |args, ctx| {
            let output = handler(args, ctx);
            async move {
                let value = serde_json::to_value(output.await?).map_err(|e| {
                    ToolError::protocol(RpcError::internal(format!(
                        "the tool's output does not serialize: {e}"
                    )))
                })?;
                Ok(ToolResult::text(value.to_string()).structured(value))
            }
        })
    }

    /// A resource with a fixed URI. The handler gets the URI and returns anything
    /// [`IntoResourceContents`]: text (with the resource's MIME type), contents, or a
    /// `Result` of them.
    pub fn resource<F, Fut>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoResourceContents,
    {
        self.resources.push(resource_entry(resource, handler));
        self
    }

    /// A family of resources named by an RFC 6570 template; the handler gets the URI and
    /// the template's variables. Panics if the template does not parse (a programming
    /// error in the server, found at start-up).
    pub fn resource_template<F, Fut>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoResourceContents,
    {
        #[allow(clippy::expect_used)] // documented: a bad template is the author's bug
        let entry = template_entry(template, handler)
            .expect("resource template does not parse as RFC 6570");
        self.templates.push(entry);
        self
    }

    /// A prompt; the handler gets the arguments as strings in a JSON object and returns
    /// anything [`IntoPromptResult`]: text (one user message), messages, a
    /// `PromptResult`, or a `Result` of them.
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoPromptResult,
    {
        self.prompts.push(prompt_entry(prompt, handler));
        self
    }

    /// A prompt whose arguments decode into `A` (a struct of `String` and
    /// `Option<String>` fields: prompt arguments are strings on the wire). The prompt's
    /// argument list is derived from `A` — each field an argument, its doc comment the
    /// description, required unless it is an `Option` — and replaces any the prompt
    /// declared. Arguments that do not decode are a `-32602` error.
    #[cfg(feature = "typed-tools")]
    pub fn typed_prompt<A, F, Fut>(self, mut prompt: Prompt, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoPromptResult,
    {
        prompt.arguments = prompt_arguments(&schema_of::<A>());
        let handler = Arc::new(handler);
        self.prompt(prompt, move |args, ctx| {
            let handler = Arc::clone(&handler);
            async move {
                let typed: A = serde_json::from_value(Value::Object(args))
                    .map_err(|e| RpcError::invalid_params(format!("invalid arguments: {e}")))?;
                handler(typed, ctx).await.into_prompt_result()
            }
        })
    }

    /// A resource template whose variables decode into `V` (a struct with a field per
    /// template variable; the values are the strings the URI held, so fields are
    /// `String`s, or types that deserialize from strings). A URI whose variables do not
    /// decode is answered as an unknown resource would be.
    #[cfg(feature = "typed-tools")]
    pub fn typed_resource_template<V, F, Fut>(self, template: ResourceTemplate, handler: F) -> Self
    where
        V: DeserializeOwned + Send + 'static,
        F: Fn(String, V, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoResourceContents,
    {
        let handler = Arc::new(handler);
        self.resource_template(template, move |uri, vars, ctx| {
            let handler = Arc::clone(&handler);
            async move {
                let object: Map<String, Value> = vars
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                match serde_json::from_value::<V>(Value::Object(object)) {
                    // Shaped here, with no MIME type: the outer handler already gave
                    // text the template's own.
                    Ok(typed) => handler(uri.clone(), typed, ctx)
                        .await
                        .into_contents(&uri, None),
                    // An empty answer is the runtime's "resource not found" (with its
                    // revision's code and `data.uri`).
                    Err(e) => {
                        tracing::debug!(%uri, error = %e, "template variables do not decode");
                        Ok(Vec::new())
                    }
                }
            }
        })
    }

    /// Argument completion for prompts and resource templates.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, RpcError>> + Send + 'static,
    {
        self.completion = Some(Arc::new(move |req, ctx| Box::pin(handler(req, ctx))));
        self
    }

    /// Runs `hook` when a client says its roots changed
    /// (`notifications/roots/list_changed`, legacy sessions whose client declared
    /// `roots.listChanged`). The hook's [`Context`] belongs to the session, not to a
    /// request: [`Context::list_roots`] asks the client for the new list on the session's
    /// own channel. 2026-07-28 has no sessions, so no such notification: a modern request
    /// that needs the roots asks for them.
    pub fn on_roots_list_changed<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.roots_changed = Some(Arc::new(move |ctx| Box::pin(hook(ctx))));
        self
    }

    /// Runs `hook(uri, true)` when a client first asks for updates of the resource `uri`
    /// (legacy `resources/subscribe`, a 2026-07-28 `subscriptions/listen` naming it in
    /// `resourceSubscriptions`) while no other does, and `hook(uri, false)` when the last
    /// one stops (`resources/unsubscribe`, the session's end, the listen's end). A server
    /// whose resources change on their own watches only what someone wants updates of, and
    /// announces them with [`Server::notify`]
    /// ([`ServerEvent::ResourceUpdated`](crate::ServerEvent::ResourceUpdated)). The hook
    /// runs where the change happens and must not block: spawn what takes time. Counted per
    /// process: with replicas sharing sessions, each replica counts its own clients.
    pub fn on_resource_interest<F>(mut self, hook: F) -> Self
    where
        F: Fn(&str, bool) + Send + Sync + 'static,
    {
        self.resource_interest = Some(Arc::new(hook));
        self
    }

    /// Hides items from some callers: a tool, prompt, resource or template for which
    /// `visible(item, ctx)` is `false` is not listed for the request `ctx` describes
    /// ([`Context::principal`], [`Context::version`], [`Context::session`]), and is served
    /// as if it did not exist (`-32602` for a tool or prompt, "resource not found" for a
    /// resource). Called on every list and on every call, read and get: keep it cheap.
    /// When what it decides changes, announce it ([`Server::notify`] with
    /// [`ServerEvent::ToolsChanged`](crate::ServerEvent::ToolsChanged) …), as the
    /// revision allows.
    ///
    /// Lists that may differ per caller (this predicate, or a caller with a token) are
    /// marked `cacheScope: private` in 2026-07-28, and are never served from a page made
    /// for what another caller sees. Tools whose per-tool scopes the caller's token lacks
    /// are hidden without a predicate (see `mcp-runtime-http`'s `tool_scopes`).
    pub fn visible_if<F>(mut self, visible: F) -> Self
    where
        F: Fn(Listing<'_>, &Context) -> bool + Send + Sync + 'static,
    {
        self.visible = Some(Arc::new(visible));
        self
    }

    /// The 2026-07-28 cache hint of a list (`ttlMs`, `cacheScope` on `tools/list` …).
    /// Default: `ttlMs: 0` (re-fetch whenever the list is needed), `public` — so a list is
    /// never served stale after [`Server::add_tool`] or a tool is disabled. A longer time
    /// suits a list that seldom changes, for clients that listen for its changes
    /// (`subscriptions/listen`). A list that may differ per caller is `private` whatever
    /// the hint says ([`ServerBuilder::visible_if`]).
    pub fn list_cache_hint(mut self, list: ListKind, hint: CacheHint) -> Self {
        match list {
            ListKind::Tools => self.cache_hints.tools = hint,
            ListKind::Prompts => self.cache_hints.prompts = hint,
            ListKind::Resources => self.cache_hints.resources = hint,
            ListKind::ResourceTemplates => self.cache_hints.templates = hint,
        }
        self
    }

    /// The 2026-07-28 cache hint of `resources/read` of a resource, named by its URI or,
    /// for the resources of a template, by the template (`uriTemplate` as registered).
    /// Default ([`ServerBuilder::read_cache_hint`]): `ttlMs: 0`, `private`.
    pub fn resource_cache_hint(
        mut self,
        uri_or_template: impl Into<String>,
        hint: CacheHint,
    ) -> Self {
        self.cache_hints
            .per_resource
            .insert(uri_or_template.into(), hint);
        self
    }

    /// The 2026-07-28 cache hint of every `resources/read` without one of its own
    /// ([`ServerBuilder::resource_cache_hint`]). Default `ttlMs: 0`, `private`: a live
    /// resource is never cached by default.
    pub fn read_cache_hint(mut self, hint: CacheHint) -> Self {
        self.cache_hints.read = hint;
        self
    }

    /// Wraps request handling in `middleware` (an audit log, a rate limit, a cache; see
    /// [`crate::middleware`]). Called more than once, the first one added is the
    /// outermost: it sees each request first and its outcome last.
    pub fn middleware(mut self, middleware: impl super::middleware::Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Builds the server.
    pub fn build(self) -> Server {
        let (events, _) = broadcast::channel(64);
        #[cfg(feature = "tasks")]
        let offers_tasks = self.task_options.is_some()
            || self.task_store.is_some()
            || self
                .tools
                .iter()
                .any(|t| t.tool.task_support.is_some_and(|s| s.allows_task()));
        #[cfg(feature = "tasks")]
        let tasks = Arc::new(super::tasks::Tasks::new(
            self.task_store,
            self.task_options.unwrap_or_default(),
        ));
        Server {
            inner: Arc::new(Inner {
                declare_tools: !self.tools.is_empty(),
                declare_resources: !self.resources.is_empty() || !self.templates.is_empty(),
                declare_prompts: !self.prompts.is_empty(),
                info: self.info,
                instructions: self.instructions,
                versions: self.versions,
                limits: self.limits,
                tools: RwLock::new(Listed::new(self.tools)),
                resources: RwLock::new(Listed::new(self.resources)),
                templates: RwLock::new(Listed::new(self.templates)),
                prompts: RwLock::new(Listed::new(self.prompts)),
                completion: self.completion,
                roots_changed: self.roots_changed,
                resource_interest: self.resource_interest,
                interest: Mutex::new(HashMap::new()),
                events,
                handshakes: Mutex::new(HashMap::new()),
                extensions: super::extensions::Extensions::new(
                    self.extensions,
                    self.custom_methods,
                ),
                state_keys: self
                    .state_keys
                    .unwrap_or_else(crate::protocol::asks::StateKeys::process_default),
                visible: self.visible,
                cache_hints: self.cache_hints,
                #[cfg(feature = "tasks")]
                offers_tasks,
                #[cfg(feature = "tasks")]
                tasks,
                middleware: self.middleware.into(),
            }),
        }
    }
}

/// The prompt arguments described by a derived JSON Schema: one per property, in
/// declaration order, required when the schema requires it.
#[cfg(feature = "typed-tools")]
fn prompt_arguments(schema: &Value) -> Vec<crate::model::PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let mut argument = crate::model::PromptArgument::new(name.clone());
            if let Some(d) = property.get("description").and_then(Value::as_str) {
                argument = argument.description(d);
            }
            if required.contains(&name.as_str()) {
                argument = argument.required();
            }
            argument
        })
        .collect()
}

/// A resource and its handler, boxed (the builder and [`Server::add_resource`](super::Server::add_resource)).
pub(super) fn resource_entry<F, Fut>(resource: Resource, handler: F) -> ResourceEntry
where
    F: Fn(String, Context) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoResourceContents,
{
    let mime_type: Option<Arc<str>> = resource.mime_type.as_deref().map(Arc::from);
    let handler: Arc<ResourceFn> = Arc::new(move |uri, _vars, ctx| {
        let mime_type = mime_type.clone();
        let running = handler(uri.clone(), ctx);
        Box::pin(async move { running.await.into_contents(&uri, mime_type.as_deref()) })
    });
    ResourceEntry {
        resource,
        handler,
        enabled: true,
    }
}

/// A resource template, parsed, and its handler, boxed; `None` if the template does not
/// parse as RFC 6570.
pub(super) fn template_entry<F, Fut>(
    template: ResourceTemplate,
    handler: F,
) -> Option<TemplateEntry>
where
    F: Fn(String, BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoResourceContents,
{
    let parsed = UriTemplate::parse(&template.uri_template)?;
    let mime_type: Option<Arc<str>> = template.mime_type.as_deref().map(Arc::from);
    let handler: Arc<ResourceFn> = Arc::new(move |uri, vars, ctx| {
        let mime_type = mime_type.clone();
        let running = handler(uri.clone(), vars, ctx);
        Box::pin(async move { running.await.into_contents(&uri, mime_type.as_deref()) })
    });
    Some(TemplateEntry {
        template,
        parsed,
        handler,
        enabled: true,
    })
}

/// A prompt and its handler, boxed.
pub(super) fn prompt_entry<F, Fut>(prompt: Prompt, handler: F) -> PromptEntry
where
    F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoPromptResult,
{
    let handler: Arc<PromptFn> = Arc::new(move |args, ctx| {
        let running = handler(args, ctx);
        Box::pin(async move { running.await.into_prompt_result() })
    });
    PromptEntry {
        prompt,
        handler,
        enabled: true,
    }
}

/// A typed tool's arguments that do not decode into its type: `-32602`, saying why.
#[cfg(feature = "typed-tools")]
fn invalid_arguments(e: serde_json::Error) -> ToolError {
    ToolError::protocol(RpcError::invalid_params(format!("invalid arguments: {e}")))
}
