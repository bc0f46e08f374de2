//! What an author's handlers are, once boxed: the closures the builder takes, stored
//! behind one signature per kind (tool, resource, prompt, completion).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::model::{Completion, PromptResult, ResourceContents, ToolResult};
use crate::server::context::Context;
use crate::server::tool_output::IntoToolResult;
use crate::wire::RpcError;

/// A boxed, sendable future: what handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What `completion/complete` asks.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletionRequest {
    /// `ref/prompt` or `ref/resource`.
    pub ref_type: String,
    /// The prompt name or resource URI (template).
    pub ref_name: String,
    /// The argument being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Other arguments already given (2025-06-18+ `context.arguments`).
    pub context: Map<String, Value>,
}

pub(super) type ToolFn =
    dyn Fn(Map<String, Value>, Context) -> BoxFuture<Result<ToolResult, RpcError>> + Send + Sync;
/// A tool handler that reads its arguments (an object) in place: typed tools, whose
/// arguments decode into the author's type either way. Used when the arguments must be
/// kept after the call (a 2026-07-28 call's `requestState` binding), so they are not copied.
pub(super) type ToolByRefFn =
    dyn Fn(&Value, Context) -> BoxFuture<Result<ToolResult, RpcError>> + Send + Sync;
pub(super) type ResourceFn = dyn Fn(
        String,
        BTreeMap<String, String>,
        Context,
    ) -> BoxFuture<Result<Vec<ResourceContents>, RpcError>>
    + Send
    + Sync;
pub(super) type PromptFn =
    dyn Fn(Map<String, Value>, Context) -> BoxFuture<Result<PromptResult, RpcError>> + Send + Sync;
pub(super) type CompleteFn =
    dyn Fn(CompletionRequest, Context) -> BoxFuture<Result<Completion, RpcError>> + Send + Sync;

/// A tool handler, boxed.
/// The hook a client's `notifications/roots/list_changed` runs.
pub(super) type RootsChangedFn = dyn Fn(Context) -> BoxFuture<()> + Send + Sync;
/// See [`ServerBuilder::on_resource_interest`](super::ServerBuilder::on_resource_interest).
pub(super) type ResourceInterestFn = dyn Fn(&str, bool) + Send + Sync;

#[cfg(feature = "typed-tools")]
pub(super) fn box_tool_by_ref<F, Fut>(handler: F) -> Arc<ToolByRefFn>
where
    F: Fn(&Value, Context) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoToolResult,
{
    Arc::new(move |args, ctx| {
        let running = handler(args, ctx);
        Box::pin(async move { running.await.into_tool_result() })
    })
}

pub(super) fn box_tool<F, Fut>(handler: F) -> Arc<ToolFn>
where
    F: Fn(Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoToolResult,
{
    Arc::new(move |args, ctx| {
        let running = handler(args, ctx);
        Box::pin(async move { running.await.into_tool_result() })
    })
}
