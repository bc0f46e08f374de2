//! The legacy lifecycle (2024-11-05 … 2025-11-25): where a session stands between its
//! `initialize` and its end.

use crate::protocol::version::ProtocolVersion;

/// Where the legacy lifecycle stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    /// Nothing but `ping` and `initialize` is served.
    New,
    /// `initialize` was answered; waiting for `notifications/initialized` (client
    /// requests are already served: clients may pipeline them).
    Initialized(ProtocolVersion),
    /// Normal operation.
    Operating(ProtocolVersion),
}

impl Lifecycle {
    /// The negotiated revision, once `initialize` was answered.
    pub(crate) fn version(self) -> Option<ProtocolVersion> {
        match self {
            Lifecycle::New => None,
            Lifecycle::Initialized(v) | Lifecycle::Operating(v) => Some(v),
        }
    }
}
