//! What arrives, once parsed: JSON-RPC messages (requests, notifications, responses)
//! with their ids, and frames of one message or a batch.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use mcp_generated::support::FromValue;
use serde_json::Value;

use super::error::RpcError;

/// A request id, kept with its JSON type (a string stays a string, a number a number).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A numeric id, as written.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

impl RequestId {
    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::Number(n.clone()),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }

    /// The id in `v`, if it is a string or a number.
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::Number(n) => Some(RequestId::Number(n.clone())),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// One incoming JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request (has `id` and `method`).
    Request {
        /// Its id.
        id: RequestId,
        /// The method.
        method: String,
        /// The params, if any, without their `_meta` member (see `meta`).
        params: Option<Value>,
        /// The `_meta` member of params that are an object, taken out where the request
        /// is parsed: a 2026-07-28 client sends the same `_meta` on every request, and it
        /// is read once per distinct text, not by every layer of every request.
        /// [`params_with_meta`] puts it back where it was.
        meta: Option<RequestMeta>,
    },
    /// A notification (has `method`, no `id`).
    Notification {
        /// The method.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
    /// A response to a request this side sent.
    Response {
        /// The id it answers.
        id: RequestId,
        /// The result or the error.
        outcome: Result<Value, RpcError>,
    },
}

/// A request's `_meta` value, shared by every request that sent the same text (see
/// `meta_cache`), with where it stood among its params' members.
#[derive(Clone)]
pub struct RequestMeta {
    shared: Arc<SharedMeta>,
    at: usize,
}

/// One `_meta` value, and what was decoded from it once for all the requests sharing it.
pub(crate) struct SharedMeta {
    value: Value,
    /// The first typed decode asked of it (the revision's `_meta` type, in practice the
    /// one of the 2026-07-28 request params), a `Lendable` of that type.
    typed: Mutex<Option<Box<dyn Any + Send + Sync>>>,
    /// The first value derived from it (in practice the request's modern negotiation).
    derived: OnceLock<Box<dyn Any + Send + Sync>>,
}

/// A typed decode of a shared `_meta`: whether the value decodes as `T`, and the decoded
/// value when it is not lent out.
struct Lendable<T> {
    decodes: bool,
    value: Option<T>,
}

impl SharedMeta {
    pub(crate) fn new(value: Value) -> Arc<SharedMeta> {
        Arc::new(SharedMeta {
            value,
            typed: Mutex::new(None),
            derived: OnceLock::new(),
        })
    }

    #[cfg(test)]
    pub(crate) fn value(&self) -> &Value {
        &self.value
    }
}

impl RequestMeta {
    /// `value`, which stood at index `at` among its params' members.
    pub fn new(value: Value, at: usize) -> RequestMeta {
        RequestMeta::shared(SharedMeta::new(value), at)
    }

    pub(crate) fn shared(shared: Arc<SharedMeta>, at: usize) -> RequestMeta {
        RequestMeta { shared, at }
    }

    /// The `_meta` value as sent (of any JSON type).
    pub fn value(&self) -> &Value {
        &self.shared.value
    }

    /// Its index among its params' members (`_meta` counted out).
    pub(crate) fn place(&self) -> usize {
        self.at
    }

    /// The value decoded as `T`, or `None` if it does not decode as one: decoded once per
    /// shared value for the first `T` asked and then lent, not copied — the request gives
    /// it back ([`RequestMeta::give_back`]) once it has taken what it needs from the
    /// params it went into. A copy costs more than the rest of the decode (a revision's
    /// `_meta` type holds the client's capabilities); while it is lent to another request,
    /// or for another `T`, the value is decoded again.
    pub(crate) fn lend<T: FromValue + Send + Sync + 'static>(&self) -> Option<T> {
        let decode = || T::from_value(self.value().clone()).ok();
        let mut slot = self
            .shared
            .typed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(first) = slot.as_mut() else {
            let decoded = decode();
            *slot = Some(Box::new(Lendable::<T> {
                decodes: decoded.is_some(),
                value: None,
            }));
            return decoded;
        };
        match first.downcast_mut::<Lendable<T>>() {
            Some(lendable) if !lendable.decodes => None,
            Some(lendable) => match lendable.value.take() {
                Some(value) => Some(value),
                None => {
                    drop(slot);
                    decode()
                }
            },
            None => {
                drop(slot);
                decode()
            }
        }
    }

    /// Returns what [`RequestMeta::lend`] gave, unchanged, for the next request that
    /// shares this value.
    pub(crate) fn give_back<T: Send + Sync + 'static>(&self, value: T) {
        let mut slot = self
            .shared
            .typed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(lendable) = slot.as_mut().and_then(|b| b.downcast_mut::<Lendable<T>>()) {
            if lendable.decodes && lendable.value.is_none() {
                lendable.value = Some(value);
            }
        }
    }

    /// `derive(value)`, computed once per shared value for the first `T` asked (a copy of
    /// it after), else each time: `derive` must depend on the value only.
    pub(crate) fn derived<T: Clone + Send + Sync + 'static>(
        &self,
        derive: impl Fn(&Value) -> T,
    ) -> T {
        let first = self
            .shared
            .derived
            .get_or_init(|| Box::new(derive(self.value())));
        match first.downcast_ref::<T>() {
            Some(derived) => derived.clone(),
            None => derive(self.value()),
        }
    }

    /// The value, taken without a copy when no other request shares it.
    fn into_value(self) -> Value {
        Arc::try_unwrap(self.shared).map_or_else(|shared| shared.value.clone(), |s| s.value)
    }
}

impl PartialEq for RequestMeta {
    fn eq(&self, other: &RequestMeta) -> bool {
        self.at == other.at && self.value() == other.value()
    }
}

impl fmt::Debug for RequestMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestMeta")
            .field("value", self.value())
            .field("at", &self.at)
            .finish()
    }
}

/// The params as sent: `meta` put back in `params` where it stood. For the readers that
/// need the whole params (the typed decode of a revision whose params do not require
/// `_meta`, a client's handlers, re-encoding).
#[inline]
pub fn params_with_meta(params: Option<Value>, meta: Option<RequestMeta>) -> Option<Value> {
    match meta {
        // Most requests: nothing to put back, and no call made.
        None => params,
        Some(meta) => put_back(params, meta),
    }
}

fn put_back(params: Option<Value>, meta: RequestMeta) -> Option<Value> {
    let at = meta.at;
    match params {
        Some(Value::Object(mut members)) => {
            members.shift_insert(at.min(members.len()), "_meta".to_owned(), meta.into_value());
            Some(Value::Object(members))
        }
        // `meta` only ever comes out of object params; other params are left as they are.
        other => other,
    }
}

/// `_meta` taken out of `params` when they are an object that has it: the params without
/// it, and the value with where it stood.
pub(crate) fn split_meta(params: Option<Value>) -> (Option<Value>, Option<RequestMeta>) {
    match params {
        Some(Value::Object(mut members)) => {
            let at = members.keys().position(|k| k == "_meta");
            let meta = at.and_then(|at| {
                members
                    .shift_remove("_meta")
                    .map(|value| RequestMeta::new(value, at))
            });
            (Some(Value::Object(members)), meta)
        }
        other => (other, None),
    }
}

/// A message that cannot be processed, with the id to answer it with (if any could be
/// read) and the error.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    /// The id, if one was readable.
    pub id: Option<RequestId>,
    /// What is wrong.
    pub error: RpcError,
}

/// What one frame (a line on stdio, a body on HTTP) holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// One message.
    Single(Result<Message, Invalid>),
    /// A batch (a JSON array): each element parsed on its own.
    Batch(Vec<Result<Message, Invalid>>),
}

#[cfg(test)]
mod tests {
    use super::RequestMeta;
    use mcp_generated::v2026_07_28::RequestMetaObject;
    use serde_json::json;

    fn meta() -> RequestMeta {
        RequestMeta::new(
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            }),
            0,
        )
    }

    #[test]
    fn a_lent_decode_is_the_decode_and_comes_back() {
        let shared = meta();
        let other = shared.clone();
        let first = shared.lend::<RequestMetaObject>().expect("decodes");
        assert_eq!(first.io_modelcontextprotocol_protocol_version, "2026-07-28");
        // Lent out: a second request sharing the value gets its own decode, the same.
        let second = other.lend::<RequestMetaObject>().expect("decodes again");
        assert_eq!(first, second);
        shared.give_back(first);
        // Only one comes back into the slot; the next lend gets it.
        other.give_back(second);
        let again = shared.lend::<RequestMetaObject>().expect("given back");
        assert!(again
            .io_modelcontextprotocol_client_capabilities
            .sampling
            .is_some());
    }

    #[test]
    fn a_value_that_does_not_decode_is_never_lent() {
        let shared = RequestMeta::new(json!({"io.modelcontextprotocol/protocolVersion": 5}), 0);
        assert!(shared.lend::<RequestMetaObject>().is_none());
        assert!(shared.lend::<RequestMetaObject>().is_none());
    }
}
