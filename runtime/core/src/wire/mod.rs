//! The wire: JSON-RPC 2.0 as bytes, independent of any MCP revision. What arrives is
//! parsed once into [`Frame`]s of [`Message`]s; what leaves is an [`Outgoing`], encoded
//! once and shared as bytes by every transport.

pub mod encode;
mod envelope;
mod error;
mod json_text;
mod map_key;
mod message;
mod meta_cache;
mod outgoing;
mod parse;

pub use error::{ErrorCode, RpcError};
pub use message::{params_with_meta, Frame, Invalid, Message, RequestId, RequestMeta};
pub(crate) use outgoing::ENVELOPE_ROOM;
pub use outgoing::{
    batch, error_response, notification, request, result_response, Encoded, Outgoing, OutgoingKind,
};
pub use parse::{member, parse_frame, parse_frame_general, parse_message, strings};
