//! One MCP server for every protocol revision: negotiation, lifecycle, version-appropriate
//! routing and shaping.
//!
//! A server author registers tools, resources and prompts once ([`Server::builder`]); the
//! runtime serves clients of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 (an
//! `initialize` handshake starts a session) and 2026-07-28 (every request carries its
//! revision in `_meta`), and every message it sends is an instance of the negotiated
//! revision's generated type.
//!
//! This crate is the protocol core and the stdio transport; `mcp-runtime-http` serves the
//! same [`Server`] over Streamable HTTP and HTTP+SSE, `mcp-runtime-client` is the client.
//! Modules hidden from these docs are the seams those sibling crates build on: they are
//! not API, semver does not cover them, and the sibling crates pin this one exactly.
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
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "apps")]
#[cfg_attr(docsrs, doc(cfg(feature = "apps")))]
pub mod apps;
pub mod auth;
#[doc(hidden)]
pub mod cancel;
#[doc(hidden)]
pub mod combine;
pub mod model;
pub mod observe;
mod primitives;
#[doc(hidden)]
pub mod protocol;
#[doc(hidden)]
pub mod server;
pub mod transport;
#[doc(hidden)]
pub mod wire;

pub use protocol::asks::{Ask, AskError, AskErrorKind};
pub use protocol::shape::CacheHint;
pub use protocol::version::{Era, Features, ProtocolVersion, VersionSet};
/// The JSON Schema library typed handlers derive their schemas with, at the version this
/// crate is built with. The derive's code names `::schemars`: a crate that derives
/// `JsonSchema` either depends on schemars 1 itself or writes
/// `#[schemars(crate = "mcp_runtime::schemars")]` on the type.
#[cfg(feature = "typed-tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "typed-tools")))]
pub use schemars;
/// JSON values as handlers see them (arguments of untyped tools and prompts).
pub use serde_json;
pub use server::context::Context;
#[cfg(feature = "typed-tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "typed-tools")))]
pub use server::elicit_schema::elicitation_schema;
pub use server::middleware;
pub use server::{
    BoxFuture, CompletionRequest, IntoPromptResult, IntoResourceContents, IntoToolResult, Limits,
    ListKind, Listing, Server, ServerBuilder, ServerEvent, ToolError,
};
#[cfg(feature = "tasks")]
#[cfg_attr(docsrs, doc(cfg(feature = "tasks")))]
pub use server::{
    MemoryTaskStore, TaskChange, TaskOptions, TaskRecord, TaskStatus, TaskStore, TaskStoreError,
    TASKS_EXTENSION,
};
pub use wire::{ErrorCode, RequestId, RpcError};

/// The crate README's Rust blocks (the quickstart), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
