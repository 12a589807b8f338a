"""Tools served over MCP for test_mcp_serve.py: ``python mcp_served_tools.py stdio|http``.
In HTTP mode the endpoint URL is printed on the first line of stdout and the server
stops when stdin closes."""

import os
import sys
import time
from typing import Any, Dict

from phaseo_agent import AgentTool, ToolRuntime, define_tool, serve_mcp


def add(tool_input: Dict[str, Any], _rt: ToolRuntime) -> Dict[str, Any]:
    return {"sum": tool_input["a"] + tool_input["b"]}


def slow(_input: Dict[str, Any], rt: ToolRuntime) -> str:
    rt.emit_progress("started")
    if rt.cancelled.wait(120):
        with open(os.environ["CANCEL_MARK"], "w") as f:
            f.write("cancelled")
        return "cancelled"
    return "finished"


def steps(_input: Dict[str, Any], rt: ToolRuntime) -> int:
    rt.emit_progress({"progress": 1, "total": 2, "message": "half"})
    rt.emit_progress("almost")
    return 2


def delete(tool_input: Dict[str, Any], _rt: ToolRuntime) -> str:
    return f"deleted {tool_input.get('path')}"


def sleepy(_input: Dict[str, Any], _rt: ToolRuntime) -> str:
    time.sleep(5)
    return "late"


TOOLS = [
    define_tool(AgentTool("add", add, description="Adds two numbers",
                          parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                                      "required": ["a", "b"]},
                          output_schema={"type": "object", "properties": {"sum": {"type": "number"}}},
                          annotations={"read_only_hint": True, "title": "Add numbers"})),
    define_tool(AgentTool("slow", slow, description="Waits until cancelled")),
    define_tool(AgentTool("steps", steps, description="Reports progress")),
    define_tool(AgentTool("delete", delete, description="Deletes a file", require_approval=True)),
    define_tool(AgentTool("sleepy", sleepy, description="Too slow", timeout_ms=200)),
]

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        with serve_mcp(TOOLS, name="test-tools", version="1.0.0",
                       tool_execution={"tool_concurrency": 4}) as server:
            server.wait()
    else:
        with serve_mcp(TOOLS, name="test-tools", version="1.0.0", transport={"type": "http"},
                       tool_execution={"tool_concurrency": 4}) as server:
            print(server.url, flush=True)
            sys.stdin.read()
