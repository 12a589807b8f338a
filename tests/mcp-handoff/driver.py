"""The Python driver of the cross-language MCP handoff (contract: tests/mcp-handoff/run.sh)."""

import json
import os
import sys
from pathlib import Path

from phaseo_agent import Agent, ScriptedClient, create_agent, mcp_stdio_server

ROOT = Path(__file__).resolve().parents[2]


def agent() -> Agent:
    files = mcp_stdio_server("files", os.environ["PHASEO_PYTHON"], [str(ROOT / "tests/mcp/test_server.py")],
                             env={"PHASEO_MCP_MARKERS": os.environ["PHASEO_MCP_MARKERS"]},
                             tool_prefix="files", require_approval="destructive")
    return create_agent(id="mcp-handoff", mcp_servers=[files])


def main(mode: str, state_file: str) -> None:
    with agent() as a:
        if mode == "pause":
            client = ScriptedClient([
                {"tool_calls": [{"id": "c1", "name": "files_delete_file", "arguments": json.dumps({"path": "report.txt"})}]},
                {"text": "Deleted report.txt."},
            ])
            paused = a.run(input="Delete report.txt", client=client)
            Path(state_file).write_text(paused.to_json())
            print(json.dumps({"pid": os.getpid(), "status": paused.status}))
        elif mode == "continue":
            state = Path(state_file).read_text()
            done = a.continue_run(state=state, client=ScriptedClient([{"text": "Deleted report.txt."}]),
                                  approvals=["c1"])
            print(json.dumps({"pid": os.getpid(), "status": done.status, "output": done.output}))
        else:
            raise SystemExit(f"unknown mode {mode!r}: use pause or continue")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
