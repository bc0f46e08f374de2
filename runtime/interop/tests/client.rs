//! The client against this runtime's own example server, at every revision: over an
//! in-memory stdio pair, a spawned process, Streamable HTTP (both eras) and HTTP+SSE.
//! Listing (all pages), calls, reads, prompts, completion, the server asking (legacy
//! requests and 2026-07-28 `input_required` rounds), progress, log notifications,
//! timeouts and cancellation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::model::{
    Content, Elicitation, Implementation, LogLevel, ResourceContents, Root, SampledMessage, Tool,
    ToolResult,
};
use mcp_runtime::{Era, ProtocolVersion, Server, VersionSet};
use mcp_runtime_client::{
    Client, ClientBuilder, ClientErrorKind, CompletionRef, Notification, RequestOptions,
};
use serde_json::{json, Map, Value};

mod kit;

fn rev(id: &str) -> ProtocolVersion {
    ProtocolVersion::parse(id).expect("a revision")
}

fn builder() -> ClientBuilder {
    Client::builder(Implementation::new("client-test", "1.0.0"))
        .timeout(kit::patience())
        .on_sampling(|request| async move {
            let asked = match request.messages.last().map(|m| &m.content) {
                Some(mcp_runtime::model::SampledContent::Text(t)) => t.clone(),
                _ => String::new(),
            };
            Ok(SampledMessage::assistant_text(
                "test-model",
                format!("echo: {asked}"),
            ))
        })
        .on_elicitation(|request| async move {
            let mut content = Map::new();
            if let Some(Value::Object(props)) = request
                .requested_schema
                .as_ref()
                .and_then(|s| s.get("properties"))
            {
                for (name, prop) in props {
                    let value = match prop.get("type").and_then(Value::as_str) {
                        Some("boolean") => json!(true),
                        Some("string") if prop.get("default").is_none() => {
                            json!(format!("{name}-answer"))
                        }
                        _ => continue,
                    };
                    content.insert(name.clone(), value);
                }
            }
            Ok(Elicitation::Accept(content))
        })
        .roots(vec![
            Root::new("file:///work").name("work"),
            Root::new("file:///tmp"),
        ])
}

/// The example server on an in-memory stdio pair.
async fn in_memory(server: Server, client: ClientBuilder) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let _ = mcp_runtime::transport::stdio::serve(server, server_read, server_write).await;
    });
    let (client_read, client_write) = tokio::io::split(client_end);
    client
        .connect_streams(client_read, client_write)
        .await
        .expect("connect")
}

/// The example server over HTTP on 127.0.0.1; its base URL.
async fn http_server(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = mcp_runtime_http::serve_listener(
            server,
            listener,
            mcp_runtime_http::HttpConfig::default(),
        )
        .await;
    });
    format!("http://{addr}")
}

fn text(result: &ToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// One session's worth of work, checked.
async fn exercise(client: &Client, v: ProtocolVersion) {
    assert_eq!(client.version(), v);
    let info = client.server_info();
    assert_eq!(
        info.implementation.as_ref().map(|i| i.name.as_str()),
        Some("mcp-conformance-test-server"),
        "{v}"
    );
    let tools = client.list_all_tools().await.expect("tools");
    assert!(tools.iter().any(|t| t.name == "test_simple_text"), "{v}");
    let result = client
        .call_tool("test_simple_text", json!({}))
        .await
        .expect("call");
    assert_eq!(text(&result), "This is a simple text response for testing.");
    let error = client
        .call_tool("test_error_handling", Value::Null)
        .await
        .expect("call");
    assert!(error.is_error);

    let resources = client.list_all_resources().await.expect("resources");
    assert!(resources.iter().any(|r| r.uri == "test://static-text"));
    let contents = client
        .read_resource("test://static-text")
        .await
        .expect("read");
    assert!(
        matches!(&contents[..], [ResourceContents::Text { text, .. }] if text.contains("static text"))
    );
    let templates = client
        .list_all_resource_templates()
        .await
        .expect("templates");
    assert_eq!(templates[0].uri_template, "test://template/{id}/data");

    let prompts = client.list_all_prompts().await.expect("prompts");
    assert!(prompts
        .iter()
        .any(|p| p.name == "test_prompt_with_arguments"));
    let prompt = client
        .get_prompt("test_prompt_with_arguments", [("arg1", "a"), ("arg2", "b")])
        .await
        .expect("prompt");
    assert!(
        matches!(&prompt.messages[0].content, Content::Text { text, .. } if text.contains("arg1='a'"))
    );

    let completion = client
        .complete(
            CompletionRef::Prompt("test_prompt_with_arguments".into()),
            "arg1",
            "testV",
            Map::new(),
        )
        .await
        .expect("complete");
    assert_eq!(completion.values, vec!["testValue1", "testValue2"]);

    // The server asks: a request of the server's in legacy revisions, an input_required
    // round in 2026-07-28; the same handlers answer.
    let sampled = client
        .call_tool("test_sampling", json!({"prompt": "2+2?"}))
        .await
        .expect("sampling");
    assert_eq!(text(&sampled), "LLM response: echo: 2+2?", "{v}");
    if v.features().elicitation {
        let elicited = client
            .call_tool("test_elicitation", json!({"message": "who?"}))
            .await
            .expect("elicitation");
        assert!(
            text(&elicited).contains("username-answer"),
            "{v}: {}",
            text(&elicited)
        );
    }
}

#[tokio::test]
async fn every_revision_over_an_in_memory_pipe() {
    for v in ProtocolVersion::ALL {
        let client = in_memory(kit::conformance_server(), builder().pin(v)).await;
        exercise(&client, v).await;
        client.close().await;
    }
}

#[tokio::test]
async fn a_dual_era_client_probes_then_falls_back() {
    // Every revision accepted: the probe finds the modern server.
    let client = in_memory(kit::conformance_server(), builder()).await;
    assert_eq!(client.version().era(), Era::Modern);
    assert!(client.server_info().supported_versions.len() > 1);
    client.close().await;

    // A legacy-only server: the probe fails, initialize offers the newest legacy
    // revision, and the server's counter-offer is accepted.
    let legacy_only = Server::builder(Implementation::new("old", "1"))
        .versions(VersionSet::of(&[rev("2025-03-26")]))
        .tool(Tool::new("t", "t"), |_, _| async {
            Ok(ToolResult::text("ok"))
        })
        .build();
    let client = in_memory(legacy_only, builder()).await;
    assert_eq!(client.version(), rev("2025-03-26"));
    assert_eq!(
        text(&client.call_tool("t", json!({})).await.expect("call")),
        "ok"
    );
    client.close().await;

    // A counter-offer the client does not accept is an error.
    let legacy_only = Server::builder(Implementation::new("old", "1"))
        .versions(VersionSet::of(&[rev("2024-11-05")]))
        .build();
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(server_end);
    tokio::spawn(async move { mcp_runtime::transport::stdio::serve(legacy_only, r, w).await });
    let (r, w) = tokio::io::split(client_end);
    let error = builder()
        .versions(VersionSet::of(&[rev("2025-06-18"), rev("2025-11-25")]))
        .connect_streams(r, w)
        .await
        .expect_err("no common revision");
    assert_eq!(error.kind(), ClientErrorKind::Negotiation);
}

#[tokio::test]
async fn input_required_rounds_are_answered_and_retried() {
    let modern = rev("2026-07-28");
    let client = in_memory(kit::conformance_server(), builder().pin(modern)).await;
    let several = client
        .call_tool("test_input_required_result_multiple_inputs", json!({}))
        .await
        .expect("multiple inputs");
    assert_eq!(
        text(&several),
        "echo: Generate a greeting name-answer, 2 root(s)"
    );
    let rounds = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await
        .expect("two rounds");
    assert_eq!(text(&rounds), "name-answer likes color-answer");
    let prompt = client
        .get_prompt(
            "test_input_required_result_prompt",
            Vec::<(String, String)>::new(),
        )
        .await
        .expect("prompt asks too");
    assert!(
        matches!(&prompt.messages[0].content, Content::Text { text, .. } if text.contains("context-answer"))
    );

    // A round limit: one round is not enough for a tool that asks twice.
    let client = in_memory(
        kit::conformance_server(),
        builder().pin(modern).max_input_rounds(1),
    )
    .await;
    let error = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await
        .expect_err("limit");
    assert_eq!(error.kind(), ClientErrorKind::TooManyRounds);

    // A client without the handler the server needs says so.
    let bare = Client::builder(Implementation::new("bare", "1")).pin(modern);
    let client = in_memory(kit::conformance_server(), bare).await;
    let result = client
        .call_tool("test_sampling", json!({"prompt": "x"}))
        .await
        .expect("answered");
    assert!(
        result.is_error,
        "the server reports the missing capability: {result:?}"
    );
}

#[tokio::test]
async fn per_request_handlers_answer_for_their_request() {
    for v in [rev("2025-11-25"), rev("2026-07-28")] {
        let client = in_memory(kit::conformance_server(), builder().pin(v)).await;
        let own = mcp_runtime_client::ClientHandlers::new().sampling(|_| async {
            Ok(SampledMessage::assistant_text(
                "own",
                "from the request's handler",
            ))
        });
        let result = client
            .call_tool_with(
                "test_sampling",
                json!({"prompt": "x"}),
                RequestOptions::new().handlers(own),
            )
            .await
            .expect("call");
        assert_eq!(
            text(&result),
            "LLM response: from the request's handler",
            "{v}"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn progress_and_log_messages_reach_the_caller() {
    for v in [rev("2024-11-05"), rev("2025-11-25"), rev("2026-07-28")] {
        let client = in_memory(kit::conformance_server(), builder().pin(v)).await;
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink = reports.clone();
        client
            .call_tool_with(
                "test_tool_with_progress",
                json!({}),
                RequestOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress)),
            )
            .await
            .expect("progress tool");
        assert_eq!(*reports.lock().unwrap(), vec![0.0, 50.0, 100.0], "{v}");

        let mut notifications = client.notifications();
        client
            .set_log_level(LogLevel::Debug)
            .await
            .expect("log level");
        client
            .call_tool("test_tool_with_logging", json!({}))
            .await
            .expect("logging tool");
        let mut logs = 0;
        while let Ok(Some(n)) =
            tokio::time::timeout(Duration::from_millis(500), notifications.recv()).await
        {
            if matches!(n, Notification::Log { .. }) {
                logs += 1;
            }
            if logs == 3 {
                break;
            }
        }
        assert_eq!(logs, 3, "{v}");
        client.close().await;
    }
}

/// Counts the handlers dropped before they finished (the runtime drops a cancelled
/// request's handler).
struct Unfinished(Arc<AtomicUsize>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A server with a tool that waits, counting the calls cancelled while they wait.
fn slow_server(cancelled: Arc<AtomicUsize>) -> Server {
    Server::builder(Implementation::new("slow", "1"))
        .tool(Tool::new("wait", "Waits"), move |_, _| {
            let guard = Unfinished(cancelled.clone());
            async move {
                tokio::time::sleep(Duration::from_secs(30)).await;
                std::mem::forget(guard);
                Ok(ToolResult::text("done"))
            }
        })
        .build()
}

#[tokio::test]
async fn timeouts_and_dropped_requests_cancel_on_the_server() {
    for v in [rev("2025-03-26"), rev("2026-07-28")] {
        let cancelled = Arc::new(AtomicUsize::new(0));
        let client = in_memory(slow_server(cancelled.clone()), builder().pin(v)).await;
        let error = client
            .call_tool_with(
                "wait",
                json!({}),
                RequestOptions::new().timeout(Duration::from_millis(200)),
            )
            .await
            .expect_err("times out");
        assert_eq!(error.kind(), ClientErrorKind::Timeout);
        // A dropped call is cancelled too.
        let _ = tokio::time::timeout(
            Duration::from_millis(200),
            client.call_tool("wait", json!({})),
        )
        .await;
        for _ in 0..100 {
            if cancelled.load(Ordering::SeqCst) == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(cancelled.load(Ordering::SeqCst), 2, "{v}");
        // The connection is still good.
        assert!(client.list_all_tools().await.is_ok());
        client.close().await;
    }
}

#[tokio::test]
async fn over_streamable_http_in_both_eras() {
    let base = http_server(kit::conformance_server()).await;
    for v in [
        rev("2025-03-26"),
        rev("2025-06-18"),
        rev("2025-11-25"),
        rev("2026-07-28"),
    ] {
        let client = builder()
            .pin(v)
            .connect_url(&format!("{base}/mcp"))
            .await
            .expect("connect");
        exercise(&client, v).await;
        client.close().await;
    }
    // 2026-07-28 over HTTP: an x-mcp-header argument travels as a header too (the server
    // rejects the call without it), and rounds work on the stateless wire.
    let client = builder()
        .connect_url(&format!("{base}/mcp"))
        .await
        .expect("connect");
    assert_eq!(client.version().era(), Era::Modern);
    let echoed = client
        .call_tool("test_header_param", json!({"region": "eu west"}))
        .await
        .expect("header param");
    assert_eq!(text(&echoed), "region=eu west");
    let several = client
        .call_tool("test_input_required_result_multiple_inputs", json!({}))
        .await
        .expect("rounds over HTTP");
    assert!(text(&several).contains("2 root(s)"));
    client.close().await;
}

#[tokio::test]
async fn over_http_sse_for_2024_11_05() {
    let base = http_server(kit::conformance_server()).await;
    let v = rev("2024-11-05");
    let client = builder()
        .pin(v)
        .connect_sse(&format!("{base}/sse"))
        .await
        .expect("connect");
    exercise(&client, v).await;
    client.close().await;
    // Given the SSE URL, a client that accepts every revision finds its way there: the
    // POSTs are refused, and the same URL is then read as an HTTP+SSE stream.
    let client = builder()
        .versions(VersionSet::of(&[v]))
        .connect_url(&format!("{base}/sse"))
        .await
        .expect("fallback to HTTP+SSE");
    assert_eq!(client.version(), v);
    client.close().await;
}

#[tokio::test]
async fn a_spawned_server_over_stdio() {
    let exe = kit::process::example();
    for v in [rev("2024-11-05"), rev("2026-07-28")] {
        let client = builder()
            .pin(v)
            .inherit_stderr(false)
            .connect_command(exe.to_str().expect("path"), Vec::<String>::new())
            .await
            .expect("spawn");
        exercise(&client, v).await;
        client.close().await;
        let error = client.list_all_tools().await.expect_err("closed");
        assert_eq!(error.kind(), ClientErrorKind::Closed);
    }
}

/// Waits for a tool list change on `notifications`.
async fn tools_changed(notifications: &mut mcp_runtime_client::Notifications) -> bool {
    loop {
        match tokio::time::timeout(kit::patience(), notifications.recv()).await {
            Ok(Some(Notification::ToolsListChanged)) => return true,
            Ok(Some(_)) => {}
            _ => return false,
        }
    }
}

#[tokio::test]
async fn list_changes_reach_the_caller_in_both_eras() {
    let base = http_server(kit::conformance_server()).await;
    for (v, http) in [
        ("2025-11-25", false),
        ("2025-11-25", true),
        ("2026-07-28", false),
        ("2026-07-28", true),
    ] {
        let client = if http {
            builder()
                .pin(rev(v))
                .connect_url(&format!("{base}/mcp"))
                .await
                .expect("connect")
        } else {
            in_memory(kit::conformance_server(), builder().pin(rev(v))).await
        };
        let mut notifications = client.notifications();
        // 2026-07-28 announces changes on a subscriptions/listen stream only; a legacy
        // session hears them on its own (stdout, or the session's GET stream).
        let subscription = if rev(v).era() == Era::Modern {
            let s = client
                .listen(mcp_runtime_client::ListenFilter::list_changes())
                .await
                .expect("listen");
            assert_eq!(s.acknowledged()["toolsListChanged"], true, "{v}");
            Some(s)
        } else {
            assert!(client
                .listen(mcp_runtime_client::ListenFilter::list_changes())
                .await
                .is_err());
            None
        };
        client
            .call_tool("test_trigger_tool_change", json!({}))
            .await
            .expect("trigger");
        assert!(
            tools_changed(&mut notifications).await,
            "{v} over {}",
            if http { "HTTP" } else { "stdio" }
        );
        drop(subscription);
        client.close().await;
    }
}

/// A 2026-07-28 subscription the server ends (here: it shuts down, which ends every open
/// listen with its result) is seen as ended by the caller, without an error.
#[tokio::test]
async fn a_subscription_the_server_ends_is_seen_ended() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = mcp_runtime_http::serve_listener_with_shutdown(
            kit::conformance_server(),
            listener,
            mcp_runtime_http::HttpConfig::default(),
            async move {
                let _ = stopped.await;
            },
        )
        .await;
    });
    let client = builder()
        .pin(rev("2026-07-28"))
        .connect_url(&format!("http://{addr}/mcp"))
        .await
        .expect("connect");
    let mut subscription = client
        .listen(mcp_runtime_client::ListenFilter::list_changes())
        .await
        .expect("listen");
    let _ = stop.send(());
    tokio::time::timeout(kit::patience(), subscription.ended())
        .await
        .expect("the subscription ends when the server shuts down")
        .expect("ended by the server with its result");
}

#[tokio::test]
async fn elicitation_defaults_fill_the_form_sep_1034() {
    // The user leaves the form as shown; the client answers with the schema's defaults,
    // the number `95.5` included (which every revision's ElicitResult types as an integer).
    let client = in_memory(kit::conformance_server(), builder().pin(rev("2025-11-25"))).await;
    let result = client
        .call_tool("test_elicitation_sep1034_defaults", json!({}))
        .await
        .expect("call");
    let answered = text(&result);
    assert!(!result.is_error, "{answered}");
    for field in [
        r#""name":"John Doe""#,
        r#""age":30"#,
        r#""score":95.5"#,
        r#""status":"active""#,
        r#""verified":true"#,
    ] {
        assert!(answered.contains(field), "{field} in {answered}");
    }
}

/// The client bounds what it reads (`ClientBuilder::max_message_bytes`): an answer over
/// the limit fails its request with an error naming the limit, whether it came as a JSON
/// body, as an event on the request's SSE stream, or on the HTTP+SSE stream (which ends
/// the connection); answers within the limit are read as ever.
#[tokio::test]
async fn answers_over_the_clients_limit_fail_with_an_error_naming_it() {
    let big = "x".repeat(64 * 1024);
    let server = Server::builder(Implementation::new("big", "1"))
        .tool(Tool::new("small", "A short answer"), |_, _| async {
            Ok(ToolResult::text("small"))
        })
        .tool(Tool::new("big", "A long answer"), {
            let big = big.clone();
            move |_, _| {
                let big = big.clone();
                async move { Ok(ToolResult::text(big)) }
            }
        })
        .tool(
            Tool::new("big_after_log", "Logs first: the answer comes as SSE"),
            {
                move |_, ctx| {
                    let big = big.clone();
                    async move {
                        ctx.log(LogLevel::Info, None, json!("about to answer"))
                            .await;
                        Ok(ToolResult::text(big))
                    }
                }
            },
        )
        .build();
    let base = http_server(server).await;
    let limited = || builder().max_message_bytes(16 * 1024);
    let names_the_limit = |e: &mcp_runtime_client::ClientError| {
        let text = e.to_string();
        assert!(
            text.contains("16384") && text.contains("max_message_bytes"),
            "{text}"
        );
    };
    for version in ["2025-11-25", "2026-07-28"] {
        let client = limited()
            .pin(rev(version))
            .connect_url(&format!("{base}/mcp"))
            .await
            .expect("connect");
        let small = client.call_tool("small", json!({})).await.expect("small");
        assert_eq!(text(&small), "small");
        let e = client
            .call_tool("big", json!({}))
            .await
            .expect_err("too big");
        assert_eq!(e.kind(), ClientErrorKind::Transport, "{version}: {e}");
        names_the_limit(&e);
        if version == "2025-11-25" {
            client.set_log_level(LogLevel::Debug).await.expect("level");
        }
        let e = client
            .call_tool("big_after_log", json!({}))
            .await
            .expect_err("too big");
        names_the_limit(&e);
        if version == "2025-11-25" {
            // The log message came first, so the answer was an event on an SSE stream.
            assert!(e.to_string().contains("SSE event"), "{e}");
        }
        // The client goes on.
        assert_eq!(
            text(&client.call_tool("small", json!({})).await.unwrap()),
            "small"
        );
    }
    // HTTP+SSE: every answer comes on the one stream; one over the limit ends it.
    let client = limited()
        .connect_sse(&format!("{base}/sse"))
        .await
        .expect("connect");
    assert_eq!(
        text(&client.call_tool("small", json!({})).await.unwrap()),
        "small"
    );
    let e = client
        .call_tool("big", json!({}))
        .await
        .expect_err("too big");
    names_the_limit(&e);
    // And the default limit (64 MiB) reads it.
    let client = builder()
        .connect_url(&format!("{base}/mcp"))
        .await
        .expect("connect");
    assert_eq!(
        text(&client.call_tool("big", json!({})).await.unwrap()).len(),
        64 * 1024
    );
}
