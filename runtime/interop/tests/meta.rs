//! `_meta` in both directions, in every revision: what an author sets on tools,
//! resources, templates, prompts, content blocks, contents and results reaches each
//! revision exactly where that revision's schema gives the object a `_meta` (asked of the
//! official schema, not written down here) and nowhere else, with every message exact
//! against the schema; a handler reads the request's `_meta` as sent (the trace context
//! untouched, `progressToken` still served by the runtime); the client reads back what
//! the server set.

mod kit;

use std::collections::BTreeSet;

use kit::stdio::Stdio;
use mcp_runtime::model::{
    Completion, Content, Implementation, Meta, Prompt, PromptMessage, PromptResult, Resource,
    ResourceContents, ResourceLink, ResourceTemplate, Tool, ToolResult,
};
use mcp_runtime::protocol::shape::{self, CacheHint};
use mcp_runtime::protocol::version::ProtocolVersion as V;
use mcp_runtime::{Context, Server, VersionSet};
use mcp_runtime_client::{Client, RequestOptions};
use serde_json::{json, Map, Value};

fn info() -> Implementation {
    Implementation::new("meta-test", "1.0.0")
}

/// An author's `_meta`: one prefixed key, one nested value.
fn author_meta(what: &str) -> Meta {
    let mut meta = Meta::new();
    meta.insert("com.example/what".into(), json!(what));
    meta.insert("com.example/nested".into(), json!({"a": [1, 2]}));
    meta
}

fn tool() -> Tool {
    Tool::new("t", "A tool").with_meta(author_meta("tool"))
}

fn blocks() -> Vec<Content> {
    vec![
        Content::text("hello").with_meta(author_meta("text")),
        Content::image("aGk=", "image/png").meta("com.example/what", "image"),
        Content::audio("aGk=", "audio/wav").meta("com.example/what", "audio"),
        Content::ResourceLink(ResourceLink::new("file:///l", "l").meta("com.example/what", "link")),
        Content::resource(
            ResourceContents::text("file:///e", "text/plain", "e")
                .meta("com.example/what", "contents"),
        )
        .meta("com.example/what", "embedded"),
    ]
}

/// Whether `definition` of revision `rev` gives its instances a `_meta` (following
/// `$ref` and `allOf`, as the 2025-11-25+ schemas compose results).
fn defines_meta(rev: &str, definition: &str) -> bool {
    let schema = kit::schema::schema(rev);
    let mut stack = vec![schema.definition(definition).clone()];
    while let Some(s) = stack.pop() {
        if s.get("properties").and_then(|p| p.get("_meta")).is_some() {
            return true;
        }
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or_default();
            stack.push(schema.definition(name).clone());
        }
        for part in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            stack.push(part.clone());
        }
    }
    false
}

/// The content definition a block of this `type` is an instance of.
fn content_definition(block: &Value) -> &'static str {
    match block["type"].as_str() {
        Some("text") => "TextContent",
        Some("image") => "ImageContent",
        Some("audio") => "AudioContent",
        Some("resource_link") => "ResourceLink",
        Some("resource") => "EmbeddedResource",
        other => panic!("unexpected block type {other:?}"),
    }
}

/// `_meta` is on `object` exactly when `definition` defines one; when it is, it holds
/// what the author set (and, on a 2026-07-28 result, the server's identity beside it).
fn assert_meta_where_defined(rev: &str, definition: &str, object: &Value, author: &str) {
    let expected = defines_meta(rev, definition);
    let meta = object.get("_meta");
    assert_eq!(
        meta.is_some(),
        expected,
        "{rev}: {definition} should {}carry _meta: {object}",
        if expected { "" } else { "not " }
    );
    if let Some(meta) = meta {
        assert_eq!(
            meta["com.example/what"], author,
            "{rev}: {definition}: {meta}"
        );
    }
}

/// Every object the server sends that an author can give `_meta`, shaped for every
/// revision: `_meta` exactly where the revision's schema defines it, and every result
/// exact against that schema (no key it does not define, anywhere).
#[test]
fn meta_reaches_exactly_the_objects_each_revision_defines_it_on() {
    let info = info();
    for v in V::ALL {
        let rev = v.as_str();
        let list = shape::list_tools(v, &info, &[&tool()], None, CacheHint::LIST)
            .expect("tools")
            .to_value();
        kit::schema::assert_schema_exact(rev, "ListToolsResult", &list);
        assert_meta_where_defined(rev, "Tool", &list["tools"][0], "tool");

        let resource = Resource::new("file:///r", "r").meta("com.example/what", "resource");
        let list = shape::list_resources(v, &info, &[&resource], None, CacheHint::LIST)
            .expect("resources")
            .to_value();
        kit::schema::assert_schema_exact(rev, "ListResourcesResult", &list);
        assert_meta_where_defined(rev, "Resource", &list["resources"][0], "resource");

        let template =
            ResourceTemplate::new("file:///{p}", "p").meta("com.example/what", "template");
        let list = shape::list_resource_templates(v, &info, &[&template], None, CacheHint::LIST)
            .expect("templates")
            .to_value();
        kit::schema::assert_schema_exact(rev, "ListResourceTemplatesResult", &list);
        assert_meta_where_defined(
            rev,
            "ResourceTemplate",
            &list["resourceTemplates"][0],
            "template",
        );

        let prompt = Prompt::new("p").meta("com.example/what", "prompt");
        let list = shape::list_prompts(v, &info, &[&prompt], None, CacheHint::LIST)
            .expect("prompts")
            .to_value();
        kit::schema::assert_schema_exact(rev, "ListPromptsResult", &list);
        assert_meta_where_defined(rev, "Prompt", &list["prompts"][0], "prompt");

        let result = ToolResult::content(blocks()).meta("com.example/what", "result");
        let r = shape::tool_result(v, &info, result)
            .expect("result")
            .to_value();
        kit::schema::assert_schema_exact(rev, "CallToolResult", &r);
        assert_meta_where_defined(rev, "CallToolResult", &r, "result");
        let mut kinds = BTreeSet::new();
        for block in r["content"].as_array().expect("content") {
            let definition = content_definition(block);
            kinds.insert(definition);
            // Blocks a revision lacks became text notices, which carry nothing.
            if block["type"] == "text" && block["text"] != "hello" {
                assert!(block.get("_meta").is_none(), "{rev}: {block}");
                continue;
            }
            let author = block["_meta"]["com.example/what"].clone();
            assert_meta_where_defined(rev, definition, block, author.as_str().unwrap_or("text"));
            if definition == "EmbeddedResource" {
                let contents = &block["resource"];
                assert_meta_where_defined(rev, "TextResourceContents", contents, "contents");
            }
        }
        assert!(kinds.contains("EmbeddedResource"), "{rev}: {kinds:?}");

        let contents = vec![
            ResourceContents::text("file:///r", "text/html", "<p>").meta("com.example/what", "t"),
            ResourceContents::blob("file:///b", "image/png", "aGk=").meta("com.example/what", "b"),
        ];
        let r = shape::read_resource(v, &info, contents, CacheHint::READ)
            .expect("read")
            .to_value();
        kit::schema::assert_schema_exact(rev, "ReadResourceResult", &r);
        assert_meta_where_defined(rev, "TextResourceContents", &r["contents"][0], "t");
        assert_meta_where_defined(rev, "BlobResourceContents", &r["contents"][1], "b");

        let prompt = PromptResult::new([PromptMessage::user(
            Content::text("hi").meta("com.example/what", "message"),
        )])
        .meta("com.example/what", "prompt result");
        let r = shape::get_prompt(v, &info, &prompt)
            .expect("prompt")
            .to_value();
        kit::schema::assert_schema_exact(rev, "GetPromptResult", &r);
        assert_meta_where_defined(rev, "GetPromptResult", &r, "prompt result");
        assert_meta_where_defined(rev, "TextContent", &r["messages"][0]["content"], "message");

        let completion = Completion::new(["a"]).meta("com.example/what", "completion");
        let r = shape::complete(v, &info, &completion)
            .expect("complete")
            .to_value();
        kit::schema::assert_schema_exact(rev, "CompleteResult", &r);
        assert_meta_where_defined(rev, "CompleteResult", &r, "completion");
    }
}

/// In 2026-07-28 the server's identity goes into the author's result `_meta`, beside its
/// keys, and an author's value under that reserved key does not win; older revisions get
/// the author's `_meta` alone.
#[test]
fn the_server_identity_joins_the_authors_result_meta_in_2026_07_28_only() {
    let info = info();
    let result = ToolResult::text("x")
        .meta("com.example/what", "result")
        .meta(
            "io.modelcontextprotocol/serverInfo",
            json!({"name": "forged", "version": "0"}),
        );
    let modern = shape::tool_result(V::V2026_07_28, &info, result.clone())
        .expect("result")
        .to_value();
    assert_eq!(modern["_meta"]["com.example/what"], "result");
    assert_eq!(
        modern["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "meta-test", "version": "1.0.0"})
    );
    let legacy = shape::tool_result(V::V2025_06_18, &info, result.meta("k", 1))
        .expect("result")
        .to_value();
    assert_eq!(legacy["_meta"]["com.example/what"], "result");
    assert_eq!(legacy["_meta"]["k"], 1);
}

/// A server whose tool answers with the `_meta` its handler read, and whose listed
/// objects and results carry `_meta` of their own.
fn echo_server() -> Server {
    Server::builder(info())
        .tool(tool(), |_args, ctx: Context| async move {
            ctx.progress(1.0, Some(1.0), None).await;
            let seen = Value::Object(ctx.meta().clone());
            ToolResult::text(seen.to_string())
                .structured(json!({"seen": seen}))
                .meta("com.example/what", "result")
        })
        .resource(
            Resource::new("file:///r", "r").meta("com.example/what", "resource"),
            |uri, _ctx| async move {
                ResourceContents::text(uri, "text/plain", "body")
                    .meta("com.example/what", "contents")
            },
        )
        .prompt(
            Prompt::new("p").meta("com.example/what", "prompt"),
            |_args, _ctx| async move {
                PromptResult::new([PromptMessage::user(
                    Content::text("hi").meta("com.example/what", "message"),
                )])
                .meta("com.example/what", "prompt result")
            },
        )
        .build()
}

/// The request `_meta` an application sends: the W3C trace context 2026-07-28 reserves,
/// a key of its own and a progress token.
fn request_meta() -> Map<String, Value> {
    let meta = json!({
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
        "baggage": "userId=alice,isProduction=false",
        "com.example/request": {"n": 1},
        "progressToken": "p-1",
    });
    meta.as_object().cloned().unwrap_or_default()
}

/// A handler reads the request's `_meta` exactly as sent, in every revision: the trace
/// context and the application's keys untouched, and the progress token still used by
/// the runtime (the progress notification arrives with it).
#[tokio::test]
async fn a_handler_reads_the_request_meta_as_sent_in_every_revision() {
    for v in V::ALL {
        let rev = v.as_str();
        let mut p = Stdio::serve(echo_server());
        let mut meta = request_meta();
        if v.era() == mcp_runtime::Era::Modern {
            meta.extend(
                kit::modern_meta(json!({}))
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            );
        } else {
            p.open(rev, json!({})).await;
        }
        let params = json!({"name": "t", "arguments": {}, "_meta": meta});
        let (before, answer) = p.exchange(2, "tools/call", params).await;
        let progress: Vec<&Value> = before
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 1, "{rev}: {before:?}");
        assert_eq!(progress[0]["params"]["progressToken"], "p-1", "{rev}");
        let result = &answer["result"];
        let text = result["content"][0]["text"].as_str().expect("text");
        let seen: Value = serde_json::from_str(text).expect("the handler's JSON");
        assert_eq!(seen, Value::Object(meta.clone()), "{rev}: {seen}");
        kit::schema::assert_schema_exact(rev, "CallToolResult", result);
        assert_eq!(
            result["_meta"]["com.example/what"], "result",
            "{rev}: {result}"
        );
    }
}

/// A request without `_meta` gives the handler an empty `_meta`.
#[tokio::test]
async fn without_meta_the_handler_sees_none() {
    let mut p = Stdio::serve(echo_server());
    p.open("2025-11-25", json!({})).await;
    let r = p
        .request(2, "tools/call", json!({"name": "t", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["structuredContent"]["seen"], json!({}), "{r}");
}

async fn in_memory(server: Server, v: V) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let _ = mcp_runtime::transport::stdio::serve(server, server_read, server_write).await;
    });
    let (client_read, client_write) = tokio::io::split(client_end);
    Client::builder(Implementation::new("meta-client", "1.0.0"))
        .timeout(kit::patience())
        .versions(VersionSet::of(&[v]))
        .connect_streams(client_read, client_write)
        .await
        .expect("connect")
}

/// The client reads back every `_meta` the server set, in each revision where the
/// revision carries it, and sends an application's `_meta` with a request.
#[tokio::test]
async fn the_client_reads_the_meta_the_server_set() {
    for v in V::ALL {
        let rev = v.as_str();
        let item_meta = defines_meta(rev, "Tool");
        let client = in_memory(echo_server(), v).await;
        let tools = client.list_all_tools().await.expect("tools");
        assert_eq!(
            tools[0]
                .meta
                .as_ref()
                .map(|m| m["com.example/what"].clone()),
            item_meta.then(|| json!("tool")),
            "{rev}"
        );
        let resources = client.list_all_resources().await.expect("resources");
        assert_eq!(
            resources[0].meta.is_some(),
            item_meta,
            "{rev}: {:?}",
            resources[0]
        );
        let prompts = client.list_all_prompts().await.expect("prompts");
        assert_eq!(prompts[0].meta.is_some(), item_meta, "{rev}");

        let mut sent = request_meta();
        sent.remove("progressToken");
        let result = client
            .call_tool_with("t", json!({}), RequestOptions::new().meta(sent.clone()))
            .await
            .expect("call");
        let meta = result
            .meta
            .as_ref()
            .expect("result _meta in every revision");
        assert_eq!(meta["com.example/what"], "result", "{rev}");
        if v.features().structured_output {
            let seen = &result.structured.as_ref().expect("structured")["seen"];
            for (key, value) in &sent {
                assert_eq!(&seen[key], value, "{rev}: {key} in {seen}");
            }
        }
        let contents = client.read_resource("file:///r").await.expect("read");
        assert_eq!(contents[0].metadata().is_some(), item_meta, "{rev}");
        let prompt = client
            .get_prompt("p", Vec::<(String, String)>::new())
            .await
            .expect("prompt");
        assert_eq!(
            prompt.meta.as_ref().map(|m| m["com.example/what"].clone()),
            Some(json!("prompt result")),
            "{rev}"
        );
        assert_eq!(
            prompt.messages[0].content.metadata().is_some(),
            item_meta,
            "{rev}"
        );
        drop(client);
    }
}
