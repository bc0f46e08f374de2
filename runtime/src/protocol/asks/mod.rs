//! Asking the client (sampling, elicitation, roots) through one handler API in every era.
//!
//! Legacy revisions: the runtime sends the request on the request's own channel (stdio;
//! on HTTP the request's SSE stream, or the HTTP+SSE stream), matches the answer by id,
//! applies a timeout and forwards cancellation. 2026-07-28 has no server-to-client
//! requests: the first pass of a handler collects what it asks, the runtime answers
//! `resultType: "input_required"` with those `inputRequests` and an HMAC-protected
//! `requestState`, and the client's retry re-runs the handler with the answers
//! (`inputResponses`, plus those of earlier rounds carried in the verified state).

mod legacy;
mod round;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::protocol::peer::Peer;
use crate::protocol::shape::{by_revision, project};
use crate::protocol::version::ProtocolVersion;
use crate::wire::{ErrorCode, RpcError};

pub(crate) use legacy::Pending;
pub(crate) use round::{binding_parts, Round};

/// Something a handler asks the client.
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// `elicitation/create` (form mode): a message and the flat schema of what to ask.
    Elicit {
        /// What to tell the user.
        message: String,
        /// The JSON Schema (flat object of primitive properties) of the answer.
        requested_schema: Value,
    },
    /// `elicitation/create` in URL mode (2025-11-25+): send the user to a URL (for
    /// credentials or payments that must not pass through the client).
    ElicitUrl {
        /// Why the user should open the URL.
        message: String,
        /// The URL.
        url: String,
        /// An id the server later names in `notifications/elicitation/complete`
        /// (required by 2025-11-25; optional in 2026-07-28).
        elicitation_id: String,
    },
    /// `sampling/createMessage`, with its params as the newest revision defines them.
    CreateMessage(Value),
    /// `roots/list`.
    ListRoots,
}

impl Ask {
    /// The method that carries this ask.
    pub fn method(&self) -> &'static str {
        match self {
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => "elicitation/create",
            Ask::CreateMessage(_) => "sampling/createMessage",
            Ask::ListRoots => "roots/list",
        }
    }

    /// The client capability this ask needs.
    pub fn capability(&self) -> &'static str {
        match self {
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => "elicitation",
            Ask::CreateMessage(_) => "sampling",
            Ask::ListRoots => "roots",
        }
    }

    fn neutral_params(&self) -> Value {
        match self {
            Ask::Elicit {
                message,
                requested_schema,
            } => json!({"message": message, "requestedSchema": requested_schema}),
            Ask::ElicitUrl {
                message,
                url,
                elicitation_id,
            } => {
                json!({"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id})
            }
            Ask::CreateMessage(params) => params.clone(),
            Ask::ListRoots => json!({}),
        }
    }

    /// The params this ask sends in revision `v` (projected through its generated type,
    /// after the downgrade rules); an error if `v` cannot express it.
    pub fn request_params(&self, v: ProtocolVersion) -> Result<Value, RpcError> {
        let mut params = self.neutral_params();
        match self {
            Ask::ElicitUrl { .. } if !v.features().url_elicitation => Err(not_in_revision(self, v)),
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => {
                if !v.features().elicitation_titled_enums {
                    titled_enums_as_enum_names(&mut params);
                }
                by_revision!(v, where elicitation, |m| project::<m::ElicitRequestParams>(
                    "an elicitation",
                    params
                ), else Err(not_in_revision(self, v)))
            }
            Ask::CreateMessage(_) => by_revision!(v, |m| project::<m::CreateMessageRequestParams>(
                "a sampling request",
                params
            )),
            Ask::ListRoots => Ok(params),
        }
    }

    /// Checks the client's answer against revision `v`'s result type.
    fn check_answer(&self, v: ProtocolVersion, answer: &Value) -> Result<(), String> {
        let decoded = match self {
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => by_revision!(v, where elicitation, |m| {
                serde_json::from_value::<m::ElicitResult>(answer.clone()).map(|_| ())
            }, else return Err(format!("elicitation does not exist in MCP {v}"))),
            Ask::CreateMessage(_) => by_revision!(v, |m| serde_json::from_value::<
                m::CreateMessageResult,
            >(answer.clone())
            .map(|_| ())),
            Ask::ListRoots => by_revision!(v, |m| serde_json::from_value::<m::ListRootsResult>(
                answer.clone()
            )
            .map(|_| ())),
        };
        decoded.map_err(|e| e.to_string())
    }
}

/// 2025-06-18 has no titled single-select (`oneOf` of `{const, title}`): it becomes the
/// `enum` + `enumNames` form that revision has, so the user still gets a choice with labels
/// (projection would otherwise read it as a free-text string and drop the choices).
/// Defaults and multi-select do not exist there either: defaults are dropped by projection,
/// a multi-select cannot be expressed and fails the ask.
fn titled_enums_as_enum_names(params: &mut Value) {
    let Some(Value::Object(props)) = params.pointer_mut("/requestedSchema/properties") else {
        return;
    };
    for prop in props.values_mut() {
        let Some(Value::Array(options)) = prop.get("oneOf").cloned() else {
            continue;
        };
        let values: Vec<Value> = options
            .iter()
            .filter_map(|o| o.get("const").cloned())
            .collect();
        let names: Vec<Value> = options
            .iter()
            .map(|o| {
                o.get("title")
                    .cloned()
                    .unwrap_or_else(|| o.get("const").cloned().unwrap_or(Value::Null))
            })
            .collect();
        if let Value::Object(p) = prop {
            p.remove("oneOf");
            p.insert("enum".into(), Value::Array(values));
            p.insert("enumNames".into(), Value::Array(names));
        }
    }
}

fn not_in_revision(ask: &Ask, v: ProtocolVersion) -> RpcError {
    RpcError::internal(format!(
        "cannot ask the client: `{}` is not part of MCP {v}",
        ask.method()
    ))
}

/// The error for asking what the client did not declare: `-32021` with
/// `data.requiredCapabilities` (the 2026-07-28 error; its shape serves every revision).
pub(crate) fn missing_capability(ask: &Ask) -> RpcError {
    RpcError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {}", ask.capability()),
    )
    .with_data(json!({"requiredCapabilities": {ask.capability(): {}}}))
}

/// Where a handler's asks go.
#[derive(Clone, Debug)]
pub(crate) enum Asker {
    /// A legacy session: send requests to the peer.
    Legacy {
        /// The connection's waiting requests.
        pending: Arc<Pending>,
        /// How long to wait for an answer.
        timeout: Duration,
    },
    /// A modern request: collect, answer `input_required`.
    Modern(Arc<Round>),
    /// Nowhere (notifications, list methods): asking is an error.
    None,
}

pub(crate) async fn ask_all(
    peer: &Peer,
    asker: &Asker,
    asks: Vec<(Option<String>, Ask)>,
) -> Result<Vec<Value>, RpcError> {
    let v = peer.version;
    for (_, ask) in &asks {
        if matches!(ask, Ask::Elicit { .. } | Ask::ElicitUrl { .. }) && !v.features().elicitation {
            return Err(not_in_revision(ask, v));
        }
        if !peer.client_supports(ask.capability()) {
            // Nothing is sent for a capability the client did not declare.
            return Err(missing_capability(ask));
        }
        if matches!(ask, Ask::ElicitUrl { .. }) && !peer.client_supports_sub("elicitation", "url") {
            return Err(RpcError::new(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability: elicitation.url",
            )
            .with_data(json!({"requiredCapabilities": {"elicitation": {"url": {}}}})));
        }
        if let Ask::CreateMessage(params) = ask {
            let offers_tools = params.get("tools").is_some() || params.get("toolChoice").is_some();
            if offers_tools && !v.features().sampling_tools {
                // Dropping the tools would ask the client a different question.
                return Err(RpcError::internal(format!(
                    "cannot ask the client: sampling with tools is not part of MCP {v}"
                )));
            }
            if offers_tools && !peer.client_supports_sub("sampling", "tools") {
                return Err(RpcError::new(
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    "Missing required client capability: sampling.tools",
                )
                .with_data(json!({"requiredCapabilities": {"sampling": {"tools": {}}}})));
            }
        }
    }
    match asker {
        Asker::None => Err(RpcError::internal(
            "this request cannot ask the client anything",
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
        Asker::Legacy { pending, timeout } => {
            let calls = asks
                .iter()
                .map(|(_, ask)| legacy::ask(peer, pending, *timeout, ask));
            futures_util::future::try_join_all(calls).await
        }
    }
}

/// The code of the internal marker error a handler's ask returns in a modern first pass;
/// it never reaches the wire (the runtime answers `input_required` instead).
pub const INPUT_REQUIRED_MARKER: ErrorCode = ErrorCode(-32099);

fn input_required_marker() -> RpcError {
    RpcError::new(INPUT_REQUIRED_MARKER, "input required")
}
