//! What arrives, once parsed: JSON-RPC messages (requests, notifications, responses)
//! with their ids, and frames of one message or a batch.

use std::fmt;

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
        /// The params, if any.
        params: Option<Value>,
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
