//! One MCP server for every protocol revision: negotiation, lifecycle, version-appropriate
//! routing and shaping. (Filled by the runtime issue; for now it re-exports the bindings.)

pub use mcp_generated as generated;
