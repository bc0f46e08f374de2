#!/usr/bin/env bash
# Installs the pinned official MCP SDK clients: `npm ci` here, and one Python venv per mcp release under DIR.
# Usage: install.sh [DIR]   (DIR defaults to <repo>/target/clients; run-client.sh reads it from MCP_CLIENTS_DIR)
# Idempotent: each step is skipped while its lock/requirements file is unchanged since the last install.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${1:-${MCP_CLIENTS_DIR:-$HERE/../../../target/clients}}"
mkdir -p "$DIR" && DIR="$(cd "$DIR" && pwd)"

stamp_ok() { [ -f "$2" ] && [ "$(sha256sum < "$1")" = "$(cat "$2")" ]; }

if stamp_ok "$HERE/package-lock.json" "$HERE/node_modules/.install-stamp"; then
  echo "npm: node_modules up to date"
else
  (cd "$HERE" && npm ci --no-audit --no-fund)
  sha256sum < "$HERE/package-lock.json" > "$HERE/node_modules/.install-stamp"
fi
for alias in sdk-2024-11-05 sdk-2025-03-26 sdk-2025-06-18 sdk-2025-11-25 client-2026-07-28 sdk-sse-1.9.0; do
  node -e 'const p=require(process.argv[1]); console.log(`npm: ${process.argv[2]} -> ${p.name}@${p.version}`)' \
    "$HERE/node_modules/$alias/package.json" "$alias"
done

for req in "$HERE"/requirements-*.txt; do
  rev="$(basename "$req" .txt)"; rev="${rev#requirements-}"
  venv="$DIR/py-$rev"
  if ! stamp_ok "$req" "$venv/.install-stamp"; then
    rm -rf "$venv"
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    sha256sum < "$req" > "$venv/.install-stamp"
  fi
  echo "pip: $venv -> mcp@$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("mcp"))')"
done
