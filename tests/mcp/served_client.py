"""Drives a served MCP server with the official MCP Python SDK client (PyPI ``mcp``) and
prints what it saw as one JSON line, for the Go and C# tests to assert on.

    python mcp_client.py <scenario> <approve: none|yes|no> (--url URL | -- command args...)

Scenarios: ``tools`` (list, then call each of the test tools), ``cancel`` (call ``slow``,
cancel it at its first progress), ``agent`` (list, then call the served agent)."""

import json
import os
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Dict, List, Optional

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def connect(target: List[str], approve: str, asked: List[str]) -> AsyncIterator[ClientSession]:
    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": approve == "yes"})

    callback = None if approve == "none" else elicit
    if target[0] == "--url":
        async with streamable_http_client(target[1]) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                yield session
    else:
        params = StdioServerParameters(command=target[1], args=target[2:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                yield session


def result(r: types.CallToolResult) -> Dict[str, Any]:
    texts = [b.text for b in r.content if isinstance(b, types.TextContent)]
    return {"isError": r.is_error, "text": texts[0] if texts else None,
            "structured": r.structured_content}


async def tools(s: ClientSession, out: Dict[str, Any]) -> None:
    listed = (await s.list_tools()).tools
    out["tools"] = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed}
    out["add"] = result(await s.call_tool("add", {"a": 2, "b": 3}))
    out["invalid"] = result(await s.call_tool("add", {"a": "two"}))
    out["sleepy"] = result(await s.call_tool("sleepy", {}))
    seen: List[Any] = []

    async def progress(p: float, total: Optional[float], message: Optional[str]) -> None:
        seen.append([p, total, message])

    out["steps"] = result(await s.call_tool("steps", {}, progress_callback=progress))
    out["progress"] = seen
    out["delete"] = result(await s.call_tool("delete", {"path": "/x"}))


async def cancel(s: ClientSession, out: Dict[str, Any]) -> None:
    started = anyio.Event()

    async def progress(_p: float, _t: Optional[float], _m: Optional[str]) -> None:
        started.set()

    async def call() -> None:
        await s.call_tool("slow", {}, progress_callback=progress)
        out["finished"] = True

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await started.wait()
        group.cancel_scope.cancel()
    out["cancelled"] = True
    # The session stays usable after a cancelled call.
    out["add"] = result(await s.call_tool("add", {"a": 1, "b": 1}))


async def agent(s: ClientSession, out: Dict[str, Any]) -> None:
    listed = (await s.list_tools()).tools
    out["tools"] = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed}
    out["call"] = result(await s.call_tool("researcher", {"input": "find x"}))


SCENARIOS = {"tools": tools, "cancel": cancel, "agent": agent}


def main() -> None:
    scenario, approve, target = sys.argv[1], sys.argv[2], sys.argv[3:]
    if target and target[0] == "--":
        target = ["--"] + target[1:]

    async def run() -> None:
        out: Dict[str, Any] = {}
        asked: List[str] = []
        async with connect(target, approve, asked) as s:
            await SCENARIOS[scenario](s, out)
        out["asked"] = asked
        print(json.dumps(out), flush=True)

    anyio.run(run)


if __name__ == "__main__":
    main()
