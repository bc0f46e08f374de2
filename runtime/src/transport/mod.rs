//! Transports: how frames reach a [`Connection`](crate::session::Connection) and how its
//! messages reach the peer.

mod event_store;
pub mod http;
pub mod pipes;
pub mod stdio;
