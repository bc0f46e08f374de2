//! A server built without the feature `tasks` (and without `http`), as a stdio-only author
//! builds it: in every era it is a server whose tools never run as tasks — no `tasks`
//! capability, no tasks extension, `tasks/*` unknown (-32601), a listen's `taskIds`
//! ignored — while its tools, resources and lists answer as with the feature.

use mcp_runtime::model::{Implementation, Resource, ResourceContents, Tool, ToolResult};
use mcp_runtime::Server;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const MODERN: &str = "2026-07-28";

fn server() -> Server {
    Server::builder(Implementation::new("without-tasks", "1.0.0"))
        .tool(Tool::new("echo", "Says it back"), |args, _ctx| async move {
            let text = args.get("text").and_then(Value::as_str).unwrap_or("");
            Ok::<_, mcp_runtime::ToolError>(ToolResult::text(text))
        })
        .resource(
            Resource::new("memo://readme", "readme"),
            |uri, _ctx| async move {
                Ok::<_, mcp_runtime::RpcError>(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "hi",
                )])
            },
        )
        .build()
}

/// The server on an in-memory pipe: send a line, read the next line it writes.
struct Conversation {
    to_server: tokio::io::DuplexStream,
    from_server: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
}

impl Conversation {
    fn start() -> Conversation {
        let (client_end, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        tokio::spawn(mcp_runtime::transport::stdio::serve(
            server(),
            server_in,
            server_out,
        ));
        Conversation {
            to_server: client_end,
            from_server: BufReader::new(client_in).lines(),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server
            .write_all(line.as_bytes())
            .await
            .expect("write");
    }

    async fn recv(&mut self) -> Value {
        let next = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            self.from_server.next_line(),
        );
        let line = next
            .await
            .expect("an answer within 10 s")
            .expect("read")
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

fn modern(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    });
    params
}

#[tokio::test]
async fn a_legacy_session_has_no_tasks() {
    let mut c = Conversation::start();
    let init = c
        .request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {"requests": {"sampling": {"createMessage": {}}}}},
                "clientInfo": {"name": "t", "version": "1"},
            }),
        )
        .await;
    let caps = &init["result"]["capabilities"];
    assert!(caps.get("tools").is_some(), "{init}");
    assert!(caps.get("tasks").is_none(), "no tasks capability: {init}");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let tools = c.request(2, "tools/list", json!({})).await;
    let tool = &tools["result"]["tools"][0];
    assert_eq!(tool["name"], "echo", "{tools}");
    assert!(tool.get("execution").is_none(), "no task support: {tools}");
    let call = c
        .request(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(call["result"]["content"][0]["text"], "hi", "{call}");
    // Asked to run as a task: the tool does not (`execution.taskSupport` absent means
    // forbidden), and the 2025-11-25 spec says a server SHOULD answer -32601.
    let call = c
        .request(
            4,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "now"}, "task": {"ttl": 1000}}),
        )
        .await;
    assert_eq!(call["error"]["code"], -32601, "{call}");
    for (id, method) in [(5, "tasks/list"), (6, "tasks/get")] {
        let r = c.request(id, method, json!({"taskId": "t"})).await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    let read = c
        .request(7, "resources/read", json!({"uri": "memo://readme"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "hi", "{read}");
}

#[tokio::test]
async fn a_modern_request_has_no_tasks_extension() {
    let mut c = Conversation::start();
    let discover = c.request(1, "server/discover", modern(json!({}))).await;
    let result = &discover["result"];
    assert!(result["capabilities"].get("tools").is_some(), "{discover}");
    let extensions = result["capabilities"]
        .get("extensions")
        .cloned()
        .unwrap_or(json!({}));
    assert!(
        extensions.get("io.modelcontextprotocol/tasks").is_none(),
        "no tasks extension: {discover}"
    );
    let call = c
        .request(
            2,
            "tools/call",
            modern(json!({"name": "echo", "arguments": {"text": "hi"}})),
        )
        .await;
    assert_eq!(call["result"]["content"][0]["text"], "hi", "{call}");
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
    for (id, method) in [(3, "tasks/get"), (4, "tasks/cancel")] {
        let r = c.request(id, method, modern(json!({"taskId": "t"}))).await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    // A listen naming tasks: acknowledged without them (no -32021, nothing about tasks).
    c.send(json!({
        "jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
        "params": modern(json!({"notifications": {"toolsListChanged": true, "taskIds": ["t"]}})),
    }))
    .await;
    let ack = c.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );
}
