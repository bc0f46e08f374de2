#!/usr/bin/env bash
# Installs a folder's pinned peers outside the source tree (shared by tests/clients/install.sh
# and tests/servers/install.sh): the npm packages of SRC/package-lock.json in DIR/npm, and
# one Python venv per SRC/requirements-NAME.txt in DIR/py-NAME.
# Usage: install-pinned.sh SRC DIR WHAT ONLY PIP_DEPS
#   WHAT      what is installed, for messages ("SDK clients", "servers")
#   ONLY      "", npm or python
#   PIP_DEPS  "deps" (pip resolves the pins' dependencies) or "no-deps" (the file pins the
#             whole tree, so nothing unpinned can slip in)
#
# Idempotent, and offline once installed: a step is skipped while its stamp matches its pins.
# Each step holds an exclusive lock, so concurrent test binaries install once and wait for it.
set -euo pipefail
KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$1" DIR="$2" WHAT="$3" ONLY="$4" PIP_DEPS="$5"
mkdir -p "$DIR" && DIR="$(cd "$DIR" && pwd)"

if [ "$ONLY" != python ]; then
  "$KIT/npm-pinned.sh" "$SRC" "$DIR/npm"
fi
[ "$ONLY" != npm ] || exit 0

command -v flock >/dev/null || {
  echo "flock is required to install the pinned Python $WHAT safely: install util-linux (it provides flock)" >&2
  exit 3
}
exec 9>"$DIR/.install-python.lock"
flock 9

PY="${PYTHON:-python3}"
# Checked even when installed: each venv runs on this interpreter, and its version is part
# of the stamp (a venv does not survive a new minor version of its base Python).
if ! command -v "$PY" >/dev/null; then
  echo "$PY is not on PATH: install Python 3 with its venv module (Debian/Ubuntu: apt install python3 python3-venv) to run the Python $WHAT" >&2
  exit 3
fi
if ! pyversion="$("$PY" -c 'import venv, ensurepip, sys; print(sys.version)' 2>&1)"; then
  echo "$PY cannot create venvs ($pyversion): install its venv module (Debian/Ubuntu: apt install python3-venv)" >&2
  exit 3
fi

pip_flags=(--quiet --disable-pip-version-check)
[ "$PIP_DEPS" = no-deps ] && pip_flags+=(--no-deps)
for req in "$SRC"/requirements-*.txt; do
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
  "$venv/bin/pip" install "${pip_flags[@]}" -r "$req"
  printf '%s\n' "$want" >"$venv/.install-stamp"
  echo "pip: $venv installed"
done
