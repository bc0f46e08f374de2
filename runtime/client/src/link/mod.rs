//! Client transports ("links"): how the client's messages reach a server and how the
//! server's messages come back. Every link delivers what arrives — responses, server
//! requests, notifications, and failures of one request's exchange — on one channel of
//! [`Incoming`]; the client core correlates them. The core hands a link encoded messages
//! ([`Outbound`]) with the HTTP headers the revision in force asks for already worked
//! out, so links know JSON-RPC framing and HTTP, never MCP semantics.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::error::ClientError;
use mcp_runtime::wire::{Message, RequestId};

#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "http")]
pub(crate) mod legacy_sse;
// Pure std: compiled without `http` too, so that the fuzz targets need no HTTP stack.
pub(crate) mod sse;
pub(crate) mod stdio;

pub(crate) type LinkFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a link delivers to the core.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A message from the server; `related` names the client request whose exchange
    /// carried it, when the transport knows (an HTTP POST's response stream).
    Message {
        message: Message,
        related: Option<RequestId>,
    },
    /// The exchange of request `id` failed before its answer arrived.
    Failed { id: RequestId, error: ClientError },
    /// The connection ended for good.
    Closed(String),
}

/// What the client sends: one encoded message and what the transport needs to know of it.
// Only the HTTP links read everything but `json` (a stdio-only build has none).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
#[derive(Clone, Debug)]
pub(crate) struct Outbound {
    /// The JSON-RPC message.
    pub(crate) json: Bytes,
    /// What it is.
    pub(crate) kind: OutboundKind,
    /// Extra HTTP headers (2026-07-28 request metadata), name and value.
    pub(crate) headers: Vec<(String, String)>,
    /// Whether its answer opens a legacy session (`initialize`: an HTTP link keeps the
    /// `Mcp-Session-Id` the answer names).
    pub(crate) opens_session: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum OutboundKind {
    /// A request, answered by a response with this id.
    Request(RequestId),
    /// A notification.
    Notification,
    /// A response to a server request.
    Response,
}

/// Which kind of transport a link is (the core adds HTTP headers only for HTTP links,
/// and cancels modern HTTP requests by closing their streams).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// Newline-delimited JSON over a byte stream (a child's stdio).
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
    /// HTTP+SSE (2024-11-05).
    LegacySse,
}

/// A client transport.
pub(crate) trait Link: Send + Sync + 'static {
    /// Which kind it is.
    fn kind(&self) -> LinkKind;

    /// Sends one message. What comes back arrives on the link's incoming channel; an
    /// error here means the message did not leave.
    fn send(&self, out: Outbound) -> LinkFuture<'_, Result<(), ClientError>>;

    /// Stops waiting for request `id`'s exchange (HTTP: closes its response stream, which
    /// a 2026-07-28 server reads as cancellation).
    fn abandon(&self, id: &RequestId);

    /// A legacy session was opened at `version` (HTTP: the `MCP-Protocol-Version`
    /// header of every later request).
    fn session_opened(&self, version: crate::ProtocolVersion);

    /// Whether the link has a session to send requests on: `false` once an HTTP server
    /// ended it (404) and until a new `initialize` opens another.
    fn has_session(&self) -> bool {
        true
    }

    /// The session is initialized: opens what carries the server's unsolicited messages
    /// (HTTP: the session's GET stream), resolving once it is open or refused.
    fn listen(&self) -> LinkFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Ends the connection (stdio: closes the child's input and waits for it to exit;
    /// HTTP: ends the session).
    fn close(&self) -> LinkFuture<'_, ()>;
}

/// The channel a link delivers on.
pub(crate) type IncomingTx = mpsc::UnboundedSender<Incoming>;
