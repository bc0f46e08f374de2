//! What authorization costs per request: a stateless 2026-07-28 `tools/call` through the
//! HTTP router in process (axum's service called directly, no socket: the server's own
//! time), without authorization, with a token the resource server verified before (the
//! verified-token cache), and with the token verified afresh — RS256 and ES256 signatures
//! against a cached JWK Set; and `ResourceServer::authenticate` alone.
//!
//! `cargo bench -p mcp-runtime --bench auth` (criterion); figures in BENCHMARKS.md §5.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use criterion::{criterion_group, criterion_main, Criterion};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_runtime::auth::{JwtVerifier, ResourceServer};
use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::transport::http::{router, HttpConfig};
use mcp_runtime::Server;
use serde_json::{json, Value};
use tower::ServiceExt;

const RSA: &[u8] = include_bytes!("../tests/auth/keys/rsa-a.pem");
const EC: &[u8] = include_bytes!("../tests/auth/keys/ec-p256.pem");

fn server() -> Server {
    Server::builder(Implementation::new("bench", "1"))
        .tool(Tool::new("echo", "Echoes"), |args, _| async move {
            Ok(ToolResult::text(Value::Object(args).to_string()))
        })
        .build()
}

fn jwk(key: &EncodingKey, alg: Algorithm, kid: &str) -> Value {
    let mut jwk = serde_json::to_value(Jwk::from_encoding_key(key, alg).unwrap()).unwrap();
    jwk["kid"] = json!(kid);
    jwk
}

/// Serves a JWK Set on 127.0.0.1; its URL.
async fn jwks_server(keys: Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    let body = keys.to_string();
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

const RESOURCE: &str = "http://127.0.0.1/mcp";
const ISSUER: &str = "https://as.example";

fn token(alg: Algorithm, kid: &str, key: &EncodingKey) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(alg);
    header.kid = Some(kid.into());
    header.typ = Some("at+jwt".into());
    let claims = json!({"iss": ISSUER, "sub": "bench-user", "aud": RESOURCE, "client_id": "bench",
                        "scope": "mcp:tools", "iat": now, "exp": now + 3600});
    jsonwebtoken::encode(&header, &claims, key).unwrap()
}

fn resource_server(jwks_uri: &str, cache: bool) -> ResourceServer {
    let verifier = JwtVerifier::builder(ISSUER, jwks_uri, RESOURCE)
        .build()
        .unwrap();
    let mut rs = ResourceServer::builder(RESOURCE, verifier).authorization_server(ISSUER);
    if !cache {
        rs = rs.verified_token_cache(Duration::ZERO, 0);
    }
    rs.build().unwrap()
}

fn call_request(token: Option<&str>) -> Request<Body> {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hello"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut req = Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    req.body(Body::from(body.to_string())).unwrap()
}

/// One call through `app`; panics unless it is answered 200 (a refused token would make
/// the figure meaningless).
async fn call(app: &axum::Router, token: Option<&str>) {
    let response = app.clone().oneshot(call_request(token)).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    assert!(body.len() > 20);
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (rsa, ec) = (
        EncodingKey::from_rsa_pem(RSA).unwrap(),
        EncodingKey::from_ec_pem(EC).unwrap(),
    );
    let jwks_uri = rt.block_on(jwks_server(json!({"keys": [
        jwk(&rsa, Algorithm::RS256, "rsa"), jwk(&ec, Algorithm::ES256, "ec")]})));
    let rs256 = token(Algorithm::RS256, "rsa", &rsa);
    let es256 = token(Algorithm::ES256, "ec", &ec);
    let app = |authorization: Option<ResourceServer>| {
        let mut config = HttpConfig::default();
        config.authorization = authorization.map(Arc::new);
        // The router spawns its session reaper: built inside the runtime.
        rt.block_on(async { router(server(), config) })
    };
    let open = app(None);
    let cached = app(Some(resource_server(&jwks_uri, true)));
    let fresh = app(Some(resource_server(&jwks_uri, false)));
    // The key set is fetched by the first request and cached from then on.
    rt.block_on(async {
        call(&open, None).await;
        call(&cached, Some(&rs256)).await;
        call(&fresh, Some(&rs256)).await;
        call(&fresh, Some(&es256)).await;
    });

    let mut group = c.benchmark_group("auth/tools_call_2026_07_28");
    group.bench_function("no_authorization", |b| {
        b.to_async(&rt).iter(|| call(&open, None));
    });
    group.bench_function("verified_token_cache_hit", |b| {
        b.to_async(&rt).iter(|| call(&cached, Some(&rs256)));
    });
    group.bench_function("rs256_verified_cached_jwks", |b| {
        b.to_async(&rt).iter(|| call(&fresh, Some(&rs256)));
    });
    group.bench_function("es256_verified_cached_jwks", |b| {
        b.to_async(&rt).iter(|| call(&fresh, Some(&es256)));
    });
    group.finish();

    let mut group = c.benchmark_group("auth/authenticate");
    let (hit, miss) = (
        resource_server(&jwks_uri, true),
        resource_server(&jwks_uri, false),
    );
    rt.block_on(async {
        hit.authenticate(&rs256).await.unwrap();
        miss.authenticate(&rs256).await.unwrap();
    });
    group.bench_function("cache_hit", |b| {
        b.to_async(&rt)
            .iter(|| async { hit.authenticate(&rs256).await.unwrap() });
    });
    group.bench_function("rs256", |b| {
        b.to_async(&rt)
            .iter(|| async { miss.authenticate(&rs256).await.unwrap() });
    });
    group.bench_function("es256", |b| {
        b.to_async(&rt)
            .iter(|| async { miss.authenticate(&es256).await.unwrap() });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
