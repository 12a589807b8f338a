"""An agent using the tools of an MCP server, with a person approving the destructive one.

    python examples/python/mcp_tools.py      (needs `make mcp-servers`: the Python `mcp` package)

The server is the repository's small MCP server (tests/mcp/test_server.py, written with the
official Python `mcp` package), started as a child process over stdio. Its tools become the
agent's tools, prefixed ``files_``; ``require_approval="destructive"`` gates every tool the
server does not declare read-only, so the run pauses on ``files_delete_file``. The paused
state is JSON (store it anywhere); the continue approves the call, and the agent calls the
server for it. A scripted model stands in for a real one (see the README for real clients).
Leaving the ``with`` block stops the server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool, mcp_stdio_server

SERVER = Path(__file__).resolve().parents[2] / "tests/mcp/test_server.py"


def main() -> None:
    files = mcp_stdio_server("files", sys.executable, [str(SERVER)], tool_prefix="files",
                             deny_tools=["crash", "noisy", "grow", "grow_quietly"],
                             require_approval="destructive", timeout_ms=10_000)
    # A local tool next to the MCP ones: both kinds are tools like any other.
    today = define_tool(AgentTool(id="today", execute=lambda _input, _rt: "2026-12-01"))
    model = ScriptedClient([
        {"tool_calls": [
            {"id": "c1", "name": "files_add", "arguments": json.dumps({"numbers": [120, 80, 45]})},
            {"id": "c2", "name": "files_delete_file", "arguments": json.dumps({"path": "old-report.txt"})},
            {"id": "c3", "name": "today", "arguments": "{}"},
        ]},
        {"text": "The three invoices total 245; old-report.txt is deleted."},
    ])

    with create_agent(id="mcp-demo", tools=[today], mcp_servers=[files]) as agent:
        paused = agent.run(input="Total the invoices and delete the old report", client=model)
        print("status:", paused.status)
        for call in paused.pending:
            print(f"  waiting for approval: {call.tool_name} {json.dumps(call.input)}")
        stored = paused.to_json()  # e.g. into a database, until a person decides

        done = agent.continue_run(state=stored, client=model, approvals=[c.tool_call_id for c in paused.pending])
        for step in done.step_results:
            for result in step["tool_results"]:
                print(f"  {result['tool_name']}: {json.dumps(result.get('result'))}")
        print("status:", done.status)
        print("output:", done.output)


if __name__ == "__main__":
    main()
