#!/usr/bin/env bash
# Runs one pinned official MCP client against a server and prints its one-line JSON summary.
# Usage: run-client.sh <client-id> [--scenario basic|ask] (-- <server command> [args...] | --url <url>)
#   `-- command` spawns the server over stdio; `--url http://HOST:PORT/mcp` uses the SDK's Streamable HTTP client,
#   `--url http://HOST:PORT/sse` its HTTP+SSE client. Venvs from MCP_CLIENTS_DIR, default <repo>/target/clients.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${MCP_CLIENTS_DIR:-$HERE/../../../target/clients}"
id="${1:-}"
case "$id" in
  ts-*) exec node "$HERE/client.mjs" "$@" ;;
  py-2026-07-28-*) exec "$DIR/py-2026-07-28/bin/python" "$HERE/client.py" "$@" ;;
  py-*) exec "$DIR/$id/bin/python" "$HERE/client.py" "$@" ;;
  *) echo "usage: run-client.sh <ts-...|py-...> [--scenario basic|ask] (-- <server command> [args...] | --url <url>)" >&2; exit 2 ;;
esac
