//! Transports: how frames reach a connection and how its messages reach the peer. This
//! crate has stdio; `mcp-runtime-http` has Streamable HTTP and HTTP+SSE.

mod pipes;
pub mod stdio;
