//! rmcp 3.11's Streamable HTTP server with the benchmark content (`support/rmcp_server.rs`,
//! the same file rmcp's stdio server in the `bench_server` example serves), on a free
//! loopback port; prints its URL. `rmcp-http-bench nodelay` sets `TCP_NODELAY` on every
//! accepted connection (as this runtime's HTTP transport and hyper's own servers do);
//! `rmcp-http-bench examples` builds it as rmcp's examples do (`axum::serve` on a plain
//! `TcpListener`, Nagle's algorithm on). Both use rmcp's default `StreamableHttpServerConfig`
//! (legacy sessions kept in memory with `LocalSessionManager`; 2026-07-28 requests served
//! statelessly, as rmcp always serves that revision).

#[path = "../../support/rmcp_server.rs"]
mod rmcp_server;

use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "nodelay".into());
    let tools = 5;
    let service = StreamableHttpService::new(
        move || Ok(rmcp_server::RmcpBench::new(tools)),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}/mcp", listener.local_addr()?);
    match mode.as_str() {
        "nodelay" => {
            let listener = listener.tap_io(|tcp| {
                // A connection that cannot take the option is served as it is.
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router).await?;
        }
        "examples" => axum::serve(listener, router).await?,
        other => return Err(format!("unknown mode `{other}`: nodelay or examples").into()),
    }
    Ok(())
}
