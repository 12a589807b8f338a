"""A Python agent that uses a tool a Go program serves over MCP: ``python python_agent.py
<url>``. The agent's MCP server entry requires approval, so the run pauses first; the
continue approves the call, the served tool then asks through elicitation and
``on_elicitation`` accepts. Prints the paused call and the tool results as one JSON line."""

import json
import sys
from typing import Any, Dict, List

from phaseo_agent import ScriptedClient, create_agent, mcp_http_server

asked: List[str] = []


def answer(request: Dict[str, Any], _context: Any) -> Dict[str, Any]:
    asked.append(request["message"])
    return {"action": "accept", "content": {"approve": True}}


def main() -> None:
    server = mcp_http_server("go", sys.argv[1], require_approval=True, on_elicitation=answer,
                             timeout_ms=60_000)
    client = ScriptedClient([
        {"tool_calls": [{"id": "c1", "name": "delete", "arguments": json.dumps({"path": "/tmp/a"})}]},
        {"text": "deleted"},
    ])
    with create_agent(id="caller", mcp_servers=[server]) as agent:
        paused = agent.run(input="delete /tmp/a", client=client)
        pending = (paused.pause or {}).get("pending_tool_calls", [])
        done = agent.continue_run(state=paused, client=client, approvals=["c1"])
    print(json.dumps({
        "paused": paused.status,
        "pending": pending,
        "status": done.status,
        "output": done.output,
        "results": [r.get("result") for s in done.step_results for r in s["tool_results"]],
        "asked": asked,
    }), flush=True)


if __name__ == "__main__":
    main()
