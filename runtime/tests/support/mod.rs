//! Support for the tests that drive external programs against the example server: the
//! official SDK clients (`sdk_clients.rs`, `sdk_clients_http.rs`) and the official
//! conformance suite (`conformance_suite.rs`). Those programs are pinned in the repository
//! and installed by the tests themselves on first use (`pinned`), so that `cargo test
//! --workspace` needs nothing installed by hand beyond node, npm and python3.
// Each test binary uses a different part of this module.
#![allow(dead_code, unreachable_pub)]

pub mod pinned;
pub mod server;
