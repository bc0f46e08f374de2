//! Middleware: the author's own layer around every request the server handles at a known
//! revision (tools, resources, prompts, completion, the lists, `ping`, `server/discover`,
//! tasks, and the session's bookkeeping: `initialize`, `logging/setLevel`,
//! `resources/subscribe|unsubscribe`). It sees the request's method, target, revision,
//! principal and `_meta`; it may answer on its own (a rate limit's error, a cached result)
//! or pass the request on with [`Next::run`], and it sees the outcome.
//!
//! A bookkeeping request changes the session only when the middleware passes it on: a
//! refused `initialize` opens no session, a refused `logging/setLevel` leaves the level
//! as it was. `initialize` is seen at the revision it negotiates. What admission refuses
//! is answered before any middleware runs: an `initialize` with no revision in common, an
//! unsupported revision, an unknown method, a request before `initialize` (none of them
//! has a revision to report). Middleware runs inside the request's span, within its
//! timeout and its cancellation; a middleware that panics is answered `-32603` like a
//! handler that does.

use std::sync::Arc;

use serde_json::Value;

use crate::auth::Principal;
/// A boxed future that may borrow for `'a` (what [`Middleware::handle`] returns).
pub use crate::combine::BoxFuture;
use crate::protocol::version::ProtocolVersion;
use crate::wire::{Encoded, RequestId, RpcError};

/// A layer around request handling; see the [module docs](self).
///
/// ```
/// use mcp_runtime::middleware::{BoxFuture, Middleware, Next, Outcome, RequestInfo};
///
/// struct Audit;
///
/// impl Middleware for Audit {
///     fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next) -> BoxFuture<'a, Outcome> {
///         Box::pin(async move {
///             let outcome = next.run(request).await;
///             eprintln!("{} {:?} -> error {:?}", request.method(), request.target(), outcome.error_code());
///             outcome
///         })
///     }
/// }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles `request`: answers it, or passes it on with `next.run(request)`.
    fn handle<'a>(&'a self, request: &'a RequestInfo, next: Next) -> BoxFuture<'a, Outcome>;
}

/// What a middleware knows of a request.
#[derive(Debug)]
pub struct RequestInfo {
    pub(crate) method: &'static str,
    pub(crate) id: RequestId,
    pub(crate) target: Option<String>,
    pub(crate) version: ProtocolVersion,
    pub(crate) principal: Option<Arc<Principal>>,
    pub(crate) meta: Option<Value>,
}

impl RequestInfo {
    /// The method (`tools/call`, `resources/list`, …).
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The tool or prompt name (`tools/call`, `prompts/get`) or the resource URI
    /// (`resources/read`), as the request names it.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The revision the request is served at.
    pub fn revision(&self) -> ProtocolVersion {
        self.version
    }

    /// Who sent it: the verified principal of an HTTP request with a bearer token.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// The request's `params._meta`, as sent.
    pub fn meta(&self) -> Option<&Value> {
        self.meta.as_ref()
    }
}

/// The rest of the chain: the next middleware, and at its end the server's own handling.
pub struct Next {
    pub(crate) chain: Arc<[Arc<dyn Middleware>]>,
    pub(crate) index: usize,
    pub(crate) inner: BoxFuture<'static, Result<Encoded, RpcError>>,
}

impl Next {
    /// Passes the request on and yields its outcome.
    pub fn run(self, request: &RequestInfo) -> BoxFuture<'_, Outcome> {
        match self.chain.get(self.index).cloned() {
            Some(middleware) => Box::pin(async move {
                let next = Next {
                    chain: self.chain,
                    index: self.index + 1,
                    inner: self.inner,
                };
                middleware.handle(request, next).await
            }),
            None => Box::pin(async move { Outcome(self.inner.await) }),
        }
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("remaining", &self.chain.len().saturating_sub(self.index))
            .finish()
    }
}

/// How a request ended: a result (as sent, in the revision's shape) or an error.
#[derive(Clone)]
pub struct Outcome(pub(crate) Result<Encoded, RpcError>);

impl Outcome {
    /// An error answer.
    pub fn error(error: RpcError) -> Outcome {
        Outcome(Err(error))
    }

    /// A result given as JSON, sent as it is: it must be what the request's revision
    /// defines (a result this server sent before at the same revision, kept by a cache,
    /// is).
    pub fn result(result: &Value) -> Outcome {
        match Encoded::of(result) {
            Ok(encoded) => Outcome(Ok(encoded)),
            Err(e) => Outcome(Err(RpcError::internal(format!(
                "Internal error: a middleware's result did not encode: {e}"
            )))),
        }
    }

    /// The error, for an error answer.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        self.0.as_ref().err()
    }

    /// The error code, for an error answer.
    pub fn error_code(&self) -> Option<i64> {
        self.rpc_error().map(|e| e.code.0)
    }

    /// The result as JSON, for a result.
    pub fn result_json(&self) -> Option<Value> {
        self.0.as_ref().ok().map(Encoded::to_value)
    }

    /// Whether the answer is a tool result with `isError: true`.
    pub fn is_tool_error(&self) -> bool {
        self.0
            .as_ref()
            .is_ok_and(|encoded| super::result_is_tool_error(encoded.as_bytes()))
    }
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Ok(encoded) => f.debug_tuple("Result").field(&encoded.as_str()).finish(),
            Err(e) => f.debug_tuple("Error").field(e).finish(),
        }
    }
}

/// Runs `inner` through `chain` for `info`.
pub(crate) async fn run_chain(
    chain: Arc<[Arc<dyn Middleware>]>,
    info: RequestInfo,
    inner: BoxFuture<'static, Result<Encoded, RpcError>>,
) -> Result<Encoded, RpcError> {
    let next = Next {
        chain,
        index: 0,
        inner,
    };
    next.run(&info).await.0
}
