#!/usr/bin/env bash
# Fails at once, naming the shortfall, when the disk that holds the clone cannot take a
# cold `make test`, rather than with "No space left on device" in whichever build step
# meets the full disk first, a quarter of an hour in. A cold run writes about 8 GB into
# the clone (target/, the virtual environments, node_modules) and about 3 GB of registry
# caches into $HOME (cargo, pip, npm, Maven, Go modules); what target/ holds already counts
# toward it.   scripts/disk-check.sh [GB needed by a cold run, default 11]
set -euo pipefail
cd "$(dirname "$0")/.."
need_gb="${1:-11}"
target="${CARGO_TARGET_DIR:-target}"
built_kb=0
if [ -d "$target" ]; then
  built_kb="$(du -sk "$target" 2>/dev/null | cut -f1)"
fi
need_kb=$((need_gb * 1024 * 1024 - built_kb))
floor_kb=$((2 * 1024 * 1024))
[ "$need_kb" -lt "$floor_kb" ] && need_kb="$floor_kb"
short=0
seen=""
for dir in . "$HOME"; do
  read -r free_kb mount < <(df -Pk "$dir" | awk 'NR == 2 {print $4, $6}')
  case " $seen " in *" $mount "*) continue ;; esac
  seen="$seen $mount"
  if [ "$free_kb" -lt "$need_kb" ]; then
    printf 'disk-check: %s has %d MB free; make test needs about %d MB there (%d GB for a cold run, less what %s holds)\n' \
      "$mount" $((free_kb / 1024)) $((need_kb / 1024)) "$need_gb" "$target" >&2
    short=1
  fi
done
exit "$short"
