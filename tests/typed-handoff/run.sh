#!/usr/bin/env bash
# A typed tool's run handed between languages (docs/behaviour.md §4, §20): for every ordered
# pair of workers, the first defines the refund tool from its host type
# (tests/typed-tools/refund_schema.json), runs the model's call until it pauses for
# approval and writes the state JSON; the second defines the same tool from its own host
# type, approves the call and continues the run, which must complete with the receipt the
# tool built from the decoded arguments.
#
#   tests/typed-handoff/run.sh     (needs `make ruby csharp-test-build php kotlin`)
# Prints PASS/FAIL lines and one closing line "<N> passed, <M> failed".
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
declare -A worker
worker[ruby]="ruby $root/bindings-ruby/test/typed_worker.rb"
worker[csharp]="env LD_LIBRARY_PATH=$target/debug mono $target/dotnet/Phaseo.AgentSdk.TestWorker.exe typed"
worker[php]="php -d extension=$root/bindings-php/php/phaseo_agent.so $root/bindings-php/tests/typed_worker.php"
worker[java]="$root/tests/typed-handoff/java_worker.sh"
langs=(ruby csharp php java)
expected='{"output":"Refunded.","status":"completed","tool":{"lines":3,"order_id":"A-17","refunded":25}}'
# One JSON line, keys sorted and integral numbers written as integers (25.0 and 25 are one number).
canonical() {
  python3 -c '
import json, sys
def norm(v):
    if isinstance(v, float) and v.is_integer(): return int(v)
    if isinstance(v, dict): return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list): return [norm(x) for x in v]
    return v
print(json.dumps(norm(json.loads(sys.stdin.read().strip().splitlines()[-1])), sort_keys=True, separators=(",", ":")))'
}

work="$(mktemp -d /tmp/phaseo-typed-handoff-XXXXXX)"
trap 'rm -rf "$work"' EXIT
passed=0; failed=0
for a in "${langs[@]}"; do
  for b in "${langs[@]}"; do
    [ "$a" = "$b" ] && continue
    state="$work/$a-$b.json"
    paused="$(${worker[$a]} pause "$state" 2>&1)" || { echo "FAIL $a→$b: $a could not pause: $paused"; failed=$((failed + 1)); continue; }
    if [ "$(canonical <<<"$paused")" != '{"pending":["c1"],"status":"waiting_for_human"}' ]; then
      echo "FAIL $a→$b: $a did not pause for approval: $paused"; failed=$((failed + 1)); continue
    fi
    done_line="$(${worker[$b]} continue "$state" 2>&1)" || { echo "FAIL $a→$b: $b could not continue: $done_line"; failed=$((failed + 1)); continue; }
    got="$(canonical <<<"$done_line" 2>&1)"
    if [ "$got" = "$expected" ]; then
      echo "PASS $a→$b"; passed=$((passed + 1))
    else
      echo "FAIL $a→$b: got $got"; failed=$((failed + 1))
    fi
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
