//! Transports: how frames reach a [`Connection`](crate::session::Connection) and how its
//! messages reach the peer.

#[cfg(feature = "http")]
mod event_store;
#[cfg(feature = "http")]
pub mod http;
pub mod pipes;
pub mod stdio;
