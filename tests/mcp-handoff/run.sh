#!/usr/bin/env bash
# Cross-language MCP handoff (docs/behaviour.md §11): a run paused by one language on an
# approval-gated MCP call is continued by another, which calls the MCP server itself —
# from a server it started — for every ordered pair of the languages in LANGS.
#
# Driver contract (one driver per language; `<lang>_driver` below says how to start it):
#   <driver> pause STATE_FILE      runs the agent until it pauses; writes the paused state
#                                  (its JSON text) to STATE_FILE
#   <driver> continue STATE_FILE   reads that state, approves the pending call "c1",
#                                  continues the run
#   Each prints ONE JSON line on stdout: {"pid": <pid of the process that hosts the
#   agent>, "status": <run status>} plus, for continue, "output": <the final output>.
#   Environment (set by this script): PHASEO_MCP_MARKERS (the test server's marker
#   directory), PHASEO_PYTHON (a Python with the `mcp` package).
#   The agent: id "mcp-handoff"; one stdio MCP server named "files" running
#   `$PHASEO_PYTHON <repo>/tests/mcp/test_server.py` with env PHASEO_MCP_MARKERS, options
#   toolPrefix "files" and requireApproval "destructive". The pause run's scripted model
#   answers turn 1 with the call {id "c1", name "files_delete_file", arguments
#   {"path": "report.txt"}} and turn 2 with the text "Deleted report.txt."; the continue
#   run's scripted model answers "Deleted report.txt." (its only turn). The agent is
#   closed before the driver exits.
#
# Checks per pair: the pause paused without calling the server; the continue completed
# with the output "Deleted report.txt."; the server ran delete_file exactly once, in a
# server whose parent is the continuing process (its marker file `deleted-report.txt`
# holds one line per call: the pid of the process that started that server).
#
#   tests/mcp-handoff/run.sh        (needs `make python node kotlin ruby mcp-servers`)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
LANGS="${LANGS:-python node kotlin ruby}"
export PHASEO_PYTHON="${PHASEO_PYTHON:-$root/.venvs/py/bin/python}"
python_driver=("$PHASEO_PYTHON" "$root/tests/mcp-handoff/driver.py")
node_driver=(node "$root/tests/mcp-handoff/driver.mjs")
kotlin_driver=("$root/tests/mcp-handoff/kotlin_driver.sh")
ruby_driver=(ruby "$root/tests/mcp-handoff/driver.rb")

if [ ! -e "$root/.venvs/py/.mcp" ]; then
  echo "FAIL the Python \`mcp\` package is not installed (.venvs/py): run \`make mcp-servers\`"
  exit 1
fi
work="$(mktemp -d /tmp/phaseo-mcp-handoff-XXXXXX)"
trap 'rm -rf "$work"' EXIT

field() { "$PHASEO_PYTHON" -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1]).get(sys.argv[1]))' "$1"; }

failures=0
pairs=0
check() { # from to
  local from="$1" to="$2"
  local dir="$work/$from-$to" state="$work/$from-$to.json"
  mkdir -p "$dir"
  export PHASEO_MCP_MARKERS="$dir"
  local -n pauser="${from}_driver" continuer="${to}_driver"
  local paused done="" early=no
  pairs=$((pairs + 1))
  if ! paused="$("${pauser[@]}" pause "$state")"; then
    echo "FAIL $from pauses, $to continues: the pause failed: $paused"
    failures=$((failures + 1)); return
  fi
  [ -e "$dir/deleted-report.txt" ] && early=yes
  if ! done="$("${continuer[@]}" continue "$state")"; then
    echo "FAIL $from pauses, $to continues: the continue failed: $done"
    failures=$((failures + 1)); return
  fi
  local status output pid calls
  status="$(field status <<<"$done")"
  output="$(field output <<<"$done")"
  pid="$(field pid <<<"$done")"
  calls="$(cat "$dir/deleted-report.txt" 2>/dev/null || true)"
  if [ "$(field status <<<"$paused")" = waiting_for_human ] && [ "$early" = no ] && [ "$status" = completed ] \
    && [ "$output" = "Deleted report.txt." ] && [ "$calls" = "$pid" ]; then
    echo "ok   $from pauses, $to continues and calls the MCP server (pid $pid)"
  else
    echo "FAIL $from pauses, $to continues: pause=$paused called-before-continue=$early continue=$done server-calls-by-pid=[${calls//$'\n'/,}]"
    failures=$((failures + 1))
  fi
}

for from in $LANGS; do
  for to in $LANGS; do
    [ "$from" = "$to" ] || check "$from" "$to"
  done
done
echo "mcp-handoff: $((pairs - failures)) passed, $failures failed"
[ "$failures" = 0 ]
