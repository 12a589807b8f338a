"""An MCP server over stdio that misbehaves as it is told, for the core's hostile-server
property test (core/tests/mcp_hostile_server.rs). Plain JSON-RPC lines, no MCP library:
it must be able to write what no library would.

The plan is JSON in `PHASEO_HOSTILE_PLAN`: for each method it answers (`initialize`,
`tools/list`, `tools/call`; anything else gets an empty result) a list of steps, used one
request after the other (the last one again when the list runs out). A step is an object:

- `{"noise": [line, ...]}` before the answer: raw lines written as they are (text that is
  not JSON, notifications, requests of the server's own);
- then one of `{"result": value}`, `{"error": value}` (the `error` member as given),
  `{"raw": line}` (one raw line instead of an answer), `{"wrong_id": value}` (a result for
  another id), `{"never": true}` (no answer), `{"exit": code}` (the process ends), or
  `{"pages": n, "cursor": "same" | "new", "tools": [...]}` (tools/list: a page with the tools
  and a `nextCursor`, n times, then a last page without one).
"""

import json
import os
import sys

PLAN = json.loads(os.environ.get("PHASEO_HOSTILE_PLAN", "{}"))
used = {}
pages = {}


def write(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def answer(request_id, method):
    steps = PLAN.get(method)
    if not steps:
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {}}))
        return
    n = used.get(method, 0)
    used[method] = n + 1
    step = steps[min(n, len(steps) - 1)]
    for line in step.get("noise", []):
        write(line)
    if "result" in step:
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": step["result"]}))
    elif "error" in step:
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": step["error"]}))
    elif "raw" in step:
        write(step["raw"])
    elif "wrong_id" in step:
        other = request_id + 1000 if isinstance(request_id, int) else str(request_id) + "x"
        write(json.dumps({"jsonrpc": "2.0", "id": other, "result": step["wrong_id"]}))
    elif "exit" in step:
        sys.exit(step["exit"])
    elif "pages" in step:
        served = pages.get(method, 0)
        pages[method] = served + 1
        # The page count goes on over the requests of one listing; a repeated first page
        # (no cursor) starts it again.
        result = {"tools": step.get("tools", [])}
        if served < step["pages"]:
            result["nextCursor"] = "c" if step.get("cursor") == "same" else "c%d" % served
        else:
            pages[method] = 0
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))
    # "never": no answer.


for raw in sys.stdin:
    try:
        message = json.loads(raw)
    except ValueError:
        continue
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        continue
    answer(message["id"], message["method"])
