//! Extensions a server declares and the methods outside the specification it serves for
//! them. A declared extension is announced with its settings in the capabilities
//! (`capabilities.extensions` where the revision has it, 2026-07-28; `experimental`, the
//! one open place the older revisions have, before); a custom method is admitted only
//! while its extension is declared, and answers `-32601` otherwise, as any method the
//! server does not serve.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, RwLock};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::handler::BoxFuture;
use super::registry::{read_lock, write_lock};
use crate::server::context::Context;
use crate::wire::RpcError;

/// A custom method's handler: the params as sent (without `_meta`), to its JSON result.
pub(crate) type CustomFn =
    dyn Fn(Option<Value>, Context) -> BoxFuture<Result<Value, RpcError>> + Send + Sync;

/// A method outside the specification, served for an extension.
pub(crate) struct CustomMethod {
    /// The extension that must be declared for the method to be admitted.
    pub(crate) extension: String,
    pub(crate) handler: Arc<CustomFn>,
}

/// The server's declared extensions and custom methods.
#[derive(Default)]
pub(crate) struct Extensions {
    /// Extension id → its settings object.
    declared: RwLock<BTreeMap<String, Value>>,
    /// Fixed when the server is built: a request pays for the lookup only when there is
    /// one.
    methods: HashMap<&'static str, CustomMethod>,
}

impl Extensions {
    pub(crate) fn new(
        declared: BTreeMap<String, Value>,
        methods: HashMap<&'static str, CustomMethod>,
    ) -> Extensions {
        Extensions {
            declared: RwLock::new(declared),
            methods,
        }
    }

    /// Declares `id` with `settings` (replacing earlier settings).
    pub(crate) fn declare(&self, id: String, settings: Value) {
        write_lock(&self.declared).insert(id, settings);
    }

    /// Withdraws `id`; whether it was declared.
    pub(crate) fn withdraw(&self, id: &str) -> bool {
        write_lock(&self.declared).remove(id).is_some()
    }

    /// The declared extensions and their settings.
    pub(crate) fn declared(&self) -> BTreeMap<String, Value> {
        read_lock(&self.declared).clone()
    }

    pub(crate) fn is_empty(&self) -> bool {
        read_lock(&self.declared).is_empty()
    }

    /// The handler of custom method `method` and the method's `'static` name, when the
    /// server serves it and its extension is declared now. Inlined: every request asks,
    /// and most servers have no custom method.
    #[inline]
    pub(crate) fn admitted(&self, method: &str) -> Option<(&'static str, Arc<CustomFn>)> {
        if self.methods.is_empty() {
            return None;
        }
        self.look_up(method)
    }

    fn look_up(&self, method: &str) -> Option<(&'static str, Arc<CustomFn>)> {
        let (name, custom) = self.methods.get_key_value(method)?;
        read_lock(&self.declared)
            .contains_key(&custom.extension)
            .then(|| (*name, Arc::clone(&custom.handler)))
    }
}

/// Boxes a typed custom-method handler: params decoded into `P` (`-32602` naming the
/// problem when they do not decode; absent params decode as `{}`), the result encoded
/// from `R`, which must be a JSON object (an MCP result is one).
pub(crate) fn box_custom<P, R, F, Fut>(method: &'static str, handler: F) -> Arc<CustomFn>
where
    P: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(P, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |params: Option<Value>, ctx: Context| {
        let handler = Arc::clone(&handler);
        Box::pin(async move {
            let params = params.unwrap_or_else(|| Value::Object(Map::new()));
            let params: P = serde_json::from_value(params)
                .map_err(|e| RpcError::invalid_params(format!("{method}: {e}")))?;
            let result = handler(params, ctx).await?;
            match serde_json::to_value(result) {
                Ok(value @ Value::Object(_)) => Ok(value),
                Ok(other) => Err(RpcError::internal(format!(
                    "{method}: the handler's result must be a JSON object, not {other}"
                ))),
                Err(e) => Err(RpcError::internal(format!(
                    "{method}: the handler's result does not encode: {e}"
                ))),
            }
        }) as BoxFuture<Result<Value, RpcError>>
    })
}
