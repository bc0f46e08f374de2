#!/usr/bin/env bash
# Installs the pinned official MCP conformance suite (package-lock.json here) into DIR, default
# <repo>/target/conformance. runtime/interop/tests/conformance_suite.rs runs it on first use; it also
# works by hand. Idempotent, offline once installed, safe to run concurrently (npm-pinned.sh).
# Usage: install.sh [DIR]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/../kit/npm-pinned.sh" "$HERE" "${1:-$HERE/../../../../target/conformance}"
