//! The other side of asking: a client reads what a server asks (a sampling request) and
//! writes its answers (the sampled message, its roots) in the newest revision's shape;
//! the client then projects them through the revision in force.

use serde_json::{json, Map, Value};

use super::asking::{Root, SampledContent, SampledMessage, SamplingMessage, SamplingRequest};
use super::deserialize::DecodeError;
use super::Role;

fn role_str(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

impl SamplingRequest {
    /// Reads the params of `sampling/createMessage`: the known fields, and every other one
    /// kept by its wire name in `extra`.
    #[doc(hidden)]
    pub fn from_params(params: &Value) -> Result<SamplingRequest, DecodeError> {
        let Value::Object(map) = params else {
            return Err("sampling request: params must be an object".into());
        };
        let mut request = SamplingRequest::new(0);
        for (key, value) in map {
            match key.as_str() {
                "messages" => {
                    let Value::Array(messages) = value else {
                        return Err("sampling request: `messages` must be an array".into());
                    };
                    for m in messages {
                        let content = match m.get("content") {
                            Some(Value::Array(blocks)) => {
                                blocks.iter().map(SampledContent::from_value).collect()
                            }
                            Some(block) => vec![SampledContent::from_value(block)],
                            None => Vec::new(),
                        };
                        request.messages.push(SamplingMessage::new(
                            Role::from_json(m.get("role").unwrap_or(&Value::Null))?,
                            content,
                        ));
                    }
                }
                "maxTokens" => {
                    request.max_tokens = value
                        .as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or("sampling request: `maxTokens` must be a whole number")?;
                }
                "systemPrompt" if value.is_string() => {
                    request.system_prompt = value.as_str().map(str::to_owned);
                }
                "temperature" if value.is_number() => request.temperature = value.as_f64(),
                "stopSequences" => {
                    request.stop_sequences = value
                        .as_array()
                        .map(|s| {
                            s.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                }
                "modelPreferences" => request.model_preferences = Some(value.clone()),
                _ if value.is_null() => {}
                _ => {
                    request.extra.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(request)
    }
}

impl SampledMessage {
    /// A text answer of the assistant, from `model`.
    pub fn assistant_text(model: impl Into<String>, text: impl Into<String>) -> SampledMessage {
        SampledMessage {
            role: Role::Assistant,
            content: vec![SampledContent::Text(text.into())],
            model: model.into(),
            stop_reason: Some("endTurn".into()),
        }
    }

    /// The assistant's answer from `model`, made of `content`; its stop reason `toolUse`
    /// when it holds a tool use (the server is to run them), `endTurn` otherwise.
    pub fn assistant(model: impl Into<String>, content: Vec<SampledContent>) -> SampledMessage {
        let uses_tools = content
            .iter()
            .any(|c| matches!(c, SampledContent::ToolUse { .. }));
        SampledMessage {
            role: Role::Assistant,
            content,
            model: model.into(),
            stop_reason: Some(if uses_tools { "toolUse" } else { "endTurn" }.into()),
        }
    }

    /// The `CreateMessageResult` in the newest revision's shape: one block is written as
    /// an object (what every revision accepts), several as an array (2025-11-25+).
    #[doc(hidden)]
    pub fn to_result(&self) -> Value {
        let mut result = Map::new();
        result.insert("role".into(), json!(role_str(self.role)));
        let content = match self.content.as_slice() {
            [one] => one.to_value(),
            [] => json!({"type": "text", "text": ""}),
            many => Value::Array(many.iter().map(SampledContent::to_value).collect()),
        };
        result.insert("content".into(), content);
        result.insert("model".into(), json!(self.model));
        if let Some(reason) = &self.stop_reason {
            result.insert("stopReason".into(), json!(reason));
        }
        Value::Object(result)
    }
}

impl Root {
    /// A root at `uri` (a `file://` URI), without a name.
    pub fn new(uri: impl Into<String>) -> Root {
        Root {
            uri: uri.into(),
            name: None,
        }
    }

    /// Names the root.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Root {
        self.name = Some(name.into());
        self
    }

    /// The root as JSON.
    pub(crate) fn to_value(&self) -> Value {
        match &self.name {
            Some(name) => json!({"uri": self.uri, "name": name}),
            None => json!({"uri": self.uri}),
        }
    }

    /// The `ListRootsResult` of these roots.
    #[doc(hidden)]
    pub fn list_result(roots: &[Root]) -> Value {
        json!({"roots": roots.iter().map(Root::to_value).collect::<Vec<_>>()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampling_request_reads_back_what_a_server_writes() {
        let request = SamplingRequest::new(100)
            .user("What is 2+2?")
            .system_prompt("Be brief")
            .temperature(0.5)
            .field("includeContext", json!("none"));
        let back = SamplingRequest::from_params(&request.to_params()).unwrap();
        assert_eq!(back, request);
    }

    #[test]
    fn answers_are_written_in_the_newest_shape() {
        let answer = SampledMessage::assistant_text("m", "4");
        assert_eq!(
            answer.to_result(),
            json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m", "stopReason": "endTurn"})
        );
        assert_eq!(SampledMessage::from_result(&answer.to_result()), answer);
        let roots = [Root::new("file:///a").name("a"), Root::new("file:///b")];
        assert_eq!(
            Root::from_result(&Root::list_result(&roots)),
            roots.to_vec()
        );
    }
}
