#!/usr/bin/env bash
# Ruby benchmark of the Phaseo Agent SDK (Ruby binding) against the host's floor (bare Ruby
# threads doing the same trivial work; no installable Ruby peer). See bench.rb.
#
#   bash benchmarks/ruby/run.sh            # from anywhere
#
# Environment: PROFILE (cargo profile of the extension: `release`, the default, or `dist`,
# the packages' fat-LTO build), RUNS (5), WARMUP (3), FANOUT_N (1000), SEQ_N (200),
# SLEEPY_N (100), WORKLOADS (comma list), SKIP_BUILD=1 (measure what is built).
#
# Builds the extension in PROFILE every time (a no-op for cargo when nothing changed) and
# loads it from a copy of bindings-ruby/lib under the target folder, so the debug extension
# of `make ruby` next to the sources stays as it is.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PROFILE="${PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
lib="$CARGO_TARGET_DIR/bench-ruby/lib"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== the extension, cargo profile $PROFILE"
  t0=$(date +%s)
  cargo build -q --profile "$PROFILE" -p phaseo-agent-ruby --manifest-path "$REPO/Cargo.toml"
  rm -rf "$lib" && mkdir -p "$lib"
  cp -r "$REPO/bindings-ruby/lib/." "$lib/"
  cp "$CARGO_TARGET_DIR/$PROFILE/libphaseo_agent_sdk.so" "$lib/phaseo_agent_sdk/phaseo_agent_sdk.so"
  echo "   done in $(( $(date +%s) - t0 )) s"
fi
[ -f "$lib/phaseo_agent_sdk/phaseo_agent_sdk.so" ] || { echo "missing $lib/phaseo_agent_sdk/phaseo_agent_sdk.so" >&2; exit 2; }

echo "== load before the benchmark: $(uptime)"
exec ruby -I"$lib" "$HERE/bench.rb" "$@"
