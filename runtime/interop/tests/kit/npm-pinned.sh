#!/usr/bin/env bash
# Installs the npm tree pinned by SRC/package.json + SRC/package-lock.json into DEST (`npm ci`
# there), so that nothing is written into the source tree. Used by the SDK-client and
# conformance-suite installers, which the tests run on first use.
# Usage: npm-pinned.sh SRC DEST
#
# Cheap and offline when already installed: the stamp in DEST/node_modules records the
# package files it was installed from, and nothing runs while it matches. Several test
# binaries may call this at once, so the check and the install run under an exclusive lock.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: npm-pinned.sh SRC DEST" >&2; exit 2; }
SRC="$(cd "$1" && pwd)"
mkdir -p "$2" && DEST="$(cd "$2" && pwd)"

command -v flock >/dev/null || {
  echo "flock is required to install the pinned npm packages safely: install util-linux (it provides flock)" >&2
  exit 3
}
exec 9>"$DEST/.install.lock"
flock 9

# node is checked even when installed: the tests run it.
if ! command -v node >/dev/null; then
  echo "node is not on PATH: install Node.js 20 or later, with npm (https://nodejs.org), to run the tests that use $SRC/package.json" >&2
  exit 3
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  echo "node $(node --version) is too old: install Node.js 20 or later, with npm (https://nodejs.org)" >&2
  exit 3
fi

want="$(cat "$SRC/package.json" "$SRC/package-lock.json" | sha256sum)"
stamp="$DEST/node_modules/.install-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "npm: $DEST up to date"
  exit 0
fi

command -v npm >/dev/null || {
  echo "npm is not on PATH: install npm (it ships with Node.js 20 or later, https://nodejs.org)" >&2
  exit 3
}
echo "npm: installing $SRC/package-lock.json into $DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
# `npm ci` starts by deleting node_modules, stamp included, so a failed install is retried.
# --prefer-offline: the lockfile pins every tarball by integrity, so a cached copy is as good
# as a fresh one, and an install from a warm cache works without the network.
(cd "$DEST" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
(cd "$DEST" && npm ls --depth=0) || true
printf '%s\n' "$want" >"$stamp"
