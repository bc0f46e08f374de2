//! The server an author builds once: identity, tools, resources, prompts, completion;
//! and the revision-independent handling of each client request, answered through
//! `shape` in the revision the request is served at.

mod builder;
pub mod connection;
pub(crate) mod context;
#[cfg(feature = "typed-tools")]
pub(crate) mod elicit_schema;
mod events;
pub(crate) mod extensions;
mod handler;
mod handler_output;
mod listen;
pub mod middleware;
mod registry;
mod router;
#[cfg(feature = "tasks")]
pub mod tasks;
mod tool_output;
mod uri_template;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};

use registry::{write_lock, Listed, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry};
pub use registry::{ListKind, Listing};
use serde_json::{json, Map, Value};
use tokio::sync::broadcast;

use crate::model::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use crate::protocol::shape::CacheHint;
use crate::protocol::version::{ProtocolVersion, VersionSet};
use crate::server::context::Context;
use crate::wire::{Encoded, ErrorCode, RpcError};

pub use builder::ServerBuilder;
pub use events::ServerEvent;
use handler::CompleteFn;
pub use handler::{BoxFuture, CompletionRequest};
pub use handler_output::{IntoPromptResult, IntoResourceContents};
#[cfg(feature = "tasks")]
pub use tasks::{
    MemoryTaskStore, TaskChange, TaskOptions, TaskRecord, TaskStatus, TaskStore, TaskStoreError,
    TASKS_EXTENSION,
};
pub use tool_output::{IntoToolResult, ToolError};

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
    /// The capacity asked of the kernel for the stdio transport's stdout pipe, in bytes,
    /// when stdout is a pipe (Linux): a smaller pipe is enlarged to it, a larger one (the
    /// client made it so) is left as it is. Default 256 KiB; 0 leaves the pipe as it was made.
    ///
    /// A pipe holds 64 KiB unless its size is changed, so an answer of that size (a
    /// resource read, a long tool result) could only leave in pieces, the server waiting
    /// for the client to read each one: the two processes took turns instead of working
    /// at once. Larger is not better: a client that reads all the pipe holds in one call
    /// keeps the pipe locked meanwhile, and the server's next write spins on that lock
    /// (BENCHMARKS.md §2.4 compares the sizes). The kernel refuses more than
    /// `/proc/sys/fs/pipe-max-size` (1 MiB by default) to an unprivileged process; a
    /// refusal leaves the pipe as it was.
    pub stdout_pipe_bytes: usize,
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
            stdout_pipe_bytes: 256 * 1024,
        }
    }
}

/// The author's 2026-07-28 cache hints (see [`ServerBuilder::list_cache_hint`]).
pub(crate) struct CacheHints {
    pub(crate) tools: CacheHint,
    pub(crate) prompts: CacheHint,
    pub(crate) resources: CacheHint,
    pub(crate) templates: CacheHint,
    /// `resources/read`, unless the resource (or its template) has its own.
    pub(crate) read: CacheHint,
    pub(crate) per_resource: HashMap<String, CacheHint>,
}

impl Default for CacheHints {
    fn default() -> CacheHints {
        CacheHints {
            tools: CacheHint::LIST,
            prompts: CacheHint::LIST,
            resources: CacheHint::LIST,
            templates: CacheHint::LIST,
            read: CacheHint::READ,
            per_resource: HashMap::new(),
        }
    }
}

impl CacheHints {
    /// A list's hint for one answer: `private` when the list may differ per caller.
    pub(crate) fn list(&self, kind: ListKind, per_caller: bool) -> CacheHint {
        let hint = match kind {
            ListKind::Tools => self.tools,
            ListKind::Prompts => self.prompts,
            ListKind::Resources => self.resources,
            ListKind::ResourceTemplates => self.templates,
        };
        CacheHint {
            public: hint.public && !per_caller,
            ..hint
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
    templates: RwLock<Listed<TemplateEntry>>,
    prompts: RwLock<Listed<PromptEntry>>,
    completion: Option<Arc<CompleteFn>>,
    pub(crate) roots_changed: Option<Arc<handler::RootsChangedFn>>,
    resource_interest: Option<Arc<handler::ResourceInterestFn>>,
    /// How many subscriptions (a legacy session's, a listen's) name each resource.
    interest: Mutex<HashMap<String, usize>>,
    declare_tools: bool,
    declare_resources: bool,
    declare_prompts: bool,
    pub(crate) events: broadcast::Sender<ServerEvent>,
    /// The `initialize` / `server/discover` result per revision: it depends only on what
    /// the builder fixed (identity, capabilities, instructions, revisions), so it is shaped
    /// once.
    handshakes: Mutex<HashMap<ProtocolVersion, Encoded>>,
    /// Declared extensions and the custom methods served for them.
    pub(crate) extensions: extensions::Extensions,
    /// The keys of the 2026-07-28 `requestState` ([`ServerBuilder::state_keys`]).
    pub(crate) state_keys: Arc<crate::protocol::asks::StateKeys>,
    /// The author's predicate on what each caller sees ([`ServerBuilder::visible_if`]).
    pub(crate) visible: Option<Arc<registry::VisibleFn>>,
    pub(crate) cache_hints: CacheHints,
    /// Whether tasks are offered (a tool may run as one, or the builder configured them).
    #[cfg(feature = "tasks")]
    offers_tasks: bool,
    /// The tasks and where their state lives.
    #[cfg(feature = "tasks")]
    tasks: Arc<tasks::Tasks>,
    /// The author's middleware, outermost first (empty: requests go straight to handling).
    pub(crate) middleware: Arc<[Arc<dyn middleware::Middleware>]>,
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

impl Server {
    /// A subscription now names resource `uri` (see
    /// [`ServerBuilder::on_resource_interest`]): the first tells the hook.
    pub(crate) fn interest_added(&self, uri: &str) {
        let first = {
            let mut interest = lock_interest(&self.inner.interest);
            let count = interest.entry(uri.to_owned()).or_insert(0);
            *count += 1;
            *count == 1
        };
        if first {
            if let Some(hook) = &self.inner.resource_interest {
                hook(uri, true);
            }
        }
    }

    /// A subscription no longer names resource `uri`: the last tells the hook.
    pub(crate) fn interest_removed(&self, uri: &str) {
        let last = {
            let mut interest = lock_interest(&self.inner.interest);
            match interest.get_mut(uri) {
                Some(1) => {
                    interest.remove(uri);
                    true
                }
                Some(count) => {
                    *count -= 1;
                    false
                }
                None => false,
            }
        };
        if last {
            if let Some(hook) = &self.inner.resource_interest {
                hook(uri, false);
            }
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

    /// Declares extension `id` with its settings (an object; `{}` for none), or replaces
    /// its settings: announced in the capabilities from the next `initialize` or
    /// `server/discover` on (a legacy session keeps what it was told), and its custom
    /// methods ([`ServerBuilder::custom_method`]) are admitted from now on.
    pub fn declare_extension(&self, id: impl Into<String>, settings: Value) {
        self.inner.extensions.declare(id.into(), settings);
        self.forget_handshakes();
    }

    /// Withdraws extension `id`: no longer announced, and its custom methods answer
    /// `-32601` from now on. Whether it was declared.
    pub fn withdraw_extension(&self, id: &str) -> bool {
        let withdrawn = self.inner.extensions.withdraw(id);
        self.forget_handshakes();
        withdrawn
    }

    /// The extensions the server declares now, with their settings (the tasks extension,
    /// which the runtime declares itself when a tool opted in, is not among them).
    pub fn extensions(&self) -> std::collections::BTreeMap<String, Value> {
        self.inner.extensions.declared()
    }

    /// Drops the cached `initialize` / `server/discover` results (the capabilities
    /// changed).
    fn forget_handshakes(&self) {
        self.inner
            .handshakes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Subscribes to the server's change announcements.
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.inner.events.subscribe()
    }

    /// Adds (or replaces) a tool at run time and tells clients the list changed.
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F)
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoToolResult,
    {
        let entry = ToolEntry {
            tool,
            handler: handler::box_tool(handler),
            by_ref: None,
            enabled: true,
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

    /// Adds (or replaces, by URI) a resource at run time and tells clients the list
    /// changed. A server built without resources does not declare the capability: its
    /// clients do not look.
    pub fn add_resource<F, Fut>(&self, resource: Resource, handler: F)
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoResourceContents,
    {
        let entry = builder::resource_entry(resource, handler);
        {
            let mut resources = write_lock(&self.inner.resources);
            let resources = resources.items_mut();
            resources.retain(|r| r.resource.uri != entry.resource.uri);
            resources.push(entry);
        }
        self.notify(ServerEvent::ResourcesChanged);
    }

    /// Removes a resource at run time; tells clients if it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = {
            let mut resources = write_lock(&self.inner.resources);
            let resources = resources.items_mut();
            let before = resources.len();
            resources.retain(|r| r.resource.uri != uri);
            before != resources.len()
        };
        if removed {
            self.notify(ServerEvent::ResourcesChanged);
        }
        removed
    }

    /// Adds (or replaces, by URI template) a resource template at run time and tells
    /// clients the resource list changed. `false` (nothing added) if the template does
    /// not parse as RFC 6570.
    pub fn add_resource_template<F, Fut>(&self, template: ResourceTemplate, handler: F) -> bool
    where
        F: Fn(String, std::collections::BTreeMap<String, String>, Context) -> Fut
            + Send
            + Sync
            + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoResourceContents,
    {
        let Some(entry) = builder::template_entry(template, handler) else {
            return false;
        };
        {
            let mut templates = write_lock(&self.inner.templates);
            let templates = templates.items_mut();
            templates.retain(|t| t.template.uri_template != entry.template.uri_template);
            templates.push(entry);
        }
        self.notify(ServerEvent::ResourcesChanged);
        true
    }

    /// Removes a resource template at run time; tells clients if it existed.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        let removed = {
            let mut templates = write_lock(&self.inner.templates);
            let templates = templates.items_mut();
            let before = templates.len();
            templates.retain(|t| t.template.uri_template != uri_template);
            before != templates.len()
        };
        if removed {
            self.notify(ServerEvent::ResourcesChanged);
        }
        removed
    }

    /// Adds (or replaces, by name) a prompt at run time and tells clients the list
    /// changed.
    pub fn add_prompt<F, Fut>(&self, prompt: Prompt, handler: F)
    where
        F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoPromptResult,
    {
        let entry = builder::prompt_entry(prompt, handler);
        {
            let mut prompts = write_lock(&self.inner.prompts);
            let prompts = prompts.items_mut();
            prompts.retain(|p| p.prompt.name != entry.prompt.name);
            prompts.push(entry);
        }
        self.notify(ServerEvent::PromptsChanged);
    }

    /// Removes a prompt at run time; tells clients if it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = {
            let mut prompts = write_lock(&self.inner.prompts);
            let prompts = prompts.items_mut();
            let before = prompts.len();
            prompts.retain(|p| p.prompt.name != name);
            before != prompts.len()
        };
        if removed {
            self.notify(ServerEvent::PromptsChanged);
        }
        removed
    }

    /// Disables a tool at run time: it is no longer listed, and a call is answered as for
    /// an unknown tool, until [`Server::enable_tool`]. Tells clients the list changed (in
    /// the revisions that have the notification) if it was enabled; `false` if there is
    /// no such tool or it was disabled already.
    pub fn disable_tool(&self, name: &str) -> bool {
        self.set_tool_enabled(name, false)
    }

    /// Enables a tool [`Server::disable_tool`] disabled; tells clients the list changed.
    /// `false` if there is no such tool or it was enabled already.
    pub fn enable_tool(&self, name: &str) -> bool {
        self.set_tool_enabled(name, true)
    }

    fn set_tool_enabled(&self, name: &str, enabled: bool) -> bool {
        let changed = {
            let mut tools = write_lock(&self.inner.tools);
            let found = tools
                .iter()
                .any(|t| t.tool.name == name && t.enabled != enabled);
            if found {
                for t in tools.items_mut().iter_mut().filter(|t| t.tool.name == name) {
                    t.enabled = enabled;
                }
            }
            found
        };
        if changed {
            self.notify(ServerEvent::ToolsChanged);
        }
        changed
    }

    /// Disables a prompt at run time (not listed, `prompts/get` answered as for an
    /// unknown prompt); tells clients the list changed. `false` if there is no such
    /// prompt or it was disabled already.
    pub fn disable_prompt(&self, name: &str) -> bool {
        self.set_prompt_enabled(name, false)
    }

    /// Enables a prompt [`Server::disable_prompt`] disabled; tells clients the list
    /// changed. `false` if there is no such prompt or it was enabled already.
    pub fn enable_prompt(&self, name: &str) -> bool {
        self.set_prompt_enabled(name, true)
    }

    fn set_prompt_enabled(&self, name: &str, enabled: bool) -> bool {
        let changed = {
            let mut prompts = write_lock(&self.inner.prompts);
            let found = prompts
                .iter()
                .any(|p| p.prompt.name == name && p.enabled != enabled);
            if found {
                for p in prompts
                    .items_mut()
                    .iter_mut()
                    .filter(|p| p.prompt.name == name)
                {
                    p.enabled = enabled;
                }
            }
            found
        };
        if changed {
            self.notify(ServerEvent::PromptsChanged);
        }
        changed
    }

    /// Disables a resource (by URI) or a resource template (by its `uriTemplate`) at run
    /// time: not listed, read as an unknown resource, not subscribable; tells clients the
    /// resource list changed. `false` if there is no such resource or template, or it was
    /// disabled already.
    pub fn disable_resource(&self, uri_or_template: &str) -> bool {
        self.set_resource_enabled(uri_or_template, false)
    }

    /// Enables a resource or template [`Server::disable_resource`] disabled; tells clients
    /// the resource list changed. `false` if there is none or it was enabled already.
    pub fn enable_resource(&self, uri_or_template: &str) -> bool {
        self.set_resource_enabled(uri_or_template, true)
    }

    fn set_resource_enabled(&self, key: &str, enabled: bool) -> bool {
        let resource = {
            let mut resources = write_lock(&self.inner.resources);
            let found = resources
                .iter()
                .any(|r| r.resource.uri == key && r.enabled != enabled);
            if found {
                for r in resources
                    .items_mut()
                    .iter_mut()
                    .filter(|r| r.resource.uri == key)
                {
                    r.enabled = enabled;
                }
            }
            found
        };
        let template = {
            let mut templates = write_lock(&self.inner.templates);
            let found = templates
                .iter()
                .any(|t| t.template.uri_template == key && t.enabled != enabled);
            if found {
                for t in templates
                    .items_mut()
                    .iter_mut()
                    .filter(|t| t.template.uri_template == key)
                {
                    t.enabled = enabled;
                }
            }
            found
        };
        if resource || template {
            self.notify(ServerEvent::ResourcesChanged);
        }
        resource || template
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
        #[cfg(feature = "tasks")]
        if i.offers_tasks {
            // 2025-11-25 reads `tasks`, 2026-07-28 `extensions`: projection keeps each
            // where its revision defines it (and neither elsewhere).
            caps.insert(
                "tasks".into(),
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            );
            caps.insert("extensions".into(), json!({ tasks::TASKS_EXTENSION: {} }));
        }
        if !i.extensions.is_empty() {
            // The author's: `shape::server_capabilities` moves them to `experimental` for
            // a revision without `extensions`.
            let declared = caps
                .entry("extensions")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(declared) = declared {
                declared.extend(i.extensions.declared());
            }
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

fn lock_interest(
    m: &Mutex<HashMap<String, usize>>,
) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
    // Nothing panics while holding it; the counts survive if something did.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether an encoded result is a tool result with `isError: true` (read only where an
/// outcome is inspected: middleware asking).
pub(crate) fn result_is_tool_error(json: &[u8]) -> bool {
    serde_json::from_slice::<Value>(json)
        .ok()
        .and_then(|v| v.get("isError").and_then(Value::as_bool))
        .unwrap_or(false)
}

impl Server {
    /// Whether middleware wraps the requests.
    #[inline]
    pub(crate) fn has_middleware(&self) -> bool {
        !self.inner.middleware.is_empty()
    }
}
