#!/usr/bin/env bash
# Runs every conformance runner present over the cases (default tests/conformance/cases).
#   tests/conformance/run-all.sh [PATH...]            every runner on every case
#   tests/conformance/run-all.sh --handoff [PATH...]  for every ordered pair (A, B) of
#       languages: A runs step 0 and saves the state, B resumes from it and runs the rest.
# Prints PASS/FAIL lines and ONE closing line "<N> passed, <M> failed".
# Python: $PHASEO_PYTHON if set, else the project's venv .venvs/py/bin/python (created by
# `make python`) if present, else python3.
set -uo pipefail
cd "$(dirname "$0")/../.."

handoff=0
if [ "${1:-}" = "--handoff" ]; then handoff=1; shift; fi
paths=("$@")
[ ${#paths[@]} -eq 0 ] && paths=(tests/conformance/cases)

langs=()
declare -A cmd
cargo build -q -p conformance || exit 2
cmd[rust]="target/debug/conformance"
langs+=(rust)
if [ -f tests/conformance/python_runner.py ]; then
  # Run by hand (no PHASEO_PYTHON from make), prefer the project's own venv: the system
  # python3 usually lacks phaseo_agent and every Python case would fail with status 2.
  python=${PHASEO_PYTHON:-}
  if [ -z "$python" ]; then
    if [ -x .venvs/py/bin/python ]; then python=.venvs/py/bin/python; else python=python3; fi
  fi
  cmd[python]="$python tests/conformance/python_runner.py"; langs+=(python)
fi
if [ -f tests/conformance/node_runner.mjs ]; then
  cmd[node]="node tests/conformance/node_runner.mjs"; langs+=(node)
fi
if [ -f tests/conformance/kotlin_runner.sh ]; then
  cmd[kotlin]="bash tests/conformance/kotlin_runner.sh"; langs+=(kotlin)
fi
if [ -f tests/conformance/go_runner.sh ]; then
  cmd[go]="bash tests/conformance/go_runner.sh"; langs+=(go)
fi
if [ -f tests/conformance/java_runner.sh ]; then
  cmd[java]="bash tests/conformance/java_runner.sh"; langs+=(java)
fi
if [ -f tests/conformance/ruby_runner.sh ]; then
  cmd[ruby]="bash tests/conformance/ruby_runner.sh"; langs+=(ruby)
fi
if [ -f tests/conformance/csharp_runner.sh ]; then
  cmd[csharp]="bash tests/conformance/csharp_runner.sh"; langs+=(csharp)
fi
if [ -f tests/conformance/php_runner.sh ]; then
  cmd[php]="bash tests/conformance/php_runner.sh"; langs+=(php)
fi

passed=0; failed=0
# Independent runs go in parallel (default 2 at once, CONFORMANCE_JOBS to change): the
# runners are mostly start-up and waiting, so two overlap well even on two cores. Each job
# writes its verdict lines to a file of its own; they are printed and tallied in order.
jobs_max=${CONFORMANCE_JOBS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
throttle() {
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
}

run_lang() {  # <lang> → verdict lines on stdout
  local lang=$1 out status
  echo "== $lang"
  out=$(${cmd[$lang]} "${paths[@]}" 2>&1); status=$?
  grep -E '^(PASS|FAIL) ' <<<"$out"
  if [ $status -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; then
    echo "FAIL $lang runner exited with status $status"
    tail -5 <<<"$out" | sed "s/^/  /"
  fi
}

run_pair() {  # <a> <b> → verdict lines on stdout
  local a=$1 b=$2 dir first second s1 s2 line name resumed
  dir=$(mktemp -d)
  first=$(${cmd[$a]} --stop-after 1 --save-state "$dir" "${paths[@]}" 2>&1); s1=$?
  second=$(${cmd[$b]} --resume-state "$dir" --from-step 1 "${paths[@]}" 2>&1); s2=$?
  if [ $s1 -ne 0 ] && ! grep -q '^FAIL ' <<<"$first"; then
    echo "FAIL [$a→$b] $a exited with status $s1"
  fi
  if [ $s2 -ne 0 ] && ! grep -q '^FAIL ' <<<"$second"; then
    echo "FAIL [$a→$b] $b exited with status $s2"
  fi
  rm -rf "$dir"
  while IFS= read -r line; do
    case "$line" in
      PASS\ *|FAIL\ *) ;;
      *) continue;;
    esac
    name=${line#* }; name=${name%%: *}
    if [ "${line%% *}" = FAIL ]; then
      echo "FAIL $name [$a→$b]: first half: ${line#*: }"; continue
    fi
    resumed=$(grep -F -x -m1 "PASS $name" <<<"$second" || grep -F -m1 "FAIL $name: " <<<"$second" || true)
    case "$resumed" in
      "PASS $name") echo "PASS $name [$a→$b]";;
      FAIL*) echo "FAIL $name [$a→$b]: second half: ${resumed#*: }";;
      *) echo "FAIL $name [$a→$b]: $b did not resume it";;
    esac
  done <<<"$first"
}

n=0
if [ $handoff -eq 0 ]; then
  for lang in "${langs[@]}"; do
    throttle; run_lang "$lang" >"$work/$n" 2>&1 & n=$((n + 1))
  done
else
  pairs=()
  for a in "${langs[@]}"; do for b in "${langs[@]}"; do
    [ "$a" != "$b" ] && pairs+=("$a:$b")
  done; done
  # With a single language, hand off to itself so the save/resume path is still proven.
  [ ${#pairs[@]} -eq 0 ] && pairs=("${langs[0]}:${langs[0]}")
  for pair in "${pairs[@]}"; do
    throttle; run_pair "${pair%%:*}" "${pair##*:}" >"$work/$n" 2>&1 & n=$((n + 1))
  done
fi
wait
for ((i = 0; i < n; i++)); do
  while IFS= read -r line; do
    echo "$line"
    case "$line" in
      PASS\ *) passed=$((passed + 1));;
      FAIL\ *) failed=$((failed + 1));;
    esac
  done <"$work/$i"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
