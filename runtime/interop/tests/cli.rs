//! `mcp`, the command-line client, against real servers: seven third-party servers
//! (mcp-server-time, -git, -calculator, -sqlite from PyPI; server-filesystem, -memory,
//! -everything from npm; pinned in `tests/servers`, installed by the tests) in every era
//! each serves, directly and through `mcp-bridge` (its stdio front and its HTTP front),
//! and our own examples over stdio and HTTP. Each command is run as a user runs it, as a
//! process, and what it prints and its exit status are checked.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};

use serde_json::Value;

mod kit;

use kit::pinned::{self, Pinned};
use kit::process::{example_named, HttpServer};

/// What one `mcp` run left: its status, stdout and stderr.
struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }
}

/// Runs `mcp args…` with stdin closed (not a terminal); not ending within the patience
/// (three times: third-party servers start slowly) is a failure.
fn mcp(args: &[&str]) -> Run {
    mcp_env(args, &[])
}

fn mcp_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut child = Command::new(example_named("mcp"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning mcp");
    let (mut out, mut err) = (
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
    );
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > kit::patience() * 3 {
            let _ = child.kill();
            panic!("mcp {args:?} did not end within {:?}", kit::patience() * 3);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Run {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

/// `mcp args…`, which must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let run = mcp(args);
    assert!(
        run.status.success(),
        "mcp {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        run.status,
        run.stdout,
        run.stderr
    );
    run.stdout
}

/// How the test reaches a server.
#[derive(Clone, Copy, Debug)]
enum Front {
    /// `mcp … -- SERVER`.
    Direct,
    /// `mcp … -- mcp-bridge -- SERVER`.
    BridgeStdio,
    /// `mcp … --url` of `mcp-bridge --http … -- SERVER`.
    BridgeHttp,
}

/// A third-party server: its command line, and the revisions to pin it at (beside the
/// negotiated default).
struct ThirdParty {
    argv: Vec<String>,
    revisions: &'static [&'static str],
}

const LEGACY_ONLY: &[&str] = &["2025-11-25", "2024-11-05"];
const BOTH_ERAS: &[&str] = &["2025-11-25", "2026-07-28"];

fn python_server(venv: &str, program: &str, args: &[&str]) -> Vec<String> {
    pinned::ensure(Pinned::PythonServers);
    let mut argv = vec![pinned::servers_dir()
        .join(venv)
        .join("bin")
        .join(program)
        .display()
        .to_string()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    argv
}

fn npm_server(package: &str, args: &[&str]) -> Vec<String> {
    pinned::ensure(Pinned::NpmServers);
    let script = pinned::servers_dir()
        .join("npm/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    let mut argv = vec!["node".to_owned(), script.display().to_string()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    argv
}

/// Runs `mcp` with the given words plus what names the server; its stdout.
type RunMcp<'a> = dyn Fn(&[&str]) -> String + 'a;

/// Runs `check` against `server` through every front, at the default negotiation and at
/// each of its revisions (checked with `mcp info`).
fn every_way(server: &ThirdParty, check: &dyn Fn(&RunMcp)) {
    let bridge = example_named("bridge").display().to_string();
    for front in [Front::Direct, Front::BridgeStdio, Front::BridgeHttp] {
        let http = matches!(front, Front::BridgeHttp).then(|| {
            let mut args = vec!["--".to_owned()];
            args.extend(server.argv.iter().cloned());
            BridgeProcess::start(&args)
        });
        let mut revisions: Vec<Option<&str>> = vec![None];
        // Through the bridge every client revision is served, whatever the upstream's.
        let downstream: &[&str] = match front {
            Front::Direct => server.revisions,
            _ => &["2024-11-05", "2025-11-25", "2026-07-28"],
        };
        revisions.extend(downstream.iter().map(|r| Some(*r)));
        for revision in revisions {
            let run = |args: &[&str]| {
                let mut full: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
                full.push("-q".to_owned());
                if let Some(r) = revision {
                    full.extend(["--revision".to_owned(), r.to_owned()]);
                }
                match front {
                    Front::Direct => {
                        full.push("--".to_owned());
                        full.extend(server.argv.iter().cloned());
                    }
                    Front::BridgeStdio => {
                        full.extend(["--".to_owned(), bridge.clone(), "--".to_owned()]);
                        full.extend(server.argv.iter().cloned());
                    }
                    Front::BridgeHttp => {
                        let url = http.as_ref().expect("the bridge").url();
                        full.extend(["--url".to_owned(), url]);
                    }
                }
                let refs: Vec<&str> = full.iter().map(String::as_str).collect();
                let out = mcp(&refs);
                assert!(
                    out.status.success(),
                    "{front:?} at {revision:?}: mcp {refs:?} failed ({}):\nstdout: {}\nstderr: {}{}",
                    out.status,
                    out.stdout,
                    out.stderr,
                    http.as_ref().map(BridgeProcess::log).unwrap_or_default()
                );
                out.stdout
            };
            if let Some(r) = revision {
                let info: Value = serde_json::from_str(&run(&["info", "--json"])).expect("JSON");
                assert_eq!(info["protocolVersion"], r, "{front:?}: {info}");
            }
            check(&run);
        }
    }
}

/// `mcp-bridge --http` in the background; killed on drop.
struct BridgeProcess(HttpServer);

impl BridgeProcess {
    fn start(args: &[String]) -> BridgeProcess {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        BridgeProcess(HttpServer::start_example_with("bridge", &args))
    }

    fn url(&self) -> String {
        self.0.url("/mcp")
    }

    fn log(&self) -> String {
        format!("\nbridge: {}", self.0.log())
    }
}

#[test]
fn mcp_server_time_in_both_eras() {
    let server = ThirdParty {
        argv: python_server(
            "py-time-git",
            "mcp-server-time",
            &["--local-timezone", "UTC"],
        ),
        revisions: BOTH_ERAS,
    };
    every_way(&server, &|run| {
        assert!(run(&["tools"]).contains("get_current_time(timezone: string)"));
        let now: Value = serde_json::from_str(&run(&[
            "call",
            "--json",
            "get_current_time",
            "timezone=Europe/Oslo",
        ]))
        .expect("JSON");
        let text = now["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Europe/Oslo"), "{now}");
        let converted = run(&[
            "call",
            "convert_time",
            "source_timezone=UTC",
            "time=12:00",
            "target_timezone=Asia/Tokyo",
        ]);
        assert!(converted.contains("21:00"), "{converted}");
        assert!(run(&["ping"]).starts_with("ok"));
    });
}

#[test]
fn mcp_server_git_in_both_eras() {
    let repo = tempfile::tempdir().expect("tempdir");
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .stdout(Stdio::null())
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("a.txt"), "a\n").expect("write");
    let path = repo.path().display().to_string();
    let server = ThirdParty {
        argv: python_server("py-time-git", "mcp-server-git", &["--repository", &path]),
        revisions: BOTH_ERAS,
    };
    every_way(&server, &|run| {
        assert!(run(&["tools"]).contains("git_status(repo_path: string)"));
        let status = run(&["call", "git_status", &format!("repo_path={path}")]);
        assert!(status.contains("a.txt"), "{status}");
    });
}

#[test]
fn mcp_server_calculator_in_every_legacy_revision() {
    let server = ThirdParty {
        argv: python_server("py-calculator-sqlite", "mcp-server-calculator", &[]),
        revisions: LEGACY_ONLY,
    };
    every_way(&server, &|run| {
        assert!(run(&["tools"]).contains("calculate(expression: string)"));
        // A string that is not JSON stays a string.
        assert_eq!(run(&["call", "calculate", "expression=6*7"]).trim(), "42");
        assert_eq!(
            run(&["call", "calculate", "--args", r#"{"expression": "2**10"}"#]).trim(),
            "1024"
        );
    });
}

#[test]
fn mcp_server_sqlite_in_every_legacy_revision() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("test.db").display().to_string();
    let server = ThirdParty {
        argv: python_server(
            "py-calculator-sqlite",
            "mcp-server-sqlite",
            &["--db-path", &db],
        ),
        revisions: LEGACY_ONLY,
    };
    let made = std::sync::atomic::AtomicUsize::new(0);
    every_way(&server, &|run| {
        let n = made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let table = format!("t{n}");
        run(&[
            "call",
            "create_table",
            &format!("query=CREATE TABLE {table} (x INTEGER)"),
        ]);
        run(&[
            "call",
            "write_query",
            &format!("query=INSERT INTO {table} VALUES (7)"),
        ]);
        let rows = run(&[
            "call",
            "read_query",
            &format!("query=SELECT x FROM {table}"),
        ]);
        assert!(rows.contains("'x': 7"), "{rows}");
        assert!(run(&["call", "list_tables"]).contains(&table));
        assert!(run(&["resources"]).contains("memo://insights"));
        let prompts = run(&["prompts"]);
        assert!(prompts.contains("mcp-demo(topic)"), "{prompts}");
        let prompt = run(&["prompt", "mcp-demo", "topic=birds"]);
        assert!(prompt.contains("birds"), "{prompt}");
    });
}

#[test]
fn server_filesystem_in_every_legacy_revision() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::write(root.join("hello.txt"), "hello from the test\n").expect("write");
    let root_text = root.display().to_string();
    let server = ThirdParty {
        argv: npm_server("server-filesystem", &[&root_text]),
        revisions: LEGACY_ONLY,
    };
    every_way(&server, &|run| {
        assert!(run(&["tools"]).contains("read_text_file(path: string, head?: number"));
        let file = run(&[
            "call",
            "read_text_file",
            &format!("path={}", root.join("hello.txt").display()),
        ]);
        assert!(file.contains("hello from the test"), "{file}");
        let allowed = run(&["call", "list_allowed_directories"]);
        assert!(allowed.contains(&root_text), "{allowed}");
    });
}

/// server-memory with `MEMORY_FILE_PATH=… node …` as a `--command`: the shell line keeps
/// its assignment (the old `exec CMD` refused it).
#[test]
fn server_memory_with_an_environment_assignment_in_every_legacy_revision() {
    pinned::ensure(Pinned::NpmServers);
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = dir.path().join("memory.jsonl");
    let argv = npm_server("server-memory", &[]);
    let line = format!("MEMORY_FILE_PATH={} {}", memory.display(), argv.join(" "));
    let entity = r#"{"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]}"#;
    for revision in ["2025-11-25", "2024-11-05"] {
        let out = ok(&[
            "call",
            "create_entities",
            "--args",
            entity,
            "--revision",
            revision,
            "--command",
            &line,
        ]);
        assert!(out.contains("Ada"), "{out}");
        let graph = ok(&[
            "call",
            "read_graph",
            "--revision",
            revision,
            "--command",
            &line,
        ]);
        assert!(graph.contains("wrote the first program"), "{graph}");
        std::fs::remove_file(&memory).expect("the server wrote where MEMORY_FILE_PATH said");
    }
    // Through the bridge, whose own --command carries the assignment.
    let bridge = example_named("bridge").display().to_string();
    for revision in ["2025-11-25", "2026-07-28"] {
        let graph = ok(&[
            "call",
            "read_graph",
            "--revision",
            revision,
            "--",
            &bridge,
            "--command",
            &line,
        ]);
        assert!(graph.contains("entities"), "{graph}");
    }
    // And every front and revision with the argv form.
    let server = ThirdParty {
        argv: npm_server("server-memory", &[]),
        revisions: LEGACY_ONLY,
    };
    every_way(&server, &|run| {
        assert!(run(&["tools"]).contains("read_graph()"));
    });
}

#[test]
fn server_everything_in_every_legacy_revision() {
    let server = ThirdParty {
        argv: npm_server("server-everything", &["stdio"]),
        revisions: LEGACY_ONLY,
    };
    every_way(&server, &|run| {
        assert_eq!(
            run(&["call", "echo", "message=hi there"]).trim(),
            "Echo: hi there"
        );
        assert!(run(&["prompts"]).contains("args-prompt(city, state?)"));
        let prompt = run(&["prompt", "args-prompt", "city=Oslo"]);
        assert!(prompt.contains("Oslo"), "{prompt}");
        let resources = run(&["resources"]);
        assert!(
            resources.contains("demo://resource/static/document/features.md"),
            "{resources}"
        );
        let read = run(&["read", "demo://resource/static/document/features.md"]);
        assert!(read.contains('#'), "{read}");
        let sum: Value = serde_json::from_str(&run(&["call", "--json", "get-sum", "a=2", "b=40"]))
            .expect("JSON");
        assert!(sum.to_string().contains("42"), "{sum}");
    });
}

/// Roots the client declares reach server-everything directly and through every front of
/// the bridge, in both eras of the downstream client (issue 34: through the HTTP front
/// it reported "no roots").
#[test]
fn roots_reach_server_everything_through_every_front() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().display().to_string();
    let server = ThirdParty {
        argv: npm_server("server-everything", &["stdio"]),
        revisions: LEGACY_ONLY,
    };
    every_way(&server, &|run| {
        let roots = run(&["call", "get-roots-list", "--root", &root]);
        assert!(roots.contains(&format!("file://{root}")), "{roots}");
    });
}

/// Progress of a long tool is shown on stderr while it runs.
#[test]
fn progress_is_shown_while_a_long_tool_runs() {
    let argv = npm_server("server-everything", &["stdio"]);
    let mut args = vec![
        "call",
        "trigger-long-running-operation",
        "duration=1",
        "steps=4",
        "-q",
        "--",
    ];
    args.extend(argv.iter().map(String::as_str));
    let run = mcp(&args);
    assert!(run.status.success(), "{}", run.stderr);
    assert!(
        run.stdout.contains("Long running operation completed"),
        "{}",
        run.stdout
    );
    for step in 1..=4 {
        assert!(
            run.stderr.contains(&format!("progress: {step}/4")),
            "step {step}: {}",
            run.stderr
        );
    }
    // Our own example, over stdio, through the bridge.
    let weather = example_named("weather").display().to_string();
    let bridge = example_named("bridge").display().to_string();
    let run = mcp(&[
        "call",
        "climate_report",
        "city=Oslo",
        "years=3",
        "--",
        &bridge,
        "--",
        &weather,
    ]);
    assert!(run.status.success(), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("progress: 3/3 (100%) read 3 of 3 years"),
        "{}",
        run.stderr
    );
}

/// Sampling and elicitation are refused with a clear error when stdin is not a terminal.
#[test]
fn asks_are_refused_without_a_terminal() {
    let asking = example_named("asking").display().to_string();
    for revision in ["2025-11-25", "2026-07-28"] {
        let run = mcp(&["call", "book_table", "--revision", revision, "--", &asking]);
        assert!(
            run.stderr.contains("stdin is not a terminal"),
            "{revision}: {}\n{}",
            run.stdout,
            run.stderr
        );
        assert_eq!(run.status.code(), Some(1), "{revision}: {}", run.stderr);
    }
    let argv = npm_server("server-everything", &["stdio"]);
    let mut args = vec!["call", "trigger-sampling-request", "prompt=hi", "-q", "--"];
    args.extend(argv.iter().map(String::as_str));
    let run = mcp(&args);
    assert!(run.stderr.contains("asked for sampling"), "{}", run.stderr);
    assert!(
        run.stderr.contains("stdin is not a terminal"),
        "{}",
        run.stderr
    );
    assert_eq!(run.status.code(), Some(1));
}

/// Our own examples, over stdio and HTTP, in every era.
#[test]
fn our_examples_over_stdio_and_http() {
    let weather = example_named("weather").display().to_string();
    let http = HttpServer::start_example("weather");
    let url = http.url("/mcp");
    for revision in ["2024-11-05", "2025-06-18", "2026-07-28"] {
        for target in [vec!["--", weather.as_str()], vec!["--url", url.as_str()]] {
            if revision == "2024-11-05" && target[0] == "--url" {
                continue; // 2024-11-05 is HTTP+SSE, below
            }
            let with = |args: &[&str]| {
                let mut full: Vec<&str> = args.to_vec();
                full.extend(["--revision", revision]);
                full.extend(target.iter().copied());
                ok(&full)
            };
            let tools = with(&["tools"]);
            assert!(
                tools.contains("forecast(city: string, days?: integer)"),
                "{tools}"
            );
            let forecast: Value = serde_json::from_str(&with(&[
                "--json",
                "call",
                "forecast",
                "city=Oslo",
                "days=2",
            ]))
            .expect("JSON");
            let text = forecast.to_string();
            assert!(
                text.contains("Oslo") && text.contains("20"),
                "{revision}: {forecast}"
            );
            assert!(with(&["resources"]).contains("weather://{city}/today"));
            assert_eq!(
                with(&["read", "weather://Lisbon/today"]).trim(),
                "Lisbon: 19 °C, partly cloudy"
            );
            assert!(with(&["prompt", "packing_list", "city=Nairobi"]).contains("Nairobi"));
            let info: Value = serde_json::from_str(&with(&["info", "--json"])).expect("JSON");
            assert_eq!(info["protocolVersion"], revision);
            assert_eq!(info["serverInfo"]["name"], "weather");
        }
    }
    // HTTP+SSE (2024-11-05).
    let sse = http.url("/sse");
    assert!(ok(&["tools", "--url", &sse]).contains("forecast"));
}

/// Bad input gets a clear error and status 2, never a panic or a hang.
#[test]
fn bad_command_lines_say_what_is_wrong() {
    let weather = example_named("weather").display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["tools"], "name the server"),
        (
            &["tools", "--url", "http://x/mcp", "--command", "y"],
            "cannot be used with",
        ),
        (
            &["call", "forecast", "city", "--", &weather],
            "expected key=value, got `city`",
        ),
        (
            &["call", "forecast", "--args", "[1]", "--", &weather],
            "must be a JSON object",
        ),
        (
            &["tools", "--revision", "2020-01-01", "--", &weather],
            "unknown revision",
        ),
        (
            &["tools", "--bearer", "t", "--", &weather],
            "apply to a server at a --url",
        ),
    ];
    for (args, says) in cases {
        let run = mcp(args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    // A server that is not there, a tool that is not there: status 1, the cause named.
    let run = mcp(&["tools", "--", "/nonexistent/server"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        run.stderr.contains("cannot start `/nonexistent/server`"),
        "{}",
        run.stderr
    );
    let run = mcp(&["call", "no_such_tool", "--", &weather]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        run.stderr.to_lowercase().contains("no_such_tool"),
        "{}",
        run.stderr
    );
    let version = ok(&["--version"]);
    assert!(version.starts_with("mcp "), "{version}");
}

/// `--json` output of every listing is one JSON document with the protocol's names.
#[test]
fn json_output_is_one_document_per_command() {
    let weather = example_named("weather").display().to_string();
    let tools = mcp(&["tools", "--json", "--", &weather]).json();
    assert_eq!(tools["tools"][0]["name"], "forecast");
    assert!(tools["tools"][0]["inputSchema"]["properties"]["city"].is_object());
    let prompts = mcp(&["prompts", "--json", "--", &weather]).json();
    assert_eq!(prompts["prompts"][0]["name"], "packing_list");
    let resources = mcp(&["resources", "--json", "--", &weather]).json();
    assert_eq!(
        resources["resourceTemplates"][0]["uriTemplate"],
        "weather://{city}/today"
    );
    let ping = mcp(&["ping", "--json", "--", &weather]).json();
    assert_eq!(ping["ok"], true);
}
