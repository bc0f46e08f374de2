//! The `mcp-bridge` command: everything it does is in the library (`mcp_bridge::main`).

fn main() {
    mcp_bridge::main()
}
