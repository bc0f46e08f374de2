//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): a tool linked to an HTML user
//! interface that the host renders in a sandboxed iframe. [`App`] is the `ui://` resource
//! (its HTML, MIME type `text/html;profile=mcp-app`, and the `_meta.ui` settings the host
//! applies: CSP, permissions, a dedicated origin, border); [`ServerBuilder::app`] serves it
//! and declares the extension; [`Tool::app`] and [`Tool::app_visibility`] set the tool's
//! `_meta.ui`. The shapes are the generated ones of the extension's official schema
//! (`mcp_generated::ext::ui`).
//!
//! ```
//! use mcp_runtime::apps::{App, Visibility};
//! use mcp_runtime::model::{Implementation, Tool};
//! use mcp_runtime::Server;
//!
//! let server = Server::builder(Implementation::new("clock", "1.0.0"))
//!     .app(App::new("ui://clock/view.html", "clock view", "<!doctype html><p>…</p>")
//!         .connect_domains(["https://time.example.com"])
//!         .prefers_border(true))
//!     .tool(Tool::new("now", "The time, shown in a clock").app("ui://clock/view.html"),
//!           |_args, _ctx| async { "12:00" })
//!     // Only the app calls this one: hidden from the model.
//!     .tool(Tool::new("tick", "Advance the clock").app_visibility([Visibility::App]),
//!           |_args, _ctx| async { "12:01" })
//!     .build();
//! ```
//!
//! `_meta` reaches clients of 2025-06-18 and later (the revisions whose tools, resources
//! and contents have it); older clients get the tools and the HTML resource without it.

use std::sync::Arc;

use serde_json::json;

use crate::model::{Meta, Resource, ResourceContents, Tool};
use crate::server::ServerBuilder;

pub use mcp_generated::ext::ui::{
    McpUiResourceMeta as ResourceMeta, McpUiResourceMetaCsp as Csp,
    McpUiResourceMetaPermissions as Permissions, McpUiToolMeta as ToolMeta,
    McpUiToolVisibility as Visibility,
};

/// The extension identifier, declared under `capabilities.extensions` (2026-07-28) or
/// `capabilities.experimental` (older revisions).
pub const EXTENSION_ID: &str = mcp_generated::ext::ui::ID;

/// The MIME type of an app's HTML: what a host looks for before it renders a resource.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme every app resource has.
pub const URI_SCHEME: &str = "ui://";

/// The `_meta` key under which tools, resources and contents carry the extension's
/// settings.
const META_KEY: &str = "ui";

/// An app: a `ui://` resource holding one HTML document, with the settings the host
/// applies when it renders it. Served with [`ServerBuilder::app`].
#[derive(Clone, Debug)]
#[must_use]
pub struct App {
    resource: Resource,
    html: Arc<str>,
    ui: ResourceMeta,
}

impl App {
    /// The app at `uri` (which must start with `ui://`), named `name`, showing `html`.
    ///
    /// # Panics
    ///
    /// If `uri` is not a `ui://` URI: the extension names app resources so, and a host
    /// ignores any other (a programming error in the server, found at start-up).
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> App {
        let uri = uri.into();
        assert!(
            uri.starts_with(URI_SCHEME),
            "an MCP Apps resource URI starts with {URI_SCHEME}: {uri}"
        );
        App {
            resource: Resource::new(uri, name).mime_type(MIME_TYPE),
            html: Arc::from(html.into()),
            ui: ResourceMeta::default(),
        }
    }

    /// Its display name (2025-06-18+).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource = self.resource.title(title);
        self
    }

    /// Its description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource = self.resource.description(description);
        self
    }

    /// The whole Content Security Policy the app needs (without one, the host allows no
    /// outside origin).
    pub fn csp(mut self, csp: Csp) -> Self {
        self.ui.csp = Some(csp);
        self
    }

    /// Origins the app may reach with fetch, XHR and WebSocket (CSP `connect-src`).
    pub fn connect_domains(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let csp = self.ui.csp.get_or_insert_with(Csp::default);
        csp.connect_domains = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Origins the app may load scripts, styles, images, fonts and media from.
    pub fn resource_domains(
        mut self,
        origins: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let csp = self.ui.csp.get_or_insert_with(Csp::default);
        csp.resource_domains = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Browser permissions the app asks for (camera, microphone, geolocation, clipboard
    /// write); the host may refuse them.
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.ui.permissions = Some(permissions);
        self
    }

    /// A dedicated sandbox origin, in the form the host documents.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.ui.domain = Some(domain.into());
        self
    }

    /// Whether the app wants the host to draw a border and background around it (hosts'
    /// defaults differ, so saying is better than not).
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.ui.prefers_border = Some(border);
        self
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.resource.uri
    }

    /// Its `_meta.ui`, as sent.
    pub fn ui_meta(&self) -> &ResourceMeta {
        &self.ui
    }
}

impl ServerBuilder {
    /// Serves `app` as a resource and declares the MCP Apps extension. Its `_meta.ui` is
    /// sent both on the resource in `resources/list` (what a host may review before
    /// reading) and on the contents `resources/read` returns (which the extension makes
    /// authoritative).
    pub fn app(self, app: App) -> Self {
        let App { resource, html, ui } = app;
        let ui = serde_json::to_value(&ui).unwrap_or_else(|_| json!({}));
        let listed = if ui.as_object().is_some_and(|m| !m.is_empty()) {
            resource.meta(META_KEY, ui.clone())
        } else {
            resource
        };
        self.extension(EXTENSION_ID, json!({ "mimeTypes": [MIME_TYPE] }))
            .resource(listed, move |uri, _ctx| {
                let contents = ResourceContents::text(uri, MIME_TYPE, &*html);
                let contents = if ui.as_object().is_some_and(|m| !m.is_empty()) {
                    contents.meta(META_KEY, ui.clone())
                } else {
                    contents
                };
                std::future::ready(contents)
            })
    }
}

/// The tool's `_meta.ui` as the generated shape, to be changed and put back (a `ui`
/// entry that is not of that shape is replaced).
fn tool_ui(tool: &Tool) -> ToolMeta {
    tool.meta
        .as_ref()
        .and_then(|m| m.get(META_KEY))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

fn set_tool_ui(mut tool: Tool, ui: &ToolMeta) -> Tool {
    let value = serde_json::to_value(ui).unwrap_or_else(|_| json!({}));
    tool.meta
        .get_or_insert_with(Meta::new)
        .insert(META_KEY.to_owned(), value);
    tool
}

impl Tool {
    /// Links the tool to the app at `resource_uri` (`_meta.ui.resourceUri`): a host that
    /// supports MCP Apps renders that app with the tool's input and result.
    ///
    /// Only the specification's key is written, not the deprecated flat
    /// `_meta["ui/resourceUri"]` that the TypeScript helpers also set: the extension's
    /// stable specification reads `_meta.ui`.
    #[must_use]
    pub fn app(self, resource_uri: impl Into<String>) -> Self {
        let mut ui = tool_ui(&self);
        ui.resource_uri = Some(resource_uri.into());
        set_tool_ui(self, &ui)
    }

    /// Who may call the tool (`_meta.ui.visibility`; unset means the model and the app).
    /// `[Visibility::App]` hides it from the model: a tool only the app's interface calls.
    #[must_use]
    pub fn app_visibility(self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        let mut ui = tool_ui(&self);
        ui.visibility = Some(visibility.into_iter().collect());
        set_tool_ui(self, &ui)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_tool_links_to_its_app_and_keeps_other_meta() {
        let tool = Tool::new("now", "The time")
            .meta("com.example/trace", true)
            .app("ui://clock/view.html")
            .app_visibility([Visibility::Model, Visibility::App]);
        assert_eq!(
            Value::Object(tool.meta.clone().unwrap_or_default()),
            json!({
                "com.example/trace": true,
                "ui": {"resourceUri": "ui://clock/view.html", "visibility": ["model", "app"]}
            })
        );
        let hidden = Tool::new("tick", "Tick").app_visibility([Visibility::App]);
        assert_eq!(
            hidden.meta.and_then(|m| m.get("ui").cloned()),
            Some(json!({"visibility": ["app"]}))
        );
    }

    #[test]
    fn an_app_carries_its_settings_in_the_extension_shape() {
        let app = App::new("ui://clock/view.html", "clock", "<p>")
            .connect_domains(["https://api.example.com"])
            .resource_domains(["https://cdn.example.com"])
            .domain("clock.example-content.com")
            .prefers_border(false);
        assert_eq!(
            serde_json::to_value(app.ui_meta()).unwrap_or_default(),
            json!({
                "csp": {
                    "connectDomains": ["https://api.example.com"],
                    "resourceDomains": ["https://cdn.example.com"]
                },
                "domain": "clock.example-content.com",
                "prefersBorder": false
            })
        );
    }

    #[test]
    #[should_panic(expected = "starts with ui://")]
    fn an_app_outside_the_ui_scheme_is_refused() {
        let _ = App::new("https://example.com/view.html", "view", "<p>");
    }
}
