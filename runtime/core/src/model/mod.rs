//! What a server author writes, once, for every revision: tools, resources, prompts and
//! their answers. These types are revision-neutral; `shape` turns them into each
//! revision's generated types. They serialize to the newest revision's JSON shape.

mod asking;
mod asking_json;
mod builders;
mod deserialize;
mod serialize;

pub use asking::{
    Elicitation, Root, SampledContent, SampledMessage, SamplingMessage, SamplingRequest,
};
use serde_json::{Map, Value};

/// The contents of a `_meta` member: metadata a server or client attaches to a protocol
/// object (a tool, a resource, a content block, a result, a request), keyed by name.
///
/// Keys follow the specification's naming rules (an optional reverse-DNS prefix and a
/// slash, then a name, e.g. `com.example/trace`); prefixes whose second label is
/// `modelcontextprotocol` or `mcp` are reserved for the protocol and its extensions
/// (MCP Apps' `ui` key is the one exception the extension defines without a prefix).
/// Each revision carries `_meta` only where its schema defines it: shaping drops it
/// elsewhere (tools, resources, prompts and content blocks have it from 2025-06-18,
/// results in every revision).
pub type Meta = Map<String, Value>;
// On the types a call moves several times over (tool results, content blocks, contents)
// `meta` is an `Option<Box<Meta>>`: a map is 72 bytes, and the larger structs cost every
// call their copies (BENCHMARKS.md §1.2, `_meta`), with `_meta` or without.

/// Whether a `_meta` key is reserved for the protocol by its prefix: a prefix (the labels
/// before `/`) whose second label is `modelcontextprotocol` or `mcp`
/// (`io.modelcontextprotocol/serverInfo`, `dev.mcp/…`), as the specification's
/// `MetaObject` defines it. Such keys are the runtime's to write and read; an
/// intermediary that passes `_meta` on (a bridge) leaves them to its own side.
pub fn is_reserved_meta_key(key: &str) -> bool {
    let Some((prefix, _)) = key.split_once('/') else {
        return false;
    };
    matches!(
        prefix.split('.').nth(1),
        Some("modelcontextprotocol" | "mcp")
    )
}

/// An icon a client may show.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Icon {
    /// A URL or a `data:` URI.
    pub src: String,
    /// Its media type.
    pub mime_type: Option<String>,
    /// Sizes, e.g. `48x48`.
    pub sizes: Option<Vec<String>>,
}

impl Icon {
    /// An icon from a URI and media type.
    pub fn new(src: impl Into<String>, mime_type: impl Into<String>) -> Icon {
        Icon {
            src: src.into(),
            mime_type: Some(mime_type.into()),
            sizes: None,
        }
    }
}

/// The server's identity.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Description (2025-11-25+).
    pub description: Option<String>,
    /// Icons (2025-11-25+).
    pub icons: Vec<Icon>,
    /// Website (2025-11-25+).
    pub website_url: Option<String>,
}

impl Implementation {
    /// Name and version only.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Implementation {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: Vec::new(),
            website_url: None,
        }
    }
}

/// Who content is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// Hints on content and resources.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Annotations {
    /// Intended audience.
    pub audience: Option<Vec<Role>>,
    /// Importance, 0 to 1.
    pub priority: Option<serde_json::Number>,
    /// ISO 8601 time of last modification (2025-06-18+).
    pub last_modified: Option<String>,
}

/// Hints about a tool's behaviour (2025-03-26+).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Display name.
    pub title: Option<String>,
    /// Does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// May destroy data.
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect.
    pub idempotent_hint: Option<bool>,
    /// Interacts with an open world.
    pub open_world_hint: Option<bool>,
}

/// The contents of a resource.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceContents {
    /// Text.
    #[non_exhaustive]
    Text {
        /// Its URI.
        uri: String,
        /// Its media type.
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Its `_meta` (2025-06-18+), e.g. MCP Apps' `ui` settings of an app's HTML.
        meta: Option<Box<Meta>>,
    },
    /// Binary, base64-encoded.
    #[non_exhaustive]
    Blob {
        /// Its URI.
        uri: String,
        /// Its media type.
        mime_type: Option<String>,
        /// The bytes, base64.
        blob: String,
        /// Its `_meta` (2025-06-18+).
        meta: Option<Box<Meta>>,
    },
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> ResourceContents {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        }
    }

    /// Binary contents (already base64).
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        base64: impl Into<String>,
    ) -> ResourceContents {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: base64.into(),
            meta: None,
        }
    }
}

/// A block of content in a tool result, a prompt message or a sampling message.
///
/// Built with [`Content::text`], [`Content::image`], [`Content::audio`],
/// [`Content::resource`] (and `Content::ResourceLink(..)`), then
/// [`Content::annotations`] and [`Content::meta`], read with [`Content::metadata`]; matched with `..` (a field a later
/// revision adds is no break).
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// Text.
    #[non_exhaustive]
    Text {
        /// The text.
        text: String,
        /// Hints.
        annotations: Option<Annotations>,
        /// Its `_meta` (2025-06-18+).
        meta: Option<Box<Meta>>,
    },
    /// An image, base64.
    #[non_exhaustive]
    Image {
        /// The bytes, base64.
        data: String,
        /// Its media type.
        mime_type: String,
        /// Hints.
        annotations: Option<Annotations>,
        /// Its `_meta` (2025-06-18+).
        meta: Option<Box<Meta>>,
    },
    /// Audio, base64 (2025-03-26+; older revisions get a text notice).
    #[non_exhaustive]
    Audio {
        /// The bytes, base64.
        data: String,
        /// Its media type.
        mime_type: String,
        /// Hints.
        annotations: Option<Annotations>,
        /// Its `_meta` (2025-06-18+).
        meta: Option<Box<Meta>>,
    },
    /// A link to a resource (2025-06-18+; older revisions get a text block naming it).
    ResourceLink(ResourceLink),
    /// A resource embedded in full.
    #[non_exhaustive]
    Resource {
        /// The contents.
        resource: ResourceContents,
        /// Hints.
        annotations: Option<Annotations>,
        /// The block's own `_meta` (2025-06-18+; the contents have their own).
        meta: Option<Box<Meta>>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An image block.
    pub fn image(base64: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content::Image {
            data: base64.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio block.
    pub fn audio(base64: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content::Audio {
            data: base64.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Content {
        Content::Resource {
            resource: contents,
            annotations: None,
            meta: None,
        }
    }
}

/// A pointer to a resource, as content.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Media type.
    pub mime_type: Option<String>,
    /// Its `_meta` (2025-06-18+).
    pub meta: Option<Box<Meta>>,
}

/// A tool as listed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Tool {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// What it does.
    pub description: Option<String>,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// JSON Schema of `structuredContent` (2025-06-18+).
    pub output_schema: Option<Value>,
    /// Behaviour hints (2025-03-26+).
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25+).
    pub icons: Vec<Icon>,
    /// Its `_meta` (2025-06-18+), e.g. MCP Apps' `ui` (the app that shows its results).
    pub meta: Option<Meta>,
    /// Whether a call may run as a task ([`TaskSupport`]; default: never). Listed as
    /// `execution.taskSupport` to 2025-11-25 clients; 2026-07-28 lists no such field (the
    /// server decides per call, for clients that declared the tasks extension).
    /// Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub task_support: Option<TaskSupport>,
    /// The handler starts its task itself (`Context::start_task`), after asking what it
    /// needs to decide (see [`Tool::task_started_by_handler`]).
    #[cfg(feature = "tasks")]
    pub(crate) task_started_by_handler: bool,
}

/// Whether a tool's calls run as tasks: the call is answered at once with a task handle,
/// the handler runs on, and the client fetches the result later (2025-11-25 experimental
/// tasks, and the 2026-07-28 `io.modelcontextprotocol/tasks` extension). A client that
/// supports neither gets the tool's result directly, as before, unless support is
/// `Required`.
#[cfg(feature = "tasks")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never a task (the default).
    Forbidden,
    /// A task when the client supports tasks (2025-11-25: when the client asks for one with
    /// `params.task`; 2026-07-28: whenever the client declared the extension), else an
    /// ordinary call.
    Optional,
    /// Only as a task: a client that cannot take a task gets an error (`-32601` in
    /// 2025-11-25, `-32021` naming the extension in 2026-07-28); clients of revisions
    /// without tasks get the result directly.
    Required,
}

#[cfg(feature = "tasks")]
impl TaskSupport {
    /// The wire name (`execution.taskSupport`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Whether a call may become a task.
    pub fn allows_task(self) -> bool {
        !matches!(self, TaskSupport::Forbidden)
    }
}

/// What a tool call returns.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// Content blocks.
    pub content: Vec<Content>,
    /// Structured output matching the tool's `outputSchema` (2025-06-18+; older revisions
    /// receive it as a JSON text block if `content` has no text).
    pub structured: Option<Value>,
    /// Whether the tool failed (reported in the result, not as a protocol error).
    pub is_error: bool,
    /// The result's `_meta` (every revision). In 2026-07-28 the runtime adds
    /// `io.modelcontextprotocol/serverInfo` to it, replacing an author's value.
    pub meta: Option<Box<Meta>>,
}

impl ToolResult {
    /// A successful result of one text block.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![Content::text(text)],
            ..ToolResult::default()
        }
    }

    /// A failed result of one text block.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![Content::text(text)],
            is_error: true,
            ..ToolResult::default()
        }
    }

    /// A successful result of the given content.
    pub fn content(content: Vec<Content>) -> ToolResult {
        ToolResult {
            content,
            ..ToolResult::default()
        }
    }
}

/// A resource as listed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Media type.
    pub mime_type: Option<String>,
    /// Size in bytes.
    pub size: Option<u64>,
    /// Hints.
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25+).
    pub icons: Vec<Icon>,
    /// Its `_meta` (2025-06-18+).
    pub meta: Option<Meta>,
}

/// A family of resources named by an RFC 6570 URI template.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The template, e.g. `test://template/{id}/data`.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Media type.
    pub mime_type: Option<String>,
    /// Hints.
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25+).
    pub icons: Vec<Icon>,
    /// Its `_meta` (2025-06-18+).
    pub meta: Option<Meta>,
}

/// An argument of a prompt.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Name.
    pub name: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: Option<bool>,
}

/// A prompt as listed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Arguments.
    pub arguments: Vec<PromptArgument>,
    /// Icons (2025-11-25+).
    pub icons: Vec<Icon>,
    /// Its `_meta` (2025-06-18+).
    pub meta: Option<Meta>,
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

/// What `prompts/get` returns.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PromptResult {
    /// Description.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// The result's `_meta` (every revision).
    pub meta: Option<Meta>,
}

/// What `completion/complete` returns.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Completion {
    /// Suggested values (at most 100 are sent).
    pub values: Vec<String>,
    /// Total number of matches.
    pub total: Option<u64>,
    /// Whether more exist.
    pub has_more: Option<bool>,
    /// The `_meta` of the result that carries it (`CompleteResult`, every revision).
    pub meta: Option<Meta>,
}

/// Log severity (RFC 5424), lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// debug
    Debug,
    /// info
    Info,
    /// notice
    Notice,
    /// warning
    Warning,
    /// error
    Error,
    /// critical
    Critical,
    /// alert
    Alert,
    /// emergency
    Emergency,
}

impl LogLevel {
    /// Parses a level name.
    pub fn parse(s: &str) -> Option<LogLevel> {
        Some(match s {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }
}
