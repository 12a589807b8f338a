"""The trace handoff check: one language pauses a run, another continues it,
both exporting to one OTLP receiver; the two run spans must be in one trace, the continue's
span a child of the paused one and linked to it, each exported by its own language.

    check.py <python> <node> [<ruby> [<php>]]   runs Python → Node and Node → Python (and,
                                        with a Ruby, Python → Ruby and Ruby → Python; with a
                                        PHP (tests/trace-handoff/php.sh), Python → PHP and
                                        PHP → Python)
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "otlp"))
from receiver import Receiver  # noqa: E402

python, node = sys.argv[1], sys.argv[2]
sides = {"python": [python, str(here / "step.py")], "node": [node, str(here / "step.mjs")]}
pairs = [("python", "node"), ("node", "python")]
if len(sys.argv) > 3:
    sides["ruby"] = [sys.argv[3], str(here / "step.rb")]
    pairs += [("python", "ruby"), ("ruby", "python")]
if len(sys.argv) > 4:
    sides["php"] = [sys.argv[4]]
    pairs += [("python", "php"), ("php", "python")]
receiver = Receiver()
env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
failures = 0
for first, second in pairs:
    with tempfile.TemporaryDirectory() as tmp:
        state = os.path.join(tmp, "state.json")
        paused = subprocess.run(sides[first] + ["pause", state], env=env, check=True,
                                capture_output=True, text=True).stdout.split()[-1]
        done = subprocess.run(sides[second] + ["continue", state], env=env, check=True,
                              capture_output=True, text=True).stdout.split()[-1]
    _, trace_id, paused_span, _ = paused.split("-")
    _, same_trace, done_span, _ = done.split("-")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        runs = {s["spanId"]: s for s in receiver.trace(trace_id) if s["name"] == "invoke_agent mailer"}
        if paused_span in runs and done_span in runs:
            break
        time.sleep(0.05)
    problems = []
    if same_trace != trace_id:
        problems.append(f"the continue started trace {same_trace}, not {trace_id}")
    if paused_span not in runs or done_span not in runs:
        problems.append(f"run spans missing from the receiver: {sorted(runs)}")
    else:
        a, b = runs[paused_span], runs[done_span]
        if b["parentSpanId"] != paused_span:
            problems.append(f"the continue's parent is {b['parentSpanId']!r}, not the paused span")
        if {"traceId": trace_id, "spanId": paused_span} not in b["links"]:
            problems.append("the continue's span has no link to the paused span")
        if (a["service"], b["service"]) != (f"handoff-{first}", f"handoff-{second}"):
            problems.append(f"exported by {a['service']} and {b['service']}")
        if a["attributes"].get("phaseo.pause.kind") != "tool_approval":
            problems.append("the paused span lacks its pause kind")
    label = f"{first} pauses, {second} continues"
    if problems:
        failures += 1
        print(f"FAIL {label}: " + "; ".join(problems))
    else:
        print(f"PASS {label}: one trace {trace_id}, continue span {done_span} child of and linked to {paused_span}")
receiver.close()
sys.exit(1 if failures else 0)
