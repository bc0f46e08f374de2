#!/usr/bin/env bash
# Installs the pinned third-party MCP servers under DIR (default <repo>/target/servers), outside the
# source tree, by tests/kit/install-pinned.sh. The tests run it on first use
# (runtime/interop/tests/kit/pinned.rs); it also works by hand.
# Usage: install.sh [--only npm|python] [DIR]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ONLY=""
if [ "${1:-}" = "--only" ]; then
  ONLY="${2:-}"
  shift 2 || true
  case "$ONLY" in npm|python) ;; *) echo "usage: install.sh [--only npm|python] [DIR]" >&2; exit 2 ;; esac
fi
exec "$HERE/../kit/install-pinned.sh" "$HERE" "${1:-$HERE/../../../../target/servers}" "servers" "$ONLY" no-deps
