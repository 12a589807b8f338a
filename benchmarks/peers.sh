#!/usr/bin/env bash
# Every language's side-by-side benchmark, one after the other, then one table
# (benchmarks/peers_table.py): Python, Node, Go and the JVM against their installable peers,
# Ruby, PHP and C# against the host's floor (no installable peer).
#
#   bash benchmarks/peers.sh             # = make bench-peers
#   bash benchmarks/peers.sh --check     # = make bench-check: exit 1 when a fan-out or
#                                        # sequential ratio vs the best peer is below 1
#
# Environment: PROFILE (cargo profile of every native library: `dist`, the packages' fat-LTO
# build, by default; `release` builds faster), LANGS (default
# "python node go java ruby php csharp"), and each script's own (ROUNDS, RUNS, ...).
# Python and Node run 200 sequential turns here (SEQ_SIZES=200), as the other languages.
# Each language's log goes to $CARGO_TARGET_DIR/bench-peers/<language>.log; a language that
# fails is reported in the table and fails the run.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
export PROFILE="${PROFILE:-dist}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
export SEQ_SIZES="${SEQ_SIZES:-200}"
logs="$CARGO_TARGET_DIR/bench-peers"
mkdir -p "$logs"
check=()
[ "${1:-}" = "--check" ] && check=(--check)
status=0
files=()
for lang in ${LANGS:-python node go java ruby php csharp}; do
  script="$HERE/$lang/run.sh"
  [ -f "$script" ] || { echo "no benchmark for $lang ($script)" >&2; exit 2; }
  echo "=== $lang (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  bash "$script" 2>&1 | tee "$logs/$lang.log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "=== $lang failed (exit $rc)"; status=1; }
  files+=("$logs/$lang.log")
done
python3 "$HERE/peers_table.py" "${check[@]}" "${files[@]}" || status=1
exit "$status"
