//! One MCP server for every protocol revision: negotiation, lifecycle, version-appropriate
//! routing and shaping.
//!
//! A server author registers tools, resources and prompts once ([`Server::builder`]); the
//! runtime serves clients of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 (an
//! `initialize` handshake starts a session) and 2026-07-28 (every request carries its
//! revision in `_meta`), and every message it sends is an instance of the negotiated
//! revision's generated type.
#![warn(missing_docs)]
// Input must never be able to panic the server: no unwrap/expect/indexing outside tests;
// each remaining exception is allowed where it stands, with the reason.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

pub mod asks;
pub mod auth;
pub mod cancel;
pub mod context;
pub mod encode;
pub mod jsonrpc;
pub mod model;
mod model_builders;
pub mod server;
pub mod session;
pub mod shape;
pub mod transport;
pub mod uri_template;
pub mod version;

pub use context::Context;
pub use jsonrpc::{ErrorCode, RpcError};
pub use mcp_generated as generated;
pub use server::{Limits, Server, ServerBuilder, ServerEvent};
pub use version::{Era, Features, ProtocolVersion, VersionSet};
