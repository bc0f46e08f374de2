//! What can go wrong on the client side, as one error type with a kind to match.

use std::fmt;

use mcp_runtime::wire::RpcError;

/// Why a client operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientErrorKind {
    /// The server answered with a JSON-RPC error ([`ClientError::rpc`] has it).
    Rpc,
    /// No answer came within the request's timeout (the request was cancelled).
    Timeout,
    /// The request was cancelled by the caller.
    Cancelled,
    /// The transport failed: the process or connection broke, an HTTP status without a
    /// JSON-RPC answer, a malformed stream.
    Transport,
    /// The connection is closed.
    Closed,
    /// The client and the server have no revision in common, or the handshake failed.
    Negotiation,
    /// The server's answer is not a valid result of the revision in force.
    InvalidResult,
    /// The method does not exist in the revision in force, or the server did not declare
    /// the capability it needs.
    Unsupported,
    /// The server requires authorization and the client could not get it (no OAuth
    /// configured answers a `401` with this too), or the authorization server's metadata
    /// or answers were refused.
    Unauthorized,
    /// The server kept asking for input (2026-07-28 `input_required`) beyond the limit of
    /// rounds.
    TooManyRounds,
    /// The server ended the legacy HTTP session (HTTP 404 for its `Mcp-Session-Id`). The
    /// client starts a new session by itself and sends the request again once (the
    /// server never ran it): this is what a caller sees when that failed too, or for a
    /// notification.
    SessionExpired,
}

/// A failed client operation: its kind, a message, and the server's JSON-RPC error when
/// there was one.
#[derive(Clone, Debug)]
pub struct ClientError(Box<Inner>);

#[derive(Clone, Debug)]
struct Inner {
    kind: ClientErrorKind,
    message: String,
    rpc: Option<RpcError>,
}

impl ClientError {
    pub(crate) fn new(kind: ClientErrorKind, message: impl Into<String>) -> ClientError {
        ClientError(Box::new(Inner {
            kind,
            message: message.into(),
            rpc: None,
        }))
    }

    pub(crate) fn transport(message: impl Into<String>) -> ClientError {
        ClientError::new(ClientErrorKind::Transport, message)
    }

    pub(crate) fn closed() -> ClientError {
        ClientError::new(ClientErrorKind::Closed, "the connection is closed")
    }

    pub(crate) fn invalid(message: impl Into<String>) -> ClientError {
        ClientError::new(ClientErrorKind::InvalidResult, message)
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> ClientError {
        ClientError::new(ClientErrorKind::Unsupported, message)
    }

    /// The server's JSON-RPC error as a client error.
    pub(crate) fn from_rpc(error: RpcError) -> ClientError {
        ClientError(Box::new(Inner {
            kind: ClientErrorKind::Rpc,
            message: error.message.clone(),
            rpc: Some(error),
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> ClientErrorKind {
        self.0.kind
    }

    /// The server's JSON-RPC error, when the server answered with one.
    pub fn rpc(&self) -> Option<&RpcError> {
        self.0.rpc.as_ref()
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.rpc {
            Some(rpc) => write!(f, "the server answered {}: {}", rpc.code.0, rpc.message),
            None => f.write_str(&self.0.message),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<RpcError> for ClientError {
    fn from(error: RpcError) -> ClientError {
        ClientError::from_rpc(error)
    }
}
