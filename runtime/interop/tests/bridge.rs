//! `mcp-bridge` in front of a server that knows only 2025-06-18 — the official Python
//! SDK's FastMCP (`mcp==1.23.0`, the pinned `py-2025-06-18` venv) running
//! `tests/clients/server.py` over stdio — serving official clients of other eras: the
//! TypeScript SDK of 2024-11-05 over HTTP+SSE, the SDKs of 2025-06-18 over Streamable
//! HTTP, and the 2.x clients of 2026-07-28 over the stateless wire and over stdio. The
//! clients that can be asked run the `ask` scenario: the upstream server's sampling and
//! elicitation requests are relayed to them (as requests, or as `input_required` rounds
//! on 2026-07-28). This runtime's own client checks every revision and progress, and,
//! with upstream servers of this runtime (one that speaks 2026-07-28, one that stops at
//! 2025-11-25), that list changes and resource subscriptions pass through either era.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use mcp_runtime::model::{Content, Elicitation, Implementation, SampledMessage};
use mcp_runtime::ProtocolVersion;
use mcp_runtime_client::{Client, Notification, RequestOptions};
use serde_json::{json, Map, Value};

mod kit;

use kit::pinned::{self, Pinned};

fn bridge() -> PathBuf {
    kit::process::example_named("bridge")
}

/// The upstream server's command line: the Python SDK server of 2025-06-18.
fn upstream() -> String {
    pinned::ensure(Pinned::PythonClients);
    let python = pinned::clients_dir().join("py-2025-06-18/bin/python");
    let script = pinned::clients_src().join("server.py");
    format!("{} {}", python.display(), script.display())
}

/// The bridge serving HTTP on an ephemeral port; killed on drop.
struct HttpBridge {
    child: Child,
    base: String,
    log: Arc<Mutex<String>>,
}

impl HttpBridge {
    fn start() -> HttpBridge {
        HttpBridge::start_for(&upstream())
    }

    /// The bridge in front of the upstream server `command`.
    fn start_for(command: &str) -> HttpBridge {
        HttpBridge::start_with(&["--command", command])
    }

    /// The bridge in front of the upstream named by `upstream` (`--command …`, `--url …`).
    fn start_with(upstream: &[&str]) -> HttpBridge {
        let mut child = Command::new(bridge())
            .args(upstream)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning mcp-bridge");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("listening on ") {
                    let url = rest.split_whitespace().next().unwrap_or_default();
                    let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
                }
                let mut log = sink.lock().unwrap_or_else(|e| e.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let mut bridge = HttpBridge {
            child,
            base: String::new(),
            log,
        };
        bridge.base = rx
            .recv_timeout(kit::patience() * 3)
            .unwrap_or_else(|_| panic!("mcp-bridge did not start:\n{}", bridge.log()));
        bridge
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for HttpBridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs an official client (`run-client.sh`) against `target` (`--url URL`, or
/// `-- command…` over stdio) and returns its JSON summary.
fn run_client(client: &str, scenario: &str, target: &[String], log: &dyn Fn() -> String) -> Value {
    pinned::ensure_client(client);
    let out = Command::new("bash")
        .arg(pinned::clients_src().join("run-client.sh"))
        .env("MCP_CLIENTS_DIR", pinned::clients_dir())
        .args([client, "--scenario", scenario])
        .args(target)
        .output()
        .unwrap_or_else(|e| panic!("{client}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| {
            panic!(
                "{client}: no JSON summary ({e}): {stdout}\n{}\nbridge: {}",
                String::from_utf8_lossy(&out.stderr),
                log()
            )
        });
    assert_eq!(
        summary["ok"],
        true,
        "{client} failed: {summary}\n{}\nbridge: {}",
        String::from_utf8_lossy(&out.stderr),
        log()
    );
    summary
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn check_basic(client: &str, s: &Value, revision: &str) {
    assert_eq!(s["protocolVersion"], revision, "{client}: {s}");
    assert_eq!(
        text(&s["callResult"]),
        "This is a simple text response for testing.",
        "{client}: {s}"
    );
    assert_eq!(
        s["resource"]["contents"][0]["uri"], "test://static-text",
        "{client}: {s}"
    );
    assert_eq!(
        s["prompt"]["messages"][0]["content"]["text"], "This is a simple prompt for testing.",
        "{client}: {s}"
    );
}

fn check_ask(client: &str, s: &Value, revision: &str) {
    assert_eq!(s["protocolVersion"], revision, "{client}: {s}");
    assert_eq!(
        text(&s["samplingResult"]),
        "LLM response: Paris is the capital",
        "{client}: {s}"
    );
    let elicited = text(&s["elicitationResult"]);
    assert!(
        elicited.contains("action=accept") && elicited.contains(r#""username":"testuser""#),
        "{client}: {s}"
    );
    assert_eq!(
        s["asked"],
        json!(["sampling/createMessage", "elicitation/create"]),
        "{client}: {s}"
    );
}

#[test]
fn official_clients_of_every_era_through_the_bridge_over_http() {
    let bridge = HttpBridge::start();
    let log = || bridge.log();
    // 2024-11-05 over HTTP+SSE.
    let s = run_client(
        "ts-2024-11-05",
        "basic",
        &["--url".into(), bridge.url("/sse")],
        &log,
    );
    assert_eq!(s["transport"], "sse", "{s}");
    check_basic("ts-2024-11-05", &s, "2024-11-05");
    // 2025-06-18 over Streamable HTTP, asked by the upstream server through the bridge.
    for client in ["ts-2025-06-18", "py-2025-06-18"] {
        let s = run_client(client, "ask", &["--url".into(), bridge.url("/mcp")], &log);
        check_ask(client, &s, "2025-06-18");
    }
    // 2026-07-28 on the stateless wire: the upstream's asks become input_required rounds.
    for client in ["ts-2026-07-28-pinned", "py-2026-07-28-pinned"] {
        let s = run_client(client, "ask", &["--url".into(), bridge.url("/mcp")], &log);
        check_ask(client, &s, "2026-07-28");
        assert_eq!(s["wire"]["inputRequiredResults"], 2, "{client}: {s}");
    }
}

#[test]
fn an_official_2026_client_spawns_the_bridge_over_stdio() {
    let target = vec![
        "--".to_owned(),
        bridge().display().to_string(),
        "--command".to_owned(),
        upstream(),
    ];
    let s = run_client("ts-2026-07-28-auto", "ask", &target, &String::new);
    check_ask("ts-2026-07-28-auto", &s, "2026-07-28");
}

fn our_client() -> mcp_runtime_client::ClientBuilder {
    Client::builder(Implementation::new("bridge-test", "1.0.0"))
        .timeout(kit::patience())
        .on_sampling(|_| async { Ok(SampledMessage::assistant_text("m", "Paris")) })
        .on_elicitation(|_| async {
            let mut content = Map::new();
            content.insert("username".into(), json!("ada"));
            content.insert("email".into(), json!("ada@example.com"));
            Ok(Elicitation::Accept(content))
        })
}

fn first_text(result: &mcp_runtime::model::ToolResult) -> String {
    match result.content.first() {
        Some(Content::Text { text, .. }) => text.clone(),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn this_runtime_s_client_at_every_revision_through_the_bridge() {
    let bridge = HttpBridge::start();
    for v in ProtocolVersion::ALL {
        let client = if v.as_str() == "2024-11-05" {
            our_client().pin(v).connect_sse(&bridge.url("/sse")).await
        } else {
            our_client().pin(v).connect_url(&bridge.url("/mcp")).await
        }
        .unwrap_or_else(|e| panic!("{v}: {e}\nbridge: {}", bridge.log()));
        assert_eq!(client.version(), v);
        let result = client
            .call_tool("test_simple_text", json!({}))
            .await
            .expect("call");
        assert_eq!(
            first_text(&result),
            "This is a simple text response for testing."
        );
        let sampled = client
            .call_tool("test_sampling", json!({"prompt": "Capital of France?"}))
            .await
            .unwrap_or_else(|e| panic!("{v}: {e}\nbridge: {}", bridge.log()));
        assert_eq!(first_text(&sampled), "LLM response: Paris", "{v}");
        if v.features().elicitation {
            let elicited = client
                .call_tool("test_elicitation", json!({"message": "Who?"}))
                .await
                .expect("elicitation");
            assert!(
                first_text(&elicited).contains(r#""username":"ada""#),
                "{v}: {elicited:?}"
            );
        }
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink = reports.clone();
        client
            .call_tool_with(
                "test_tool_with_progress",
                json!({}),
                RequestOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress)),
            )
            .await
            .expect("progress");
        // Relayed before the answer: every report has landed when the call returns.
        assert_eq!(*reports.lock().unwrap(), vec![0.0, 50.0, 100.0], "{v}");
        client.close().await;
    }
}

/// A client of the bridge that answers sampling with `answer: <the question>`.
fn echoing_client(answer: &'static str) -> mcp_runtime_client::ClientBuilder {
    Client::builder(Implementation::new("bridge-test", "1.0.0"))
        .timeout(kit::patience())
        .on_sampling(move |request| async move {
            let question = match request.messages.last().map(|m| &m.content) {
                Some(mcp_runtime::model::SampledContent::Text(t)) => t.clone(),
                _ => String::new(),
            };
            Ok(SampledMessage::assistant_text(
                "m",
                format!("{answer}: {question}"),
            ))
        })
}

/// Polls `check` until it holds (each try one round trip through the bridge), within the
/// kit's patience.
async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + kit::patience();
    while !check().await {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within {:?}",
            kit::patience()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The upstream server adds a tool, a resource, a resource template and a prompt, and
/// announces the three list changes: the bridge follows each list, and a client of
/// another revision hears the changes and uses what was added.
#[tokio::test]
async fn every_upstream_list_change_is_followed() {
    let bridge = HttpBridge::start();
    let client = our_client()
        .pin(ProtocolVersion::parse("2025-11-25").unwrap())
        .connect_url(&bridge.url("/mcp"))
        .await
        .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
    let mut heard = client.notifications();
    let added = client.call_tool("test_add_items", json!({})).await.unwrap();
    assert_eq!(first_text(&added), "added");
    until("the added tool is listed", || async {
        let tools = client.list_all_tools().await.unwrap();
        tools.iter().any(|t| t.name == "test_added_tool")
    })
    .await;
    until("the added resource and template are listed", || async {
        let resources = client.list_all_resources().await.unwrap();
        let templates = client.list_all_resource_templates().await.unwrap();
        resources.iter().any(|r| r.uri == "test://added")
            && templates
                .iter()
                .any(|t| t.uri_template == "test://added/{item}")
    })
    .await;
    until("the added prompt is listed", || async {
        let prompts = client.list_all_prompts().await.unwrap();
        prompts.iter().any(|p| p.name == "test_added_prompt")
    })
    .await;
    // What the bridge announced downstream, each list at least once.
    let mut kinds = std::collections::BTreeSet::new();
    while let Some(n) = heard.try_recv() {
        kinds.insert(format!("{n:?}"));
    }
    for expected in [
        "ToolsListChanged",
        "ResourcesListChanged",
        "PromptsListChanged",
    ] {
        assert!(kinds.contains(expected), "{expected} not heard: {kinds:?}");
    }
    // And what was added works, forwarded upstream.
    let called = client
        .call_tool("test_added_tool", json!({}))
        .await
        .unwrap();
    assert_eq!(first_text(&called), "added tool");
    let read = client.read_resource("test://added").await.unwrap();
    assert!(format!("{read:?}").contains("added resource"), "{read:?}");
    let read = client.read_resource("test://added/7").await.unwrap();
    assert!(
        format!("{read:?}").contains("added template item 7"),
        "{read:?}"
    );
    let prompt = client
        .get_prompt("test_added_prompt", Vec::<(String, String)>::new())
        .await
        .unwrap();
    assert!(format!("{prompt:?}").contains("added prompt"), "{prompt:?}");
    client.close().await;
}

/// An upstream server that speaks 2026-07-28 (this runtime's conformance example, over
/// stdio) announces list changes only on a `subscriptions/listen` stream: the bridge keeps
/// one open, so a legacy client of the bridge hears the change.
#[tokio::test]
async fn a_2026_upstream_s_list_changes_are_followed() {
    let upstream = kit::process::example().display().to_string();
    let bridge = HttpBridge::start_for(&upstream);
    assert!(
        bridge.log().contains("upstream speaks MCP 2026-07-28"),
        "{}",
        bridge.log()
    );
    let client = our_client()
        .pin(ProtocolVersion::parse("2025-11-25").unwrap())
        .connect_url(&bridge.url("/mcp"))
        .await
        .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
    let mut heard = client.notifications();
    let triggered = client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
    assert!(!triggered.is_error, "{triggered:?}");
    let changed = tokio::time::timeout(kit::patience(), async {
        while let Some(n) = heard.recv().await {
            if matches!(n, Notification::ToolsListChanged) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(
        changed,
        Ok(true),
        "the tool list change was not passed on\nbridge: {}",
        bridge.log()
    );
    client.close().await;
}

/// An upstream server (in this process, over HTTP) with the resource `mem://watched`, a
/// tool `touch` that announces its update, and a record of what it was asked to watch
/// (`on_resource_interest`): subscriptions reach it only if the bridge passes them on.
async fn watched_upstream(
    versions: mcp_runtime::VersionSet,
) -> (kit::http::Http, Arc<Mutex<Vec<(String, bool)>>>) {
    use mcp_runtime::model::{Resource, ResourceContents, Tool, ToolResult};
    let watched = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&watched);
    let server = mcp_runtime::Server::builder(Implementation::new("watched", "1"))
        .versions(versions)
        .resource(
            Resource::new("mem://watched", "watched"),
            |uri, _| async move { Ok(vec![ResourceContents::text(uri, "text/plain", "w")]) },
        )
        .tool(
            Tool::new("touch", "Updates mem://watched"),
            |_, ctx| async move {
                ctx.announce(mcp_runtime::ServerEvent::ResourceUpdated(
                    "mem://watched".into(),
                ));
                Ok::<_, mcp_runtime::ToolError>(ToolResult::text("touched"))
            },
        )
        .on_resource_interest(move |uri, on| {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((uri.to_owned(), on));
        })
        .build();
    let http = kit::http::serve(server, mcp_runtime_http::HttpConfig::default()).await;
    (http, watched)
}

/// A downstream client's resource subscription is passed upstream (legacy: subscribe; a
/// 2026-07-28 upstream: the listen's `resourceSubscriptions`), the upstream's update
/// reaches the client, and the end of the subscription reaches the upstream too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_subscriptions_pass_through_to_either_era_upstream() {
    let legacy_only =
        mcp_runtime::VersionSet::ALL.without(ProtocolVersion::parse("2026-07-28").unwrap());
    for (versions, era) in [
        (legacy_only, "2025-11-25"),
        (mcp_runtime::VersionSet::ALL, "2026-07-28"),
    ] {
        let (upstream, watched) = watched_upstream(versions).await;
        let url = upstream.url("/mcp");
        let bridge = HttpBridge::start_with(&["--url", &url]);
        assert!(
            bridge.log().contains(&format!("upstream speaks MCP {era}")),
            "{}",
            bridge.log()
        );
        let client = our_client()
            .pin(ProtocolVersion::parse("2025-06-18").unwrap())
            .connect_url(&bridge.url("/mcp"))
            .await
            .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
        let mut heard = client.notifications();
        client.subscribe("mem://watched").await.unwrap();
        let asked = || watched.lock().unwrap_or_else(|e| e.into_inner()).clone();
        kit::eventually_or(
            || asked() == [("mem://watched".to_owned(), true)],
            || {
                format!(
                    "{era}: upstream asked {:?}\nbridge: {}",
                    asked(),
                    bridge.log()
                )
            },
        )
        .await;
        client.call_tool("touch", json!({})).await.unwrap();
        let updated = tokio::time::timeout(kit::patience(), async {
            while let Some(n) = heard.recv().await {
                if let Notification::ResourceUpdated { uri } = n {
                    return uri;
                }
            }
            String::new()
        })
        .await;
        assert_eq!(
            updated.as_deref(),
            Ok("mem://watched"),
            "{era}\nbridge: {}",
            bridge.log()
        );
        client.unsubscribe("mem://watched").await.unwrap();
        kit::eventually_or(
            || asked().last() == Some(&("mem://watched".to_owned(), false)),
            || format!("{era}: upstream asked {:?}", asked()),
        )
        .await;
        client.close().await;
    }
}

/// Over stdio nothing tells which call an upstream sampling request serves: two asking
/// calls at once each still reach their own client (the bridge runs them one at a time
/// upstream), whichever finishes first.
#[tokio::test]
async fn concurrent_asking_calls_reach_their_own_clients() {
    let bridge = HttpBridge::start();
    let v = ProtocolVersion::parse("2025-06-18").unwrap();
    let url = bridge.url("/mcp");
    let alice = echoing_client("alice")
        .pin(v)
        .connect_url(&url)
        .await
        .unwrap();
    let bob = echoing_client("bob")
        .pin(v)
        .connect_url(&url)
        .await
        .unwrap();
    let ask = |client: &Client, question: &str| {
        let (client, question) = (client.clone(), question.to_owned());
        async move {
            client
                .call_tool("test_sampling", json!({"prompt": question}))
                .await
        }
    };
    for round in 0..3 {
        let (a, b) = tokio::join!(ask(&alice, "Who is Alice?"), ask(&bob, "Who is Bob?"));
        let (a, b) = (
            a.unwrap_or_else(|e| panic!("{round}: {e}\nbridge: {}", bridge.log())),
            b.unwrap_or_else(|e| panic!("{round}: {e}\nbridge: {}", bridge.log())),
        );
        assert_eq!(first_text(&a), "LLM response: alice: Who is Alice?");
        assert_eq!(first_text(&b), "LLM response: bob: Who is Bob?");
    }
}

/// A 2026-07-28 client answers each upstream ask in an `input_required` round and
/// retries: the upstream tool runs once for the whole call (two asks, three rounds),
/// where a legacy client's call is one run too.
#[tokio::test]
async fn a_2026_client_s_rounds_run_the_upstream_tool_once() {
    let bridge = HttpBridge::start();
    let modern = echoing_client("modern")
        .pin(ProtocolVersion::parse("2026-07-28").unwrap())
        .connect_url(&bridge.url("/mcp"))
        .await
        .unwrap();
    let result = modern
        .call_tool("test_counted_asks", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
    assert_eq!(
        first_text(&result),
        "run 1: modern: First question? | modern: Second question?"
    );
    let legacy = echoing_client("legacy")
        .pin(ProtocolVersion::parse("2025-06-18").unwrap())
        .connect_url(&bridge.url("/mcp"))
        .await
        .unwrap();
    let result = legacy
        .call_tool("test_counted_asks", json!({}))
        .await
        .unwrap();
    assert_eq!(
        first_text(&result),
        "run 2: legacy: First question? | legacy: Second question?"
    );
    // Two modern calls at once, each kept apart.
    let (a, b) = tokio::join!(
        modern.call_tool("test_counted_asks", json!({})),
        modern.call_tool("test_counted_asks", json!({}))
    );
    let mut runs: Vec<String> = [a.unwrap(), b.unwrap()].iter().map(first_text).collect();
    runs.sort();
    assert_eq!(
        runs,
        vec![
            "run 3: modern: First question? | modern: Second question?",
            "run 4: modern: First question? | modern: Second question?"
        ]
    );
}

/// Resource reads and prompts that ask are kept across a 2026-07-28 client's rounds as
/// tool calls are: the upstream template and prompt each run once per request (two asks,
/// three rounds).
#[tokio::test]
async fn a_2026_client_s_rounds_read_a_resource_and_get_a_prompt_upstream_once() {
    let bridge = HttpBridge::start();
    let modern = echoing_client("modern")
        .pin(ProtocolVersion::parse("2026-07-28").unwrap())
        .connect_url(&bridge.url("/mcp"))
        .await
        .unwrap();
    for (n, item) in [(1, "a"), (2, "b")] {
        let contents = modern
            .read_resource(&format!("test://counted/{item}"))
            .await
            .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
        let text = match contents.first() {
            Some(mcp_runtime::model::ResourceContents::Text { text, .. }) => text.clone(),
            other => panic!("not text: {other:?}"),
        };
        assert_eq!(
            text,
            format!(
                "read {n} of {item}: modern: First resource question? | modern: Second resource question?"
            )
        );
    }
    let prompt = modern
        .get_prompt("test_counted_prompt", Vec::<(String, String)>::new())
        .await
        .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
    let text = match prompt.messages.first().map(|m| &m.content) {
        Some(mcp_runtime::model::Content::Text { text, .. }) => text.clone(),
        other => panic!("not text: {other:?}"),
    };
    assert_eq!(
        text,
        "prompt 1: modern: First prompt question? | modern: Second prompt question?"
    );
}

/// An upstream server (in this process, over HTTP) whose tool, resource, contents and
/// results carry `_meta`, and whose tool answers with the request `_meta` it read.
async fn meta_upstream() -> kit::http::Http {
    use mcp_runtime::model::{Resource, ResourceContents, Tool, ToolResult};
    let server = mcp_runtime::Server::builder(Implementation::new("meta-upstream", "1"))
        .tool(
            Tool::new("seen", "The request _meta it read")
                .meta("ui", json!({"resourceUri": "ui://meta/app.html"})),
            |_, ctx| async move {
                let seen = Value::Object(ctx.meta().clone());
                Ok::<_, mcp_runtime::ToolError>(
                    ToolResult::text(seen.to_string()).meta("com.example/result", 1),
                )
            },
        )
        .resource(
            Resource::new("ui://meta/app.html", "app")
                .mime_type("text/html;profile=mcp-app")
                .meta("ui", json!({"prefersBorder": true})),
            |uri, _| async move {
                Ok(vec![ResourceContents::text(
                    uri,
                    "text/html;profile=mcp-app",
                    "<p>",
                )
                .meta(
                    "ui",
                    json!({"csp": {"connectDomains": ["https://api.example.com"]}}),
                )])
            },
        )
        .build();
    kit::http::serve(server, mcp_runtime_http::HttpConfig::default()).await
}

/// The bridge keeps the `_meta` of the server it fronts — on listed items, contents and
/// results, in both eras — and passes a request's application keys (the trace context)
/// upstream, while the protocol's own keys stay each side's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_keeps_the_upstream_meta_and_passes_the_trace_context_on() {
    let upstream = meta_upstream().await;
    let bridge = HttpBridge::start_with(&["--url", &upstream.url("/mcp")]);
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    for v in ["2025-11-25", "2026-07-28"] {
        let client = our_client()
            .pin(ProtocolVersion::parse(v).unwrap())
            .connect_url(&bridge.url("/mcp"))
            .await
            .unwrap_or_else(|e| panic!("{e}\nbridge: {}", bridge.log()));
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(
            tools[0].meta.as_ref().map(|m| m["ui"].clone()),
            Some(json!({"resourceUri": "ui://meta/app.html"})),
            "{v}"
        );
        let resources = client.list_all_resources().await.unwrap();
        assert_eq!(
            resources[0].meta.as_ref().map(|m| m["ui"].clone()),
            Some(json!({"prefersBorder": true})),
            "{v}"
        );
        let contents = client.read_resource("ui://meta/app.html").await.unwrap();
        assert_eq!(
            contents[0].metadata().map(|m| m["ui"]["csp"].clone()),
            Some(json!({"connectDomains": ["https://api.example.com"]})),
            "{v}"
        );
        let mut sent = Map::new();
        sent.insert("traceparent".into(), json!(traceparent));
        sent.insert("com.example/request".into(), json!("r"));
        let result = client
            .call_tool_with("seen", json!({}), RequestOptions::new().meta(sent))
            .await
            .unwrap();
        let meta = result.meta.clone().unwrap_or_default();
        assert_eq!(meta.get("com.example/result"), Some(&json!(1)), "{v}");
        // A 2026-07-28 result names its server (the bridge, which presents the upstream's
        // identity); a 2025-11-25 one gets no such key, though the upstream wrote one.
        assert_eq!(
            meta.contains_key("io.modelcontextprotocol/serverInfo"),
            v == "2026-07-28",
            "{v}: {meta:?}"
        );
        let seen: Value = serde_json::from_str(&first_text(&result)).unwrap();
        assert_eq!(seen["traceparent"], traceparent, "{v}: {seen}");
        assert_eq!(seen["com.example/request"], "r", "{v}: {seen}");
        // The upstream sees the bridge's own client as its client, at the bridge's revision.
        assert_ne!(
            seen.get("io.modelcontextprotocol/clientInfo")
                .map(|i| i["name"].clone()),
            Some(json!("bridge-test")),
            "{v}: {seen}"
        );
        client.close().await;
    }
}
