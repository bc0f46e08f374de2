//! MCP mounted inside an application (`examples/embedded.rs`, started as a process with
//! `--prefix`): the application's own route and MCP on one server, every URL MCP emits
//! under the mount, official SDK clients of every era at the mount, a real browser's CORS
//! preflight from another origin (headless Chromium), what the tools see of the HTTP
//! request (and, over stdio, that there is none), and a graceful shutdown with streams open.
//!
//! Needs the example built: `cargo build -p mcp-interop --examples`.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};

mod kit;

use kit::http::Http;
use kit::process::{sigterm, HttpServer};
use kit::{browser, patience, pinned, request, MODERN};

/// Not a path that ends in `/mcp`, so that nothing can work by accident at the usual place.
const PREFIX: &str = "/api/v1/tools";

fn embedded() -> HttpServer {
    HttpServer::start_example_with("embedded", &["--prefix", PREFIX])
}

fn client_of(server: &HttpServer) -> Http {
    Http::mounted(&server.origin(), PREFIX, &format!("{PREFIX}/sse"))
}

/// The text of a tool result's first block, decoded as JSON (what `whoami` answers).
fn whoami_of(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn the_application_and_mcp_share_one_server_under_any_prefix() {
    let server = embedded();
    assert_eq!(server.printed_url(), server.url(PREFIX));
    let http = client_of(&server);
    let health = http
        .client()
        .get(server.url("/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(health.text().await.unwrap(), "ok");

    // Streamable HTTP, legacy era, at the mount.
    let session = http.session("2025-11-25", json!({})).await;
    let listed = http
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &request(1, "tools/list", None),
        )
        .await;
    let names: Vec<String> = listed.messages()[0]["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(names.iter().any(|n| n == "whoami"), "{names:?}");

    // The stateless era at the same URL.
    let modern = http.post_modern(2, "tools/list", json!({})).await;
    assert_eq!(modern.status, StatusCode::OK, "{}", modern.body);
    assert!(
        modern.json()["result"]["tools"].is_array(),
        "{}",
        modern.body
    );

    // HTTP+SSE under the mount: the endpoint event names the mount's `messages`.
    let mut sse = http.sse().await;
    assert!(
        sse.endpoint
            .data
            .starts_with(&format!("{PREFIX}/messages?sessionId=")),
        "{:?}",
        sse.endpoint.raw
    );
    let init = sse.initialize("2024-11-05", json!({})).await;
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");

    // Nothing at the places an unmounted server would use.
    for path in ["/mcp", "/sse", "/messages", "/api/v1/tools/other"] {
        let status = http
            .client()
            .get(server.url(path))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
}

/// `whoami` reads the extension the application's middleware inserted (from the trusted
/// proxy's `X-Forwarded-User`) and the request's own `X-Request-Id`: each request its
/// own, in both eras and over HTTP+SSE.
#[tokio::test]
async fn tools_see_each_request_and_what_the_middleware_put_there() {
    let server = embedded();
    let http = client_of(&server);

    let call = |id: i64| request(id, "tools/call", json!({"name": "whoami", "arguments": {}}));

    // 2026-07-28.
    let mut params = json!({"name": "whoami", "arguments": {}});
    params["_meta"] = kit::modern_meta(json!({}));
    let modern = http
        .post(
            &[
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "whoami"),
                ("x-forwarded-user", "alice"),
                ("x-request-id", "modern-1"),
            ],
            &request(1, "tools/call", params),
        )
        .await;
    assert_eq!(
        whoami_of(&modern.json()),
        json!({"transport": "http", "user": "alice", "requestId": "modern-1"})
    );

    // A legacy session: opened without those headers, then two calls each with its own.
    let session = http.session("2025-06-18", json!({})).await;
    for (id, user, request_id) in [(2, "bob", "legacy-2"), (3, "carol", "legacy-3")] {
        let answer = http
            .post(
                &[
                    ("mcp-session-id", &session),
                    ("mcp-protocol-version", "2025-06-18"),
                    ("x-forwarded-user", user),
                    ("x-request-id", request_id),
                ],
                &call(id),
            )
            .await;
        assert_eq!(
            whoami_of(&answer.messages()[0]),
            json!({"transport": "http", "user": user, "requestId": request_id})
        );
    }
    // Without the headers, nothing is left over from the earlier requests.
    let bare = http
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-06-18"),
            ],
            &call(4),
        )
        .await;
    assert_eq!(
        whoami_of(&bare.messages()[0]),
        json!({"transport": "http", "user": null, "requestId": null})
    );

    // HTTP+SSE: the POST's headers, not the stream's.
    let mut sse = http.sse().await;
    sse.initialize("2024-11-05", json!({})).await;
    let status = http
        .client()
        .post(server.url(&sse.endpoint.data))
        .header("content-type", "application/json")
        .header("x-forwarded-user", "dave")
        .header("x-request-id", "sse-5")
        .body(call(5).to_string())
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(
        whoami_of(&sse.recv().await),
        json!({"transport": "http", "user": "dave", "requestId": "sse-5"})
    );
}

/// One pinned official client's run of the `basic` scenario against `url`.
fn run_client(client: &str, url: &str, server: &HttpServer) -> Value {
    pinned::ensure_client(client);
    let out = Command::new("bash")
        .arg(pinned::clients_src().join("run-client.sh"))
        .env("MCP_CLIENTS_DIR", pinned::clients_dir())
        .args([client, "--scenario", "basic", "--url", url])
        .output()
        .unwrap_or_else(|e| panic!("{client}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| {
            panic!(
                "{client}: no JSON summary: {stdout}\n{}\nserver: {}",
                String::from_utf8_lossy(&out.stderr),
                server.log()
            )
        });
    assert_eq!(
        summary["ok"],
        true,
        "{client} at {url}: {summary}\n{}\nserver: {}",
        String::from_utf8_lossy(&out.stderr),
        server.log()
    );
    summary
}

macro_rules! clients_at_the_mount {
    ($($test:ident: $client:literal at $path:literal => $revision:literal,)*) => {$(
        #[test]
        fn $test() {
            let server = embedded();
            let url = server.url(&format!("{PREFIX}{}", $path));
            let summary = run_client($client, &url, &server);
            assert_eq!(summary["protocolVersion"], $revision, "{summary}");
            let tools = summary["tools"].as_array().expect("tools");
            assert!(tools.iter().any(|t| t == "whoami"), "{summary}");
        }
    )*};
}

clients_at_the_mount! {
    typescript_sdk_2024_11_05_sse_at_a_prefix: "ts-2024-11-05" at "/sse" => "2024-11-05",
    typescript_sdk_1_9_0_sse_only_at_a_prefix: "ts-sse-1.9.0" at "/sse" => "2024-11-05",
    typescript_sdk_2025_03_26_at_a_prefix: "ts-2025-03-26" at "" => "2025-03-26",
    typescript_sdk_2025_11_25_at_a_prefix: "ts-2025-11-25" at "" => "2025-11-25",
    typescript_client_2026_07_28_at_a_prefix: "ts-2026-07-28-auto" at "" => "2026-07-28",
    python_sdk_2024_11_05_sse_at_a_prefix: "py-2024-11-05" at "/sse" => "2024-11-05",
    python_sdk_1_7_1_sse_only_at_a_prefix: "py-sse-1.7.1" at "/sse" => "2024-11-05",
    python_sdk_2025_06_18_at_a_prefix: "py-2025-06-18" at "" => "2025-06-18",
    python_sdk_2025_11_25_at_a_prefix: "py-2025-11-25" at "" => "2025-11-25",
    python_client_2026_07_28_at_a_prefix: "py-2026-07-28-auto" at "" => "2026-07-28",
}

/// A page served by a tiny server of its own at `bind` (another origin than the MCP
/// server's) whose script POSTs an `initialize` to `target` with `Authorization` and
/// `MCP-Protocol-Version` (so the browser must ask a preflight first) and writes what it
/// could read — the status, `Mcp-Session-Id`, the body — or the fetch's error into the
/// page. Returns that outcome as JSON, read from the DOM headless Chromium printed.
async fn browser_fetch(bind: &str, page_host: &str, target: &str) -> Value {
    const PAGE: &str = r#"<!doctype html><html><body><pre id="out">pending</pre><script>
const target = decodeURIComponent(location.hash.slice(1));
fetch(target, {method: 'POST', headers: {'content-type': 'application/json',
  'accept': 'application/json, text/event-stream', 'authorization': 'Bearer not-needed-here',
  'mcp-protocol-version': '2025-11-25'},
  body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'initialize', params: {protocolVersion: '2025-11-25',
    capabilities: {}, clientInfo: {name: 'browser', version: '1'}}})})
 .then(async r => { document.getElementById('out').textContent = JSON.stringify(
    {status: r.status, session: r.headers.get('mcp-session-id'), body: await r.text()}); })
 .catch(e => { document.getElementById('out').textContent = JSON.stringify({error: String(e)}); });
</script></body></html>"#;
    let listener = tokio::net::TcpListener::bind(bind).await.expect("bind");
    let port = listener.local_addr().unwrap().port();
    let page = axum::Router::new().route(
        "/page.html",
        axum::routing::get(|| async { axum::response::Html(PAGE) }),
    );
    let serving = tokio::spawn(async move { axum::serve(listener, page).await });
    let url = format!(
        "http://{page_host}:{port}/page.html#{}",
        url::form_urlencoded::byte_serialize(target.as_bytes()).collect::<String>()
    );
    let dom = tokio::task::spawn_blocking(move || browser::dump_dom(&url))
        .await
        .unwrap();
    serving.abort();
    let start = dom.find("<pre id=\"out\">").expect("the page's output") + 14;
    let end = start + dom[start..].find("</pre>").expect("the output's end");
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn a_browser_page_of_another_origin_passes_the_preflight() {
    let server = embedded();
    let target = server.url(PREFIX);
    // `localhost:PORT` is another origin than `127.0.0.1:PORT'`, and a loopback one, which
    // the example allows.
    let outcome = browser_fetch("127.0.0.1:0", "localhost", &target).await;
    assert_eq!(outcome["status"], 200, "{outcome}\n{}", server.log());
    let session = outcome["session"].as_str().unwrap_or_default();
    assert!(session.len() >= 32, "Mcp-Session-Id readable: {outcome}");
    let body: Value = serde_json::from_str(outcome["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn a_browser_page_of_an_origin_not_allowed_is_refused() {
    let server = embedded();
    let target = server.url(PREFIX);
    // 127.0.0.2 is loopback too, but not an allowed origin.
    let outcome = browser_fetch("127.0.0.2:0", "127.0.0.2", &target).await;
    assert!(
        outcome["error"]
            .as_str()
            .is_some_and(|e| e.contains("Failed to fetch")),
        "{outcome}"
    );
    // The preflight itself, as the browser sent it: refused, without CORS headers.
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &target)
        .header("origin", "http://127.0.0.2:9")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), StatusCode::FORBIDDEN);
    assert!(preflight
        .headers()
        .get("access-control-allow-origin")
        .is_none());
}

/// SIGTERM with a GET stream and an HTTP+SSE stream open: the streams end after the
/// grace period and the process exits 0 (axum's graceful shutdown is not held by them).
#[tokio::test]
async fn shutdown_ends_the_open_streams() {
    let mut server = embedded();
    let http = client_of(&server);
    let session = http.session("2025-11-25", json!({})).await;
    let mut get = http.get_stream(&session, None).await;
    let mut sse = http.sse().await;
    sigterm(server.pid());
    let ended = tokio::time::timeout(patience(), async {
        assert!(get.next().await.is_none(), "the GET stream ends");
        assert!(
            sse.events().next().await.is_none(),
            "the HTTP+SSE stream ends"
        );
    })
    .await;
    assert!(ended.is_ok(), "streams still open: {}", server.log());
    let status = tokio::task::spawn_blocking(move || server.wait_exit())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
}

/// Over stdio a handler sees no HTTP request, in either era.
#[tokio::test]
async fn over_stdio_a_tool_sees_no_http_request() {
    use mcp_runtime::model::{Implementation, Tool};
    use mcp_runtime_http::HttpContext;
    let server = mcp_runtime::Server::builder(Implementation::new("stdio", "1"))
        .tool(
            Tool::new("http", "Whether an HTTP request carried the call")
                .input_schema(json!({"type": "object", "properties": {}})),
            |_, ctx| async move { format!("{}", ctx.http_request().is_some()) },
        )
        .build();
    let mut legacy = kit::stdio::Stdio::serve(server.clone());
    legacy.initialize("2025-11-25", json!({})).await;
    let answer = legacy
        .request(1, "tools/call", json!({"name": "http", "arguments": {}}))
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "false", "{answer}");
    let mut modern = kit::stdio::Stdio::serve(server);
    let params = json!({"name": "http", "arguments": {}, "_meta": kit::modern_meta(json!({}))});
    let answer = modern.request(2, "tools/call", params).await;
    assert_eq!(answer["result"]["content"][0]["text"], "false", "{answer}");
}
