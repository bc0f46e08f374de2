//! `mcp`, the command-line client, built as an example of this package so that the tests
//! here (which cargo cannot point at another package's binary) drive the same program.

fn main() {
    mcp_cli::main()
}
