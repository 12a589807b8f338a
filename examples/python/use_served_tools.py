"""A Python agent using the tools a Node program serves over MCP.

    python examples/python/use_served_tools.py     (needs `make python node`)

The server is `examples/node/serve-tools.mjs` (the Node binding's `serveMcp`), started as a
child process over stdio: its `addNote` and `deleteNotes` become this agent's tools. The
server keeps `deleteNotes`' approval rule: before it runs, it asks this client through MCP
elicitation, and ``on_elicitation`` below is where a person answers (here: approve). A
scripted model stands in for a real one; leaving the ``with`` block stops the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

from phaseo_agent import ScriptedClient, create_agent, mcp_stdio_server

SERVER = Path(__file__).resolve().parents[2] / "examples/node/serve-tools.mjs"


def ask_a_person(request: Dict[str, Any], context: Any) -> Dict[str, Any]:
    """The server's approval question, answered as a person at the desk would."""
    print(f"  the server asks: {request['message']}")
    return {"action": "accept", "content": {"approve": True}}


def main() -> None:
    notes = mcp_stdio_server("notes", "node", [str(SERVER)], on_elicitation=ask_a_person,
                             timeout_ms=10_000)
    model = ScriptedClient([
        {"tool_calls": [
            {"id": "c1", "name": "addNote", "arguments": json.dumps({"text": "call the bank"})},
            {"id": "c2", "name": "addNote", "arguments": json.dumps({"text": "renew the lease"})},
        ]},
        {"tool_calls": [{"id": "c3", "name": "deleteNotes", "arguments": "{}"}]},
        {"text": "Two notes stored, then cleared."},
    ])
    with create_agent(id="served-tools-demo", mcp_servers=[notes]) as agent:
        done = agent.run(input="Note two things, then clear the notes", client=model)
        for step in done.step_results:
            for result in step["tool_results"]:
                print(f"  {result['tool_name']}: {json.dumps(result.get('result'))}")
        print("status:", done.status)
        print("output:", done.output)


if __name__ == "__main__":
    main()
