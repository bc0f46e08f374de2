//! Extensions a server declares and the custom methods it serves for them, in every
//! revision: the declaration where the revision can carry it (`extensions` in
//! 2026-07-28, `experimental` before) with every capabilities object exact against the
//! schema; custom methods with typed params and results, admitted only while their
//! extension is declared (`-32601` otherwise, `-32602` for params that do not decode);
//! the client reading the declaration and calling the method.

mod kit;

use kit::stdio::Stdio;
use mcp_runtime::model::Implementation;
use mcp_runtime::protocol::version::ProtocolVersion as V;
use mcp_runtime::{Era, RpcError, Server, VersionSet};
use mcp_runtime_client::Client;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

const NOTES: &str = "com.example/notes";

#[derive(Deserialize)]
struct CountParams {
    text: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Count {
    words: usize,
}

fn server() -> Server {
    Server::builder(Implementation::new("ext-test", "1.0.0"))
        .extension(NOTES, json!({"maxLength": 280}))
        .custom_method(NOTES, "notes/count", |p: CountParams, ctx| async move {
            // The handler has the request's `_meta` apart from its params.
            let _ = ctx.meta();
            Ok::<_, RpcError>(Count {
                words: p.text.split_whitespace().count(),
            })
        })
        .custom_method(NOTES, "notes/scalar", |_: Value, _ctx| async move {
            Ok::<_, RpcError>(json!(3))
        })
        .build()
}

/// The capabilities a revision's handshake announces.
async fn capabilities(p: &mut Stdio, v: V) -> Value {
    let r = if v.era() == Era::Modern {
        p.request(1, "server/discover", params(v, json!({}))).await
    } else {
        p.initialize(v.as_str(), json!({})).await
    };
    r["result"]["capabilities"].clone()
}

/// `params` with, for a 2026-07-28 request, the `_meta` that names the revision.
fn params(v: V, mut params: Value) -> Value {
    if v.era() == Era::Modern {
        params["_meta"] = kit::modern_meta(json!({}));
    }
    params
}

#[tokio::test]
async fn a_declared_extension_and_its_methods_in_every_revision() {
    for v in V::ALL {
        let rev = v.as_str();
        let server = server();
        let mut p = Stdio::serve(server.clone());
        let caps = capabilities(&mut p, v).await;
        kit::schema::assert_schema_exact(rev, "ServerCapabilities", &caps);
        let (place, other) = if v.era() == Era::Modern {
            ("extensions", "experimental")
        } else {
            ("experimental", "extensions")
        };
        assert_eq!(
            caps[place][NOTES],
            json!({"maxLength": 280}),
            "{rev}: {caps}"
        );
        assert!(caps.get(other).is_none(), "{rev}: {caps}");

        let r = p
            .request(
                2,
                "notes/count",
                params(v, json!({"text": "one two three"})),
            )
            .await;
        assert_eq!(r["result"]["words"], 3, "{rev}: {r}");
        assert_eq!(
            r["result"].get("resultType").is_some(),
            v.era() == Era::Modern,
            "{rev}: {r}"
        );
        let r = p
            .request(3, "notes/count", params(v, json!({"text": 5})))
            .await;
        assert_eq!(kit::code(&r), -32602, "{rev}: {r}");
        // A result that is not an object is the handler's bug: an internal error.
        let r = p.request(4, "notes/scalar", params(v, json!({}))).await;
        assert_eq!(kit::code(&r), -32603, "{rev}: {r}");
        let r = p.request(5, "notes/unknown", params(v, json!({}))).await;
        assert_eq!(kit::code(&r), -32601, "{rev}: {r}");

        assert!(server.withdraw_extension(NOTES));
        let r = p
            .request(6, "notes/count", params(v, json!({"text": "a"})))
            .await;
        assert_eq!(kit::code(&r), -32601, "{rev}: {r}");
        server.declare_extension(NOTES, json!({}));
        let r = p
            .request(7, "notes/count", params(v, json!({"text": "a"})))
            .await;
        assert_eq!(r["result"]["words"], 1, "{rev}: {r}");
    }
}

/// A method the specification defines cannot be registered as a custom method.
#[test]
#[should_panic(expected = "is a method of the specification")]
fn a_custom_method_cannot_take_over_a_specification_method() {
    let _ = Server::builder(Implementation::new("ext-test", "1.0.0"))
        .extension(NOTES, json!({}))
        .custom_method(NOTES, "ping", |_: Value, _ctx| async move {
            Ok::<_, RpcError>(json!({"hijacked": true}))
        });
}

/// The client reads the declared extension in every revision and calls the method.
#[tokio::test]
async fn the_client_reads_extensions_and_calls_custom_methods() {
    for v in V::ALL {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            let _ = mcp_runtime::transport::stdio::serve(server(), server_read, server_write).await;
        });
        let (client_read, client_write) = tokio::io::split(client_end);
        let client = Client::builder(Implementation::new("ext-client", "1.0.0"))
            .timeout(kit::patience())
            .versions(VersionSet::of(&[v]))
            .connect_streams(client_read, client_write)
            .await
            .expect("connect");
        assert_eq!(
            client.server_info().extension(NOTES),
            Some(&json!({"maxLength": 280})),
            "{v}"
        );
        let count: Count = client
            .call_custom("notes/count", &json!({"text": "a b"}))
            .await
            .expect("notes/count");
        assert_eq!(count, Count { words: 2 }, "{v}");
        let missing = client
            .call_custom::<_, Value>("notes/unknown", &json!({}))
            .await
            .expect_err("not served");
        assert!(
            missing.to_string().contains("-32601") || missing.to_string().contains("not found"),
            "{v}: {missing}"
        );
        client.close().await;
    }
}

/// Over HTTP a custom method's handler sees the request as a tool's does: its headers
/// (`HttpContext::http_request`), in both eras.
#[tokio::test]
async fn a_custom_method_sees_the_http_request() {
    use mcp_runtime_http::HttpContext;
    let server = Server::builder(Implementation::new("ext-http", "1.0.0"))
        .extension(NOTES, json!({}))
        .custom_method(NOTES, "notes/who", |_: Value, ctx| async move {
            let tenant = ctx
                .http_request()
                .and_then(|head| head.headers.get("x-tenant"))
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            Ok::<_, RpcError>(json!({"tenant": tenant}))
        })
        .build();
    let http = kit::http::serve(server, mcp_runtime_http::HttpConfig::default()).await;
    let session = http.session("2025-11-25", json!({})).await;
    let legacy = http
        .post(
            &[("mcp-session-id", &session), ("x-tenant", "blue")],
            &kit::request(1, "notes/who", json!({})),
        )
        .await;
    assert_eq!(
        legacy.messages()[0]["result"]["tenant"],
        "blue",
        "{}",
        legacy.body
    );
    let mut modern_params = json!({});
    modern_params["_meta"] = kit::modern_meta(json!({}));
    let modern = http
        .post(
            &[
                ("mcp-protocol-version", kit::MODERN),
                ("mcp-method", "notes/who"),
                ("x-tenant", "green"),
            ],
            &kit::request(2, "notes/who", modern_params),
        )
        .await;
    assert_eq!(
        modern.messages()[0]["result"]["tenant"],
        "green",
        "{}",
        modern.body
    );
}
