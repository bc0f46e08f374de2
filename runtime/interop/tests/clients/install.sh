#!/usr/bin/env bash
# Installs the pinned official MCP SDK clients under DIR (default <repo>/target/clients), outside the
# source tree, by tests/kit/install-pinned.sh. The tests run it on first use
# (runtime/interop/tests/kit/pinned.rs); it also works by hand. run-client.sh reads DIR from MCP_CLIENTS_DIR.
# Usage: install.sh [--only npm|python] [DIR]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ONLY=""
if [ "${1:-}" = "--only" ]; then
  ONLY="${2:-}"
  shift 2 || true
  case "$ONLY" in npm|python) ;; *) echo "usage: install.sh [--only npm|python] [DIR]" >&2; exit 2 ;; esac
fi
exec "$HERE/../kit/install-pinned.sh" "$HERE" "${1:-${MCP_CLIENTS_DIR:-$HERE/../../../../target/clients}}" "SDK clients" "$ONLY" deps
