//! The stdio transport: newline-delimited JSON on stdin/stdout. stdout carries protocol
//! messages only (logs go to stderr through `tracing`); end of input ends the session.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::jsonrpc::{self, ErrorCode, RpcError};
use crate::server::Server;
use crate::session::Connection;

/// Serves one client on this process's stdin and stdout until stdin ends.
pub async fn serve_stdio(server: Server) -> std::io::Result<()> {
    serve(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves one client reading newline-delimited messages from `input` and writing them
/// to `output`, until `input` ends. Running requests then get `Limits::shutdown_grace`
/// to finish; what remains is cancelled, and everything answered is flushed.
pub async fn serve<R, W>(server: Server, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let limits = server.limits().clone();
    let (tx, mut rx) = mpsc::channel::<Value>(limits.outbound_queue);
    let writer = tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            let mut line = serde_json::to_vec(&message).unwrap_or_default();
            line.push(b'\n');
            output.write_all(&line).await?;
            output.flush().await?;
        }
        Ok::<_, std::io::Error>(())
    });
    let conn = Connection::new(server, tx.clone());
    let mut reader = BufReader::new(input);
    loop {
        match read_line(&mut reader, limits.max_message_bytes).await? {
            Line::Eof => break,
            Line::TooLong(len) => {
                let err = RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "Invalid Request: message of {len} bytes exceeds the limit of {} bytes",
                        limits.max_message_bytes
                    ),
                );
                let _ = tx.send(jsonrpc::error_response(None, &err)).await;
            }
            Line::Message(bytes) => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                conn.handle_frame(&bytes, &tx).await;
            }
        }
    }
    // The client closed its end: let running requests finish (their answers may still be
    // read), then cancel whatever outlives the grace period.
    conn.drain(limits.shutdown_grace).await;
    conn.close();
    drop(conn);
    drop(tx);
    match writer.await {
        Ok(result) => result,
        Err(e) => Err(std::io::Error::other(e)),
    }
}

enum Line {
    Message(Vec<u8>),
    TooLong(usize),
    Eof,
}

/// Reads one line without ever holding more than `limit` bytes of it: an over-long line
/// is consumed and reported, so the next one is read normally.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, limit: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut total = 0usize;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if total == 0 {
                Line::Eof
            } else if total > limit {
                Line::TooLong(total)
            } else {
                Line::Message(line)
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (buf.get(..i).unwrap_or(buf), Some(i + 1)),
            None => (buf, None),
        };
        total += chunk.len();
        if total <= limit {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            return Ok(if total > limit {
                Line::TooLong(total)
            } else {
                Line::Message(line)
            });
        }
    }
}
