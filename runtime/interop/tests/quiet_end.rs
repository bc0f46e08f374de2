//! Servers end quietly: every example stdio server (and the bridge in front of one), in a
//! session of either era, exits with status 0 and writes nothing to stderr when its
//! client goes away — by closing the server's stdin, or by closing its own end of the
//! server's stdout, while the server is idle or while it answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

mod kit;

/// What the client closes as it goes away.
#[derive(Clone, Copy, Debug)]
enum Close {
    /// It closes the server's stdin.
    Stdin,
    /// It closes its end of the server's stdout and sends nothing more (the server is
    /// idle: it must notice by itself).
    StdoutIdle,
    /// It closes its end of the server's stdout, then sends a request (the answer cannot
    /// be written).
    StdoutThenAsk,
}

/// The era of the session the client opens before it leaves.
#[derive(Clone, Copy, Debug)]
enum Era {
    Legacy,
    Modern,
}

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
    /// stderr, read to the end on a thread of its own.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Session {
    fn start(program: &std::path::Path, args: &[String]) -> Session {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", program.display()));
        let mut err = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        Session {
            stdin: child.stdin.take(),
            stdout: child.stdout.take().map(BufReader::new),
            child,
            stderr: Some(stderr),
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("writing to the server");
        stdin.flush().expect("flush");
    }

    /// Reads lines until the answer to `id` (notifications may come first).
    fn answer(&mut self, id: i64) -> Value {
        let stdout = self.stdout.as_mut().expect("stdout open");
        loop {
            let mut line = String::new();
            let read = stdout.read_line(&mut line).expect("reading the server");
            assert!(read > 0, "the server closed stdout before answering {id}");
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn open(&mut self, era: Era) {
        match era {
            Era::Legacy => {
                self.send(&kit::request(
                    1,
                    "initialize",
                    json!({"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "quiet-end", "version": "1"}}),
                ));
                let answer = self.answer(1);
                assert!(answer.get("result").is_some(), "initialize: {answer}");
                self.send(&kit::notification("notifications/initialized", None));
                self.send(&kit::request(2, "tools/list", json!({})));
            }
            Era::Modern => self.send(&kit::request(
                2,
                "tools/list",
                json!({"_meta": kit::modern_meta(json!({}))}),
            )),
        }
        let tools = self.answer(2);
        assert!(tools["result"]["tools"].is_array(), "tools/list: {tools}");
    }

    fn leave(&mut self, how: Close, era: Era) {
        match how {
            Close::Stdin => drop(self.stdin.take()),
            Close::StdoutIdle => drop(self.stdout.take()),
            Close::StdoutThenAsk => {
                drop(self.stdout.take());
                let meta = match era {
                    Era::Legacy => json!({}),
                    Era::Modern => json!({"_meta": kit::modern_meta(json!({}))}),
                };
                // The server may already be gone: a failed write is the server's exit.
                if let Some(stdin) = self.stdin.as_mut() {
                    let _ = writeln!(stdin, "{}", kit::request(3, "tools/list", meta));
                    let _ = stdin.flush();
                }
            }
        }
    }

    /// Waits for the exit; returns its status and everything written to stderr.
    fn end(mut self) -> (std::process::ExitStatus, String) {
        let status = kit::process::wait_exit(&mut self.child);
        drop(self.stdin.take());
        let stderr = self
            .stderr
            .take()
            .map(|reader| reader.join().expect("stderr reader"))
            .unwrap_or_default();
        (status, stderr)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every way of leaving, in both eras, against `program args`; `allowed_stderr` says
/// which stderr lines are not complaints (a startup notice).
fn ends_quietly(program: &std::path::Path, args: &[String], allowed_stderr: &dyn Fn(&str) -> bool) {
    for era in [Era::Legacy, Era::Modern] {
        for how in [Close::Stdin, Close::StdoutIdle, Close::StdoutThenAsk] {
            let mut session = Session::start(program, args);
            session.open(era);
            session.leave(how, era);
            let (status, stderr) = session.end();
            let what = format!("{} {args:?}, {era:?} session, {how:?}", program.display());
            assert!(
                status.success(),
                "{what}: exited with {status}; stderr: {stderr}"
            );
            let complaints: Vec<&str> = stderr.lines().filter(|l| !allowed_stderr(l)).collect();
            assert!(
                complaints.is_empty(),
                "{what}: the server wrote to stderr: {complaints:#?}"
            );
        }
    }
}

fn example(name: &str) {
    ends_quietly(&kit::process::example_named(name), &[], &|_| false);
}

#[test]
fn quickstart_ends_quietly() {
    example("quickstart");
}

#[test]
fn weather_ends_quietly() {
    example("weather");
}

#[test]
fn asking_ends_quietly() {
    example("asking");
}

#[test]
fn conformance_server_ends_quietly() {
    example("conformance_server");
}

#[test]
fn bench_server_ends_quietly() {
    ends_quietly(
        &kit::process::example_named("bench_server"),
        &["ours".to_owned()],
        &|_| false,
    );
}

/// The bridge on stdio, in front of `weather`: its one startup line names the upstream's
/// revision; nothing else.
#[test]
fn the_bridge_ends_quietly() {
    let upstream = kit::process::example_named("weather");
    ends_quietly(
        &kit::process::example_named("bridge"),
        &["--command".to_owned(), upstream.display().to_string()],
        &|line| line.starts_with("mcp-bridge: upstream speaks MCP"),
    );
}
