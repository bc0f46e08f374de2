//! Constructors and chained setters for the author model: each type is built from its
//! required fields (`Tool::new("forecast", "Tomorrow's weather")`) and the optional ones
//! are set by name (`.title("Forecast").read_only()`), so no author writes a struct
//! literal full of `None`s, and a field a later revision adds breaks nobody.

#[cfg(feature = "tasks")]
use crate::model::TaskSupport;
use serde_json::{json, Value};

use crate::model::{
    Annotations, Completion, Content, Icon, Implementation, Meta, Prompt, PromptArgument,
    PromptMessage, PromptResult, Resource, ResourceContents, ResourceLink, ResourceTemplate, Role,
    Tool, ToolAnnotations, ToolResult,
};

/// `fn meta(self, key, value) -> Self` and `fn with_meta(self, Meta) -> Self` for types
/// that carry `_meta` in a field of that name.
macro_rules! meta_setters {
    ($($ty:ty),*) => {$(
        impl $ty {
            /// Sets one `_meta` entry (`key` should follow the specification's naming
            /// rules, see [`Meta`]). Sent only to revisions whose schema gives this
            /// object a `_meta`.
            #[must_use]
            pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
                self.meta
                    .get_or_insert_with(Default::default)
                    .insert(key.into(), value.into());
                self
            }

            /// Adds every entry of `meta` to its `_meta` (an entry of the same key is
            /// replaced).
            #[must_use]
            pub fn with_meta(mut self, meta: Meta) -> Self {
                self.meta.get_or_insert_with(Default::default).extend(meta);
                self
            }
        }
    )*};
}

meta_setters!(
    Tool,
    Resource,
    ResourceTemplate,
    Prompt,
    ResourceLink,
    ToolResult,
    PromptResult,
    Completion
);

/// The `_meta` slot of an enum value, whichever variant it is.
fn meta_slot_of_content(content: &mut Content) -> &mut Option<Box<Meta>> {
    match content {
        Content::Text { meta, .. }
        | Content::Image { meta, .. }
        | Content::Audio { meta, .. }
        | Content::Resource { meta, .. } => meta,
        Content::ResourceLink(link) => &mut link.meta,
    }
}

impl Content {
    /// Sets one `_meta` entry of the block (2025-06-18+; see [`Meta`]).
    #[must_use]
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        meta_slot_of_content(&mut self)
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
        self
    }

    /// Adds every entry of `meta` to the block's `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Meta) -> Self {
        meta_slot_of_content(&mut self)
            .get_or_insert_with(Default::default)
            .extend(meta);
        self
    }

    /// Sets the block's hints (a resource link has none: it is returned unchanged).
    #[must_use]
    pub fn annotations(mut self, hints: Annotations) -> Self {
        match &mut self {
            Content::Text { annotations, .. }
            | Content::Image { annotations, .. }
            | Content::Audio { annotations, .. }
            | Content::Resource { annotations, .. } => *annotations = Some(hints),
            Content::ResourceLink(_) => {}
        }
        self
    }

    /// Its `_meta`, if any.
    pub fn metadata(&self) -> Option<&Meta> {
        match self {
            Content::Text { meta, .. }
            | Content::Image { meta, .. }
            | Content::Audio { meta, .. }
            | Content::Resource { meta, .. } => meta.as_deref(),
            Content::ResourceLink(link) => link.meta.as_deref(),
        }
    }
}

impl ResourceContents {
    /// Sets one `_meta` entry of the contents (2025-06-18+; see [`Meta`]).
    #[must_use]
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta_slot()
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
        self
    }

    /// Adds every entry of `meta` to the contents' `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta_slot()
            .get_or_insert_with(Default::default)
            .extend(meta);
        self
    }

    fn meta_slot(&mut self) -> &mut Option<Box<Meta>> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => meta,
        }
    }

    /// Its `_meta`, if any.
    pub fn metadata(&self) -> Option<&Meta> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => {
                meta.as_deref()
            }
        }
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

/// `fn field(self, value: impl Into<String>) -> Self` for optional text fields.
macro_rules! text_setters {
    ($ty:ty { $($(#[$doc:meta])* $field:ident),* $(,)? }) => {
        impl $ty {
            $(
                $(#[$doc])*
                #[must_use]
                pub fn $field(mut self, value: impl Into<String>) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )*
        }
    };
}

/// `fn icon(self, icon: Icon) -> Self` and `fn icons(..)` for types that list icons
/// (2025-11-25+).
macro_rules! icon_setters {
    ($($ty:ty),*) => {$(
        impl $ty {
            /// Adds an icon (sent to clients of 2025-11-25 and later).
            #[must_use]
            pub fn icon(mut self, icon: Icon) -> Self {
                self.icons.push(icon);
                self
            }

            /// Adds icons (sent to clients of 2025-11-25 and later).
            #[must_use]
            pub fn icons(mut self, icons: impl IntoIterator<Item = Icon>) -> Self {
                self.icons.extend(icons);
                self
            }
        }
    )*};
}

icon_setters!(Implementation, Tool, Resource, ResourceTemplate, Prompt);

text_setters!(Implementation {
    /// Display name (2025-06-18+).
    title,
    /// Description (2025-11-25+).
    description,
    /// Website (2025-11-25+).
    website_url,
});

impl Icon {
    /// Sizes the icon suits, e.g. `48x48` or `any`.
    #[must_use]
    pub fn sizes(mut self, sizes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.sizes = Some(sizes.into_iter().map(Into::into).collect());
        self
    }
}

impl Tool {
    /// A tool taking any object of arguments (`{"type": "object"}`); set a schema with
    /// [`Tool::input_schema`], or register it with `typed_tool`, which derives one.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Tool {
        Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
            #[cfg(feature = "tasks")]
            task_support: None,
            #[cfg(feature = "tasks")]
            task_started_by_handler: false,
        }
    }

    /// Lets its calls run as tasks: one line turns a slow tool into one whose result the
    /// client fetches later (see [`TaskSupport`] and [`Context`](crate::Context)'s task
    /// methods). Nothing else in the handler changes.
    ///
    /// For a client that supports tasks (a 2025-11-25 client that sends `params.task`, a
    /// 2026-07-28 request that declares the `io.modelcontextprotocol/tasks` extension),
    /// the call is answered at once with the task; the handler runs on, its progress
    /// messages become the task's `statusMessage`, its asks reach the client through the
    /// task (2025-11-25: requests on the session, the task `input_required` meanwhile;
    /// 2026-07-28: `inputRequests` on `tasks/get`, answered with `tasks/update`), and
    /// `tasks/cancel` cancels it (`ctx.is_cancelled()`, `ctx.cancelled()`; its future is
    /// dropped). Its result — or its protocol error — is kept for the client to fetch
    /// (`tasks/get`, or 2025-11-25 `tasks/result`) until the task's time to live ends
    /// ([`TaskOptions`](crate::TaskOptions)). Other clients get the result directly.
    ///
    /// ```no_run
    /// use mcp_runtime::model::{Implementation, TaskSupport, Tool};
    /// use mcp_runtime::Server;
    ///
    /// let server = Server::builder(Implementation::new("reports", "1.0.0"))
    ///     .tool(
    ///         Tool::new("yearly_report", "Builds the yearly report").task_support(TaskSupport::Optional),
    ///         |_args, ctx| async move {
    ///             for month in 1..=12 {
    ///                 if ctx.is_cancelled() {
    ///                     return "cancelled".to_owned();
    ///                 }
    ///                 ctx.progress(f64::from(month), Some(12.0), Some(&format!("month {month}"))).await;
    ///                 // … the slow part …
    ///             }
    ///             "the report".to_owned()
    ///         },
    ///     )
    ///     .build();
    /// ```
    #[must_use]
    #[cfg(feature = "tasks")]
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = Some(support);
        self
    }

    /// The handler decides when its call becomes a task, by calling
    /// [`Context::start_task`](crate::Context::start_task) — after asking the client what
    /// it needs first (2026-07-28: those asks are ordinary `input_required` rounds of the
    /// call, resolved before the task exists, as SEP-2663 recommends). Until then the
    /// call is an ordinary one; if the handler never starts its task, its result is
    /// answered directly. Applies to clients of the 2026-07-28 extension; for 2025-11-25,
    /// where the client asks for the task, the task starts at once.
    #[must_use]
    #[cfg(feature = "tasks")]
    pub fn task_started_by_handler(mut self) -> Self {
        self.task_started_by_handler = true;
        self
    }

    /// The JSON Schema of its arguments (an object schema).
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// The JSON Schema of its structured output (sent to clients of 2025-06-18 and later).
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Its behaviour hints (2025-03-26+).
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    fn hints(&mut self) -> &mut ToolAnnotations {
        self.annotations
            .get_or_insert_with(ToolAnnotations::default)
    }

    /// Hints that it does not modify its environment.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.hints().read_only_hint = Some(true);
        self
    }

    /// Hints that it may destroy data.
    #[must_use]
    pub fn destructive(mut self) -> Self {
        self.hints().destructive_hint = Some(true);
        self
    }

    /// Hints that repeating a call has no further effect.
    #[must_use]
    pub fn idempotent(mut self) -> Self {
        self.hints().idempotent_hint = Some(true);
        self
    }

    /// Hints that it interacts with an open world (the web, other people).
    #[must_use]
    pub fn open_world(mut self) -> Self {
        self.hints().open_world_hint = Some(true);
        self
    }
}

text_setters!(Tool {
    /// Display name (2025-06-18+).
    title,
    /// What it does.
    description,
});

text_setters!(ToolAnnotations {
    /// Display name.
    title,
});

/// `fn field(self, value: bool) -> Self` for optional flags.
macro_rules! flag_setters {
    ($ty:ty { $($(#[$doc:meta])* $field:ident),* $(,)? }) => {
        impl $ty {
            $(
                $(#[$doc])*
                #[must_use]
                pub fn $field(mut self, value: bool) -> Self {
                    self.$field = Some(value);
                    self
                }
            )*
        }
    };
}

flag_setters!(ToolAnnotations {
    /// Whether it does not modify its environment.
    read_only_hint,
    /// Whether it may destroy data.
    destructive_hint,
    /// Whether repeating a call has no further effect.
    idempotent_hint,
    /// Whether it interacts with an open world.
    open_world_hint,
});

impl Annotations {
    /// For these audiences.
    #[must_use]
    pub fn audience(mut self, roles: impl IntoIterator<Item = Role>) -> Self {
        self.audience = Some(roles.into_iter().collect());
        self
    }

    /// Importance, from 0 (least) to 1 (most). Whole numbers are written without a
    /// fraction (`1`, not `1.0`).
    #[must_use]
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = if priority.fract() == 0.0 && priority.abs() < 9.0e15 {
            Some(serde_json::Number::from(priority as i64))
        } else {
            serde_json::Number::from_f64(priority)
        };
        self
    }
}

text_setters!(Annotations {
    /// ISO 8601 time of last modification (2025-06-18+).
    last_modified,
});

impl ToolResult {
    /// Adds structured output (the value of `structuredContent`, 2025-06-18+; older
    /// revisions receive it as a JSON text block when the content has no text).
    #[must_use]
    pub fn structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }
}

impl Resource {
    /// A resource by URI and programmatic name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
        }
    }

    /// Its size in bytes.
    #[must_use]
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Hints on audience, priority and freshness.
    #[must_use]
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

text_setters!(Resource {
    /// Display name (2025-06-18+).
    title,
    /// Description.
    description,
    /// Media type.
    mime_type,
});

impl ResourceTemplate {
    /// A family of resources by RFC 6570 URI template (`file:///{path}`) and name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
        }
    }

    /// Hints on audience, priority and freshness.
    #[must_use]
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

text_setters!(ResourceTemplate {
    /// Display name (2025-06-18+).
    title,
    /// Description.
    description,
    /// Media type.
    mime_type,
});

impl ResourceLink {
    /// A link to the resource at `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> ResourceLink {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            meta: None,
        }
    }
}

text_setters!(ResourceLink {
    /// Display name.
    title,
    /// Description.
    description,
    /// Media type.
    mime_type,
});

impl Prompt {
    /// A prompt without arguments; add them with [`Prompt::argument`].
    pub fn new(name: impl Into<String>) -> Prompt {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            icons: Vec::new(),
            meta: None,
        }
    }

    /// Adds an argument.
    #[must_use]
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }
}

text_setters!(Prompt {
    /// Display name (2025-06-18+).
    title,
    /// Description.
    description,
});

impl PromptArgument {
    /// An optional argument; see [`PromptArgument::required`].
    pub fn new(name: impl Into<String>) -> PromptArgument {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: None,
        }
    }

    /// Marks it as one the client must give.
    #[must_use]
    pub fn required(mut self) -> Self {
        self.required = Some(true);
        self
    }
}

text_setters!(PromptArgument {
    /// Display name (2025-06-18+).
    title,
    /// Description.
    description,
});

impl PromptMessage {
    /// A message the user says.
    pub fn user(content: impl Into<Content>) -> PromptMessage {
        PromptMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message the assistant says.
    pub fn assistant(content: impl Into<Content>) -> PromptMessage {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

impl PromptResult {
    /// The given messages, without description.
    pub fn new(messages: impl IntoIterator<Item = PromptMessage>) -> PromptResult {
        PromptResult {
            description: None,
            messages: messages.into_iter().collect(),
            meta: None,
        }
    }
}

text_setters!(PromptResult {
    /// Description.
    description,
});

impl Completion {
    /// These suggestions (at most 100 are sent; the rest is counted in `total`).
    pub fn new(values: impl IntoIterator<Item = impl Into<String>>) -> Completion {
        Completion {
            values: values.into_iter().map(Into::into).collect(),
            ..Completion::default()
        }
    }

    /// The total number of matches.
    #[must_use]
    pub fn total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// Whether more matches exist than those sent.
    #[must_use]
    pub fn has_more(mut self, has_more: bool) -> Self {
        self.has_more = Some(has_more);
        self
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Content {
        Content::text(text)
    }
}

impl From<String> for Content {
    fn from(text: String) -> Content {
        Content::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_is_built_by_name_and_serializes_as_written_out() {
        let tool = Tool::new("forecast", "Tomorrow's weather")
            .title("Forecast")
            .read_only()
            .idempotent()
            .icon(Icon::new("https://example.com/sun.png", "image/png").sizes(["48x48"]));
        assert_eq!(
            serde_json::to_value(&tool).ok(),
            Some(json!({
                "name": "forecast",
                "title": "Forecast",
                "description": "Tomorrow's weather",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true, "idempotentHint": true},
                "icons": [{"src": "https://example.com/sun.png", "mimeType": "image/png", "sizes": ["48x48"]}],
            }))
        );
    }

    #[test]
    fn meta_is_set_by_key_or_whole_and_read_back() {
        let mut ui = Meta::new();
        ui.insert("ui".into(), json!({"resourceUri": "ui://app/view.html"}));
        let tool = Tool::new("t", "d")
            .with_meta(ui)
            .meta("com.example/trace", true);
        let json = serde_json::to_value(&tool).unwrap_or_default();
        assert_eq!(
            json["_meta"],
            json!({"ui": {"resourceUri": "ui://app/view.html"}, "com.example/trace": true})
        );
        let back: Tool = serde_json::from_value(json).expect("a tool");
        assert_eq!(back, tool);

        let block = Content::text("x")
            .annotations(Annotations::default().priority(1.0))
            .meta("k", 1);
        assert_eq!(
            serde_json::to_value(&block).ok(),
            Some(
                json!({"type": "text", "text": "x", "annotations": {"priority": 1}, "_meta": {"k": 1}})
            )
        );
        assert_eq!(block.metadata().map(|m| m["k"].clone()), Some(json!(1)));
        let contents = ResourceContents::text("ui://a", "text/html", "<p>").meta("ui", json!({}));
        assert_eq!(contents.uri(), "ui://a");
        assert_eq!(
            serde_json::to_value(&contents).ok(),
            Some(
                json!({"uri": "ui://a", "mimeType": "text/html", "text": "<p>", "_meta": {"ui": {}}})
            )
        );
        // A later entry of the same key replaces the earlier one.
        let resource = Resource::new("u", "n").meta("k", 1).meta("k", 2);
        assert_eq!(resource.meta.map(|m| m["k"].clone()), Some(json!(2)));
    }

    #[test]
    fn reserved_meta_keys_are_told_by_their_prefix() {
        for reserved in [
            "io.modelcontextprotocol/serverInfo",
            "dev.mcp/x",
            "org.modelcontextprotocol.api/x",
            "com.mcp.tools/x",
        ] {
            assert!(crate::model::is_reserved_meta_key(reserved), "{reserved}");
        }
        for free in [
            "com.example.mcp/x",
            "progressToken",
            "traceparent",
            "ui",
            "mcp/x",
        ] {
            assert!(!crate::model::is_reserved_meta_key(free), "{free}");
        }
    }

    #[test]
    fn prompts_resources_and_templates_are_built_by_name() {
        let prompt = Prompt::new("greet")
            .description("Greets someone")
            .argument(PromptArgument::new("who").required());
        assert_eq!(
            serde_json::to_value(&prompt).ok(),
            Some(json!({"name": "greet", "description": "Greets someone",
                "arguments": [{"name": "who", "required": true}]}))
        );
        let resource = Resource::new("file:///a.txt", "a")
            .mime_type("text/plain")
            .size(3);
        assert_eq!(
            serde_json::to_value(&resource).ok(),
            Some(json!({"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "size": 3}))
        );
        let template = ResourceTemplate::new("file:///{path}", "files").title("Files");
        assert_eq!(
            serde_json::to_value(&template).ok(),
            Some(json!({"uriTemplate": "file:///{path}", "name": "files", "title": "Files"}))
        );
        let result = PromptResult::new([PromptMessage::user("hi")]).description("d");
        assert_eq!(result.messages[0].role, Role::User);
        assert_eq!(Completion::new(["a", "b"]).values, vec!["a", "b"]);
    }
}
