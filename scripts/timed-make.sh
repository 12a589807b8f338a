#!/usr/bin/env bash
# Makes each target in turn, as `make test` does, and closes with how long each took (also
# when one fails, then with the failing one last): the per-target times of a cold run are
# in every CI log.   MAKE=make scripts/timed-make.sh TARGET...
set -uo pipefail
make="${MAKE:-make}"
names=()
times=()
started="$(date +%s)"

report() {
  local total=$(($(date +%s) - started)) i
  echo
  echo "timed-make: seconds per target"
  for i in "${!names[@]}"; do printf '  %-22s %6s\n' "${names[$i]}" "${times[$i]}"; done
  printf '  %-22s %6s  (%d min %02d s)\n' total "$total" $((total / 60)) $((total % 60))
}

for target in "$@"; do
  t0="$(date +%s)"
  $make --no-print-directory "$target"
  rc=$?
  names+=("$target")
  times+=("$(($(date +%s) - t0))")
  if [ "$rc" != 0 ]; then
    report
    echo "timed-make: $target failed (exit $rc)"
    exit "$rc"
  fi
done
report
