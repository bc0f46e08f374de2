//! HTTP: Streamable HTTP on one endpoint for both eras (legacy sessions of 2025-03-26 …
//! 2025-11-25, stateless 2026-07-28 requests), and the old HTTP+SSE transport of
//! 2024-11-05 (`GET /sse` + `POST /messages`). DNS-rebinding protection, a body limit
//! and a session cap are on by default.
//!
//! The server is `mcp-runtime`'s [`Server`]; this crate serves it over HTTP, and
//! [`auth`] makes that HTTP endpoint an OAuth 2.1 resource server.
#![warn(missing_docs)]
// Input must never be able to panic the server: no unwrap/expect/indexing outside tests.
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

pub mod auth;

mod authorize;
mod config;
mod cors;
mod event_store;
mod exchange;
mod guard;
mod keep_alive;
mod legacy_sse;
mod mount;
mod replicas;
mod responses;
mod serve;
mod sessions;
mod stateless;
mod store;
mod streamable;
mod transport;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
pub use config::{Cors, HttpConfig, SsePolling};
pub use mount::{HttpContext, McpService, ShutdownHandle};
use sessions::{spawn_reaper, AppState};
pub use store::{SessionStore, StoreError, StoredEvents};
use tokio::sync::mpsc;
pub use transport::{run, Transport};

use mcp_runtime::cancel::CancellationToken;
use mcp_runtime::Server;

/// The HTTP routes for `server`, for an application that serves them at its root:
/// `/mcp` (Streamable HTTP), `/sse` + `/messages` (HTTP+SSE) unless disabled, and the
/// authorization metadata documents when the server is a resource server. To serve MCP
/// under a path of your own, next to your routes, use [`McpService`].
pub fn router(server: Server, config: HttpConfig) -> Router {
    app(server, config).0
}

/// The state every route shares, with the tasks that keep it (idle expiry, the replicas'
/// channel) started.
fn shared_state(server: Server, config: HttpConfig) -> Arc<AppState> {
    let shared = config.store.clone().map(store::Shared::new);
    #[cfg(feature = "tasks")]
    if let Some(tasks) = config.store.as_ref().and_then(|s| s.task_store()) {
        // Replicas sharing sessions share task state too (see `SessionStore::task_store`).
        server.tasks().share_store(tasks);
    }
    let state = Arc::new(AppState {
        shared: shared.clone(),
        server,
        config,
        sessions: Mutex::new(HashMap::new()),
        stopping: CancellationToken::new(),
        closing: CancellationToken::new(),
        stateless_active: AtomicUsize::new(0),
        no_session: mpsc::channel(1).0,
    });
    spawn_reaper(Arc::downgrade(&state), state.config.session_idle_timeout);
    if let Some(shared) = shared {
        replicas::spawn(&state, shared);
    }
    state
}

/// The MCP routes: Streamable HTTP at `mcp_path`, HTTP+SSE at `/sse` and `/messages`
/// (unless disabled), with the body limit and, when configured, CORS.
fn mcp_routes(state: &Arc<AppState>, mcp_path: &str) -> Router {
    let limit = state.server.limits().max_message_bytes;
    let mut app = Router::new().route(
        mcp_path,
        post(streamable::post_mcp)
            .get(streamable::get_mcp)
            .delete(streamable::delete_mcp),
    );
    if state.config.legacy_sse {
        app = app
            .route("/sse", get(legacy_sse::get_sse))
            .route("/messages", post(legacy_sse::post_messages));
    }
    let mut app = app
        .layer(DefaultBodyLimit::max(limit))
        .with_state(Arc::clone(state));
    if let Some(policy) = cors::CorsPolicy::of(&state.config) {
        app = app.layer(cors::CorsLayer(policy));
    }
    app
}

fn app(server: Server, config: HttpConfig) -> (Router, Arc<AppState>) {
    let state = shared_state(server, config);
    let mut app = mcp_routes(&state, "/mcp");
    if let Some(rs) = &state.config.authorization {
        app = app.merge(authorize::metadata_routes(rs));
    }
    (app, state)
}

/// Serves `server` on `addr` until the process ends.
pub async fn serve_http(
    server: Server,
    addr: SocketAddr,
    config: HttpConfig,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_listener(server, listener, config).await
}

/// Serves `server` on `addr` until `shutdown` resolves, then stops gracefully (see
/// [`serve_listener_with_shutdown`]).
pub async fn serve_http_with_shutdown(
    server: Server,
    addr: SocketAddr,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_listener_with_shutdown(server, listener, config, shutdown).await
}

/// Serves `server` on an already bound listener (tests bind `127.0.0.1:0`).
pub async fn serve_listener(
    server: Server,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
) -> std::io::Result<()> {
    serve_listener_with_shutdown(server, listener, config, std::future::pending()).await
}

/// How long connections get to deliver the end of their streams once everything was
/// closed at the end of the grace period.
const FLUSH_AFTER_CLOSE: Duration = Duration::from_millis(500);

/// Serves `server` on an already bound listener until `shutdown` resolves (a signal, for
/// instance), then shuts down gracefully: no new connections are accepted, and new
/// sessions and stateless requests on open connections get 503; requests in progress get
/// `Limits::shutdown_grace` to finish (and their answers are delivered); then every
/// session ends (handlers still running are cancelled, SSE streams end) and, after a
/// short flush, the function returns `Ok`.
pub async fn serve_listener_with_shutdown(
    server: Server,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let grace = server.limits().shutdown_grace;
    let (app, state) = app(server, config);
    let serving = serve::serve(listener, app, Arc::clone(&state), state.stopping.clone());
    tokio::pin!(serving);
    tokio::pin!(shutdown);
    tokio::select! {
        result = &mut serving => return result,
        () = &mut shutdown => {}
    }
    tracing::info!(?grace, "shutting down");
    state.stopping.cancel();
    let deadline = tokio::time::Instant::now() + grace;
    tokio::select! {
        // Every connection ended (no stream was open).
        result = &mut serving => {
            state.close_all();
            return result;
        }
        () = state.drained(deadline) => {}
    }
    state.close_all();
    match tokio::time::timeout(FLUSH_AFTER_CLOSE, &mut serving).await {
        Ok(result) => result,
        // A peer that does not read its stream's end is not waited for.
        Err(_) => Ok(()),
    }
}
