//! An MCP server inside an axum application of its own: the application's routes
//! (`GET /health` answers `200 ok`), MCP nested under a path the application chooses —
//! Streamable HTTP for both eras at `PREFIX`, HTTP+SSE (2024-11-05) at `PREFIX/sse` —
//! behind a middleware of the application's that the tools can read, CORS for browser
//! clients, and a graceful shutdown that drains the MCP sessions.
//!
//! ```sh
//! cargo run -p mcp-interop --example embedded -- --http 127.0.0.1:3002 --prefix /api/mcp
//! curl http://127.0.0.1:3002/health                  # ok
//! # MCP clients: http://127.0.0.1:3002/api/mcp (Streamable HTTP), …/api/mcp/sse (HTTP+SSE)
//! ```
//!
//! The tools are those of the conformance fixture, plus `whoami`: what the application's
//! middleware put in the request's extensions (the user a trusted proxy names in
//! `X-Forwarded-User`) and the request's own `X-Request-Id` header, read with
//! `HttpContext::http_request`.
//!
//! Browser pages of the loopback origins (any port) may call it (CORS); `--allow-origin
//! ORIGIN` (repeatable) allows others, `--allow-host NAME` (repeatable) other `Host`
//! names. SIGTERM or Ctrl-C: no new sessions, running requests get their grace period,
//! then every stream ends and the process exits 0.

use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use mcp_runtime::model::{Tool, ToolResult};
use mcp_runtime::ToolError;
use mcp_runtime_http::{Cors, HttpConfig, HttpContext, McpService};
use serde_json::json;

#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "conformance_server.rs"]
mod fixture;

/// The user a trusted proxy in front of the application vouches for, as the
/// application's middleware recorded it.
#[derive(Clone, Debug)]
struct ProxyUser(String);

/// The application's middleware: trusts the proxy's `X-Forwarded-User` (in a real
/// deployment, only on connections from the proxy).
async fn trust_the_proxy(mut request: Request, next: Next) -> Response {
    let user = request
        .headers()
        .get("x-forwarded-user")
        .and_then(|v| v.to_str().ok())
        .map(|name| ProxyUser(name.to_owned()));
    if let Some(user) = user {
        request.extensions_mut().insert(user);
    }
    next.run(request).await
}

/// `whoami`: what the handler sees of the HTTP request that carried its call.
fn with_whoami(builder: mcp_runtime::ServerBuilder) -> mcp_runtime::ServerBuilder {
    let tool = Tool::new(
        "whoami",
        "The caller as the application's middleware saw it, and the request's X-Request-Id",
    )
    .input_schema(json!({"type": "object", "properties": {}}));
    builder.tool(tool, |_, ctx| async move {
        let answer = match ctx.http_request() {
            None => json!({"transport": "stdio"}),
            Some(request) => json!({
                "transport": "http",
                "user": request.extensions.get::<ProxyUser>().map(|u| u.0.clone()),
                "requestId": request
                    .headers
                    .get("x-request-id")
                    .and_then(|v| v.to_str().ok()),
            }),
        };
        Ok::<_, ToolError>(ToolResult::text(answer.to_string()))
    })
}

struct Args {
    addr: std::net::SocketAddr,
    prefix: String,
    origins: Vec<String>,
    hosts: Vec<String>,
}

fn args() -> Args {
    let usage = || -> ! {
        eprintln!(
            "usage: embedded --http ADDR --prefix PATH [--allow-origin ORIGIN]... [--allow-host NAME]...   (e.g. --http 127.0.0.1:3002 --prefix /api/mcp)"
        );
        std::process::exit(2);
    };
    let (mut addr, mut prefix) = (None, None);
    let (mut origins, mut hosts) = (Vec::new(), Vec::new());
    let mut rest = std::env::args().skip(1);
    while let Some(flag) = rest.next() {
        let Some(value) = rest.next() else { usage() };
        match flag.as_str() {
            "--http" => {
                addr = Some(value.parse().unwrap_or_else(|e| {
                    eprintln!("--http {value}: {e}");
                    std::process::exit(2);
                }));
            }
            "--prefix" => prefix = Some(value),
            "--allow-origin" => origins.push(value),
            "--allow-host" => hosts.push(value),
            _ => usage(),
        }
    }
    let (Some(addr), Some(prefix)) = (addr, prefix) else {
        usage()
    };
    // `/api/mcp/` and `api/mcp` mean `/api/mcp`; `/` is the root.
    let prefix = format!("/{}", prefix.trim_matches('/'));
    Args {
        addr,
        prefix,
        origins,
        hosts,
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let args = args();
    let mut config = HttpConfig::default();
    config.allowed_origins.extend(args.origins);
    config.allowed_hosts.extend(args.hosts);
    config.cors = Some(Cors::default());
    let server = with_whoami(fixture::conformance_builder()).build();
    let mcp = McpService::new(server, config);
    let shutdown = mcp.shutdown_handle();
    let routes = mcp.router().layer(middleware::from_fn(trust_the_proxy));
    let app = axum::Router::new().route("/health", get(|| async { "ok" }));
    // axum nests at a path, never at the root: there the routes are merged.
    let app = match args.prefix.as_str() {
        "/" => app.merge(routes),
        prefix => app.nest(prefix, routes),
    };
    let app = app.merge(mcp.well_known());
    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    let addr = listener.local_addr()?;
    eprintln!(
        "listening on http://{addr}{}",
        args.prefix.trim_end_matches('/')
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            terminated().await;
            eprintln!("shutting down");
            // Drains MCP: its streams end after the grace period, which lets axum's own
            // graceful shutdown finish.
            tokio::spawn(async move { shutdown.shutdown().await });
        })
        .await?;
    // A peer that never reads the end of its stream is not waited for.
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(())
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
