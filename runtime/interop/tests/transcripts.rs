//! Golden wire transcripts: one full session per protocol revision against the
//! conformance example server over an in-memory stdio pair, snapshotted whole
//! (`snapshots/wire/`). Every message the server sends is checked to be an exact
//! instance of the revision's official schema (valid, and no key the schema does not
//! define), and the facts that differ between revisions are asserted explicitly.

mod kit;

use std::path::PathBuf;

use kit::schema::{check_server_messages, schema, schema_exact_errors};
use kit::stdio::Stdio;
use serde_json::{json, Value};

const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];
const MODERN: &str = "2026-07-28";
const PROGRESS_TOKEN: &str = "progress-token-1";

/// Revision ids compare in date order as strings; the tests use this only to state
/// which revisions a fact holds for.
fn at_least(revision: &str, since: &str) -> bool {
    revision >= since
}

fn wire_snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("workspace root")
        .join("snapshots")
        .join("wire")
}

fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(wire_snapshot_dir());
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// One request and what the server sent until its response (the response last).
struct Exchange {
    /// What the test calls it (`tools/call test_audio_content`).
    label: String,
    method: String,
    received: Vec<Value>,
}

/// A session at one revision, as a client of that revision drives it.
struct Run {
    revision: &'static str,
    session: Stdio,
    exchanges: Vec<Exchange>,
    next_id: i64,
}

impl Run {
    fn new(revision: &'static str) -> Run {
        Run {
            revision,
            session: Stdio::conformance(),
            exchanges: Vec::new(),
            next_id: 1,
        }
    }

    fn modern(&self) -> bool {
        self.revision == MODERN
    }

    /// Sends a request (with the modern `_meta` on 2026-07-28) and records the exchange.
    async fn call(&mut self, label: &str, method: &str, params: Option<Value>) -> Value {
        let params = if self.modern() {
            let mut p = params.unwrap_or_else(|| json!({}));
            let meta = p
                .as_object_mut()
                .expect("params object")
                .entry("_meta")
                .or_insert_with(|| json!({}));
            let meta = meta.as_object_mut().expect("_meta object");
            meta.insert(
                "io.modelcontextprotocol/protocolVersion".into(),
                json!(self.revision),
            );
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities".into(),
                json!({}),
            );
            meta.insert(
                "io.modelcontextprotocol/clientInfo".into(),
                json!({"name": "mcp-transcript-test", "version": "1.0.0"}),
            );
            Some(p)
        } else {
            params
        };
        let id = self.next_id;
        self.next_id += 1;
        let (mut received, response) = self.session.exchange(id, method, params).await;
        received.push(response.clone());
        self.exchanges.push(Exchange {
            label: label.to_owned(),
            method: method.to_owned(),
            received,
        });
        response
    }

    fn exchange(&self, label: &str) -> &Exchange {
        self.exchanges
            .iter()
            .find(|e| e.label == label)
            .unwrap_or_else(|| panic!("no exchange {label}"))
    }

    fn response(&self, label: &str) -> &Value {
        self.exchange(label).received.last().expect("response")
    }

    fn result(&self, label: &str) -> &Value {
        let r = self.response(label);
        r.get("result")
            .unwrap_or_else(|| panic!("{} {label}: expected a result, got {r:#}", self.revision))
    }

    fn error(&self, label: &str) -> &Value {
        let r = self.response(label);
        r.get("error")
            .unwrap_or_else(|| panic!("{} {label}: expected an error, got {r:#}", self.revision))
    }
}

/// The whole session of the brief, in order, one request at a time.
async fn run_session(revision: &'static str) -> Run {
    let mut run = Run::new(revision);
    if run.modern() {
        run.call("server/discover", "server/discover", None).await;
        run.call("ping", "ping", None).await;
    } else {
        run.call(
            "initialize",
            "initialize",
            Some(json!({
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": {"name": "mcp-transcript-test", "version": "1.0.0"},
            })),
        )
        .await;
        run.session.notify("notifications/initialized", None).await;
        run.call("ping", "ping", None).await;
    }
    run.call("tools/list", "tools/list", None).await;
    for tool in [
        "test_simple_text",
        "test_audio_content",
        "test_structured_output",
        "test_resource_link",
    ] {
        run.call(
            &format!("tools/call {tool}"),
            "tools/call",
            Some(json!({"name": tool, "arguments": {}})),
        )
        .await;
    }
    run.call(
        "tools/call test_tool_with_progress",
        "tools/call",
        Some(json!({
            "name": "test_tool_with_progress",
            "arguments": {},
            "_meta": {"progressToken": PROGRESS_TOKEN},
        })),
    )
    .await;
    run.call("resources/list", "resources/list", None).await;
    run.call("resources/templates/list", "resources/templates/list", None)
        .await;
    run.call(
        "resources/read static",
        "resources/read",
        Some(json!({"uri": "test://static-text"})),
    )
    .await;
    run.call(
        "resources/read template",
        "resources/read",
        Some(json!({"uri": "test://template/42/data"})),
    )
    .await;
    run.call(
        "resources/read unknown",
        "resources/read",
        Some(json!({"uri": "test://no-such-resource"})),
    )
    .await;
    run.call("prompts/list", "prompts/list", None).await;
    run.call(
        "prompts/get",
        "prompts/get",
        Some(json!({
            "name": "test_prompt_with_arguments",
            "arguments": {"arg1": "hello", "arg2": "world"},
        })),
    )
    .await;
    run.call(
        "completion/complete",
        "completion/complete",
        Some(json!({
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "testV"},
        })),
    )
    .await;
    if !run.modern() {
        run.call(
            "logging/setLevel",
            "logging/setLevel",
            Some(json!({"level": "info"})),
        )
        .await;
    }
    let trailing = run.session.close().await;
    assert!(
        trailing.is_empty(),
        "{revision}: the server sent messages nobody asked for: {trailing:#?}"
    );
    run
}

// ───────────────────────────── wire exactness ─────────────────────────────

/// Every message the server sent, checked against the revision's official schema.
fn check_every_server_message(run: &Run) {
    let exchanges: Vec<(&str, &str, &[Value])> = run
        .exchanges
        .iter()
        .map(|e| (e.label.as_str(), e.method.as_str(), e.received.as_slice()))
        .collect();
    check_server_messages(run.revision, &exchanges);
}

// ───────────────────────────── per-revision facts ─────────────────────────────

fn content_types(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .expect("content array")
        .iter()
        .map(|c| c["type"].as_str().expect("type"))
        .collect()
}

fn check_facts(run: &Run) {
    let rev = run.revision;
    let modern = run.modern();
    let titles = at_least(rev, "2025-06-18");
    let icons = at_least(rev, "2025-11-25");

    // Opening.
    if modern {
        let d = run.result("server/discover");
        let supported = d["supportedVersions"]
            .as_array()
            .expect("supportedVersions");
        for v in REVISIONS {
            assert!(supported.contains(&json!(v)), "discover lists {v}: {d}");
        }
        assert!(d["capabilities"]["tools"].is_object(), "{d}");
        let ping = run.error("ping");
        assert_eq!(
            ping["code"],
            json!(-32601),
            "2026-07-28 has no ping: {ping}"
        );
    } else {
        let init = run.result("initialize");
        assert_eq!(
            init["protocolVersion"],
            json!(rev),
            "initialize echoes {rev}"
        );
        let info = &init["serverInfo"];
        assert_eq!(info["name"], json!("mcp-conformance-test-server"));
        assert_eq!(
            info.get("title").is_some(),
            titles,
            "{rev} serverInfo title: {info}"
        );
        assert_eq!(
            info.get("icons").is_some(),
            icons,
            "{rev} serverInfo icons: {info}"
        );
        assert_eq!(
            init["capabilities"].get("completions").is_some(),
            at_least(rev, "2025-03-26"),
            "{rev} completions capability: {init}"
        );
        assert_eq!(run.result("ping"), &json!({}), "{rev}: ping answers {{}}");
        assert_eq!(
            run.result("logging/setLevel"),
            &json!({}),
            "{rev}: setLevel answers {{}}"
        );
    }

    // Stamps: resultType, server identity in _meta, cache hints (2026-07-28 only).
    let cached = [
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read static",
        "resources/read template",
        "prompts/list",
    ];
    for ex in &run.exchanges {
        let Some(result) = ex.received.last().and_then(|r| r.get("result")) else {
            continue;
        };
        let server_info = result.pointer("/_meta/io.modelcontextprotocol~1serverInfo");
        if modern {
            assert_eq!(
                result["resultType"],
                json!("complete"),
                "{}: {result}",
                ex.label
            );
            assert_eq!(
                server_info,
                Some(&json!({"name": "mcp-conformance-test-server", "version": "1.0.0"})),
                "{}: serverInfo in _meta",
                ex.label
            );
            if cached.contains(&ex.label.as_str()) {
                assert!(result["ttlMs"].is_u64(), "{}: ttlMs: {result}", ex.label);
                assert!(
                    result["cacheScope"] == json!("public")
                        || result["cacheScope"] == json!("private"),
                    "{}: cacheScope: {result}",
                    ex.label
                );
            }
        } else {
            for key in ["resultType", "ttlMs", "cacheScope"] {
                assert!(
                    result.get(key).is_none(),
                    "{rev} {}: {key} in {result}",
                    ex.label
                );
            }
            assert!(
                server_info.is_none(),
                "{rev} {}: serverInfo in _meta",
                ex.label
            );
        }
    }

    // Tools as listed.
    let tools = run.result("tools/list")["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 36, "{rev}: every tool listed");
    for tool in tools {
        let name = tool["name"].as_str().expect("name");
        assert_eq!(tool.get("title").is_some(), titles, "{rev} {name} title");
        assert_eq!(tool.get("icons").is_some(), icons, "{rev} {name} icons");
        assert_eq!(
            tool.get("annotations").is_some(),
            at_least(rev, "2025-03-26"),
            "{rev} {name} annotations"
        );
        // A task tool says so (`execution.taskSupport`) only where tasks are core.
        let task_tool = [
            "slow_compute",
            "failing_job",
            "protocol_error_job",
            "confirm_delete",
            "multi_input",
            "test_tool_with_task",
        ]
        .contains(&name);
        assert_eq!(
            tool.get("execution").is_some(),
            task_tool && rev == "2025-11-25",
            "{rev} {name} execution"
        );
        if name == "test_structured_output" {
            assert_eq!(
                tool.get("outputSchema").is_some(),
                at_least(rev, "2025-06-18"),
                "{rev} outputSchema"
            );
        }
        if name == "json_schema_2020_12_tool" {
            // The author's JSON Schema reaches every revision whole.
            let input = &tool["inputSchema"];
            for key in [
                "$schema",
                "$defs",
                "allOf",
                "if",
                "then",
                "else",
                "additionalProperties",
            ] {
                assert!(
                    input.get(key).is_some(),
                    "{rev}: inputSchema lost {key}: {input}"
                );
            }
        }
    }

    // Tool results.
    let simple = run.result("tools/call test_simple_text");
    assert_eq!(
        simple["content"],
        json!([{"type": "text", "text": "This is a simple text response for testing."}])
    );
    let audio = run.result("tools/call test_audio_content");
    if at_least(rev, "2025-03-26") {
        assert_eq!(content_types(audio), ["audio"], "{rev}: {audio}");
        assert_eq!(audio["content"][0]["mimeType"], json!("audio/wav"));
    } else {
        assert_eq!(
            content_types(audio),
            ["text"],
            "{rev}: no audio before 2025-03-26: {audio}"
        );
    }
    let structured = run.result("tools/call test_structured_output");
    if at_least(rev, "2025-06-18") {
        assert_eq!(
            structured["structuredContent"],
            json!({"temperature": 22.5, "conditions": "Partly cloudy"}),
            "{rev}: {structured}"
        );
    } else {
        assert!(
            structured.get("structuredContent").is_none(),
            "{rev}: {structured}"
        );
    }
    assert!(
        content_types(structured).contains(&"text"),
        "{rev}: text fallback"
    );
    let link = run.result("tools/call test_resource_link");
    if at_least(rev, "2025-06-18") {
        assert_eq!(
            content_types(link),
            ["resource_link", "text"],
            "{rev}: {link}"
        );
        assert_eq!(link["content"][0]["uri"], json!("test://static-text"));
    } else {
        assert_eq!(content_types(link), ["text", "text"], "{rev}: {link}");
        assert_eq!(
            link["content"][0]["text"],
            json!("Resource: Static text <test://static-text>")
        );
    }

    // Progress: three notifications with the request's token, then the response.
    let progress = run.exchange("tools/call test_tool_with_progress");
    let (response, notes) = progress.received.split_last().expect("response");
    assert_eq!(
        response["result"]["content"][0]["text"],
        json!("Progress reported")
    );
    assert_eq!(
        notes.len(),
        3,
        "{rev}: three progress notifications before the response"
    );
    for (note, expected) in notes.iter().zip([0, 50, 100]) {
        assert_eq!(note["method"], json!("notifications/progress"), "{note}");
        let p = &note["params"];
        assert_eq!(p["progressToken"], json!(PROGRESS_TOKEN), "{note}");
        assert_eq!(p["progress"], json!(expected), "{note}");
        assert_eq!(p["total"], json!(100), "{note}");
        assert_eq!(
            p.get("message").is_some(),
            at_least(rev, "2025-03-26"),
            "{rev}: progress message: {note}"
        );
    }

    // Resources.
    let resources = run.result("resources/list")["resources"]
        .as_array()
        .expect("resources");
    assert_eq!(resources.len(), 3);
    for r in resources {
        assert_eq!(
            r.get("title").is_some(),
            titles,
            "{rev} resource title: {r}"
        );
        assert_eq!(r.get("icons").is_some(), icons, "{rev} resource icons: {r}");
    }
    let templates = run.result("resources/templates/list")["resourceTemplates"]
        .as_array()
        .expect("resourceTemplates");
    assert_eq!(templates.len(), 1);
    assert_eq!(
        templates[0]["uriTemplate"],
        json!("test://template/{id}/data")
    );
    assert_eq!(
        templates[0].get("icons").is_some(),
        icons,
        "{rev} template icons"
    );
    assert_eq!(
        run.result("resources/read static")["contents"],
        json!([{"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}])
    );
    let data = &run.result("resources/read template")["contents"][0];
    assert_eq!(data["uri"], json!("test://template/42/data"));
    let parsed: Value = serde_json::from_str(data["text"].as_str().expect("text")).expect("json");
    assert_eq!(parsed["id"], json!("42"));
    let unknown = run.error("resources/read unknown");
    let code = if modern { -32602 } else { -32002 };
    assert_eq!(
        unknown["code"],
        json!(code),
        "{rev}: resource not found: {unknown}"
    );
    assert_eq!(unknown["data"]["uri"], json!("test://no-such-resource"));

    // Prompts and completion.
    let prompts = run.result("prompts/list")["prompts"]
        .as_array()
        .expect("prompts");
    assert_eq!(prompts.len(), 5);
    for p in prompts {
        assert_eq!(p.get("title").is_some(), titles, "{rev} prompt title: {p}");
        assert_eq!(p.get("icons").is_some(), icons, "{rev} prompt icons: {p}");
    }
    assert_eq!(
        run.result("prompts/get")["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"}}])
    );
    assert_eq!(
        run.result("completion/complete")["completion"],
        json!({"values": ["testValue1", "testValue2"], "total": 2, "hasMore": false})
    );
}

async fn transcript(revision: &'static str) {
    let run = run_session(revision).await;
    // The snapshot first, so that a changed transcript is visible even when a check
    // below fails.
    let text = run.session.transcript();
    let snapshot = snapshot_settings().bind(|| {
        std::panic::catch_unwind(|| {
            insta::assert_snapshot!(format!("transcript_{}", revision.replace('-', "_")), text)
        })
    });
    check_every_server_message(&run);
    check_facts(&run);
    if let Err(panic) = snapshot {
        std::panic::resume_unwind(panic);
    }
}

#[tokio::test]
async fn transcript_2024_11_05() {
    transcript("2024-11-05").await;
}

#[tokio::test]
async fn transcript_2025_03_26() {
    transcript("2025-03-26").await;
}

#[tokio::test]
async fn transcript_2025_06_18() {
    transcript("2025-06-18").await;
}

#[tokio::test]
async fn transcript_2025_11_25() {
    transcript("2025-11-25").await;
}

#[tokio::test]
async fn transcript_2026_07_28() {
    transcript("2026-07-28").await;
}

/// Every file in `snapshots/wire/` belongs to a test here, and none is pending.
#[test]
fn wire_snapshots_are_referenced_and_reviewed() {
    let expected: std::collections::BTreeSet<String> = REVISIONS
        .iter()
        .map(|r| format!("transcript_{}.snap", r.replace('-', "_")))
        .collect();
    let mut found = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(wire_snapshot_dir()).expect("snapshots/wire") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(
            !name.ends_with(".snap.new") && !name.ends_with(".pending-snap"),
            "pending snapshot wire/{name}: review it or delete it"
        );
        found.insert(name);
    }
    assert_eq!(
        found, expected,
        "snapshots/wire holds exactly one transcript per revision"
    );
}

// ───────────────────────────── the checker itself ─────────────────────────────

fn errors(rev: &str, def: &str, instance: Value) -> Vec<String> {
    schema_exact_errors(rev, &[def], &instance)
}

#[test]
fn checker_accepts_exact_and_rejects_undefined_keys() {
    // A 2024-11-05 tool knows name, description, inputSchema.
    let tool = json!({"name": "t", "description": "d", "inputSchema": {"type": "object"}});
    assert_eq!(
        errors("2024-11-05", "Tool", tool.clone()),
        Vec::<String>::new()
    );
    // `title` (2025-06-18+) is valid JSON Schema-wise (the definition is not closed) but
    // not defined: only the strict walk sees it.
    let mut titled = tool.clone();
    titled["title"] = json!("T");
    let e = errors("2024-11-05", "Tool", titled.clone());
    assert!(
        e.len() == 1 && e[0].starts_with("(b) /title: key `title`"),
        "{e:#?}"
    );
    assert_eq!(errors("2025-06-18", "Tool", titled), Vec::<String>::new());
    // Deep inside arrays.
    let list =
        json!({"tools": [tool, {"name": "u", "inputSchema": {"type": "object"}, "icons": []}]});
    let e = errors("2024-11-05", "ListToolsResult", list);
    assert!(e.len() == 1 && e[0].contains("/tools/1/icons"), "{e:#?}");
    // The author's JSON Schema document is not judged by key (only validated).
    let documented = json!({"name": "t", "inputSchema": {"type": "object", "$defs": {"a": {}}, "allOf": [{"required": []}]}});
    assert_eq!(
        errors("2024-11-05", "Tool", documented),
        Vec::<String>::new()
    );
    // A missing required field is a validation error (a).
    let e = errors("2024-11-05", "Tool", json!({"name": "t"}));
    assert!(e.iter().any(|e| e.starts_with("(a)")), "{e:#?}");
}

#[test]
fn checker_resolves_unions_by_the_branch_that_validates() {
    // Audio does not exist in 2024-11-05: no branch of the content union validates.
    let audio = json!({"content": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]});
    assert!(!errors("2024-11-05", "CallToolResult", audio.clone()).is_empty());
    assert_eq!(
        errors("2025-03-26", "CallToolResult", audio),
        Vec::<String>::new()
    );
    // A key no member of the chosen branch defines, inside a union (ContentBlock).
    let stray = json!({"content": [{"type": "text", "text": "x", "stray": 1}]});
    let e = errors("2025-06-18", "CallToolResult", stray);
    assert!(e.len() == 1 && e[0].contains("stray"), "{e:#?}");
    // resource_link is a branch from 2025-06-18 on.
    let link = json!({"content": [{"type": "resource_link", "uri": "test://x", "name": "x"}]});
    assert_eq!(
        errors("2025-06-18", "CallToolResult", link.clone()),
        Vec::<String>::new()
    );
    assert!(!errors("2025-03-26", "CallToolResult", link).is_empty());
    // structuredContent: defined from 2025-06-18 on; the base Result is open, but a
    // specific result definition is not.
    let structured = json!({"content": [], "structuredContent": {"a": 1}});
    assert_eq!(
        errors("2025-06-18", "CallToolResult", structured.clone()),
        Vec::<String>::new()
    );
    let e = errors("2025-03-26", "CallToolResult", structured);
    assert!(e.len() == 1 && e[0].contains("structuredContent"), "{e:#?}");
}

#[test]
fn checker_follows_meta_schemas_and_allof() {
    // Legacy `_meta` is open.
    let legacy = json!({"content": [], "_meta": {"com.example/anything": {"x": 1}}});
    assert_eq!(
        errors("2025-06-18", "CallToolResult", legacy),
        Vec::<String>::new()
    );
    // 2026-07-28 result `_meta` is ResultMetaObject: it defines serverInfo.
    let modern = json!({"resultType": "complete", "content": [], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}});
    assert_eq!(
        errors(MODERN, "CallToolResult", modern),
        Vec::<String>::new()
    );
    // It extends `MetaObject` ("All key naming rules from `MetaObject` apply"): any
    // other key is the application's, as in every revision.
    assert_eq!(
        errors(
            MODERN,
            "CallToolResult",
            json!({"resultType": "complete", "content": [], "_meta": {"com.example/x": 1}}),
        ),
        Vec::<String>::new()
    );
    // ... and inside it, an Implementation is checked too.
    let e = errors(
        MODERN,
        "CallToolResult",
        json!({"resultType": "complete", "content": [], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1", "bogus": true}}}),
    );
    assert!(e.len() == 1 && e[0].contains("bogus"), "{e:#?}");
    // 2026-07-28 ttlMs is defined on lists, not on a tool result.
    let e = errors(
        MODERN,
        "CallToolResult",
        json!({"resultType": "complete", "content": [], "ttlMs": 1}),
    );
    assert!(e.len() == 1 && e[0].contains("ttlMs"), "{e:#?}");
    // A hoisted name from the method table resolves to the inline schema it names.
    let s = schema(MODERN);
    assert_eq!(
        s.pointer("CallToolResultResponseResult"),
        "/$defs/CallToolResultResponse/properties/result"
    );
    assert_eq!(
        errors(
            MODERN,
            "CallToolResultResponseResult",
            json!({"resultType": "complete", "content": []})
        ),
        Vec::<String>::new()
    );
    // allOf: the union of the members' properties (Result + Task).
    let task = json!({"taskId": "t", "status": "working", "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": null, "_meta": {}});
    assert_eq!(
        errors("2025-11-25", "GetTaskResult", task.clone()),
        Vec::<String>::new()
    );
    let mut bogus = task;
    bogus["bogus"] = json!(1);
    let e = errors("2025-11-25", "GetTaskResult", bogus);
    assert!(e.len() == 1 && e[0].contains("bogus"), "{e:#?}");
}

#[test]
fn checker_takes_notifications_with_their_envelope() {
    let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1, "total": 2}});
    // 2024-11-05's ProgressNotification omits `jsonrpc`: alone it refuses the envelope...
    let e = errors("2024-11-05", "ProgressNotification", note.clone());
    assert!(e.len() == 1 && e[0].contains("jsonrpc"), "{e:#?}");
    // ... with JSONRPCNotification it is exact; `message` (2025-03-26+) is not.
    let both = ["JSONRPCNotification", "ProgressNotification"];
    assert_eq!(
        schema_exact_errors("2024-11-05", &both, &note),
        Vec::<String>::new()
    );
    let mut with_message = note;
    with_message["params"]["message"] = json!("m");
    let e = schema_exact_errors("2024-11-05", &both, &with_message);
    assert!(e.len() == 1 && e[0].contains("message"), "{e:#?}");
    assert_eq!(
        schema_exact_errors("2025-03-26", &both, &with_message),
        Vec::<String>::new()
    );
}

/// The wire check is wired to every message: a field the revision lacks, slipped into
/// one server message of a recorded session, is caught (and names the field).
#[tokio::test]
async fn wire_check_catches_a_field_the_revision_lacks() {
    let mut run = run_session("2024-11-05").await;
    let list = run
        .exchanges
        .iter_mut()
        .find(|e| e.label == "tools/list")
        .expect("tools/list");
    list.received[0]["result"]["tools"][0]["title"] = json!("Simple text");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_every_server_message(&run)
    }))
    .expect_err("an undefined key must fail the check");
    let message = caught.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("/tools/0/title"), "{message}");

    let mut run = run_session("2024-11-05").await;
    let progress = run
        .exchanges
        .iter_mut()
        .find(|e| e.label == "tools/call test_tool_with_progress")
        .expect("progress");
    progress.received[0]["params"]["message"] = json!("working");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_every_server_message(&run)
    }))
    .expect_err("progress message does not exist in 2024-11-05");
    let message = caught.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("/params/message"), "{message}");
}
