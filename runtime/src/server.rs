//! The server an author builds once: identity, tools, resources, prompts, completion;
//! and the revision-independent handling of each client request, answered through
//! `shape` in the revision the request is served at.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};

use base64::Engine;
use mcp_generated::support::FromValue;
#[cfg(feature = "typed-tools")]
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tokio::sync::broadcast;

use crate::asks::Asker;
use crate::cancel::{first, First};
use crate::context::Context;
use crate::jsonrpc::{Encoded, ErrorCode, RequestId, RpcError};
use crate::model::{
    Completion, Implementation, Prompt, PromptResult, Resource, ResourceContents, ResourceTemplate,
    Tool, ToolResult,
};
use crate::shape::{self, by_revision};
use crate::uri_template::UriTemplate;
use crate::version::{ProtocolVersion, VersionSet};

/// A boxed, sendable future: what handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

type ToolFn =
    dyn Fn(Map<String, Value>, Context) -> BoxFuture<Result<ToolResult, RpcError>> + Send + Sync;
type ResourceFn = dyn Fn(
        String,
        BTreeMap<String, String>,
        Context,
    ) -> BoxFuture<Result<Vec<ResourceContents>, RpcError>>
    + Send
    + Sync;
type PromptFn =
    dyn Fn(Map<String, Value>, Context) -> BoxFuture<Result<PromptResult, RpcError>> + Send + Sync;
type CompleteFn =
    dyn Fn(CompletionRequest, Context) -> BoxFuture<Result<Completion, RpcError>> + Send + Sync;

/// What `completion/complete` asks.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletionRequest {
    /// `ref/prompt` or `ref/resource`.
    pub ref_type: String,
    /// The prompt name or resource URI (template).
    pub ref_name: String,
    /// The argument being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Other arguments already given (2025-06-18+ `context.arguments`).
    pub context: Map<String, Value>,
}

/// A change the server announces to its clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// The tool list changed.
    ToolsChanged,
    /// The prompt list changed.
    PromptsChanged,
    /// The resource list changed.
    ResourcesChanged,
    /// A resource's contents changed.
    ResourceUpdated(String),
}

struct ToolEntry {
    tool: Tool,
    handler: Arc<ToolFn>,
}

struct ResourceEntry {
    resource: Resource,
    handler: Arc<ResourceFn>,
}

struct TemplateEntry {
    template: ResourceTemplate,
    parsed: UriTemplate,
    handler: Arc<ResourceFn>,
}

struct PromptEntry {
    prompt: Prompt,
    handler: Arc<PromptFn>,
}

/// Limits, with defaults; all configurable on the builder.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted message (a stdio line, an HTTP body), in bytes. Default 4 MiB.
    pub max_message_bytes: usize,
    /// Items per page of a list result. Default 100.
    pub page_size: usize,
    /// Messages queued for one peer before senders wait. Default 1024.
    pub outbound_queue: usize,
    /// How long running requests may finish after the client closed its input. Default 5 s.
    pub shutdown_grace: std::time::Duration,
    /// How long a legacy client may take to answer a request the server sent it
    /// (sampling, elicitation, roots). Default 60 s.
    pub ask_timeout: std::time::Duration,
    /// How long one request's handler may run before it is cancelled and answered with
    /// an internal error. Default 5 minutes (tools may legitimately be slow; a hung one
    /// must not hold its id and memory forever).
    pub request_timeout: std::time::Duration,
    /// Requests one connection (a stdio peer, an HTTP session) may have running at once;
    /// beyond it a request is answered at once with `-32603` ("too many requests in
    /// progress") and nothing runs. Bounds the memory a client can make the server hold
    /// by sending requests faster than they finish (or than it reads their answers).
    /// Default 1024.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_message_bytes: 4 * 1024 * 1024,
            page_size: 100,
            outbound_queue: 1024,
            shutdown_grace: std::time::Duration::from_secs(5),
            ask_timeout: std::time::Duration::from_secs(60),
            request_timeout: std::time::Duration::from_secs(300),
            max_in_flight: 1024,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) versions: VersionSet,
    pub(crate) limits: Limits,
    tools: RwLock<Listed<ToolEntry>>,
    resources: RwLock<Listed<ResourceEntry>>,
    templates: Listed<TemplateEntry>,
    prompts: RwLock<Listed<PromptEntry>>,
    completion: Option<Arc<CompleteFn>>,
    declare_tools: bool,
    declare_resources: bool,
    declare_prompts: bool,
    pub(crate) events: broadcast::Sender<ServerEvent>,
    /// The `initialize` / `server/discover` result per revision: it depends only on what
    /// the builder fixed (identity, capabilities, instructions, revisions), so it is shaped
    /// once.
    handshakes: Mutex<HashMap<ProtocolVersion, Encoded>>,
}

/// A multi-revision MCP server. Cheap to clone; build it with [`Server::builder`].
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("versions", &self.inner.versions)
            .finish_non_exhaustive()
    }
}

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
}

fn read_lock<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // A handler never runs under these locks, so poisoning cannot leave them half-updated.
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_lock<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The revisions this server accepts.
    pub fn versions(&self) -> VersionSet {
        self.inner.versions
    }

    /// The configured limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    fn page_size(&self) -> usize {
        self.inner.limits.page_size
    }

    /// The handshake result of revision `v` (`initialize` or `server/discover`), shaped by
    /// `shape` the first time.
    pub(crate) fn handshake(
        &self,
        v: ProtocolVersion,
        shape: impl FnOnce() -> Result<Encoded, RpcError>,
    ) -> Result<Encoded, RpcError> {
        let cache = || {
            self.inner
                .handshakes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(hit) = cache().get(&v) {
            return Ok(hit.clone());
        }
        let encoded = shape()?;
        cache().insert(v, encoded.clone());
        Ok(encoded)
    }

    /// Subscribes to the server's change announcements.
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.inner.events.subscribe()
    }

    /// Adds (or replaces) a tool at run time and tells clients the list changed.
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F)
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, RpcError>> + Send + 'static,
    {
        let entry = ToolEntry {
            tool,
            handler: box_tool(handler),
        };
        {
            let mut tools = write_lock(&self.inner.tools);
            let tools = tools.items_mut();
            tools.retain(|t| t.tool.name != entry.tool.name);
            tools.push(entry);
        }
        self.notify(ServerEvent::ToolsChanged);
    }

    /// Removes a tool at run time; tells clients if it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = {
            let mut tools = write_lock(&self.inner.tools);
            let tools = tools.items_mut();
            let before = tools.len();
            tools.retain(|t| t.tool.name != name);
            before != tools.len()
        };
        if removed {
            self.notify(ServerEvent::ToolsChanged);
        }
        removed
    }

    /// Announces a change to every connected client that can hear it.
    pub fn notify(&self, event: ServerEvent) {
        // No receiver simply means no client is connected.
        let _ = self.inner.events.send(event);
    }

    /// The capabilities this server declares, in the newest revision's shape; `shape`
    /// projects them per revision.
    pub fn neutral_capabilities(&self) -> Value {
        let i = &self.inner;
        let mut caps = Map::new();
        if i.declare_tools {
            caps.insert("tools".into(), json!({"listChanged": true}));
        }
        if i.declare_resources {
            caps.insert(
                "resources".into(),
                json!({"subscribe": true, "listChanged": true}),
            );
        }
        if i.declare_prompts {
            caps.insert("prompts".into(), json!({"listChanged": true}));
        }
        caps.insert("logging".into(), json!({}));
        if i.completion.is_some() {
            caps.insert("completions".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// Whether the server declared a capability.
    pub fn declares(&self, capability: &str) -> bool {
        // Read on every request: answered from the flags, not by building the capabilities.
        let i = &self.inner;
        match capability {
            "tools" => i.declare_tools,
            "resources" => i.declare_resources,
            "prompts" => i.declare_prompts,
            "logging" => true,
            "completions" => i.completion.is_some(),
            _ => false,
        }
    }
}

/// The JSON Schema of `T`, without the `title` schemars derives from the type's name (the
/// tool's name and description say it).
#[cfg(feature = "typed-tools")]
fn schema_of<T: schemars::JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T))
        .unwrap_or_else(|_| json!({"type": "object"}));
    if let Value::Object(obj) = &mut schema {
        obj.remove("title");
    }
    schema
}

fn box_tool<F, Fut>(handler: F) -> Arc<ToolFn>
where
    F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResult, RpcError>> + Send + 'static,
{
    Arc::new(move |args, ctx| Box::pin(handler(args, ctx)))
}

impl ServerBuilder {
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

    /// A tool whose arguments arrive as a JSON object.
    pub fn tool<F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, RpcError>> + Send + 'static,
    {
        self.tools.push(ToolEntry {
            tool,
            handler: box_tool(handler),
        });
        self
    }

    /// A tool whose arguments decode into `A`; its input schema is derived from `A`
    /// with schemars. Arguments that do not decode are a `-32602` error.
    #[cfg(feature = "typed-tools")]
    pub fn typed_tool<A, F, Fut>(self, mut tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, RpcError>> + Send + 'static,
    {
        tool.input_schema = schema_of::<A>();
        let handler = Arc::new(handler);
        self.tool(tool, move |args, ctx| {
            let handler = Arc::clone(&handler);
            async move {
                let typed: A = serde_json::from_value(Value::Object(args))
                    .map_err(|e| RpcError::invalid_params(format!("invalid arguments: {e}")))?;
                handler(typed, ctx).await
            }
        })
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
        Fut: Future<Output = Result<T, RpcError>> + Send + 'static,
    {
        tool.output_schema = Some(schema_of::<T>());
        let handler = Arc::new(handler);
        self.typed_tool::<A, _, _>(tool, move |args, ctx| {
            let output = handler(args, ctx);
            async move {
                let value = serde_json::to_value(output.await?).map_err(|e| {
                    RpcError::internal(format!("the tool's output does not serialize: {e}"))
                })?;
                Ok(ToolResult::text(value.to_string()).structured(value))
            }
        })
    }

    /// A resource with a fixed URI.
    pub fn resource<F, Fut>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, RpcError>> + Send + 'static,
    {
        let handler: Arc<ResourceFn> = Arc::new(move |uri, _vars, ctx| Box::pin(handler(uri, ctx)));
        self.resources.push(ResourceEntry { resource, handler });
        self
    }

    /// A family of resources named by an RFC 6570 template; the handler gets the URI and
    /// the template's variables. Panics if the template does not parse (a programming
    /// error in the server, found at start-up).
    pub fn resource_template<F, Fut>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, RpcError>> + Send + 'static,
    {
        #[allow(clippy::expect_used)] // documented: a bad template is the author's bug
        let parsed = UriTemplate::parse(&template.uri_template)
            .expect("resource template does not parse as RFC 6570");
        let handler: Arc<ResourceFn> =
            Arc::new(move |uri, vars, ctx| Box::pin(handler(uri, vars, ctx)));
        self.templates.push(TemplateEntry {
            template,
            parsed,
            handler,
        });
        self
    }

    /// A prompt; the handler gets the arguments as strings in a JSON object.
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptResult, RpcError>> + Send + 'static,
    {
        let handler: Arc<PromptFn> = Arc::new(move |args, ctx| Box::pin(handler(args, ctx)));
        self.prompts.push(PromptEntry { prompt, handler });
        self
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

    /// Builds the server.
    pub fn build(self) -> Server {
        let (events, _) = broadcast::channel(64);
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
                templates: Listed::new(self.templates),
                prompts: RwLock::new(Listed::new(self.prompts)),
                completion: self.completion,
                events,
                handshakes: Mutex::new(HashMap::new()),
            }),
        }
    }
}

/// An opaque cursor: the offset of the next page.
fn encode_cursor(offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("o{offset}"))
}

fn decode_cursor(params: Option<&Value>) -> Result<usize, RpcError> {
    let Some(cursor) = params.and_then(|p| p.get("cursor")) else {
        return Ok(0);
    };
    let bad = || RpcError::invalid_params("invalid cursor");
    let s = cursor.as_str().ok_or_else(bad)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .map_err(|_| bad())?;
    let text = std::str::from_utf8(&bytes).map_err(|_| bad())?;
    text.strip_prefix('o')
        .and_then(|n| n.parse().ok())
        .ok_or_else(bad)
}

/// A list the server offers, with its encoded pages per revision. A list changes rarely
/// and every client asks for it, so each page is shaped once per revision and then
/// served as the same bytes until the list changes (`items_mut` drops the pages, under
/// the list's write lock). Only pages starting at a multiple of the page size are kept —
/// the cursors this server hands out — so forged cursors cannot grow the cache: it holds
/// at most one encoding of the list per revision.
pub(crate) struct Listed<T> {
    items: Vec<T>,
    pages: Mutex<HashMap<(ProtocolVersion, usize), Encoded>>,
}

impl<T> Listed<T> {
    fn new(items: Vec<T>) -> Listed<T> {
        Listed {
            items,
            pages: Mutex::new(HashMap::new()),
        }
    }

    /// The items, to change them: every cached page is dropped.
    fn items_mut(&mut self) -> &mut Vec<T> {
        self.pages
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        &mut self.items
    }

    /// The page at `offset` in revision `v`, shaped by `shape` (items, next cursor) unless
    /// it is cached.
    fn page(
        &self,
        v: ProtocolVersion,
        offset: usize,
        size: usize,
        shape: impl FnOnce(&[T], Option<String>) -> Result<Encoded, RpcError>,
    ) -> Result<Encoded, RpcError> {
        let size = size.max(1);
        let cacheable = offset % size == 0;
        let lock_pages = || {
            self.pages
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if cacheable {
            if let Some(hit) = lock_pages().get(&(v, offset)) {
                return Ok(hit.clone());
            }
        }
        let (items, next) = page(&self.items, offset, size)?;
        let encoded = shape(items, next)?;
        if cacheable {
            lock_pages().insert((v, offset), encoded.clone());
        }
        Ok(encoded)
    }
}

impl<T> std::ops::Deref for Listed<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items
    }
}

fn page<T>(items: &[T], offset: usize, size: usize) -> Result<(&[T], Option<String>), RpcError> {
    let end = offset.saturating_add(size.max(1)).min(items.len());
    // A cursor past the end (forged, or from a list that shrank) is invalid.
    let slice = items
        .get(offset..end)
        .ok_or_else(|| RpcError::invalid_params("invalid cursor"))?;
    let next = (end < items.len()).then(|| encode_cursor(end));
    Ok((slice, next))
}

/// Decodes `params` into the revision's generated params type of method `M`: params that
/// do not decode are `-32602`, with the decoder's message.
fn check_params<M: mcp_generated::Method>(params: Option<&Value>) -> Result<(), RpcError>
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

/// Decodes `params` into the revision's generated params type of method `M` (required
/// params absent, or params that do not decode, are `-32602`). The params are taken
/// apart by `FromValue`, not copied: the caller keeps what it needs from the typed value.
fn decode_params<M: mcp_generated::Method>(params: Option<Value>) -> Result<M::Params, RpcError>
where
    M::Params: FromValue,
{
    let p = params
        .ok_or_else(|| RpcError::invalid_params(format!("{}: params are required", M::METHOD)))?;
    <M::Params as FromValue>::from_value(p)
        .map_err(|e| RpcError::invalid_params(format!("{}: {e}", M::METHOD)))
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
    pub(crate) fn answer_now(
        &self,
        v: ProtocolVersion,
        method: &str,
        params: Option<&Value>,
    ) -> Option<Result<Encoded, RpcError>> {
        match method {
            "ping"
            | "tools/list"
            | "resources/list"
            | "resources/templates/list"
            | "prompts/list"
            | "server/discover" => Some(self.answer_sync(v, method, params)),
            _ => None,
        }
    }

    fn answer_sync(
        &self,
        v: ProtocolVersion,
        method: &str,
        params: Option<&Value>,
    ) -> Result<Encoded, RpcError> {
        let info = &self.inner.info;
        match method {
            "ping" => Ok(shape::empty(v, info)),
            "tools/list" => {
                self.require("tools", method)?;
                by_revision!(v, |m| check_params::<m::methods::ListTools>(params))?;
                let offset = decode_cursor(params)?;
                read_lock(&self.inner.tools).page(v, offset, self.page_size(), |items, next| {
                    let items: Vec<&Tool> = items.iter().map(|t| &t.tool).collect();
                    shape::list_tools(v, info, &items, next)
                })
            }
            "resources/list" => {
                self.require("resources", method)?;
                by_revision!(v, |m| check_params::<m::methods::ListResources>(params))?;
                let offset = decode_cursor(params)?;
                read_lock(&self.inner.resources).page(v, offset, self.page_size(), |items, next| {
                    let items: Vec<&Resource> = items.iter().map(|r| &r.resource).collect();
                    shape::list_resources(v, info, &items, next)
                })
            }
            "resources/templates/list" => {
                self.require("resources", method)?;
                by_revision!(v, |m| check_params::<m::methods::ListResourceTemplates>(
                    params
                ))?;
                let offset = decode_cursor(params)?;
                self.inner
                    .templates
                    .page(v, offset, self.page_size(), |items, next| {
                        let items: Vec<&ResourceTemplate> =
                            items.iter().map(|t| &t.template).collect();
                        shape::list_resource_templates(v, info, &items, next)
                    })
            }
            "prompts/list" => {
                self.require("prompts", method)?;
                by_revision!(v, |m| check_params::<m::methods::ListPrompts>(params))?;
                let offset = decode_cursor(params)?;
                read_lock(&self.inner.prompts).page(v, offset, self.page_size(), |items, next| {
                    let items: Vec<&Prompt> = items.iter().map(|p| &p.prompt).collect();
                    shape::list_prompts(v, info, &items, next)
                })
            }
            "server/discover" => self.handshake(v, || {
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
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    pub(crate) async fn handle(
        &self,
        v: ProtocolVersion,
        method: &str,
        owned_params: Option<Value>,
        ctx: Context,
    ) -> Result<Encoded, RpcError> {
        let params = owned_params.as_ref();
        if let Some(answer) = self.answer_now(v, method, params) {
            return answer;
        }
        let info = &self.inner.info;
        match method {
            "tools/call" => {
                self.require("tools", method)?;
                // Decoded once into the revision's params type, from the params
                // themselves; name and arguments are moved out of it.
                let (name, arguments) = by_revision!(v, |m| {
                    let p = decode_params::<m::methods::CallTool>(owned_params)?;
                    (p.name, p.arguments)
                });
                let handler = read_lock(&self.inner.tools)
                    .iter()
                    .find(|t| t.tool.name == name)
                    .map(|t| Arc::clone(&t.handler))
                    .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {name}")))?;
                let round = ctx.asker().clone();
                // A modern call may end `input_required`, with a state bound to the tool
                // and the arguments as sent (absent ones are `null`, not `{}`): keep a copy
                // of what the handler consumes, unless the binding is known already (a
                // retry's state was verified against it).
                let kept_arguments = match &round {
                    Asker::Modern(r) if !r.is_bound() => {
                        Some(arguments.clone().map_or(Value::Null, Value::Object))
                    }
                    _ => None,
                };
                let result = handler(arguments.unwrap_or_default(), ctx).await;
                let arguments = kept_arguments.unwrap_or(Value::Null);
                if let Some(answer) =
                    input_required(v, info, &round, &Value::String(name), &arguments)?
                {
                    return Ok(answer);
                }
                shape::tool_result(v, info, result?)
            }
            "resources/read" => {
                self.require("resources", method)?;
                let uri = by_revision!(v, |m| {
                    decode_params::<m::methods::ReadResource>(owned_params)?.uri
                });
                let found = read_lock(&self.inner.resources)
                    .iter()
                    .find(|r| r.resource.uri == uri)
                    .map(|r| (Arc::clone(&r.handler), BTreeMap::new()))
                    .or_else(|| {
                        self.inner.templates.iter().find_map(|t| {
                            t.parsed
                                .matches(&uri)
                                .map(|vars| (Arc::clone(&t.handler), vars))
                        })
                    });
                let Some((handler, vars)) = found else {
                    return Err(resource_not_found(v, &uri));
                };
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
                shape::read_resource(v, info, contents)
            }
            "prompts/get" => {
                self.require("prompts", method)?;
                by_revision!(v, |m| check_params::<m::methods::GetPrompt>(params))?;
                let name = string_arg(params, "name")?;
                let (prompt, handler) = read_lock(&self.inner.prompts)
                    .iter()
                    .find(|p| p.prompt.name == name)
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
                let (target, arguments) = crate::asks::binding_parts(params);
                if let Some(answer) = input_required(v, info, &round, target, arguments)? {
                    return Ok(answer);
                }
                shape::get_prompt(v, info, &result?)
            }
            "completion/complete" => {
                let Some(handler) = self.inner.completion.clone() else {
                    return Err(RpcError::method_not_found(method));
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
            "subscriptions/listen" => self.listen(v, params, ctx).await,
            // Tasks (2025-11-25, experimental): not offered; the capability is never
            // declared, so a conforming client does not call these.
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    /// `subscriptions/listen` (2026-07-28): acknowledges the filter it honours, then
    /// forwards the matching change notifications, each tagged with the subscription id,
    /// until the client cancels or goes away (then nothing more is sent).
    async fn listen(
        &self,
        v: ProtocolVersion,
        params: Option<&Value>,
        ctx: Context,
    ) -> Result<Encoded, RpcError> {
        // Only modern revisions have this method (admission checked the revision's table).
        by_revision!(v, where modern, |m| check_params::<m::methods::SubscriptionsListen>(
            params
        ), else Err(RpcError::method_not_found("subscriptions/listen")))?;
        let filter = params
            .and_then(|p| p.get("notifications"))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let wants = |key: &str| filter.get(key).and_then(Value::as_bool) == Some(true);
        let mut honoured = Map::new();
        if wants("toolsListChanged") && self.declares("tools") {
            honoured.insert("toolsListChanged".into(), json!(true));
        }
        if wants("promptsListChanged") && self.declares("prompts") {
            honoured.insert("promptsListChanged".into(), json!(true));
        }
        if wants("resourcesListChanged") && self.declares("resources") {
            honoured.insert("resourcesListChanged".into(), json!(true));
        }
        let uris: Vec<String> = filter
            .get("resourceSubscriptions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if !uris.is_empty() && self.declares("resources") {
            honoured.insert("resourceSubscriptions".into(), json!(uris));
        }
        // The spec names the listen request's own JSON-RPC id as the subscription id.
        let id = ctx.request_id().map_or(Value::Null, RequestId::to_value);
        let tag = json!({SUBSCRIPTION_ID: id});
        let mut events = self.events();
        ctx.notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": tag, "notifications": honoured}),
        )
        .await;
        loop {
            let event = match first(ctx.cancelled(), events.recv()).await {
                First::A(()) => break,
                First::B(e) => e,
            };
            let (method, params) = match event {
                Ok(ServerEvent::ToolsChanged) if honoured.contains_key("toolsListChanged") => {
                    ("notifications/tools/list_changed", json!({"_meta": tag}))
                }
                Ok(ServerEvent::PromptsChanged) if honoured.contains_key("promptsListChanged") => {
                    ("notifications/prompts/list_changed", json!({"_meta": tag}))
                }
                Ok(ServerEvent::ResourcesChanged)
                    if honoured.contains_key("resourcesListChanged") =>
                {
                    (
                        "notifications/resources/list_changed",
                        json!({"_meta": tag}),
                    )
                }
                Ok(ServerEvent::ResourceUpdated(uri)) if uris.contains(&uri) => (
                    "notifications/resources/updated",
                    json!({"_meta": tag, "uri": uri}),
                ),
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            };
            ctx.notify(method, params).await;
        }
        let mut result = Map::new();
        result.insert("_meta".into(), tag);
        result.insert("resultType".into(), json!("complete"));
        by_revision!(v, where modern, |m| shape::project_open::<m::SubscriptionsListenResult>(
            "the end of a subscription",
            Value::Object(result)
        ), else Err(RpcError::method_not_found("subscriptions/listen")))
    }

    fn require(&self, capability: &str, method: &str) -> Result<(), RpcError> {
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
    #[cfg(feature = "http")]
    pub(crate) fn with_tool_input_schema<R>(
        &self,
        name: &str,
        f: impl FnOnce(&Value) -> R,
    ) -> Option<R> {
        read_lock(&self.inner.tools)
            .iter()
            .find(|t| t.tool.name == name)
            .map(|t| f(&t.tool.input_schema))
    }

    /// Whether `uri` names a resource this server has (direct or by template).
    pub(crate) fn has_resource(&self, uri: &str) -> bool {
        read_lock(&self.inner.resources)
            .iter()
            .any(|r| r.resource.uri == uri)
            || self
                .inner
                .templates
                .iter()
                .any(|t| t.parsed.matches(uri).is_some())
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

/// `_meta` key tagging the notifications of one `subscriptions/listen` stream.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Unknown resource: `-32002` in legacy revisions, `-32602` from 2026-07-28; `data.uri`
/// names it in both.
pub(crate) fn resource_not_found(v: ProtocolVersion, uri: &str) -> RpcError {
    RpcError::new(
        ErrorCode(v.features().resource_not_found_code),
        "Resource not found",
    )
    .with_data(json!({"uri": uri}))
}
