#!/usr/bin/env bash
# Installs the pinned third-party MCP servers under DIR (default <repo>/target/servers), outside the
# source tree: the npm servers of package-lock.json in DIR/npm, and one Python venv per
# requirements-*.txt in DIR/py-<name>. The tests run it on first use (runtime/interop/tests/kit/pinned.rs);
# it also works by hand.
# Usage: install.sh [--only npm|python] [DIR]
#
# Idempotent, and offline once installed: a step is skipped while its stamp matches its pins.
# Each step holds an exclusive lock, so concurrent test binaries install once and wait for it.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ONLY=""
if [ "${1:-}" = "--only" ]; then
  ONLY="${2:-}"
  shift 2 || true
  case "$ONLY" in npm|python) ;; *) echo "usage: install.sh [--only npm|python] [DIR]" >&2; exit 2 ;; esac
fi
DIR="${1:-$HERE/../../../../target/servers}"
mkdir -p "$DIR" && DIR="$(cd "$DIR" && pwd)"

if [ "$ONLY" != python ]; then
  "$HERE/../kit/npm-pinned.sh" "$HERE" "$DIR/npm"
fi
[ "$ONLY" != npm ] || exit 0

command -v flock >/dev/null || {
  echo "flock is required to install the pinned Python servers safely: install util-linux (it provides flock)" >&2
  exit 3
}
exec 9>"$DIR/.install-python.lock"
flock 9

PY="${PYTHON:-python3}"
# Checked even when installed: each venv runs on this interpreter, and its version is part
# of the stamp (a venv does not survive a new minor version of its base Python).
if ! command -v "$PY" >/dev/null; then
  echo "$PY is not on PATH: install Python 3 with its venv module (Debian/Ubuntu: apt install python3 python3-venv) to run the Python servers" >&2
  exit 3
fi
if ! pyversion="$("$PY" -c 'import venv, ensurepip, sys; print(sys.version)' 2>&1)"; then
  echo "$PY cannot create venvs ($pyversion): install its venv module (Debian/Ubuntu: apt install python3-venv)" >&2
  exit 3
fi

for req in "$HERE"/requirements-*.txt; do
  name="$(basename "$req" .txt)"; name="${name#requirements-}"
  venv="$DIR/py-$name"
  want="$({ cat "$req"; echo "$pyversion"; } | sha256sum)"
  if [ -f "$venv/.install-stamp" ] && [ "$(cat "$venv/.install-stamp")" = "$want" ]; then
    echo "pip: $venv up to date"
    continue
  fi
  echo "pip: installing $req into $venv"
  rm -rf "$venv"
  "$PY" -m venv "$venv"
  # --no-deps: the file pins the whole tree, so nothing unpinned can slip in.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$req"
  printf '%s\n' "$want" >"$venv/.install-stamp"
done
