//! What authorization costs per request: a stateless 2026-07-28 `tools/call` through the
//! HTTP router in process (axum's service called directly, no socket: the server's own
//! time), without authorization, with a token the resource server verified before (the
//! verified-token cache), and with the token verified afresh — RS256 and ES256 signatures
//! against a cached JWK Set; and `ResourceServer::authenticate` alone.
//!
//! `cargo bench -p mcp-interop --bench auth` (criterion), or `… -- --interleaved [--rounds N]`
//! for the overhead ratios with the contenders taking turns (the table in BENCHMARKS.md §5);
//! `--only CASE` runs one case alone (to profile it); `--http` makes each call a real
//! HTTP/1.1 exchange over one keep-alive loopback connection with the router served by hyper
//! on a thread of its own, and reports that thread's CPU time per request (from its
//! `schedstat`): the whole request's server time, next to which the overhead is judged.
//!
//! The limit beside them: the null server on the same path (an axum route answering every
//! POST with the fixed reply of `support/null_reply.rs`, the request's id copied in,
//! nothing parsed or checked), whose time is the floor of axum, hyper and the socket;
//! each case's `÷ null` is its distance to it.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

#[path = "support/args.rs"]
mod args;
#[path = "support/null_reply.rs"]
mod null_reply;

use std::sync::Arc;
use std::time::{Duration, Instant};

use args::{flag_value, median};

use axum::body::Body;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Uri};
use criterion::Criterion;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_runtime::model::{Implementation, Tool, ToolResult};
use mcp_runtime::Server;
use mcp_runtime_http::auth::{JwtVerifier, ResourceServer};
use mcp_runtime_http::{router, HttpConfig};
use serde_json::{json, Value};
use tower::ServiceExt;

const RSA: &[u8] = include_bytes!("../../client/testdata/keys/rsa-a.pem");
const EC: &[u8] = include_bytes!("../../client/testdata/keys/ec-p256.pem");

fn server() -> Server {
    Server::builder(Implementation::new("bench", "1"))
        .tool(Tool::new("echo", "Echoes"), |args, _| async move {
            Ok(ToolResult::text(Value::Object(args).to_string()))
        })
        .build()
}

/// The null server on the router's path: a fixed answer to every POST, the request's id
/// copied in (`null_reply`), no MCP, no authorization.
fn null_router() -> axum::Router {
    axum::Router::new().route(
        "/mcp",
        axum::routing::post(|body: Bytes| async move {
            let mut out = Vec::with_capacity(128);
            null_reply::null_reply(&body, &mut out);
            ([("content-type", "application/json")], out)
        }),
    )
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

/// A request's parts, made once: building them is the client's cost, not the server's.
struct Prepared {
    headers: HeaderMap,
    body: Bytes,
}

fn prepare(token: Option<&str>) -> Prepared {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hello"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut headers = HeaderMap::new();
    for (name, value) in [
        ("host", "127.0.0.1"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if let Some(token) = token {
        let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
        headers.insert("authorization", value);
    }
    Prepared {
        headers,
        body: Bytes::from(body.to_string()),
    }
}

/// One call through `app`; panics unless it is answered 200 (a refused token would make
/// the figure meaningless).
async fn call(app: &axum::Router, prepared: &Prepared) {
    let mut request = Request::new(Body::from(prepared.body.clone()));
    *request.method_mut() = Method::POST;
    *request.uri_mut() = Uri::from_static("/mcp");
    *request.headers_mut() = prepared.headers.clone();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    assert!(body.len() > 20);
}

/// Everything the cases need: the runtime, the routers, the tokens and requests.
struct Setup {
    rt: tokio::runtime::Runtime,
    null: axum::Router,
    open: axum::Router,
    cached: axum::Router,
    fresh: axum::Router,
    rs256: String,
    es256: String,
    anonymous: Prepared,
    rs256_request: Prepared,
    es256_request: Prepared,
    jwks_uri: String,
}

fn setup() -> Setup {
    // One thread, as in `message_path`: the handler task runs on the thread that awaits it,
    // so the figure is CPU time rather than cross-thread wake-ups.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (rsa, ec) = (
        EncodingKey::from_rsa_pem(RSA).unwrap(),
        EncodingKey::from_ec_pem(EC).unwrap(),
    );
    let jwks_uri = rt.block_on(jwks_server(json!({"keys": [
        jwk(&rsa, Algorithm::RS256, "rsa"), jwk(&ec, Algorithm::ES256, "ec")]})));
    let app = |authorization: Option<ResourceServer>| {
        let mut config = HttpConfig::default();
        config.authorization = authorization.map(Arc::new);
        // The router spawns its session reaper: built inside the runtime.
        rt.block_on(async { router(server(), config) })
    };
    let (rs256, es256) = (
        token(Algorithm::RS256, "rsa", &rsa),
        token(Algorithm::ES256, "ec", &ec),
    );
    let setup = Setup {
        null: null_router(),
        open: app(None),
        cached: app(Some(resource_server(&jwks_uri, true))),
        fresh: app(Some(resource_server(&jwks_uri, false))),
        anonymous: prepare(None),
        rs256_request: prepare(Some(&rs256)),
        es256_request: prepare(Some(&es256)),
        rs256,
        es256,
        jwks_uri,
        rt,
    };
    // The key set is fetched by the first request and cached from then on.
    setup.rt.block_on(async {
        call(&setup.null, &setup.anonymous).await;
        call(&setup.open, &setup.anonymous).await;
        call(&setup.cached, &setup.rs256_request).await;
        call(&setup.fresh, &setup.rs256_request).await;
        call(&setup.fresh, &setup.es256_request).await;
    });
    setup
}

/// The `tools/call` cases: (name, router, request); the unprotected call first (the
/// overhead's denominator), the null server last.
fn cases(s: &Setup) -> [(&'static str, &axum::Router, &Prepared); 5] {
    [
        ("no_authorization", &s.open, &s.anonymous),
        ("verified_token_cache_hit", &s.cached, &s.rs256_request),
        ("rs256_verified_cached_jwks", &s.fresh, &s.rs256_request),
        ("es256_verified_cached_jwks", &s.fresh, &s.es256_request),
        (NULL_CASE, &s.null, &s.anonymous),
    ]
}

/// The null server's case (the limit; see the module's documentation).
const NULL_CASE: &str = "null_server";

fn criterion_benches(c: &mut Criterion) {
    let s = setup();
    let mut group = c.benchmark_group("auth/tools_call_2026_07_28");
    for (name, app, request) in cases(&s) {
        group.bench_function(name, |b| {
            b.to_async(&s.rt).iter(|| call(app, request));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("auth/authenticate");
    let (hit, miss) = (
        resource_server(&s.jwks_uri, true),
        resource_server(&s.jwks_uri, false),
    );
    s.rt.block_on(async {
        hit.authenticate(&s.rs256).await.unwrap();
        miss.authenticate(&s.rs256).await.unwrap();
    });
    group.bench_function("cache_hit", |b| {
        b.to_async(&s.rt)
            .iter(|| async { hit.authenticate(&s.rs256).await.unwrap() });
    });
    group.bench_function("rs256", |b| {
        b.to_async(&s.rt)
            .iter(|| async { miss.authenticate(&s.rs256).await.unwrap() });
    });
    group.bench_function("es256", |b| {
        b.to_async(&s.rt)
            .iter(|| async { miss.authenticate(&s.es256).await.unwrap() });
    });
    group.finish();
}

/// `--interleaved [--rounds N]`: the four `tools/call` cases take turns, ~2 ms of calls
/// each per round; each case's time is the median over rounds, and its overhead the median
/// of its per-round ratio to the unprotected call (so that this shared machine's busy
/// phases fall on all of them alike).
/// A keep-alive HTTP/1.1 connection to a served copy of a router, sending one prepared
/// request's bytes per call.
struct Wire {
    stream: tokio::net::TcpStream,
    request: Vec<u8>,
    buffer: Vec<u8>,
}

/// The routers served on a thread of their own (one current-thread runtime), whose CPU time
/// is read from `/proc/self/task/<tid>/schedstat`: the servers' own time per request,
/// hyper and socket work included, the client's excluded.
struct ServerThread {
    addrs: Vec<std::net::SocketAddr>,
    schedstat: String,
}

impl ServerThread {
    fn start(apps: Vec<axum::Router>) -> ServerThread {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let mut addrs = Vec::new();
                for app in apps {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                    addrs.push(listener.local_addr().unwrap());
                    tokio::spawn(async move { axum::serve(listener, app).await });
                }
                // The link reads `<pid>/task/<tid>`, relative to /proc.
                let me = std::fs::read_link("/proc/thread-self").unwrap();
                let path = std::path::Path::new("/proc").join(me).join("schedstat");
                tx.send((addrs, path)).unwrap();
                std::future::pending::<()>().await;
            });
        });
        let (addrs, schedstat) = rx.recv().unwrap();
        ServerThread {
            addrs,
            schedstat: schedstat.to_string_lossy().into_owned(),
        }
    }

    /// The thread's time on a CPU so far, in ns.
    fn cpu_ns(&self) -> u64 {
        let stat = std::fs::read_to_string(&self.schedstat).unwrap();
        stat.split_whitespace().next().unwrap().parse().unwrap()
    }
}

impl Wire {
    async fn open(addr: std::net::SocketAddr, prepared: &Prepared) -> Wire {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\ncontent-length: {}\r\n",
            prepared.body.len()
        );
        for (name, value) in &prepared.headers {
            request.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
        }
        request.push_str("\r\n");
        let mut request = request.into_bytes();
        request.extend_from_slice(&prepared.body);
        Wire {
            stream,
            request,
            buffer: Vec::with_capacity(4096),
        }
    }

    /// One exchange: the request written, the answer read to its end (`content-length`).
    async fn call(&mut self) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        self.stream.write_all(&self.request).await.unwrap();
        self.buffer.clear();
        loop {
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "connection closed");
            self.buffer.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&self.buffer);
            if let Some(end) = text.find("\r\n\r\n") {
                assert!(text.starts_with("HTTP/1.1 200"), "{text}");
                let length: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_owned)
                    })
                    .expect("content-length")
                    .trim()
                    .parse()
                    .unwrap();
                if self.buffer.len() >= end + 4 + length {
                    return;
                }
            }
        }
    }
}

fn interleaved(rounds: usize, only: Option<&str>, http: bool) {
    let s = setup();
    let mut cases = cases(&s).to_vec();
    if let Some(only) = only {
        // One case alone (to profile it): ratios are then to itself.
        cases.retain(|(name, _, _)| *name == only);
    }
    let mut wires = Vec::new();
    let server = http.then(|| ServerThread::start(cases.iter().map(|c| c.1.clone()).collect()));
    if let Some(server) = &server {
        s.rt.block_on(async {
            for (addr, (_, _, request)) in server.addrs.iter().zip(&cases) {
                wires.push(Wire::open(*addr, request).await);
            }
        });
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut to_null: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let null_at = cases.iter().position(|(name, _, _)| *name == NULL_CASE);
    s.rt.block_on(async {
        for _ in 0..rounds {
            let mut round = Vec::new();
            for (i, (_, app, request)) in cases.iter().enumerate() {
                let start = Instant::now();
                let cpu = server.as_ref().map(ServerThread::cpu_ns);
                let mut n = 0u32;
                while start.elapsed() < Duration::from_millis(2) || n < 10 {
                    match wires.get_mut(i) {
                        Some(wire) => wire.call().await,
                        None => call(app, request).await,
                    }
                    n += 1;
                }
                // Over HTTP the figure is the server thread's CPU time per request.
                let ns = match (&server, cpu) {
                    (Some(server), Some(before)) => (server.cpu_ns() - before) as f64,
                    _ => start.elapsed().as_nanos() as f64,
                };
                round.push(ns / 1e3 / f64::from(n));
            }
            for (i, t) in round.iter().enumerate() {
                times[i].push(*t);
                ratios[i].push(t / round[0]);
                if let Some(null) = null_at.and_then(|n| round.get(n)) {
                    to_null[i].push(t / null);
                }
            }
        }
    });
    let what = if http {
        "server CPU µs per request"
    } else {
        "µs per call"
    };
    println!(
        "| case | {what} (median of {rounds} rounds) | ÷ no authorization | overhead | ÷ null (spread) |"
    );
    println!("|---|---|---|---|---|");
    for (i, (name, _, _)) in cases.iter().enumerate() {
        let ratio = median(ratios[i].clone());
        let (lo, hi) = to_null[i]
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(*r), hi.max(*r))
            });
        let to_null = if to_null[i].is_empty() {
            String::new()
        } else {
            format!("{:.2} ({lo:.2}–{hi:.2})", median(to_null[i].clone()))
        };
        println!(
            "| {name} | {:.2} | {ratio:.3} | {:+.1}% | {to_null} |",
            median(times[i].clone()),
            (ratio - 1.0) * 100.0
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--interleaved") {
        let rounds = flag_value(&args, "--rounds")
            .and_then(|n| n.parse().ok())
            .unwrap_or(200);
        let http = args.iter().any(|a| a == "--http");
        interleaved(rounds, flag_value(&args, "--only"), http);
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
}
