//! Transports: how frames reach a [`Connection`](crate::server::connection::Connection) and how its
//! messages reach the peer.

#[cfg(feature = "http")]
pub mod http;
mod pipes;
pub mod stdio;
