//! A round-robin front with no affinity, as an ordinary load balancer is configured for
//! replicas that share sessions: every HTTP request (not connection) goes to the next
//! replica in turn, whatever its `Mcp-Session-Id`; the answer is streamed back as it comes
//! (SSE included). A replica that refuses the connection is skipped (the request was never
//! sent, so trying the next is safe — nginx's `proxy_next_upstream error`); one that dies
//! mid-answer cuts the client's response (an error, never silence). The front counts, per
//! replica, the requests it forwarded and those that failed there ([`FrontStats`]).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

struct Front {
    replicas: Vec<String>,
    next: AtomicUsize,
    client: reqwest::Client,
    stats: Arc<FrontStats>,
}

/// What the front saw of each replica (indexed as the replicas were given).
pub struct FrontStats {
    /// Requests it forwarded there (a refused connection is not one).
    pub forwarded: Vec<AtomicU64>,
    /// Of those, the ones that failed there: no answer (502) or an answer cut mid-body.
    pub failed: Vec<AtomicU64>,
}

impl FrontStats {
    /// The counts now: `(forwarded, failed)` per replica.
    pub fn now(&self) -> (Vec<u64>, Vec<u64>) {
        let read = |v: &[AtomicU64]| v.iter().map(|c| c.load(Ordering::SeqCst)).collect();
        (read(&self.forwarded), read(&self.failed))
    }
}

/// Serves the front on 127.0.0.1:0 in a task of the current runtime, to `replicas`
/// (base URLs, `http://127.0.0.1:PORT`); its base URL.
pub async fn start(replicas: Vec<String>) -> String {
    start_counting(replicas).await.0
}

/// [`start`], and the front's counts.
pub async fn start_counting(replicas: Vec<String>) -> (String, Arc<FrontStats>) {
    let counters = || (0..replicas.len()).map(|_| AtomicU64::new(0)).collect();
    let stats = Arc::new(FrontStats {
        forwarded: counters(),
        failed: counters(),
    });
    let front = Arc::new(Front {
        replicas,
        next: AtomicUsize::new(0),
        // No pooling limit, no timeout: streams last as long as they last.
        client: reqwest::Client::builder().build().expect("a client"),
        stats: Arc::clone(&stats),
    });
    let app = axum::Router::new().fallback(forward).with_state(front);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), stats)
}

/// Hop-by-hop headers, not forwarded.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection" | "keep-alive" | "transfer-encoding" | "host" | "content-length"
    )
}

async fn forward(State(front): State<Arc<Front>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let n = front.replicas.len();
    let first = front.next.fetch_add(1, Ordering::Relaxed);
    for attempt in 0..n {
        let replica = (first + attempt) % n;
        let base = &front.replicas[replica];
        let mut out = front
            .client
            .request(parts.method.clone(), format!("{base}{path}"))
            .body(body.clone());
        for (name, value) in &parts.headers {
            if !hop_by_hop(name) {
                out = out.header(name, value);
            }
        }
        let stats = Arc::clone(&front.stats);
        let answer = match out.send().await {
            Ok(answer) => answer,
            // Not reached: the next replica.
            Err(e) if e.is_connect() => continue,
            Err(_) => {
                stats.forwarded[replica].fetch_add(1, Ordering::SeqCst);
                stats.failed[replica].fetch_add(1, Ordering::SeqCst);
                return StatusCode::BAD_GATEWAY.into_response();
            }
        };
        stats.forwarded[replica].fetch_add(1, Ordering::SeqCst);
        let mut response = Response::builder().status(answer.status());
        for (name, value) in answer.headers() {
            if !hop_by_hop(name) {
                response = response.header(name, value);
            }
        }
        // A replica that dies mid-stream ends the body with an error: the client's
        // connection is cut.
        let stream = answer.bytes_stream().map(move |chunk| {
            chunk.map_err(|e| {
                stats.failed[replica].fetch_add(1, Ordering::SeqCst);
                std::io::Error::other(e)
            })
        });
        return response
            .body(Body::from_stream(stream))
            .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response());
    }
    StatusCode::BAD_GATEWAY.into_response()
}
