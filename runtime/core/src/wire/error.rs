//! JSON-RPC error codes and the error object, independent of any MCP revision.

use std::fmt;

use serde_json::{json, Map, Value};

/// A JSON-RPC error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// Not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// Unknown method (or a method not available now).
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Params that do not decode.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// The handler failed.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// Resource not found (legacy revisions).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// HTTP header and body disagree (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// A client capability the request needs was not declared (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol revision is not served (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// An error answer: code, message, optional data.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Structured details.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds data.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// `-32601` naming the method.
    pub fn method_not_found(method: &str) -> RpcError {
        RpcError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602` with a message.
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603` with a message.
    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// The `error` member of a response.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), json!(self.code.0));
        obj.insert("message".into(), json!(self.message));
        if let Some(data) = &self.data {
            obj.insert("data".into(), data.clone());
        }
        Value::Object(obj)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

impl std::error::Error for RpcError {}
