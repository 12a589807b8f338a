"""The interpreter exits cleanly right after asyncio runs (native threads finish touching
Python before finalization)."""

from __future__ import annotations

import subprocess
import sys
import time

SCRIPT = """
import asyncio
from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool

async def tool(tool_input, runtime):
    await asyncio.sleep(0)
    return 1

async def main():
    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=tool))]})
    client = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}]}, {"text": "done"}])
    result = await agent.run_async(input="go", client=client)
    print(result.output)

asyncio.run(main())
"""


def test_exit_after_run_async_is_clean() -> None:
    for _ in range(12):
        done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "done"


SYNC_SCRIPT = """
import time
from phaseo_agent import AgentTool, AgentToolTimeoutError, ScriptedClient, create_agent, define_tool

def slow(tool_input, runtime):
    time.sleep(30)  # still sleeping when the interpreter exits (exit does not wait for it)
    return 1

agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=slow, timeout_ms=20))]})
try:
    agent.run(input="go", client=ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}]}]))
except AgentToolTimeoutError as error:
    print(error)
"""


def test_exit_while_a_timed_out_sync_tool_still_runs_is_clean() -> None:
    # The abandoned tool is still blocked when the interpreter exits: exit neither waits for
    # it nor crashes. (A thread that wakes up *during* finalization is the known limit of
    # Python < 3.14 (bindings-python/README.md, "Limits").)
    for _ in range(4):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", SYNC_SCRIPT], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Tool t timed out after 20ms"
        # Starting an interpreter on a loaded machine takes a while; waiting for the tool's
        # 30 s sleep would take far longer.
        assert time.monotonic() - started < 10


BUSY_LOOP_THREAD = """
import asyncio, threading, time
from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool

def check_input(value):  # a synchronous callback: runs inside the run's poll, GIL held
    end = time.perf_counter() + 0.05
    while time.perf_counter() < end:
        pass
    return value

async def tool(tool_input, runtime):
    return 1

agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=tool, input_schema=check_input))]})

async def forever():
    while True:
        client = ScriptedClient([{"tool_calls": [{"id": "c", "name": "t", "arguments": "{}"}]}, {"text": "ok"}])
        await agent.run_async(input="go", client=client)

threading.Thread(target=lambda: asyncio.run(forever()), daemon=True).start()
time.sleep(0.3)
print("exiting")
"""


def test_exit_while_a_daemon_threads_loop_polls_a_run_does_not_hang() -> None:
    # Closing the loop's bridge at exit must not wait for the poll in progress (it used to
    # deadlock: the poll held the run, the exit hook held the GIL). The exit status is not
    # checked: before Python 3.14, CPython ends a daemon thread that wants the GIL back
    # during finalization with pthread_exit, inside whatever native frames called Python.
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", BUSY_LOOP_THREAD], capture_output=True, text=True, timeout=30)
        assert done.stdout.strip() == "exiting", done.stderr
