//! Asking the client (`ask-client`, `input-required` in `runtime/core/SHAPING.md`), end to end
//! over an in-memory stdio pair, in every revision where it applies.
//!
//! Legacy (2024-11-05 … 2025-11-25): the handler's ask is a server→client JSON-RPC request
//! (`s-N`) that is answered, refused, left unanswered (timeout → `notifications/cancelled`)
//! or made moot by the client cancelling the asking call; nothing is sent for an
//! undeclared capability (-32021), for elicitation before 2025-06-18, or for sampling with
//! tools where the revision or the client does not support it. Every request the server
//! sends is checked against the revision's official schema.
//!
//! 2026-07-28: `input_required` round trips with a signed `requestState`: first pass,
//! retry, wrong answer shapes, extra and missing keys, several rounds, tampered or
//! replayed states, prompts, lists, undeclared capabilities.

#![allow(clippy::unwrap_used)]

mod kit;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use kit::schema::{assert_schema_exact, check_notification, check_server_request};
use kit::stdio::Stdio;
use kit::{code, notification};
use mcp_runtime::model::{Implementation, Prompt, PromptMessage, PromptResult, Tool, ToolResult};
use mcp_runtime::{Ask, AskError};
use mcp_runtime::{Context, Limits, Server};
use serde_json::{json, Value};

/// The `ask_timeout` of the test server.
const ASK_TIMEOUT: Duration = Duration::from_millis(400);

// ───────────────────────────── the server under test ─────────────────────────────

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN: &str = "2026-07-28";

fn has_elicitation(rev: &str) -> bool {
    matches!(rev, "2025-06-18" | "2025-11-25" | "2026-07-28")
}

const ELICIT_MESSAGE: &str = "What is your name?";

fn name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn sampling_params() -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
        "maxTokens": 20,
    })
}

fn sampling_with_tools() -> Value {
    let mut p = sampling_params();
    p["tools"] = json!([{
        "name": "get_weather",
        "description": "Weather of a city",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }]);
    p["toolChoice"] = json!({"mode": "auto"});
    p
}

/// The method and (newest-shape) params a `what` asks.
fn expected(what: &str) -> (&'static str, Value) {
    match what {
        "elicit" => (
            "elicitation/create",
            json!({"message": ELICIT_MESSAGE, "requestedSchema": name_schema()}),
        ),
        "sample" => ("sampling/createMessage", sampling_params()),
        "sample_tools" => ("sampling/createMessage", sampling_with_tools()),
        "roots" => ("roots/list", json!({})),
        other => panic!("unknown ask {other}"),
    }
}

/// A valid client answer to a `what`.
fn answer(what: &str) -> Value {
    match what {
        "elicit" => json!({"action": "accept", "content": {"name": "Ada"}}),
        "sample" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "Hi!"},
            "model": "test-model",
            "stopReason": "endTurn",
        }),
        "sample_tools" => json!({
            "role": "assistant",
            "content": {"type": "tool_use", "id": "call-1", "name": "get_weather", "input": {"city": "Paris"}},
            "model": "test-model",
            "stopReason": "toolUse",
        }),
        "roots" => json!({"roots": [{"uri": "file:///home/ada/project", "name": "project"}]}),
        other => panic!("unknown ask {other}"),
    }
}

/// The client capability a `what` needs.
fn capability(what: &str) -> &'static str {
    match what {
        "elicit" => "elicitation",
        "sample" | "sample_tools" => "sampling",
        "roots" => "roots",
        other => panic!("unknown ask {other}"),
    }
}

/// Every capability a client of `rev` can declare for asks (sampling with tools too).
fn all_caps(rev: &str) -> Value {
    let mut caps = json!({"sampling": {"tools": {}}, "roots": {"listChanged": true}});
    if has_elicitation(rev) {
        caps["elicitation"] = json!({});
    }
    caps
}

/// The asks a `rev` client can answer (with `all_caps`).
fn whats(rev: &str) -> Vec<&'static str> {
    let mut w = vec!["sample", "roots"];
    if has_elicitation(rev) {
        w.push("elicit");
    }
    if rev == "2025-11-25" || rev == MODERN {
        w.push("sample_tools");
    }
    w
}

/// Errors the handlers saw from their asks, as `{tool, code, message, data}`.
type Seen = Arc<Mutex<Vec<Value>>>;

fn record(seen: &Seen, tool: &str, e: &AskError) {
    let e = e.rpc_error();
    seen.lock().unwrap().push(json!({
        "tool": tool,
        "code": e.code.0,
        "message": e.message,
        "data": e.data,
    }));
}

/// One ask, answered as the client's raw result (what these tests compare).
async fn ask_one(ctx: &Context, ask: Ask) -> Result<Value, AskError> {
    let mut answers = ctx.ask(vec![(None, ask)]).await?;
    Ok(answers.pop().expect("one answer per ask"))
}

fn elicit_name() -> Ask {
    Ask::Elicit {
        message: ELICIT_MESSAGE.into(),
        requested_schema: name_schema(),
    }
}

async fn ask_what(ctx: &Context, what: &str) -> Result<Value, AskError> {
    match what {
        "elicit" => ask_one(ctx, elicit_name()).await,
        "sample" => ask_one(ctx, Ask::CreateMessage(sampling_params())).await,
        "sample_tools" => ask_one(ctx, Ask::CreateMessage(sampling_with_tools())).await,
        "roots" => ask_one(ctx, Ask::ListRoots).await,
        other => panic!("unknown ask {other}"),
    }
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name).input_schema(json!({"type": "object"}))
}

/// The answer a handler reports as its tool result text (`{"answer": …}` or similar).
fn reported(response: &Value) -> Value {
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("expected a tool result with text, got {response}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Tools:
/// - `ask {what}`: one ask (`elicit`, `sample`, `sample_tools`, `roots`) → `{"answer": …}`;
/// - `ask_twice`: elicits, then lists roots (two rounds in 2026-07-28) → `{"name", "roots"}`;
/// - `ask_keyed`: one `ctx.ask` of two keyed asks (`reply`: sampling, `where`: roots);
/// - `greet`: elicits → `{"answer": …}` (a tool with the same name as the prompt).
///
/// Prompt `greet`: elicits, then `Hello, <name>`.
/// Every handler records the errors its asks return (in `seen`) and propagates them.
fn asking_server() -> (Server, Seen) {
    asking_server_keyed(None)
}

/// [`asking_server`] with its `requestState` keys (current, previous).
fn asking_server_keyed(keys: Option<(&[u8], Option<&[u8]>)>) -> (Server, Seen) {
    let seen: Seen = Arc::default();
    let mut limits = Limits::default();
    limits.ask_timeout = ASK_TIMEOUT;
    let s1 = Arc::clone(&seen);
    let s2 = Arc::clone(&seen);
    let s3 = Arc::clone(&seen);
    let s4 = Arc::clone(&seen);
    let s5 = Arc::clone(&seen);
    let server = Server::builder(Implementation::new("asks-test", "1.0.0"))
        .limits(limits)
        .tool(tool("ask"), move |args, ctx| {
            let seen = Arc::clone(&s1);
            async move {
                let what = args.get("what").and_then(Value::as_str).unwrap_or("");
                match ask_what(&ctx, what).await {
                    Ok(a) => Ok(ToolResult::text(json!({"answer": a}).to_string())),
                    Err(e) => {
                        record(&seen, "ask", &e);
                        Err(e.into())
                    }
                }
            }
        })
        .tool(tool("ask_twice"), move |_, ctx| {
            let seen = Arc::clone(&s2);
            async move {
                let run = async {
                    let name = ask_one(&ctx, elicit_name()).await?;
                    let roots = ask_one(&ctx, Ask::ListRoots).await?;
                    Ok::<_, AskError>(json!({"name": name, "roots": roots}))
                };
                match run.await {
                    Ok(v) => Ok(ToolResult::text(v.to_string())),
                    Err(e) => {
                        record(&seen, "ask_twice", &e);
                        Err(e.into())
                    }
                }
            }
        })
        .tool(tool("ask_keyed"), move |_, ctx| {
            let seen = Arc::clone(&s3);
            async move {
                let asks = vec![
                    (
                        Some("reply".to_owned()),
                        Ask::CreateMessage(sampling_params()),
                    ),
                    (Some("where".to_owned()), Ask::ListRoots),
                ];
                match ctx.ask(asks).await {
                    Ok(answers) => Ok(ToolResult::text(
                        json!({"reply": answers[0], "where": answers[1]}).to_string(),
                    )),
                    Err(e) => {
                        record(&seen, "ask_keyed", &e);
                        Err(e.into())
                    }
                }
            }
        })
        .tool(tool("greet"), move |_, ctx| {
            let seen = Arc::clone(&s4);
            async move {
                match ask_one(&ctx, elicit_name()).await {
                    Ok(a) => Ok(ToolResult::text(json!({"answer": a}).to_string())),
                    Err(e) => {
                        record(&seen, "greet", &e);
                        Err(e.into())
                    }
                }
            }
        })
        .prompt(
            Prompt::new("greet").description("Greets whoever answers"),
            move |_, ctx| {
                let seen = Arc::clone(&s5);
                async move {
                    match ask_one(&ctx, elicit_name()).await {
                        Ok(a) => {
                            let name = a["content"]["name"].as_str().unwrap_or("?").to_owned();
                            Ok(PromptResult::new([PromptMessage::user(format!(
                                "Hello, {name}"
                            ))]))
                        }
                        Err(e) => {
                            record(&seen, "prompt greet", &e);
                            Err(e.into())
                        }
                    }
                }
            },
        );
    let server = match keys {
        Some((current, previous)) => server.state_keys(current, previous),
        None => server,
    }
    .build();
    (server, seen)
}

fn is_cancel_for(m: &Value, id: &Value) -> bool {
    m["method"] == "notifications/cancelled" && m["params"]["requestId"] == *id
}

// ───────────────────────────── legacy ─────────────────────────────

fn call(id: Value, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

/// Sends a `tools/call` and returns the first thing the server writes (its ask).
async fn call_and_get_ask(p: &mut Stdio, id: Value, name: &str, args: Value) -> Value {
    p.send(&call(id, name, args)).await;
    let m = p.recv().await;
    assert!(
        m.get("method").is_some() && m.get("id").is_some(),
        "expected a server→client request, got {m}"
    );
    m
}

#[tokio::test]
async fn legacy_answers_reach_the_handler_and_requests_are_schema_exact() {
    for rev in LEGACY {
        let (server, seen) = asking_server();
        let mut p = Stdio::serve(server);
        p.open(rev, all_caps(rev)).await;
        let mut ids = Vec::new();
        for (n, what) in whats(rev).into_iter().enumerate() {
            let call_id = json!(100 + n);
            let ask = call_and_get_ask(&mut p, call_id.clone(), "ask", json!({"what": what})).await;
            let (method, params) = expected(what);
            check_server_request(rev, &ask, method);
            match what {
                "elicit" => {
                    assert_eq!(ask["params"]["message"], ELICIT_MESSAGE, "{rev}: {ask}");
                    assert_eq!(
                        ask["params"]["requestedSchema"],
                        name_schema(),
                        "{rev}: {ask}"
                    );
                }
                "sample" | "sample_tools" => {
                    assert_eq!(
                        ask["params"]["messages"], params["messages"],
                        "{rev}: {ask}"
                    );
                    assert_eq!(ask["params"]["maxTokens"], 20, "{rev}: {ask}");
                    if what == "sample_tools" {
                        assert_eq!(ask["params"]["tools"], params["tools"], "{rev}: {ask}");
                        assert_eq!(
                            ask["params"]["toolChoice"], params["toolChoice"],
                            "{rev}: {ask}"
                        );
                    } else {
                        assert!(ask["params"].get("tools").is_none(), "{rev}: {ask}");
                    }
                }
                _ => {}
            }
            ids.push(ask["id"].clone());
            p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer(what)}))
                .await;
            let r = p.recv().await;
            assert_eq!(r["id"], call_id, "{rev} {what}: {r}");
            assert_eq!(
                reported(&r),
                json!({"answer": answer(what)}),
                "{rev} {what}"
            );
            assert_schema_exact(rev, "CallToolResult", &r["result"]);
        }
        // Server request ids are unique on the connection.
        let unique: std::collections::BTreeSet<String> = ids.iter().map(Value::to_string).collect();
        assert_eq!(unique.len(), ids.len(), "{rev}: {ids:?}");

        // Two asks at once: two requests, matched by id whatever the order of the answers.
        p.send(&call(json!("pair"), "ask_keyed", json!({}))).await;
        let a = p.recv().await;
        let b = p.recv().await;
        let mut by_method = std::collections::BTreeMap::new();
        for m in [&a, &b] {
            let method = m["method"].as_str().unwrap_or_else(|| panic!("{rev}: {m}"));
            check_server_request(rev, m, method);
            by_method.insert(method.to_owned(), m["id"].clone());
        }
        assert_ne!(a["id"], b["id"], "{rev}");
        let (sample_id, roots_id) = (
            by_method["sampling/createMessage"].clone(),
            by_method["roots/list"].clone(),
        );
        p.send(&json!({"jsonrpc": "2.0", "id": roots_id, "result": answer("roots")}))
            .await;
        p.send(&json!({"jsonrpc": "2.0", "id": sample_id, "result": answer("sample")}))
            .await;
        let r = p.recv().await;
        assert_eq!(r["id"], "pair", "{rev}: {r}");
        assert_eq!(
            reported(&r),
            json!({"reply": answer("sample"), "where": answer("roots")}),
            "{rev}"
        );
        assert!(
            seen.lock().unwrap().is_empty(),
            "{rev}: {:?}",
            seen.lock().unwrap()
        );
    }
}

#[tokio::test]
async fn legacy_refusals_are_errors_for_the_handler() {
    for rev in LEGACY {
        let (server, seen) = asking_server();
        let mut p = Stdio::serve(server);
        p.open(rev, all_caps(rev)).await;
        for (n, what) in whats(rev).into_iter().enumerate() {
            let call_id = json!(n);
            let ask = call_and_get_ask(&mut p, call_id.clone(), "ask", json!({"what": what})).await;
            p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "User rejected the request", "data": {"why": "no"}}}))
                .await;
            let r = p.recv().await;
            assert_eq!(r["id"], call_id, "{rev} {what}: {r}");
            assert_eq!(code(&r), -1, "{rev} {what}: {r}");
            let seen = seen
                .lock()
                .unwrap()
                .pop()
                .expect("the handler saw an error");
            assert_eq!(seen["code"], -1, "{rev} {what}: {seen}");
            assert_eq!(seen["message"], "User rejected the request", "{rev} {what}");
            assert_eq!(seen["data"], json!({"why": "no"}), "{rev} {what}");
        }
        // An answer of the wrong shape is an error for the handler too.
        let ask = call_and_get_ask(&mut p, json!("bad"), "ask", json!({"what": "roots"})).await;
        p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": "not a list"}}))
            .await;
        let r = p.recv().await;
        assert_eq!(r["id"], "bad", "{rev}: {r}");
        assert!(r.get("error").is_some(), "{rev}: {r}");
        assert!(!seen.lock().unwrap().is_empty(), "{rev}");
    }
}

#[tokio::test]
async fn legacy_unanswered_asks_time_out_and_are_cancelled() {
    for rev in LEGACY {
        let (server, seen) = asking_server();
        let mut p = Stdio::serve(server);
        p.open(rev, all_caps(rev)).await;
        for (n, what) in whats(rev).into_iter().enumerate() {
            let call_id = json!(n);
            let ask = call_and_get_ask(&mut p, call_id.clone(), "ask", json!({"what": what})).await;
            let sent = Instant::now();
            let cancel = p.recv().await;
            assert!(
                is_cancel_for(&cancel, &ask["id"]),
                "{rev} {what}: expected notifications/cancelled for {}, got {cancel}",
                ask["id"]
            );
            assert!(
                sent.elapsed() >= ASK_TIMEOUT - Duration::from_millis(150),
                "{rev} {what}: cancelled after {:?}, before ask_timeout",
                sent.elapsed()
            );
            check_notification(rev, &cancel);
            let r = p.recv().await;
            assert_eq!(r["id"], call_id, "{rev} {what}: {r}");
            assert!(r.get("error").is_some(), "{rev} {what}: {r}");
            let seen = seen
                .lock()
                .unwrap()
                .pop()
                .expect("the handler saw an error");
            assert_eq!(seen["tool"], "ask", "{rev} {what}");
            // A late answer is ignored; the server still serves.
            p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer(what)}))
                .await;
            let (before, pong) = p.exchange(json!("ping"), "ping", json!({})).await;
            assert!(before.is_empty(), "{rev} {what}: {before:?}");
            assert_eq!(pong["result"], json!({}), "{rev}");
        }
    }
}

#[tokio::test]
async fn legacy_cancelling_the_asking_call_cancels_the_ask() {
    let mut failures = Vec::new();
    for rev in LEGACY {
        for what in whats(rev) {
            let (server, _seen) = asking_server();
            let mut p = Stdio::serve(server);
            p.open(rev, all_caps(rev)).await;
            let ask = call_and_get_ask(&mut p, json!("c1"), "ask", json!({"what": what})).await;
            // The ask left no later than now: its timeout cannot fire before `asked +
            // ASK_TIMEOUT`.
            let asked = Instant::now();
            p.send(&notification(
                "notifications/cancelled",
                json!({"requestId": "c1", "reason": "user stopped"}),
            ))
            .await;
            // What arrives next: the server cancels its ask, at once (not when the ask
            // times out), and does not answer the cancelled call.
            let next = p.recv().await;
            if !is_cancel_for(&next, &ask["id"]) || asked.elapsed() >= ASK_TIMEOUT / 2 {
                failures.push(format!(
                    "{rev} {what}: after cancelling the call, expected notifications/cancelled for {} at once; got {next} after {:?}",
                    ask["id"],
                    asked.elapsed()
                ));
                continue;
            }
            check_notification(rev, &next);
            // Past the moment the ask would have timed out (the subject: its timeout must
            // not cancel it a second time), a late answer is harmless, and the next
            // message is the answer to a ping: no second cancellation, no answer to c1.
            let past_timeout = ASK_TIMEOUT + Duration::from_millis(400);
            tokio::time::sleep(past_timeout.saturating_sub(asked.elapsed())).await;
            p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer(what)}))
                .await;
            let pong = p.request("ping", "ping", json!({})).await;
            assert_eq!(pong["result"], json!({}), "{rev}");
            p.finish().await;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn legacy_undeclared_capabilities_send_nothing() {
    for rev in LEGACY {
        let (server, seen) = asking_server();
        let mut p = Stdio::serve(server);
        p.open(rev, json!({})).await;
        for (n, what) in ["sample", "roots", "elicit"].into_iter().enumerate() {
            if what == "elicit" && !has_elicitation(rev) {
                continue;
            }
            let (before, r) = p
                .exchange(
                    json!(n),
                    "tools/call",
                    json!({"name": "ask", "arguments": {"what": what}}),
                )
                .await;
            assert!(before.is_empty(), "{rev} {what}: sent {before:?}");
            assert_eq!(code(&r), -32021, "{rev} {what}: {r}");
            assert_eq!(
                r["error"]["data"]["requiredCapabilities"],
                json!({capability(what): {}}),
                "{rev} {what}: {r}"
            );
            let seen = seen
                .lock()
                .unwrap()
                .pop()
                .expect("the handler saw an error");
            assert_eq!(seen["code"], -32021, "{rev} {what}");
        }
        // Declaring one capability does not let the others through.
        let (server, _) = asking_server();
        let mut p = Stdio::serve(server);
        p.open(rev, json!({"sampling": {}})).await;
        let (before, r) = p
            .exchange(
                json!(1),
                "tools/call",
                json!({"name": "ask_keyed", "arguments": {}}),
            )
            .await;
        assert!(before.is_empty(), "{rev}: sent {before:?}");
        assert_eq!(code(&r), -32021, "{rev}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"],
            json!({"roots": {}}),
            "{rev}"
        );
        // Nothing was sent then, nor later.
        p.finish().await;
    }
}

#[tokio::test]
async fn legacy_elicitation_before_2025_06_18_is_refused_without_sending() {
    for rev in ["2024-11-05", "2025-03-26"] {
        let (server, seen) = asking_server();
        let mut p = Stdio::serve(server);
        // Even a client claiming the capability (unknown to its revision) is not asked.
        p.open(rev, json!({"sampling": {}, "roots": {}, "elicitation": {}}))
            .await;
        for (id, tool, args) in [
            (1, "ask", json!({"what": "elicit"})),
            (2, "greet", json!({})),
        ] {
            let (before, r) = p
                .exchange(
                    json!(id),
                    "tools/call",
                    json!({"name": tool, "arguments": args}),
                )
                .await;
            assert!(before.is_empty(), "{rev} {tool}: sent {before:?}");
            assert!(r.get("error").is_some(), "{rev} {tool}: {r}");
            assert!(
                seen.lock().unwrap().pop().is_some(),
                "{rev} {tool}: the handler saw an error"
            );
        }
        let (before, r) = p
            .exchange(json!(3), "prompts/get", json!({"name": "greet"}))
            .await;
        assert!(before.is_empty(), "{rev}: sent {before:?}");
        assert!(r.get("error").is_some(), "{rev}: {r}");
        // Nothing was sent then, nor later.
        p.finish().await;
    }
}

#[tokio::test]
async fn legacy_sampling_with_tools_needs_2025_11_25_and_sampling_tools() {
    // Before 2025-11-25: refused, even if the client claims sampling.tools.
    for rev in ["2024-11-05", "2025-03-26", "2025-06-18"] {
        let (server, seen) = asking_server();
        let mut p = Stdio::serve(server);
        p.open(rev, all_caps(rev)).await;
        let (before, r) = p
            .exchange(
                json!(1),
                "tools/call",
                json!({"name": "ask", "arguments": {"what": "sample_tools"}}),
            )
            .await;
        assert!(before.is_empty(), "{rev}: sent {before:?}");
        assert!(r.get("error").is_some(), "{rev}: {r}");
        assert!(seen.lock().unwrap().pop().is_some(), "{rev}");
        // Plain sampling still works there.
        let ask = call_and_get_ask(&mut p, json!(2), "ask", json!({"what": "sample"})).await;
        check_server_request(rev, &ask, "sampling/createMessage");
        p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer("sample")}))
            .await;
        assert_eq!(
            reported(&p.recv().await),
            json!({"answer": answer("sample")}),
            "{rev}"
        );
    }
    let rev = "2025-11-25";
    // 2025-11-25 without sampling.tools: -32021 naming sampling.tools, nothing sent.
    let (server, seen) = asking_server();
    let mut p = Stdio::serve(server);
    p.open(rev, json!({"sampling": {}})).await;
    let (before, r) = p
        .exchange(
            json!(1),
            "tools/call",
            json!({"name": "ask", "arguments": {"what": "sample_tools"}}),
        )
        .await;
    assert!(before.is_empty(), "sent {before:?}");
    assert_eq!(code(&r), -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {"tools": {}}}),
        "{r}"
    );
    assert_eq!(
        seen.lock().unwrap().pop().expect("handler error")["code"],
        -32021
    );
    // With sampling.tools: sent with its tools, exact for 2025-11-25.
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    p.open(rev, json!({"sampling": {"tools": {}}})).await;
    let ask = call_and_get_ask(&mut p, json!(2), "ask", json!({"what": "sample_tools"})).await;
    check_server_request(rev, &ask, "sampling/createMessage");
    assert_eq!(
        ask["params"]["tools"],
        sampling_with_tools()["tools"],
        "{ask}"
    );
    assert_eq!(
        ask["params"]["toolChoice"],
        json!({"mode": "auto"}),
        "{ask}"
    );
    p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer("sample_tools")}))
        .await;
    let r = p.recv().await;
    assert_eq!(r["id"], 2, "{r}");
    assert_eq!(reported(&r), json!({"answer": answer("sample_tools")}));
}

// ───────────────────────────── 2026-07-28 ─────────────────────────────

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// Params of a modern `tools/call` (or `prompts/get`) with optional state and responses.
fn modern_params(
    caps: &Value,
    name: &str,
    args: Option<Value>,
    state: Option<&str>,
    responses: Option<Value>,
) -> Value {
    let mut p = json!({"_meta": meta(caps.clone()), "name": name});
    if let Some(a) = args {
        p["arguments"] = a;
    }
    if let Some(s) = state {
        p["requestState"] = json!(s);
    }
    if let Some(r) = responses {
        p["inputResponses"] = r;
    }
    p
}

/// A modern `tools/call`; checks the response is exact for 2026-07-28.
async fn modern_call(p: &mut Stdio, id: i64, params: Value) -> Value {
    let (before, r) = p.exchange(json!(id), "tools/call", params).await;
    assert!(
        before.is_empty(),
        "nothing but the answer is sent: {before:?}"
    );
    check_modern_response(&r, "CallToolResultResponse");
    r
}

fn check_modern_response(r: &Value, response_def: &str) {
    if let Some(result) = r.get("result") {
        assert_schema_exact(MODERN, "JSONRPCResultResponse", r);
        assert_schema_exact(MODERN, response_def, r);
        if result["resultType"] == "input_required" {
            assert_schema_exact(MODERN, "InputRequiredResult", result);
            for (key, ask) in result["inputRequests"].as_object().expect("inputRequests") {
                assert!(!key.is_empty());
                assert_schema_exact(MODERN, "InputRequest", ask);
            }
        }
    } else {
        assert_schema_exact(MODERN, "JSONRPCErrorResponse", r);
        match code(r) {
            -32602 => assert_schema_exact(MODERN, "InvalidParamsError", &r["error"]),
            -32021 => assert_schema_exact(MODERN, "MissingRequiredClientCapabilityError", r),
            _ => {}
        }
    }
}

/// An `input_required` result: its `inputRequests` and `requestState`.
fn input_required(r: &Value) -> (serde_json::Map<String, Value>, String) {
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    assert!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object(),
        "{r}"
    );
    let requests = result["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("inputRequests: {r}"))
        .clone();
    let state = result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("requestState: {r}"))
        .to_owned();
    (requests, state)
}

fn complete(r: &Value) -> Value {
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(r["result"].get("inputRequests").is_none(), "{r}");
    assert!(r["result"].get("requestState").is_none(), "{r}");
    reported(r)
}

/// A retry may reach another replica: a state signed by one server verifies on another
/// with the same key, and on one whose previous key it is (rotation); not on one with a
/// different key, nor on one with the default (per-process random) key.
#[tokio::test]
async fn modern_retry_verifies_on_a_replica_sharing_the_state_key() {
    const OLD: &[u8] = b"the key every replica shared until the rotation";
    const NEW: &[u8] = b"the key every replica signs with after the rotation";
    async fn first(p: &mut Stdio) -> String {
        let caps = all_caps(MODERN);
        let params = modern_params(&caps, "ask", Some(json!({"what": "elicit"})), None, None);
        input_required(&modern_call(p, 1, params).await).1
    }
    fn retry(state: &str) -> Value {
        modern_params(
            &all_caps(MODERN),
            "ask",
            Some(json!({"what": "elicit"})),
            Some(state),
            Some(json!({"input-1": answer("elicit")})),
        )
    }
    let mut a = Stdio::serve(asking_server_keyed(Some((OLD, None))).0);
    let state = first(&mut a).await;
    let mut b = Stdio::serve(asking_server_keyed(Some((OLD, None))).0);
    complete(&modern_call(&mut b, 2, retry(&state)).await);
    let mut rotated = Stdio::serve(asking_server_keyed(Some((NEW, Some(OLD)))).0);
    complete(&modern_call(&mut rotated, 2, retry(&state)).await);
    let mut other = Stdio::serve(asking_server_keyed(Some((NEW, None))).0);
    let r = modern_call(&mut other, 2, retry(&state)).await;
    assert_eq!(code(&r), -32602, "{r}");
    let mut default = Stdio::serve(asking_server().0);
    let r = modern_call(&mut default, 2, retry(&state)).await;
    assert_eq!(code(&r), -32602, "{r}");
    // After the rotation the new key signs, and a replica not rotated yet refuses it.
    let state = first(&mut rotated).await;
    let r = modern_call(&mut a, 3, retry(&state)).await;
    assert_eq!(code(&r), -32602, "{r}");
    complete(&modern_call(&mut other, 3, retry(&state)).await);
}

#[tokio::test]
async fn modern_first_pass_is_input_required_and_the_retry_completes() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    let mut id = 0;
    for what in whats(MODERN) {
        let args = json!({"what": what});
        id += 1;
        let r = modern_call(
            &mut p,
            id,
            modern_params(&caps, "ask", Some(args.clone()), None, None),
        )
        .await;
        let (requests, state) = input_required(&r);
        let (method, params) = expected(what);
        assert_eq!(
            Value::Object(requests.clone()),
            json!({"input-1": {"method": method, "params": params}}),
            "{what}: {r}"
        );
        assert!(!state.is_empty(), "{what}");
        // The retry with the answer (and the echoed state) completes.
        id += 1;
        let responses = json!({"input-1": answer(what)});
        let r = modern_call(
            &mut p,
            id,
            modern_params(
                &caps,
                "ask",
                Some(args.clone()),
                Some(&state),
                Some(responses.clone()),
            ),
        )
        .await;
        assert_eq!(complete(&r), json!({"answer": answer(what)}), "{what}: {r}");
        // So does a retry without the state (nothing was answered before it).
        id += 1;
        let r = modern_call(
            &mut p,
            id,
            modern_params(&caps, "ask", Some(args), None, Some(responses)),
        )
        .await;
        assert_eq!(complete(&r), json!({"answer": answer(what)}), "{what}: {r}");
    }
}

#[tokio::test]
async fn modern_answers_of_the_wrong_shape_are_invalid_params() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    let cases = [
        ("elicit", json!({"action": "maybe"})),
        ("elicit", json!({"content": {"name": "Ada"}})),
        ("elicit", answer("roots")),
        ("elicit", json!("accept")),
        ("sample", json!({"role": "assistant", "model": "m"})),
        (
            "sample",
            json!({"role": "robot", "content": {"type": "text", "text": "x"}, "model": "m"}),
        ),
        ("sample", answer("elicit")),
        ("roots", json!({"roots": "not a list"})),
        ("roots", json!({"roots": [{"name": "no uri"}]})),
        ("roots", json!(null)),
        ("roots", answer("sample")),
    ];
    for (n, (what, bad)) in cases.into_iter().enumerate() {
        let args = json!({"what": what});
        let r = modern_call(
            &mut p,
            2 * n as i64,
            modern_params(&caps, "ask", Some(args.clone()), None, None),
        )
        .await;
        let (_, state) = input_required(&r);
        let r = modern_call(
            &mut p,
            2 * n as i64 + 1,
            modern_params(
                &caps,
                "ask",
                Some(args),
                Some(&state),
                Some(json!({"input-1": bad})),
            ),
        )
        .await;
        assert_eq!(code(&r), -32602, "{what} answered {bad}: {r}");
    }
}

#[tokio::test]
async fn modern_unknown_response_keys_are_ignored_and_a_missing_one_is_asked_again() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    // Extra keys beside the right one.
    let args = json!({"what": "elicit"});
    let r = modern_call(
        &mut p,
        1,
        modern_params(&caps, "ask", Some(args.clone()), None, None),
    )
    .await;
    let (_, state) = input_required(&r);
    // (Every value of `inputResponses` must be an `InputResponse` by the schema, so the
    // extra ones are valid answers to something, just not to anything asked.)
    let responses = json!({"input-1": answer("elicit"), "input-2": answer("roots"), "something-else": answer("sample")});
    let r = modern_call(
        &mut p,
        2,
        modern_params(
            &caps,
            "ask",
            Some(args.clone()),
            Some(&state),
            Some(responses),
        ),
    )
    .await;
    assert_eq!(complete(&r), json!({"answer": answer("elicit")}), "{r}");
    // An extra value that is no `InputResponse` at all fails the params' own type.
    let responses = json!({"input-1": answer("elicit"), "junk": {"junk": true}});
    let r = modern_call(
        &mut p,
        7,
        modern_params(&caps, "ask", Some(args), Some(&state), Some(responses)),
    )
    .await;
    assert_eq!(code(&r), -32602, "{r}");

    // Two keyed asks in one round.
    let r = modern_call(
        &mut p,
        3,
        modern_params(&caps, "ask_keyed", Some(json!({})), None, None),
    )
    .await;
    let (requests, state1) = input_required(&r);
    assert_eq!(
        Value::Object(requests),
        json!({
            "reply": {"method": "sampling/createMessage", "params": sampling_params()},
            "where": {"method": "roots/list", "params": {}},
        }),
        "{r}"
    );
    // Only unknown keys: asked again, the same two.
    let r = modern_call(
        &mut p,
        4,
        modern_params(
            &caps,
            "ask_keyed",
            Some(json!({})),
            Some(&state1),
            Some(json!({"input-1": answer("sample")})),
        ),
    )
    .await;
    let (requests, _) = input_required(&r);
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["reply", "where"],
        "{r}"
    );
    // One of two: asked again for the other only.
    let r = modern_call(
        &mut p,
        5,
        modern_params(
            &caps,
            "ask_keyed",
            Some(json!({})),
            Some(&state1),
            Some(json!({"reply": answer("sample")})),
        ),
    )
    .await;
    let (requests, state2) = input_required(&r);
    assert_eq!(
        Value::Object(requests),
        json!({"where": {"method": "roots/list", "params": {}}}),
        "{r}"
    );
    assert_ne!(state1, state2, "the new state carries the answer given");
    // The other one with the new state: complete, the first answer taken from the state.
    let r = modern_call(
        &mut p,
        6,
        modern_params(
            &caps,
            "ask_keyed",
            Some(json!({})),
            Some(&state2),
            Some(json!({"where": answer("roots")})),
        ),
    )
    .await;
    assert_eq!(
        complete(&r),
        json!({"reply": answer("sample"), "where": answer("roots")}),
        "{r}"
    );
}

/// The two states of `ask_twice`'s rounds: (state after round 1, state after round 2).
async fn two_rounds(p: &mut Stdio, caps: &Value, first_id: i64) -> (String, String) {
    let r = modern_call(
        p,
        first_id,
        modern_params(caps, "ask_twice", Some(json!({})), None, None),
    )
    .await;
    let (requests, state1) = input_required(&r);
    assert_eq!(
        Value::Object(requests),
        json!({"input-1": {"method": "elicitation/create", "params": expected("elicit").1}}),
        "{r}"
    );
    let r = modern_call(
        p,
        first_id + 1,
        modern_params(
            caps,
            "ask_twice",
            Some(json!({})),
            Some(&state1),
            Some(json!({"input-1": answer("elicit")})),
        ),
    )
    .await;
    let (requests, state2) = input_required(&r);
    assert_eq!(
        Value::Object(requests),
        json!({"input-2": {"method": "roots/list", "params": {}}}),
        "{r}"
    );
    (state1, state2)
}

/// A call without `arguments` binds its state to no arguments — the retry, also without
/// them, is the same request (not one with `{}`, which the handler also sees).
#[tokio::test]
async fn modern_state_of_a_call_without_arguments_verifies_on_its_retry() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    let r = modern_call(
        &mut p,
        1,
        modern_params(&caps, "ask_twice", None, None, None),
    )
    .await;
    let (_, state) = input_required(&r);
    let r = modern_call(
        &mut p,
        2,
        modern_params(
            &caps,
            "ask_twice",
            None,
            Some(&state),
            Some(json!({"input-1": answer("elicit")})),
        ),
    )
    .await;
    let (requests, _) = input_required(&r);
    assert_eq!(
        Value::Object(requests),
        json!({"input-2": {"method": "roots/list", "params": {}}}),
        "{r}"
    );
}

#[tokio::test]
async fn modern_asking_twice_takes_two_retries_with_distinct_states() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    let (state1, state2) = two_rounds(&mut p, &caps, 1).await;
    assert_ne!(state1, state2);
    // Only the second answer is sent: the first comes from the state.
    let r = modern_call(
        &mut p,
        3,
        modern_params(
            &caps,
            "ask_twice",
            Some(json!({})),
            Some(&state2),
            Some(json!({"input-2": answer("roots")})),
        ),
    )
    .await;
    assert_eq!(
        complete(&r),
        json!({"name": answer("elicit"), "roots": answer("roots")}),
        "{r}"
    );
    // Both answers at once, without any state: complete in one retry.
    let r = modern_call(
        &mut p,
        4,
        modern_params(
            &caps,
            "ask_twice",
            Some(json!({})),
            None,
            Some(json!({"input-1": answer("elicit"), "input-2": answer("roots")})),
        ),
    )
    .await;
    assert_eq!(
        complete(&r),
        json!({"name": answer("elicit"), "roots": answer("roots")}),
        "{r}"
    );
    // The second state without the second answer: asked again for it only.
    let r = modern_call(
        &mut p,
        5,
        modern_params(&caps, "ask_twice", Some(json!({})), Some(&state2), None),
    )
    .await;
    let (requests, _) = input_required(&r);
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["input-2"], "{r}");
}

#[tokio::test]
async fn modern_tampered_states_are_invalid_params() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    let (_, state2) = two_rounds(&mut p, &caps, 1).await;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (payload, tag) = state2.split_once('.').expect("payload.tag");
    // The payload re-written with another answer, the tag kept.
    let decoded =
        String::from_utf8(engine.decode(payload).expect("base64 payload")).expect("utf-8");
    assert!(decoded.contains("Ada"), "{decoded}");
    let forged_payload = engine.encode(decoded.replace("Ada", "Eve"));
    let mut flipped_tag = engine.decode(tag).expect("base64 tag");
    flipped_tag[0] ^= 1;
    let bad_states = [
        json!(format!("{forged_payload}.{tag}")),
        json!(format!("{payload}.{}", engine.encode(flipped_tag))),
        json!(format!("{state2}x")),
        json!(format!("x{state2}")),
        json!(payload),
        json!("not-a-state"),
        json!(""),
        json!(42),
    ];
    for (n, bad) in bad_states.into_iter().enumerate() {
        let mut params = modern_params(
            &caps,
            "ask_twice",
            Some(json!({})),
            None,
            Some(json!({"input-2": answer("roots")})),
        );
        params["requestState"] = bad.clone();
        let r = modern_call(&mut p, 10 + n as i64, params).await;
        assert_eq!(code(&r), -32602, "state {bad}: {r}");
    }
}

#[tokio::test]
async fn modern_states_are_bound_to_the_method_target_and_arguments() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    // A state carrying an answer, from `ask_twice` with `{}`.
    let (state1, state2) = two_rounds(&mut p, &caps, 1).await;
    let roots = json!({"input-1": answer("elicit"), "input-2": answer("roots")});
    // Another tool with the same arguments.
    for (n, state) in [&state1, &state2].into_iter().enumerate() {
        let r = modern_call(
            &mut p,
            10 + n as i64,
            modern_params(
                &caps,
                "greet",
                Some(json!({})),
                Some(state),
                Some(roots.clone()),
            ),
        )
        .await;
        assert_eq!(code(&r), -32602, "ask_twice's state on greet: {r}");
    }
    // The same tool with other arguments (or with arguments where there were none).
    for (n, args) in [json!({"x": 1}), json!({"what": "elicit"})]
        .into_iter()
        .enumerate()
    {
        let r = modern_call(
            &mut p,
            20 + n as i64,
            modern_params(
                &caps,
                "ask_twice",
                Some(args.clone()),
                Some(&state2),
                Some(roots.clone()),
            ),
        )
        .await;
        assert_eq!(
            code(&r),
            -32602,
            "ask_twice's state with arguments {args}: {r}"
        );
    }
    // A state of `ask {"what": "elicit"}` replayed with other arguments.
    let args = json!({"what": "elicit", "n": 1});
    let r = modern_call(
        &mut p,
        30,
        modern_params(&caps, "ask", Some(args), None, None),
    )
    .await;
    let (_, state) = input_required(&r);
    for (n, other) in [
        json!({"what": "elicit", "n": 2}),
        json!({"what": "elicit"}),
        json!({"what": "roots", "n": 1}),
    ]
    .into_iter()
    .enumerate()
    {
        let r = modern_call(
            &mut p,
            31 + n as i64,
            modern_params(
                &caps,
                "ask",
                Some(other.clone()),
                Some(&state),
                Some(json!({"input-1": answer("elicit")})),
            ),
        )
        .await;
        assert_eq!(
            code(&r),
            -32602,
            "state of {{what: elicit, n: 1}} with {other}: {r}"
        );
    }
    // The same name through another method: the state of tools/call `greet` on
    // prompts/get `greet`.
    let r = modern_call(
        &mut p,
        40,
        modern_params(&caps, "greet", Some(json!({})), None, None),
    )
    .await;
    let (_, state) = input_required(&r);
    let (before, r) = p
        .exchange(
            json!(41),
            "prompts/get",
            modern_params(
                &caps,
                "greet",
                Some(json!({})),
                Some(&state),
                Some(json!({"input-1": answer("elicit")})),
            ),
        )
        .await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(code(&r), -32602, "tools/call's state on prompts/get: {r}");
    // The right request still completes with it.
    let r = modern_call(
        &mut p,
        42,
        modern_params(
            &caps,
            "greet",
            Some(json!({})),
            Some(&state),
            Some(json!({"input-1": answer("elicit")})),
        ),
    )
    .await;
    assert_eq!(complete(&r), json!({"answer": answer("elicit")}), "{r}");
}

/// JSON objects are unordered (RFC 8259): the same arguments written with their keys in
/// another order are the same arguments, and the state must still be accepted.
#[tokio::test]
async fn modern_state_binding_ignores_the_order_of_argument_keys() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    let first: Value = serde_json::from_str(r#"{"what": "elicit", "n": 1}"#).expect("json");
    let reordered: Value = serde_json::from_str(r#"{"n": 1, "what": "elicit"}"#).expect("json");
    assert_eq!(first, reordered);
    let r = modern_call(
        &mut p,
        1,
        modern_params(&caps, "ask", Some(first), None, None),
    )
    .await;
    let (_, state) = input_required(&r);
    let r = modern_call(
        &mut p,
        2,
        modern_params(
            &caps,
            "ask",
            Some(reordered),
            Some(&state),
            Some(json!({"input-1": answer("elicit")})),
        ),
    )
    .await;
    assert_eq!(
        r["result"]["resultType"], "complete",
        "same arguments, keys in another order: {r}"
    );
}

#[tokio::test]
async fn modern_prompts_that_ask_round_trip_the_same_way() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    let get = |id: i64, state: Option<&str>, responses: Option<Value>| {
        let params = modern_params(&caps, "greet", None, state, responses);
        (json!(id), params)
    };
    let (id, params) = get(1, None, None);
    let (before, r) = p.exchange(id, "prompts/get", params).await;
    assert!(before.is_empty(), "{before:?}");
    check_modern_response(&r, "GetPromptResultResponse");
    let (requests, state) = input_required(&r);
    assert_eq!(
        Value::Object(requests),
        json!({"input-1": {"method": "elicitation/create", "params": expected("elicit").1}}),
        "{r}"
    );
    let (id, params) = get(2, Some(&state), Some(json!({"input-1": answer("elicit")})));
    let r = p.request(id, "prompts/get", params).await;
    check_modern_response(&r, "GetPromptResultResponse");
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"], "Hello, Ada",
        "{r}"
    );
    assert_schema_exact(MODERN, "GetPromptResult", &r["result"]);
    // Wrong shape, tampered state: -32602.
    let (id, params) = get(
        3,
        Some(&state),
        Some(json!({"input-1": {"action": "nope"}})),
    );
    let r = p.request(id, "prompts/get", params).await;
    check_modern_response(&r, "GetPromptResultResponse");
    assert_eq!(code(&r), -32602, "{r}");
    let tampered = format!("{state}A");
    let (id, params) = get(
        4,
        Some(&tampered),
        Some(json!({"input-1": answer("elicit")})),
    );
    let r = p.request(id, "prompts/get", params).await;
    assert_eq!(code(&r), -32602, "{r}");
    // Without elicitation declared: -32021, never input_required.
    let params = modern_params(&json!({"sampling": {}}), "greet", None, None, None);
    let r = p.request(json!(5), "prompts/get", params).await;
    check_modern_response(&r, "GetPromptResultResponse");
    assert_eq!(code(&r), -32021, "{r}");
}

#[tokio::test]
async fn modern_lists_never_return_input_required() {
    let (server, _) = asking_server();
    let mut p = Stdio::serve(server);
    let caps = all_caps(MODERN);
    for (n, method) in ["tools/list", "prompts/list"].into_iter().enumerate() {
        for (m, extra) in [
            json!({}),
            json!({"inputResponses": {"input-1": answer("elicit")}}),
        ]
        .into_iter()
        .enumerate()
        {
            let mut params = json!({"_meta": meta(caps.clone())});
            for (k, v) in extra.as_object().expect("object") {
                params[k] = v.clone();
            }
            let (before, r) = p.exchange(json!(10 * n + m), method, params).await;
            assert!(before.is_empty(), "{method}: {before:?}");
            assert_eq!(r["result"]["resultType"], "complete", "{method}: {r}");
            assert!(r["result"].get("inputRequests").is_none(), "{method}: {r}");
            assert!(r["result"].get("requestState").is_none(), "{method}: {r}");
        }
    }
}

#[tokio::test]
async fn modern_undeclared_capabilities_are_32021_never_input_required() {
    let (server, seen) = asking_server();
    let mut p = Stdio::serve(server);
    let none = json!({});
    let mut id = 0;
    for what in ["elicit", "sample", "roots", "sample_tools"] {
        id += 1;
        let r = modern_call(
            &mut p,
            id,
            modern_params(&none, "ask", Some(json!({"what": what})), None, None),
        )
        .await;
        assert_eq!(code(&r), -32021, "{what}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"],
            json!({capability(what): {}}),
            "{what}: {r}"
        );
        assert_eq!(
            seen.lock().unwrap().pop().expect("handler error")["code"],
            -32021
        );
    }
    // sampling without sampling.tools, for an ask that offers tools.
    id += 1;
    let r = modern_call(
        &mut p,
        id,
        modern_params(
            &json!({"sampling": {}}),
            "ask",
            Some(json!({"what": "sample_tools"})),
            None,
            None,
        ),
    )
    .await;
    assert_eq!(code(&r), -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {"tools": {}}}),
        "{r}"
    );
    // One declared, one not, in the same round: -32021, not input_required for either.
    id += 1;
    let r = modern_call(
        &mut p,
        id,
        modern_params(
            &json!({"sampling": {}}),
            "ask_keyed",
            Some(json!({})),
            None,
            None,
        ),
    )
    .await;
    assert_eq!(code(&r), -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"roots": {}}),
        "{r}"
    );
    // Undeclared in the second round.
    let caps = json!({"elicitation": {}});
    id += 1;
    let r = modern_call(
        &mut p,
        id,
        modern_params(&caps, "ask_twice", Some(json!({})), None, None),
    )
    .await;
    let (_, state) = input_required(&r);
    id += 1;
    let r = modern_call(
        &mut p,
        id,
        modern_params(
            &caps,
            "ask_twice",
            Some(json!({})),
            Some(&state),
            Some(json!({"input-1": answer("elicit")})),
        ),
    )
    .await;
    assert_eq!(code(&r), -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"roots": {}}),
        "{r}"
    );
    // A capability given as null is not declared.
    id += 1;
    let r = modern_call(
        &mut p,
        id,
        modern_params(
            &json!({"roots": null}),
            "ask",
            Some(json!({"what": "roots"})),
            None,
            None,
        ),
    )
    .await;
    assert_eq!(code(&r), -32021, "{r}");
}

/// A typed tool's arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Trip {
    city: String,
    days: Option<u8>,
}

/// A server with one typed tool that asks the client's name before answering.
fn typed_asking_server() -> Server {
    Server::builder(Implementation::new("typed-asks", "1.0.0"))
        .typed_tool::<Trip, _, _>(Tool::new("trip", "trip"), |trip, ctx| async move {
            let name = ask_one(&ctx, elicit_name()).await?;
            Ok::<_, mcp_runtime::ToolError>(ToolResult::text(format!(
                "{} for {} days, {}",
                trip.city,
                trip.days.unwrap_or(1),
                name["content"]["name"].as_str().unwrap_or("?")
            )))
        })
        .build()
}

/// A 2026-07-28 typed tool reads its arguments in place (they are kept, not copied, for
/// the `requestState` binding): the state is bound to them as sent, and bad arguments
/// are refused with the same error as in a legacy session (where they are taken apart).
#[tokio::test]
async fn modern_typed_tools_bind_their_state_to_the_arguments_and_refuse_bad_ones_as_legacy_does() {
    let mut p = Stdio::serve(typed_asking_server());
    let caps = all_caps(MODERN);
    let args = json!({"city": "Oslo", "days": 3});
    let r = modern_call(
        &mut p,
        1,
        modern_params(&caps, "trip", Some(args.clone()), None, None),
    )
    .await;
    let (requests, state) = input_required(&r);
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["input-1"], "{r}");
    let responses = json!({"input-1": answer("elicit")});
    let r = modern_call(
        &mut p,
        2,
        modern_params(
            &caps,
            "trip",
            Some(args),
            Some(&state),
            Some(responses.clone()),
        ),
    )
    .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "Oslo for 3 days, Ada",
        "{r}"
    );
    // The state is bound to the arguments it was given with.
    let r = modern_call(
        &mut p,
        3,
        modern_params(
            &caps,
            "trip",
            Some(json!({"city": "Bergen", "days": 3})),
            Some(&state),
            Some(responses),
        ),
    )
    .await;
    assert_eq!(code(&r), -32602, "{r}");

    // Bad or absent arguments: the same error in both eras.
    let mut legacy = Stdio::serve(typed_asking_server());
    legacy
        .initialize("2025-11-25", all_caps("2025-11-25"))
        .await;
    let bad = [
        Some(json!({"days": 3})),
        Some(json!({"city": 5})),
        Some(json!({"city": "Oslo", "days": "x"})),
        Some(json!({"city": "Oslo", "days": 300})),
        Some(json!([])),
        None,
    ];
    for (n, arguments) in bad.into_iter().enumerate() {
        let id = 10 + n as i64;
        let modern = modern_call(
            &mut p,
            id,
            modern_params(&caps, "trip", arguments.clone(), None, None),
        )
        .await;
        let mut params = json!({"name": "trip"});
        if let Some(a) = &arguments {
            params["arguments"] = a.clone();
        }
        let old = legacy.request(json!(id), "tools/call", params).await;
        assert_eq!(modern["error"], old["error"], "arguments {arguments:?}");
        assert!(modern["error"].is_object(), "{modern}");
    }
}
