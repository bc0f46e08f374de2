//! The protocol: what MCP means by the messages the wire carries, per revision —
//! versions and negotiation, the legacy lifecycle and the admission of each method
//! against the revision's generated method table, shaping of every outgoing result to
//! the revision's type, asking the client, logging levels, and the 2026-07-28 HTTP
//! header rules. Shared by every transport; it knows no handler and no socket.

pub(crate) mod asks;
// The server checks these rules (`http`) and the client writes them (`client`).
pub mod http_headers;
pub mod lifecycle;
pub(crate) mod logging;
pub mod method;
pub(crate) mod peer;
pub mod shape;
pub mod version;
