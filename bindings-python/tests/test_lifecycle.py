"""The interpreter exits cleanly right after asyncio runs (native threads finish touching
Python before finalization)."""

from __future__ import annotations

import subprocess
import sys

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
    time.sleep(0.3)
    return 1

agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=slow, timeout_ms=20))]})
try:
    agent.run(input="go", client=ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}]}]))
except AgentToolTimeoutError as error:
    print(error)
"""


def test_exit_while_a_timed_out_sync_tool_still_runs_is_clean() -> None:
    for _ in range(4):
        done = subprocess.run([sys.executable, "-c", SYNC_SCRIPT], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Tool t timed out after 20ms"
