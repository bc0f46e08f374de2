//! Official SDK clients through their own OAuth support, against the example server
//! protected by a real authorization server: oidc-provider (pinned in
//! `tests/auth/package.json`, auto-approving, see `tests/auth/authorization-server.mjs`)
//! and `conformance_server --http 127.0.0.1:0 --authorization-server ISSUER`.
//!
//! Each client starts unauthenticated, is refused 401, discovers the authorization server
//! (from the challenge's resource metadata; mcp 1.9.4, of 2025-03-26, from the
//! authorization server metadata mirrored at the MCP server's origin), registers
//! dynamically, runs the authorization code flow with PKCE (the test's driver plays the
//! browser, `tests/auth/oauth-client.{mjs,py}`), gets a JWT for the resource, then lists
//! tools and calls one. Every client id of `tests/clients/versions.md` whose SDK has OAuth
//! support is here, the TypeScript 2024-11-05 releases included (they carry the 2025-03-26
//! client); the Python ones of 2024-11-05 (mcp 1.8.1, and 1.7.1 over HTTP+SSE) have no OAuth
//! client at all (no `mcp/client/auth.py`), so they cannot be driven through it.
//!
//! This runtime's own client (`client::OAuth`) goes through the same flow at 2026-07-28, in
//! a 2025-11-25 session and over HTTP+SSE, and refreshes an expired token; `mcp-bridge
//! --oauth` authorizes upstream through a browser the test plays, on its loopback redirect
//! URI.
//!
//! Also against the same real server: its tokens for another resource, and its opaque
//! tokens, refused; its client-credentials token for our resource accepted; and RFC 7662
//! introspection of its opaque tokens, revocation included.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

mod kit;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kit::pinned::{self, Pinned};
use kit::process::HttpServer;
use serde_json::{json, Value};

/// The authorization server as a child process, killed on drop.
struct AuthServer {
    child: Child,
    issuer: String,
    log: Arc<Mutex<String>>,
}

impl AuthServer {
    fn start() -> AuthServer {
        pinned::ensure(Pinned::AuthorizationServer);
        let dir = pinned::auth_server_dir();
        // The script imports oidc-provider from the node_modules beside it.
        let script = place(&pinned::auth_src().join("authorization-server.mjs"), &dir);
        let mut child = Command::new("node")
            .arg(&script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node (install Node.js 20 or later)");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(issuer) = line.strip_prefix("issuer ") {
                    let _ = tx.send(issuer.trim().to_owned());
                }
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let mut server = AuthServer {
            child,
            issuer: String::new(),
            log,
        };
        server.issuer = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                panic!(
                    "the authorization server printed no issuer:\n{}",
                    server.log()
                )
            });
        server
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The resource of tokens whose request names none (2025-03-26 clients).
    fn set_default_resource(&self, resource: &str) {
        let r = reqwest::blocking::Client::new()
            .post(format!("{}/_test/default-resource", self.issuer))
            .body(resource.to_owned())
            .send()
            .expect("control request");
        assert!(r.status().is_success());
    }

    /// A client-credentials token of the pre-registered `client` for `resource`.
    fn machine_token(&self, client: &str, resource: &str) -> String {
        let r = reqwest::blocking::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some("machine-secret"))
            .form(&[
                ("grant_type", "client_credentials"),
                ("scope", "mcp:tools"),
                ("resource", resource),
            ])
            .send()
            .expect("token request");
        let body: Value = serde_json::from_str(&r.text().expect("token response")).expect("JSON");
        body["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access token: {body}\n{}", self.log()))
            .to_owned()
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies `file` into `dir` (renamed into place: other tests may be starting it) and
/// returns the copy.
fn place(file: &Path, dir: &Path) -> std::path::PathBuf {
    let target = dir.join(file.file_name().expect("file name"));
    let source = std::fs::read(file).expect("read script");
    if std::fs::read(&target).ok().as_deref() != Some(&source[..]) {
        // Unique per call: tests of this binary place the same script from several
        // threads at once.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let tmp = dir.join(format!(
            ".{}.{}.{}",
            file.file_name().unwrap().to_string_lossy(),
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::write(&tmp, &source).expect("write script");
        std::fs::rename(&tmp, &target).expect("rename script");
    }
    target
}

/// Runs the OAuth driver of client `id` against `url`; its JSON line.
fn run_client(id: &str, url: &str) -> (Value, String) {
    pinned::ensure_client(id);
    let clients = pinned::clients_dir();
    let mut command = if id.starts_with("ts-") {
        let script = place(
            &pinned::auth_src().join("oauth-client.mjs"),
            &clients.join("npm"),
        );
        let mut c = Command::new("node");
        c.arg(script);
        c
    } else {
        let venv = if id.starts_with("py-2026-07-28") {
            "py-2026-07-28"
        } else {
            id
        };
        let mut c = Command::new(clients.join(venv).join("bin").join("python"));
        c.arg(pinned::auth_src().join("oauth-client.py"));
        c
    };
    let out = command
        .args([id, "--url", url])
        .env("MCP_CLIENT_TIMEOUT", "60")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running the {id} driver: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    let value = line
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("{id} printed no JSON line:\n{stdout}\n{stderr}"));
    (value, stderr)
}

/// One client through the whole flow, and what it did checked.
fn oauth_flow(id: &str, revision: &str, sends_resource: bool) {
    oauth_flow_at(id, revision, sends_resource, "/mcp");
}

/// [`oauth_flow`] with the client given `path` (`/sse` for HTTP+SSE) on the server.
fn oauth_flow_at(id: &str, revision: &str, sends_resource: bool, path: &str) {
    let auth = AuthServer::start();
    // `test_image_content` needs a scope no client's token has: it is not listed for them.
    let mcp = HttpServer::start_example_with(
        "conformance_server",
        &[
            "--authorization-server",
            &auth.issuer,
            "--tool-scope",
            "test_image_content=mcp:admin",
        ],
    );
    // The resource is the MCP endpoint, whatever transport the client uses.
    let url = mcp.url("/mcp");
    if !sends_resource {
        auth.set_default_resource(&url);
    }
    let (out, stderr) = run_client(id, &mcp.url(path));
    let context = || {
        format!(
            "{out:#}\n--- client stderr:\n{stderr}\n--- authorization server:\n{}\n--- MCP server:\n{}",
            auth.log(),
            mcp.log()
        )
    };
    assert_eq!(out["ok"], json!(true), "{}", context());
    assert_eq!(out["protocolVersion"], json!(revision), "{}", context());
    assert_eq!(
        out["callResult"]["content"][0]["text"],
        json!("This is a simple text response for testing."),
        "{}",
        context()
    );
    let tools = out["tools"]
        .as_array()
        .expect("the tools the client listed");
    assert!(tools.contains(&json!("test_simple_text")), "{}", context());
    assert!(
        !tools.contains(&json!("test_image_content")),
        "a tool the token lacks the scope for is listed: {}",
        context()
    );
    if id.starts_with("ts-") {
        // TypeScript clients start without a token and are refused; mcp 1.9.4 authorizes
        // before its first request, later Python clients on the 401 within one call.
        assert_eq!(out["firstAttempt"], json!("unauthorized"), "{}", context());
    }
    let request = &out["authorizationRequest"];
    let expected_resource = if sends_resource {
        json!(url)
    } else {
        Value::Null
    };
    assert_eq!(request["resource"], expected_resource, "{}", context());
    assert_eq!(
        request["codeChallengeMethod"],
        json!("S256"),
        "{}",
        context()
    );
    assert!(
        request["registeredClient"]
            .as_str()
            .is_some_and(|c| !c.is_empty()),
        "dynamic registration: {}",
        context()
    );
    if let Some(origin) = request.get("origin").and_then(Value::as_str) {
        // The client was given only the MCP URL: it found the authorization server.
        assert_eq!(origin, auth.issuer, "{}", context());
    }
    let hops = out["hops"].to_string();
    assert!(hops.contains("/interaction/"), "{}", context());
    assert_eq!(out["callbackHadIss"], json!(true), "{}", context());
    // The server logged no token.
    assert!(!mcp.log().contains("eyJ"), "{}", mcp.log());
}

#[test]
fn ts_2024_11_05_oauth_through_the_mirrored_metadata() {
    // 2024-11-05 has no authorization framework, but sdk 1.10.2 already carries the
    // 2025-03-26 client (metadata at the server's origin, no `resource`, no scope).
    oauth_flow("ts-2024-11-05", "2024-11-05", false);
}

#[test]
fn ts_sse_1_9_0_oauth_over_http_sse() {
    // The same client over the HTTP+SSE transport: the stream and its POSTs need the token.
    oauth_flow_at("ts-sse-1.9.0", "2024-11-05", false, "/sse");
}

#[test]
fn ts_2025_03_26_oauth() {
    // sdk 1.12.3 already reads the resource metadata, but sends no `resource`.
    oauth_flow("ts-2025-03-26", "2025-03-26", false);
}

#[test]
fn py_2025_03_26_oauth_through_the_mirrored_metadata() {
    // mcp 1.9.4 looks for the authorization server's metadata at the MCP server's origin.
    oauth_flow("py-2025-03-26", "2025-03-26", false);
}

#[test]
fn ts_2025_06_18_oauth() {
    oauth_flow("ts-2025-06-18", "2025-06-18", true);
}

#[test]
fn py_2025_06_18_oauth() {
    oauth_flow("py-2025-06-18", "2025-06-18", true);
}

#[test]
fn ts_2025_11_25_oauth() {
    oauth_flow("ts-2025-11-25", "2025-11-25", true);
}

#[test]
fn py_2025_11_25_oauth() {
    oauth_flow("py-2025-11-25", "2025-11-25", true);
}

#[test]
fn ts_2026_07_28_pinned_oauth() {
    oauth_flow("ts-2026-07-28-pinned", "2026-07-28", true);
}

#[test]
fn ts_2026_07_28_auto_oauth() {
    oauth_flow("ts-2026-07-28-auto", "2026-07-28", true);
}

#[test]
fn py_2026_07_28_pinned_oauth() {
    oauth_flow("py-2026-07-28-pinned", "2026-07-28", true);
}

#[test]
fn py_2026_07_28_auto_oauth() {
    oauth_flow("py-2026-07-28-auto", "2026-07-28", true);
}

#[test]
fn the_example_refuses_to_start_without_its_authorization_server() {
    // Nothing listens on port 1: discovery fails, and the server must not start unprotected.
    let out = Command::new(kit::process::example())
        .args([
            "--http",
            "127.0.0.1:0",
            "--authorization-server",
            "http://127.0.0.1:1",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run the example");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--authorization-server http://127.0.0.1:1"),
        "{stderr}"
    );
    assert!(!stderr.contains("listening on"), "{stderr}");
    // An issuer over plain http that is not loopback is refused the same way.
    let out = Command::new(kit::process::example())
        .args([
            "--http",
            "127.0.0.1:0",
            "--authorization-server",
            "http://auth.example.com",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run the example");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("https"));
}

/// A stateless 2026-07-28 `tools/call` with `token`: status and `WWW-Authenticate`.
fn call(url: &str, token: &str) -> (u16, String, String) {
    let r = reqwest::blocking::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "test_simple_text")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "test_simple_text", "arguments": {},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                          "io.modelcontextprotocol/clientCapabilities": {}}}})
            .to_string(),
        )
        .send()
        .expect("call");
    let www = r
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (r.status().as_u16(), www, r.text().unwrap_or_default())
}

#[test]
fn the_real_servers_tokens_count_only_for_their_resource() {
    let auth = AuthServer::start();
    let mcp = HttpServer::start_example_with(
        "conformance_server",
        &["--authorization-server", &auth.issuer],
    );
    let url = mcp.url("/mcp");
    let ours = auth.machine_token("machine", &url);
    let (status, _, body) = call(&url, &ours);
    assert_eq!(status, 200, "{body}\n{}", mcp.log());
    // A genuine token of the same server, for another resource: the audience decides.
    let other = auth.machine_token("machine", "http://127.0.0.1:9/mcp");
    let (status, www, _) = call(&url, &other);
    assert_eq!(status, 401);
    assert!(www.contains("error=\"invalid_token\""), "{www}");
    // An opaque token is no JWT of this server.
    let opaque = auth.machine_token("machine-opaque", &url);
    let (status, www, _) = call(&url, &opaque);
    assert_eq!(status, 401);
    assert!(www.contains("invalid_token"), "{www}");
}

#[tokio::test]
async fn introspection_at_the_real_server() {
    use mcp_runtime_http::auth::{AuthorizationServer, IntrospectionVerifier, ResourceServer};
    let auth = Arc::new(
        tokio::task::spawn_blocking(AuthServer::start)
            .await
            .unwrap(),
    );
    let metadata = AuthorizationServer::discover(&auth.issuer)
        .await
        .expect("discover");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = IntrospectionVerifier::for_server(&metadata, &url)
        .expect("introspection endpoint")
        .client_credentials("rs-introspector", "introspector-secret")
        .build()
        .unwrap();
    let rs = ResourceServer::builder(&url, verifier)
        .discovered_authorization_server(&metadata)
        // Every request asks the server, so that revocation shows at once.
        .verified_token_cache(Duration::ZERO, 0)
        .build()
        .unwrap();
    let mut config = mcp_runtime_http::HttpConfig::default();
    config.authorization = Some(Arc::new(rs));
    tokio::spawn(mcp_runtime_http::serve_listener(
        support_server(),
        listener,
        config,
    ));
    // The blocking helpers run off the runtime's threads.
    let token = |resource: &str| {
        let (auth, resource) = (Arc::clone(&auth), resource.to_owned());
        tokio::task::spawn_blocking(move || auth.machine_token("machine-opaque", &resource))
    };
    let calls = |token: &str| {
        let (url, token) = (url.clone(), token.to_owned());
        tokio::task::spawn_blocking(move || call(&url, &token))
    };
    let opaque = token(&url).await.unwrap();
    let (status, _, body) = calls(&opaque).await.unwrap();
    assert_eq!(status, 200, "{body}");
    // For another resource: the introspection answer's audience is not ours.
    let elsewhere = token("http://127.0.0.1:9/mcp").await.unwrap();
    assert_eq!(calls(&elsewhere).await.unwrap().0, 401);
    // Revoked at the server: refused from the next request on.
    let revoked = reqwest::Client::new()
        .post(format!("{}/token/revocation", auth.issuer))
        .basic_auth("machine-opaque", Some("machine-secret"))
        .form(&[("token", opaque.as_str())])
        .send()
        .await
        .unwrap();
    assert!(revoked.status().is_success());
    let (status, www, _) = calls(&opaque).await.unwrap();
    assert_eq!(status, 401);
    assert!(www.contains("invalid_token"), "{www}");
}

/// A one-tool server for the in-process test above.
fn support_server() -> mcp_runtime::Server {
    use mcp_runtime::model::{Implementation, Tool, ToolResult};
    mcp_runtime::Server::builder(Implementation::new("introspected", "1"))
        .tool(Tool::new("test_simple_text", "Text"), |_, _| async move {
            Ok(ToolResult::text("ok"))
        })
        .build()
}

/// Our own client (`Client::builder().oauth(..)`) against the example server protected by
/// the real authorization server: it is refused, discovers the authorization server from
/// the 401, registers dynamically, authorizes with code + PKCE (the default headless user
/// agent plays the browser through oidc-provider's interaction), calls a tool, and a
/// second connection sharing the token store refreshes the expired token instead of
/// authorizing again. Once at the newest revision, once pinned to a legacy session, once
/// over HTTP+SSE.
#[tokio::test(flavor = "multi_thread")]
async fn our_client_authorizes_discovers_registers_and_refreshes() {
    use mcp_runtime::model::{Content, Implementation};
    use mcp_runtime::{ProtocolVersion, VersionSet};
    use mcp_runtime_client::auth::{follow_redirects, MemoryTokenStore, TokenStore};
    use mcp_runtime_client::{Client, OAuth};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let auth = tokio::task::spawn_blocking(AuthServer::start)
        .await
        .unwrap();
    let issuer = auth.issuer.clone();
    let mcp = tokio::task::spawn_blocking(move || {
        HttpServer::start_example_with("conformance_server", &["--authorization-server", &issuer])
    })
    .await
    .unwrap();
    let url = mcp.url("/mcp");

    // Without OAuth the 401 is an authorization error that says what to do.
    let refused = Client::builder(Implementation::new("no-oauth", "1.0.0"))
        .connect_url(&url)
        .await
        .expect_err("a protected server refuses a client without a token");
    assert_eq!(
        refused.kind(),
        mcp_runtime_client::ClientErrorKind::Unauthorized,
        "{refused}"
    );
    assert!(
        refused.message().contains("ClientBuilder::oauth"),
        "{refused}"
    );

    for (how, versions, path) in [
        ("newest", VersionSet::ALL, "/mcp"),
        (
            "2025-11-25 session",
            VersionSet::of(&[ProtocolVersion::V2025_11_25]),
            "/mcp",
        ),
        (
            "HTTP+SSE",
            VersionSet::of(&[ProtocolVersion::V2024_11_05]),
            "/sse",
        ),
    ] {
        let store = Arc::new(MemoryTokenStore::default());
        let authorizations = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let oauth = {
            let (authorizations, seen) = (Arc::clone(&authorizations), Arc::clone(&seen));
            OAuth::new()
                .token_store(store.clone())
                .user_agent(move |request| {
                    authorizations.fetch_add(1, Ordering::SeqCst);
                    seen.lock().unwrap().push(request.url.clone());
                    follow_redirects(request)
                })
        };
        let context = |what: &str| {
            format!(
                "[{how}] {what}\n--- authorization server:\n{}\n--- MCP server:\n{}",
                auth.log(),
                mcp.log()
            )
        };
        let connect = |oauth: OAuth| {
            let builder = Client::builder(Implementation::new("oauth-e2e", "1.0.0"))
                .versions(versions)
                .oauth(oauth);
            let target = mcp.url(path);
            async move {
                if path == "/sse" {
                    builder.connect_sse(&target).await
                } else {
                    builder.connect_url(&target).await
                }
            }
        };
        let client = connect(oauth.clone())
            .await
            .unwrap_or_else(|e| panic!("{}", context(&format!("connect: {e}"))));
        let tools = client.list_all_tools().await.expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "test_simple_text"));
        let result = client
            .call_tool("test_simple_text", serde_json::json!({}))
            .await
            .unwrap_or_else(|e| panic!("{}", context(&format!("tools/call: {e}"))));
        assert!(
            matches!(result.content.first(), Some(Content::Text { text, .. }) if text == "This is a simple text response for testing."),
            "{result:?}"
        );
        client.close().await;

        // One authorization, by the book.
        assert_eq!(
            authorizations.load(Ordering::SeqCst),
            1,
            "{}",
            context("authorizations")
        );
        let request = reqwest::Url::parse(&seen.lock().unwrap()[0]).unwrap();
        let param = |name: &str| {
            request
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        assert!(request.as_str().starts_with(&auth.issuer), "{request}");
        assert_eq!(param("code_challenge_method").as_deref(), Some("S256"));
        assert_eq!(param("resource").as_deref(), Some(url.as_str()));
        assert_eq!(param("response_type").as_deref(), Some("code"));
        let registered = store.client(&auth.issuer).expect("registered dynamically");
        assert_eq!(param("client_id"), Some(registered.client_id.clone()));
        // Kept under the URL the client was given; asked for the resource the server named.
        let key = mcp.url(path);
        let tokens = store.tokens(&key).expect("tokens kept for the server");
        assert_eq!(tokens.resource, url);
        assert_eq!(tokens.issuer, auth.issuer);
        // oidc-provider could bind tokens with DPoP, but our server challenges with Bearer
        // only: a DPoP-bound token would be refused there.
        assert_eq!(tokens.token_type, "Bearer");
        let first_access = tokens.access_token.clone();
        assert!(
            tokens.refresh_token.is_some(),
            "{}",
            context("offline_access was listed: a refresh token")
        );

        // The token expires: a new connection with the same store refreshes it.
        let mut expired = tokens.clone();
        expired.expires_at = Some(std::time::SystemTime::UNIX_EPOCH);
        store.save_tokens(&key, Some(&expired));
        let again = connect(oauth)
            .await
            .expect("connect with a refreshed token");
        again
            .call_tool("test_simple_text", serde_json::json!({}))
            .await
            .expect("tools/call with the refreshed token");
        again.close().await;
        assert_eq!(
            authorizations.load(Ordering::SeqCst),
            1,
            "{}",
            context("refreshed, not authorized again")
        );
        let refreshed = store.tokens(&key).unwrap();
        assert_ne!(refreshed.access_token, first_access);
        assert!(!refreshed.expired());
        // The server logged no token.
        assert!(!mcp.log().contains("eyJ"), "{}", mcp.log());
    }
}

/// `mcp-bridge --url … --oauth` in front of the protected example server: the bridge
/// prints the authorization URL and waits on its loopback redirect URI
/// (`client::auth::wait_for_redirect`); the test plays the user's browser (through
/// oidc-provider's login and consent, then to the redirect URI); the bridge then serves
/// the upstream tools on stdio, to our client.
#[tokio::test(flavor = "multi_thread")]
async fn the_bridge_authorizes_upstream_through_a_browser_on_its_redirect_uri() {
    use mcp_runtime::model::Implementation;
    use mcp_runtime_client::auth::{follow_redirects, AuthorizationRequest};
    use mcp_runtime_client::Client;
    use tokio::io::AsyncBufReadExt;

    let auth = tokio::task::spawn_blocking(AuthServer::start)
        .await
        .unwrap();
    let issuer = auth.issuer.clone();
    let mcp = tokio::task::spawn_blocking(move || {
        HttpServer::start_example_with("conformance_server", &["--authorization-server", &issuer])
    })
    .await
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut bridge = tokio::process::Command::new(kit::process::example_named("bridge"))
        .args([
            "--url",
            &mcp.url("/mcp"),
            "--oauth",
            "--oauth-redirect",
            &redirect,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawning mcp-bridge");
    let mut stderr = tokio::io::BufReader::new(bridge.stderr.take().unwrap()).lines();
    let bridge_log = Arc::new(Mutex::new(String::new()));
    let (opened, open) = tokio::sync::oneshot::channel::<String>();
    {
        let log = Arc::clone(&bridge_log);
        tokio::spawn(async move {
            let mut opened = Some(opened);
            while let Ok(Some(line)) = stderr.next_line().await {
                if let Some(url) = line.strip_prefix("mcp-bridge: to authorize upstream, open ") {
                    if let Some(tx) = opened.take() {
                        let _ = tx.send(url.to_owned());
                    }
                }
                log.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
    }
    let url = tokio::time::timeout(Duration::from_secs(30), open)
        .await
        .unwrap_or_else(|_| panic!("no URL to open:\n{}", bridge_log.lock().unwrap()))
        .unwrap();
    assert!(url.starts_with(&auth.issuer), "{url}");
    // The browser: the authorization server's pages, then back to the bridge.
    let back = follow_redirects(AuthorizationRequest::new(url, redirect.clone()))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", auth.log()));
    assert!(back.starts_with(&redirect), "{back}");
    let page = reqwest::get(&back)
        .await
        .expect("the bridge's redirect URI");
    assert_eq!(page.status(), 200);

    let client = Client::builder(Implementation::new("through-the-bridge", "1.0.0"))
        .connect_streams(bridge.stdout.take().unwrap(), bridge.stdin.take().unwrap())
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", bridge_log.lock().unwrap()));
    let result = client
        .call_tool("test_simple_text", serde_json::json!({}))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", bridge_log.lock().unwrap()));
    assert!(format!("{result:?}").contains("This is a simple text response for testing."));
    client.close().await;
    let _ = bridge.kill().await;
}
