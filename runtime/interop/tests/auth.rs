//! Authorization over HTTP, against an authorization server of our own on 127.0.0.1:0
//! (its metadata, a JWK Set it can rotate or break, an introspection endpoint) and tokens
//! signed here with test keys: discovery documents and challenges, every hostile token
//! with its status, scopes per server and per tool, fail-closed verification, sessions
//! and `requestState` bound to their principal, and no token in any log line.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

mod kit;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::Server;
use mcp_runtime::{Ask, AskErrorKind};
use mcp_runtime_http::auth::{
    AuthorizationServer, ByIssuer, IntrospectionVerifier, JwtVerifier, ResourceServer,
    ResourceServerBuilder,
};
use mcp_runtime_http::HttpConfig;
use reqwest::StatusCode;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// Keys and tokens

const RSA_A: &[u8] = include_bytes!("../../client/testdata/keys/rsa-a.pem");
const RSA_A_PUBLIC: &[u8] = include_bytes!("../../client/testdata/keys/rsa-a.pub.pem");
const RSA_B: &[u8] = include_bytes!("../../client/testdata/keys/rsa-b.pem");
const EC_P256: &[u8] = include_bytes!("../../client/testdata/keys/ec-p256.pem");

fn rsa_a() -> EncodingKey {
    EncodingKey::from_rsa_pem(RSA_A).expect("rsa-a.pem")
}

fn rsa_b() -> EncodingKey {
    EncodingKey::from_rsa_pem(RSA_B).expect("rsa-b.pem")
}

fn ec() -> EncodingKey {
    EncodingKey::from_ec_pem(EC_P256).expect("ec-p256.pem")
}

/// The public JWK of `key`, with `kid`.
fn jwk(key: &EncodingKey, alg: Algorithm, kid: &str) -> Value {
    let mut jwk =
        serde_json::to_value(Jwk::from_encoding_key(key, alg).expect("jwk")).expect("json");
    jwk["kid"] = json!(kid);
    jwk["use"] = json!("sig");
    jwk
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// Claims of a good token for `resource` from `issuer`, for `sub`.
fn claims(issuer: &str, resource: &str, sub: &str, scope: &str) -> Value {
    json!({
        "iss": issuer,
        "sub": sub,
        "aud": resource,
        "client_id": "test-client",
        "scope": scope,
        "iat": now(),
        "exp": now() + 600,
        "jti": format!("{sub}-{}", now()),
    })
}

fn sign(alg: Algorithm, kid: Option<&str>, claims: &Value, key: &EncodingKey) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    header.typ = Some("at+jwt".into());
    jsonwebtoken::encode(&header, claims, key).expect("sign")
}

/// A JSON answer (axum's `Json` needs a feature the runtime does not turn on).
fn json_answer(value: Value) -> axum::response::Response {
    ([("content-type", "application/json")], value.to_string()).into_response()
}

fn b64(value: &Value) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

// ---------------------------------------------------------------------------------------
// The authorization server: metadata, a JWK Set, introspection

#[derive(Default)]
struct AsState {
    issuer: Mutex<String>,
    jwks: Mutex<Value>,
    jwks_fetches: AtomicUsize,
    jwks_broken: AtomicBool,
    /// The key set endpoint accepts the connection and never answers.
    jwks_hangs: AtomicBool,
    /// Introspection answers by token; unknown tokens are inactive.
    introspection: Mutex<HashMap<String, Value>>,
    introspections: AtomicUsize,
    introspection_broken: AtomicBool,
}

struct AuthServer {
    issuer: String,
    state: Arc<AsState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl AuthServer {
    async fn start() -> AuthServer {
        // Every test's log lines are captured, from the start.
        log_lines();
        let state = Arc::new(AsState::default());
        // Besides the signing keys: an encryption key and a symmetric one, neither of
        // which may ever verify a token.
        let mut encryption = jwk(&rsa_b(), Algorithm::RS256, "enc");
        encryption["use"] = json!("enc");
        let mut keys = vec![
            jwk(&rsa_a(), Algorithm::RS256, "a"),
            jwk(&ec(), Algorithm::ES256, "ec"),
            encryption,
            json!({"kty": "oct", "kid": "oct", "k": "c2VjcmV0"}),
        ];
        // `a` is not pinned to RS256, so that PS256 may use it too.
        keys[0].as_object_mut().unwrap().remove("alg");
        *state.jwks.lock().unwrap() = json!({ "keys": keys });
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(|State(s): State<Arc<AsState>>| async move {
                    let issuer = s.issuer.lock().unwrap().clone();
                    json_answer(json!({
                        "issuer": issuer,
                        "authorization_endpoint": format!("{issuer}/authorize"),
                        "token_endpoint": format!("{issuer}/token"),
                        "jwks_uri": format!("{issuer}/jwks"),
                        "introspection_endpoint": format!("{issuer}/introspect"),
                        "response_types_supported": ["code"],
                        "code_challenge_methods_supported": ["S256"],
                    }))
                }),
            )
            .route(
                "/jwks",
                get(|State(s): State<Arc<AsState>>| async move {
                    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
                    if s.jwks_hangs.load(Ordering::SeqCst) {
                        std::future::pending::<()>().await;
                    }
                    if s.jwks_broken.load(Ordering::SeqCst) {
                        return AxumStatus::INTERNAL_SERVER_ERROR.into_response();
                    }
                    json_answer(s.jwks.lock().unwrap().clone()).into_response()
                }),
            )
            .route(
                "/introspect",
                post(
                    |State(s): State<Arc<AsState>>, headers: HeaderMap, body: String| async move {
                        s.introspections.fetch_add(1, Ordering::SeqCst);
                        if s.introspection_broken.load(Ordering::SeqCst) {
                            return AxumStatus::BAD_GATEWAY.into_response();
                        }
                        use base64::Engine;
                        let expected = format!(
                            "Basic {}",
                            base64::engine::general_purpose::STANDARD.encode("rs:s3cret")
                        );
                        if headers.get("authorization").and_then(|v| v.to_str().ok())
                            != Some(expected.as_str())
                        {
                            return AxumStatus::UNAUTHORIZED.into_response();
                        }
                        let token = body
                            .split('&')
                            .find_map(|p| p.strip_prefix("token="))
                            .unwrap_or_default()
                            .to_owned();
                        let answer = s
                            .introspection
                            .lock()
                            .unwrap()
                            .get(&token)
                            .cloned()
                            .unwrap_or(json!({"active": false}));
                        json_answer(answer).into_response()
                    },
                ),
            )
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let issuer = format!("http://{}", listener.local_addr().expect("addr"));
        *state.issuer.lock().unwrap() = issuer.clone();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        AuthServer {
            issuer,
            state,
            task,
        }
    }

    fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.issuer)
    }

    fn fetches(&self) -> usize {
        self.state.jwks_fetches.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------------------
// The MCP server under test

/// Tools that show what the handler sees: `whoami` (the principal), `admin` (needs a
/// scope of its own), `confirm` (asks the client, for the requestState binding).
fn mcp_server() -> Server {
    Server::builder(Implementation::new("protected", "1"))
        .tool(Tool::new("whoami", "Who is calling"), |_, ctx| async move {
            let p = ctx.principal();
            Ok(ToolResult::text(
                json!({
                    "subject": p.and_then(|p| p.subject.clone()),
                    "client": p.and_then(|p| p.client_id.clone()),
                    "scopes": p.map(|p| p.scopes.clone()),
                    "issuer": p.map(|p| p.issuer.clone()),
                })
                .to_string(),
            ))
        })
        .tool(Tool::new("admin", "Needs mcp:admin"), |_, _| async move {
            Ok(ToolResult::text("admin done"))
        })
        .tool(Tool::new("confirm", "Asks the user"), |_, ctx| async move {
            let answer = ctx
                .ask(vec![(
                    Some("ok".into()),
                    Ask::Elicit {
                        message: "Sure?".into(),
                        requested_schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                    },
                )])
                .await;
            match answer {
                Ok(a) => Ok(ToolResult::text(format!("confirmed {}", a[0]["action"]))),
                Err(e) if e.kind() == AskErrorKind::InputRequired => Err(e.into()),
                Err(e) => Ok(ToolResult::error(e.to_string())),
            }
        })
        .build()
}

struct Mcp {
    base: String,
}

impl Mcp {
    /// Serves on `http://127.0.0.1:PORT`, whose `/mcp` is the resource `make` is given.
    async fn start(make: impl FnOnce(&str) -> ResourceServerBuilder) -> Mcp {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let resource = format!("{base}/mcp");
        let rs = make(&resource).build().expect("resource server");
        let mut config = HttpConfig::default();
        config.authorization = Some(Arc::new(rs));
        tokio::spawn(mcp_runtime_http::serve_listener(
            mcp_server(),
            listener,
            config,
        ));
        Mcp { base }
    }

    fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }
}

/// A resource server checking JWTs of `as_`, with `extra` applied to its builder.
async fn jwt_server(
    as_: &AuthServer,
    tune: impl FnOnce(
        mcp_runtime_http::auth::JwtVerifierBuilder,
    ) -> mcp_runtime_http::auth::JwtVerifierBuilder,
    extra: impl FnOnce(ResourceServerBuilder) -> ResourceServerBuilder,
) -> Mcp {
    let issuer = as_.issuer.clone();
    let jwks_uri = as_.jwks_uri();
    Mcp::start(move |resource| {
        let verifier = tune(JwtVerifier::builder(&issuer, &jwks_uri, resource))
            .build()
            .expect("verifier");
        extra(
            ResourceServer::builder(resource, verifier)
                .authorization_server(&issuer)
                .scopes_supported(["mcp:tools", "mcp:admin"])
                .tool_scopes("admin", ["mcp:admin"]),
        )
    })
    .await
}

// ---------------------------------------------------------------------------------------
// Requests

struct Reply {
    status: StatusCode,
    www: Option<String>,
    session: Option<String>,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        if let Some(data) = self.body.lines().find_map(|l| l.strip_prefix("data: ")) {
            return serde_json::from_str(data).expect("SSE data");
        }
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The text of a `tools/call` result.
    fn text(&self) -> String {
        let v = self.json();
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text result: {v}"))
            .to_owned()
    }

    /// A challenge parameter of `WWW-Authenticate`.
    fn param(&self, name: &str) -> Option<String> {
        let www = self.www.as_deref()?;
        let start = www.find(&format!("{name}=\""))? + name.len() + 2;
        let rest = &www[start..];
        Some(rest[..rest.find('"')?].to_owned())
    }
}

async fn send(req: reqwest::RequestBuilder) -> Reply {
    let resp = req.send().await.expect("send");
    let header = |n: &str| {
        resp.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (www, session) = (header("www-authenticate"), header("mcp-session-id"));
    Reply {
        status: resp.status(),
        www,
        session,
        body: resp.text().await.expect("body"),
    }
}

fn meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": capabilities})
}

/// A stateless 2026-07-28 `tools/call` of `tool`, with `authorization` as the header.
async fn call_with(base: &str, authorization: Option<&str>, tool: &str, params: Value) -> Reply {
    let mut params = params;
    params["name"] = json!(tool);
    if params.get("_meta").is_none() {
        params["_meta"] = meta(json!({}));
    }
    let mut req = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool);
    if let Some(a) = authorization {
        req = req.header("authorization", a);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    send(req.body(body.to_string())).await
}

async fn call(base: &str, token: Option<&str>, tool: &str) -> Reply {
    let auth = token.map(|t| format!("Bearer {t}"));
    call_with(base, auth.as_deref(), tool, json!({})).await
}

/// POSTs `body` to a legacy session (or opens one with `initialize`).
async fn legacy(base: &str, token: &str, session: Option<&str>, body: Value) -> Reply {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"));
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    send(req.body(body.to_string())).await
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// ---------------------------------------------------------------------------------------
// Log capture: every line any test in this binary logs, at every level

fn log_lines() -> Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&buffer);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing_subscriber::filter::LevelFilter::TRACE)
            .with_writer(move || Capture(Arc::clone(&sink)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one global subscriber");
        buffer
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn discovery_documents_and_the_first_challenge() {
    let as_ = AuthServer::start().await;
    let metadata = AuthorizationServer::discover(&as_.issuer)
        .await
        .expect("discover");
    let mcp = Mcp::start(|resource| {
        let verifier = JwtVerifier::for_server(&metadata, resource)
            .expect("jwks_uri")
            .build()
            .expect("verifier");
        ResourceServer::builder(resource, verifier)
            .discovered_authorization_server(&metadata)
            .scopes_supported(["mcp:tools"])
            .require_scopes(["mcp:tools"])
            .resource_name("Protected test server")
    })
    .await;
    let http = reqwest::Client::new();
    let prm_url = format!("{}/.well-known/oauth-protected-resource/mcp", mcp.base);

    // No token: 401, the challenge naming the metadata and the scope, no error code.
    let r = call(&mcp.base, None, "whoami").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    assert!(
        r.www.as_deref().unwrap().starts_with("Bearer "),
        "{:?}",
        r.www
    );
    assert_eq!(
        r.param("resource_metadata").as_deref(),
        Some(prm_url.as_str())
    );
    assert_eq!(r.param("scope").as_deref(), Some("mcp:tools"));
    assert_eq!(r.param("error"), None);

    // The metadata, at the path-suffixed URL of the challenge and at the root.
    for url in [
        prm_url.clone(),
        format!("{}/.well-known/oauth-protected-resource", mcp.base),
    ] {
        let r = send(http.get(&url)).await;
        assert_eq!(r.status, StatusCode::OK, "{url}");
        let doc = r.json();
        assert_eq!(doc["resource"], json!(mcp.resource()));
        assert_eq!(doc["authorization_servers"], json!([as_.issuer]));
        assert_eq!(doc["scopes_supported"], json!(["mcp:tools"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert_eq!(doc["resource_name"], json!("Protected test server"));
    }
    // 2025-03-26 clients look for the authorization server's metadata at our origin.
    let mirrored = send(http.get(format!(
        "{}/.well-known/oauth-authorization-server",
        mcp.base
    )))
    .await;
    assert_eq!(mirrored.status, StatusCode::OK);
    let mirror = mirrored.json();
    assert_eq!(mirror["issuer"], json!(as_.issuer));
    for member in [
        "authorization_endpoint",
        "token_endpoint",
        "code_challenge_methods_supported",
    ] {
        assert_eq!(mirror[member], metadata.metadata()[member], "{member}");
    }
    assert!(
        mirror.get("jwks_uri").is_none() && mirror.get("introspection_endpoint").is_none(),
        "{mirror}"
    );

    // Every MCP route is behind the token; unknown paths stay 404.
    for (method, path) in [
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
        ("GET", "/sse"),
        ("POST", "/messages?sessionId=x"),
    ] {
        let r = send(http.request(method.parse().unwrap(), format!("{}{path}", mcp.base))).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{method} {path}");
        assert!(r.param("resource_metadata").is_some(), "{method} {path}");
    }
    let r = send(http.get(format!("{}/nothing", mcp.base))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // A good token is served, and the handler knows who called.
    let good = sign(
        Algorithm::RS256,
        Some("a"),
        &claims(&as_.issuer, &mcp.resource(), "alice", "mcp:tools"),
        &rsa_a(),
    );
    let r = call(&mcp.base, Some(&good), "whoami").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let who: Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(
        who,
        json!({"subject": "alice", "client": "test-client", "scopes": ["mcp:tools"], "issuer": as_.issuer})
    );
}

#[tokio::test]
async fn hostile_tokens_each_get_their_status() {
    let log = log_lines();
    let as_ = AuthServer::start().await;
    let mcp = jwt_server(&as_, |b| b, |b| b).await;
    let (iss, res) = (as_.issuer.clone(), mcp.resource());
    let good = claims(&iss, &res, "alice", "mcp:tools");
    let with = |patch: Value| {
        let mut c = good.clone();
        for (k, v) in patch.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let invalid = |why: &'static str, token: String| {
        (why, token, StatusCode::UNAUTHORIZED, Some("invalid_token"))
    };
    let mut cases = vec![
        invalid(
            "expired",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"exp": now() - 120})),
                &rsa_a(),
            ),
        ),
        invalid(
            "not yet valid",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"nbf": now() + 600})),
                &rsa_a(),
            ),
        ),
        invalid(
            "issued an hour in the future (iat)",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"iat": now() + 3600})),
                &rsa_a(),
            ),
        ),
        invalid(
            "names neither its subject nor its client (RFC 9068 requires both)",
            sign(
                Algorithm::RS256,
                Some("a"),
                &{
                    let mut c = good.clone();
                    c.as_object_mut().unwrap().remove("sub");
                    c.as_object_mut().unwrap().remove("client_id");
                    c
                },
                &rsa_a(),
            ),
        ),
        invalid(
            "audience with extra trailing slashes",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"aud": format!("{res}//")})),
                &rsa_a(),
            ),
        ),
        invalid(
            "wrong audience",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"aud": "http://127.0.0.1:1/other"})),
                &rsa_a(),
            ),
        ),
        invalid(
            "audience of another host",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"aud": res.replace("127.0.0.1", "localhost")})),
                &rsa_a(),
            ),
        ),
        invalid(
            "no audience",
            sign(
                Algorithm::RS256,
                Some("a"),
                &{
                    let mut c = good.clone();
                    c.as_object_mut().unwrap().remove("aud");
                    c
                },
                &rsa_a(),
            ),
        ),
        invalid(
            "wrong issuer",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"iss": "http://127.0.0.1:1"})),
                &rsa_a(),
            ),
        ),
        invalid(
            "bad signature (another key, same kid)",
            sign(Algorithm::RS256, Some("a"), &good, &rsa_b()),
        ),
        invalid(
            "HS256 signed with the public key",
            sign(
                Algorithm::HS256,
                Some("a"),
                &good,
                &EncodingKey::from_secret(RSA_A_PUBLIC),
            ),
        ),
        invalid(
            "HS256 without kid",
            sign(
                Algorithm::HS256,
                None,
                &good,
                &EncodingKey::from_secret(RSA_A_PUBLIC),
            ),
        ),
        invalid(
            "alg none",
            format!(
                "{}.{}.",
                b64(&json!({"alg": "none", "typ": "at+jwt"})),
                b64(&good)
            ),
        ),
        invalid(
            "alg None, signature kept",
            format!(
                "{}.{}.{}",
                b64(&json!({"alg": "None", "kid": "a"})),
                b64(&good),
                sign(Algorithm::RS256, Some("a"), &good, &rsa_a())
                    .rsplit('.')
                    .next()
                    .unwrap()
            ),
        ),
        invalid(
            "RSA key named for an ES256 token",
            sign(Algorithm::ES256, Some("a"), &good, &ec()),
        ),
        invalid(
            "unknown kid",
            sign(Algorithm::RS256, Some("zz"), &good, &rsa_b()),
        ),
        invalid(
            "an encryption key's kid",
            sign(Algorithm::RS256, Some("enc"), &good, &rsa_b()),
        ),
        invalid(
            "a symmetric key's kid",
            sign(Algorithm::RS256, Some("oct"), &good, &rsa_b()),
        ),
        invalid(
            "HS256 with the symmetric key of the set",
            sign(
                Algorithm::HS256,
                Some("oct"),
                &good,
                &EncodingKey::from_secret(b"secret"),
            ),
        ),
        invalid(
            "padded signature",
            format!("{}==", sign(Algorithm::RS256, Some("a"), &good, &rsa_a())),
        ),
        invalid("empty signature", {
            let t = sign(Algorithm::RS256, Some("a"), &good, &rsa_a());
            format!("{}.", &t[..t.rfind('.').unwrap()])
        }),
        invalid("claims swapped after signing", {
            let t = sign(Algorithm::RS256, Some("a"), &good, &rsa_a());
            let parts: Vec<&str> = t.split('.').collect();
            format!(
                "{}.{}.{}",
                parts[0],
                b64(&with(json!({"sub": "admin"}))),
                parts[2]
            )
        }),
        invalid(
            "exp as a string",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"exp": "99999999999"})),
                &rsa_a(),
            ),
        ),
        invalid(
            "nbf as a string",
            sign(
                Algorithm::RS256,
                Some("a"),
                &with(json!({"nbf": "99999999999"})),
                &rsa_a(),
            ),
        ),
        invalid(
            "no exp",
            sign(
                Algorithm::RS256,
                Some("a"),
                &{
                    let mut c = good.clone();
                    c.as_object_mut().unwrap().remove("exp");
                    c
                },
                &rsa_a(),
            ),
        ),
        invalid("an ID token type", {
            let mut h = Header::new(Algorithm::RS256);
            h.kid = Some("a".into());
            h.typ = Some("logout+jwt".into());
            jsonwebtoken::encode(&h, &good, &rsa_a()).unwrap()
        }),
        invalid(
            "critical header extension",
            format!(
                "{}.{}.x",
                b64(&json!({"alg": "RS256", "kid": "a", "crit": ["exp"]})),
                b64(&good)
            ),
        ),
        invalid("not a JWT", "abc".into()),
        invalid(
            "four parts",
            format!("{}.x", sign(Algorithm::RS256, Some("a"), &good, &rsa_a())),
        ),
        invalid(
            "header not JSON",
            format!("{}.{}.x", b64(&json!("text")), b64(&good)),
        ),
        invalid("oversized (17 KiB)", "a".repeat(17 * 1024)),
    ];
    let bad_request = |why: &'static str, header: String| {
        (
            why,
            header,
            StatusCode::BAD_REQUEST,
            Some("invalid_request"),
        )
    };
    let mut raw = vec![
        bad_request("Bearer without token", "Bearer".into()),
        bad_request("Bearer and spaces", "Bearer    ".into()),
        bad_request("two tokens", "Bearer a b".into()),
        bad_request("quote in the token", "Bearer a\"b".into()),
        (
            "Basic credentials",
            "Basic dXNlcjpwYXNz".into(),
            StatusCode::UNAUTHORIZED,
            None,
        ),
    ];
    for (why, token, status, error) in cases.drain(..) {
        let r = call(&mcp.base, Some(&token), "whoami").await;
        assert_eq!(r.status, status, "{why}: {}", r.body);
        assert_eq!(r.param("error").as_deref(), error, "{why}: {:?}", r.www);
        assert!(r.param("resource_metadata").is_some(), "{why}");
        assert!(!r.body.contains(&token), "{why}: the token is echoed");
    }
    for (why, header, status, error) in raw.drain(..) {
        let r = call_with(&mcp.base, Some(&header), "whoami", json!({})).await;
        assert_eq!(r.status, status, "{why}: {}", r.body);
        assert_eq!(r.param("error").as_deref(), error, "{why}: {:?}", r.www);
    }
    // Two Authorization headers; a token in the query string.
    let token = sign(Algorithm::RS256, Some("a"), &good, &rsa_a());
    let http = reqwest::Client::new();
    let r = send(
        http.post(format!("{}/mcp", mcp.base))
            .header("authorization", format!("Bearer {token}"))
            .header("authorization", format!("Bearer {token}"))
            .body("{}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "two headers: {}", r.body);
    let r = send(
        http.post(format!("{}/mcp?access_token={token}", mcp.base))
            .body("{}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "query token: {}", r.body);
    assert_eq!(r.param("error").as_deref(), Some("invalid_request"));

    // And the genuine articles pass: RS256 and ES256 (each key pinned to its kid), with or
    // without typ, and an audience list that names us.
    let es = sign(Algorithm::ES256, Some("ec"), &good, &ec());
    let untyped = {
        let mut h = Header::new(Algorithm::RS256);
        h.kid = Some("a".into());
        jsonwebtoken::encode(&h, &good, &rsa_a()).unwrap()
    };
    let listed = sign(
        Algorithm::RS256,
        Some("a"),
        &with(json!({"aud": ["https://elsewhere", res.to_uppercase().replace("/MCP", "/mcp")]})),
        &rsa_a(),
    );
    let ps = sign(Algorithm::PS256, Some("a"), &good, &rsa_a());
    let slash = sign(
        Algorithm::RS256,
        Some("a"),
        &with(json!({"aud": format!("{res}/")})),
        &rsa_a(),
    );
    let without = |claim: &str| {
        let mut c = good.clone();
        c.as_object_mut().unwrap().remove(claim);
        sign(Algorithm::RS256, Some("a"), &c, &rsa_a())
    };
    let (client_only, subject_only) = (without("sub"), without("client_id"));
    for (why, token) in [
        ("RS256", &token),
        ("PS256", &ps),
        ("ES256", &es),
        ("no typ", &untyped),
        ("aud list", &listed),
        ("aud with one trailing slash", &slash),
        ("a client, no subject", &client_only),
        ("a subject, no client", &subject_only),
    ] {
        let r = call(&mcp.base, Some(token), "whoami").await;
        assert_eq!(r.status, StatusCode::OK, "{why}: {}", r.body);
    }
    // Nothing this test sent as a token was logged, whatever the level.
    let log = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
    for token in [&token, &es, &untyped, &listed] {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!log.contains(signature), "a token reached the log");
    }
    assert!(
        log.contains("bearer token refused"),
        "the refusals are logged (without tokens)"
    );
}

#[tokio::test]
async fn scopes_per_server_per_tool_and_implied() {
    let as_ = AuthServer::start().await;
    let mcp = jwt_server(
        &as_,
        |b| b,
        |b| {
            b.require_scopes(["mcp:tools"])
                .scope_implies("mcp:root", ["mcp:admin", "mcp:tools"])
        },
    )
    .await;
    let token = |scope: &str| {
        sign(
            Algorithm::RS256,
            Some("a"),
            &claims(&as_.issuer, &mcp.resource(), "alice", scope),
            &rsa_a(),
        )
    };

    // The server's scope is missing: 403 insufficient_scope naming it.
    let r = call(&mcp.base, Some(&token("other")), "whoami").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.param("error").as_deref(), Some("insufficient_scope"));
    assert_eq!(r.param("scope").as_deref(), Some("mcp:tools"));
    assert!(r.param("resource_metadata").is_some());

    // The tool's scope is missing: 403 naming every scope the call needs.
    let r = call(&mcp.base, Some(&token("mcp:tools")), "admin").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.param("scope").as_deref(), Some("mcp:tools mcp:admin"));
    assert!(r.param("error_description").unwrap().contains("admin"));
    // Other tools are still served with that token; the tool is with its scope.
    assert_eq!(
        call(&mcp.base, Some(&token("mcp:tools")), "whoami")
            .await
            .status,
        StatusCode::OK
    );
    let r = call(&mcp.base, Some(&token("mcp:tools mcp:admin")), "admin").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.text(), "admin done");
    // A broader scope implies the narrower ones.
    let r = call(&mcp.base, Some(&token("mcp:root")), "admin").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // In a 2025-03-26 session, a batch calling the tool is refused whole.
    let t = token("mcp:tools");
    let r = legacy(&mcp.base, &t, None, initialize("2025-03-26")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let session = r.session.unwrap();
    legacy(
        &mcp.base,
        &t,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let batch = json!([
        rpc(1, "tools/call", json!({"name": "whoami"})),
        rpc(2, "tools/call", json!({"name": "admin"}))
    ]);
    let r = legacy(&mcp.base, &t, Some(&session), batch).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.param("scope").as_deref(), Some("mcp:tools mcp:admin"));
}

#[tokio::test]
async fn a_session_belongs_to_the_principal_that_opened_it() {
    let as_ = AuthServer::start().await;
    let mcp = jwt_server(&as_, |b| b, |b| b).await;
    let token = |sub: &str, scope: &str| {
        sign(
            Algorithm::RS256,
            Some("a"),
            &claims(&as_.issuer, &mcp.resource(), sub, scope),
            &rsa_a(),
        )
    };
    let (alice, bob) = (token("alice", "mcp:tools"), token("bob", "mcp:tools"));

    let r = legacy(&mcp.base, &alice, None, initialize("2025-11-25")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let session = r.session.expect("session id");
    let notified = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        legacy(&mcp.base, &alice, Some(&session), notified)
            .await
            .status,
        StatusCode::ACCEPTED
    );
    let whoami = rpc(2, "tools/call", json!({"name": "whoami"}));

    // Bob presents Alice's session id: to him it does not exist (404, as an unknown id).
    let r = legacy(&mcp.base, &bob, Some(&session), whoami.clone()).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let http = reqwest::Client::new();
    for method in ["GET", "DELETE"] {
        let r = send(
            http.request(method.parse().unwrap(), format!("{}/mcp", mcp.base))
                .header("authorization", format!("Bearer {bob}"))
                .header("mcp-session-id", &session),
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method}: {}", r.body);
    }
    // Alice's refreshed token (same user and client, other scopes) keeps the session, and
    // the handler sees the scopes of the token of this request.
    let refreshed = token("alice", "mcp:tools mcp:admin");
    let r = legacy(&mcp.base, &refreshed, Some(&session), whoami).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let who: Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(who["subject"], "alice");
    assert_eq!(who["scopes"], json!(["mcp:tools", "mcp:admin"]));
    // The same user through another client is another principal.
    let mut other_client = claims(&as_.issuer, &mcp.resource(), "alice", "mcp:tools");
    other_client["client_id"] = json!("another-client");
    let other_client = sign(Algorithm::RS256, Some("a"), &other_client, &rsa_a());
    let r = legacy(
        &mcp.base,
        &other_client,
        Some(&session),
        rpc(3, "tools/list", json!({})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // Alice ends it.
    let r = send(
        http.delete(format!("{}/mcp", mcp.base))
            .header("authorization", format!("Bearer {alice}"))
            .header("mcp-session-id", &session),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);

    // HTTP+SSE (2024-11-05): the stream's session is Alice's too.
    let mut stream = http
        .get(format!("{}/sse", mcp.base))
        .header("authorization", format!("Bearer {alice}"))
        .send()
        .await
        .expect("sse");
    assert_eq!(stream.status(), StatusCode::OK);
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let endpoint = first
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("endpoint event")
        .to_owned();
    let post = |token: &str| {
        http.post(format!("{}{endpoint}", mcp.base))
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"))
            .body(initialize("2024-11-05").to_string())
    };
    assert_eq!(send(post(&bob)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(send(post(&alice)).await.status, StatusCode::ACCEPTED);
}

#[tokio::test]
async fn a_request_state_is_bound_to_its_principal() {
    let as_ = AuthServer::start().await;
    let mcp = jwt_server(&as_, |b| b, |b| b).await;
    let token = |sub: &str| {
        sign(
            Algorithm::RS256,
            Some("a"),
            &claims(&as_.issuer, &mcp.resource(), sub, "mcp:tools"),
            &rsa_a(),
        )
    };
    let (alice, bob) = (token("alice"), token("bob"));
    let caps = json!({"elicitation": {}});
    let first = call_with(
        &mcp.base,
        Some(&format!("Bearer {alice}")),
        "confirm",
        json!({"_meta": meta(caps.clone())}),
    )
    .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let result = first.json()["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let state = result["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    let retry = json!({
        "_meta": meta(caps),
        "requestState": state,
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}},
    });
    // Bob replays Alice's state with his own (valid) token: refused.
    let r = call_with(
        &mcp.base,
        Some(&format!("Bearer {bob}")),
        "confirm",
        retry.clone(),
    )
    .await;
    let error = r.json()["error"].clone();
    assert_eq!(error["code"], -32602, "{}", r.body);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("another request"),
        "{error}"
    );
    // Alice's retry completes.
    let r = call_with(
        &mcp.base,
        Some(&format!("Bearer {alice}")),
        "confirm",
        retry,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.text(), "confirmed \"accept\"");
}

#[tokio::test]
async fn keys_rotate_at_most_once_per_interval() {
    let as_ = AuthServer::start().await;
    let mcp = jwt_server(
        &as_,
        |b| {
            b.min_refresh_interval(Duration::from_secs(2))
                .fetch_timeout(Duration::from_secs(1))
        },
        |b| b.verified_token_cache(Duration::ZERO, 0),
    )
    .await;
    let good = claims(&as_.issuer, &mcp.resource(), "alice", "mcp:tools");
    let a = sign(Algorithm::RS256, Some("a"), &good, &rsa_a());
    assert_eq!(
        call(&mcp.base, Some(&a), "whoami").await.status,
        StatusCode::OK
    );
    assert_eq!(as_.fetches(), 1, "fetched on first use");
    for _ in 0..5 {
        assert_eq!(
            call(&mcp.base, Some(&a), "whoami").await.status,
            StatusCode::OK
        );
    }
    assert_eq!(as_.fetches(), 1, "kept");
    // The server rotates to key b: its tokens verify after one refetch. (The interval is
    // long enough that the three requests below, on a loaded machine, fall inside it.)
    tokio::time::sleep(Duration::from_millis(2100)).await;
    *as_.state.jwks.lock().unwrap() = json!({"keys": [jwk(&rsa_b(), Algorithm::RS256, "b")]});
    let b = sign(Algorithm::RS256, Some("b"), &good, &rsa_b());
    assert_eq!(
        call(&mcp.base, Some(&b), "whoami").await.status,
        StatusCode::OK
    );
    assert_eq!(as_.fetches(), 2);
    // Forged kids right after do not make it fetch again (401 from the set in hand) …
    for kid in ["x1", "x2", "x3"] {
        let forged = sign(Algorithm::RS256, Some(kid), &good, &rsa_b());
        let r = call(&mcp.base, Some(&forged), "whoami").await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        as_.fetches(),
        2,
        "unknown kids within the interval fetch nothing"
    );
    // … and key a, withdrawn, is refused once the set was refetched.
    assert_eq!(
        call(&mcp.base, Some(&a), "whoami").await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn verification_fails_closed() {
    // A key set that cannot be fetched at all: 503, never a pass.
    let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_uri = format!("http://{}/jwks", gone.local_addr().unwrap());
    drop(gone);
    let as_ = AuthServer::start().await;
    let issuer = as_.issuer.clone();
    let mcp = Mcp::start(move |resource| {
        let verifier = JwtVerifier::builder(&issuer, &dead_uri, resource)
            .build()
            .unwrap();
        ResourceServer::builder(resource, verifier).authorization_server(&issuer)
    })
    .await;
    let token = sign(
        Algorithm::RS256,
        Some("a"),
        &claims(&as_.issuer, &mcp.resource(), "alice", ""),
        &rsa_a(),
    );
    let r = call(&mcp.base, Some(&token), "whoami").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(!r.body.contains("alice"));

    // A key set fetched once, then broken: the old set serves until max_stale, then 503.
    let mcp = jwt_server(
        &as_,
        |b| {
            b.key_cache(Duration::ZERO, Duration::from_secs(2))
                .min_refresh_interval(Duration::ZERO)
        },
        |b| b.verified_token_cache(Duration::ZERO, 0),
    )
    .await;
    let token = sign(
        Algorithm::RS256,
        Some("a"),
        &claims(&as_.issuer, &mcp.resource(), "alice", ""),
        &rsa_a(),
    );
    assert_eq!(
        call(&mcp.base, Some(&token), "whoami").await.status,
        StatusCode::OK
    );
    as_.state.jwks_broken.store(true, Ordering::SeqCst);
    assert_eq!(
        call(&mcp.base, Some(&token), "whoami").await.status,
        StatusCode::OK,
        "stale set still used"
    );
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let r = call(&mcp.base, Some(&token), "whoami").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    as_.state.jwks_broken.store(false, Ordering::SeqCst);
    assert_eq!(
        call(&mcp.base, Some(&token), "whoami").await.status,
        StatusCode::OK,
        "recovers"
    );
}

#[tokio::test]
async fn introspection_verifies_opaque_tokens() {
    let as_ = AuthServer::start().await;
    let metadata = AuthorizationServer::discover(&as_.issuer).await.unwrap();
    let start = |secret: &'static str| {
        let metadata = metadata.clone();
        Mcp::start(move |resource| {
            let verifier = IntrospectionVerifier::for_server(&metadata, resource)
                .unwrap()
                .client_credentials("rs", secret)
                .build()
                .unwrap();
            ResourceServer::builder(resource, verifier)
                .discovered_authorization_server(&metadata)
                .tool_scopes("admin", ["mcp:admin"])
                .verified_token_cache(Duration::from_secs(60), 100)
        })
    };
    let mcp = start("s3cret").await;
    let answer = |aud: &str, active: bool| {
        json!({"active": active, "iss": as_.issuer, "sub": "carol", "client_id": "c1",
               "aud": aud, "scope": "mcp:tools", "exp": now() + 600, "token_type": "Bearer"})
    };
    {
        let mut table = as_.state.introspection.lock().unwrap();
        table.insert("opaque-good".into(), answer(&mcp.resource(), true));
        table.insert("opaque-revoked".into(), answer(&mcp.resource(), false));
        table.insert(
            "opaque-elsewhere".into(),
            answer("https://elsewhere/mcp", true),
        );
        let mut expired = answer(&mcp.resource(), true);
        expired["exp"] = json!(now() - 100);
        table.insert("opaque-expired".into(), expired);
    }
    let r = call(&mcp.base, Some("opaque-good"), "whoami").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let who: Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(who["subject"], "carol");
    assert_eq!(who["client"], "c1");
    let asked = as_.state.introspections.load(Ordering::SeqCst);
    assert_eq!(
        call(&mcp.base, Some("opaque-good"), "whoami").await.status,
        StatusCode::OK
    );
    assert_eq!(
        as_.state.introspections.load(Ordering::SeqCst),
        asked,
        "answered from the cache"
    );
    for bad in [
        "opaque-revoked",
        "opaque-elsewhere",
        "opaque-expired",
        "opaque-unknown",
    ] {
        let r = call(&mcp.base, Some(bad), "whoami").await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{bad}: {}", r.body);
        assert_eq!(r.param("error").as_deref(), Some("invalid_token"), "{bad}");
    }
    let r = call(&mcp.base, Some("opaque-good"), "admin").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    // The endpoint refuses our credentials: 503, not a pass nor a 401 blaming the client.
    let misconfigured = start("wrong").await;
    let r = call(&misconfigured.base, Some("opaque-good"), "whoami").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    // The endpoint fails: 503.
    as_.state.introspection_broken.store(true, Ordering::SeqCst);
    let r = call(&mcp.base, Some("opaque-fresh"), "whoami").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    // The tokens went to the introspection endpoint (in a request body) and nowhere else:
    // not into any log line, at any level, of the server or of its HTTP client; nor the
    // resource server's client secret.
    let log = String::from_utf8_lossy(&log_lines().lock().unwrap()).into_owned();
    assert!(
        log.contains("cannot verify bearer tokens"),
        "the capture works"
    );
    for secret in ["opaque-good", "opaque-revoked", "opaque-fresh", "s3cret"] {
        assert!(!log.contains(secret), "{secret} reached the log");
    }
}

#[tokio::test]
async fn discovery_checks_the_issuer() {
    let as_ = AuthServer::start().await;
    // The document names its issuer: a client of another name is refused (mix-up defence).
    let alias = as_.issuer.replace("127.0.0.1", "localhost");
    let err = AuthorizationServer::discover(&alias).await.unwrap_err();
    assert!(err.0.contains("another issuer"), "{err}");
    // Plain http is for loopback only.
    let err = AuthorizationServer::discover("http://auth.example.com")
        .await
        .unwrap_err();
    assert!(err.0.contains("https"), "{err}");
    // Nothing there.
    let err = AuthorizationServer::discover("http://127.0.0.1:1")
        .await
        .unwrap_err();
    assert!(err.0.contains("no metadata found"), "{err}");
}

#[tokio::test]
async fn two_authorization_servers_each_with_its_own_keys() {
    let (one, two) = (AuthServer::start().await, AuthServer::start().await);
    // The second server signs with key b only.
    *two.state.jwks.lock().unwrap() = json!({"keys": [jwk(&rsa_b(), Algorithm::RS256, "b")]});
    let (i1, i2) = (one.issuer.clone(), two.issuer.clone());
    let (j1, j2) = (one.jwks_uri(), two.jwks_uri());
    let mcp = Mcp::start(move |resource| {
        let verifier = ByIssuer::new()
            .issuer(
                &i1,
                JwtVerifier::builder(&i1, &j1, resource).build().unwrap(),
            )
            .issuer(
                &i2,
                JwtVerifier::builder(&i2, &j2, resource).build().unwrap(),
            );
        ResourceServer::builder(resource, verifier)
            .authorization_server(&i1)
            .authorization_server(&i2)
    })
    .await;
    let prm = send(reqwest::Client::new().get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        mcp.base
    )))
    .await
    .json();
    assert_eq!(
        prm["authorization_servers"],
        json!([one.issuer, two.issuer])
    );
    let res = mcp.resource();
    let from_one = sign(
        Algorithm::RS256,
        Some("a"),
        &claims(&one.issuer, &res, "u1", ""),
        &rsa_a(),
    );
    let from_two = sign(
        Algorithm::RS256,
        Some("b"),
        &claims(&two.issuer, &res, "u2", ""),
        &rsa_b(),
    );
    for token in [&from_one, &from_two] {
        let r = call(&mcp.base, Some(token), "whoami").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    // Naming server one, signed with server two's key: server one's keys decide.
    let mixed = sign(
        Algorithm::RS256,
        Some("b"),
        &claims(&one.issuer, &res, "u1", ""),
        &rsa_b(),
    );
    assert_eq!(
        call(&mcp.base, Some(&mixed), "whoami").await.status,
        StatusCode::UNAUTHORIZED
    );
    // An issuer nobody listed: refused, and no key set fetched for it.
    let before = (one.fetches(), two.fetches());
    let stranger = sign(
        Algorithm::RS256,
        Some("a"),
        &claims("http://127.0.0.1:1", &res, "x", ""),
        &rsa_a(),
    );
    let r = call(&mcp.base, Some(&stranger), "whoami").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r
        .param("error_description")
        .unwrap()
        .contains("does not trust"));
    assert_eq!((one.fetches(), two.fetches()), before);
}

/// A `tools/list` of 2026-07-28 with `token`: the reply.
async fn list_tools(base: &str, token: &str) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta(json!({}))}});
    let req = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .header("authorization", format!("Bearer {token}"));
    send(req.body(body.to_string())).await
}

/// The independent probe's finding: an authorization server that accepts connections and
/// never answers held every token with an unknown key for a whole fetch timeout, one after
/// the other, and once the set was past its lifetime valid tokens too. Now a stale set
/// serves while it is refreshed, every token that needs a fetch waits on the same one, a
/// token with an unknown key is answered 503 (cannot decide) while the set cannot be
/// fetched, and a rotated key is found once the server answers again.
#[tokio::test]
async fn a_hanging_authorization_server_holds_no_valid_token() {
    let as_ = AuthServer::start().await;
    let fetch_timeout = Duration::from_millis(1500);
    let mcp = jwt_server(
        &as_,
        |b| {
            b.key_cache(Duration::from_secs(1), Duration::from_secs(3600))
                .min_refresh_interval(Duration::from_secs(3))
                .fetch_timeout(fetch_timeout)
        },
        |b| b.verified_token_cache(Duration::ZERO, 0),
    )
    .await;
    let good = claims(&as_.issuer, &mcp.resource(), "alice", "mcp:tools");
    let valid = sign(Algorithm::RS256, Some("a"), &good, &rsa_a());
    assert_eq!(
        call(&mcp.base, Some(&valid), "whoami").await.status,
        StatusCode::OK
    );
    assert_eq!(as_.fetches(), 1);

    // The set passes its lifetime (and the refresh interval passes) while the
    // authorization server hangs: a valid token is still answered at once (the refresh
    // runs in the background).
    as_.state.jwks_hangs.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let started = std::time::Instant::now();
    assert_eq!(
        call(&mcp.base, Some(&valid), "whoami").await.status,
        StatusCode::OK
    );
    assert!(
        started.elapsed() < fetch_timeout / 2,
        "a valid token waited {:?}",
        started.elapsed()
    );

    // Twelve tokens signed with a key the set does not hold (a rotation), at once: they
    // share the one fetch under way and are all answered 503 when it times out, in about
    // one timeout rather than twelve; a valid token meanwhile is not held.
    let rotated = sign(Algorithm::RS256, Some("rotated"), &good, &rsa_b());
    let started = std::time::Instant::now();
    let waiting: Vec<_> = (0..12)
        .map(|_| {
            let (base, token) = (mcp.base.clone(), rotated.clone());
            tokio::spawn(async move { call(&base, Some(&token), "whoami").await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let during = std::time::Instant::now();
    assert_eq!(
        call(&mcp.base, Some(&valid), "whoami").await.status,
        StatusCode::OK
    );
    assert!(
        during.elapsed() < fetch_timeout / 2,
        "held behind the fetch: {:?}",
        during.elapsed()
    );
    for w in waiting {
        let r = w.await.unwrap();
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
        assert_eq!(r.param("error"), None, "no invalid_token: {:?}", r.www);
    }
    let all = started.elapsed();
    assert!(all < fetch_timeout * 2, "the twelve took {all:?}");
    assert_eq!(as_.fetches(), 2, "one fetch for all of them");

    // Right after the failed fetch (within the refresh interval): 503 at once, no fetch.
    let started = std::time::Instant::now();
    let r = call(&mcp.base, Some(&rotated), "whoami").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(started.elapsed() < fetch_timeout / 2);
    assert_eq!(as_.fetches(), 2);

    // The server answers again, with the rotated key: found once the interval has passed.
    as_.state.jwks_hangs.store(false, Ordering::SeqCst);
    *as_.state.jwks.lock().unwrap() = json!({"keys": [
        jwk(&rsa_a(), Algorithm::RS256, "a"),
        jwk(&rsa_b(), Algorithm::RS256, "rotated"),
    ]});
    tokio::time::sleep(Duration::from_secs(2)).await;
    let r = call(&mcp.base, Some(&rotated), "whoami").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[test]
fn the_fetch_timeout_is_shorter_than_the_refresh_interval() {
    let build = |interval: u64, timeout: u64| {
        JwtVerifier::builder(
            "https://as",
            "https://as/jwks",
            "https://mcp.example.com/mcp",
        )
        .min_refresh_interval(Duration::from_secs(interval))
        .fetch_timeout(Duration::from_secs(timeout))
        .build()
        .map(|_| ())
    };
    assert!(build(10, 5).is_ok());
    assert!(build(10, 10).unwrap_err().0.contains("shorter"));
    assert!(build(2, 5).is_err());
    assert!(
        build(0, 5).is_ok(),
        "no interval: nothing to be shorter than"
    );
    assert!(build(10, 0).is_err());
}

/// `conformance_server --authorization-server ISSUER --required-scope S --tool-scope T=S`:
/// 403 `insufficient_scope` from outside, naming every scope the operation needs; a tool
/// whose scope the token lacks is not listed for it.
#[tokio::test]
async fn the_example_server_takes_required_and_per_tool_scopes() {
    let as_ = AuthServer::start().await;
    let issuer = as_.issuer.clone();
    let mcp = tokio::task::spawn_blocking(move || {
        kit::process::HttpServer::start_example_with(
            "conformance_server",
            &[
                "--authorization-server",
                &issuer,
                "--required-scope",
                "mcp:tools",
                "--tool-scope",
                "test_simple_text=mcp:admin",
                "--tool-scope",
                "test_simple_text=mcp:text",
            ],
        )
    })
    .await
    .unwrap();
    let base = mcp.url("");
    let resource = mcp.url("/mcp");
    let token = |scope: &str| {
        sign(
            Algorithm::RS256,
            Some("a"),
            &claims(&as_.issuer, &resource, "alice", scope),
            &rsa_a(),
        )
    };
    // Without the required scope: 403 on any request, naming it.
    let r = call(&base, Some(&token("other")), "test_image_content").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.param("error").as_deref(), Some("insufficient_scope"));
    assert_eq!(r.param("scope").as_deref(), Some("mcp:tools"));
    // With it, a tool of no scope of its own is called; the scoped one is refused,
    // naming everything it needs.
    let tools = token("mcp:tools");
    let r = call(&base, Some(&tools), "test_image_content").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = call(&base, Some(&tools), "test_simple_text").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.param("error").as_deref(), Some("insufficient_scope"));
    assert_eq!(
        r.param("scope").as_deref(),
        Some("mcp:tools mcp:admin mcp:text")
    );
    let r = call(
        &base,
        Some(&token("mcp:tools mcp:admin")),
        "test_simple_text",
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "both tool scopes are needed"
    );
    let r = call(
        &base,
        Some(&token("mcp:tools mcp:admin mcp:text")),
        "test_simple_text",
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Listed only for the token that may call it.
    let listed = |token: String| {
        let base = base.clone();
        async move { tool_names(&list_tools(&base, &token).await) }
    };
    assert!(!listed(token("mcp:tools"))
        .await
        .contains(&"test_simple_text".to_owned()));
    assert!(listed(token("mcp:tools mcp:admin mcp:text"))
        .await
        .contains(&"test_simple_text".to_owned()));
}

fn tool_names(reply: &Reply) -> Vec<String> {
    let v = reply.json();
    v["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {v}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A tool whose per-tool scopes a token lacks is not listed for that token, in either
/// era; callers who see different lists never get each other's (the pages are cached
/// per set of visible tools), and such lists are `private`.
#[tokio::test]
async fn tools_whose_scopes_the_token_lacks_are_not_listed() {
    let as_ = AuthServer::start().await;
    let mcp = jwt_server(&as_, |b| b, |b| b).await;
    let (iss, res) = (as_.issuer.clone(), mcp.resource());
    let plain = sign(
        Algorithm::RS256,
        Some("a"),
        &claims(&iss, &res, "alice", "mcp:tools"),
        &rsa_a(),
    );
    let admin = sign(
        Algorithm::RS256,
        Some("a"),
        &claims(&iss, &res, "bob", "mcp:tools mcp:admin"),
        &rsa_a(),
    );
    for _ in 0..3 {
        let r = list_tools(&mcp.base, &plain).await;
        assert_eq!(tool_names(&r), ["whoami", "confirm"], "{}", r.body);
        assert_eq!(r.json()["result"]["cacheScope"], "private");
        let r = list_tools(&mcp.base, &admin).await;
        assert_eq!(tool_names(&r), ["whoami", "admin", "confirm"], "{}", r.body);
        assert_eq!(r.json()["result"]["cacheScope"], "private");
    }
    // A legacy session's list, for each.
    for (token, expected) in [
        (&plain, vec!["whoami", "confirm"]),
        (&admin, vec!["whoami", "admin", "confirm"]),
    ] {
        let opened = legacy(&mcp.base, token, None, initialize("2025-06-18")).await;
        let session = opened.session.clone().expect("a session");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        legacy(&mcp.base, token, Some(&session), note).await;
        let r = legacy(
            &mcp.base,
            token,
            Some(&session),
            rpc(1, "tools/list", json!({})),
        )
        .await;
        assert_eq!(tool_names(&r), expected, "{}", r.body);
    }
}

/// One HTTP/1.1 request on `stream`, its head and its body sent apart (as httpx does, the
/// body a moment later), and the head of the answer read back.
async fn exchange_on(stream: &mut tokio::net::TcpStream, head: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut chunk = [0_u8; 4096];
    // The whole answer: its head, then `content-length` bytes of body.
    loop {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        assert!(
            read > 0,
            "the connection was closed: {}",
            String::from_utf8_lossy(&answer)
        );
        answer.extend_from_slice(&chunk[..read]);
        let text = String::from_utf8_lossy(&answer).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if answer.len() >= end + 4 + length {
                return text[..end].to_owned();
            }
        }
    }
}

#[tokio::test]
async fn a_refused_request_leaves_its_connection_usable() {
    // hyper closes a connection whose request body was left unread, without a word: a
    // client that reuses it for its next request (the retry with a token after a 401, or
    // the metadata fetch) met a reset. The refusal reads the short body first.
    let as_ = AuthServer::start().await;
    let mcp = jwt_server(&as_, |b| b, |b| b).await;
    let authority = mcp.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&authority).await.unwrap();
    let body = rpc(1, "ping", json!({})).to_string();
    let post = |token: Option<&str>| {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\n{}content-length: {}\r\n\r\n",
            token
                .map(|t| format!("authorization: Bearer {t}\r\n"))
                .unwrap_or_default(),
            body.len()
        )
    };
    let first = exchange_on(&mut stream, &post(None), &body).await;
    assert!(first.starts_with("HTTP/1.1 401"), "{first}");
    assert!(
        !first.to_ascii_lowercase().contains("connection: close"),
        "{first}"
    );
    // The same connection answers the next request.
    let metadata = format!(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nhost: {authority}\r\n\r\n"
    );
    let second = exchange_on(&mut stream, &metadata, "").await;
    assert!(second.starts_with("HTTP/1.1 200"), "{second}");
    // A body too long to read for a refusal: the refusal says the connection closes.
    let long = "x".repeat(100 * 1024);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        long.len()
    );
    let mut other = tokio::net::TcpStream::connect(&authority).await.unwrap();
    use tokio::io::AsyncWriteExt;
    other.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0_u8; 4096];
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncReadExt::read(&mut other, &mut answer),
    )
    .await
    .expect("an answer within 10 s")
    .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 401"), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
}
