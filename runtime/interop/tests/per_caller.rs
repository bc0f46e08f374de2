//! Per-caller tools and cache hints (issue 31, point 4), in process over stdio: tools,
//! prompts and resources disabled and enabled at run time (announced where the revision
//! can, answered as unknown while disabled), the author's predicate on the `Context`
//! (revision, session) hiding items from lists and calls, and the 2026-07-28 cache hints
//! (defaults that cannot serve a stale list, the author's per list and per resource,
//! `private` whenever a list may differ per caller). Per-caller lists by the token's
//! scopes are in `auth.rs`.

mod kit;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kit::stdio::Stdio;
use kit::{code, modern_meta};
use mcp_runtime::model::{Implementation, Prompt, Resource, ResourceTemplate, Tool, ToolResult};
use mcp_runtime::{CacheHint, ListKind, Listing, Server, ServerBuilder};
use serde_json::{json, Value};

fn builder() -> ServerBuilder {
    Server::builder(Implementation::new("per-caller", "1"))
        .tool(Tool::new("open", "For everyone"), |_, _| async {
            Ok(ToolResult::text("open"))
        })
        .tool(Tool::new("admin", "Sometimes hidden"), |_, _| async {
            Ok(ToolResult::text("admin"))
        })
        .prompt(Prompt::new("greet"), |_, _| async { Ok("hello") })
        .resource(Resource::new("test://live", "live"), |_, _| async {
            Ok("now")
        })
        .resource(Resource::new("test://static", "static"), |_, _| async {
            Ok("always")
        })
        .resource_template(
            ResourceTemplate::new("test://item/{id}", "item"),
            |uri, _, _| async move { Ok(uri) },
        )
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list["result"][key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}: {list}"))
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_owned())
        .collect()
}

fn modern(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = modern_meta(json!({}));
    params
}

#[tokio::test]
async fn disabled_items_are_unlisted_unknown_and_announced() {
    let server = builder().build();
    let mut p = Stdio::serve(server.clone());
    p.open("2025-06-18", json!({})).await;
    assert_eq!(
        names(&p.request(1, "tools/list", json!({})).await, "tools"),
        ["open", "admin"]
    );

    assert!(server.disable_tool("admin"));
    assert!(!server.disable_tool("admin"), "already disabled: no change");
    assert!(!server.disable_tool("nope"));
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(
        names(&p.request(2, "tools/list", json!({})).await, "tools"),
        ["open"]
    );
    let r = p
        .request(3, "tools/call", json!({"name": "admin", "arguments": {}}))
        .await;
    assert_eq!(code(&r), -32602, "{r}");
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Unknown tool"));
    // 2026-07-28 on the same server: the same list, the same refusal.
    let l = p.request(4, "tools/list", modern(json!({}))).await;
    assert_eq!(names(&l, "tools"), ["open"]);
    let r = p
        .request(5, "tools/call", modern(json!({"name": "admin"})))
        .await;
    assert_eq!(code(&r), -32602, "{r}");

    assert!(server.enable_tool("admin"));
    assert_eq!(p.recv().await["method"], "notifications/tools/list_changed");
    assert_eq!(
        names(&p.request(6, "tools/list", json!({})).await, "tools"),
        ["open", "admin"]
    );
    let r = p
        .request(7, "tools/call", json!({"name": "admin", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "admin", "{r}");

    // Prompts and resources (a resource by URI, a template by its uriTemplate).
    assert!(server.disable_prompt("greet"));
    assert_eq!(
        p.recv().await["method"],
        "notifications/prompts/list_changed"
    );
    assert!(names(&p.request(8, "prompts/list", json!({})).await, "prompts").is_empty());
    let r = p.request(9, "prompts/get", json!({"name": "greet"})).await;
    assert_eq!(code(&r), -32602, "{r}");
    assert!(server.disable_resource("test://live"));
    assert_eq!(
        p.recv().await["method"],
        "notifications/resources/list_changed"
    );
    assert!(server.disable_resource("test://item/{id}"));
    assert_eq!(
        p.recv().await["method"],
        "notifications/resources/list_changed"
    );
    let l = p.request(10, "resources/list", json!({})).await;
    assert_eq!(names(&l, "resources"), ["static"]);
    let l = p.request(11, "resources/templates/list", json!({})).await;
    assert!(names(&l, "resourceTemplates").is_empty(), "{l}");
    for (id, uri) in [(12, "test://live"), (13, "test://item/7")] {
        let r = p.request(id, "resources/read", json!({"uri": uri})).await;
        assert_eq!(code(&r), -32002, "{uri}: {r}");
    }
    let r = p
        .request(14, "resources/subscribe", json!({"uri": "test://live"}))
        .await;
    assert!(
        r.get("error").is_some(),
        "a disabled resource is not subscribable: {r}"
    );
    assert!(server.enable_resource("test://item/{id}"));
    assert_eq!(
        p.recv().await["method"],
        "notifications/resources/list_changed"
    );
    let r = p
        .request(15, "resources/read", json!({"uri": "test://item/7"}))
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "test://item/7", "{r}");
    p.finish().await;
}

#[tokio::test]
async fn the_authors_predicate_hides_per_revision_and_per_session() {
    // `admin` only for 2026-07-28 requests; `greet` only for the first session that asks.
    let first_session: Arc<Mutex<Option<String>>> = Arc::default();
    let seen = Arc::clone(&first_session);
    let server = builder()
        .visible_if(move |item, ctx| match item {
            Listing::Tool(t) if t.name == "admin" => ctx.version().as_str() == "2026-07-28",
            Listing::Prompt(_) => match ctx.session() {
                None => false,
                Some(session) => {
                    let mut first = seen.lock().unwrap();
                    first.get_or_insert_with(|| session.to_owned()) == session
                }
            },
            _ => true,
        })
        .build();
    let mut a = Stdio::serve(server.clone());
    a.open("2025-11-25", json!({})).await;
    assert_eq!(
        names(&a.request(1, "tools/list", json!({})).await, "tools"),
        ["open"]
    );
    let r = a
        .request(2, "tools/call", json!({"name": "admin", "arguments": {}}))
        .await;
    assert_eq!(code(&r), -32602, "hidden is uncallable: {r}");
    let l = a.request(3, "tools/list", modern(json!({}))).await;
    assert_eq!(names(&l, "tools"), ["open", "admin"]);
    assert_eq!(
        l["result"]["cacheScope"], "private",
        "filtered per caller: {l}"
    );
    let r = a
        .request(4, "tools/call", modern(json!({"name": "admin"})))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "admin", "{r}");

    // Sessions: the first sees the prompt on every request, a second never.
    for id in 5..7 {
        assert_eq!(
            names(&a.request(id, "prompts/list", json!({})).await, "prompts"),
            ["greet"]
        );
    }
    let mut b = Stdio::serve(server.clone());
    b.open("2025-11-25", json!({})).await;
    assert!(names(&b.request(1, "prompts/list", json!({})).await, "prompts").is_empty());
    let r = b.request(2, "prompts/get", json!({"name": "greet"})).await;
    assert_eq!(code(&r), -32602, "{r}");
    let r = a.request(7, "prompts/get", json!({"name": "greet"})).await;
    assert!(r.get("result").is_some(), "{r}");
    // A modern request has no session.
    let l = a.request(8, "prompts/list", modern(json!({}))).await;
    assert!(names(&l, "prompts").is_empty(), "{l}");
    a.finish().await;
    b.finish().await;
}

#[tokio::test]
async fn cache_hints_default_to_fresh_and_are_the_authors() {
    // Defaults: lists `ttlMs: 0` and public, reads 0 and private; a list changed by
    // `add_tool` is served changed at once.
    let server = builder().build();
    let mut p = Stdio::serve(server.clone());
    let l = p.request(1, "tools/list", modern(json!({}))).await;
    assert_eq!(
        (
            l["result"]["ttlMs"].clone(),
            l["result"]["cacheScope"].clone()
        ),
        (json!(0), json!("public")),
        "{l}"
    );
    server.add_tool(Tool::new("added", "new"), |_, _| async {
        Ok(ToolResult::text("new"))
    });
    let l = p.request(2, "tools/list", modern(json!({}))).await;
    assert_eq!(names(&l, "tools"), ["open", "admin", "added"]);
    let r = p
        .request(3, "resources/read", modern(json!({"uri": "test://live"})))
        .await;
    assert_eq!(
        (
            r["result"]["ttlMs"].clone(),
            r["result"]["cacheScope"].clone()
        ),
        (json!(0), json!("private")),
        "{r}"
    );
    p.finish().await;

    // The author's: per list, per resource, per template, and for every other read.
    let minute = Duration::from_secs(60);
    let server = builder()
        .list_cache_hint(ListKind::Tools, CacheHint::public(minute))
        .list_cache_hint(ListKind::Prompts, CacheHint::private(minute * 2))
        .resource_cache_hint("test://static", CacheHint::public(minute * 60))
        .resource_cache_hint(
            "test://item/{id}",
            CacheHint::private(Duration::from_millis(1500)),
        )
        .read_cache_hint(CacheHint::private(Duration::from_secs(1)))
        .build();
    let mut p = Stdio::serve(server);
    let hint = |v: &Value| {
        (
            v["result"]["ttlMs"].as_u64().unwrap(),
            v["result"]["cacheScope"].as_str().unwrap().to_owned(),
        )
    };
    assert_eq!(
        hint(&p.request(1, "tools/list", modern(json!({}))).await),
        (60_000, "public".into())
    );
    assert_eq!(
        hint(&p.request(2, "prompts/list", modern(json!({}))).await),
        (120_000, "private".into())
    );
    assert_eq!(
        hint(&p.request(3, "resources/list", modern(json!({}))).await),
        (0, "public".into())
    );
    let read = |uri: &str| modern(json!({"uri": uri}));
    assert_eq!(
        hint(&p.request(4, "resources/read", read("test://static")).await),
        (3_600_000, "public".into())
    );
    assert_eq!(
        hint(&p.request(5, "resources/read", read("test://item/9")).await),
        (1_500, "private".into())
    );
    assert_eq!(
        hint(&p.request(6, "resources/read", read("test://live")).await),
        (1_000, "private".into())
    );
    // Older revisions carry no hints.
    p.open("2025-11-25", json!({})).await;
    let l = p.request(7, "tools/list", json!({})).await;
    assert!(
        l["result"].get("ttlMs").is_none() && l["result"].get("cacheScope").is_none(),
        "{l}"
    );
    p.finish().await;

    // A public hint is not kept for a list that differs per caller.
    let server = builder()
        .list_cache_hint(ListKind::Tools, CacheHint::public(minute))
        .visible_if(|_, _| true)
        .build();
    let mut p = Stdio::serve(server);
    assert_eq!(
        hint(&p.request(1, "tools/list", modern(json!({}))).await),
        (60_000, "private".into())
    );
    p.finish().await;
}
