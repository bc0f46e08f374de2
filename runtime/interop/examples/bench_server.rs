//! The server the end-to-end benchmarks drive, built the same way for this runtime and for
//! rmcp (the official Rust SDK): `bench_server [ours|rmcp-pipes|rmcp-stdio|ours-http]
//! [--tools N]`. `rmcp-stdio` is rmcp's default `transport::stdio()`, `rmcp-pipes` its
//! `transport::stdio_pipes()` (recommended for pipes); `ours` is `serve_stdio`;
//! `ours-http` serves Streamable HTTP on a free loopback port and prints its URL.
//! `null` and `null-http` are the cheapest possible servers on the same paths: a fixed
//! reply to every line or request (the request's id copied in), with no JSON parsed — the
//! limit a server on that transport cannot beat, against which the others are read.

#[path = "../benches/support/null_reply.rs"]
mod null_reply;
#[path = "../benches/support/servers.rs"]
mod servers;

use null_reply::null_reply;

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
            let mut config = mcp_runtime_http::HttpConfig::default();
            config.max_sessions = 100_000;
            mcp_runtime_http::serve_listener(servers::ours(tools), listener, config).await?;
        }
        "null" => null_stdio()?,
        "null-http" => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            println!("http://{}/mcp", listener.local_addr()?);
            null_http(listener).await?;
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
            return Err(format!(
            "unknown server `{other}`: ours, ours-http, rmcp-pipes, rmcp-stdio, null or null-http"
        )
            .into())
        }
    }
    Ok(())
}

/// The null server on stdio: every complete line read is answered, all of a read's
/// answers in one write.
fn null_stdio() -> std::io::Result<()> {
    use std::io::{Read, Write};
    // The pipe size `serve_stdio` asks for (`Limits::stdout_pipe_bytes`), so that the two
    // are read against the same pipe.
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::pipe::fcntl_setpipe_size(std::io::stdout(), 256 * 1024) {
        eprintln!("null: stdout pipe left as it was: {e}");
    }
    let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
    let mut buffer = vec![0u8; 64 * 1024];
    let (mut filled, mut out) = (0usize, Vec::with_capacity(64 * 1024));
    loop {
        let Some(free) = buffer.get_mut(filled..) else {
            return Ok(());
        };
        let n = input.read(free)?;
        if n == 0 {
            return Ok(());
        }
        filled += n;
        let mut start = 0;
        while let Some(end) = buffer
            .get(start..filled)
            .and_then(|b| b.iter().position(|&c| c == b'\n'))
        {
            null_reply(buffer.get(start..start + end).unwrap_or_default(), &mut out);
            if !out.is_empty() && out.last() != Some(&b'\n') {
                out.push(b'\n');
            }
            start += end + 1;
        }
        buffer.copy_within(start..filled, 0);
        filled -= start;
        if filled == buffer.len() {
            buffer.resize(buffer.len() * 2, 0);
        }
        output.write_all(&out)?;
        output.flush()?;
        out.clear();
    }
}

/// The null server over HTTP/1.1 keep-alive (`TCP_NODELAY`, like ours): each request's
/// head read with `httparse`, its body by `content-length`, answered with the fixed
/// reply as JSON (a session id on every answer, so a legacy client's `initialize` finds
/// one; 202 for a notification).
async fn null_http(listener: tokio::net::TcpListener) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    loop {
        let (mut stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let (mut input, mut reply, mut out) =
                (Vec::with_capacity(4096), Vec::new(), Vec::new());
            loop {
                let mut headers = [httparse::EMPTY_HEADER; 32];
                let mut request = httparse::Request::new(&mut headers);
                let head = match request.parse(&input) {
                    Ok(httparse::Status::Complete(head)) => head,
                    Ok(httparse::Status::Partial) => {
                        if matches!(stream.read_buf(&mut input).await, Ok(0) | Err(_)) {
                            return;
                        }
                        continue;
                    }
                    Err(_) => return,
                };
                let length: usize = request
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| std::str::from_utf8(h.value).ok()?.parse().ok())
                    .unwrap_or(0);
                while input.len() < head + length {
                    if matches!(stream.read_buf(&mut input).await, Ok(0) | Err(_)) {
                        return;
                    }
                }
                reply.clear();
                null_reply(
                    input.get(head..head + length).unwrap_or_default(),
                    &mut reply,
                );
                out.clear();
                if reply.is_empty() {
                    out.extend_from_slice(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
                } else {
                    out.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: null\r\ncontent-length: ");
                    out.extend_from_slice(reply.len().to_string().as_bytes());
                    out.extend_from_slice(b"\r\n\r\n");
                    out.extend_from_slice(&reply);
                }
                input.drain(..head + length);
                if stream.write_all(&out).await.is_err() {
                    return;
                }
            }
        });
    }
}
