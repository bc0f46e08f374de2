//! The example binaries as separate processes: the programs under test (and the tests'
//! own clients) talk to them over stdio (`kit::stdio::Stdio::spawn_example`) or HTTP
//! ([`HttpServer`]) like to any other server.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::patience::patience;

/// The example's binary, beside this test's (`target/<profile>/examples/`). Cargo builds
/// examples for `cargo test --workspace` but not for `cargo test --test <name>`, so a
/// missing binary fails with the command that builds it.
pub fn example() -> PathBuf {
    example_named("conformance_server")
}

/// The binary of the example `name`, located as [`example`] is.
pub fn example_named(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let path = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target dir")
        .join("examples")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p mcp-interop --example {name}` \
         (`cargo test --workspace` builds it)",
        path.display()
    );
    path
}

/// The example serving HTTP on an ephemeral loopback port; the process is killed on drop,
/// so a failing test does not leak it.
pub struct HttpServer {
    child: Child,
    base: String,
    /// The URL the example printed.
    printed: String,
    log: Arc<Mutex<String>>,
}

impl HttpServer {
    pub fn start() -> Self {
        Self::start_example("conformance_server")
    }

    /// The example `name`, which takes `--http ADDR` and prints `listening on URL`.
    pub fn start_example(name: &str) -> Self {
        Self::start_example_with(name, &[])
    }

    /// The example `name` with `--http 127.0.0.1:0` and `args` after it.
    pub fn start_example_with(name: &str, args: &[&str]) -> Self {
        let mut child = Command::new(example_named(name))
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", example_named(name).display()));
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        // Keeps draining stderr after the address line, so the server never blocks on it.
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // `listening on URL`, perhaps followed by more (the bridge names /sse too).
                if let Some(rest) = line.strip_prefix("listening on ") {
                    let url = rest.split_whitespace().next().unwrap_or_default();
                    let _ = tx.send(url.to_owned());
                }
                let mut log = sink.lock().unwrap_or_else(|e| e.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        // Built before the check so that a panic below still kills the process.
        let mut server = HttpServer {
            child,
            base: String::new(),
            printed: String::new(),
            log,
        };
        let url = rx.recv_timeout(patience()).unwrap_or_else(|_| {
            panic!(
                "the example printed no `listening on` line: {}",
                server.log()
            )
        });
        server.base = match url.strip_suffix("/mcp") {
            Some(base) => base.to_owned(),
            // An example that serves MCP elsewhere (`embedded --prefix`): its origin.
            None => origin_of(&url).unwrap_or_else(|| panic!("unexpected address line: {url}")),
        };
        server.printed = url;
        server
    }

    /// `path` on the server, e.g. `/mcp` (Streamable HTTP) or `/sse` (HTTP+SSE).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The URL the example printed on its `listening on` line.
    pub fn printed_url(&self) -> &str {
        &self.printed
    }

    /// `http://HOST:PORT` of the server.
    pub fn origin(&self) -> String {
        origin_of(&self.printed).expect("an http URL")
    }

    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (blocking) for the server to exit by itself; not within the patience is a
    /// failure.
    pub fn wait_exit(&mut self) -> ExitStatus {
        wait_exit(&mut self.child)
    }
}

/// `http://HOST:PORT` of an `http://HOST:PORT/…` URL.
fn origin_of(url: &str) -> Option<String> {
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split('/').next()?;
    Some(format!("http://{authority}"))
}

/// Sends SIGTERM to process `pid`.
pub fn sigterm(pid: u32) {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("running kill");
    assert!(status.success(), "kill -TERM {pid}: {status}");
}

/// Waits (blocking) for `child` to exit; not within the patience is a failure.
pub fn wait_exit(child: &mut Child) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(
            start.elapsed() < patience(),
            "process {} did not exit within {:?}",
            child.id(),
            patience()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
