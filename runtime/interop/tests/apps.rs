//! MCP Apps end to end. The `apps` example over stdio gives every revision that has
//! `_meta` (2025-06-18 and later) the tool's `_meta.ui` and the `ui://` resource with its
//! MIME type and `_meta.ui`, and the older ones the same tools and HTML without it, each
//! message exact against its revision's schema. Then in a real browser (Debian's
//! chromium, headless): a host page built on the official ext-apps host side
//! (`AppBridge`) and the official TypeScript client calls the tool over HTTP, reads the
//! resource, renders the app in a sandboxed iframe, and a click in the app calls a server
//! tool through the host; the test reads the result from the page and keeps a screenshot
//! (`target/apps/artifacts/counter.png`).

mod kit;

use std::process::Command;

use kit::pinned::{self, Pinned};
use kit::process::HttpServer;
use kit::stdio::Stdio;
use serde_json::{json, Value};

const VIEW: &str = "ui://counter/view.html";
const MIME: &str = "text/html;profile=mcp-app";
const UI: &str = "io.modelcontextprotocol/ui";

/// tools/list, resources/list and resources/read of the example at `version`.
async fn listings(version: &str) -> (Value, Value, Value, Value) {
    let mut example = Stdio::spawn_example("apps");
    let (init, meta) = if version == kit::MODERN {
        (Value::Null, Some(kit::modern_meta(json!({}))))
    } else {
        (example.initialize(version, json!({})).await, None)
    };
    let params = |extra: Value| {
        let mut p = extra;
        if let Some(meta) = &meta {
            p["_meta"] = meta.clone();
        }
        p
    };
    let tools = example.request(1, "tools/list", params(json!({}))).await;
    let resources = example
        .request(2, "resources/list", params(json!({})))
        .await;
    let read = example
        .request(3, "resources/read", params(json!({"uri": VIEW})))
        .await;
    example.finish().await;
    (init, tools, resources, read)
}

fn tool<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools["result"]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name}: {tools}"))
}

#[tokio::test]
async fn the_app_reaches_every_revision_with_meta_and_the_older_ones_without_it() {
    for version in ["2025-06-18", "2025-11-25", kit::MODERN] {
        let (init, tools, resources, read) = listings(version).await;
        if version != kit::MODERN {
            // Before 2026-07-28 the only open place in capabilities is `experimental`.
            assert_eq!(
                init["result"]["capabilities"]["experimental"][UI],
                json!({"mimeTypes": [MIME]}),
                "{version}: {init}"
            );
        }
        assert_eq!(
            tool(&tools, "counter")["_meta"],
            json!({"ui": {"resourceUri": VIEW}}),
            "{version}"
        );
        assert_eq!(
            tool(&tools, "increment")["_meta"],
            json!({"ui": {"visibility": ["app"]}}),
            "{version}"
        );
        let listed = &resources["result"]["resources"][0];
        assert_eq!(listed["uri"], VIEW, "{version}: {resources}");
        assert_eq!(listed["mimeType"], MIME);
        assert_eq!(listed["_meta"], json!({"ui": {"prefersBorder": true}}));
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["mimeType"], MIME, "{version}: {read}");
        assert_eq!(contents["_meta"], json!({"ui": {"prefersBorder": true}}));
        assert!(contents["text"]
            .as_str()
            .is_some_and(|html| html.contains("ui/initialize")));
    }
    let (_, tools, resources, read) = listings("2025-03-26").await;
    assert!(tool(&tools, "counter").get("_meta").is_none(), "{tools}");
    assert!(resources["result"]["resources"][0].get("_meta").is_none());
    assert_eq!(read["result"]["contents"][0]["mimeType"], MIME);
    assert!(read["result"]["contents"][0].get("_meta").is_none());
}

#[test]
fn a_host_on_the_official_app_bridge_renders_the_app_which_calls_a_tool_through_it() {
    pinned::ensure(Pinned::Apps);
    kit::browser::chromium();
    let server = HttpServer::start_example("apps");
    let artifacts = pinned::apps_dir().join("artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifacts directory");
    let screenshot = artifacts.join("counter.png");
    let _ = std::fs::remove_file(&screenshot);
    let patience = kit::patience::patience();
    let out = Command::new("node")
        .arg(pinned::apps_src().join("drive.mjs"))
        .arg(pinned::apps_dir())
        .arg(server.url("/mcp"))
        .arg(&screenshot)
        .arg(patience.as_millis().to_string())
        .output()
        .expect("node runs drive.mjs (node is installed with the pinned packages)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "drive.mjs failed ({}): {stderr}\nserver log:\n{}",
        out.status,
        server.log()
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "drive.mjs printed no JSON ({e}): {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let host = &seen["host"];
    assert_eq!(host["phase"], "rendered", "{seen:#}");
    // What the host read through the official client: the linked UI, the declared
    // extension, the app resource with its MIME type and `_meta.ui`.
    assert_eq!(host["resourceUri"], VIEW, "{seen:#}");
    let capabilities = &host["serverCapabilities"];
    let declared = capabilities["extensions"]
        .get(UI)
        .or_else(|| capabilities["experimental"].get(UI));
    assert_eq!(declared, Some(&json!({"mimeTypes": [MIME]})), "{seen:#}");
    assert_eq!(host["contents"]["mimeType"], MIME);
    assert_eq!(host["contents"]["_meta"]["ui"]["prefersBorder"], true);
    assert_eq!(
        host["toolResult"]["structuredContent"],
        json!({"count": 41})
    );
    // The app, sandboxed in an opaque origin, showed the tool result the host passed on,
    // and its click went app → host (AppBridge) → server (`increment`) and back.
    assert_eq!(seen["sandbox"], "allow-scripts");
    assert_eq!(seen["appOrigin"], "null");
    assert_eq!(seen["countBefore"], "41", "{seen:#}");
    assert_eq!(seen["status"], "incremented", "{seen:#}");
    assert_eq!(seen["countAfter"], "42", "{seen:#}");
    assert!(
        seen["appPolicy"]
            .as_str()
            .is_some_and(|p| p.contains("connect-src 'none'")),
        "{seen:#}"
    );
    let png = std::fs::read(&screenshot).expect("the screenshot was saved");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
}

/// A server on stdio, spoken to line by line: no wire check (it is not ours), every line
/// it writes kept until the answer a request waits for arrives.
struct Peer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Peer {
    fn spawn(program: &std::path::Path, args: &[&str]) -> Peer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", program.display()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").expect("writing to the server");
    }

    fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&kit::request(id, method, params));
        loop {
            let line = self
                .lines
                .recv_timeout(kit::patience::patience())
                .unwrap_or_else(|_| panic!("no answer to {method} within the patience"));
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the comparison asks, at 2025-11-25 (the newest revision the example's SDK speaks):
/// the host's `initialize` (declaring MCP Apps), then the listings and the app's HTML.
fn host_initialize() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"extensions": {UI: {"mimeTypes": [MIME]}}},
        "clientInfo": {"name": "apps-test-host", "version": "1.0.0"}
    })
}

/// The parts of the answers that must be the same through the bridge: the declared
/// extensions (under `extensions` and `experimental`) and the three results whole.
fn compared(init: &Value, tools: &Value, resources: &Value, read: &Value) -> Value {
    let capabilities = &init["result"]["capabilities"];
    json!({
        "extensions": capabilities.get("extensions"),
        "experimental": capabilities.get("experimental"),
        "tools/list": tools["result"],
        "resources/list": resources["result"],
        "resources/read": read["result"],
    })
}

fn over_stdio(program: &std::path::Path, args: &[&str]) -> Value {
    let mut peer = Peer::spawn(program, args);
    let init = peer.call(1, "initialize", host_initialize());
    assert!(init.get("result").is_some(), "{init}");
    peer.send(&kit::notification("notifications/initialized", None));
    let tools = peer.call(2, "tools/list", json!({}));
    let resources = peer.call(3, "resources/list", json!({}));
    let uri = resources["result"]["resources"][0]["uri"].clone();
    let read = peer.call(4, "resources/read", json!({ "uri": uri }));
    compared(&init, &tools, &resources, &read)
}

/// An official ext-apps example server (`@modelcontextprotocol/server-basic-vanillajs`,
/// `--stdio`) answers `tools/list`, `resources/list` and `resources/read` through
/// `mcp-bridge`, over stdio and over Streamable HTTP, exactly as it answers directly:
/// every `_meta` (including its deprecated flat `ui/resourceUri`), the declared
/// extensions and every field our model does not know.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_official_app_server_answers_through_the_bridge_as_it_does_directly() {
    pinned::ensure(Pinned::Apps);
    let script = pinned::apps_dir()
        .join("node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    let script = script.to_str().expect("a UTF-8 path").to_owned();
    let node = std::path::PathBuf::from("node");
    let direct = over_stdio(&node, &[&script, "--stdio"]);
    let tool = &direct["tools/list"]["tools"][0];
    assert!(
        tool["_meta"]["ui"]["resourceUri"]
            .as_str()
            .is_some_and(|u| u.starts_with("ui://")),
        "{direct:#}"
    );
    assert_eq!(direct["resources/read"]["contents"][0]["mimeType"], MIME);

    let upstream = format!("node {script} --stdio");
    let bridge = kit::process::example_named("bridge");
    let through_stdio = over_stdio(&bridge, &["--command", &upstream]);
    assert_eq!(through_stdio, direct, "through the bridge over stdio");

    let server = HttpServer::start_example_with("bridge", &["--command", &upstream]);
    let http = kit::http::Http::new(&server.url(""));
    let init = http
        .post(&[], &kit::request(1, "initialize", host_initialize()))
        .await;
    let session = init.session.clone().expect("Mcp-Session-Id");
    let init = init.messages().remove(0);
    let headers = [("mcp-session-id", session.as_str())];
    let posted = http
        .post(
            &headers,
            &kit::notification("notifications/initialized", None),
        )
        .await;
    assert_eq!(
        posted.status,
        reqwest::StatusCode::ACCEPTED,
        "{}",
        posted.body
    );
    let ask = |id: i64, method: &'static str, params: Value| {
        let http = &http;
        let headers = &headers;
        async move {
            http.post(headers, &kit::request(id, method, params))
                .await
                .messages()
                .into_iter()
                .find(|m| m["id"] == json!(id))
                .unwrap_or_else(|| panic!("no answer to {method}"))
        }
    };
    let tools = ask(2, "tools/list", json!({})).await;
    let resources = ask(3, "resources/list", json!({})).await;
    let uri = resources["result"]["resources"][0]["uri"].clone();
    let read = ask(4, "resources/read", json!({ "uri": uri })).await;
    let through_http = compared(&init, &tools, &resources, &read);
    assert_eq!(
        through_http,
        direct,
        "through the bridge over HTTP; bridge log:\n{}",
        server.log()
    );
}
