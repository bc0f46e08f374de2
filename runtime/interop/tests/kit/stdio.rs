//! The stdio client of the tests: newline-delimited JSON to a server served by
//! `transport::stdio::serve` over in-memory pipes ([`Stdio::serve`]) or to an example
//! binary as a child process ([`Stdio::spawn_example`]).
//!
//! stdout is ordered, so the client is strict about what arrives next: [`Stdio::request`]
//! fails unless the next message is the answer to its id, [`Stdio::exchange`] returns the
//! notifications and server requests that came first and fails on any other response, and
//! nothing is ever read and dropped. "Nothing else arrived" is checked at the end, when
//! [`Stdio::close`] has shut the server's input and read everything the server still wrote
//! until it closed its output ([`Stdio::finish`] asserts that was nothing), not by waiting
//! for a silence. Every wait is bounded by the kit's one [`patience`]. The whole
//! conversation is recorded, for golden transcripts and for failure messages.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::patience::patience;
use super::process::example_named;
use super::{notification, request};

/// Who sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client to server.
    ToServer,
    /// Server to client.
    ToClient,
}

/// Every line of the conversation, in order, as written on the wire.
type Log = Arc<Mutex<Vec<(Dir, Vec<u8>)>>>;

fn record(log: &Log, dir: Dir, line: &[u8]) {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((dir, line.to_vec()));
}

/// The last messages of the conversation, for a failure message.
fn recent(log: &Log) -> String {
    let log = log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let skip = log.len().saturating_sub(8);
    let mut out = String::from("the conversation's last messages:");
    for (dir, line) in log.iter().skip(skip) {
        let arrow = match dir {
            Dir::ToServer => "→",
            Dir::ToClient => "←",
        };
        let text = String::from_utf8_lossy(line);
        let shown: String = text.chars().take(400).collect();
        let more = if shown.len() < text.len() { " …" } else { "" };
        out.push_str(&format!("\n  {arrow} {shown}{more}"));
    }
    out
}

/// Whether `message` is the response to the request `id`.
pub fn is_answer_to(message: &Value, id: &Value) -> bool {
    message.get("method").is_none()
        && message.get("id") == Some(id)
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// The writing half: what the client sends.
pub struct Outbound {
    writer: Option<Box<dyn AsyncWrite + Send + Unpin>>,
    log: Log,
}

impl Outbound {
    /// Writes one line (a newline is added) as it is: invalid JSON, invalid UTF-8,
    /// oversized lines.
    pub async fn send_raw(&mut self, line: impl AsRef<[u8]>) {
        let line = line.as_ref();
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        let writer = self
            .writer
            .as_mut()
            .expect("the client's output is still open");
        let write = async {
            writer.write_all(&bytes).await?;
            writer.flush().await
        };
        match tokio::time::timeout(patience(), write).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("writing to the server: {e}\n{}", recent(&self.log)),
            Err(_) => panic!(
                "the server took no input for {:?}\n{}",
                patience(),
                recent(&self.log)
            ),
        }
        record(&self.log, Dir::ToServer, line);
    }

    /// Writes one message.
    pub async fn send(&mut self, message: &Value) {
        self.send_raw(serde_json::to_vec(message).expect("encode"))
            .await;
    }

    fn shut(&mut self) {
        drop(self.writer.take());
    }
}

/// The reading half: what the server writes.
pub struct Inbound {
    reader: BufReader<Box<dyn AsyncRead + Send + Unpin>>,
    log: Log,
    line: Vec<u8>,
}

impl Inbound {
    /// The next message, or `None` once the server has closed its output. Fails if
    /// nothing arrives within the patience, or if the server writes a line that is not
    /// JSON.
    pub async fn next(&mut self) -> Option<Value> {
        let line = self.next_line().await?;
        match serde_json::from_slice(line) {
            Ok(message) => Some(message),
            Err(e) => panic!(
                "the server wrote a line that is not JSON ({e}): {}",
                String::from_utf8_lossy(line)
            ),
        }
    }

    /// The next line as the server wrote it (without its newline), or `None` once the
    /// server has closed its output.
    async fn next_line(&mut self) -> Option<&[u8]> {
        self.line.clear();
        let read = self.reader.read_until(b'\n', &mut self.line);
        let n = match tokio::time::timeout(patience(), read).await {
            Ok(Ok(n)) => n,
            Ok(Err(e)) => panic!("reading from the server: {e}\n{}", recent(&self.log)),
            Err(_) => panic!(
                "expected a message from the server within {:?} (MCP_TEST_TIMEOUT_MS); none arrived\n{}",
                patience(),
                recent(&self.log)
            ),
        };
        if n == 0 {
            return None;
        }
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        record(&self.log, Dir::ToClient, line);
        Some(line)
    }

    /// The next line exactly as the server wrote it (for what a parsed `Value` does not
    /// keep: the text of a number); it must still be JSON.
    pub async fn recv_text(&mut self) -> String {
        let Some(line) = self.next_line().await else {
            panic!(
                "the server closed its output; a message was expected\n{}",
                recent(&self.log)
            )
        };
        let text = String::from_utf8(line.to_vec()).expect("the server writes UTF-8");
        serde_json::from_str::<Value>(&text)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {text}"));
        text
    }

    /// The next message; the server closing its output first is a failure.
    pub async fn recv(&mut self) -> Value {
        match self.next().await {
            Some(message) => message,
            None => panic!(
                "the server closed its output; a message was expected\n{}",
                recent(&self.log)
            ),
        }
    }
}

/// How the server ends.
enum End {
    /// `transport::stdio::serve` in a task of the test's runtime.
    Task(tokio::task::JoinHandle<std::io::Result<()>>),
    /// A child process (killed if the client is dropped before it exits).
    Process(tokio::process::Child),
    /// Already awaited.
    Done,
}

/// A stdio client; see the module documentation.
pub struct Stdio {
    out: Outbound,
    inb: Inbound,
    end: End,
}

impl Stdio {
    /// Serves `server` with `transport::stdio::serve` in a task of the current runtime,
    /// over in-memory pipes of 64 KiB each way.
    pub fn serve(server: mcp_runtime::Server) -> Stdio {
        Stdio::serve_with_buffer(server, 1 << 16)
    }

    /// [`Stdio::serve`] with pipes that hold `buffer` bytes each way.
    pub fn serve_with_buffer(server: mcp_runtime::Server, buffer: usize) -> Stdio {
        let (client_out, server_in) = tokio::io::duplex(buffer);
        let (server_out, client_in) = tokio::io::duplex(buffer);
        let task = tokio::spawn(mcp_runtime::transport::stdio::serve(
            server, server_in, server_out,
        ));
        Stdio::over(Box::new(client_out), Box::new(client_in), End::Task(task))
    }

    /// Serves the conformance example server in process.
    pub fn conformance() -> Stdio {
        Stdio::serve(super::conformance_server())
    }

    /// Runs the example binary `name` (built beside the test) and speaks to it over its
    /// stdin and stdout; its stderr is discarded.
    pub fn spawn_example(name: &str) -> Stdio {
        let exe = example_named(name);
        let mut child = tokio::process::Command::new(&exe)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", exe.display()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Stdio::over(Box::new(stdin), Box::new(stdout), End::Process(child))
    }

    fn over(
        writer: Box<dyn AsyncWrite + Send + Unpin>,
        reader: Box<dyn AsyncRead + Send + Unpin>,
        end: End,
    ) -> Stdio {
        let log = Log::default();
        Stdio {
            out: Outbound {
                writer: Some(writer),
                log: Arc::clone(&log),
            },
            inb: Inbound {
                reader: BufReader::with_capacity(1 << 16, reader),
                log,
                line: Vec::new(),
            },
            end,
        }
    }

    /// The child process's id (`None` in process).
    pub fn pid(&self) -> Option<u32> {
        match &self.end {
            End::Process(child) => child.id(),
            _ => None,
        }
    }

    // ───────────────────────────── sending ─────────────────────────────

    /// Writes one line as it is (a newline is added).
    pub async fn send_raw(&mut self, line: impl AsRef<[u8]>) {
        self.out.send_raw(line).await;
    }

    /// Writes one message.
    pub async fn send(&mut self, message: &Value) {
        self.out.send(message).await;
    }

    /// Writes a notification of `method` (params omitted when `None`).
    pub async fn notify(&mut self, method: &str, params: impl Into<Option<Value>>) {
        self.send(&notification(method, params)).await;
    }

    // ───────────────────────────── receiving ─────────────────────────────

    /// The next message (see [`Inbound::recv`]).
    pub async fn recv(&mut self) -> Value {
        self.inb.recv().await
    }

    /// The next message as the server wrote it (see [`Inbound::recv_text`]).
    pub async fn recv_text(&mut self) -> String {
        self.inb.recv_text().await
    }

    /// The next message must be the response to `id`; anything else is a failure.
    pub async fn answer(&mut self, id: &Value) -> Value {
        let message = self.recv().await;
        assert!(
            is_answer_to(&message, id),
            "expected the answer to {id}, got {message}\n{}",
            recent(&self.inb.log)
        );
        message
    }

    /// Reads until the response to `id`: returns the messages that came first (each a
    /// notification or a server request), and the response. A response to anything else
    /// arriving first is a failure.
    pub async fn until_answer(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let message = self.recv().await;
            if is_answer_to(&message, id) {
                return (before, message);
            }
            assert!(
                message.get("method").is_some(),
                "waiting for the answer to {id}, another response arrived: {message}\n{}",
                recent(&self.inb.log)
            );
            before.push(message);
        }
    }

    /// Sends a request and returns its response, which must be the next message.
    pub async fn request(
        &mut self,
        id: impl Into<Value>,
        method: &str,
        params: impl Into<Option<Value>>,
    ) -> Value {
        let id = id.into();
        self.send(&request(id.clone(), method, params)).await;
        self.answer(&id).await
    }

    /// Sends a request; returns what arrived before its response (notifications, server
    /// requests) and the response ([`Stdio::until_answer`]).
    pub async fn exchange(
        &mut self,
        id: impl Into<Value>,
        method: &str,
        params: impl Into<Option<Value>>,
    ) -> (Vec<Value>, Value) {
        let id = id.into();
        self.send(&request(id.clone(), method, params)).await;
        self.until_answer(&id).await
    }

    /// The legacy handshake: `initialize` at `version` with `capabilities` (id 0), which
    /// must be answered with a result, then `notifications/initialized`. Returns the
    /// response.
    pub async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let response = self
            .request(
                0,
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "mcp-test-kit", "version": "1.0.0"},
                }),
            )
            .await;
        assert!(
            response.get("result").is_some(),
            "initialize at {version} failed: {response}"
        );
        self.notify("notifications/initialized", None).await;
        response
    }

    /// [`Stdio::initialize`], which must negotiate `version` itself.
    pub async fn open(&mut self, version: &str, capabilities: Value) {
        let response = self.initialize(version, capabilities).await;
        assert_eq!(
            response["result"]["protocolVersion"], version,
            "negotiated: {response}"
        );
    }

    // ───────────────────────────── the end ─────────────────────────────

    /// Shuts the server's input, then reads everything it still writes until it closes its
    /// output, and waits for it to end (the serve task returns `Ok`, or the process exits
    /// successfully). Returns what was read after the input closed.
    pub async fn close(&mut self) -> Vec<Value> {
        self.out.shut();
        self.until_closed().await
    }

    /// [`Stdio::close`], asserting that the server wrote nothing more: every message it
    /// sent was one the test read and checked.
    pub async fn finish(&mut self) {
        let trailing = self.close().await;
        assert!(
            trailing.is_empty(),
            "the server wrote after the last message the test expected: {trailing:#?}"
        );
    }

    /// Reads everything the server writes until it closes its output, without closing its
    /// input (a server told to stop some other way: a signal), and waits for it to end.
    pub async fn until_closed(&mut self) -> Vec<Value> {
        let mut trailing = Vec::new();
        while let Some(message) = self.inb.next().await {
            trailing.push(message);
        }
        match std::mem::replace(&mut self.end, End::Done) {
            End::Task(task) => tokio::time::timeout(patience(), task)
                .await
                .expect("serve() did not return after closing its output")
                .expect("the serve task")
                .expect("serve() returned an error"),
            End::Process(mut child) => {
                let status = tokio::time::timeout(patience(), child.wait())
                    .await
                    .expect("the server did not exit after closing its output")
                    .expect("wait");
                assert!(status.success(), "the server exited with {status}");
            }
            End::Done => {}
        }
        trailing
    }

    /// The halves, for a test that writes and reads at the same time. The server is left
    /// running (it ends with the test's runtime).
    pub fn split(self) -> (Outbound, Inbound) {
        (self.out, self.inb)
    }

    /// The conversation as text for a snapshot: each message numbered, its direction, and
    /// its JSON pretty-printed (keys in the order they were written on the wire).
    pub fn transcript(&self) -> String {
        let log = self
            .inb
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = String::new();
        for (i, (dir, line)) in log.iter().enumerate() {
            let arrow = match dir {
                Dir::ToServer => "client → server",
                Dir::ToClient => "server → client",
            };
            out.push_str(&format!("── #{} {arrow}\n", i + 1));
            match serde_json::from_slice::<Value>(line) {
                Ok(message) => {
                    out.push_str(&serde_json::to_string_pretty(&message).expect("encode"))
                }
                Err(_) => out.push_str(&String::from_utf8_lossy(line)),
            }
            out.push('\n');
        }
        out
    }
}
