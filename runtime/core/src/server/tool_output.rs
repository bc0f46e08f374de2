//! What a tool handler returns: a value ([`IntoToolResult`]: a `ToolResult`, text,
//! content blocks) or a [`ToolError`], which is either a tool failure (a result with
//! `isError: true` the model can read and react to) or a protocol error (a JSON-RPC error
//! answering the request).

use std::any::Any;
use std::fmt;

use crate::model::{Content, ToolResult};
use crate::protocol::asks::AskError;
use crate::wire::RpcError;

/// The error a tool handler returns.
///
/// `?` on any [`std::error::Error`] gives a **tool failure**: the call is answered with a
/// result whose `isError` is true and whose text is the error's message, as the spec asks
/// for errors the model should see (an API that failed, invalid input the model can
/// correct). `?` on an [`RpcError`] — or [`ToolError::protocol`] — gives a **protocol
/// error** instead: the request is answered with that JSON-RPC error (an unknown
/// resource, arguments that do not decode).
///
/// `ToolError` does not implement `std::error::Error` itself, so that the blanket
/// conversion from every error type can exist (as `anyhow::Error` does).
pub struct ToolError(Repr);

enum Repr {
    Failure(String),
    Protocol(RpcError),
}

impl ToolError {
    /// A tool failure with this message (an `isError` result).
    pub fn failure(message: impl fmt::Display) -> ToolError {
        ToolError(Repr::Failure(message.to_string()))
    }

    /// A protocol error (the request is answered with `error`).
    pub fn protocol(error: RpcError) -> ToolError {
        ToolError(Repr::Protocol(error))
    }

    /// The protocol error, if this is one.
    pub fn as_protocol(&self) -> Option<&RpcError> {
        match &self.0 {
            Repr::Protocol(e) => Some(e),
            Repr::Failure(_) => None,
        }
    }

    /// How the call is answered: an `isError` result, or the protocol error.
    pub(crate) fn into_outcome(self) -> Result<ToolResult, RpcError> {
        match self.0 {
            Repr::Failure(message) => Ok(ToolResult::error(message)),
            Repr::Protocol(e) => Err(e),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(error: E) -> ToolError {
        // An `RpcError` keeps its meaning (a protocol error), and so does a failed ask
        // (the request fails as it would have had the handler not asked: the error the
        // ask stands for, `-32021` for a capability the client lacks); every other error
        // is the tool's own failure.
        let any = &error as &dyn Any;
        if let Some(rpc) = any.downcast_ref::<RpcError>() {
            return ToolError::protocol(rpc.clone());
        }
        if let Some(ask) = any.downcast_ref::<AskError>() {
            return ToolError::protocol(ask.rpc_error().clone());
        }
        ToolError::failure(error)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Failure(m) => f.debug_tuple("ToolError::Failure").field(m).finish(),
            Repr::Protocol(e) => f.debug_tuple("ToolError::Protocol").field(e).finish(),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Failure(m) => f.write_str(m),
            Repr::Protocol(e) => fmt::Display::fmt(e, f),
        }
    }
}

/// What a tool handler may return: a [`ToolResult`], text (`String`, `&'static str`),
/// one [`Content`] block or several, or a `Result` of any of them with a [`ToolError`].
///
/// A closure returning `Ok(..)` needs no annotation, and `?` works inside it: the only
/// `Result` this trait is implemented for is `Result<_, ToolError>`, so the error type is
/// known.
pub trait IntoToolResult {
    /// The result, or the protocol error to answer with.
    fn into_tool_result(self) -> Result<ToolResult, RpcError>;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> Result<ToolResult, RpcError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<ToolResult, RpcError> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<ToolResult, RpcError> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<ToolResult, RpcError> {
        Ok(ToolResult::content(vec![self]))
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<ToolResult, RpcError> {
        Ok(ToolResult::content(self))
    }
}

impl<R: IntoToolResult> IntoToolResult for Result<R, ToolError> {
    fn into_tool_result(self) -> Result<ToolResult, RpcError> {
        match self {
            Ok(r) => r.into_tool_result(),
            Err(e) => e.into_outcome(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<u32, ToolError> {
        Ok(s.parse::<u32>()?)
    }

    #[test]
    fn any_error_is_a_tool_failure_and_an_rpc_error_stays_a_protocol_error() {
        let failure = parse("x").expect_err("not a number").into_outcome();
        let result = failure.expect("a failure is a result");
        assert!(result.is_error);
        let protocol = ToolError::from(RpcError::invalid_params("bad")).into_outcome();
        assert_eq!(protocol.expect_err("a protocol error").message, "bad");
    }

    #[test]
    fn text_and_content_become_results() {
        let r = "hi".into_tool_result().expect("ok");
        assert_eq!(r.content.len(), 1);
        let r = Ok::<_, ToolError>(String::from("x"))
            .into_tool_result()
            .expect("ok");
        assert!(!r.is_error);
    }
}
