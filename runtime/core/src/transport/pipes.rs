//! This process's stdin and stdout as non-blocking pipes when they are pipes (as when an
//! MCP client launches the server), so reads and writes run on tokio's reactor instead
//! of its blocking thread pool: `tokio::io::stdin()` hands every read to another thread,
//! which caps a pipelined client at a few ten thousand messages per second.

use std::future::Future;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The process's standard input, for the stdio transport.
pub(super) type StdinReader = Pin<Box<dyn AsyncRead + Send>>;
/// The process's standard output, for the stdio transport.
pub(super) type StdoutWriter = Pin<Box<dyn AsyncWrite + Send>>;
/// Resolves when the client closes its end of stdout (never, where that cannot be
/// watched: then the next write tells).
pub(super) type StdoutClosed = Pin<Box<dyn Future<Output = ()> + Send>>;

/// stdin and stdout: as non-blocking pipes on Linux when both are FIFOs (stdout's pipe
/// enlarged to `stdout_pipe_bytes`, see `Limits::stdout_pipe_bytes`), otherwise tokio's
/// standard handles (files, terminals, other platforms); and whether the client closed
/// its end of stdout.
pub(super) fn stdio_streams(stdout_pipe_bytes: usize) -> (StdinReader, StdoutWriter, StdoutClosed) {
    #[cfg(target_os = "linux")]
    if let Some((reader, writer)) = linux::fifo_pair(stdout_pipe_bytes) {
        return (Box::pin(reader), Box::pin(writer), linux::stdout_closed());
    }
    (
        Box::pin(tokio::io::stdin()),
        Box::pin(tokio::io::stdout()),
        Box::pin(std::future::pending()),
    )
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs::OpenOptions;
    use std::os::unix::fs::FileTypeExt;

    use tokio::net::unix::pipe;

    /// Opens fds 0 and 1 again through `/proc/self/fd`. The new open file descriptions
    /// are this transport's own: making them non-blocking leaves the process's fds 0 and
    /// 1 (and any child that inherits them) blocking, as programs expect.
    pub(super) fn fifo_pair(stdout_pipe_bytes: usize) -> Option<(pipe::Receiver, pipe::Sender)> {
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
        if stdout_pipe_bytes > 0 {
            match set_pipe_size(&output, stdout_pipe_bytes) {
                Ok(size) => tracing::debug!(size, "stdout pipe enlarged"),
                Err(e) => tracing::debug!(error = %e, "stdout pipe left as it was"),
            }
        }
        let reader = pipe::Receiver::from_file(input).ok()?;
        let writer = pipe::Sender::from_file(output).ok()?;
        Some((reader, writer))
    }

    /// Resolves when the pipe on fd 1 has no reader left: the kernel reports an error
    /// condition on a pipe's write end then, and epoll reports it whatever the interest.
    /// Watched through an open file description of its own, so that the writer's
    /// readiness is not disturbed. Never resolves when it cannot be watched.
    pub(super) fn stdout_closed() -> super::StdoutClosed {
        let watched = OpenOptions::new()
            .write(true)
            .open("/proc/self/fd/1")
            .and_then(pipe::Sender::from_file);
        Box::pin(async move {
            match watched {
                Ok(sender) => loop {
                    match sender.ready(tokio::io::Interest::ERROR).await {
                        Ok(ready) if ready.is_error() => return,
                        Ok(_) => {}
                        Err(_) => return std::future::pending().await,
                    }
                },
                Err(_) => std::future::pending().await,
            }
        })
    }

    /// Asks the kernel to make the pipe under `file` hold at least `bytes` (rounded up to
    /// whole pages, at most `/proc/sys/fs/pipe-max-size` unless privileged); returns the
    /// size it now has. A pipe that already holds as much (the client made it so) is left
    /// as it is: this only ever enlarges.
    fn set_pipe_size(file: &std::fs::File, bytes: usize) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        let bytes = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        // The one `unsafe` of the workspace. Sound: `fcntl` with `F_GETPIPE_SZ` or
        // `F_SETPIPE_SZ` takes no pointer (an integer argument or none), and `fd` is
        // `file`'s, open for this whole call. std has no safe form of it, and the safe
        // wrappers (rustix, nix) would add a crate to every stdio server's build for it.
        #[allow(unsafe_code)]
        let size = unsafe {
            match libc::fcntl(fd, libc::F_GETPIPE_SZ) {
                current if current >= bytes => current,
                _ => libc::fcntl(fd, libc::F_SETPIPE_SZ, bytes),
            }
        };
        usize::try_from(size).map_err(|_| std::io::Error::last_os_error())
    }
}
