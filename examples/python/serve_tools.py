"""The application's tools served to any MCP client (Claude Code, Cursor, ...) over stdio.

    python examples/python/serve_tools.py            (an MCP client starts it)
    claude mcp add notes -- python examples/python/serve_tools.py

Two tools: ``add_note`` (its input is validated by its schema, its result is structured)
and ``delete_notes``, which needs a person's approval: the server asks the client through
MCP elicitation before it runs, and a client that cannot ask gets an error instead. Every
call keeps the tool's timeout and ``tool_concurrency``. The server stops when the client
closes its input."""

from __future__ import annotations

from typing import Any, Dict, List

from phaseo_agent import AgentTool, ToolRuntime, define_tool, serve_mcp

NOTES: List[str] = []


def add_note(tool_input: Dict[str, Any], _rt: ToolRuntime) -> Dict[str, Any]:
    NOTES.append(tool_input["text"])
    return {"id": len(NOTES), "count": len(NOTES)}


def delete_notes(_input: Dict[str, Any], _rt: ToolRuntime) -> str:
    deleted = len(NOTES)
    NOTES.clear()
    return f"deleted {deleted} notes"


TOOLS = [
    define_tool(AgentTool(
        "add_note", add_note, description="Stores a note",
        parameters={"type": "object", "properties": {"text": {"type": "string", "minLength": 1}},
                    "required": ["text"], "additionalProperties": False},
        output_schema={"type": "object", "properties": {"id": {"type": "integer"}, "count": {"type": "integer"}}},
        timeout_ms=5_000)),
    define_tool(AgentTool("delete_notes", delete_notes, description="Deletes every note",
                          require_approval=True)),
]


def main() -> None:
    with serve_mcp(TOOLS, name="notes", version="1.0.0", tool_execution={"tool_concurrency": 4}) as server:
        server.wait()


if __name__ == "__main__":
    main()
