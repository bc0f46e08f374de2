//! The stdio link: newline-delimited JSON-RPC over a byte stream — a spawned server's
//! stdin and stdout, or any reader and writer (a socket, an in-memory pipe).

use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::Child;
use tokio::sync::mpsc;

use super::{Incoming, IncomingTx, Link, LinkFuture, LinkKind, Outbound};
use crate::error::ClientError;
use mcp_runtime::wire::{self, Frame, RequestId};

/// How long a closed server may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// What to launch: a program, its arguments, its environment and directory.
#[derive(Clone, Debug)]
pub(crate) struct Spawn {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<std::path::PathBuf>,
    /// Whether the server's stderr goes to ours (else it is discarded).
    pub(crate) inherit_stderr: bool,
    /// Whether the server runs in a process group of its own, which is ended whole.
    pub(crate) process_group: bool,
    /// The longest line read from the server; a longer one is skipped (and logged).
    pub(crate) max_line: usize,
}

pub(crate) struct StdioLink {
    out: Mutex<Option<mpsc::UnboundedSender<Bytes>>>,
    child: tokio::sync::Mutex<Option<Child>>,
    writer: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The server's own process group (its id is the server's pid), when it has one;
    /// taken once it is ended, so that a later drop cannot signal a reused id.
    group: Mutex<Option<group::ProcessGroup>>,
}

impl StdioLink {
    /// Launches `spawn` and links to its stdin and stdout.
    pub(crate) fn spawn(spawn: &Spawn, incoming: IncomingTx) -> Result<StdioLink, ClientError> {
        let mut command = tokio::process::Command::new(&spawn.program);
        command
            .args(&spawn.args)
            .envs(spawn.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if spawn.inherit_stderr {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true);
        if let Some(dir) = &spawn.cwd {
            command.current_dir(dir);
        }
        #[cfg(unix)]
        if spawn.process_group {
            // A group of its own (id: the child's pid): a shell's children, or a launcher's
            // (npx, uvx), are ended with it, and a terminal's ^C reaches only our process,
            // which then ends the server as it ends any other.
            std::os::unix::process::CommandExt::process_group(command.as_std_mut(), 0);
        }
        let mut child = command.spawn().map_err(|e| {
            ClientError::transport(format!("cannot start `{}`: {e}", spawn.program))
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::transport("the child's stdio is not piped"));
        };
        let mut link = StdioLink::streams(stdout, stdin, incoming, spawn.max_line);
        if spawn.process_group {
            link.group = Mutex::new(child.id().and_then(group::ProcessGroup::of_leader));
        }
        if let Ok(mut slot) = link.child.try_lock() {
            *slot = Some(child);
        }
        Ok(link)
    }

    /// Links to a server reading `output` (what the server writes) and writing `input`;
    /// lines longer than `max_line` bytes are skipped.
    pub(crate) fn streams<R, W>(
        output: R,
        input: W,
        incoming: IncomingTx,
        max_line: usize,
    ) -> StdioLink
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
        let writer = tokio::spawn(write_lines(input, rx));
        tokio::spawn(read_lines(output, incoming, max_line));
        StdioLink {
            out: Mutex::new(Some(tx)),
            child: tokio::sync::Mutex::new(None),
            writer: Mutex::new(Some(writer)),
            group: Mutex::new(None),
        }
    }
}

impl Drop for StdioLink {
    fn drop(&mut self) {
        // The child itself is killed on drop (`kill_on_drop`); what it started goes too.
        if let Some(group) = self.group.lock().ok().and_then(|mut g| g.take()) {
            group.kill();
        }
    }
}

/// A spawned server's process group, ended whole.
mod group {
    use std::time::Duration;

    /// A process group by its id.
    pub(crate) struct ProcessGroup {
        #[cfg(unix)]
        id: rustix::process::Pid,
    }

    impl ProcessGroup {
        /// The group whose leader is process `pid` (a child spawned with a group of its
        /// own).
        #[cfg(unix)]
        pub(crate) fn of_leader(pid: u32) -> Option<ProcessGroup> {
            let id = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
            Some(ProcessGroup { id })
        }

        #[cfg(not(unix))]
        pub(crate) fn of_leader(_pid: u32) -> Option<ProcessGroup> {
            None
        }

        /// Asks every process left in the group to end (SIGTERM), waits up to `grace` for
        /// them, then kills what remains.
        pub(crate) async fn end(&self, grace: Duration) {
            #[cfg(unix)]
            {
                use rustix::process::{kill_process_group, test_kill_process_group, Signal};
                // ESRCH: nothing is left in the group.
                if kill_process_group(self.id, Signal::TERM).is_err() {
                    return;
                }
                let deadline = tokio::time::Instant::now() + grace;
                while tokio::time::Instant::now() < deadline {
                    if test_kill_process_group(self.id).is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                let _ = kill_process_group(self.id, Signal::KILL);
            }
            #[cfg(not(unix))]
            let _ = grace;
        }

        /// Kills every process left in the group at once.
        pub(crate) fn kill(&self) {
            #[cfg(unix)]
            let _ = rustix::process::kill_process_group(self.id, rustix::process::Signal::KILL);
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut input: W, mut rx: mpsc::UnboundedReceiver<Bytes>) {
    let mut buf = Vec::new();
    while let Some(first) = rx.recv().await {
        // What is ready together leaves in one write.
        buf.clear();
        buf.extend_from_slice(&first);
        buf.push(b'\n');
        while let Ok(more) = rx.try_recv() {
            buf.extend_from_slice(&more);
            buf.push(b'\n');
        }
        if input.write_all(&buf).await.is_err() || input.flush().await.is_err() {
            return;
        }
    }
    // The sender is gone: closing the server's input is how a client ends a session.
    let _ = input.shutdown().await;
}

async fn read_lines<R: AsyncRead + Unpin>(output: R, incoming: IncomingTx, max_line: usize) {
    let mut reader = BufReader::new(output);
    let mut line = Vec::new();
    let why = loop {
        line.clear();
        match (&mut reader)
            .take(
                u64::try_from(max_line)
                    .unwrap_or(u64::MAX)
                    .saturating_add(1),
            )
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) => break "the server closed its output".to_owned(),
            Ok(_) if line.len() > max_line && !line.ends_with(b"\n") => {
                tracing::warn!(
                    "skipping a line of more than {max_line} bytes from the server (the client's max_message_bytes)"
                );
                line = Vec::new();
                match skip_line(&mut reader).await {
                    Ok(true) => continue,
                    Ok(false) => break "the server closed its output".to_owned(),
                    Err(e) => break format!("reading from the server: {e}"),
                }
            }
            Ok(_) => deliver(&line, &incoming, None),
            Err(e) => break format!("reading from the server: {e}"),
        }
    };
    let _ = incoming.send(Incoming::Closed(why));
}

/// Consumes the rest of a line without keeping it (a line over the limit must not be
/// buffered whole on its way out either); `false` if the output ended first.
async fn skip_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> std::io::Result<bool> {
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(false);
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(end) => {
                reader.consume(end + 1);
                return Ok(true);
            }
            None => {
                let all = buf.len();
                reader.consume(all);
            }
        }
    }
}

/// Parses a frame and delivers its messages; what does not parse is logged and dropped
/// (a server's answer to it cannot be told apart from noise).
pub(crate) fn deliver(bytes: &[u8], incoming: &IncomingTx, related: Option<&RequestId>) {
    deliver_noting(bytes, incoming, related, &mut |_| {});
}

/// [`deliver`], telling `answered` the id of each response delivered.
pub(crate) fn deliver_noting(
    bytes: &[u8],
    incoming: &IncomingTx,
    related: Option<&RequestId>,
    answered: &mut dyn FnMut(&RequestId),
) {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let messages = match wire::parse_frame(bytes) {
        Frame::Single(m) => vec![m],
        Frame::Batch(ms) => ms,
    };
    for m in messages {
        match m {
            Ok(message) => {
                if let wire::Message::Response { id, .. } = &message {
                    answered(id);
                }
                let _ = incoming.send(Incoming::Message {
                    message,
                    related: related.cloned(),
                });
            }
            Err(invalid) => match (&invalid.id, related) {
                // An error answer with `id: null` to the request this exchange carried.
                (None, Some(id)) if invalid.error.code != wire::ErrorCode::PARSE_ERROR => {
                    if let Some(error) = error_object(bytes) {
                        let _ = incoming.send(Incoming::Failed {
                            id: id.clone(),
                            error: ClientError::from_rpc(error),
                        });
                    }
                }
                _ => tracing::warn!(
                    "ignoring an invalid message from the server: {}",
                    invalid.error.message
                ),
            },
        }
    }
}

/// The `error` member of a JSON-RPC error response (whatever its id).
pub(crate) fn error_object(bytes: &[u8]) -> Option<wire::RpcError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let error = value.get("error")?;
    Some(wire::RpcError {
        code: wire::ErrorCode(error.get("code")?.as_i64()?),
        message: error
            .get("message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        data: error.get("data").cloned(),
    })
}

impl Link for StdioLink {
    fn kind(&self) -> LinkKind {
        LinkKind::Stdio
    }

    fn send(&self, out: Outbound) -> LinkFuture<'_, Result<(), ClientError>> {
        let sent = match self.out.lock().ok().and_then(|g| g.clone()) {
            Some(tx) => tx.send(out.json).map_err(|_| ClientError::closed()),
            None => Err(ClientError::closed()),
        };
        Box::pin(async move { sent })
    }

    fn abandon(&self, _id: &RequestId) {}

    fn session_opened(&self, _version: crate::ProtocolVersion) {}

    fn close(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            // Dropping the sender ends the writer, which closes the server's input.
            if let Ok(mut out) = self.out.lock() {
                out.take();
            }
            let writer = self.writer.lock().ok().and_then(|mut w| w.take());
            if let Some(writer) = writer {
                let _ = tokio::time::timeout(EXIT_GRACE, writer).await;
            }
            let group = self.group.lock().ok().and_then(|mut g| g.take());
            let mut child = self.child.lock().await;
            if let Some(child) = child.as_mut() {
                if tokio::time::timeout(EXIT_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    match &group {
                        // The server is asked to end first, and its whole group with it.
                        Some(group) => group.end(EXIT_GRACE).await,
                        None => {
                            let _ = child.start_kill();
                        }
                    }
                    let _ = child.wait().await;
                }
            }
            // What the server started and left behind (a shell's or a launcher's
            // children that outlived it) ends too.
            if let Some(group) = &group {
                group.end(EXIT_GRACE).await;
            }
        })
    }
}
