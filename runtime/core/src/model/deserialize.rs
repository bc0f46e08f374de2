//! How the author model is read back from JSON: what a client receives (tools, resources,
//! prompts, results) and what a server's asks carry. Written out by hand over a
//! `serde_json::Value`, like the serialization beside it (no proc macro), and lenient
//! the way a client must be: unknown keys are ignored, `null` counts as absent, and
//! content of a kind this model does not know is an error naming it.
//!
//! The input is expected in the newest revision's shape, or in an older revision's: the
//! client projects every result through its revision's generated type first, and every
//! older shape is a subset of the newest (fields renamed between revisions do not exist).

use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::{Map, Value};

use super::*;

/// A decoding failure: what was being read and what is wrong.
pub(crate) type DecodeError = String;

/// A JSON object being read as `what`.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    what: &'static str,
}

fn obj<'a>(value: &'a Value, what: &'static str) -> Result<Obj<'a>, DecodeError> {
    match value {
        Value::Object(map) => Ok(Obj { map, what }),
        other => Err(format!("{what}: expected an object, got {}", kind(other))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Obj<'a> {
    /// The member `key`, `None` when absent or null.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, expected: &str, got: &Value) -> DecodeError {
        format!(
            "{}: `{key}` must be {expected}, got {}",
            self.what,
            kind(got)
        )
    }

    fn string(&self, key: &str) -> Result<String, DecodeError> {
        self.opt_string(key)?
            .ok_or_else(|| format!("{}: missing field `{key}`", self.what))
    }

    fn opt_string(&self, key: &str) -> Result<Option<String>, DecodeError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    fn opt_bool(&self, key: &str) -> Result<Option<bool>, DecodeError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "a boolean", other)),
        }
    }

    fn opt_u64(&self, key: &str) -> Result<Option<u64>, DecodeError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .map(Some)
                .ok_or_else(|| {
                    self.wrong(key, "a non-negative integer", &Value::Number(n.clone()))
                }),
            Some(other) => Err(self.wrong(key, "a number", other)),
        }
    }

    fn opt_number(&self, key: &str) -> Result<Option<serde_json::Number>, DecodeError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n.clone())),
            Some(other) => Err(self.wrong(key, "a number", other)),
        }
    }

    /// A list of items decoded by `item`; absent is empty.
    fn list<T>(
        &self,
        key: &str,
        item: impl Fn(&Value) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(item).collect(),
            Some(other) => Err(self.wrong(key, "an array", other)),
        }
    }

    /// The `_meta` object, `None` when absent, null or not an object (a peer's malformed
    /// metadata costs it its metadata, not the whole answer).
    fn meta(&self) -> Option<Meta> {
        match self.get("_meta") {
            Some(Value::Object(meta)) => Some(meta.clone()),
            _ => None,
        }
    }

    /// [`Obj::meta`], boxed (see `Meta`).
    fn boxed_meta(&self) -> Option<Box<Meta>> {
        self.meta().map(Box::new)
    }

    fn opt<T>(
        &self,
        key: &str,
        item: impl Fn(&Value) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        self.get(key).map(item).transpose()
    }
}

fn string_item(value: &Value) -> Result<String, DecodeError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(format!("expected a string, got {}", kind(other))),
    }
}

impl Icon {
    /// Reads an icon.
    pub(crate) fn from_json(value: &Value) -> Result<Icon, DecodeError> {
        let o = obj(value, "icon")?;
        Ok(Icon {
            src: o.string("src")?,
            mime_type: o.opt_string("mimeType")?,
            sizes: o.opt("sizes", |v| match v {
                Value::Array(items) => items.iter().map(string_item).collect(),
                // 2025-11-25 drafts had a single string.
                Value::String(s) => Ok(vec![s.clone()]),
                other => Err(format!(
                    "icon sizes: expected an array, got {}",
                    kind(other)
                )),
            })?,
        })
    }
}

impl Implementation {
    /// Reads a peer's identity (`serverInfo`, `clientInfo`).
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<Implementation, DecodeError> {
        let o = obj(value, "implementation")?;
        Ok(Implementation {
            name: o.string("name")?,
            version: o.opt_string("version")?.unwrap_or_default(),
            title: o.opt_string("title")?,
            description: o.opt_string("description")?,
            icons: o.list("icons", Icon::from_json)?,
            website_url: o.opt_string("websiteUrl")?,
        })
    }
}

impl Role {
    pub(crate) fn from_json(value: &Value) -> Result<Role, DecodeError> {
        match value.as_str() {
            Some("user") => Ok(Role::User),
            Some("assistant") => Ok(Role::Assistant),
            _ => Err(format!("unknown role {value}")),
        }
    }
}

impl Annotations {
    pub(crate) fn from_json(value: &Value) -> Result<Annotations, DecodeError> {
        let o = obj(value, "annotations")?;
        Ok(Annotations {
            audience: o.opt("audience", |v| match v {
                Value::Array(items) => items.iter().map(Role::from_json).collect(),
                other => Err(format!("audience: expected an array, got {}", kind(other))),
            })?,
            priority: o.opt_number("priority")?,
            last_modified: o.opt_string("lastModified")?,
        })
    }
}

impl ToolAnnotations {
    pub(crate) fn from_json(value: &Value) -> Result<ToolAnnotations, DecodeError> {
        let o = obj(value, "tool annotations")?;
        Ok(ToolAnnotations {
            title: o.opt_string("title")?,
            read_only_hint: o.opt_bool("readOnlyHint")?,
            destructive_hint: o.opt_bool("destructiveHint")?,
            idempotent_hint: o.opt_bool("idempotentHint")?,
            open_world_hint: o.opt_bool("openWorldHint")?,
        })
    }
}

impl Tool {
    /// Reads a tool as listed. The schemas are kept verbatim.
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<Tool, DecodeError> {
        let o = obj(value, "tool")?;
        Ok(Tool {
            name: o.string("name")?,
            title: o.opt_string("title")?,
            description: o.opt_string("description")?,
            input_schema: o
                .get("inputSchema")
                .cloned()
                .ok_or_else(|| "tool: missing field `inputSchema`".to_owned())?,
            output_schema: o.get("outputSchema").cloned(),
            annotations: o.opt("annotations", ToolAnnotations::from_json)?,
            icons: o.list("icons", Icon::from_json)?,
            meta: o.meta(),
            #[cfg(feature = "tasks")]
            task_support: o
                .get("execution")
                .and_then(|e| e.get("taskSupport"))
                .and_then(Value::as_str)
                .and_then(|s| match s {
                    "forbidden" => Some(TaskSupport::Forbidden),
                    "optional" => Some(TaskSupport::Optional),
                    "required" => Some(TaskSupport::Required),
                    _ => None,
                }),
            #[cfg(feature = "tasks")]
            task_started_by_handler: false,
        })
    }
}

impl Resource {
    /// Reads a resource as listed.
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<Resource, DecodeError> {
        let o = obj(value, "resource")?;
        Ok(Resource {
            uri: o.string("uri")?,
            name: o.string("name")?,
            title: o.opt_string("title")?,
            description: o.opt_string("description")?,
            mime_type: o.opt_string("mimeType")?,
            size: o.opt_u64("size")?,
            annotations: o.opt("annotations", Annotations::from_json)?,
            icons: o.list("icons", Icon::from_json)?,
            meta: o.meta(),
        })
    }
}

impl ResourceTemplate {
    /// Reads a resource template as listed.
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<ResourceTemplate, DecodeError> {
        let o = obj(value, "resource template")?;
        Ok(ResourceTemplate {
            uri_template: o.string("uriTemplate")?,
            name: o.string("name")?,
            title: o.opt_string("title")?,
            description: o.opt_string("description")?,
            mime_type: o.opt_string("mimeType")?,
            annotations: o.opt("annotations", Annotations::from_json)?,
            icons: o.list("icons", Icon::from_json)?,
            meta: o.meta(),
        })
    }
}

impl PromptArgument {
    pub(crate) fn from_json(value: &Value) -> Result<PromptArgument, DecodeError> {
        let o = obj(value, "prompt argument")?;
        Ok(PromptArgument {
            name: o.string("name")?,
            title: o.opt_string("title")?,
            description: o.opt_string("description")?,
            required: o.opt_bool("required")?,
        })
    }
}

impl Prompt {
    /// Reads a prompt as listed.
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<Prompt, DecodeError> {
        let o = obj(value, "prompt")?;
        Ok(Prompt {
            name: o.string("name")?,
            title: o.opt_string("title")?,
            description: o.opt_string("description")?,
            arguments: o.list("arguments", PromptArgument::from_json)?,
            icons: o.list("icons", Icon::from_json)?,
            meta: o.meta(),
        })
    }
}

impl ResourceContents {
    /// Reads the contents of a resource (text or blob).
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<ResourceContents, DecodeError> {
        let o = obj(value, "resource contents")?;
        let uri = o.string("uri")?;
        let mime_type = o.opt_string("mimeType")?;
        let meta = o.boxed_meta();
        if let Some(text) = o.opt_string("text")? {
            return Ok(ResourceContents::Text {
                uri,
                mime_type,
                text,
                meta,
            });
        }
        match o.opt_string("blob")? {
            Some(blob) => Ok(ResourceContents::Blob {
                uri,
                mime_type,
                blob,
                meta,
            }),
            None => Err("resource contents: neither `text` nor `blob`".into()),
        }
    }
}

impl ResourceLink {
    pub(crate) fn from_json(value: &Value) -> Result<ResourceLink, DecodeError> {
        let o = obj(value, "resource link")?;
        Ok(ResourceLink {
            uri: o.string("uri")?,
            name: o.string("name")?,
            title: o.opt_string("title")?,
            description: o.opt_string("description")?,
            mime_type: o.opt_string("mimeType")?,
            meta: o.boxed_meta(),
        })
    }
}

impl Content {
    /// Reads a content block (by its `type`).
    pub(crate) fn from_json(value: &Value) -> Result<Content, DecodeError> {
        let o = obj(value, "content block")?;
        let annotations = o.opt("annotations", Annotations::from_json)?;
        let meta = o.boxed_meta();
        match o.string("type")?.as_str() {
            "text" => Ok(Content::Text {
                text: o.string("text")?,
                annotations,
                meta,
            }),
            "image" => Ok(Content::Image {
                data: o.string("data")?,
                mime_type: o.string("mimeType")?,
                annotations,
                meta,
            }),
            "audio" => Ok(Content::Audio {
                data: o.string("data")?,
                mime_type: o.string("mimeType")?,
                annotations,
                meta,
            }),
            "resource_link" => ResourceLink::from_json(value).map(Content::ResourceLink),
            "resource" => Ok(Content::Resource {
                resource: ResourceContents::from_json(
                    o.get("resource")
                        .ok_or("content block: missing field `resource`")?,
                )?,
                annotations,
                meta,
            }),
            other => Err(format!("content block of unknown type `{other}`")),
        }
    }
}

impl ToolResult {
    /// Reads a `CallToolResult`.
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<ToolResult, DecodeError> {
        let o = obj(value, "tool result")?;
        Ok(ToolResult {
            content: o.list("content", Content::from_json)?,
            structured: o.get("structuredContent").cloned(),
            is_error: o.opt_bool("isError")?.unwrap_or(false),
            meta: o.boxed_meta(),
        })
    }
}

impl PromptMessage {
    pub(crate) fn from_json(value: &Value) -> Result<PromptMessage, DecodeError> {
        let o = obj(value, "prompt message")?;
        Ok(PromptMessage {
            role: Role::from_json(o.get("role").unwrap_or(&Value::Null))?,
            content: Content::from_json(
                o.get("content")
                    .ok_or("prompt message: missing field `content`")?,
            )?,
        })
    }
}

impl PromptResult {
    /// Reads a `GetPromptResult`.
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<PromptResult, DecodeError> {
        let o = obj(value, "prompt result")?;
        Ok(PromptResult {
            description: o.opt_string("description")?,
            messages: o.list("messages", PromptMessage::from_json)?,
            meta: o.meta(),
        })
    }
}

impl Completion {
    /// Reads the `completion` member of a `CompleteResult`.
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<Completion, DecodeError> {
        let o = obj(value, "completion")?;
        Ok(Completion {
            values: o.list("values", string_item)?,
            total: o.opt_u64("total")?,
            has_more: o.opt_bool("hasMore")?,
            meta: None,
        })
    }
}

impl LogLevel {
    #[doc(hidden)]
    pub fn from_json(value: &Value) -> Result<LogLevel, DecodeError> {
        value
            .as_str()
            .and_then(LogLevel::parse)
            .ok_or_else(|| format!("unknown log level {value}"))
    }
}

/// `Deserialize` through a `Value` and the readers above: the model can be read with
/// serde (`serde_json::from_str::<Tool>(…)`) without a derive.
macro_rules! deserialize_via_value {
    ($($ty:ident),* $(,)?) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = Value::deserialize(deserializer)?;
                $ty::from_json(&value).map_err(D::Error::custom)
            }
        }
    )*};
}

deserialize_via_value!(
    Icon,
    Implementation,
    Role,
    Annotations,
    ToolAnnotations,
    Tool,
    Resource,
    ResourceTemplate,
    PromptArgument,
    Prompt,
    ResourceContents,
    ResourceLink,
    Content,
    ToolResult,
    PromptMessage,
    PromptResult,
    Completion,
    LogLevel,
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_serializes_reads_back_the_same() {
        let tool = Tool::new("forecast", "Tomorrow's weather")
            .title("Forecast")
            .read_only()
            .output_schema(json!({"type": "object"}))
            .icon(Icon::new("https://example.com/sun.png", "image/png").sizes(["48x48"]));
        let back: Tool = serde_json::from_value(serde_json::to_value(&tool).unwrap()).unwrap();
        assert_eq!(back, tool);

        let result = ToolResult {
            content: vec![
                Content::text("hi"),
                Content::image("aGk=", "image/png"),
                Content::ResourceLink(ResourceLink::new("file:///a", "a")),
                Content::resource(ResourceContents::blob("file:///b", "image/png", "aGk=")),
            ],
            structured: Some(json!({"t": 1})),
            is_error: true,
            meta: None,
        };
        let json = json!({
            "content": result.content.iter().map(|c| serde_json::to_value(c).unwrap()).collect::<Vec<_>>(),
            "structuredContent": {"t": 1},
            "isError": true,
        });
        let back: ToolResult = serde_json::from_value(json).unwrap();
        assert_eq!(back, result);

        let prompt = PromptResult::new([PromptMessage::assistant("x")]).description("d");
        let back: PromptResult =
            serde_json::from_value(serde_json::to_value(&prompt).unwrap()).unwrap();
        assert_eq!(back, prompt);
    }

    #[test]
    fn nulls_are_absent_and_errors_name_the_problem() {
        let r =
            Resource::from_json(&json!({"uri": "u", "name": "n", "mimeType": null, "size": 3.0}))
                .unwrap();
        assert_eq!(r.mime_type, None);
        assert_eq!(r.size, Some(3));
        let e = Tool::from_json(&json!({"name": "t"})).unwrap_err();
        assert!(e.contains("inputSchema"), "{e}");
        let e = Content::from_json(&json!({"type": "hologram"})).unwrap_err();
        assert!(e.contains("hologram"), "{e}");
    }
}
