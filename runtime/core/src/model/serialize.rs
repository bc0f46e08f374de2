//! How the author model serializes: the newest revision's JSON shape, written out by hand.

use super::*;
use serde::ser::{Serialize, SerializeStruct, Serializer};

// Serialize impls written out rather than derived: the runtime then needs no proc macro
// (serde_derive, and syn with it, are not built for a server that has no other use for
// them). Each writes its fields in declaration order, camelCase, and leaves out `None`
// options and empty lists marked `?`, as the derived impls did.

/// A field value that is left out of the JSON when it is empty.
trait Absent {
    fn absent(&self) -> bool;
}

impl<T> Absent for Option<T> {
    fn absent(&self) -> bool {
        self.is_none()
    }
}

impl<T> Absent for Vec<T> {
    fn absent(&self) -> bool {
        self.is_empty()
    }
}

/// Writes fields of `$value` into the struct state: `name: "key"` always, `name?: "key"`
/// unless empty.
macro_rules! write_fields {
    ($state:ident, $value:expr; ) => {};
    ($state:ident, $value:expr; $field:ident: $key:literal $(, $($rest:tt)*)?) => {
        $state.serialize_field($key, &$value.$field)?;
        write_fields!($state, $value; $($($rest)*)?);
    };
    ($state:ident, $value:expr; $field:ident?: $key:literal $(, $($rest:tt)*)?) => {
        if $value.$field.absent() {
            $state.skip_field($key)?;
        } else {
            $state.serialize_field($key, &$value.$field)?;
        }
        write_fields!($state, $value; $($($rest)*)?);
    };
}

/// `Serialize` for a struct, as `serialize_struct` with the fields listed.
macro_rules! serialize_struct {
    ($ty:ident { $($fields:tt)* }) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut state = serializer.serialize_struct(stringify!($ty), 0)?;
                write_fields!(state, self; $($fields)*);
                state.end()
            }
        }
    };
}

serialize_struct!(Icon { src: "src", mime_type?: "mimeType", sizes?: "sizes" });
serialize_struct!(Implementation {
    name: "name",
    version: "version",
    title?: "title",
    description?: "description",
    icons?: "icons",
    website_url?: "websiteUrl",
});
serialize_struct!(Annotations {
    audience?: "audience",
    priority?: "priority",
    last_modified?: "lastModified",
});
serialize_struct!(ToolAnnotations {
    title?: "title",
    read_only_hint?: "readOnlyHint",
    destructive_hint?: "destructiveHint",
    idempotent_hint?: "idempotentHint",
    open_world_hint?: "openWorldHint",
});
impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut state = serializer.serialize_struct("Tool", 0)?;
        write_fields!(state, self;
            name: "name",
            title?: "title",
            description?: "description",
            input_schema: "inputSchema",
            output_schema?: "outputSchema",
            annotations?: "annotations",
            icons?: "icons",
            meta?: "_meta",
        );
        // `execution.taskSupport` (2025-11-25; projection drops it elsewhere).
        #[cfg(feature = "tasks")]
        match self.task_support {
            Some(support) => state.serialize_field(
                "execution",
                &serde_json::json!({"taskSupport": support.as_str()}),
            )?,
            None => state.skip_field("execution")?,
        }
        #[cfg(not(feature = "tasks"))]
        state.skip_field("execution")?;
        state.end()
    }
}
serialize_struct!(Resource {
    uri: "uri",
    name: "name",
    title?: "title",
    description?: "description",
    mime_type?: "mimeType",
    size?: "size",
    annotations?: "annotations",
    icons?: "icons",
    meta?: "_meta",
});
serialize_struct!(ResourceTemplate {
    uri_template: "uriTemplate",
    name: "name",
    title?: "title",
    description?: "description",
    mime_type?: "mimeType",
    annotations?: "annotations",
    icons?: "icons",
    meta?: "_meta",
});
serialize_struct!(PromptArgument {
    name: "name",
    title?: "title",
    description?: "description",
    required?: "required",
});
serialize_struct!(Prompt {
    name: "name",
    title?: "title",
    description?: "description",
    arguments?: "arguments",
    icons?: "icons",
    meta?: "_meta",
});
serialize_struct!(PromptMessage {
    role: "role",
    content: "content"
});
serialize_struct!(PromptResult {
    description?: "description",
    messages: "messages",
    meta?: "_meta",
});
// `meta` belongs to the `CompleteResult` around the completion: `shape::complete` puts it
// there.
serialize_struct!(Completion { values: "values", total?: "total", has_more?: "hasMore" });

impl ResourceLink {
    /// Its fields, after a `type` tag when it is a content block.
    fn write<S: Serializer>(
        &self,
        serializer: S,
        tag: Option<&'static str>,
    ) -> Result<S::Ok, S::Error> {
        let mut state = serializer.serialize_struct("ResourceLink", 0)?;
        if let Some(tag) = tag {
            state.serialize_field("type", tag)?;
        }
        write_fields!(state, self;
            uri: "uri",
            name: "name",
            title?: "title",
            description?: "description",
            mime_type?: "mimeType",
            meta?: "_meta",
        );
        state.end()
    }
}

impl Serialize for ResourceLink {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.write(serializer, None)
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Untagged: each variant is written as its fields alone.
        let (uri, mime_type, key, body, meta) = match self {
            ResourceContents::Text {
                uri,
                mime_type,
                text,
                meta,
            } => (uri, mime_type, "text", text, meta),
            ResourceContents::Blob {
                uri,
                mime_type,
                blob,
                meta,
            } => (uri, mime_type, "blob", blob, meta),
        };
        let mut state = serializer.serialize_struct("ResourceContents", 0)?;
        state.serialize_field("uri", uri)?;
        if mime_type.absent() {
            state.skip_field("mimeType")?;
        } else {
            state.serialize_field("mimeType", mime_type)?;
        }
        state.serialize_field(key, body)?;
        if meta.absent() {
            state.skip_field("_meta")?;
        } else {
            state.serialize_field("_meta", meta)?;
        }
        state.end()
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Internally tagged: `type` first, then the variant's fields.
        let (tag, text, data, mime_type, resource, annotations, meta) = match self {
            Content::ResourceLink(link) => return link.write(serializer, Some("resource_link")),
            Content::Text {
                text,
                annotations,
                meta,
            } => ("text", Some(text), None, None, None, annotations, meta),
            Content::Image {
                data,
                mime_type,
                annotations,
                meta,
            } => (
                "image",
                None,
                Some(data),
                Some(mime_type),
                None,
                annotations,
                meta,
            ),
            Content::Audio {
                data,
                mime_type,
                annotations,
                meta,
            } => (
                "audio",
                None,
                Some(data),
                Some(mime_type),
                None,
                annotations,
                meta,
            ),
            Content::Resource {
                resource,
                annotations,
                meta,
            } => (
                "resource",
                None,
                None,
                None,
                Some(resource),
                annotations,
                meta,
            ),
        };
        let mut state = serializer.serialize_struct("Content", 0)?;
        state.serialize_field("type", tag)?;
        if let Some(text) = text {
            state.serialize_field("text", text)?;
        }
        if let Some(data) = data {
            state.serialize_field("data", data)?;
        }
        if let Some(mime_type) = mime_type {
            state.serialize_field("mimeType", mime_type)?;
        }
        if let Some(resource) = resource {
            state.serialize_field("resource", resource)?;
        }
        if annotations.absent() {
            state.skip_field("annotations")?;
        } else {
            state.serialize_field("annotations", annotations)?;
        }
        if meta.absent() {
            state.skip_field("_meta")?;
        } else {
            state.serialize_field("_meta", meta)?;
        }
        state.end()
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Role::User => serializer.serialize_unit_variant("Role", 0, "user"),
            Role::Assistant => serializer.serialize_unit_variant("Role", 1, "assistant"),
        }
    }
}

impl Serialize for LogLevel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (index, name) = match self {
            LogLevel::Debug => (0, "debug"),
            LogLevel::Info => (1, "info"),
            LogLevel::Notice => (2, "notice"),
            LogLevel::Warning => (3, "warning"),
            LogLevel::Error => (4, "error"),
            LogLevel::Critical => (5, "critical"),
            LogLevel::Alert => (6, "alert"),
            LogLevel::Emergency => (7, "emergency"),
        };
        serializer.serialize_unit_variant("LogLevel", index, name)
    }
}
