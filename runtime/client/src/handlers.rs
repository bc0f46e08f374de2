//! How the client answers what a server asks — sampling, elicitation, roots — in every
//! era: one set of handlers serves a legacy server request (`sampling/createMessage`
//! sent to the client) and a 2026-07-28 input request (an entry of `inputRequests` in an
//! `input_required` result). The ask is decoded through the revision's generated type,
//! the handler sees the neutral model, and its answer is projected back through the
//! revision's result type.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use mcp_runtime::model::{Elicitation, Root, SampledMessage, SamplingRequest};
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::shape::{by_revision, project};
use mcp_runtime::protocol::version::ProtocolVersion;
use mcp_runtime::wire::{ErrorCode, RpcError};

type Answer<T> = Pin<Box<dyn Future<Output = Result<T, RpcError>> + Send + 'static>>;
type SamplingFn = Arc<dyn Fn(SamplingRequest) -> Answer<SampledMessage> + Send + Sync>;
type ElicitFn = Arc<dyn Fn(ElicitRequest) -> Answer<Elicitation<Map<String, Value>>> + Send + Sync>;
type RootsFn = Arc<dyn Fn() -> Answer<Vec<Root>> + Send + Sync>;

/// What a server asks the user (`elicitation/create`): a form to fill in (a message and
/// the flat JSON Schema of the answer) or, from 2025-11-25, a URL to open.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ElicitRequest {
    /// What to tell the user.
    pub message: String,
    /// Form mode: the schema of the answer (a flat object of primitive properties).
    pub requested_schema: Option<Value>,
    /// URL mode: where to send the user.
    pub url: Option<String>,
    /// URL mode: the id the server names when the interaction completes.
    pub elicitation_id: Option<String>,
}

impl ElicitRequest {
    fn from_params(params: &Value) -> Result<ElicitRequest, RpcError> {
        let text = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(ElicitRequest {
            message: text("message")
                .ok_or_else(|| RpcError::invalid_params("elicitation: missing `message`"))?,
            requested_schema: params.get("requestedSchema").cloned(),
            url: text("url"),
            elicitation_id: text("elicitationId"),
        })
    }

    /// Whether this is a URL-mode elicitation.
    pub fn is_url(&self) -> bool {
        self.url.is_some()
    }
}

/// The client's answers to what a server may ask. Each handler set declares its
/// capability (`sampling`, `elicitation`, `roots`); a server asks only for what was
/// declared. Set on the [`ClientBuilder`](super::ClientBuilder) for the whole client, or
/// on [`RequestOptions`](super::RequestOptions) for what one request's server asks while
/// it runs.
#[derive(Clone, Default)]
pub struct ClientHandlers {
    pub(crate) sampling: Option<SamplingFn>,
    pub(crate) elicitation: Option<ElicitFn>,
    pub(crate) roots: Option<RootsFn>,
    /// The sampling handler runs tool-using conversations (declares `sampling.tools`).
    pub(crate) sampling_tools: bool,
}

impl std::fmt::Debug for ClientHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientHandlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .finish()
    }
}

impl ClientHandlers {
    /// No handlers: the client declares none of the capabilities.
    pub fn new() -> ClientHandlers {
        ClientHandlers::default()
    }

    /// Answers `sampling/createMessage` (declares `sampling`).
    #[must_use]
    pub fn sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<SampledMessage, RpcError>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |r| Box::pin(handler(r))));
        self.sampling_tools = false;
        self
    }

    /// [`ClientHandlers::sampling`] for a handler that also runs tool-using conversations
    /// (declares `sampling.tools`, 2025-11-25+): the server may then offer tools
    /// ([`SamplingRequest::tools`]), the handler answer with
    /// [`SampledContent::ToolUse`](mcp_runtime::model::SampledContent::ToolUse) blocks
    /// (stop reason `toolUse`), and the server send their results in its next request.
    #[must_use]
    pub fn sampling_with_tools<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<SampledMessage, RpcError>> + Send + 'static,
    {
        let mut handlers = self.sampling(handler);
        handlers.sampling_tools = true;
        handlers
    }

    /// Answers `elicitation/create` (declares `elicitation`). An accepted form is
    /// completed with the schema's defaults for the fields the answer leaves out.
    #[must_use]
    pub fn elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Elicitation<Map<String, Value>>, RpcError>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |r| Box::pin(handler(r))));
        self
    }

    /// Answers `roots/list` (declares `roots`).
    #[must_use]
    pub fn roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, RpcError>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(handler())));
        self
    }

    /// Answers `roots/list` with a fixed list (declares `roots`).
    #[must_use]
    pub fn fixed_roots(self, roots: Vec<Root>) -> Self {
        let roots = Arc::new(roots);
        self.roots(move || {
            let roots = roots.clone();
            async move { Ok(roots.as_ref().clone()) }
        })
    }

    /// These handlers, with `fallback`'s where these have none.
    pub(crate) fn or(&self, fallback: &ClientHandlers) -> ClientHandlers {
        let (sampling, sampling_tools) = match &self.sampling {
            Some(mine) => (Some(mine.clone()), self.sampling_tools),
            None => (fallback.sampling.clone(), fallback.sampling_tools),
        };
        ClientHandlers {
            sampling,
            sampling_tools,
            elicitation: self
                .elicitation
                .clone()
                .or_else(|| fallback.elicitation.clone()),
            roots: self.roots.clone().or_else(|| fallback.roots.clone()),
        }
    }

    /// The capabilities these handlers declare (neutral, newest shape).
    pub(crate) fn capabilities(&self, url_elicitation: bool) -> Map<String, Value> {
        let mut caps = Map::new();
        if self.sampling.is_some() {
            let sampling = if self.sampling_tools {
                json!({"tools": {}})
            } else {
                json!({})
            };
            caps.insert("sampling".into(), sampling);
        }
        if self.elicitation.is_some() {
            caps.insert(
                "elicitation".into(),
                if url_elicitation {
                    json!({"form": {}, "url": {}})
                } else {
                    json!({})
                },
            );
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({"listChanged": true}));
        }
        caps
    }

    /// Answers one ask of revision `v` (a server request's method and params, or an
    /// input request): the result in `v`'s shape, or the error to answer with.
    pub(crate) async fn answer(
        &self,
        v: ProtocolVersion,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, RpcError> {
        let params = params.unwrap_or_else(|| json!({}));
        let not_handled = || {
            RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("this client does not handle `{method}`"),
            )
        };
        match McpMethod::from_name(method) {
            Some(McpMethod::CreateMessage) => {
                let handler = self.sampling.as_ref().ok_or_else(not_handled)?;
                let params = by_revision!(v, |m| project::<m::CreateMessageRequestParams>(
                    "a sampling request",
                    params
                ))
                .map_err(|e| RpcError::invalid_params(e.message))?;
                let request =
                    SamplingRequest::from_params(&params).map_err(RpcError::invalid_params)?;
                let answer = handler(request).await?;
                by_revision!(v, |m| project::<m::CreateMessageResult>(
                    "the sampled message",
                    answer.to_result()
                ))
            }
            Some(McpMethod::Elicit) => {
                let handler = self.elicitation.as_ref().ok_or_else(not_handled)?;
                let params =
                    by_revision!(v, where elicitation, |m| project::<m::ElicitRequestParams>(
                    "an elicitation",
                    params
                ), else return Err(not_handled()))
                    .map_err(|e| RpcError::invalid_params(e.message))?;
                let request = ElicitRequest::from_params(&params)?;
                let schema = request.requested_schema.clone();
                let result = match handler(request).await? {
                    Elicitation::Accept(mut content) => {
                        if let Some(schema) = &schema {
                            apply_defaults(schema, &mut content);
                        }
                        if schema.is_some() {
                            json!({"action": "accept", "content": content})
                        } else {
                            json!({"action": "accept"})
                        }
                    }
                    Elicitation::Decline => json!({"action": "decline"}),
                    Elicitation::Cancel => json!({"action": "cancel"}),
                };
                project_elicit_result(v, result).ok_or_else(not_handled)?
            }
            Some(McpMethod::ListRoots) => {
                let handler = self.roots.as_ref().ok_or_else(not_handled)?;
                let roots = handler().await?;
                by_revision!(v, |m| project::<m::ListRootsResult>(
                    "the roots",
                    Root::list_result(&roots)
                ))
            }
            Some(McpMethod::Ping) => Ok(json!({})),
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    /// Whether these handlers can answer `method`.
    pub(crate) fn handles(&self, method: &str) -> bool {
        match McpMethod::from_name(method) {
            Some(McpMethod::CreateMessage) => self.sampling.is_some(),
            Some(McpMethod::Elicit) => self.elicitation.is_some(),
            Some(McpMethod::ListRoots) => self.roots.is_some(),
            _ => false,
        }
    }
}

/// An `ElicitResult` for revision `v`. The content's values are checked apart: each
/// revision's schema types them `string | integer | boolean` (2025-11-25+: or a list of
/// strings), yet a form may ask for a `number` (its `NumberSchema`), whose answer — say
/// `95.5` — the result type cannot hold. A finite number is therefore accepted too; the
/// rest of the result goes through the revision's type.
fn project_elicit_result(v: ProtocolVersion, mut result: Value) -> Option<Result<Value, RpcError>> {
    let content = result.as_object_mut().and_then(|r| r.remove("content"));
    let projected = by_revision!(v, where elicitation, |m| project::<m::ElicitResult>(
        "the elicitation answer",
        result
    ), else return None);
    Some(projected.and_then(|mut answer| {
        if let Some(content) = content {
            let valid = content.as_object().is_some_and(|c| {
                c.values().all(|v| match v {
                    Value::String(_) | Value::Bool(_) | Value::Number(_) => true,
                    Value::Array(items) => items.iter().all(Value::is_string),
                    _ => false,
                })
            });
            if !valid {
                return Err(RpcError::internal(
                    "cannot express the elicitation answer: its values must be strings, numbers, booleans or lists of strings",
                ));
            }
            if let Value::Object(a) = &mut answer {
                a.insert("content".into(), content);
            }
        }
        Ok(answer)
    }))
}

/// Fills an accepted form with the defaults its schema gives for the fields left out
/// (SEP-1034: the user saw them pre-filled and did not change them).
fn apply_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (name, prop) in props {
        if let Some(default) = prop.get("default") {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_what_the_answer_leaves_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"}
        }});
        let mut content = Map::new();
        content.insert("age".into(), json!(41));
        apply_defaults(&schema, &mut content);
        assert_eq!(Value::Object(content), json!({"age": 41, "name": "John"}));
    }
}
