"""Drives a server started by the JVM API's ``serveMcp`` with the official MCP Python SDK
client (PyPI ``mcp``), for McpServeTest.

    mcp_serve_client.py <cancel-mark> stdio <server command as a JSON list> [--annotated]
    mcp_serve_client.py <cancel-mark> http <url> [--annotated]
    mcp_serve_client.py <cancel-mark> http <url> --agent

With ``--agent`` the server serves one agent, ``researcher``, whose scripted model calls
``delete`` (approval-gated) and answers ``researched`` on each of three calls, then calls
the manual tool ``ask`` on a fourth.

Each check is asserted here; the last line printed is ``ok <n>`` with the number of checks
that passed. Any failure raises (exit status 1) with the check's message."""

import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, List, Optional

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

MARK = Path(sys.argv[1])
TRANSPORT = sys.argv[2]
TARGET = sys.argv[3]
ANNOTATED = "--annotated" in sys.argv[4:]
AGENT = "--agent" in sys.argv[4:]
passed: List[str] = []


def check(name: str, ok: bool, detail: Any = "") -> None:
    if not ok:
        raise AssertionError(f"{TRANSPORT}: {name} failed: {detail!r}")
    passed.append(name)


@asynccontextmanager
async def connect(approve: Optional[bool]) -> AsyncIterator[ClientSession]:
    """A session with the served tools; ``approve`` None: a client without elicitation."""
    asked: List[str] = []

    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if approve:
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    callback = elicit if approve is not None else None
    if TRANSPORT == "stdio":
        command = json.loads(TARGET)
        env = {**os.environ, "CANCEL_MARK": str(MARK)}
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                session.asked = asked  # type: ignore[attr-defined]
                yield session
    else:
        async with streamable_http_client(TARGET) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                session.asked = asked  # type: ignore[attr-defined]
                yield session


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


async def list_call_errors_progress() -> None:
    async with connect(None) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        check("list", set(tools) == {"add", "slow", "steps", "delete", "sleepy"}, sorted(tools))
        check("input schema", tools["add"].input_schema.get("required") == ["a", "b"], tools["add"].input_schema)
        check("output schema", tools["add"].output_schema is not None, tools["add"])
        delete = tools["delete"].annotations
        check("approval is destructive", delete is not None and delete.destructive_hint is True, delete)
        if ANNOTATED:
            add = tools["add"].annotations
            check("annotations", add is not None and add.read_only_hint is True, add)
            check("title", tools["add"].title == "Add numbers" or (add is not None and add.title == "Add numbers"), tools["add"])
        summed = await s.call_tool("add", {"a": 2, "b": 3})
        check("call", not summed.is_error, summed)
        check("structured output", summed.structured_content == {"sum": 5}, summed.structured_content)
        check("structured output as text", json.loads(text(summed)) == {"sum": 5}, text(summed))
        invalid = await s.call_tool("add", {"a": "two"})
        check("validation error", invalid.is_error and text(invalid).startswith("Invalid tool input"), invalid)
        unknown = await s.call_tool("nope", {})
        check("unknown tool", unknown.is_error, unknown)
        late = await s.call_tool("sleepy", {})
        check("timeout", late.is_error and text(late) == "Tool sleepy timed out after 200ms", late)
        seen: List[Any] = []

        async def progress(p: float, total: Optional[float], message: Optional[str]) -> None:
            seen.append((p, total, message))

        done = await s.call_tool("steps", {}, progress_callback=progress)
        check("progress result", text(done) == "2", done)
        check("progress", seen == [(1, 2, "half"), (2, None, "almost")], seen)
        refused = await s.call_tool("delete", {"path": "/x"})
        check("no elicitation", refused.is_error
              and text(refused) == "Tool delete requires approval and this client cannot be asked", refused)


async def approval() -> None:
    async with connect(True) as s:
        ok = await s.call_tool("delete", {"path": "/x"})
        check("approved", not ok.is_error and text(ok) == "deleted /x", ok)
        asked = s.asked  # type: ignore[attr-defined]
        check("elicitation message", len(asked) == 1 and "delete" in asked[0] and '{"path":"/x"}' in asked[0], asked)
    async with connect(False) as s:
        no = await s.call_tool("delete", {"path": "/x"})
        check("declined", no.is_error and text(no) == "Tool call rejected by human", no)


async def cancellation() -> None:
    async with connect(None) as s:
        started = anyio.Event()

        async def progress(_p: float, _t: Optional[float], _m: Optional[str]) -> None:
            started.set()

        async def call() -> None:
            await s.call_tool("slow", {}, progress_callback=progress)

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await started.wait()
            group.cancel_scope.cancel()
        for _ in range(1200):
            if MARK.exists():
                check("cancellation reaches the executor", True)
                return
            await anyio.sleep(0.1)
        check("cancellation reaches the executor", False, "no mark after 120 s")


async def served_agent() -> None:
    async with connect(True) as s:
        tools = (await s.list_tools()).tools
        check("agent listed as one tool", [t.name for t in tools] == ["researcher"], tools)
        check("agent tool description", tools[0].description == "Researches", tools[0])
        schema = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
        check("agent tool input schema", tools[0].input_schema == schema, tools[0].input_schema)
        done = await s.call_tool("researcher", {"input": "find x"})
        check("agent run approved", not done.is_error and text(done) == "researched", done)
        asked = s.asked  # type: ignore[attr-defined]
        check("agent approval asked", len(asked) == 1 and "delete" in asked[0] and '{"path":"/tmp/x"}' in asked[0], asked)
    async with connect(False) as s:
        declined = await s.call_tool("researcher", {"input": "find x"})
        check("agent approval declined", not declined.is_error and text(declined) == "researched", declined)
    async with connect(None) as s:
        refused = await s.call_tool("researcher", {"input": "find x"})
        check("agent without elicitation", refused.is_error
              and text(refused) == "Tool delete requires approval and this client cannot be asked", refused)
    async with connect(True) as s:
        paused = await s.call_tool("researcher", {"input": "ask"})
        check("agent paused for a client tool", paused.is_error and not s.asked  # type: ignore[attr-defined]
              and text(paused) == "Tool ask asks a person for its result and cannot be served", paused)


async def main() -> None:
    with anyio.fail_after(300):
        if AGENT:
            await served_agent()
            return
        await list_call_errors_progress()
        await approval()
        await cancellation()


anyio.run(main)
print(f"ok {len(passed)}", flush=True)
