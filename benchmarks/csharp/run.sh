#!/usr/bin/env bash
# C# benchmark of the Phaseo Agent SDK (C# binding on Mono) against the host's floor (bare
# Tasks doing the same trivial work; no installable .NET peer here). See Bench.cs.
#
#   bash benchmarks/csharp/run.sh          # from anywhere
#
# Environment: PROFILE (cargo profile of the C ABI library: `release`, the default, or
# `dist`, the packages' fat-LTO build), RUNS (5), WARMUP (3), FANOUT_N (1000), SEQ_N (200),
# SLEEPY_N (100), WORKLOADS (comma list), SKIP_BUILD=1 (measure what is built).
#
# Builds the C ABI library in PROFILE (a no-op for cargo when nothing changed), the binding's
# assembly and this program with Debian's Mono (mcs, optimized) into the target folder, and
# runs it with the PROFILE library first on the library path.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PROFILE="${PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
out="$CARGO_TARGET_DIR/bench-csharp"
MCS=(mcs -langversion:7.2 -nologo -optimize+ -r:System.Core.dll -r:System.ComponentModel.DataAnnotations.dll)

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== the C ABI library, cargo profile $PROFILE; the assembly and the program (mcs)"
  t0=$(date +%s)
  cargo build -q --profile "$PROFILE" -p phaseo-agent-c --manifest-path "$REPO/Cargo.toml"
  mkdir -p "$out"
  "${MCS[@]}" -target:library -out:"$out/Phaseo.AgentSdk.dll" "$REPO"/bindings-dotnet/src/*.cs
  "${MCS[@]}" -target:exe -r:"$out/Phaseo.AgentSdk.dll" -out:"$out/Bench.exe" "$HERE/Bench.cs"
  echo "   done in $(( $(date +%s) - t0 )) s"
fi
[ -f "$CARGO_TARGET_DIR/$PROFILE/libphaseo_agent_c.so" ] || { echo "missing $CARGO_TARGET_DIR/$PROFILE/libphaseo_agent_c.so" >&2; exit 2; }
[ -f "$out/Bench.exe" ] || { echo "missing $out/Bench.exe" >&2; exit 2; }

echo "== load before the benchmark: $(uptime)"
LD_LIBRARY_PATH="$CARGO_TARGET_DIR/$PROFILE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec mono --optimize=all "$out/Bench.exe" "$@"
