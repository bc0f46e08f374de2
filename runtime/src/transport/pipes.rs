//! This process's stdin and stdout as non-blocking pipes when they are pipes (as when an
//! MCP client launches the server), so reads and writes run on tokio's reactor instead
//! of its blocking thread pool: `tokio::io::stdin()` hands every read to another thread,
//! which caps a pipelined client at a few ten thousand messages per second.

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The process's standard input, for the stdio transport.
pub(super) type StdinReader = Pin<Box<dyn AsyncRead + Send>>;
/// The process's standard output, for the stdio transport.
pub(super) type StdoutWriter = Pin<Box<dyn AsyncWrite + Send>>;

/// stdin and stdout: as non-blocking pipes on Linux when both are FIFOs, otherwise
/// tokio's standard handles (files, terminals, other platforms).
pub(super) fn stdio_streams() -> (StdinReader, StdoutWriter) {
    #[cfg(target_os = "linux")]
    if let Some((reader, writer)) = linux::fifo_pair() {
        return (Box::pin(reader), Box::pin(writer));
    }
    (Box::pin(tokio::io::stdin()), Box::pin(tokio::io::stdout()))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs::OpenOptions;
    use std::os::unix::fs::FileTypeExt;

    use tokio::net::unix::pipe;

    /// Opens fds 0 and 1 again through `/proc/self/fd`. The new open file descriptions
    /// are this transport's own: making them non-blocking leaves the process's fds 0 and
    /// 1 (and any child that inherits them) blocking, as programs expect.
    pub(super) fn fifo_pair() -> Option<(pipe::Receiver, pipe::Sender)> {
        let is_fifo = |path: &str| {
            std::fs::metadata(path)
                .map(|m| m.file_type().is_fifo())
                .unwrap_or(false)
        };
        if !is_fifo("/proc/self/fd/0") || !is_fifo("/proc/self/fd/1") {
            return None;
        }
        // Without a runtime with I/O enabled there is no reactor to register with.
        tokio::runtime::Handle::try_current().ok()?;
        let input = OpenOptions::new().read(true).open("/proc/self/fd/0").ok()?;
        let output = OpenOptions::new()
            .write(true)
            .open("/proc/self/fd/1")
            .ok()?;
        let reader = pipe::Receiver::from_file(input).ok()?;
        let writer = pipe::Sender::from_file(output).ok()?;
        Some((reader, writer))
    }
}
