"""Drives a Ruby program serving tools over MCP (serve_mcp_test.rb) with the official MCP
Python SDK client (PyPI ``mcp``): ``python mcp_serve_driver.py stdio|http SCENARIO
CANCEL_MARK ruby SCRIPT...``. Prints one JSON object of what the client saw."""

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Dict, List, Optional

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

MODE, SCENARIO, MARK = sys.argv[1], sys.argv[2], sys.argv[3]
COMMAND = sys.argv[4:]
ASKED: List[str] = []


async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    ASKED.append(params.message)
    return types.ElicitResult(action="accept", content={"approve": SCENARIO in ("approve", "agent_approve")})


@asynccontextmanager
async def connect() -> AsyncIterator[ClientSession]:
    env = {**os.environ, "CANCEL_MARK": MARK}
    callback = elicit if SCENARIO in ("approve", "decline", "agent_approve", "agent_decline") else None
    if MODE == "stdio":
        params = StdioServerParameters(command=COMMAND[0], args=COMMAND[1:], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                yield session
        return
    proc = subprocess.Popen(COMMAND, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        async with streamable_http_client(url) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                yield session
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)


def outcome(result: types.CallToolResult) -> Dict[str, Any]:
    block = result.content[0]
    return {"error": bool(result.is_error), "text": block.text if isinstance(block, types.TextContent) else None,
            "structured": result.structured_content}


async def basics(s: ClientSession) -> Dict[str, Any]:
    tools = {t.name: t for t in (await s.list_tools()).tools}
    seen: List[Any] = []

    async def progress(p: float, total: Optional[float], message: Optional[str]) -> None:
        seen.append([p, total, message])

    return {
        "tools": sorted(tools),
        "add_required": tools["add"].input_schema.get("required"),
        "add_output_schema": tools["add"].output_schema,
        "delete_destructive": bool(tools["delete"].annotations and tools["delete"].annotations.destructive_hint),
        "add": outcome(await s.call_tool("add", {"a": 2, "b": 3})),
        "invalid": outcome(await s.call_tool("add", {"a": "two"})),
        "sleepy": outcome(await s.call_tool("sleepy", {})),
        "steps": outcome(await s.call_tool("steps", {}, progress_callback=progress)),
        "progress": seen,
        "delete": outcome(await s.call_tool("delete", {"path": "/x"})),
    }


async def decide(s: ClientSession) -> Dict[str, Any]:
    return {"delete": outcome(await s.call_tool("delete", {"path": "/x"})), "asked": ASKED}


async def cancel(s: ClientSession) -> Dict[str, Any]:
    started = anyio.Event()

    async def progress(_p: float, _t: Optional[float], _m: Optional[str]) -> None:
        started.set()

    async def call() -> None:
        await s.call_tool("slow", {}, progress_callback=progress)

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await started.wait()
        group.cancel_scope.cancel()
    for _ in range(600):
        if os.path.exists(MARK):
            return {"cancelled": True}
        await anyio.sleep(0.1)
    return {"cancelled": False}


async def agent(s: ClientSession) -> Dict[str, Any]:
    listed = (await s.list_tools()).tools
    return {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed],
            "call": outcome(await s.call_tool("researcher", {"input": "find x"})),
            "asked": ASKED, "deleted": os.path.exists(MARK)}


async def main() -> None:
    scenario = {"basics": basics, "approve": decide, "decline": decide, "cancel": cancel,
                "agent_approve": agent, "agent_decline": agent, "agent_unasked": agent}[SCENARIO]
    async with connect() as session:
        seen = await scenario(session)
    print(json.dumps(seen), flush=True)


anyio.run(main)
