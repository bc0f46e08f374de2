//! Rust types and method tables for every MCP protocol revision, generated from the
//! official JSON Schemas by `mcp-codegen`. One module per revision (`v2024_11_05`, …),
//! each behind a cargo feature of the same name; all are enabled by default and compile
//! together.
//!
//! Each revision module holds the schema's types (every named definition), a `methods`
//! module with one marker type per method implementing [`Method`] and [`Request`] or
//! [`Notification`], the [`MethodInfo`] table `METHODS`, `method(name)` for look-up at
//! run time, and `parse_result(method, value)` (a result can only be parsed by the method
//! of the request it answers).
//!
//! Official protocol extensions are generated the same way from their own pinned schemas,
//! one module each under [`ext`] (`ext::tasks`: `io.modelcontextprotocol/tasks`).
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(hidden)]
pub mod support;

#[rustfmt::skip]
mod revisions;
pub use revisions::*;

#[rustfmt::skip]
pub mod ext;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Who sends a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Sent by the client to the server.
    ClientToServer,
    /// Sent by the server to the client.
    ServerToClient,
    /// Sent by either side.
    Both,
}

/// Whether a method is a request or a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Expects a response.
    Request,
    /// Never answered.
    Notification,
}

/// A method of one revision, as a type: the router is keyed on these.
pub trait Method {
    /// The wire method name.
    const METHOD: &'static str;
    /// Who sends it.
    const DIRECTION: Direction;
    /// Whether the message must carry `params`.
    const PARAMS_REQUIRED: bool;
    /// The type of `params`.
    type Params: Serialize + DeserializeOwned;
    /// The type of the whole message, as the schema defines it.
    type Message: Serialize + DeserializeOwned;
}

/// A method that expects a response.
pub trait Request: Method {
    /// The type of the result.
    type Result: Serialize + DeserializeOwned;
}

/// A method that is never answered.
pub trait Notification: Method {}

/// One row of a revision's method table, for look-up by string at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodInfo {
    /// The wire method name.
    pub name: &'static str,
    /// Request or notification.
    pub kind: Kind,
    /// Who sends it.
    pub direction: Direction,
    /// Schema name of the whole message.
    pub message: &'static str,
    /// Schema name of `params`, if any.
    pub params: Option<&'static str>,
    /// Whether `params` is required.
    pub params_required: bool,
    /// Schema name of the result (requests only).
    pub result: Option<&'static str>,
}

/// Types identical in several revisions, emitted once; each revision re-exports them.
#[rustfmt::skip]
#[allow(missing_docs, non_snake_case, unreachable_pub, clippy::all, clippy::pedantic, clippy::unwrap_used)]
mod shared;

/// Error from a generated `TryFrom` or `FromStr` implementation (string enums).
pub struct ConversionError(std::borrow::Cow<'static, str>);

impl std::error::Error for ConversionError {}

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::fmt::Debug for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl From<&'static str> for ConversionError {
    fn from(value: &'static str) -> Self {
        Self(value.into())
    }
}

impl From<String> for ConversionError {
    fn from(value: String) -> Self {
        Self(value.into())
    }
}

/// A generated type that keeps keys its definition does not declare (requests,
/// notifications, results and objects the schema declares open), in a flattened map.
///
/// Code that builds an outgoing message for a revision empties this map, so that the
/// message carries only what that revision defines.
pub trait KeepsUnknownKeys {
    /// The keys kept beyond the declared ones.
    fn unknown_keys(&self) -> &serde_json::Map<String, serde_json::Value>;
    /// Mutable access to the kept keys.
    fn unknown_keys_mut(&mut self) -> &mut serde_json::Map<String, serde_json::Value>;
}
