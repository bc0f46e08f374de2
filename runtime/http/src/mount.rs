//! MCP inside an application of your own: [`McpService`], the MCP routes as a tower
//! service to nest at any path next to the application's routes, with a
//! [`ShutdownHandle`] to drain it; and [`HttpContext`], what a handler reads of the HTTP
//! request that carried its MCP request.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use axum::extract::{NestedPath, Request};
use axum::http::request::Parts;
use axum::response::Response;
use axum::Router;

use super::sessions::AppState;
use super::{authorize, mcp_routes, shared_state, HttpConfig};
use mcp_runtime::{Context, Server};

/// The MCP endpoint as a tower [`Service`](tower::Service), for an application that
/// serves MCP under a path of its own, next to its own routes and behind its own
/// middleware.
///
/// Relative to where it is mounted: Streamable HTTP (both eras) at the mount itself, and
/// HTTP+SSE (2024-11-05) at `sse` and `messages` below it. Nested at `/api/mcp`, clients
/// connect to `/api/mcp` and `/api/mcp/sse`; the HTTP+SSE `endpoint` event names
/// `/api/mcp/messages?sessionId=…`. The mount is read from axum's
/// [`NestedPath`] (set by `Router::nest` and `Router::nest_service`): behind a proxy that
/// rewrites paths, keep the prefix the same on both sides.
///
/// With authorization ([`HttpConfig::authorization`], or an
/// [`AuthorizationLayer`](crate::auth::AuthorizationLayer) in front), serve
/// [`McpService::well_known`] at the application's root: RFC 9728 §3.1 puts the
/// resource's metadata at `/.well-known/oauth-protected-resource/api/mcp` for the
/// resource `https://host/api/mcp`, outside the mount — name that URL as the resource.
///
/// ```no_run
/// # async fn example(server: mcp_runtime::Server) -> std::io::Result<()> {
/// use axum::routing::get;
/// use mcp_runtime_http::{HttpConfig, McpService};
///
/// let mcp = McpService::new(server, HttpConfig::default());
/// let shutdown = mcp.shutdown_handle();
/// let app = axum::Router::new()
///     .route("/health", get(|| async { "ok" }))
///     .nest("/api/mcp", mcp.router())
///     .merge(mcp.well_known());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, app)
///     .with_graceful_shutdown(async move {
///         let _ = tokio::signal::ctrl_c().await;
///         // Open SSE streams end after the grace period, so the server can stop.
///         tokio::spawn(async move { shutdown.shutdown().await });
///     })
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct McpService {
    router: Router,
    state: Arc<AppState>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("config", &self.state.config)
            .finish_non_exhaustive()
    }
}

impl McpService {
    /// The MCP routes of `server`. Call it inside a tokio runtime: it starts the tasks
    /// that expire idle sessions (and, with a [store](HttpConfig::store), hear the other
    /// replicas).
    pub fn new(server: Server, config: HttpConfig) -> McpService {
        let state = shared_state(server, config);
        let router = mcp_routes(&state, "/");
        McpService { router, state }
    }

    /// The routes, to nest where MCP is served (`Router::nest("/api/mcp", mcp.router())`)
    /// and to wrap in layers of the application's.
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// The authorization metadata documents, to merge at the application's root (see
    /// [`auth::metadata_router`](crate::auth::metadata_router)); no routes without
    /// [`HttpConfig::authorization`].
    pub fn well_known(&self) -> Router {
        match &self.state.config.authorization {
            Some(rs) => authorize::metadata_routes(rs),
            None => Router::new(),
        }
    }

    /// The handle that drains this service when the application shuts down.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            state: Arc::clone(&self.state),
        }
    }

    /// Drains the service when `signal` resolves (see [`ShutdownHandle::shutdown`]); the
    /// watch holds no reference to the service meanwhile.
    #[must_use]
    pub fn shutdown_on(self, signal: impl Future<Output = ()> + Send + 'static) -> McpService {
        let state = Arc::downgrade(&self.state);
        tokio::spawn(async move {
            signal.await;
            if let Some(state) = state.upgrade() {
                ShutdownHandle { state }.shutdown().await;
            }
        });
        self
    }
}

impl tower::Service<Request> for McpService {
    type Response = Response;
    type Error = Infallible;
    type Future = <Router as tower::Service<Request>>::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        tower::Service::<Request>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        self.router.call(request)
    }
}

/// Drains an [`McpService`] (an application's router that embeds it has no
/// shutdown of its own to do it): what `serve_http_with_shutdown` does for its server.
#[derive(Clone)]
pub struct ShutdownHandle {
    state: Arc<AppState>,
}

impl std::fmt::Debug for ShutdownHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownHandle")
            .field("shutting_down", &self.is_shutting_down())
            .finish()
    }
}

impl ShutdownHandle {
    /// Drains the service and resolves once it is done: from the call on, new sessions
    /// and stateless requests get 503; requests in progress get
    /// [`Limits::shutdown_grace`](mcp_runtime::Limits) to finish (their answers are
    /// delivered); then every session ends — handlers still running are cancelled and
    /// every SSE stream ends, so that the HTTP server's own graceful shutdown (axum's
    /// `with_graceful_shutdown`) is not held by a stream that would never end.
    pub async fn shutdown(&self) {
        let state = &self.state;
        let grace = state.server.limits().shutdown_grace;
        state.stopping.cancel();
        state.drained(tokio::time::Instant::now() + grace).await;
        state.close_all();
    }

    /// Whether shutdown began.
    pub fn is_shutting_down(&self) -> bool {
        self.state.stopping.is_cancelled()
    }
}

/// The path an MCP service is mounted at, as axum's nesting recorded it, without a
/// trailing `/` (empty at the root).
pub(crate) fn mount_prefix(parts: &Parts) -> &str {
    parts
        .extensions
        .get::<NestedPath>()
        .map_or("", |nested| nested.as_str().trim_end_matches('/'))
}

/// What a handler reads of the HTTP request that carried its MCP request: its headers
/// (those a trusted proxy adds, say), its URI, and the request extensions the
/// application's own middleware inserted (an authenticated identity, a tenant, a
/// tracing span's context). `None` on stdio.
///
/// Each request has its own: in a legacy session, every POST's own headers, not those of
/// the `initialize` that opened it; a 2026-07-28 retry's, not the first round's. What a
/// handler sees is the request as the MCP routes got it: the middleware in front of
/// them has run.
///
/// A tower layer that puts a value there, and a tool that reads it:
///
/// ```no_run
/// # async fn example(server_builder: mcp_runtime::ServerBuilder) {
/// use axum::extract::Request;
/// use axum::middleware::{self, Next};
/// use mcp_runtime::model::Tool;
/// use mcp_runtime_http::{HttpConfig, HttpContext, McpService};
///
/// /// Who the trusted proxy in front says the user is.
/// #[derive(Clone)]
/// struct ProxyUser(String);
///
/// async fn trust_the_proxy(mut request: Request, next: Next) -> axum::response::Response {
///     let user = request
///         .headers()
///         .get("x-forwarded-user")
///         .and_then(|v| v.to_str().ok())
///         .map(|name| ProxyUser(name.to_owned()));
///     if let Some(user) = user {
///         request.extensions_mut().insert(user);
///     }
///     next.run(request).await
/// }
///
/// let server = server_builder
///     .tool(Tool::new("whoami", "Who is calling"), |_args, ctx| async move {
///         ctx.http_request()
///             .and_then(|request| request.extensions.get::<ProxyUser>())
///             .map_or("nobody".to_owned(), |user| user.0.clone())
///     })
///     .build();
/// let mcp = McpService::new(server, HttpConfig::default());
/// let app = axum::Router::new().nest(
///     "/mcp",
///     mcp.router().layer(middleware::from_fn(trust_the_proxy)),
/// );
/// # }
/// ```
pub trait HttpContext {
    /// The head of the HTTP request that carried this MCP request (method, URI,
    /// headers, extensions); `None` when it did not come over HTTP.
    fn http_request(&self) -> Option<&Parts>;
}

impl HttpContext for Context {
    fn http_request(&self) -> Option<&Parts> {
        self.transport_request::<Parts>()
    }
}
