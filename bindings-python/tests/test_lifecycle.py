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
