#!/usr/bin/env bash
# The new-revision drill: proves that a protocol revision is added with one command and
# served with no hand-written edit. On a temporary copy of the repository it adds two
# revisions with `cargo codegen add-revision` — the 2026-07-28 schema under a new id, like
# 2026-07-28 (stateless), and the 2025-11-25 schema under another, like 2025-11-25
# (legacy) — checks that only generated files and the manifest changed, builds, and runs
# `runtime/interop/tests/every_revision.rs` there: a full stdio session with the example server at
# every revision, each server message an exact instance of that revision's schema.
#
# Usage: .ci/new-revision-drill.sh   (MCP_SCHEMA_DIR must name the schema mirror)
# It builds in target/drill: never in target/ itself, where cargo would take the copy's
# crates for this repository's own (their artifact names depend only on paths relative to
# the workspace root) and later builds here could link the copy's generated revisions.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
: "${MCP_SCHEMA_DIR:?set MCP_SCHEMA_DIR to the schema mirror (DIR/<revision>/schema.json)}"
MCP_SCHEMA_DIR="$(cd "$MCP_SCHEMA_DIR" && pwd)"
export MCP_SCHEMA_DIR CARGO_TARGET_DIR="$ROOT/target/drill"

LEGACY_ID=2026-10-01 LEGACY_LIKE=2025-11-25
MODERN_ID=2027-01-01 MODERN_LIKE=2026-07-28

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="$work/repo" mirror="$work/mirror"

# The copy: the tracked files as they are in the working tree, as a fresh git repository
# so that what add-revision changes can be listed.
mkdir -p "$repo"
git ls-files -z | xargs -0 cp --parents -t "$repo"
(cd "$repo" && git init -q && git add -A && git -c user.name=drill -c user.email=drill@invalid commit -qm base)

mkdir -p "$mirror/$LEGACY_ID" "$mirror/$MODERN_ID"
cp "$MCP_SCHEMA_DIR/$LEGACY_LIKE/schema.json" "$mirror/$LEGACY_ID/schema.json"
cp "$MCP_SCHEMA_DIR/$MODERN_LIKE/schema.json" "$mirror/$MODERN_ID/schema.json"

cd "$repo"
echo "== add-revision $MODERN_ID --like $MODERN_LIKE, $LEGACY_ID --like $LEGACY_LIKE"
cargo codegen add-revision "$MODERN_ID" --from "$mirror" --like "$MODERN_LIKE"
cargo codegen add-revision "$LEGACY_ID" --from "$mirror" --like "$LEGACY_LIKE"
cargo codegen --offline check

echo "== what the two commands changed"
changed="$(git status --porcelain --untracked-files=all | cut -c4-)"
echo "$changed"
unexpected="$(echo "$changed" | grep -v -E '^(generated/|schema/revisions\.toml$|snapshots/digest/|docs/protocol-changes\.md$)' || true)"
if [ -n "$unexpected" ]; then
  echo "the drill changed files that are not generated:"; echo "$unexpected"; exit 1
fi
for id in "$MODERN_ID" "$LEGACY_ID"; do
  grep -q "^id = \"$id\"" schema/revisions.toml || { echo "$id is not in the manifest"; exit 1; }
done

echo "== build, and serve every revision over stdio (runtime/interop/tests/every_revision.rs)"
cargo build --quiet -p mcp-interop --example conformance_server
server="$CARGO_TARGET_DIR/debug/examples/conformance_server"
discover='{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"'"$MODERN_ID"'","io.modelcontextprotocol/clientCapabilities":{}}}}'
answer="$(echo "$discover" | "$server")"
echo "server/discover at $MODERN_ID: $answer"
for id in "$MODERN_ID" "$LEGACY_ID"; do
  echo "$answer" | grep -q "\"$id\"" || { echo "server/discover does not list $id"; exit 1; }
done
cargo test --quiet -p mcp-interop --test every_revision
echo "new-revision drill passed: $MODERN_ID (like $MODERN_LIKE) and $LEGACY_ID (like $LEGACY_LIKE) served with no hand-written edit"
