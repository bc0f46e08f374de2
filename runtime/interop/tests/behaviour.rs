//! The runtime's promises over an in-memory stdio pair and a real child process: the
//! legacy lifecycle, routing errors, bad input, batches, cancellation, panics, limits,
//! pagination, capabilities and the modern probe.

mod kit;

use std::time::Duration;

use kit::stdio::Stdio;
use kit::{code, notification, request};
use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::{Limits, ProtocolVersion, RpcError, Server, ToolError, VersionSet};
use serde_json::{json, Value};

fn tool(name: &str) -> Tool {
    Tool::new(name, name).input_schema(json!({"type": "object"}))
}

fn server_with(limits: Limits, versions: VersionSet) -> Server {
    let mut builder = Server::builder(Implementation::new("behaviour", "1.0.0"))
        .limits(limits)
        .versions(versions);
    builder = builder
        .tool(tool("echo"), |args, _| async move {
            Ok(ToolResult::text(Value::Object(args).to_string()))
        })
        .tool(tool("slow"), |_, ctx| async move {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(30)) => Ok(ToolResult::text("finished")),
                _ = ctx.cancelled() => Ok(ToolResult::text("cancelled")),
            }
        })
        .tool(tool("panics"), |_, _| async move {
            if true {
                panic!("handler bug");
            }
            Ok(ToolResult::text("unreachable"))
        })
        .tool(tool("fails"), |_, _| async move {
            Err::<ToolResult, _>(ToolError::protocol(RpcError::new(
                mcp_runtime::ErrorCode(-32050),
                "custom failure",
            )))
        });
    for i in 0..7 {
        builder = builder.tool(tool(&format!("t{i}")), |_, _| async {
            Ok(ToolResult::text("x"))
        });
    }
    builder.build()
}

fn server() -> Server {
    let mut limits = Limits::default();
    limits.page_size = 5;
    limits.max_message_bytes = 64 * 1024;
    server_with(limits, VersionSet::ALL)
}

#[tokio::test]
async fn before_initialize_only_ping_is_served() {
    let mut p = Stdio::serve(server());
    assert_eq!(
        p.request(json!(1), "ping", json!({})).await["result"],
        json!({})
    );
    let r = p.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(code(&r), -32600);
    assert!(r.get("result").is_none());
    let r = p.initialize("2025-06-18", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        p.request(json!(3), "tools/list", json!({})).await["result"]["tools"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
    assert_eq!(code(&p.request(json!(4), "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}})).await), -32600);
}

#[tokio::test]
async fn unknown_versions_get_the_newest_legacy_and_disabled_ones_are_never_chosen() {
    let mut p = Stdio::serve(server());
    assert_eq!(
        p.initialize("2099-01-01", json!({})).await["result"]["protocolVersion"],
        "2025-11-25"
    );
    let mut p = Stdio::serve(server_with(
        Limits::default(),
        VersionSet::ALL.without(ProtocolVersion::V2025_11_25),
    ));
    assert_eq!(
        p.initialize("2025-11-25", json!({})).await["result"]["protocolVersion"],
        "2025-06-18"
    );
    let mut p = Stdio::serve(server_with(
        Limits::default(),
        VersionSet::ALL.without(ProtocolVersion::V2026_07_28),
    ));
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}});
    // A modern probe to a server that serves no modern revision: a non-modern error, so a
    // dual-era client falls back to initialize (never -32022, never a result).
    let r = p.request(json!("probe"), "server/discover", meta).await;
    assert_eq!(code(&r), -32600);
    assert_eq!(
        p.initialize("2025-11-25", json!({})).await["result"]["protocolVersion"],
        "2025-11-25"
    );
}

#[tokio::test]
async fn a_modern_probe_then_legacy_fallback_works_on_one_connection() {
    let mut p = Stdio::serve(server());
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}});
    let r = p.request(json!(1), "server/discover", meta.clone()).await;
    assert_eq!(r["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(r["result"]["resultType"], "complete");
    // The same process also serves a legacy client after initialize.
    assert_eq!(
        p.initialize("2025-03-26", json!({})).await["result"]["protocolVersion"],
        "2025-03-26"
    );
    assert!(p.request(json!(2), "tools/list", json!({})).await["result"]["tools"].is_array());
    // Modern requests stay stateless and are answered in their own revision.
    let r = p.request(json!(3), "tools/list", meta).await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["cacheScope"], "public");
}

#[tokio::test]
async fn modern_removed_methods_and_bad_meta() {
    let mut p = Stdio::serve(server());
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}});
    for method in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "initialize",
        "unknown/method",
    ] {
        assert_eq!(
            code(&p.request(json!(method), method, meta.clone()).await),
            -32601,
            "{method}"
        );
    }
    let bad = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    assert_eq!(code(&p.request(json!(9), "tools/list", bad).await), -32602);
    let unsupported = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2030-01-01", "io.modelcontextprotocol/clientCapabilities": {}}});
    let r = p.request(json!(10), "tools/list", unsupported).await;
    assert_eq!(code(&r), -32022);
    assert_eq!(r["error"]["data"]["requested"], "2030-01-01");
}

#[tokio::test]
async fn routing_errors_have_the_right_codes_and_ids_keep_their_type() {
    let mut p = Stdio::serve(server());
    p.initialize("2025-06-18", json!({})).await;
    let r = p.request(json!("abc"), "no/such/method", json!({})).await;
    assert_eq!((code(&r), r["id"].clone()), (-32601, json!("abc")));
    // A method of another revision does not exist here.
    assert_eq!(
        code(&p.request(json!(1), "server/discover", json!({})).await),
        -32601
    );
    // Params that do not decode into the revision's generated type.
    let r = p
        .request(json!(2), "tools/call", json!({"arguments": {}}))
        .await;
    assert_eq!(code(&r), -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .expect("message")
            .contains("missing field `name`"),
        "{r}"
    );
    assert_eq!(
        code(
            &p.request(json!(3), "tools/call", json!({"name": "nope"}))
                .await
        ),
        -32602
    );
    // A handler's own error code is kept.
    assert_eq!(
        code(
            &p.request(json!(4), "tools/call", json!({"name": "fails"}))
                .await
        ),
        -32050
    );
    // Ids keep their JSON type, numbers as written.
    assert_eq!(
        p.request(json!(7.5), "ping", json!({})).await["id"],
        json!(7.5)
    );
    assert_eq!(
        p.request(json!(-3), "ping", json!({})).await["id"],
        json!(-3)
    );
}

#[tokio::test]
async fn a_panicking_handler_is_answered_and_the_server_keeps_serving() {
    let mut p = Stdio::serve(server());
    p.initialize("2025-11-25", json!({})).await;
    let r = p
        .request(json!(1), "tools/call", json!({"name": "panics"}))
        .await;
    assert_eq!(code(&r), -32603);
    assert!(p
        .request(
            json!(2),
            "tools/call",
            json!({"name": "echo", "arguments": {"a": 1}})
        )
        .await["result"]
        .is_object());
}

#[tokio::test]
async fn cancelled_requests_are_not_answered() {
    let mut p = Stdio::serve(server());
    p.initialize("2025-06-18", json!({})).await;
    p.send(&request(41, "tools/call", json!({"name": "slow"})))
        .await;
    // Let the handler start, so that it is a running handler that is cancelled.
    tokio::time::sleep(Duration::from_millis(50)).await;
    p.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 41, "reason": "user"}),
    ))
    .await;
    // The id is free at once (a client may reuse the id of a request it cancelled): the
    // very next message answers the ping that reuses it, never the cancelled call.
    assert_eq!(p.request(41, "ping", json!({})).await["result"], json!({}));
    // A new call on that id runs and is answered, not dropped with the old one.
    p.send(&request(
        41,
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
    ))
    .await;
    let r = p.recv().await;
    assert_eq!(r["id"], 41, "{r}");
    assert!(r.get("result").is_some(), "{r}");
    // Nor does the cancelled call's answer come later: nothing else, up to the end.
    p.finish().await;
}

#[tokio::test]
async fn malformed_input_gets_errors_and_the_server_still_answers() {
    let mut p = Stdio::serve(server());
    p.initialize("2025-06-18", json!({})).await;
    p.send_raw(r#"{"jsonrpc": "2.0", "id": 1, "method": "ping""#)
        .await;
    let r = p.recv().await;
    assert_eq!((code(&r), r["id"].clone()), (-32700, Value::Null));
    p.send_raw(r#"{"jsonrpc": "1.0", "id": 2, "method": "ping"}"#)
        .await;
    assert_eq!(code(&p.recv().await), -32600);
    p.send_raw(r#"{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}"#)
        .await;
    assert_eq!(code(&p.recv().await), -32600);
    p.send_raw(r#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "name"}"#)
        .await;
    assert_eq!(code(&p.recv().await), -32600);
    // Too large for the configured limit (64 KiB here).
    let huge = format!(
        r#"{{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {{"name": "echo", "arguments": {{"blob": "{}"}}}}}}"#,
        "x".repeat(100_000)
    );
    p.send_raw(&huge).await;
    let r = p.recv().await;
    assert_eq!(code(&r), -32600);
    assert!(r["error"]["message"]
        .as_str()
        .expect("message")
        .contains("exceeds the limit"));
    // Notifications are never answered, even unknown ones: the next message is the
    // answer to the ping that follows, and nothing comes after it.
    p.notify("notifications/whatever", None).await;
    assert_eq!(p.request(5, "ping", json!({})).await["result"], json!({}));
    p.finish().await;
}

#[tokio::test]
async fn batches_only_in_2025_03_26() {
    let mut p = Stdio::serve(server());
    p.initialize("2025-03-26", json!({})).await;
    p.send(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "echo", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "nope"}
    ]))
    .await;
    let r = p.recv().await;
    let answers = r.as_array().expect("one array of responses");
    assert_eq!(answers.len(), 3, "{r}");
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert!(ids.contains(&&json!(1)) && ids.contains(&&json!("b")) && ids.contains(&&json!(3)));
    // Only notifications: nothing at all (the next message answers the ping after it).
    p.send(&json!([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]))
        .await;
    assert_eq!(p.request(4, "ping", json!({})).await["result"], json!({}));
    p.finish().await;
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut p = Stdio::serve(server());
        p.initialize(version, json!({})).await;
        p.send(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
            .await;
        let r = p.recv().await;
        assert_eq!(code(&r), -32600, "{version}");
        p.finish().await;
    }
}

#[tokio::test]
async fn pagination_with_opaque_cursors() {
    let mut p = Stdio::serve(server());
    p.initialize("2025-06-18", json!({})).await;
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    for page in 0.. {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = p.request(json!(page), "tools/list", params).await;
        names.extend(
            r["result"]["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .map(|t| t["name"].as_str().expect("name").to_owned()),
        );
        cursor = r["result"].get("nextCursor").cloned();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(names.len(), 11);
    assert_eq!(
        code(
            &p.request(json!(99), "tools/list", json!({"cursor": "not-a-cursor"}))
                .await
        ),
        -32602
    );
}

#[tokio::test]
async fn capabilities_are_enforced() {
    let server = Server::builder(Implementation::new("no-tools", "1")).build();
    let mut p = Stdio::serve(server);
    let r = p.initialize("2025-06-18", json!({})).await;
    assert!(r["result"]["capabilities"].get("tools").is_none());
    assert_eq!(
        code(&p.request(json!(1), "tools/list", json!({})).await),
        -32601
    );
    assert_eq!(
        code(
            &p.request(json!(2), "tools/call", json!({"name": "x"}))
                .await
        ),
        -32601
    );
    assert_eq!(
        code(&p.request(json!(3), "prompts/list", json!({})).await),
        -32601
    );
}

#[tokio::test]
async fn list_changed_reaches_operating_sessions() {
    let server = server();
    let mut p = Stdio::serve(server.clone());
    p.initialize("2025-06-18", json!({})).await;
    p.request(json!(1), "ping", json!({})).await;
    // The list is shaped once per revision and then cached: a change must drop it.
    let before = all_tool_names(&mut p, 100).await;
    assert!(!before.contains(&"added".to_owned()), "{before:?}");
    server.add_tool(tool("added"), |_, _| async { Ok(ToolResult::text("new")) });
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert!(n.get("id").is_none());
    let after = all_tool_names(&mut p, 200).await;
    assert_eq!(after.len(), before.len() + 1, "{after:?}");
    assert!(after.contains(&"added".to_owned()), "{after:?}");
    // A list the server does not declare (this one has no prompts, no resources) is never
    // announced: the next message is the tool change that follows.
    server.notify(mcp_runtime::ServerEvent::PromptsChanged);
    server.notify(mcp_runtime::ServerEvent::ResourcesChanged);
    assert!(server.remove_tool("added"));
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    assert_eq!(all_tool_names(&mut p, 300).await, before);
    p.finish().await;
}

/// Every tool's name, following the cursors (request ids from `first_id`).
async fn all_tool_names(p: &mut Stdio, first_id: i64) -> Vec<String> {
    let mut names = Vec::new();
    let mut params = json!({});
    for id in first_id.. {
        let page = p.request(json!(id), "tools/list", params).await;
        for t in page["result"]["tools"].as_array().expect("tools") {
            names.push(t["name"].as_str().expect("name").to_owned());
        }
        match page["result"].get("nextCursor") {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => break,
        }
    }
    names
}

#[tokio::test]
async fn a_child_process_over_stdio_serves_and_exits_on_end_of_input() {
    let mut p = Stdio::spawn_example("conformance_server");
    let r = p
        .request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(
        r["result"]["serverInfo"]["name"],
        "mcp-conformance-test-server"
    );
    let r = p
        .request(2, "tools/call", json!({"name": "test_simple_text"}))
        .await;
    assert_eq!(r["result"]["content"][0]["type"], "text");
    // End of input: the process writes nothing more and exits successfully.
    p.finish().await;
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ForecastArgs {
    /// The city.
    city: String,
    /// Days ahead.
    days: Option<u8>,
}

#[tokio::test]
async fn typed_tools_derive_their_input_schema_and_reject_bad_arguments() {
    let server = Server::builder(Implementation::new("typed", "1"))
        .typed_tool::<ForecastArgs, _, _>(tool("forecast"), |args, _| async move {
            Ok(ToolResult::text(format!(
                "{} in {} days",
                args.city,
                args.days.unwrap_or(1)
            )))
        })
        .build();
    let mut p = Stdio::serve(server);
    p.initialize("2025-06-18", json!({})).await;
    let list = p.request(json!(1), "tools/list", json!({})).await;
    let schema = &list["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["city"]["type"], "string");
    assert_eq!(schema["required"], json!(["city"]));
    let ok = p
        .request(
            json!(2),
            "tools/call",
            json!({"name": "forecast", "arguments": {"city": "Oslo", "days": 3}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "Oslo in 3 days");
    let bad = p
        .request(
            json!(3),
            "tools/call",
            json!({"name": "forecast", "arguments": {"days": "x"}}),
        )
        .await;
    assert_eq!(code(&bad), -32602);
}

#[tokio::test]
async fn subscribers_hear_of_resource_updates() {
    use mcp_runtime::model::{Resource, ResourceContents};
    let resource = Resource::new("mem://a", "a");
    let server = Server::builder(Implementation::new("res", "1"))
        .resource(resource, |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "a")])
        })
        .build();
    let mut p = Stdio::serve(server.clone());
    p.initialize("2025-03-26", json!({})).await;
    assert_eq!(
        code(
            &p.request(
                json!(1),
                "resources/subscribe",
                json!({"uri": "mem://unknown"})
            )
            .await
        ),
        -32002
    );
    assert_eq!(
        p.request(json!(2), "resources/subscribe", json!({"uri": "mem://a"}))
            .await["result"],
        json!({})
    );
    server.notify(mcp_runtime::ServerEvent::ResourceUpdated(
        "mem://other".into(),
    ));
    server.notify(mcp_runtime::ServerEvent::ResourceUpdated("mem://a".into()));
    let n = p.recv().await;
    assert_eq!(
        (n["method"].clone(), n["params"]["uri"].clone()),
        (json!("notifications/resources/updated"), json!("mem://a"))
    );
    assert_eq!(
        p.request(json!(3), "resources/unsubscribe", json!({"uri": "mem://a"}))
            .await["result"],
        json!({})
    );
    // Announcements reach a session in order: after the update of the unsubscribed
    // resource, a change of the resource list; the list change must be what arrives next.
    server.notify(mcp_runtime::ServerEvent::ResourceUpdated("mem://a".into()));
    server.notify(mcp_runtime::ServerEvent::ResourcesChanged);
    let n = p.recv().await;
    assert_eq!(
        n["method"], "notifications/resources/list_changed",
        "no update after unsubscribe: {n}"
    );
    p.finish().await;
}

/// `ServerBuilder::on_resource_interest`: told when the first subscription names a
/// resource and when the last one ends — two legacy sessions and a 2026-07-28 listen,
/// ended by unsubscribe, by the session's end and by cancelling the listen.
#[tokio::test]
async fn the_interest_hook_hears_the_first_and_the_last_subscription() {
    use mcp_runtime::model::{Resource, ResourceContents};
    use std::sync::{Arc, Mutex};
    let heard = Arc::new(Mutex::new(Vec::<(String, bool)>::new()));
    let sink = Arc::clone(&heard);
    let server = Server::builder(Implementation::new("res", "1"))
        .resource(Resource::new("mem://a", "a"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "a")])
        })
        .on_resource_interest(move |uri, on| {
            sink.lock().unwrap().push((uri.to_owned(), on));
        })
        .build();
    let taken = || std::mem::take(&mut *heard.lock().unwrap());
    let a = json!({"uri": "mem://a"});
    let mut one = Stdio::serve(server.clone());
    one.initialize("2025-06-18", json!({})).await;
    let mut two = Stdio::serve(server.clone());
    two.initialize("2025-11-25", json!({})).await;
    one.request(json!(1), "resources/subscribe", a.clone())
        .await;
    assert_eq!(taken(), [("mem://a".to_owned(), true)], "the first");
    two.request(json!(1), "resources/subscribe", a.clone())
        .await;
    one.request(json!(2), "resources/subscribe", a.clone())
        .await;
    one.request(json!(3), "resources/unsubscribe", a.clone())
        .await;
    assert_eq!(
        taken(),
        [],
        "neither the second nor a repeat nor one of two ending"
    );
    // A 2026-07-28 listen naming it (twice) counts once, while open.
    let mut modern = Stdio::serve(server.clone());
    let params = json!({
        "_meta": kit::modern_meta(json!({})),
        "notifications": {"resourceSubscriptions": ["mem://a", "mem://a"]},
    });
    modern
        .send(&request(json!(7), "subscriptions/listen", params))
        .await;
    let ack = modern.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // The legacy session's end releases its subscription; the listen still holds it.
    two.finish().await;
    assert_eq!(taken(), [], "the listen still wants it");
    modern.send(&kit::cancel(7)).await;
    kit::eventually("the last subscription's end is heard", || {
        heard.lock().unwrap().as_slice() == [("mem://a".to_owned(), false)]
    })
    .await;
    one.finish().await;
    modern.finish().await;
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    /// Degrees Celsius.
    temperature: f64,
    /// In words.
    conditions: String,
}

/// A typed output becomes `outputSchema` and `structuredContent` where the revision has
/// them, and its JSON text everywhere (the only form 2024-11-05 and 2025-03-26 know).
#[tokio::test]
async fn structured_tools_derive_their_output_schema_and_answer_in_each_revision() {
    let server = Server::builder(Implementation::new("typed", "1"))
        .structured_tool::<ForecastArgs, Forecast, _, _>(
            Tool::new("forecast", "Tomorrow's weather"),
            |args, _| async move {
                Ok(Forecast {
                    temperature: 21.5,
                    conditions: format!("sunny in {}", args.city),
                })
            },
        )
        .build();
    let expected = json!({"temperature": 21.5, "conditions": "sunny in Oslo"});
    for (revision, structured) in [("2024-11-05", false), ("2025-06-18", true)] {
        let mut p = Stdio::serve(server.clone());
        p.initialize(revision, json!({})).await;
        let list = p.request(json!(1), "tools/list", json!({})).await;
        let tool = &list["result"]["tools"][0];
        assert_eq!(
            tool["inputSchema"]["required"],
            json!(["city"]),
            "{revision}"
        );
        let output_schema = &tool["outputSchema"];
        if structured {
            assert_eq!(output_schema["type"], "object", "{revision}: {tool}");
            assert_eq!(
                output_schema["required"],
                json!(["temperature", "conditions"]),
                "{revision}"
            );
        } else {
            assert!(output_schema.is_null(), "{revision}: {tool}");
        }
        let call = p
            .request(
                json!(2),
                "tools/call",
                json!({"name": "forecast", "arguments": {"city": "Oslo"}}),
            )
            .await;
        let result = &call["result"];
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().expect("a text block"))
                .expect("the text block is the output's JSON");
        assert_eq!(text, expected, "{revision}");
        if structured {
            assert_eq!(result["structuredContent"], expected, "{revision}");
        } else {
            assert!(
                result.get("structuredContent").is_none(),
                "{revision}: {result}"
            );
        }
    }
}

/// A 2026-07-28 request's `_meta` is taken out of its params where the request is parsed
/// and shared by the requests that send the same text: every answer must be the one the
/// params as sent give, wherever `_meta` stands among them, on the first sighting of a
/// text, the second (kept) and the later ones (shared), and for a `_meta` the revision's
/// params type rejects (the decode's own error, as for the params as sent).
#[tokio::test]
async fn a_modern_meta_taken_out_at_parse_time_answers_as_the_params_as_sent() {
    use mcp_generated::support::FromValue;
    let mut p = Stdio::serve(server());
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"roots": {}}});
    let first = json!({"_meta": meta, "name": "echo", "arguments": {"a": 1, "b": [true]}});
    let last = json!({"name": "echo", "arguments": {"a": 1, "b": [true]}, "_meta": meta});
    let mut answers = Vec::new();
    for (i, params) in [&first, &last, &first, &last, &first]
        .into_iter()
        .enumerate()
    {
        let r = p.request(json!(i), "tools/call", params.clone()).await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        answers.push(r["result"]["content"].clone());
    }
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
    assert_eq!(answers[0][0]["text"], r#"{"a":1,"b":[true]}"#);

    // A `_meta` that negotiates but that the revision's params type rejects (a log level
    // that is not one, a client identity without a name): -32602 with the decoder's
    // message for the params as sent, the same on every sighting.
    for bad in [
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "loud"}),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"version": "1"}}),
    ] {
        for params in [
            json!({"name": "echo", "_meta": bad, "arguments": {}}),
            json!({"_meta": bad, "name": 7}),
        ] {
            let expected =
                mcp_generated::v2026_07_28::CallToolRequestParams::from_value(params.clone())
                    .err()
                    .map(|e| format!("tools/call: {e}"));
            for i in 0..3 {
                let r = p.request(json!(i), "tools/call", params.clone()).await;
                assert_eq!(code(&r), -32602, "{r}");
                assert_eq!(
                    r["error"]["message"].as_str().map(str::to_owned),
                    expected,
                    "{params}"
                );
            }
        }
    }
    // The other members' errors are theirs, with a valid `_meta` kept apart.
    let r = p
        .request(
            json!(20),
            "tools/call",
            json!({"_meta": meta, "name": "echo", "arguments": 5}),
        )
        .await;
    let expected = mcp_generated::v2026_07_28::CallToolRequestParams::from_value(
        json!({"_meta": meta, "name": "echo", "arguments": 5}),
    )
    .err()
    .map(|e| format!("tools/call: {e}"));
    assert_eq!(code(&r), -32602, "{r}");
    assert_eq!(r["error"]["message"].as_str().map(str::to_owned), expected);
}
