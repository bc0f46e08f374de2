//! A client for every MCP revision: it connects to a server over stdio (a spawned
//! process), Streamable HTTP or HTTP+SSE, finds the revision both speak, and hands back
//! the same neutral model server authors write ([`Tool`](mcp_runtime::model::Tool),
//! [`ToolResult`](mcp_runtime::model::ToolResult), [`Resource`](mcp_runtime::model::Resource), …).
//!
//! ```no_run
//! use mcp_runtime_client::Client;
//! use mcp_runtime::model::Implementation;
//!
//! # async fn run() -> Result<(), mcp_runtime_client::ClientError> {
//! let client = Client::builder(Implementation::new("my-client", "1.0.0"))
//!     .connect_command("my-server", ["--flag"])
//!     .await?;
//! for tool in client.list_all_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client
//!     .call_tool("greet", serde_json::json!({"name": "Ada"}))
//!     .await?;
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! **Negotiation.** By default the client accepts every revision. It probes with
//! `server/discover` (2026-07-28): a modern server answers it (or names the versions it
//! serves), and the client then speaks statelessly, every request carrying its `_meta`
//! (and over HTTP the `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*` headers). Any other answer means a legacy server: the client opens a
//! session with `initialize`, offering the newest legacy revision, and accepts the
//! server's counter-offer when it is one the client accepts.
//! [`ClientBuilder::versions`] narrows what the client accepts (one revision pins it).
//!
//! **Shaping.** Every request's params are projected through the negotiated revision's
//! generated type, and every result is decoded as that revision's result type before it
//! becomes a model value.
//!
//! **The server asking.** [`ClientHandlers`] answer sampling, elicitation and roots in
//! every era: a legacy server's requests, and 2026-07-28 `input_required` results — the
//! client answers the input requests and retries the request with the answers and the
//! server's `requestState`, up to [`ClientBuilder::max_input_rounds`] times.
//!
//! **Authorization.** Over HTTP, [`ClientBuilder::oauth`] with an [`OAuth`] makes the
//! client authorize when the server answers `401` — discovery, registration, the
//! authorization code flow with PKCE through a user agent the application plugs in (or
//! client credentials), refresh and step-up — as each revision's authorization
//! specification says; see [`auth`]. A fixed token is a header
//! ([`ClientBuilder::header`]).
//!
//! **Requests** time out ([`ClientBuilder::timeout`], or per request with
//! [`RequestOptions`]); a request whose future is dropped is cancelled
//! (`notifications/cancelled`, or on 2026-07-28 HTTP by closing its stream); progress
//! of a request reaches [`RequestOptions::on_progress`]. Everything the server
//! announces arrives on [`Client::notifications`].
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod api;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod auth;
mod builder;
mod core;
mod error;
mod handlers;
mod headers;
mod link;
mod listen;
mod negotiate;
/// The SSE parser of the HTTP links, for the fuzz targets (not API).
#[doc(hidden)]
pub mod sse {
    pub use crate::link::sse::{Event, Parser, TooLarge};
}
mod notification;
#[cfg(feature = "output-validation")]
mod output_schema;
mod shape;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

pub use api::{CompletionRef, Page};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use auth::OAuth;
pub use builder::ClientBuilder;
pub use error::{ClientError, ClientErrorKind};
pub use handlers::{ClientHandlers, ElicitRequest};
pub use listen::{ListenFilter, Subscription};
pub use notification::{Notification, Notifications};

use mcp_runtime::model::Implementation;
use mcp_runtime::protocol::version::ProtocolVersion;

/// A connection to one MCP server. Cheap to clone: clones share the connection, which
/// closes when the last clone is dropped (or at [`Client::close`]).
#[derive(Clone)]
pub struct Client {
    core: Arc<core::Core>,
    server: Arc<ServerInfo>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server)
            .finish()
    }
}

/// What the client knows of its server after negotiation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The revision in force.
    pub version: ProtocolVersion,
    /// The server's identity (`serverInfo`; in 2026-07-28 from the discover result).
    pub implementation: Option<Implementation>,
    /// The server's capabilities, in the revision's shape.
    pub capabilities: Value,
    /// The server's instructions, if any.
    pub instructions: Option<String>,
    /// The revisions the server serves (2026-07-28 `supportedVersions`; in a legacy
    /// session, the negotiated one).
    pub supported_versions: Vec<String>,
}

impl ServerInfo {
    /// The settings of extension `id` (e.g. `io.modelcontextprotocol/ui`) if the server
    /// declared it: `capabilities.extensions[id]`, or `capabilities.experimental[id]`,
    /// where servers of revisions without `extensions` (before 2026-07-28) declare one.
    pub fn extension(&self, id: &str) -> Option<&Value> {
        ["extensions", "experimental"]
            .iter()
            .filter_map(|place| self.capabilities.get(place))
            .find_map(|declared| declared.get(id))
    }

    /// Whether the server declared a capability (`"tools"`, `"logging"`, …).
    pub fn supports(&self, capability: &str) -> bool {
        self.capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }
}

/// Progress of a request, as the server reports it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A message (2025-03-26+).
    pub message: Option<String>,
}

pub(crate) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Options of one request: its timeout, a progress callback, the handlers for what the
/// server asks while it runs, extra `_meta`.
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) on_progress: Option<ProgressFn>,
    pub(crate) handlers: Option<ClientHandlers>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) trace: Option<mcp_runtime::observe::TraceContext>,
    pub(crate) capabilities: Option<Value>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("handlers", &self.handlers)
            .field("meta", &self.meta)
            .field("trace", &self.trace)
            .field("capabilities", &self.capabilities)
            .finish()
    }
}

impl RequestOptions {
    /// The client's defaults.
    pub fn new() -> RequestOptions {
        RequestOptions::default()
    }

    /// The trace this request continues when no tracing backend gives its span a context
    /// of its own (`mcp_runtime::observe::TraceBridge`): a bridge passes on the context
    /// its own request arrived with, so that the trace is not cut where nothing exports.
    /// Written into the request's `_meta` (`traceparent`, `tracestate`, `baggage`).
    #[must_use]
    pub fn trace_context(mut self, context: mcp_runtime::observe::TraceContext) -> Self {
        self.trace = Some(context);
        self
    }

    /// How long to wait for the answer (`Duration::ZERO`: forever). When it passes the
    /// request is cancelled and fails with [`ClientErrorKind::Timeout`].
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks the server for progress (a `progressToken`) and calls `f` with each report.
    #[must_use]
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Handlers for what the server asks on behalf of this request (ahead of the
    /// client's own). A legacy server's request is matched to this request when its
    /// transport tells (an HTTP response stream), or when this is the only request in
    /// flight with handlers of its own.
    #[must_use]
    pub fn handlers(mut self, handlers: ClientHandlers) -> Self {
        self.handlers = Some(handlers);
        self
    }

    /// Extra `_meta` members for the request.
    #[must_use]
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The client capabilities this 2026-07-28 request declares, instead of the client's
    /// own (shaped for the revision like them). A proxy passes on the capabilities of the
    /// client it acts for. No effect in a legacy session, whose capabilities were declared
    /// once, at `initialize`.
    #[must_use]
    pub fn client_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = Some(capabilities);
        self
    }
}

impl Client {
    /// A builder for a client identified as `info`.
    pub fn builder(info: Implementation) -> ClientBuilder {
        ClientBuilder::new(info)
    }

    /// What negotiation settled about the server.
    pub fn server_info(&self) -> &ServerInfo {
        &self.server
    }

    /// The revision in force.
    pub fn version(&self) -> ProtocolVersion {
        self.server.version
    }

    /// The server's notifications from now on.
    pub fn notifications(&self) -> Notifications {
        Notifications(self.core.subscribe())
    }

    /// Ends the connection: a spawned server's input is closed (and the process killed if
    /// it does not exit), an HTTP session is deleted. Requests still waiting fail.
    pub async fn close(&self) {
        self.core.close("the client closed the connection").await;
    }
}
