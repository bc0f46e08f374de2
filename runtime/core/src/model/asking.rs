//! The typed side of asking the client: a sampling request and the message the client's
//! model sampled, the client's roots, and the outcome of an elicitation. They are
//! revision-neutral, like the rest of the model; the runtime writes each request in the
//! revision the asking request is served at.

use serde_json::{json, Map, Value};

use super::Role;

/// One message of a sampling conversation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SampledContent,
}

impl SamplingMessage {
    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage {
            role: Role::User,
            content: SampledContent::Text(text.into()),
        }
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage {
            role: Role::Assistant,
            content: SampledContent::Text(text.into()),
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        json!({"role": role, "content": self.content.to_value()})
    }
}

/// A content block of sampling: text, an image or audio (base64), or a block of a kind
/// this runtime does not model, kept as JSON.
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
    /// Another kind of block (tool use and tool results of 2025-11-25 sampling, …).
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
            SampledContent::Other(v) => v.clone(),
        }
    }

    pub(crate) fn from_value(value: &Value) -> SampledContent {
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
