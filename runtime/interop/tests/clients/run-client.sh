#!/usr/bin/env bash
# Runs one pinned official MCP client against a server and prints its one-line JSON summary.
# Usage: run-client.sh <client-id> [--scenario basic|ask|poll|task] (-- <server command> [args...] | --url <url>)
#   `-- command` spawns the server over stdio; `--url http://HOST:PORT/mcp` uses the SDK's Streamable HTTP client,
#   `--url http://HOST:PORT/sse` its HTTP+SSE client. Clients from MCP_CLIENTS_DIR (default <repo>/target/clients),
#   where install.sh puts them.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${MCP_CLIENTS_DIR:-$HERE/../../../../target/clients}"
not_installed() { echo "$1 is not installed: run $HERE/install.sh${MCP_CLIENTS_DIR:+ \"$DIR\"}" >&2; exit 2; }
id="${1:-}"
case "$id" in
  ts-*)
    npm_dir="$DIR/npm"
    [ -d "$npm_dir/node_modules" ] || not_installed "$npm_dir/node_modules"
    # client.mjs finds the SDKs relative to itself, so it runs from a copy beside node_modules,
    # refreshed whenever the source differs. Renamed into place: other clients may be starting it.
    if ! cmp -s "$HERE/client.mjs" "$npm_dir/client.mjs"; then
      tmp="$(mktemp "$npm_dir/.client.mjs.XXXXXX")"
      cp "$HERE/client.mjs" "$tmp"
      mv -f "$tmp" "$npm_dir/client.mjs"
    fi
    exec node "$npm_dir/client.mjs" "$@" ;;
  py-2026-07-28-*)
    [ -x "$DIR/py-2026-07-28/bin/python" ] || not_installed "$DIR/py-2026-07-28"
    exec "$DIR/py-2026-07-28/bin/python" "$HERE/client.py" "$@" ;;
  py-*)
    [ -x "$DIR/$id/bin/python" ] || not_installed "$DIR/$id"
    exec "$DIR/$id/bin/python" "$HERE/client.py" "$@" ;;
  *) echo "usage: run-client.sh <ts-...|py-...> [--scenario basic|ask|poll|task] (-- <server command> [args...] | --url <url>)" >&2; exit 2 ;;
esac
