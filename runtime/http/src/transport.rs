//! The command line of a server binary: stdio, or every client over HTTP with `--http ADDR`.

use std::io;

use mcp_runtime::transport::stdio;
use mcp_runtime::Server;

use crate::{serve_listener, HttpConfig};

/// Where a server binary serves: one client on stdio, or every client over HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// One client on stdin/stdout (the client launched this process).
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp` (both eras) and HTTP+SSE at `/sse`.
    Http(std::net::SocketAddr),
}

impl Transport {
    /// The command line of a server binary: no argument is stdio, `--http ADDR` is HTTP.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Transport, String> {
        let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        match args.as_slice() {
            [] => Ok(Transport::Stdio),
            ["--http", addr] => addr
                .parse()
                .map(Transport::Http)
                .map_err(|e| format!("--http {addr}: {e}")),
            _ => Err("usage: [--http ADDR]".into()),
        }
    }

    /// [`Transport::parse`] of this process's arguments; on a bad command line, prints
    /// the problem and exits with status 2.
    pub fn from_args() -> Transport {
        let args: Vec<String> = std::env::args().skip(1).collect();
        Transport::parse(&args).unwrap_or_else(|message| {
            eprintln!("{message}");
            std::process::exit(2)
        })
    }
}

/// Serves `server` on `transport`: on stdio until the client closes its end; over HTTP
/// (with the default [`HttpConfig`]) until the process ends, after printing the endpoint
/// on stderr.
pub async fn run(server: Server, transport: Transport) -> io::Result<()> {
    match transport {
        Transport::Stdio => stdio::serve_stdio(server).await,
        Transport::Http(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            serve_listener(server, listener, HttpConfig::default()).await
        }
    }
}
