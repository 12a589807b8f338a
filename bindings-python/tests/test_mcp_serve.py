"""Tools served by ``serve_mcp``, called by the official MCP Python SDK client (PyPI
``mcp``) over stdio and Streamable HTTP. The package is a test dependency: without it
these tests fail."""

import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, List, Optional

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from phaseo_agent import AgentDefinitionError, AgentTool, define_tool, serve_mcp

SERVER = str(Path(__file__).with_name("mcp_served_tools.py"))


@asynccontextmanager
async def connect(transport: str, mark: Path, approve: Optional[bool]) -> AsyncIterator[ClientSession]:
    """A session with the served tools; ``approve`` None: a client without elicitation."""
    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": bool(approve)})

    asked: List[str] = []
    env = {**os.environ, "CANCEL_MARK": str(mark)}
    callback = elicit if approve is not None else None
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=[SERVER, "stdio"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                session.asked = asked  # type: ignore[attr-defined]
                yield session
    else:
        proc = subprocess.Popen([sys.executable, SERVER, "http"], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:"), url
            async with streamable_http_client(url) as (read, write, *_):
                async with ClientSession(read, write, elicitation_callback=callback) as session:
                    await session.initialize()
                    session.asked = asked  # type: ignore[attr-defined]
                    yield session
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_list_call_errors_progress(transport: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with connect(transport, tmp_path / "c", None) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"add", "slow", "steps", "delete", "sleepy"}
            assert tools["add"].input_schema["required"] == ["a", "b"]
            assert tools["add"].output_schema is not None
            assert tools["add"].annotations is not None and tools["add"].annotations.read_only_hint
            assert tools["add"].title == "Add numbers"
            assert tools["delete"].annotations is not None and tools["delete"].annotations.destructive_hint
            summed = await s.call_tool("add", {"a": 2, "b": 3})
            assert not summed.is_error
            assert summed.structured_content == {"sum": 5}
            invalid = await s.call_tool("add", {"a": "two"})
            assert invalid.is_error and text(invalid).startswith("Invalid tool input")
            late = await s.call_tool("sleepy", {})
            assert late.is_error and text(late) == "Tool sleepy timed out after 200ms"
            seen: List[Any] = []

            async def progress(p: float, total: Optional[float], message: Optional[str]) -> None:
                seen.append((p, total, message))

            done = await s.call_tool("steps", {}, progress_callback=progress)
            assert text(done) == "2"
            assert seen == [(1, 2, "half"), (2, None, "almost")]
            refused = await s.call_tool("delete", {"path": "/x"})
            assert refused.is_error
            assert text(refused) == "Tool delete requires approval and this client cannot be asked"
    anyio.run(main)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_approval_through_elicitation(transport: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with connect(transport, tmp_path / "c", True) as s:
            ok = await s.call_tool("delete", {"path": "/x"})
            assert text(ok) == "deleted /x"
            assert "delete" in s.asked[0] and '{"path":"/x"}' in s.asked[0]  # type: ignore[attr-defined]
        async with connect(transport, tmp_path / "c", False) as s:
            no = await s.call_tool("delete", {"path": "/x"})
            assert no.is_error and text(no) == "Tool call rejected by human"
    anyio.run(main)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cancellation_reaches_the_executor(transport: str, tmp_path: Path) -> None:
    mark = tmp_path / "cancelled"

    async def main() -> None:
        async with connect(transport, mark, None) as s:
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
                if mark.exists():
                    return
                await anyio.sleep(0.1)
            raise AssertionError("the executor was not cancelled")
    anyio.run(main)


def test_annotations_are_checked_by_the_core() -> None:
    with pytest.raises(AgentDefinitionError, match="annotations.readOnlyHint must be a boolean"):
        define_tool(AgentTool("t", lambda i, rt: 1, annotations={"read_only_hint": "yes"}))


def test_manual_tools_are_refused() -> None:
    manual = define_tool(AgentTool("ask", None, description="Asks a person"))
    with pytest.raises(AgentDefinitionError, match="Tool ask has no execute and cannot be served over MCP"):
        with serve_mcp([manual], name="x"):
            pass


def test_an_agent_is_served_as_one_tool(tmp_path: Path) -> None:
    """The agent's approval-gated call is asked of the MCP client through elicitation."""
    from phaseo_agent import ScriptedClient, create_agent

    deleted: List[str] = []

    def delete(tool_input: Any, _rt: Any) -> str:
        deleted.append(tool_input["path"])
        return "deleted"

    model = ScriptedClient([
        {"tool_calls": [{"id": "n1", "name": "delete", "arguments": '{"path": "/tmp/x"}'}]},
        {"text": "researched"},
    ])
    with create_agent(id="researcher", tools=[define_tool(AgentTool("delete", delete, require_approval=True))]) as agent:
        with pytest.raises(AgentDefinitionError, match="needs a model client"):
            with serve_mcp(name="x", agent=agent):
                pass
        with serve_mcp(name="agent", agent=agent, client=model, description="Researches",
                       transport={"type": "http"}) as server:
            asked: List[str] = []

            async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
                asked.append(params.message)
                return types.ElicitResult(action="accept", content={"approve": True})

            async def main() -> types.CallToolResult:
                assert server.url is not None
                async with streamable_http_client(server.url) as (read, write, *_):
                    async with ClientSession(read, write, elicitation_callback=elicit) as session:
                        await session.initialize()
                        tools = (await session.list_tools()).tools
                        assert [(t.name, t.description) for t in tools] == [("researcher", "Researches")]
                        return await session.call_tool("researcher", {"input": "find x"})

            done = anyio.run(main)
    assert not done.is_error and text(done) == "researched"
    assert deleted == ["/tmp/x"]
    assert "delete" in asked[0] and '{"path":"/tmp/x"}' in asked[0]
