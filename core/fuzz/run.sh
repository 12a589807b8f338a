#!/usr/bin/env bash
# Builds the libFuzzer targets (seeded with stored paused states from the conformance cases) with nightly rustc (the flags `cargo fuzz` uses, plus
# debug assertions and overflow checks, without a sanitizer: the core is safe Rust) and runs
# each for FUZZ_SECONDS (default 60). Uses `cargo fuzz` instead when it is installed.
#   core/fuzz/run.sh [TARGET...]   (default: state_json tool_arguments)
set -euo pipefail
cd "$(dirname "$0")"
seconds="${FUZZ_SECONDS:-60}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(state_json tool_arguments)
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: no nightly toolchain (rustup toolchain install nightly); libFuzzer targets skipped" >&2
  exit 2
fi
if cargo +nightly fuzz --version >/dev/null 2>&1; then
  for t in "${targets[@]}"; do
    cargo +nightly fuzz run "$t" "corpus/$t" "seeds/$t" -- -max_total_time="$seconds"
  done
  exit 0
fi
export CARGO_TARGET_DIR="$PWD/target"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps RUSTFLAGS off build scripts and proc macros (as cargo fuzz does).
host="$(rustc +nightly -vV | sed -n 's/^host: //p')"
cargo +nightly build -q --release --bins --target "$host"
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  "target/$host/release/$t" -max_total_time="$seconds" -max_len=65536 -artifact_prefix="artifacts/$t/" \
    "corpus/$t" "seeds/$t"
done
