#!/usr/bin/env bash
# Runs one pinned official MCP client against a stdio server and prints its one-line JSON summary.
# Usage: run-client.sh <client-id> -- <server command> [args...]   (venvs from MCP_CLIENTS_DIR, default <repo>/target/clients)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${MCP_CLIENTS_DIR:-$HERE/../../../target/clients}"
id="${1:-}"
case "$id" in
  ts-*) exec node "$HERE/client.mjs" "$@" ;;
  py-2026-07-28-*) exec "$DIR/py-2026-07-28/bin/python" "$HERE/client.py" "$@" ;;
  py-*) exec "$DIR/$id/bin/python" "$HERE/client.py" "$@" ;;
  *) echo "usage: run-client.sh <ts-...|py-...> -- <server command> [args...]" >&2; exit 2 ;;
esac
