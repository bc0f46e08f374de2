//! What a client does with its server, in the neutral model: list (a page, or every
//! page), call tools, read resources, get prompts, complete, set the log level,
//! subscribe — each request shaped for the revision in force, and each 2026-07-28
//! `input_required` answer resolved by the client handlers and retried.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::error::{ClientError, ClientErrorKind};
use super::link::LinkKind;
use super::{headers, negotiate, shape, Client, RequestOptions};
use mcp_runtime::model::{
    Completion, LogLevel, Prompt, PromptResult, Resource, ResourceContents, ResourceTemplate, Tool,
    ToolResult,
};
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::version::{Era, ProtocolVersion};
use mcp_runtime::wire::ErrorCode;

/// One page of a list, and the cursor of the next one.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// The cursor to ask for the next page with, if there is one.
    pub next_cursor: Option<String>,
    /// The list result's own `_meta` (each item has its own too).
    pub meta: Option<Map<String, Value>>,
}

/// What a completion is for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionRef {
    /// An argument of the prompt of this name.
    Prompt(String),
    /// A variable of the resource template with this URI template.
    Resource(String),
}

/// The most pages a "list everything" call reads before it stops (a server whose cursors
/// never end).
const MAX_PAGES: usize = 10_000;

fn decode_items<T>(
    result: &Value,
    key: &str,
    item: impl Fn(&Value) -> Result<T, String>,
) -> Result<Page<T>, ClientError> {
    let items = match result.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| item(i).map_err(ClientError::invalid))
            .collect::<Result<Vec<T>, ClientError>>()?,
        _ => return Err(ClientError::invalid(format!("the list has no `{key}`"))),
    };
    Ok(Page {
        items,
        next_cursor: result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned),
        meta: result.get("_meta").and_then(Value::as_object).cloned(),
    })
}

impl Client {
    /// Sends `method` and returns its result decoded as the revision's type, answering
    /// `input_required` rounds (2026-07-28) with the handlers.
    async fn call(
        &self,
        method: McpMethod,
        mut params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let v = self.version();
        let config = &self.core.config;
        for round in 0..=config.max_rounds {
            let result = self.send(v, method.name(), params.clone(), options).await?;
            if !shape::is_input_required(v, &result) {
                return shape::result(v, method, result);
            }
            if round == config.max_rounds {
                break;
            }
            let (requests, state) = shape::input_required(v, result)?;
            let handlers = match &options.handlers {
                Some(own) => own.or(&config.handlers),
                None => config.handlers.clone(),
            };
            let mut responses = Map::new();
            for (key, request) in requests {
                let ask = request
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                if !handlers.handles(&ask) {
                    return Err(ClientError::unsupported(format!(
                        "the server asks for `{ask}`, which this client does not handle"
                    )));
                }
                let answer = handlers
                    .answer(v, &ask, request.get("params").cloned())
                    .await
                    .map_err(ClientError::from_rpc)?;
                responses.insert(key, answer);
            }
            params.remove("inputResponses");
            params.remove("requestState");
            if !responses.is_empty() {
                params.insert("inputResponses".into(), Value::Object(responses));
            }
            if let Some(state) = state {
                params.insert("requestState".into(), json!(state));
            }
        }
        Err(ClientError::new(
            ClientErrorKind::TooManyRounds,
            format!(
                "the server still asked for input after {} rounds",
                config.max_rounds
            ),
        ))
    }

    /// One request; if the server ended the legacy HTTP session (404), a new session is
    /// started and the request sent once more on it. That is safe for every method: a
    /// server answers 404 before it looks at the request, so it never ran. A request
    /// whose session ends while it runs (its stream's resumption gets 404) is not sent
    /// again, and fails. A request made while the session is being renewed waits for the
    /// new session.
    async fn send(
        &self,
        v: ProtocolVersion,
        method: &str,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let renewable = v.era() == Era::Legacy
            && self.core.link_kind() == LinkKind::StreamableHttp
            && method != McpMethod::Initialize.name();
        if renewable && !self.core.link().has_session() {
            // The server ended the session and another request is renewing it: wait for the
            // new one rather than send this without a session id (the server's 400).
            negotiate::renew_session(&self.core, v).await?;
        }
        let again = renewable.then(|| params.clone());
        match self.core.request(v, method, params, options).await {
            Err(e) if e.kind() == ClientErrorKind::SessionExpired => match again {
                Some(params) => {
                    negotiate::renew_session(&self.core, v).await?;
                    self.core.request(v, method, params, options).await
                }
                None => Err(e),
            },
            other => other,
        }
    }

    fn modern_http(&self) -> bool {
        self.version().era() == Era::Modern && self.core.link_kind() == LinkKind::StreamableHttp
    }

    fn paginated(cursor: Option<&str>) -> Map<String, Value> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), json!(c));
        }
        params
    }

    /// Reads every page of a list.
    async fn all_pages<T, F, Fut>(&self, mut page: F) -> Result<Vec<T>, ClientError>
    where
        F: FnMut(Option<String>) -> Fut,
        Fut: std::future::Future<Output = Result<Page<T>, ClientError>>,
    {
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let next = page(cursor.take()).await?;
            items.extend(next.items);
            match next.next_cursor {
                Some(c) if seen.insert(c.clone()) => cursor = Some(c),
                _ => return Ok(items),
            }
        }
        Ok(items)
    }

    /// One page of the server's tools. Over 2026-07-28 HTTP, a tool whose `x-mcp-header`
    /// annotations are invalid is left out (and logged), as the spec requires.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<Page<Tool>, ClientError> {
        let result = self
            .call(
                McpMethod::ListTools,
                Self::paginated(cursor),
                &RequestOptions::new(),
            )
            .await?;
        let mut page = decode_items(&result, "tools", Tool::from_json)?;
        let check = self.modern_http();
        page.items.retain(|tool| {
            if check {
                if let Some(why) = headers::invalid_annotation(&tool.input_schema) {
                    tracing::warn!("leaving out the tool `{}`: {why}", tool.name);
                    return false;
                }
            }
            self.core
                .remember_tool_schema(&tool.name, &tool.input_schema);
            true
        });
        Ok(page)
    }

    /// Every tool, page after page.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.all_pages(|c| async move { self.list_tools(c.as_deref()).await })
            .await
    }

    /// Calls a tool with JSON arguments (an object, or `null` for none).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::new())
            .await
    }

    /// [`Client::call_tool`] with options (progress, handlers, timeout).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<ToolResult, ClientError> {
        if self.modern_http() && !self.core.knows_tool(name) {
            // The tool's schema says which arguments travel as headers too.
            let _ = self.list_all_tools().await;
        }
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        if !arguments.is_null() {
            params.insert("arguments".into(), arguments);
        }
        let result = match self
            .call(McpMethod::CallTool, params.clone(), &options)
            .await
        {
            Err(e)
                if self.modern_http()
                    && e.rpc()
                        .is_some_and(|r| r.code == ErrorCode::HEADER_MISMATCH) =>
            {
                // The spec's advice: the tool's schema may have changed; list and retry.
                self.list_all_tools().await?;
                self.call(McpMethod::CallTool, params, &options).await?
            }
            other => other?,
        };
        ToolResult::from_json(&result).map_err(ClientError::invalid)
    }

    /// One page of the server's resources.
    pub async fn list_resources(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<Resource>, ClientError> {
        let result = self
            .call(
                McpMethod::ListResources,
                Self::paginated(cursor),
                &RequestOptions::new(),
            )
            .await?;
        decode_items(&result, "resources", Resource::from_json)
    }

    /// Every resource, page after page.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.all_pages(|c| async move { self.list_resources(c.as_deref()).await })
            .await
    }

    /// One page of the server's resource templates.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<ResourceTemplate>, ClientError> {
        let result = self
            .call(
                McpMethod::ListResourceTemplates,
                Self::paginated(cursor),
                &RequestOptions::new(),
            )
            .await?;
        decode_items(&result, "resourceTemplates", ResourceTemplate::from_json)
    }

    /// Every resource template, page after page.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.all_pages(|c| async move { self.list_resource_templates(c.as_deref()).await })
            .await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, ClientError> {
        self.read_resource_with(uri, RequestOptions::new()).await
    }

    /// [`Client::read_resource`] with options.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: RequestOptions,
    ) -> Result<Vec<ResourceContents>, ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), json!(uri));
        let result = self.call(McpMethod::ReadResource, params, &options).await?;
        decode_items(&result, "contents", ResourceContents::from_json).map(|p| p.items)
    }

    /// One page of the server's prompts.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<Page<Prompt>, ClientError> {
        let result = self
            .call(
                McpMethod::ListPrompts,
                Self::paginated(cursor),
                &RequestOptions::new(),
            )
            .await?;
        decode_items(&result, "prompts", Prompt::from_json)
    }

    /// Every prompt, page after page.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.all_pages(|c| async move { self.list_prompts(c.as_deref()).await })
            .await
    }

    /// Gets a prompt with its arguments (strings, as the spec defines them).
    pub async fn get_prompt<I, K, V>(
        &self,
        name: &str,
        arguments: I,
    ) -> Result<PromptResult, ClientError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.get_prompt_with(name, arguments, RequestOptions::new())
            .await
    }

    /// [`Client::get_prompt`] with options.
    pub async fn get_prompt_with<I, K, V>(
        &self,
        name: &str,
        arguments: I,
        options: RequestOptions,
    ) -> Result<PromptResult, ClientError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), Value::String(v.into())))
            .collect();
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        if !arguments.is_empty() {
            params.insert("arguments".into(), Value::Object(arguments));
        }
        let result = self.call(McpMethod::GetPrompt, params, &options).await?;
        PromptResult::from_json(&result).map_err(ClientError::invalid)
    }

    /// Asks for completions of an argument (`completion/complete`); `context` holds the
    /// arguments already given (sent from 2025-06-18).
    pub async fn complete(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
        context: Map<String, Value>,
    ) -> Result<Completion, ClientError> {
        let reference = match reference {
            CompletionRef::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
            CompletionRef::Resource(uri) => json!({"type": "ref/resource", "uri": uri}),
        };
        let mut params = Map::new();
        params.insert("ref".into(), reference);
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        if !context.is_empty() {
            params.insert("context".into(), json!({"arguments": context}));
        }
        let result = self
            .call(McpMethod::Complete, params, &RequestOptions::new())
            .await?;
        let completion = Completion::from_json(result.get("completion").unwrap_or(&Value::Null))
            .map_err(ClientError::invalid)?;
        Ok(match result.get("_meta") {
            Some(Value::Object(meta)) => completion.with_meta(meta.clone()),
            _ => completion,
        })
    }

    /// Sets the lowest level of log messages the server sends: `logging/setLevel` in a
    /// legacy session; in 2026-07-28, the level goes in the `_meta` of every request.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), ClientError> {
        self.core.set_log_level(level);
        if self.version().era() == Era::Legacy {
            let mut params = Map::new();
            params.insert("level".into(), json!(level));
            self.call(McpMethod::SetLevel, params, &RequestOptions::new())
                .await?;
        }
        Ok(())
    }

    /// Subscribes to a resource's updates (`resources/subscribe`, legacy sessions);
    /// they arrive as [`Notification::ResourceUpdated`](super::Notification). If the
    /// server ends the session, the client subscribes again in the new one. In
    /// 2026-07-28, use [`Client::listen`].
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.subscription(McpMethod::Subscribe, uri).await
    }

    /// Ends a subscription ([`Client::subscribe`]).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.subscription(McpMethod::Unsubscribe, uri).await
    }

    async fn subscription(&self, method: McpMethod, uri: &str) -> Result<(), ClientError> {
        if self.version().era() == Era::Modern {
            return Err(ClientError::unsupported(format!(
                "`{}` is not part of MCP {}: use subscriptions/listen",
                method.name(),
                self.version()
            )));
        }
        let mut params = Map::new();
        params.insert("uri".into(), json!(uri));
        self.call(method, params, &RequestOptions::new()).await?;
        self.core
            .record_subscription(uri, method == McpMethod::Subscribe);
        Ok(())
    }

    /// Pings the server (legacy sessions; 2026-07-28 has no `ping`, and this sends
    /// `server/discover` instead).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.version().era() == Era::Modern {
            McpMethod::Discover
        } else {
            McpMethod::Ping
        };
        self.call(method, Map::new(), &RequestOptions::new())
            .await
            .map(|_| ())
    }

    /// Tells the server the client's roots changed (legacy sessions; a 2026-07-28 server
    /// asks for them when it needs them).
    pub async fn notify_roots_changed(&self) -> Result<(), ClientError> {
        let v = self.version();
        if v.era() == Era::Modern {
            return Ok(());
        }
        self.core
            .notify(v, McpMethod::RootsListChanged.name(), None)
            .await
    }

    /// Calls `method`, a method outside the specification that the server serves for an
    /// extension (see [`ServerInfo::extension`](crate::ServerInfo::extension)): `params`
    /// encoded as the request's params (a JSON object), the result decoded as `R` (keys
    /// `R` does not name, such as 2026-07-28's `resultType`, are ignored unless `R` says
    /// otherwise). A server that does not serve it, or no longer declares its extension,
    /// answers `-32601`.
    pub async fn call_custom<P, R>(&self, method: &str, params: &P) -> Result<R, ClientError>
    where
        P: serde::Serialize + ?Sized,
        R: serde::de::DeserializeOwned,
    {
        let params = serde_json::to_value(params).map_err(|e| {
            ClientError::invalid(format!("{method}: the params do not encode: {e}"))
        })?;
        let result = self.request(method, params, RequestOptions::new()).await?;
        serde_json::from_value(result)
            .map_err(|e| ClientError::invalid(format!("{method}: the result does not decode: {e}")))
    }

    /// Sends any request (its params an object or `null`), and returns the raw result:
    /// known methods are still shaped for the revision in force, 2026-07-28 requests
    /// still carry their `_meta` and `input_required` rounds are still answered.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, ClientError> {
        let params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::new(
                    ClientErrorKind::Unsupported,
                    format!("params must be an object, not {other}"),
                ))
            }
        };
        match McpMethod::from_name(method) {
            Some(m) => self.call(m, params, &options).await,
            None => self.send(self.version(), method, params, &options).await,
        }
    }
}
