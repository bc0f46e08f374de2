//! Asking the client (sampling, elicitation, roots) through one handler API in every era.
//!
//! Legacy revisions: the runtime sends the request on the request's own channel (stdio;
//! on HTTP the request's SSE stream, or the HTTP+SSE stream), matches the answer by id,
//! applies a timeout and forwards cancellation. 2026-07-28 has no server-to-client
//! requests: the first pass of a handler collects what it asks, the runtime answers
//! `resultType: "input_required"` with those `inputRequests` and an HMAC-protected
//! `requestState`, and the client's retry re-runs the handler with the answers
//! (`inputResponses`, plus those of earlier rounds carried in the verified state).

mod ask;
mod error;
mod legacy;
mod round;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::protocol::peer::Peer;
use crate::wire::{ErrorCode, RpcError};

pub use ask::Ask;
use ask::{missing_capability, not_in_revision};
pub use error::{AskError, AskErrorKind};
pub(crate) use legacy::Pending;
pub(crate) use round::{binding_parts, Round, StateKeys};

/// Where a handler's asks go.
#[derive(Clone, Debug)]
pub(crate) enum Asker {
    /// A legacy session: send requests to the peer.
    Legacy {
        /// The connection's waiting requests.
        pending: Arc<Pending>,
        /// How long to wait for an answer.
        timeout: Duration,
        /// The 2025-11-25 task the asks belong to: named in each request's `_meta`
        /// (`io.modelcontextprotocol/related-task`), as that revision requires.
        related_task: Option<Arc<str>>,
    },
    /// A modern request: collect, answer `input_required`.
    Modern(Arc<Round>),
    /// A 2026-07-28 task: the asks become the task's `inputRequests`, answered by
    /// `tasks/update`.
    #[cfg(feature = "tasks")]
    Task(Arc<dyn TaskInput>),
    /// Nowhere (notifications, list methods): asking is an error.
    None,
}

/// Where a 2026-07-28 task's asks wait for their answers (the server's task registry).
#[cfg(feature = "tasks")]
pub(crate) trait TaskInput: Send + Sync + std::fmt::Debug {
    /// Publishes the requests (`{method, params}`, each under its key or a fresh one) and
    /// waits for every answer, in order.
    fn request_input(
        &self,
        requests: Vec<(Option<String>, Value)>,
    ) -> crate::combine::BoxFuture<'_, Result<Vec<Value>, AskError>>;
}

pub(crate) async fn ask_all(
    peer: &Peer,
    asker: &Asker,
    asks: Vec<(Option<String>, Ask)>,
) -> Result<Vec<Value>, AskError> {
    let v = peer.version;
    let not_declared = |e: RpcError| AskError::new(AskErrorKind::NotDeclared, e);
    for (_, ask) in &asks {
        if matches!(ask, Ask::Elicit { .. } | Ask::ElicitUrl { .. }) && !v.features().elicitation {
            return Err(not_in_revision(ask, v));
        }
        if !peer.client_supports(ask.capability()) {
            // Nothing is sent for a capability the client did not declare.
            return Err(not_declared(missing_capability(ask)));
        }
        if matches!(ask, Ask::ElicitUrl { .. }) && !peer.client_supports_sub("elicitation", "url") {
            return Err(not_declared(
                RpcError::new(
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    "Missing required client capability: elicitation.url",
                )
                .with_data(json!({"requiredCapabilities": {"elicitation": {"url": {}}}})),
            ));
        }
        if let Ask::CreateMessage(params) = ask {
            let offers_tools = params.get("tools").is_some() || params.get("toolChoice").is_some();
            if offers_tools && !v.features().sampling_tools {
                // Dropping the tools would ask the client a different question.
                return Err(AskError::new(
                    AskErrorKind::NotInRevision,
                    RpcError::internal(format!(
                        "cannot ask the client: sampling with tools is not part of MCP {v}"
                    )),
                ));
            }
            if offers_tools && !peer.client_supports_sub("sampling", "tools") {
                return Err(not_declared(
                    RpcError::new(
                        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        "Missing required client capability: sampling.tools",
                    )
                    .with_data(json!({"requiredCapabilities": {"sampling": {"tools": {}}}})),
                ));
            }
        }
    }
    match asker {
        Asker::None => Err(AskError::new(
            AskErrorKind::CannotAsk,
            RpcError::internal("this request cannot ask the client anything"),
        )),
        Asker::Modern(round) => {
            let mut answers = Vec::new();
            let mut missing = false;
            for (key, ask) in &asks {
                let key = key.clone().unwrap_or_else(|| round.next_key());
                match round.take(&key, ask)? {
                    Some(a) => answers.push(a),
                    None => missing = true,
                }
            }
            if missing {
                Err(input_required_marker())
            } else {
                Ok(answers)
            }
        }
        #[cfg(feature = "tasks")]
        Asker::Task(input) => {
            let mut requests = Vec::with_capacity(asks.len());
            for (key, ask) in &asks {
                let params = ask.request_params(v)?;
                requests.push((
                    key.clone(),
                    json!({"method": ask.method(), "params": params}),
                ));
            }
            let answers = input.request_input(requests).await?;
            for (answer, (_, ask)) in answers.iter().zip(&asks) {
                ask.check_answer(v, answer).map_err(|e| {
                    AskError::new(
                        AskErrorKind::InvalidAnswer,
                        RpcError::internal(format!(
                            "the client's answer to `{}` is invalid: {e}",
                            ask.method()
                        )),
                    )
                })?;
            }
            Ok(answers)
        }
        Asker::Legacy {
            pending,
            timeout,
            related_task,
        } => {
            let calls = asks
                .iter()
                .map(|(_, ask)| legacy::ask(peer, pending, *timeout, ask, related_task.as_deref()));
            crate::combine::try_join_all(calls.collect()).await
        }
    }
}

/// The error of a modern first pass that asked: it never reaches the wire (the runtime
/// answers `input_required` whatever the handler returned).
fn input_required_marker() -> AskError {
    AskError::new(
        AskErrorKind::InputRequired,
        RpcError::internal("input required: the answer comes with the client's retry"),
    )
}
