//! What a handler can ask the client, and how each ask is written and its answer checked
//! in a given revision.

use serde_json::{json, Value};

use super::error::{AskError, AskErrorKind};
use crate::protocol::shape::{by_revision, project};
use crate::protocol::version::ProtocolVersion;
use crate::wire::{ErrorCode, RpcError};

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
    pub fn request_params(&self, v: ProtocolVersion) -> Result<Value, AskError> {
        let unsupported = |e: RpcError| AskError::new(AskErrorKind::Unsupported, e);
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
                ).map_err(unsupported), else Err(not_in_revision(self, v)))
            }
            Ask::CreateMessage(_) => by_revision!(v, |m| project::<m::CreateMessageRequestParams>(
                "a sampling request",
                params
            ))
            .map_err(unsupported),
            Ask::ListRoots => Ok(params),
        }
    }

    /// Checks the client's answer against revision `v`'s result type.
    pub(super) fn check_answer(&self, v: ProtocolVersion, answer: &Value) -> Result<(), String> {
        let decoded = match self {
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => {
                // Every revision's `ElicitResult` types a form value as `string | integer |
                // boolean` (or a list of strings), yet a form may ask for a `number`
                // (`NumberSchema`), whose answer — say `95.5` — that type cannot hold: a
                // finite number is accepted too, the rest goes through the type.
                let mut answer = answer.clone();
                if let Some(Value::Object(content)) =
                    answer.as_object_mut().and_then(|a| a.get_mut("content"))
                {
                    for value in content.values_mut() {
                        if value.as_f64().is_some_and(f64::is_finite) {
                            *value = Value::from(0);
                        }
                    }
                }
                by_revision!(v, where elicitation, |m| {
                    serde_json::from_value::<m::ElicitResult>(answer).map(|_| ())
                }, else return Err(format!("elicitation does not exist in MCP {v}")))
            }
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

pub(super) fn not_in_revision(ask: &Ask, v: ProtocolVersion) -> AskError {
    AskError::new(
        AskErrorKind::NotInRevision,
        RpcError::internal(format!(
            "cannot ask the client: `{}` is not part of MCP {v}",
            ask.method()
        )),
    )
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
