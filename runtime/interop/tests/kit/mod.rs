//! The test kit: what every test of the runtime (and, by path, the load example and the
//! benchmarks' shared parsing) uses to talk to a server. One copy of each thing:
//!
//! - [`patience`]: the one timeout policy (20 s, `MCP_TEST_TIMEOUT_MS`);
//! - [`stdio::Stdio`]: the stdio client, in process or to an example binary, strict about
//!   what arrives next and checking "nothing else" when it closes;
//! - [`http`]: Streamable HTTP (legacy sessions and the stateless 2026-07-28 wire, JSON or
//!   SSE answers), the streams of a session, and HTTP+SSE;
//! - [`frames`]: SSE framing and answer parsing (shared with `examples/load.rs` and the
//!   benchmarks);
//! - [`schema`]: the official schemas and the strict wire checker;
//! - [`browser`]: headless Chromium, for what browsers do (CORS);
//! - [`process`] and [`pinned`]: the example binaries as processes, and the pinned SDK
//!   clients and conformance suite the tests install on first use;
//! - message builders and small helpers below.
// Each test binary uses a different part of the kit.
#![allow(dead_code, unreachable_pub)]

pub mod browser;
pub mod frames;
pub mod front;
pub mod http;
pub mod otlp;
pub mod patience;
pub mod pinned;
pub mod process;
pub mod redis;
pub mod schema;
pub mod stdio;

/// The example server (`runtime/interop/examples/conformance_server.rs`), compiled into the test.
/// Its `main` is unused here.
#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "../../examples/conformance_server.rs"]
mod fixture;

pub use fixture::conformance_server;
pub use patience::patience;

use serde_json::{json, Value};

/// The stateless revision.
pub const MODERN: &str = "2026-07-28";

/// A request of `method` with `params` (omitted when `None`).
pub fn request(id: impl Into<Value>, method: &str, params: impl Into<Option<Value>>) -> Value {
    let mut r = json!({"jsonrpc": "2.0", "id": id.into(), "method": method});
    if let Some(p) = params.into() {
        r["params"] = p;
    }
    r
}

/// A notification of `method` with `params` (omitted when `None`).
pub fn notification(method: &str, params: impl Into<Option<Value>>) -> Value {
    let mut n = json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params.into() {
        n["params"] = p;
    }
    n
}

/// `notifications/cancelled` of the request `id`.
pub fn cancel(id: impl Into<Value>) -> Value {
    notification("notifications/cancelled", json!({"requestId": id.into()}))
}

/// The `_meta` a 2026-07-28 request carries: the revision and the client's capabilities.
pub fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// The error code of an error response; anything else is a failure.
pub fn code(message: &Value) -> i64 {
    message["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {message}"))
}

/// Polls `condition` until it holds; not within the patience is a failure naming `what`.
pub async fn eventually(what: &str, condition: impl Fn() -> bool) {
    eventually_or(condition, || what.to_owned()).await;
}

/// [`eventually`], the failure explained by `explain` when it fails (a count so far).
pub async fn eventually_or(condition: impl Fn() -> bool, explain: impl Fn() -> String) {
    let start = std::time::Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < patience(),
            "{}: not within {:?}",
            explain(),
            patience()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
