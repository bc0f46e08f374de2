//! The typed side of asking the client: a sampling request and the message the client's
//! model sampled, the client's roots, and the outcome of an elicitation. They are
//! revision-neutral, like the rest of the model; the runtime writes each request in the
//! revision the asking request is served at.

use serde_json::{json, Map, Value};

use super::{Content, Role, Tool};

/// One message of a sampling conversation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: one block, or several (2025-11-25+: a model's tool uses, the
    /// results answering them).
    pub content: Vec<SampledContent>,
}

impl SamplingMessage {
    /// A message of `role` made of `content`.
    pub fn new(role: Role, content: Vec<SampledContent>) -> SamplingMessage {
        SamplingMessage { role, content }
    }

    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage::new(Role::User, vec![SampledContent::Text(text.into())])
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage::new(Role::Assistant, vec![SampledContent::Text(text.into())])
    }

    /// The user's message giving the results of the model's tool uses (2025-11-25+):
    /// each a [`SampledContent::ToolResult`].
    pub fn tool_results(results: Vec<SampledContent>) -> SamplingMessage {
        SamplingMessage::new(Role::User, results)
    }

    pub(crate) fn to_value(&self) -> Value {
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        // One block as an object (what every revision reads), several as an array.
        let content = match self.content.as_slice() {
            [one] => one.to_value(),
            many => Value::Array(many.iter().map(SampledContent::to_value).collect()),
        };
        json!({"role": role, "content": content})
    }
}

/// A content block of sampling: text, an image or audio (base64), a model's tool use
/// and its result (2025-11-25+), or a block of a kind this runtime does not model, kept
/// as JSON.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SampledContent {
    /// Text.
    Text(String),
    /// An image.
    Image {
        /// The bytes, base64.
        data: String,
        /// Its media type.
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// The bytes, base64.
        data: String,
        /// Its media type.
        mime_type: String,
    },
    /// The model calls a tool the request offered (`tool_use`).
    ToolUse {
        /// Names this use; its result answers with the same id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments, by the tool's input schema.
        input: Map<String, Value>,
        /// The block's `_meta`, kept so that it travels back with the conversation
        /// (the specification asks clients to preserve it).
        meta: Option<Map<String, Value>>,
    },
    /// What a tool use gave (`tool_result`), in the user's next message.
    ToolResult {
        /// The id of the [`SampledContent::ToolUse`] it answers.
        tool_use_id: String,
        /// The result's content, as a tool call's.
        content: Vec<Content>,
        /// Its structured result, if the tool has one.
        structured: Option<Value>,
        /// Whether the tool failed.
        is_error: bool,
        /// The block's `_meta`, kept as for a tool use.
        meta: Option<Map<String, Value>>,
    },
    /// Another kind of block, as JSON.
    Other(Value),
}

impl SampledContent {
    pub(crate) fn to_value(&self) -> Value {
        match self {
            SampledContent::Text(text) => json!({"type": "text", "text": text}),
            SampledContent::Image { data, mime_type } => {
                json!({"type": "image", "data": data, "mimeType": mime_type})
            }
            SampledContent::Audio { data, mime_type } => {
                json!({"type": "audio", "data": data, "mimeType": mime_type})
            }
            SampledContent::ToolUse {
                id,
                name,
                input,
                meta,
            } => {
                let mut block = Map::new();
                block.insert("type".into(), json!("tool_use"));
                block.insert("id".into(), json!(id));
                block.insert("name".into(), json!(name));
                block.insert("input".into(), Value::Object(input.clone()));
                if let Some(meta) = meta {
                    block.insert("_meta".into(), Value::Object(meta.clone()));
                }
                Value::Object(block)
            }
            SampledContent::ToolResult {
                tool_use_id,
                content,
                structured,
                is_error,
                meta,
            } => {
                let content: Vec<Value> = content
                    .iter()
                    .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
                    .collect();
                let mut block = Map::new();
                block.insert("type".into(), json!("tool_result"));
                block.insert("toolUseId".into(), json!(tool_use_id));
                block.insert("content".into(), Value::Array(content));
                if let Some(structured) = structured {
                    block.insert("structuredContent".into(), structured.clone());
                }
                if *is_error {
                    block.insert("isError".into(), json!(true));
                }
                if let Some(meta) = meta {
                    block.insert("_meta".into(), Value::Object(meta.clone()));
                }
                Value::Object(block)
            }
            SampledContent::Other(v) => v.clone(),
        }
    }

    /// A tool's result answering tool use `tool_use_id`, as text.
    pub fn tool_result_text(tool_use_id: impl Into<String>, text: impl Into<String>) -> Self {
        SampledContent::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: vec![Content::text(text)],
            structured: None,
            is_error: false,
            meta: None,
        }
    }

    /// A tool use of the model: `name` called with `input` (an object), named `id`.
    pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        SampledContent::ToolUse {
            id: id.into(),
            name: name.into(),
            input: match input {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            meta: None,
        }
    }

    fn tool_block(value: &Value) -> Option<SampledContent> {
        let meta = value.get("_meta").and_then(Value::as_object).cloned();
        let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
        match value.get("type").and_then(Value::as_str)? {
            "tool_use" => Some(SampledContent::ToolUse {
                id: text("id")?,
                name: text("name")?,
                input: value.get("input")?.as_object()?.clone(),
                meta,
            }),
            "tool_result" => Some(SampledContent::ToolResult {
                tool_use_id: text("toolUseId")?,
                content: value
                    .get("content")?
                    .as_array()?
                    .iter()
                    .map(Content::from_json)
                    .collect::<Result<_, _>>()
                    .ok()?,
                structured: value.get("structuredContent").cloned(),
                is_error: value.get("isError").and_then(Value::as_bool) == Some(true),
                meta,
            }),
            _ => None,
        }
    }

    pub(crate) fn from_value(value: &Value) -> SampledContent {
        if let Some(block) = SampledContent::tool_block(value) {
            return block;
        }
        let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
        match (
            value.get("type").and_then(Value::as_str),
            text("data"),
            text("mimeType"),
        ) {
            (Some("text"), _, _) => match text("text") {
                Some(t) => SampledContent::Text(t),
                None => SampledContent::Other(value.clone()),
            },
            (Some("image"), Some(data), Some(mime_type)) => {
                SampledContent::Image { data, mime_type }
            }
            (Some("audio"), Some(data), Some(mime_type)) => {
                SampledContent::Audio { data, mime_type }
            }
            _ => SampledContent::Other(value.clone()),
        }
    }
}

/// What to ask the client's model (`sampling/createMessage`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// A system prompt the client may use.
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Sequences that end sampling.
    pub stop_sequences: Vec<String>,
    /// Model preferences (hints, cost/speed/intelligence priorities), as the spec's JSON.
    pub model_preferences: Option<Value>,
    /// Other fields, in the newest revision's shape (`tools`, `toolChoice`,
    /// `includeContext`, `metadata`…); each revision keeps what it defines.
    pub extra: Map<String, Value>,
}

impl SamplingRequest {
    /// A request to sample at most `max_tokens` tokens; add messages with
    /// [`SamplingRequest::user`] and [`SamplingRequest::message`].
    pub fn new(max_tokens: u32) -> SamplingRequest {
        SamplingRequest {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            extra: Map::new(),
        }
    }

    /// Adds a text message from the user.
    pub fn user(self, text: impl Into<String>) -> SamplingRequest {
        self.message(SamplingMessage::user(text))
    }

    /// Adds a message.
    pub fn message(mut self, message: SamplingMessage) -> SamplingRequest {
        self.messages.push(message);
        self
    }

    /// Sets the system prompt.
    pub fn system_prompt(mut self, text: impl Into<String>) -> SamplingRequest {
        self.system_prompt = Some(text.into());
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f64) -> SamplingRequest {
        self.temperature = Some(temperature);
        self
    }

    /// Adds a stop sequence.
    pub fn stop_sequence(mut self, stop: impl Into<String>) -> SamplingRequest {
        self.stop_sequences.push(stop.into());
        self
    }

    /// Sets model preferences (the spec's `modelPreferences` object).
    pub fn model_preferences(mut self, preferences: Value) -> SamplingRequest {
        self.model_preferences = Some(preferences);
        self
    }

    /// Offers the model a tool it may use (2025-11-25+; the client must have declared
    /// `sampling.tools`, or the ask is refused before it is sent).
    pub fn tool(mut self, tool: &Tool) -> SamplingRequest {
        let tool = serde_json::to_value(tool).unwrap_or(Value::Null);
        match self.extra.get_mut("tools") {
            Some(Value::Array(tools)) => tools.push(tool),
            _ => {
                self.extra.insert("tools".into(), Value::Array(vec![tool]));
            }
        }
        self
    }

    /// How the model may use the tools offered (`toolChoice`, 2025-11-25+).
    pub fn tool_choice(mut self, choice: ToolChoice) -> SamplingRequest {
        self.extra
            .insert("toolChoice".into(), json!({"mode": choice.as_str()}));
        self
    }

    /// The tools offered to the model (what a client's sampling handler reads).
    pub fn tools(&self) -> Vec<Tool> {
        self.extra
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| Tool::from_json(t).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How the model may use them; `None` when the request does not say (`auto`).
    pub fn offered_tool_choice(&self) -> Option<ToolChoice> {
        match self.extra.get("toolChoice")?.get("mode")?.as_str()? {
            "auto" => Some(ToolChoice::Auto),
            "required" => Some(ToolChoice::Required),
            "none" => Some(ToolChoice::None),
            _ => None,
        }
    }

    /// Sets any other field by its wire name (`tools`, `toolChoice`, `includeContext`…).
    pub fn field(mut self, key: impl Into<String>, value: Value) -> SamplingRequest {
        self.extra.insert(key.into(), value);
        self
    }

    /// The request's params in the newest revision's shape: what
    /// [`Ask::CreateMessage`](crate::Ask::CreateMessage) carries.
    pub fn to_params(&self) -> Value {
        let mut p = self.extra.clone();
        p.insert(
            "messages".into(),
            Value::Array(
                self.messages
                    .iter()
                    .map(SamplingMessage::to_value)
                    .collect(),
            ),
        );
        p.insert("maxTokens".into(), json!(self.max_tokens));
        if let Some(s) = &self.system_prompt {
            p.insert("systemPrompt".into(), json!(s));
        }
        if let Some(t) = self.temperature {
            p.insert("temperature".into(), crate::protocol::shape::number(t));
        }
        if !self.stop_sequences.is_empty() {
            p.insert("stopSequences".into(), json!(self.stop_sequences));
        }
        if let Some(m) = &self.model_preferences {
            p.insert("modelPreferences".into(), m.clone());
        }
        Value::Object(p)
    }
}

/// How the model of a sampling request may use the tools offered (`toolChoice.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the default).
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use tools.
    None,
}

impl ToolChoice {
    fn as_str(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
            ToolChoice::None => "none",
        }
    }
}

/// What the client's model answered.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SampledMessage {
    /// Who speaks (the assistant, normally).
    pub role: Role,
    /// The blocks (one in revisions before 2025-11-25).
    pub content: Vec<SampledContent>,
    /// The model that sampled.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, …).
    pub stop_reason: Option<String>,
}

impl SampledMessage {
    /// The text blocks, joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                SampledContent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// The tool uses among the blocks: `(id, name, input)` each (the model stopped with
    /// `toolUse` to have them run).
    pub fn tool_uses(&self) -> Vec<(&str, &str, &Map<String, Value>)> {
        self.content
            .iter()
            .filter_map(|c| match c {
                SampledContent::ToolUse {
                    id, name, input, ..
                } => Some((id.as_str(), name.as_str(), input)),
                _ => None,
            })
            .collect()
    }

    /// The message as it goes back into the conversation (the assistant's turn, its tool
    /// uses included), for the request that gives the tools' results.
    pub fn to_message(&self) -> SamplingMessage {
        SamplingMessage::new(self.role, self.content.clone())
    }

    /// Reads a `CreateMessageResult` (already checked against the revision's type, as
    /// [`Context::ask`](crate::Context::ask) returns it).
    pub fn from_result(result: &Value) -> SampledMessage {
        let content = match result.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().map(SampledContent::from_value).collect(),
            Some(block) => vec![SampledContent::from_value(block)],
            None => Vec::new(),
        };
        SampledMessage {
            role: match result.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                _ => Role::Assistant,
            },
            content,
            model: result
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            stop_reason: result
                .get("stopReason")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}

/// A root the client shares (`roots/list`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Root {
    /// Its URI (`file://…`).
    pub uri: String,
    /// A name to show.
    pub name: Option<String>,
}

impl Root {
    /// Reads a `ListRootsResult` (already checked against the revision's type, as
    /// [`Context::ask`](crate::Context::ask) returns it).
    pub fn from_result(result: &Value) -> Vec<Root> {
        result
            .get("roots")
            .and_then(Value::as_array)
            .map(|roots| {
                roots
                    .iter()
                    .filter_map(|r| {
                        Some(Root {
                            uri: r.get("uri")?.as_str()?.to_owned(),
                            name: r.get("name").and_then(Value::as_str).map(str::to_owned),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// How the user answered an elicitation.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation<T> {
    /// The user submitted this.
    Accept(T),
    /// The user said no.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}
