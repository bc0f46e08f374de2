#!/usr/bin/env bash
# The pinned conformance suite's own CLI, as installed by install.sh (DIR from MCP_CONFORMANCE_DIR,
# default <repo>/target/conformance), with the Node 20 preload it needs (node20-globsync.mjs).
# conformance_suite.rs runs it; by hand, e.g.:
#   conformance.sh list --server --requirements 2026-07-28
#   conformance.sh server --url http://127.0.0.1:PORT/mcp --requirements 2026-07-28 [--scenario NAME --verbose]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${MCP_CONFORMANCE_DIR:-$HERE/../../../../target/conformance}"
CLI="$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -f "$CLI" ] || { echo "the conformance suite is not installed in $DIR: run $HERE/install.sh" >&2; exit 2; }
exec node --import "$HERE/node20-globsync.mjs" "$CLI" "$@"
