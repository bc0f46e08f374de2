//! `mcp-bridge` as a command people run every day: its help and version, its exit on a
//! signal (calls in flight drained, what cannot finish answered with an error, the
//! upstream's whole process group ended, status 0), `--revision` without the probe,
//! an upstream without `subscriptions/listen` noted once, and errors that name their
//! cause.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_runtime::model::Implementation;
use mcp_runtime_client::Client;
use serde_json::json;

mod kit;

use kit::pinned::{self, Pinned};
use kit::process::{example_named, sigterm, HttpServer};

/// Processes whose command line starts with `marker` (not the shells and bridges that
/// merely name it).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.starts_with(marker) {
            found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[test]
fn help_and_version_exit_zero_and_bad_flags_exit_two() {
    let run = |args: &[&str]| {
        Command::new(example_named("bridge"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("bridge")
    };
    let help = run(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--command",
        "--url",
        "--http",
        "--header",
        "--bearer",
        "--oauth",
        "--oauth-headless",
        "--oauth-client",
        "--oauth-client-credentials",
        "--oauth-redirect",
        "--revision",
        "--drain-timeout",
        "--max-sessions",
        "--session-idle-timeout",
        "PROGRAM ARGS",
    ] {
        assert!(
            text.contains(flag),
            "--help does not describe {flag}:\n{text}"
        );
    }
    let version = run(&["--version"]);
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("mcp-bridge "));
    for (args, says) in [
        (&[][..], "name the server"),
        (
            &["--command", "x", "--url", "http://y"][..],
            "cannot be used with",
        ),
        (
            &["--http", "nope", "--command", "x"][..],
            "invalid socket address",
        ),
        (
            &["--command", "x", "--oauth-client-credentials"][..],
            "--oauth-client ID:SECRET",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// SIGTERM with two calls in flight: the short one finishes, the long one is answered
/// with an error saying why once the drain is over; the bridge exits 0, and no process
/// of the upstream's group is left (a grandchild the upstream's shell started included).
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_drains_answers_what_cannot_finish_and_ends_the_upstream_group() {
    let weather = example_named("weather").display().to_string();
    let marker = format!("{}", 900_000 + std::process::id() % 99_999);
    // A shell line that leaves a grandchild behind unless its group is ended.
    let line = format!("sleep {marker} & {weather}");
    let mut bridge =
        HttpServer::start_example_with("bridge", &["--drain-timeout", "2", "--command", &line]);
    assert_eq!(processes_with(&format!("sleep {marker}")).len(), 1);
    let client = Client::builder(Implementation::new("t", "1"))
        .connect_url(&bridge.url("/mcp"))
        .await
        .expect("connect");
    let short = {
        let c = client.clone();
        tokio::spawn(async move {
            c.call_tool("climate_report", json!({"city": "Oslo", "years": 5}))
                .await
        })
    };
    let long = {
        let c = client.clone();
        tokio::spawn(async move {
            c.call_tool("climate_report", json!({"city": "Oslo", "years": 100}))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    sigterm(bridge.pid());
    let short = short
        .await
        .expect("task")
        .expect("the short call finishes in the drain");
    assert!(
        format!("{short:?}").contains("5 years of mild summers"),
        "{short:?}"
    );
    let long = long
        .await
        .expect("task")
        .expect_err("the long call cannot finish");
    assert!(
        long.to_string()
            .contains("did not finish within the drain timeout"),
        "{long}"
    );
    let status = tokio::task::spawn_blocking(move || {
        let status = bridge.wait_exit();
        (status, bridge.log())
    })
    .await
    .expect("wait");
    assert!(status.0.success(), "exited with {}: {}", status.0, status.1);
    kit::eventually("the upstream group is gone", || {
        processes_with(&format!("sleep {marker}")).is_empty()
    })
    .await;
}

/// Over the stdio front, SIGINT ends the bridge with status 0 and the upstream with it.
#[test]
fn sigint_on_the_stdio_front_exits_zero_and_ends_the_upstream() {
    let weather = example_named("weather").display().to_string();
    let marker = format!("{}", 800_000 + std::process::id() % 99_999);
    let line = format!("sleep {marker} & {weather}");
    let mut child = Command::new(example_named("bridge"))
        .args(["--command", &line])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bridge");
    let mut stderr = child.stderr.take().expect("stderr");
    let start = std::time::Instant::now();
    while processes_with(&format!("sleep {marker}")).is_empty() {
        assert!(
            start.elapsed() < kit::patience(),
            "the upstream did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Connected upstream once the startup line is out.
    std::thread::sleep(Duration::from_millis(500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let status = kit::process::wait_exit(&mut child);
    let mut log = String::new();
    let _ = stderr.read_to_string(&mut log);
    assert!(status.success(), "exited with {status}: {log}");
    let start = std::time::Instant::now();
    while !processes_with(&format!("sleep {marker}")).is_empty() {
        assert!(
            start.elapsed() < kit::patience(),
            "the upstream group outlived the bridge"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `--revision` pins the upstream revision: no `server/discover` probe, so an mcp 1.x
/// Python server logs no validation warnings (it logs dozens of lines on the probe).
#[test]
fn revision_pins_the_upstream_without_a_probe() {
    pinned::ensure(Pinned::PythonServers);
    let calculator = pinned::servers_dir()
        .join("py-calculator-sqlite/bin/mcp-server-calculator")
        .display()
        .to_string();
    for (pin, probed) in [(None, true), (Some("2025-06-18"), false)] {
        let mut args = vec![];
        if let Some(r) = pin {
            args.extend(["--revision", r]);
        }
        args.extend(["--", calculator.as_str()]);
        let bridge = HttpServer::start_example_with("bridge", &args);
        let log = bridge.log();
        let expected = format!("upstream speaks MCP {}", pin.unwrap_or("2025-11-25"));
        assert!(log.contains(&expected), "{log}");
        assert_eq!(
            log.contains("Failed to validate request"),
            probed,
            "pinned at {pin:?}: {log}"
        );
    }
}

/// A 2026-07-28 upstream without `subscriptions/listen` is noted once, not retried.
#[test]
fn a_missing_listen_is_noted_once() {
    pinned::ensure(Pinned::PythonServers);
    let time = pinned::servers_dir()
        .join("py-time-git/bin/mcp-server-time")
        .display()
        .to_string();
    let bridge = HttpServer::start_example_with("bridge", &["--", &time]);
    std::thread::sleep(Duration::from_secs(4));
    let log = bridge.log();
    assert!(log.contains("upstream speaks MCP 2026-07-28"), "{log}");
    assert_eq!(
        log.matches("no subscriptions/listen").count(),
        1,
        "noted once: {log}"
    );
    assert!(!log.contains("subscription to changes"), "retried: {log}");
}

/// A client that did not declare sampling hears exactly that, over both fronts' kinds of
/// upstream link.
#[tokio::test(flavor = "multi_thread")]
async fn an_undeclared_sampling_is_refused_naming_the_cause() {
    pinned::ensure(Pinned::NpmServers);
    let everything = pinned::servers_dir()
        .join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string();
    let bridge = HttpServer::start_example_with("bridge", &["--", "node", &everything, "stdio"]);
    for revision in ["2025-11-25", "2026-07-28"] {
        let client = Client::builder(Implementation::new("t", "1"))
            .pin(mcp_runtime::ProtocolVersion::parse(revision).expect("revision"))
            .connect_url(&bridge.url("/mcp"))
            .await
            .expect("connect");
        let result = client
            .call_tool("trigger-sampling-request", json!({"prompt": "hi"}))
            .await;
        let said = match result {
            Ok(r) => format!("{r:?}"),
            Err(e) => e.to_string(),
        };
        assert!(
            said.contains("did not declare sampling"),
            "{revision}: {said}\n{}",
            bridge.log()
        );
        client.close().await;
    }
}
