#!/usr/bin/env bash
# Go benchmark of the Phaseo Agent SDK (Go binding) against the Go peers, CloudWeGo Eino
# (its ReAct agent and its ChatModelAgent) and Google's ADK for Go, each SDK in a process of
# its own, rounds alternating (see harness/workload.go for the workloads, harness/bench.go
# for the timing, cmd/driver for the rounds and the table).
#
#   bash benchmarks/go/run.sh              # from anywhere
#   bash benchmarks/go/run.sh --check      # exit 1 if our fan-out or sequential figure is
#                                          # behind the best peer's (a ratio below 1)
#
# Environment: PROFILE (cargo profile of our static library: `release`, the default, or
# `dist`, the packages' fat-LTO build), ROUNDS (3), RUNS (5), WARMUP (3), FANOUT_N (1000),
# SEQ_N (200), SLEEPY_N (100), WORKLOADS (comma list), SDKS (ours,eino-react,eino-adk,adk),
# GC_BEFORE_RUN (1: runtime.GC() before each timed run; 0: timed runs back to back),
# SKIP_BUILD=1 (measure what is built).
#
# Builds, every time (cargo and go make it a no-op when nothing changed): our C ABI library
# in PROFILE, then the programs into benchmarks/go/bin. Ours links
# bindings-go/lib/linux_amd64/libphaseo_agent_c.a: the PROFILE build is copied there for the
# link and the archive that was there (`make go-lib`'s debug build) is put back at once.
# The peers come from the Go module proxy (pins in go.mod, sums in go.sum).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PROFILE="${PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
lib_dir="$REPO/bindings-go/lib/linux_amd64"
lib="$lib_dir/libphaseo_agent_c.a"
sdks="${SDKS:-ours,eino-react,eino-adk,adk}"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== our C ABI library, cargo profile $PROFILE"
  t0=$(date +%s)
  cargo build -q --profile "$PROFILE" -p phaseo-agent-c --manifest-path "$REPO/Cargo.toml"
  echo "   done in $(( $(date +%s) - t0 )) s"
  echo "== the programs (go build)"
  t0=$(date +%s)
  mkdir -p "$lib_dir" "$HERE/bin"
  saved=""
  if [ -f "$lib" ]; then
    saved="$(mktemp)"
    cp -p "$lib" "$saved"
  fi
  restore() {
    if [ -n "$saved" ]; then
      cp -p "$saved" "$lib" && rm -f "$saved"
    elif [ -f "$CARGO_TARGET_DIR/debug/libphaseo_agent_c.a" ]; then
      cp -p "$CARGO_TARGET_DIR/debug/libphaseo_agent_c.a" "$lib"
    else
      rm -f "$lib"
    fi
  }
  trap restore EXIT
  cp -p "$CARGO_TARGET_DIR/$PROFILE/libphaseo_agent_c.a" "$lib"
  # The go command does not hash the archive named in #cgo LDFLAGS: its checksum as a
  # linker flag makes it relink (as the Makefile's GO_LINK_STAMP).
  sum="$(sha256sum "$lib" | cut -c1-16)"
  (cd "$HERE" && go build -ldflags "-X=github.com/phaseo/agent-sdk-go.linkedLibrary=$sum" -o bin/ours ./cmd/ours)
  restore
  trap - EXIT
  (cd "$HERE" && go build -o bin/eino ./cmd/eino && go build -o bin/adk ./cmd/adk && go build -o bin/driver ./cmd/driver)
  echo "   done in $(( $(date +%s) - t0 )) s"
fi
for p in ours eino adk driver; do
  [ -x "$HERE/bin/$p" ] || { echo "missing $HERE/bin/$p" >&2; exit 2; }
done

echo "== load before the benchmark: $(uptime)"
echo "== our library: $CARGO_TARGET_DIR/$PROFILE/libphaseo_agent_c.a"
exec "$HERE/bin/driver" -bin "$HERE/bin" -sdks "$sdks" "$@"
