//! A request's link to its client: the revision it is served at, what the client
//! declared, the channel to it and the request's cancellation. It is all that asking the
//! client and notifying it need; handlers reach it through `Context`.

use serde_json::Value;
use tokio::sync::mpsc;

use crate::cancel::CancellationToken;
use crate::protocol::version::ProtocolVersion;
use crate::wire::{self, Outgoing, RequestId};

/// The client side of one request.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    pub(crate) version: ProtocolVersion,
    pub(crate) client_capabilities: std::sync::Arc<Value>,
    pub(crate) out: mpsc::Sender<Outgoing>,
    pub(crate) cancel: CancellationToken,
}

impl Peer {
    /// Whether the client declared a capability (e.g. `"sampling"`).
    pub(crate) fn client_supports(&self, capability: &str) -> bool {
        self.client_capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }

    /// A declared sub-capability (`elicitation.url`, `sampling.tools`).
    pub(crate) fn client_supports_sub(&self, capability: &str, sub: &str) -> bool {
        self.client_capabilities
            .get(capability)
            .and_then(|c| c.get(sub))
            .is_some()
    }

    /// Sends a message unless the request was cancelled (its client no longer listens).
    pub(crate) async fn send(&self, message: Outgoing) {
        if !self.cancel.is_cancelled() {
            // A closed channel means the peer is gone; there is no one to tell.
            let _ = self.out.send(message).await;
        }
    }

    /// Sends a notification on this request's channel.
    pub(crate) async fn notify(&self, method: &str, params: Value) {
        self.send(wire::notification(method, Some(params))).await;
    }

    /// Sends a server-to-client request.
    pub(crate) async fn send_request(&self, id: &RequestId, method: &str, params: Value) {
        self.send(wire::request(id, method, Some(params))).await;
    }

    /// Tells the client to stop working on a server request, without waiting (it is
    /// used in `Drop`); dropped if the peer's queue is full.
    pub(crate) fn try_send_cancel(&self, id: &RequestId, reason: &str) {
        let _ = self.out.try_send(wire::notification(
            "notifications/cancelled",
            Some(serde_json::json!({"requestId": id.to_value(), "reason": reason})),
        ));
    }
}
