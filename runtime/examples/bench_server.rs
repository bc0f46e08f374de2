//! The server the end-to-end benchmarks drive, built the same way for this runtime and for
//! rmcp (the official Rust SDK): `bench_server [ours|rmcp-pipes|rmcp-stdio|ours-http]
//! [--tools N]`. `rmcp-stdio` is rmcp's default `transport::stdio()`, `rmcp-pipes` its
//! `transport::stdio_pipes()` (recommended for pipes); `ours` is `serve_stdio`;
//! `ours-http` serves Streamable HTTP on a free loopback port and prints its URL.

#[path = "../benches/support/servers.rs"]
mod servers;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("ours", String::as_str);
    let tools = args
        .iter()
        .position(|a| a == "--tools")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    match which {
        "ours" => mcp_runtime::transport::stdio::serve_stdio(servers::ours(tools)).await?,
        "ours-http" => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            println!("http://{}/mcp", listener.local_addr()?);
            let mut config = mcp_runtime::transport::http::HttpConfig::default();
            config.max_sessions = 100_000;
            mcp_runtime::transport::http::serve_listener(servers::ours(tools), listener, config)
                .await?;
        }
        "rmcp-pipes" | "rmcp-stdio" => {
            use rmcp::ServiceExt;
            let handler = servers::RmcpBench::new(tools);
            let running = if which == "rmcp-pipes" {
                handler.serve(rmcp::transport::stdio_pipes()).await?
            } else {
                handler.serve(rmcp::transport::stdio()).await?
            };
            running.waiting().await?;
        }
        other => {
            return Err(format!("unknown server `{other}`: ours, rmcp-pipes or rmcp-stdio").into())
        }
    }
    Ok(())
}
