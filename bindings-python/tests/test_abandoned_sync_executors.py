"""Timed-out synchronous executors that ignore cancellation never starve the worker pool,
and interpreter exit does not wait for them (docs/behaviour.md §2.2)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

# Runs in a fresh interpreter so its exit can be timed. 50 `def` tools that block for 30 s
# and ignore cancellation time out after 50 ms (more than the pool's 40 threads); the
# model then calls a quick `def` tool, which must start at once rather than wait for a
# blocked thread. The script prints how long that took, then when it returns.
SCRIPT = textwrap.dedent(
    """
    import json, time
    from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool

    def block(tool_input, runtime):
        time.sleep(30)  # ignores runtime.cancelled on purpose
        return "late"

    started = {}

    def quick(tool_input, runtime):
        started["at"] = time.monotonic()
        return "quick"

    failed_at = []
    def on_event(event):
        if event["type"] == "tool.failed":
            failed_at.append(time.monotonic())

    agent = create_agent({"id": "pool", "tools": [
        define_tool(AgentTool(id="block", execute=block, timeout_ms=50)),
        define_tool(AgentTool(id="quick", execute=quick, timeout_ms=5_000)),
    ], "tool_execution": {"tool_concurrency": 50, "on_error": "return-to-model"}})
    blocked = [{"id": f"b{i}", "name": "block", "arguments": "{}"} for i in range(50)]
    client = ScriptedClient([
        {"tool_calls": blocked},
        {"tool_calls": [{"id": "q", "name": "quick", "arguments": "{}"}]},
        {"text": "done"},
    ])
    result = agent.run(input="go", client=client, on_event=on_event)
    quick_message = [m["content"] for m in result.messages if m.get("tool_call_id") == "q"]
    print(json.dumps({
        "status": result.status,
        "timed_out": len(failed_at),
        "quick": quick_message,
        "quick_waited_s": started["at"] - max(failed_at) if "at" in started else None,
        "returned_at": time.time(),
    }), flush=True)
    """
)


def test_timed_out_blocking_def_tools_do_not_hold_the_pool_or_the_exit() -> None:
    child = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    exited_at = time.time()
    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["status"] == "completed"
    assert report["timed_out"] == 50
    assert report["quick"] == ["quick"], "the quick tool did not run within its 5 s timeout"
    # Bounds with room for a loaded machine (a thread may take several hundred ms to begin);
    # a pool or an exit held by the blocked threads would wait for their 30 s sleep.
    assert report["quick_waited_s"] < 2.5
    # The 50 threads are still sleeping: the interpreter must exit without waiting for them.
    assert exited_at - report["returned_at"] < 5.0
