#!/usr/bin/env bash
# Build cost of a minimal stdio server: this runtime (default features off, stdio only)
# next to rmcp 3.11 (its default features plus `transport-io`), each a throwaway binary
# crate built from scratch (debug, its own target directory, same machine, one after the
# other). Prints the number of crates compiled and the CPU seconds (user + sys) of each.
#
#   runtime/interop/benches/build_cost.sh            # both
#   runtime/interop/benches/build_cost.sh ours       # one
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
work="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
which="${1:-both}"

make_crate() { # name, dependencies, main.rs
  mkdir -p "$work/$1/src"
  cat >"$work/$1/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$2

[workspace]
TOML
  printf '%s\n' "$3" >"$work/$1/src/main.rs"
}

measure() { # name
  local dir="$work/$1"
  (cd "$dir" && cargo generate-lockfile --offline -q 2>/dev/null || cargo generate-lockfile -q)
  local crates user sys wall
  /usr/bin/time -f "%U %S %e" -o "$work/$1.time" \
    cargo build --manifest-path "$dir/Cargo.toml" --target-dir "$dir/target" \
    --message-format json >"$work/$1.json" 2>"$work/$1.log" || {
    echo "$1: build failed:" >&2; tail -30 "$work/$1.log" >&2; exit 1; }
  crates=$(grep '"reason":"compiler-artifact"' "$work/$1.json" \
    | sed -E 's/.*"package_id":"([^"]+)".*/\1/' | sort -u | wc -l)
  read -r user sys wall <"$work/$1.time"
  printf '| %s | %s | %.1f | %.1f |\n' "$1" "$crates" "$(echo "$user + $sys" | bc)" "$wall"
}

make_crate minimal-ours \
  "mcp-runtime = { path = \"$root/runtime/core\", default-features = false }
tokio = { version = \"1\", features = [\"rt-multi-thread\"] }
serde_json = \"1\"" \
  'use mcp_runtime::model::{Implementation, Tool, ToolResult};
fn main() -> std::io::Result<()> {
    let echo = Tool::new("echo", "echo");
    let server = mcp_runtime::Server::builder(Implementation::new("minimal", "1.0.0"))
        .tool(echo, |_args, _ctx| async { Ok(ToolResult::text("hello")) })
        .build();
    tokio::runtime::Runtime::new()?.block_on(mcp_runtime::transport::stdio::serve_stdio(server))
}'

make_crate minimal-rmcp \
  'rmcp = { version = "=3.11.0", features = ["server", "transport-io"] }
tokio = { version = "1", features = ["rt-multi-thread", "macros"] }' \
  'use rmcp::{model::*, service::RequestContext, ErrorData, RoleServer, ServerHandler, ServiceExt};
struct Minimal;
impl ServerHandler for Minimal {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
    async fn list_tools(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![Tool::new("echo", "echo", std::sync::Arc::new(Default::default()))]))
    }
    async fn call_tool(&self, _: CallToolRequestParams, _: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("hello")]).into())
    }
}
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Minimal.serve(rmcp::transport::stdio_pipes()).await?.waiting().await?;
    Ok(())
}'

echo "| server | crates compiled | CPU-s (user+sys) | wall s |"
echo "|---|---|---|---|"
case "$which" in
  ours) measure minimal-ours ;;
  rmcp) measure minimal-rmcp ;;
  *) measure minimal-ours; measure minimal-rmcp ;;
esac
