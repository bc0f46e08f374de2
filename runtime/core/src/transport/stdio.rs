//! The stdio transport: newline-delimited JSON on stdin/stdout. stdout carries protocol
//! messages only (logs go to stderr through `tracing`). The session ends when the client
//! closes either end: end of input, or its end of stdout (a client that has gone away
//! reads nothing more, so there is no one left to answer).

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::cancel::{first, CancellationToken, First};
use crate::server::connection::Connection;
use crate::server::Server;
use crate::wire::{self, ErrorCode, Outgoing, RpcError};

/// Serves one client on this process's stdin and stdout until the client closes either
/// (see [`serve_stdio`]), on a tokio runtime of its own: all a stdio server's `main` needs. An application that runs a
/// runtime already awaits [`serve_stdio`] instead.
pub fn run(server: Server) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(serve_stdio(server));
    // stdin is read on a blocking thread that may still wait for input (the client closed
    // stdout, not stdin): the process must not wait for that thread to end.
    runtime.shutdown_background();
    served
}

/// Serves one client on this process's stdin and stdout until stdin ends or the client
/// closes its end of stdout; either is the normal end of a session (`Ok`). A closed
/// stdout is noticed while the server is idle too when stdout is a pipe (on Linux), and
/// otherwise at the next write.
pub async fn serve_stdio(server: Server) -> std::io::Result<()> {
    serve_stdio_with_shutdown(server, std::future::pending()).await
}

/// [`serve_stdio`] until stdin ends or `shutdown` resolves (a signal, for instance).
/// tokio reads stdin on a thread that cannot be interrupted: a process that returns
/// from here while its stdin is still open should exit (`std::process::exit`) rather
/// than wait for its runtime to shut down.
pub async fn serve_stdio_with_shutdown(
    server: Server,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let (input, output, output_closed) =
        super::pipes::stdio_streams(server.limits().stdout_pipe_bytes);
    // The session runs as a task of its own, on a runtime worker. Awaited in place it
    // would often run on the thread that called `block_on` (`#[tokio::main]`'s main
    // thread), which is not a worker: every hand-off between reading a request and
    // writing its answer would then cross threads (a futex wake and an eventfd write
    // per message), which bounds a client that waits for each
    // answer. As a task, the writer is woken on the same worker.
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    let session = tokio::spawn(serve_with_shutdown(server, input, output, async move {
        // The client closing its end of stdout ends the session as the end of input does.
        first(stopped.cancelled_owned(), output_closed).await;
    }));
    let mut session = std::pin::pin!(session);
    let joined = match first(shutdown, &mut session).await {
        First::A(()) => {
            stop.cancel();
            session.await
        }
        First::B(joined) => joined,
    };
    joined.unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// Serves one client reading newline-delimited messages from `input` and writing them
/// to `output`, until `input` ends. Running requests then get `Limits::shutdown_grace`
/// to finish; what remains is cancelled, and everything answered is flushed.
///
/// An `output` that refuses writes because its reader is gone (`BrokenPipe`,
/// `ConnectionReset`) ends the session too, as a normal end (`Ok`): no more input is read
/// and running requests are cancelled at once, since no answer can reach the client.
/// Any other write error is returned.
pub async fn serve<R, W>(server: Server, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with_shutdown(server, input, output, std::future::pending()).await
}

/// [`serve`] until `input` ends or `shutdown` resolves, whichever comes first: then no
/// more input is read, and the running requests are finished as at the end of input.
///
/// While the peer does not read what the server writes (the outbound queue,
/// `Limits::outbound_queue`, is full), no more input is read either: a client cannot
/// make the server hold an unbounded backlog of answers.
pub async fn serve_with_shutdown<R, W>(
    server: Server,
    input: R,
    mut output: W,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let limits = server.limits().clone();
    let (tx, mut rx) = mpsc::channel::<Outgoing>(limits.outbound_queue);
    // Cancelled when the writer stops: the reader stops too.
    let writer_gone = CancellationToken::new();
    let gone = writer_gone.clone();
    let writer = tokio::spawn(async move {
        let written = write_all_messages(&mut output, &mut rx).await;
        gone.cancel();
        match written {
            Err(e) if peer_gone(&e) => Ok(Ended::PeerGone),
            Err(e) => Err(e),
            Ok(()) => Ok(Ended::Input),
        }
    });
    let conn = Connection::new(server, tx.clone());
    let mut reader = BufReader::with_capacity(READ_BUFFER, input);
    let mut partial = Vec::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let next = async {
            // Room for one more answer (or the writer is gone), then the next line.
            drop(tx.reserve().await);
            next_line(&mut reader, limits.max_message_bytes, &mut partial).await
        };
        let stop = first(&mut shutdown, writer_gone.cancelled());
        let line = match first(stop, next).await {
            First::A(_) => break,
            First::B(line) => line?,
        };
        let frame = match line {
            Line::Eof => break,
            Line::TooLong(len) => {
                let err = RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "Invalid Request: message of {len} bytes exceeds the limit of {} bytes",
                        limits.max_message_bytes
                    ),
                );
                let _ = tx.send(wire::error_response(None, &err)).await;
                continue;
            }
            // A line whole in the read buffer is parsed there, not copied out first.
            Line::Buffered(len) => {
                let bytes = reader.buffer().get(..len).unwrap_or_default();
                let frame = parse_line(bytes);
                reader.consume(len + 1);
                frame
            }
            Line::Gathered => parse_line(&partial),
        };
        if let Some(frame) = frame {
            conn.handle_parsed(frame, &tx).await;
        }
    }
    // The client closed its input: let running requests finish (their answers may still
    // be read), then cancel whatever outlives the grace period. With the output gone no
    // answer can be read, so there is nothing to wait for.
    if !writer_gone.is_cancelled() {
        conn.drain(limits.shutdown_grace).await;
    }
    conn.close();
    drop(conn);
    drop(tx);
    match writer.await {
        Ok(Ok(Ended::Input | Ended::PeerGone)) => Ok(()),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

/// Why the writer stopped without an error of its own.
enum Ended {
    /// Every answer was written (the session ended on its input side).
    Input,
    /// The client closed its end of the output.
    PeerGone,
}

/// Whether a write error means the reader of the output has gone away.
fn peer_gone(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
    )
}

/// Writes every message of `rx` to `output` until the channel closes. Messages that are
/// ready together leave in one write; the output is flushed whenever nothing more is
/// waiting, so no answer sits in the buffer.
async fn write_all_messages<W: AsyncWrite + Unpin>(
    output: &mut W,
    rx: &mut mpsc::Receiver<Outgoing>,
) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(64 * 1024);
    while let Some(message) = rx.recv().await {
        out.extend_from_slice(message.json().as_bytes());
        out.push(b'\n');
        while out.len() < 256 * 1024 {
            match rx.try_recv() {
                Ok(next) => {
                    out.extend_from_slice(next.json().as_bytes());
                    out.push(b'\n');
                }
                Err(_) => break,
            }
        }
        output.write_all(&out).await?;
        output.flush().await?;
        out.clear();
        if out.capacity() > 1024 * 1024 {
            // One huge message must not pin its buffer for the session's lifetime.
            out = Vec::with_capacity(64 * 1024);
        }
    }
    Ok(())
}

/// The read buffer: a pipelined client's lines (a few hundred bytes each) arrive many to
/// a read, and each one that lies whole in the buffer is parsed in place.
const READ_BUFFER: usize = 64 * 1024;

/// The frame of one line; `None` for a blank line, which is skipped.
fn parse_line(bytes: &[u8]) -> Option<wire::Frame> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(wire::parse_frame(bytes))
}

enum Line {
    /// The line is the first `len` bytes of the reader's buffer (its newline follows);
    /// the caller consumes `len + 1` bytes once it has read them.
    Buffered(usize),
    /// The line was gathered across reads into the caller's buffer.
    Gathered,
    TooLong(usize),
    Eof,
}

/// Finds the next line without ever holding more than `limit` bytes of it: a line whole in
/// the reader's buffer is left there (`Line::Buffered`); one that spans reads is gathered
/// into `partial` (cleared first); an over-long line is consumed and reported, so the next
/// one is read normally.
async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
    partial: &mut Vec<u8>,
) -> std::io::Result<Line> {
    partial.clear();
    let mut total = 0usize;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if total == 0 {
                Line::Eof
            } else if total > limit {
                Line::TooLong(total)
            } else {
                Line::Gathered
            });
        }
        let newline = memchr::memchr(b'\n', buf);
        if total == 0 {
            if let Some(len) = newline.filter(|len| *len <= limit) {
                return Ok(Line::Buffered(len));
            }
        }
        let (chunk, done) = match newline {
            Some(i) => (buf.get(..i).unwrap_or(buf), Some(i + 1)),
            None => (buf, None),
        };
        total += chunk.len();
        if total <= limit {
            partial.extend_from_slice(chunk);
        } else if !partial.is_empty() {
            *partial = Vec::new();
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            return Ok(if total > limit {
                Line::TooLong(total)
            } else {
                Line::Gathered
            });
        }
    }
}
