#!/usr/bin/env bash
# CI smoke run of the fuzz targets: builds them with cargo-fuzz (libFuzzer +
# AddressSanitizer; stable rustc, `-Z` flags allowed by RUSTC_BOOTSTRAP=1) into
# runtime/fuzz/target, then runs each target for FUZZ_SMOKE_SECONDS (default 20) over the
# committed corpus (runtime/fuzz/corpus/<target>, read only: new inputs go to a scratch
# directory). Exits non-zero if the build fails or any target crashes, panics, hangs
# (-timeout=10) or runs out of memory (-rss_limit_mb=2048); the failing input is saved
# under runtime/fuzz/artifacts/<target>/ (see RELIABILITY.md, fuzzing, to reproduce it).
set -euo pipefail
cd "$(dirname "$0")"
FUZZ_DIR="$(pwd)"
SECONDS_PER_TARGET="${FUZZ_SMOKE_SECONDS:-20}"
CARGO_FUZZ_VERSION=0.13.2
export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
  echo "== installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi

echo "== build (cargo fuzz build, address sanitizer)"
cargo fuzz build --fuzz-dir "$FUZZ_DIR"

host="$(rustc -vV | sed -n 's/^host: //p')"
bin_dir="$FUZZ_DIR/target/$host/release"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in $(cargo fuzz list --fuzz-dir "$FUZZ_DIR"); do
  echo "== $target: ${SECONDS_PER_TARGET}s over corpus/$target"
  mkdir -p "$scratch/$target" "$FUZZ_DIR/artifacts/$target"
  if ! nice -n 19 "$bin_dir/$target" "$scratch/$target" "$FUZZ_DIR/corpus/$target" \
      -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$FUZZ_DIR/artifacts/$target/" -print_final_stats=1 \
      >"$scratch/$target.log" 2>&1; then
    failed+=("$target")
    tail -n 60 "$scratch/$target.log"
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|DONE' "$scratch/$target.log" || true
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz smoke FAILED: ${failed[*]} (inputs in runtime/fuzz/artifacts/)"
  exit 1
fi
echo "fuzz smoke passed"
