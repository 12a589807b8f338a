#!/usr/bin/env bash
# Cross-language durable runs (docs/behaviour.md §10): a run paused by one language is
# continued by run id by another, through the same store — a SQLite file and PostgreSQL —
# in both directions (Python ↔ Node, Python ↔ Kotlin, Python ↔ Ruby). The workers are the bindings' own
# store-test workers (same agent, same tool); each continue must complete the run with the
# tool executed exactly once, and a second continue from the first language must be
# refused with the docs/behaviour.md §10 message.
#
#   tests/store-handoff/run.sh     (needs `make python node kotlin ruby`; starts its own PostgreSQL
#                                   unless PHASEO_TEST_POSTGRES_URL is set)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [ -z "${PHASEO_TEST_POSTGRES_URL:-}" ]; then
  exec "$root/scripts/with-test-postgres.sh" "$0" "$@"
fi
py="${PHASEO_PYTHON:-$root/.venvs/py/bin/python}"
py_worker=("$py" "$root/bindings-python/tests/store_worker.py")
node_worker=(node "$root/bindings-node/test-fixtures/store-worker.mjs")
kotlin_worker=("$root/tests/store-handoff/kotlin_worker.sh")
ruby_worker=(ruby "$root/bindings-ruby/test/store_worker.rb")
work="$(mktemp -d /tmp/phaseo-store-handoff-XXXXXX)"
trap 'rm -rf "$work"' EXIT

field() { "$py" -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1]).get(sys.argv[1]))' "$1"; }

failures=0
checks=0
check() { # from to store
  checks=$((checks + 1))
  local from="$1" to="$2" store="$3" log="$work/exec-$RANDOM.log"
  : >"$log"
  export PHASEO_EXEC_LOG="$log"
  local -n pauser="${from}_worker" continuer="${to}_worker"
  local paused run_id done again
  paused="$("${pauser[@]}" "$store" pause)"
  run_id="$(field run_id <<<"$paused")"
  done="$("${continuer[@]}" "$store" continue "$run_id")"
  again="$("${pauser[@]}" "$store" continue "$run_id")"
  local status executions message
  status="$(field status <<<"$done")"
  executions="$(wc -l <"$log" | tr -d ' ')"
  message="$(field message <<<"$again")"
  local kind="${store%%:*}"; [ "$kind" = sqlite ] || kind=postgres
  if [ "$status" = completed ] && [ "$executions" = 1 ] && [[ "$message" == "Pause "*" of run $run_id was already continued" ]]; then
    echo "ok   $from pauses, $to continues by run id ($kind)"
  else
    echo "FAIL $from pauses, $to continues by run id ($kind): continue=$done executions=$executions second=$again"
    failures=$((failures + 1))
  fi
}

for store in "sqlite:$work/runs.db" "$PHASEO_TEST_POSTGRES_URL"; do
  check py node "$store"
  check node py "$store"
  check py kotlin "$store"
  check kotlin py "$store"
  check py ruby "$store"
  check ruby py "$store"
done
echo "store-handoff: $((checks - failures)) passed, $failures failed"
[ "$failures" = 0 ]
