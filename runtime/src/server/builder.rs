//! The builder an author writes a server with: identity, limits, revisions, and the handlers of tools, resources, templates, prompts and completion.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};

#[cfg(feature = "typed-tools")]
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use super::handler::{box_tool, CompleteFn, CompletionRequest, PromptFn, ResourceFn};
use super::registry::{Listed, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry};
use super::tool_output::{IntoToolResult, ToolError};
use super::{Inner, Limits, Server};
use crate::model::{
    Completion, Implementation, Prompt, PromptResult, Resource, ResourceContents, ResourceTemplate,
    Tool, ToolResult,
};
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
        Fut: Future + Send + 'static,
        Fut::Output: IntoToolResult,
    {
        self.tools.push(ToolEntry {
            tool,
            handler: box_tool(handler),
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
        self.tool(tool, move |args, ctx| {
            let handler = Arc::clone(&handler);
            async move {
                let typed: A = serde_json::from_value(Value::Object(args)).map_err(|e| {
                    ToolError::protocol(RpcError::invalid_params(format!("invalid arguments: {e}")))
                })?;
                handler(typed, ctx)
                    .await
                    .into_tool_result()
                    .map_err(ToolError::protocol)
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
