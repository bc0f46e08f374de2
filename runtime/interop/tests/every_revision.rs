//! Every revision the manifest lists, whatever its id, served by the example server
//! process over real stdio: a full session per revision (handshake or `server/discover`,
//! then every method of the session that the revision's generated table has), every
//! server message checked to be an exact instance of that revision's official schema.
//!
//! Nothing here names a revision: the list is `ProtocolVersion::ALL`, generated from
//! `schema/revisions.toml`. So this is also the proof that a revision added with
//! `cargo codegen add-revision ID --like REV` is served with no hand-written edit
//! (`.ci/new-revision-drill.sh` adds two and runs this test on a copy of the repository).

mod kit;

use kit::schema::{check_server_messages, method_info};
use kit::stdio::Stdio;
use mcp_runtime::{Era, ProtocolVersion};
use serde_json::{json, Value};

/// A session with the example server as a child process, spoken to over its stdin and
/// stdout by the kit's stdio client, at one revision.
struct Server {
    client: Stdio,
    version: ProtocolVersion,
    next_id: i64,
    /// `(label, method, what the server sent until the answer)`, in order.
    exchanges: Vec<(String, String, Vec<Value>)>,
}

impl Server {
    fn start(version: ProtocolVersion) -> Server {
        Server {
            client: Stdio::spawn_example("conformance_server"),
            version,
            next_id: 1,
            exchanges: Vec::new(),
        }
    }

    /// The params of a request at this revision: modern requests carry the revision and
    /// the client's capabilities in `_meta`.
    fn params(&self, params: Option<Value>) -> Option<Value> {
        if self.version.era() == Era::Legacy {
            return params;
        }
        let mut params = params.unwrap_or_else(|| json!({}));
        let meta = params
            .as_object_mut()
            .expect("params object")
            .entry("_meta")
            .or_insert_with(|| json!({}));
        meta["io.modelcontextprotocol/protocolVersion"] = json!(self.version.as_str());
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
        meta["io.modelcontextprotocol/clientInfo"] =
            json!({"name": "every-revision-test", "version": "1.0.0"});
        Some(params)
    }

    /// Sends one request as sent (no `_meta` added) and returns its answer; what came
    /// before it is recorded with it. Another response arriving first fails the test.
    async fn send_raw(&mut self, label: &str, method: &str, params: Option<Value>) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let (mut received, answer) = self.client.exchange(id, method, params).await;
        received.push(answer.clone());
        self.exchanges
            .push((label.to_owned(), method.to_owned(), received));
        answer
    }

    /// Sends a request with this revision's `_meta` and returns its result; an error
    /// answer fails the test.
    async fn call(&mut self, label: &str, method: &str, params: Option<Value>) -> Value {
        let params = self.params(params);
        let answer = self.send_raw(label, method, params).await;
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{} {label}: expected a result, got {answer}", self.version))
    }

    /// Closes stdin: the server must then write nothing more and exit on its own,
    /// successfully.
    async fn finish(mut self) -> Vec<(String, String, Vec<Value>)> {
        let trailing = self.client.close().await;
        assert!(
            trailing.is_empty(),
            "{}: the server wrote after its input closed: {trailing:?}",
            self.version
        );
        std::mem::take(&mut self.exchanges)
    }
}

/// The requests of a session after its opening, each sent only if the revision's method
/// table has the method.
fn session_requests() -> Vec<(&'static str, &'static str, Option<Value>)> {
    vec![
        ("ping", "ping", None),
        ("tools/list", "tools/list", None),
        (
            "tools/call text",
            "tools/call",
            Some(json!({"name": "test_simple_text", "arguments": {}})),
        ),
        (
            "tools/call structured",
            "tools/call",
            Some(json!({"name": "test_structured_output", "arguments": {}})),
        ),
        (
            "tools/call audio",
            "tools/call",
            Some(json!({"name": "test_audio_content", "arguments": {}})),
        ),
        (
            "tools/call resource link",
            "tools/call",
            Some(json!({"name": "test_resource_link", "arguments": {}})),
        ),
        (
            "tools/call with progress",
            "tools/call",
            Some(json!({
                "name": "test_tool_with_progress",
                "arguments": {},
                "_meta": {"progressToken": "p1"},
            })),
        ),
        ("resources/list", "resources/list", None),
        ("resources/templates/list", "resources/templates/list", None),
        (
            "resources/read",
            "resources/read",
            Some(json!({"uri": "test://static-text"})),
        ),
        ("prompts/list", "prompts/list", None),
        (
            "prompts/get",
            "prompts/get",
            Some(json!({"name": "test_simple_prompt"})),
        ),
        (
            "completion/complete",
            "completion/complete",
            Some(json!({
                "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                "argument": {"name": "arg1", "value": "a"},
            })),
        ),
        (
            "logging/setLevel",
            "logging/setLevel",
            Some(json!({"level": "debug"})),
        ),
        (
            "tools/call with logging",
            "tools/call",
            Some(json!({"name": "test_tool_with_logging", "arguments": {}})),
        ),
    ]
}

async fn session(version: ProtocolVersion) {
    let rev = version.as_str();
    let mut server = Server::start(version);
    match version.era() {
        Era::Legacy => {
            let result = server
                .call(
                    "initialize",
                    "initialize",
                    Some(json!({
                        "protocolVersion": rev,
                        "capabilities": {},
                        "clientInfo": {"name": "every-revision-test", "version": "1.0.0"},
                    })),
                )
                .await;
            assert_eq!(result["protocolVersion"], rev, "negotiated revision");
            server
                .client
                .notify("notifications/initialized", None)
                .await;
        }
        Era::Modern => {
            let result = server
                .call("server/discover", "server/discover", None)
                .await;
            let supported = result["supportedVersions"]
                .as_array()
                .expect("supportedVersions");
            assert!(supported.contains(&json!(rev)), "{rev}: {result}");
            // A modern request whose `_meta` lacks the client's capabilities is refused, in
            // this revision's error shape.
            let refused = server
                .send_raw(
                    "tools/list without capabilities",
                    "tools/list",
                    Some(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": rev}})),
                )
                .await;
            assert_eq!(refused["error"]["code"], -32602, "{rev}: {refused}");
        }
    }
    let mut sent = 0;
    for (label, method, params) in session_requests() {
        if method_info(rev, method).is_none() {
            continue;
        }
        let result = server.call(label, method, params).await;
        sent += 1;
        if label == "tools/call text" {
            assert_eq!(
                result["content"][0]["text"], "This is a simple text response for testing.",
                "{rev}: {result}"
            );
        }
        if label == "resources/read" {
            assert_eq!(result["contents"][0]["uri"], "test://static-text", "{rev}");
        }
    }
    assert!(
        sent >= 10,
        "{rev}: only {sent} methods of the session exist"
    );
    // A method this revision does not have is -32601, in its error shape.
    let foreign = match version.era() {
        Era::Legacy => "server/discover",
        Era::Modern => "initialize",
    };
    let params = server.params(None);
    let refused = server.send_raw(foreign, foreign, params).await;
    assert_eq!(refused["error"]["code"], -32601, "{rev}: {refused}");

    let exchanges = server.finish().await;
    let exchanges: Vec<(&str, &str, &[Value])> = exchanges
        .iter()
        .map(|(label, method, received)| (label.as_str(), method.as_str(), received.as_slice()))
        .collect();
    check_server_messages(rev, &exchanges);
}

#[tokio::test]
async fn every_revision_is_served_over_stdio_in_its_own_schema() {
    assert!(!ProtocolVersion::ALL.is_empty());
    for version in ProtocolVersion::ALL {
        session(version).await;
    }
}

#[tokio::test]
async fn every_revision_is_announced_by_the_example() {
    // Legacy: an unknown requested revision gets the newest legacy one; modern:
    // `server/discover` lists every revision served, newest first.
    let newest_legacy = ProtocolVersion::ALL
        .into_iter()
        .rfind(|v| v.era() == Era::Legacy);
    if let Some(newest) = newest_legacy {
        let mut server = Server::start(newest);
        let result = server
            .call(
                "initialize",
                "initialize",
                Some(json!({
                    "protocolVersion": "1999-01-01",
                    "capabilities": {},
                    "clientInfo": {"name": "every-revision-test", "version": "1.0.0"},
                })),
            )
            .await;
        assert_eq!(result["protocolVersion"], newest.as_str());
        server.finish().await;
    }
    if let Some(modern) = ProtocolVersion::ALL
        .into_iter()
        .find(|v| v.era() == Era::Modern)
    {
        let mut server = Server::start(modern);
        let result = server
            .call("server/discover", "server/discover", None)
            .await;
        let listed: Vec<&str> = result["supportedVersions"]
            .as_array()
            .expect("supportedVersions")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let all: Vec<&str> = ProtocolVersion::ALL
            .into_iter()
            .rev()
            .map(ProtocolVersion::as_str)
            .collect();
        assert_eq!(listed, all);
        server.finish().await;
    }
}
