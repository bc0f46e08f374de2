//! The smallest useful server, as the README shows it: one tool with typed arguments,
//! served to clients of every revision on stdio.
//! `cargo run -p mcp-runtime --example quickstart`.

use mcp_runtime::model::{Implementation, Tool};
use mcp_runtime::Server;

/// What `greet` takes; its JSON Schema becomes the tool's `inputSchema`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn main() -> std::io::Result<()> {
    let server = Server::builder(Implementation::new("hello", "1.0.0"))
        .typed_tool(
            Tool::new("greet", "Says hello").read_only(),
            |args: Greet, _ctx| async move { format!("Hello, {}!", args.name) },
        )
        .build();
    mcp_runtime::transport::stdio::run(server)
}
