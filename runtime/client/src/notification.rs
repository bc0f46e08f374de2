//! What a server tells the client without being asked: progress, log messages, list
//! changes, resource updates — decoded through the revision's generated types and handed
//! to the caller on a stream ([`Notifications`]).

use serde_json::Value;
use tokio::sync::broadcast;

use mcp_runtime::model::LogLevel;
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::shape::{by_revision, project};
use mcp_runtime::protocol::version::ProtocolVersion;

/// A notification from the server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Notification {
    /// Progress of a request that asked for it.
    Progress {
        /// The request's progress token.
        token: Value,
        /// Progress so far.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// A message (2025-03-26+).
        message: Option<String>,
    },
    /// A log message.
    Log {
        /// Its severity.
        level: LogLevel,
        /// The logger's name.
        logger: Option<String>,
        /// The message: any JSON.
        data: Value,
    },
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A subscribed resource changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// A URL-mode elicitation finished (2025-11-25).
    ElicitationComplete {
        /// The elicitation's id.
        elicitation_id: String,
    },
    /// Any other notification, as sent.
    Other {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
    },
}

impl Notification {
    /// Decodes a notification of revision `v`; what does not decode is kept as
    /// [`Notification::Other`].
    pub(crate) fn decode(v: ProtocolVersion, method: &str, params: Option<Value>) -> Notification {
        let other = |params| Notification::Other {
            method: method.to_owned(),
            params,
        };
        let Some(m) = McpMethod::from_name(method) else {
            return other(params);
        };
        let p = params
            .clone()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let decoded = match m {
            McpMethod::Progress => by_revision!(v, |m| project::<m::ProgressNotificationParams>(
                "a progress notification",
                p
            ))
            .ok()
            .and_then(|p| {
                Some(Notification::Progress {
                    token: p.get("progressToken")?.clone(),
                    progress: p.get("progress")?.as_f64()?,
                    total: p.get("total").and_then(Value::as_f64),
                    message: text(&p, "message"),
                })
            }),
            McpMethod::LoggingMessage => by_revision!(v, |m| project::<
                m::LoggingMessageNotificationParams,
            >("a log message", p))
            .ok()
            .and_then(|p| {
                Some(Notification::Log {
                    level: LogLevel::from_json(p.get("level")?).ok()?,
                    logger: text(&p, "logger"),
                    data: p.get("data").cloned().unwrap_or(Value::Null),
                })
            }),
            McpMethod::ToolListChanged => Some(Notification::ToolsListChanged),
            McpMethod::PromptListChanged => Some(Notification::PromptsListChanged),
            McpMethod::ResourceListChanged => Some(Notification::ResourcesListChanged),
            McpMethod::ResourceUpdated => {
                text(&p, "uri").map(|uri| Notification::ResourceUpdated { uri })
            }
            McpMethod::ElicitationComplete => text(&p, "elicitationId")
                .map(|elicitation_id| Notification::ElicitationComplete { elicitation_id }),
            _ => None,
        };
        decoded.unwrap_or_else(|| other(params))
    }
}

/// The stream of the server's notifications (each [`Client::notifications`] call gives
/// a stream of its own, from that moment on).
///
/// [`Client::notifications`]: super::Client::notifications
#[derive(Debug)]
pub struct Notifications(pub(crate) broadcast::Receiver<Notification>);

impl Notifications {
    /// The next notification; `None` once the connection is closed. A reader that falls
    /// more than the client's buffer behind skips the oldest ones (logged).
    pub async fn recv(&mut self) -> Option<Notification> {
        loop {
            match self.0.recv().await {
                Ok(n) => return Some(n),
                Err(broadcast::error::RecvError::Lagged(skipped)) => {
                    tracing::warn!("skipped {skipped} notifications: the reader fell behind");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next notification if one is waiting.
    pub fn try_recv(&mut self) -> Option<Notification> {
        loop {
            match self.0.try_recv() {
                Ok(n) => return Some(n),
                Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return None,
            }
        }
    }
}
