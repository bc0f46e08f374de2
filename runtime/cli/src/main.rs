//! The `mcp` command: everything it does is in the library (`mcp_cli::main`).

fn main() {
    mcp_cli::main()
}
