#!/usr/bin/env bash
# PHP benchmark of the Phaseo Agent SDK (PHP binding) against the host's floor (bare Fibers
# doing the same trivial work; no installable PHP peer). See bench.php.
#
#   bash benchmarks/php/run.sh             # from anywhere
#
# Environment: PROFILE (cargo profile of the extension: `release`, the default, or `dist`,
# the packages' fat-LTO build), RUNS (5), WARMUP (3), FANOUT_N (1000), SEQ_N (200),
# SLEEPY_N (100), WORKLOADS (comma list), SKIP_BUILD=1 (measure what is built).
#
# Builds the extension in PROFILE every time (a no-op for cargo when nothing changed) and
# loads it from the target folder with `php -n -d extension=...` (the debug extension of
# `make php` next to the sources stays as it is).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PROFILE="${PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
ext="$CARGO_TARGET_DIR/$PROFILE/libphaseo_agent_php.so"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== the extension, cargo profile $PROFILE"
  t0=$(date +%s)
  cargo build -q --profile "$PROFILE" -p phaseo-agent-php --manifest-path "$REPO/Cargo.toml"
  echo "   done in $(( $(date +%s) - t0 )) s"
fi
[ -f "$ext" ] || { echo "missing $ext" >&2; exit 2; }

echo "== load before the benchmark: $(uptime)"
exec php -n -d extension="$ext" "$HERE/bench.php" "$@"
