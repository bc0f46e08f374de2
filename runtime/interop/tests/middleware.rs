//! `ServerBuilder::middleware` (issue 32): the author's layer around every request the
//! server handles. Three layers an operator writes: an audit log (sees method, target,
//! revision, principal, `_meta`, and the outcome), a per-principal rate limit (answers on
//! its own with an error) and a cache (answers on its own with a result), in both eras;
//! and a gate over the session's bookkeeping (`initialize`, `logging/setLevel`,
//! `resources/subscribe`), whose refusals leave the session as it was.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_runtime::auth::Principal;
use mcp_runtime::middleware::{BoxFuture, Middleware, Next, Outcome, RequestInfo};
use mcp_runtime::model::{Implementation, LogLevel, Resource, ResourceContents, Tool, ToolResult};
use mcp_runtime::server::connection::{Connection, RequestOrigin};
use mcp_runtime::wire::{self, Outgoing};
use mcp_runtime::{ErrorCode, RpcError, Server, ToolError};
use serde_json::{json, Value};

mod kit;

use kit::stdio::Stdio;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One audited request.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    method: String,
    target: Option<String>,
    revision: String,
    principal: Option<String>,
    traceparent: Option<String>,
    error_code: Option<i64>,
    tool_error: bool,
}

/// The audit log: every request and how it ended.
#[derive(Clone, Default)]
struct Audit(Arc<Mutex<Vec<Entry>>>);

impl Middleware for Audit {
    fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let outcome = next.run(request).await;
            lock(&self.0).push(Entry {
                method: request.method().to_owned(),
                target: request.target().map(str::to_owned),
                revision: request.revision().as_str().to_owned(),
                principal: request.principal().map(Principal::identity),
                traceparent: request
                    .meta()
                    .and_then(|m| m.get("traceparent"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                error_code: outcome.error_code(),
                tool_error: outcome.is_tool_error(),
            });
            outcome
        })
    }
}

/// At most `limit` tool calls per principal (anonymous callers share one budget).
struct RateLimit {
    limit: usize,
    used: Mutex<HashMap<String, usize>>,
}

/// The error a limited caller gets.
const RATE_LIMITED: ErrorCode = ErrorCode(-32029);

impl Middleware for RateLimit {
    fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if request.method() == "tools/call" {
                let who = request
                    .principal()
                    .map_or_else(|| "anonymous".to_owned(), Principal::identity);
                let mut used = lock(&self.used);
                let count = used.entry(who).or_default();
                if *count >= self.limit {
                    return Outcome::error(RpcError::new(
                        RATE_LIMITED,
                        "Rate limit exceeded: try again later",
                    ));
                }
                *count += 1;
            }
            next.run(request).await
        })
    }
}

/// Tool results kept per (revision, tool): a second call is answered without the tool.
#[derive(Default)]
struct Cache(Mutex<HashMap<(String, String), Value>>);

impl Middleware for Cache {
    fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let key = match (request.method(), request.target()) {
                ("tools/call", Some(tool)) => {
                    (request.revision().as_str().to_owned(), tool.to_owned())
                }
                _ => return next.run(request).await,
            };
            if let Some(kept) = lock(&self.0).get(&key) {
                return Outcome::result(kept);
            }
            let outcome = next.run(request).await;
            if let Some(result) = outcome.result_json() {
                lock(&self.0).insert(key, result);
            }
            outcome
        })
    }
}

fn server_with(
    layers: impl FnOnce(mcp_runtime::ServerBuilder) -> mcp_runtime::ServerBuilder,
    calls: Arc<AtomicUsize>,
) -> Server {
    let builder = Server::builder(Implementation::new("middleware-test", "1.0.0"))
        .tool(Tool::new("hello", "Says hello"), move |_, _| {
            let calls = Arc::clone(&calls);
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>(ToolResult::text("hello"))
            }
        })
        .tool(Tool::new("broken", "Always fails"), |_, _| async {
            Ok::<_, ToolError>(ToolResult::error("it broke"))
        });
    layers(builder).build()
}

fn modern_params(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = kit::modern_meta(json!({}));
    params["_meta"]["traceparent"] =
        json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    params
}

#[tokio::test]
async fn the_audit_log_sees_every_handled_request_and_its_outcome() {
    let audit = Audit::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let layer = audit.clone();
    let mut peer = Stdio::serve(server_with(|b| b.middleware(layer), calls));
    // 2026-07-28, with a traceparent in `_meta`.
    let r = peer
        .request(
            1,
            "tools/call",
            modern_params(json!({"name": "hello", "arguments": {}})),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "hello", "{r}");
    // A 2025-11-25 session: initialize goes through the middleware too.
    let r = peer
        .request(2, "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
        .await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    peer.notify("notifications/initialized", None).await;
    let r = peer.request(3, "tools/list", None).await;
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(2),
        "{r}"
    );
    let r = peer
        .request(4, "tools/call", json!({"name": "broken", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = peer
        .request(5, "tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = peer.request(6, "ping", None).await;
    assert!(r["result"].is_object(), "{r}");

    let entry = |method: &str, target: Option<&str>, revision: &str| Entry {
        method: method.into(),
        target: target.map(str::to_owned),
        revision: revision.into(),
        principal: None,
        traceparent: None,
        error_code: None,
        tool_error: false,
    };
    let expected = vec![
        Entry {
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            ..entry("tools/call", Some("hello"), "2026-07-28")
        },
        entry("initialize", None, "2025-11-25"),
        entry("tools/list", None, "2025-11-25"),
        Entry {
            tool_error: true,
            ..entry("tools/call", Some("broken"), "2025-11-25")
        },
        Entry {
            error_code: Some(-32602),
            ..entry("tools/call", Some("nope"), "2025-11-25")
        },
        entry("ping", None, "2025-11-25"),
    ];
    assert_eq!(*audit.0.lock().unwrap(), expected);
}

/// Sends `message` on `conn` as `principal` and returns the answer.
async fn send_as(
    conn: &Arc<Connection>,
    principal: Option<&Arc<Principal>>,
    message: Value,
) -> Value {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Outgoing>(8);
    let frame = wire::parse_frame(message.to_string().as_bytes());
    let origin = RequestOrigin {
        principal: principal.cloned(),
        ..RequestOrigin::default()
    };
    conn.handle_parsed_as(frame, &tx, &origin).await;
    let answer = tokio::time::timeout(kit::patience::patience(), rx.recv())
        .await
        .expect("an answer in time")
        .expect("an answer");
    answer.to_value()
}

#[tokio::test]
async fn a_per_principal_rate_limit_answers_on_its_own() {
    let calls = Arc::new(AtomicUsize::new(0));
    let limit = RateLimit {
        limit: 2,
        used: Mutex::new(HashMap::new()),
    };
    let server = server_with(|b| b.middleware(limit), Arc::clone(&calls));
    let (out, _events) = tokio::sync::mpsc::channel(8);
    let alice = Arc::new(Principal::new("https://issuer.example").subject("alice"));
    let bob = Arc::new(Principal::new("https://issuer.example").subject("bob"));
    let call = |id: i64| {
        kit::request(
            id,
            "tools/call",
            modern_params(json!({"name": "hello", "arguments": {}})),
        )
    };
    for id in 1..=2 {
        let conn = Connection::stateless(server.clone(), out.clone());
        let r = send_as(&conn, Some(&alice), call(id)).await;
        assert_eq!(r["result"]["content"][0]["text"], "hello", "{r}");
    }
    let conn = Connection::stateless(server.clone(), out.clone());
    let r = send_as(&conn, Some(&alice), call(3)).await;
    assert_eq!(r["error"]["code"], RATE_LIMITED.0, "{r}");
    assert_eq!(
        r["error"]["message"],
        "Rate limit exceeded: try again later"
    );
    // The limited call never reached the tool; another principal has a budget of its own.
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let conn = Connection::stateless(server.clone(), out.clone());
    let r = send_as(&conn, Some(&bob), call(4)).await;
    assert_eq!(r["result"]["content"][0]["text"], "hello", "{r}");
    // Lists are not limited.
    let conn = Connection::stateless(server.clone(), out.clone());
    let r = send_as(
        &conn,
        Some(&alice),
        kit::request(5, "tools/list", modern_params(json!({}))),
    )
    .await;
    assert!(r["result"]["tools"].is_array(), "{r}");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_cache_answers_with_a_kept_result_and_layers_nest() {
    let calls = Arc::new(AtomicUsize::new(0));
    let audit = Audit::default();
    let layer = audit.clone();
    // The audit log outermost: it sees what the cache answered.
    let server = server_with(
        |b| b.middleware(layer).middleware(Cache::default()),
        Arc::clone(&calls),
    );
    let mut peer = Stdio::serve(server);
    for id in 1..=3 {
        let r = peer
            .request(
                id,
                "tools/call",
                modern_params(json!({"name": "hello", "arguments": {}})),
            )
            .await;
        assert_eq!(r["result"]["content"][0]["text"], "hello", "{r}");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the second and third calls came from the cache"
    );
    assert_eq!(audit.0.lock().unwrap().len(), 3);
}

/// Refuses the first `initialize`, a `logging/setLevel` whose `_meta` says `refuse`, and
/// a subscription to `mem://b`; records every method it sees.
#[derive(Clone, Default)]
struct Gate {
    seen: Arc<Mutex<Vec<String>>>,
    initializes: Arc<AtomicUsize>,
}

impl Middleware for Gate {
    fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            lock(&self.seen).push(request.method().to_owned());
            let refused = match request.method() {
                "initialize" => self.initializes.fetch_add(1, Ordering::SeqCst) == 0,
                "logging/setLevel" => request
                    .meta()
                    .and_then(|m| m.get("refuse"))
                    .is_some_and(|v| v == &json!(true)),
                "resources/subscribe" => request.target() == Some("mem://b"),
                _ => false,
            };
            if refused {
                return Outcome::error(RpcError::new(RATE_LIMITED, "refused by the gate"));
            }
            next.run(request).await
        })
    }
}

#[tokio::test]
async fn bookkeeping_goes_through_middleware_and_changes_the_session_only_when_passed_on() {
    let gate = Gate::default();
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&heard);
    let server = Server::builder(Implementation::new("gate-test", "1.0.0"))
        .tool(Tool::new("chatty", "Logs at info"), |_, ctx| async move {
            ctx.log(LogLevel::Info, None, json!("chatter")).await;
            Ok::<_, ToolError>(ToolResult::text("done"))
        })
        .resource(Resource::new("mem://a", "a"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "a")])
        })
        .resource(Resource::new("mem://b", "b"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "b")])
        })
        .on_resource_interest(move |uri, on| {
            if on {
                lock(&sink).push(uri.to_owned());
            }
        })
        .middleware(gate.clone())
        .build();
    let mut peer = Stdio::serve(server);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});

    // Refused: no session opened, so what follows is refused by admission (which no
    // middleware sees: it has no revision to report).
    let r = peer.request(1, "initialize", init.clone()).await;
    assert_eq!(r["error"]["code"], RATE_LIMITED.0, "{r}");
    let r = peer.request(2, "tools/list", None).await;
    assert_eq!(
        r["error"]["code"], -32600,
        "no session after a refused initialize: {r}"
    );
    // Passed on: the session opens.
    let r = peer.request(3, "initialize", init).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    peer.notify("notifications/initialized", None).await;

    // A refused level leaves the session's (everything) in place.
    let r = peer
        .request(
            4,
            "logging/setLevel",
            json!({"level": "error", "_meta": {"refuse": true}}),
        )
        .await;
    assert_eq!(r["error"]["code"], RATE_LIMITED.0, "{r}");
    let (before, r) = peer
        .exchange(5, "tools/call", json!({"name": "chatty", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "done", "{r}");
    assert!(
        before
            .iter()
            .any(|m| m["method"] == "notifications/message"),
        "the level was not changed: {before:?}"
    );
    // One passed on takes effect.
    let r = peer
        .request(6, "logging/setLevel", json!({"level": "error"}))
        .await;
    assert!(r["result"].is_object(), "{r}");
    let (before, r) = peer
        .exchange(7, "tools/call", json!({"name": "chatty", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "done", "{r}");
    assert!(
        before
            .iter()
            .all(|m| m["method"] != "notifications/message"),
        "info is below error: {before:?}"
    );

    // A refused subscription adds no interest; a passed one does.
    let r = peer
        .request(8, "resources/subscribe", json!({"uri": "mem://b"}))
        .await;
    assert_eq!(r["error"]["code"], RATE_LIMITED.0, "{r}");
    let r = peer
        .request(9, "resources/subscribe", json!({"uri": "mem://a"}))
        .await;
    assert!(r["result"].is_object(), "{r}");
    assert_eq!(*lock(&heard), vec!["mem://a".to_owned()]);

    let seen = lock(&gate.seen).clone();
    assert_eq!(
        seen,
        [
            "initialize",
            "initialize",
            "logging/setLevel",
            "tools/call",
            "logging/setLevel",
            "tools/call",
            "resources/subscribe",
            "resources/subscribe",
        ]
    );
}

/// Passes every request on, `initialize` only after `delay`.
struct SlowInitialize(std::time::Duration);

impl Middleware for SlowInitialize {
    fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if request.method() == "initialize" {
                tokio::time::sleep(self.0).await;
            }
            next.run(request).await
        })
    }
}

#[tokio::test]
async fn over_http_a_refused_initialize_opens_no_session_and_a_slow_one_still_answers_json() {
    let gate = Gate::default();
    let keep_alive = std::time::Duration::from_millis(50);
    let server = server_with(
        |b| {
            b.middleware(gate.clone())
                .middleware(SlowInitialize(keep_alive * 4))
        },
        Arc::new(AtomicUsize::new(0)),
    );
    let mut config = mcp_runtime_http::HttpConfig::default();
    config.keep_alive = Some(keep_alive);
    let http = kit::http::serve(server, config).await;
    let init = kit::request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let r = http.post(&[], &init).await;
    assert_eq!(r.json()["error"]["code"], RATE_LIMITED.0, "{}", r.body);
    assert_eq!(r.session, None, "a refused initialize opens no session");
    // Slower than the keep-alive period, after which other answers become streams: the
    // session id must still come with the answer.
    let r = http.post(&[], &init).await;
    assert!(r.content_type.starts_with("application/json"), "{r:?}");
    assert_eq!(
        r.json()["result"]["protocolVersion"],
        "2025-11-25",
        "{}",
        r.body
    );
    let session = r.session.expect("a session id");
    let r = http
        .post(
            &[("mcp-session-id", &session)],
            &kit::request(2, "tools/list", None),
        )
        .await;
    assert_eq!(
        r.messages()[0]["result"]["tools"].as_array().map(Vec::len),
        Some(2),
        "{}",
        r.body
    );
    assert_eq!(
        *lock(&gate.seen),
        ["initialize", "initialize", "tools/list"]
    );
}
