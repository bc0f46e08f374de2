//! This runtime's client against real servers of every era, each at its own revision:
//! the official Python SDK (`tests/clients/server.py` under every pinned release, 1.8.1 …
//! 2.3.0) over stdio and Streamable HTTP, answering its sampling and elicitation asks; the
//! official TypeScript SDK's example server of an old (1.10.2) and a new (1.32.2) release
//! over Streamable HTTP; rmcp (the benchmark server's rmcp mode) over stdio. This
//! runtime's own example server is driven by `client.rs`.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_runtime::model::{Content, Elicitation, Implementation, ResourceContents, SampledMessage};
use mcp_runtime::{Era, ProtocolVersion};
use mcp_runtime_client::{Client, ClientBuilder};
use serde_json::{json, Map, Value};

mod kit;

use kit::pinned::{self, Pinned};

fn builder() -> ClientBuilder {
    Client::builder(Implementation::new("interop-test", "1.0.0"))
        .timeout(kit::patience())
        .inherit_stderr(false)
        .on_sampling(|_| async { Ok(SampledMessage::assistant_text("m", "Paris")) })
        .on_elicitation(|request| async move {
            let mut content = Map::new();
            if let Some(Value::Object(props)) = request
                .requested_schema
                .as_ref()
                .and_then(|s| s.get("properties"))
            {
                for (name, prop) in props {
                    let v = match prop.get("type").and_then(Value::as_str) {
                        Some("boolean") => json!(true),
                        Some("integer" | "number") => json!(1),
                        _ => json!("ada"),
                    };
                    content.insert(name.clone(), v);
                }
            }
            Ok(Elicitation::Accept(content))
        })
}

fn first_text(content: &[Content]) -> String {
    match content.first() {
        Some(Content::Text { text, .. }) => text.clone(),
        other => format!("{other:?}"),
    }
}

/// A pinned Python venv, its SDK's newest revision, and whether its server can ask.
struct Python {
    venv: &'static str,
    revision: &'static str,
    sampling: bool,
    elicitation: bool,
}

const PYTHONS: [Python; 5] = [
    Python {
        venv: "py-2024-11-05",
        revision: "2024-11-05",
        sampling: true,
        elicitation: false,
    },
    Python {
        venv: "py-2025-03-26",
        revision: "2025-03-26",
        sampling: true,
        elicitation: false,
    },
    Python {
        venv: "py-2025-06-18",
        revision: "2025-06-18",
        sampling: true,
        elicitation: true,
    },
    Python {
        venv: "py-2025-11-25",
        revision: "2025-11-25",
        sampling: true,
        elicitation: true,
    },
    Python {
        venv: "py-2026-07-28",
        revision: "2026-07-28",
        sampling: false,
        elicitation: false,
    },
];

fn python(venv: &str) -> String {
    pinned::clients_dir()
        .join(venv)
        .join("bin/python")
        .display()
        .to_string()
}

fn server_script() -> String {
    pinned::clients_src()
        .join("server.py")
        .display()
        .to_string()
}

async fn python_session(client: &Client, p: &Python) {
    assert_eq!(client.version().as_str(), p.revision, "{}", p.venv);
    let tools = client.list_all_tools().await.expect("tools");
    assert!(
        tools.iter().any(|t| t.name == "test_simple_text"),
        "{}",
        p.venv
    );
    let result = client
        .call_tool("test_simple_text", json!({}))
        .await
        .expect("call");
    assert_eq!(
        first_text(&result.content),
        "This is a simple text response for testing."
    );
    let contents = client
        .read_resource("test://static-text")
        .await
        .expect("read");
    assert!(
        matches!(&contents[..], [ResourceContents::Text { text, .. }] if text.contains("static text")),
        "{}: {contents:?}",
        p.venv
    );
    let prompt = client
        .get_prompt("test_simple_prompt", Vec::<(String, String)>::new())
        .await
        .expect("prompt");
    assert!(
        matches!(&prompt.messages[0].content, Content::Text { text, .. } if text.contains("simple prompt"))
    );
    if p.sampling {
        let sampled = client
            .call_tool("test_sampling", json!({"prompt": "Capital of France?"}))
            .await
            .expect("sampling");
        assert_eq!(
            first_text(&sampled.content),
            "LLM response: Paris",
            "{}",
            p.venv
        );
    }
    if p.elicitation {
        let elicited = client
            .call_tool("test_elicitation", json!({"message": "Who?"}))
            .await
            .expect("elicitation");
        assert!(
            first_text(&elicited.content).contains(r#""username":"ada""#),
            "{}: {elicited:?}",
            p.venv
        );
    }
}

#[tokio::test]
async fn python_sdk_servers_of_every_release_over_stdio() {
    pinned::ensure(Pinned::PythonClients);
    for p in &PYTHONS {
        let client = builder()
            .connect_command(&python(p.venv), [server_script()])
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", p.venv));
        python_session(&client, p).await;
        client.close().await;
    }
}

/// A free loopback port (bound, then released for the server to take).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A server process, killed on drop.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until something accepts connections on `port` (`what` is listening there).
async fn wait_for(port: u16, what: &str) {
    // Python imports take seconds on a busy machine.
    for _ in 0..1200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: nothing listens on port {port}");
}

#[tokio::test]
async fn python_sdk_servers_of_every_release_over_streamable_http() {
    pinned::ensure(Pinned::PythonClients);
    // 2024-11-05 has no Streamable HTTP; mcp 1.8.1 serves it anyway.
    for p in &PYTHONS {
        let port = free_port();
        let _server = Process(
            Command::new(python(p.venv))
                .args([server_script(), "--http".into(), port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("python server"),
        );
        wait_for(port, p.venv).await;
        let client = builder()
            .connect_url(&format!("http://127.0.0.1:{port}/mcp"))
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", p.venv));
        python_session(&client, p).await;
        client.close().await;
    }
}

#[tokio::test]
async fn typescript_sdk_example_servers_old_and_new() {
    pinned::ensure(Pinned::TypeScriptClients);
    let npm = pinned::clients_dir().join("npm/node_modules");
    for (sdk, revision) in [
        ("sdk-2024-11-05", "2024-11-05"),
        ("sdk-2025-11-25", "2025-11-25"),
    ] {
        let port = free_port();
        let script = npm
            .join(sdk)
            .join("dist/esm/examples/server/simpleStreamableHttp.js");
        let _server = Process(
            Command::new("node")
                .arg("--import")
                .arg(pinned::clients_src().join("listen-port.mjs"))
                .arg(script)
                .env("LISTEN_PORT", port.to_string())
                .env("MCP_PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("node"),
        );
        wait_for(port, sdk).await;
        let client = builder()
            .connect_url(&format!("http://127.0.0.1:{port}/mcp"))
            .await
            .unwrap_or_else(|e| panic!("{sdk}: {e}"));
        // The old release answers a client offering 2025-11-25 with its newest revision,
        // 2024-11-05 — over Streamable HTTP, which it already serves.
        assert_eq!(client.version().as_str(), revision, "{sdk}");
        let tools = client.list_all_tools().await.expect("tools");
        assert!(tools.iter().any(|t| t.name == "greet"), "{sdk}: {tools:?}");
        let greeting = client
            .call_tool("greet", json!({"name": "Ada"}))
            .await
            .expect("greet");
        assert!(
            first_text(&greeting.content).contains("Ada"),
            "{sdk}: {greeting:?}"
        );
        let prompt = client
            .get_prompt("greeting-template", [("name", "Ada")])
            .await
            .expect("prompt");
        assert!(!prompt.messages.is_empty());
        let resources = client.list_all_resources().await.expect("resources");
        let contents = client.read_resource(&resources[0].uri).await.expect("read");
        assert!(!contents.is_empty());
        if tools.iter().any(|t| t.name == "collect-user-info") {
            // The new release asks the user (elicitation) from this tool.
            let asked = client
                .call_tool("collect-user-info", json!({"infoType": "contact"}))
                .await
                .expect("elicitation");
            assert!(!asked.is_error, "{sdk}: {asked:?}");
        }
        client.close().await;
    }
}

#[tokio::test]
async fn rmcp_over_stdio() {
    let exe = kit::process::example_named("bench_server");
    let client = builder()
        .connect_command(exe.to_str().expect("path"), ["rmcp-stdio", "--tools", "3"])
        .await
        .expect("rmcp");
    // rmcp 3.11 answers the server/discover probe: it speaks 2026-07-28.
    assert_eq!(client.version().era(), Era::Modern);
    assert_eq!(
        client.version(),
        ProtocolVersion::parse("2026-07-28").expect("a revision")
    );
    let tools = client.list_all_tools().await.expect("tools");
    // `--tools 3`: three text tools, plus the bench's structured-output and typed tools.
    assert_eq!(tools.len(), 5, "{tools:?}");
    let result = client
        .call_tool("tool_0", json!({"city": "Paris"}))
        .await
        .expect("call");
    assert_eq!(first_text(&result.content), "It will be sunny.");
    client.close().await;
}
