//! Why asking the client failed, as a kind a handler can match, with the JSON-RPC error
//! that stands for it (what `?` propagates when the handler does not handle it).

use std::fmt;

use crate::wire::RpcError;

/// What went wrong with an ask ([`AskError::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AskErrorKind {
    /// The client did not declare the capability the ask needs (`sampling`,
    /// `elicitation`, `elicitation.url`, `roots`, `sampling.tools`); nothing was sent.
    NotDeclared,
    /// The revision the request is served at cannot express the ask (elicitation
    /// before 2025-06-18, URL elicitation before 2025-11-25, sampling with tools before
    /// 2025-11-25); nothing was sent.
    NotInRevision,
    /// This request cannot ask anything (list methods, completion).
    CannotAsk,
    /// A legacy client did not answer within `Limits::ask_timeout` (it was told to stop).
    TimedOut,
    /// The request that asked was cancelled, or its connection closed.
    Cancelled,
    /// The client answered with a JSON-RPC error (see [`AskError::rpc_error`]).
    Refused,
    /// The client's answer is not a valid result of the revision, or does not decode
    /// into the type asked for.
    InvalidAnswer,
    /// A 2026-07-28 retry carried answers or a `requestState` that do not belong to this
    /// request (the request is answered `-32602`).
    InvalidRetry,
    /// What was asked cannot be sent (an elicitation schema that is not a flat object of
    /// primitive fields, params the revision cannot project).
    Unsupported,
    /// 2026-07-28: the answer is not there yet. The runtime answers the request
    /// `input_required` and runs the handler again, with the answer, when the client
    /// retries. Propagate it with `?`; see [`Context`](crate::Context) on re-runs.
    InputRequired,
}

/// Asking the client failed.
#[derive(Clone, Debug, PartialEq)]
pub struct AskError {
    kind: AskErrorKind,
    error: RpcError,
}

impl AskError {
    pub(crate) fn new(kind: AskErrorKind, error: RpcError) -> AskError {
        AskError { kind, error }
    }

    /// What went wrong.
    pub fn kind(&self) -> AskErrorKind {
        self.kind
    }

    /// The JSON-RPC error this failure stands for: the client's own error for
    /// [`AskErrorKind::Refused`], `-32021` with `data.requiredCapabilities` for
    /// [`AskErrorKind::NotDeclared`], `-32602` for [`AskErrorKind::InvalidRetry`], an
    /// internal error otherwise. A tool handler that propagates the failure with `?`
    /// answers the request with it.
    pub fn rpc_error(&self) -> &RpcError {
        &self.error
    }

    /// [`AskError::rpc_error`], by value.
    pub fn into_rpc_error(self) -> RpcError {
        self.error
    }
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.error.message)
    }
}

impl std::error::Error for AskError {}

/// `?` on an ask in a prompt, resource or completion handler: the request fails with the
/// error the failure stands for.
impl From<AskError> for RpcError {
    fn from(e: AskError) -> RpcError {
        e.error
    }
}
