"""MCP servers (docs/behaviour.md §11) through the Python binding, against real servers started here:
our test server on the official Python `mcp` package (tests/mcp/test_server.py) and
`@modelcontextprotocol/server-everything` over stdio and Streamable HTTP (both installed by
`make mcp-servers`). A missing server fails the test under CI=true."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from phaseo_agent import (
    AgentDefinitionError,
    AgentMcpError,
    ScriptedClient,
    create_agent,
    mcp_http_server,
    mcp_stdio_server,
)

from conftest import RecordingClient, call, calls

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests/mcp/test_server.py"
EVERYTHING = ROOT / "tests/mcp/node_modules/.bin/mcp-server-everything"


def _missing(what: str) -> None:
    message = f"{what} is not installed: run `make mcp-servers`"
    if os.environ.get("CI", "") not in ("", "0", "false"):
        pytest.fail(message)
    pytest.skip(message)


def mcp_python() -> str:
    py = ROOT / ".venvs/py/bin/python"
    if not (py.exists() and (ROOT / ".venvs/py/.mcp").exists()):
        _missing("the Python `mcp` package (.venvs/py)")
    return str(py)


def everything() -> str:
    if not EVERYTHING.exists():
        _missing("@modelcontextprotocol/server-everything (tests/mcp/node_modules)")
    return str(EVERYTHING)


@pytest.fixture
def markers() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="phaseo-mcp-py-") as d:
        yield Path(d)


def test_server(name: str, markers: Path, **options: Any) -> Any:
    return mcp_stdio_server(name, mcp_python(), [str(SERVER)],
                            env={"PHASEO_MCP_MARKERS": str(markers), "PHASEO_MCP_NAME": name}, **options)


test_server.__test__ = False  # type: ignore[attr-defined]


def server_pids(markers: Path) -> List[int]:
    return [int(p.name[4:]) for p in markers.glob("pid-*")]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat.rsplit(")", 1)[1].strip().startswith("Z")


def wait_until(check: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return bool(check())


def tool_results(result: Any) -> List[Dict[str, Any]]:
    return [r for s in result.step_results for r in s["tool_results"]]


def offered(client: RecordingClient) -> List[str]:
    return sorted(t["id"] for t in client.requests[0]["tools"])


def test_tools_are_listed_filtered_and_prefixed(markers: Path) -> None:
    seen: List[Any] = []

    def keep(tool: Any) -> bool:
        seen.append(tool)
        return tool.annotations.get("readOnlyHint") is True or tool["name"] == "delete_file"

    server = test_server("files", markers, tool_prefix="fs", deny_tools=["crash", "noisy"], filter=keep)
    with create_agent(id="lister", mcp_servers=[server]) as agent:
        client = RecordingClient([{"text": "ok"}])
        assert agent.run(input="hi", client=client).status == "completed"
    assert offered(client) == ["fs_add", "fs_count_up", "fs_delete_file", "fs_echo", "fs_fail", "fs_slow"]
    echo = next(t for t in seen if t.name == "echo")
    assert echo.description == "Returns its input text."
    assert echo.annotations["readOnlyHint"] is True
    assert "crash" not in {t.name for t in seen}  # deny_tools applies before the filter

    with create_agent(id="lister", mcp_servers=[test_server("only", markers, allow_tools=["echo", "add"])]) as agent:
        client = RecordingClient([{"text": "ok"}])
        agent.run(input="hi", client=client)
    assert offered(client) == ["add", "echo"]


def test_an_async_filter_works_and_a_raising_filter_fails_the_run_with_mcp_failed(markers: Path) -> None:
    async def only_echo(tool: Any) -> bool:
        await asyncio.sleep(0)
        return bool(tool.name == "echo")

    with create_agent(id="a", mcp_servers=[test_server("t", markers, filter=only_echo)]) as agent:
        client = RecordingClient([{"text": "ok"}])
        agent.run(input="hi", client=client)
    assert offered(client) == ["echo"]

    def broken(tool: Any) -> bool:
        raise RuntimeError("filter bug")

    with create_agent(id="b", mcp_servers=[test_server("t", markers, filter=broken, optional=True)]) as agent:
        with pytest.raises(AgentMcpError) as e:
            agent.run(input="hi", client=ScriptedClient([{"text": "ok"}]))
    assert e.value.code == "mcp_failed"
    assert "MCP server 't': the tool filter failed on " in str(e.value)
    assert "filter bug" in str(e.value)


def test_a_call_round_trip_maps_text_structured_and_error_results(markers: Path) -> None:
    with create_agent(id="caller", mcp_servers=[test_server("t", markers, on_error="return-to-model")]) as agent:
        client = ScriptedClient([
            calls(call("c1", "echo", text="hello"), call("c2", "add", numbers=[1, 2, 3]),
                  call("c3", "fail", reason="nope")),
            {"text": "done"},
        ])
        result = agent.run(input="go", client=client)
    assert result.status == "completed"
    r = tool_results(result)
    assert r[0]["result"] == "hello"
    assert r[1]["result"] == {"total": 6, "count": 3}  # structuredContent, checked by its outputSchema
    assert r[2].get("result") is None
    assert r[2]["error"] == "Error executing tool fail: failed: nope"


def test_the_input_schema_is_checked_before_the_server_is_called(markers: Path) -> None:
    from phaseo_agent import AgentSchemaValidationError

    with create_agent(id="v", mcp_servers=[test_server("t", markers)]) as agent:
        with pytest.raises(AgentSchemaValidationError) as e:
            agent.run(input="go", client=ScriptedClient([calls(call("c1", "add", numbers="x")), {"text": "x"}]))
    assert str(e.value).startswith("Invalid tool input: /numbers")


def _everything_round_trip(server: Any) -> None:
    with create_agent(id="everything", mcp_servers=[server]) as agent:
        client = RecordingClient([calls(call("c1", "ev_echo", message="hi"), call("c2", "ev_get-sum", a=2, b=3)),
                                  {"text": "done"}])
        result = agent.run(input="go", client=client)
    assert result.status == "completed"
    assert "ev_echo" in offered(client)
    r = tool_results(result)
    assert r[0]["result"] == "Echo: hi"
    assert r[1]["result"] == "The sum of 2 and 3 is 5."


def test_server_everything_over_stdio() -> None:
    _everything_round_trip(mcp_stdio_server("everything", everything(), ["stdio"], tool_prefix="ev"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_server_everything_over_streamable_http() -> None:
    bin_path = everything()
    port = _free_port()
    proc = subprocess.Popen([bin_path, "streamableHttp"], env=dict(os.environ, PORT=str(port)),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        listening = threading.Event()

        def watch() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                if "listening on port" in line:
                    listening.set()

        threading.Thread(target=watch, daemon=True).start()
        assert listening.wait(30), "server-everything did not start listening"
        _everything_round_trip(mcp_http_server("everything", f"http://127.0.0.1:{port}/mcp", {"X-Test": "1"},
                                               bearer_token="not-checked", tool_prefix="ev"))
    finally:
        proc.kill()
        proc.wait()


def test_destructive_approval_pauses_and_the_continue_calls_the_server(markers: Path) -> None:
    server = test_server("files", markers, require_approval="destructive")
    client = ScriptedClient([calls(call("c1", "echo", text="free"), call("c2", "delete_file", path="a.txt")),
                             {"text": "deleted"}])
    with create_agent(id="gate", mcp_servers=[server]) as agent:
        paused = agent.run(input="go", client=client)
        assert paused.status == "waiting_for_human"
        assert [p.tool_call_id for p in paused.pending] == ["c2"]  # echo is read-only: not gated
        assert not (markers / "deleted-a.txt").exists()
        stored = paused.to_json()
    # A new agent (as another process would have), from the JSON.
    with create_agent(id="gate", mcp_servers=[test_server("files", markers, require_approval="destructive")]) as agent:
        done = agent.continue_run(state=json.loads(stored), client=client, approvals=["c2"])
    assert done.status == "completed"
    assert done.output == "deleted"
    assert (markers / "deleted-a.txt").read_text().split() == [str(os.getpid())]
    assert {r["tool_call_id"]: r.get("result") for r in tool_results(done)}["c2"] == "deleted a.txt"


def test_an_approval_predicate_sees_the_call_and_the_annotations(markers: Path) -> None:
    seen: List[Any] = []

    def gate(call_: Any, runtime: Any) -> bool:
        seen.append((call_.name, call_.input, runtime.tool_annotations))
        return runtime.tool_annotations.get("readOnlyHint") is not True

    with create_agent(id="gate", mcp_servers=[test_server("t", markers, require_approval=gate)]) as agent:
        paused = agent.run(input="go", client=ScriptedClient([
            calls(call("c1", "echo", text="free"), call("c2", "append_note", note="gated")), {"text": "x"}]))
    assert [p.tool_call_id for p in paused.pending] == ["c2"]
    assert seen[0] == ("echo", {"text": "free"}, {"readOnlyHint": True})
    assert seen[1][2] == {"readOnlyHint": False, "destructiveHint": False}


def test_a_timeout_returns_on_time_and_the_server_sees_the_cancellation(markers: Path) -> None:
    # The deadline is 1.5 s away so that the server has begun the call (a loaded machine may
    # take several hundred ms to hand it over) before the cancellation reaches it.
    server = test_server("t", markers, timeout_ms=60_000, tool_timeouts={"slow": 1500}, on_error="return-to-model")
    with create_agent(id="slow", mcp_servers=[server]) as agent:
        agent.run(input="warm", client=ScriptedClient([{"text": "ok"}]))  # the server is up
        started = time.monotonic()
        result = agent.run(input="go", client=ScriptedClient([calls(call("c1", "slow", seconds=20, tag="p1")),
                                                              {"text": "ok"}]))
        elapsed = time.monotonic() - started
        assert elapsed < 3.0, f"took {elapsed:.2f}s"
        assert tool_results(result)[0]["error"] == "Tool slow timed out after 1500ms"
        assert wait_until(lambda: (markers / "cancelled-p1").exists(), 10), "no notifications/cancelled"
    assert not (markers / "finished-p1").exists()


@pytest.mark.parametrize("policy", ["fail-run", "return-to-model"])
def test_a_crashed_server_is_mcp_failed_under_both_policies(markers: Path, policy: str) -> None:
    client = ScriptedClient([calls(call("c1", "crash"), call("c2", "echo", text="after")), {"text": "ok"}])
    with create_agent(id="crash", mcp_servers=[test_server("t", markers, on_error=policy)]) as agent:
        if policy == "fail-run":
            with pytest.raises(AgentMcpError) as e:
                agent.run(input="go", client=client)
            assert e.value.code == "mcp_failed"
            assert str(e.value).startswith("MCP server 't' exited"), str(e.value)
            assert "crashing on purpose" in str(e.value)
            assert e.value.result is not None and e.value.result.status == "failed"
        else:
            result = agent.run(input="go", client=client)
            assert result.status == "completed"
            r = tool_results(result)
            assert r[0]["error"].startswith("MCP server 't' exited"), r[0]
            # The server is started again for the next call.
            assert r[1]["result"] == "after"


def test_an_optional_server_that_cannot_start_is_skipped(markers: Path) -> None:
    broken = mcp_stdio_server("broken", "/nonexistent/mcp-server", optional=True)
    with create_agent(id="opt", mcp_servers=[test_server("good", markers, allow_tools=["echo"]), broken]) as agent:
        client = RecordingClient([{"text": "ok"}])
        assert agent.run(input="go", client=client).status == "completed"
    assert offered(client) == ["echo"]
    with create_agent(id="req", mcp_servers=[mcp_stdio_server("broken", "/nonexistent/mcp-server")]) as agent:
        with pytest.raises(AgentMcpError) as e:
            agent.run(input="go", client=ScriptedClient([{"text": "ok"}]))
    assert str(e.value).startswith("MCP server 'broken' could not start: ")


def test_a_deferred_server_offers_its_tools_only_once_tool_search_loads_them(markers: Path) -> None:
    server = test_server("t", markers, allow_tools=["echo", "add"], defer_loading=True)
    with create_agent(id="deferred", mcp_servers=[server]) as agent:
        client = RecordingClient([
            calls(call("c1", "tool_search", query="echo text", limit=1)),
            calls(call("c2", "echo", text="hello")),
            {"text": "done"},
        ])
        result = agent.run(input="go", client=client)
    assert result.status == "completed"
    assert [[t["id"] for t in r["tools"]] for r in client.requests] == [
        ["tool_search"], ["tool_search", "echo"], ["tool_search", "echo"]]
    assert tool_results(result)[-1]["result"] == "hello"
    assert json.loads(result.to_json())["run"]["loadedTools"] == ["echo"]


def test_progress_becomes_preliminary_results_in_a_stream(markers: Path) -> None:
    with create_agent(id="p", mcp_servers=[test_server("t", markers)]) as agent:
        stream = agent.stream(input="go", client=ScriptedClient([calls(call("c1", "count_up", steps=3)),
                                                                 {"text": "done"}]))
        progress = [e["result"] for e in stream.events() if e["type"] == "tool.preliminary_result"]
        result = stream.result()
    assert progress == [{"progress": 1, "total": 3, "message": f"step {1}"},
                        {"progress": 2, "total": 3, "message": "step 2"},
                        {"progress": 3, "total": 3, "message": "step 3"}]
    assert tool_results(result)[0]["result"] == "counted 3"


def test_async_runs_and_async_with_close_the_servers(markers: Path) -> None:
    async def main() -> List[int]:
        async with create_agent(id="a", mcp_servers=[test_server("t", markers)]) as agent:
            result = await agent.run_async(input="go", client=ScriptedClient([calls(call("c1", "echo", text="x")),
                                                                              {"text": "ok"}]))
            assert tool_results(result)[0]["result"] == "x"
            pids = server_pids(markers)
            assert len(pids) == 1 and alive(pids[0])
        return pids

    pids = asyncio.run(main())
    assert wait_until(lambda: not alive(pids[0]), 5), "the server outlived `async with`"


def test_close_stops_the_server_and_a_later_run_starts_it_again(markers: Path) -> None:
    agent = create_agent(id="c", mcp_servers=[test_server("t", markers)])
    agent.run(input="go", client=ScriptedClient([{"text": "ok"}]))
    [first] = server_pids(markers)
    agent.close()
    assert wait_until(lambda: not alive(first), 5)
    again = agent.run(input="go", client=ScriptedClient([calls(call("c1", "echo", text="again")), {"text": "ok"}]))
    assert tool_results(again)[0]["result"] == "again"
    assert len(server_pids(markers)) == 2
    agent.close()
    agent.close()  # twice is fine


_HOST = textwrap.dedent("""
    import os, sys, time
    from phaseo_agent import ScriptedClient, create_agent, mcp_stdio_server
    server = mcp_stdio_server("t", sys.argv[1], [sys.argv[2]], env={"PHASEO_MCP_MARKERS": sys.argv[3]})
    agent = create_agent(id="host", mcp_servers=[server])
    agent.run(input="go", client=ScriptedClient([{"text": "ok"}]))
    print("ready", flush=True)
    if sys.argv[4] == "hang":
        time.sleep(600)
""")


@pytest.mark.parametrize("ending", ["exit", "sigkill"])
def test_no_stdio_child_is_left_after_the_host_process_ends(markers: Path, ending: str) -> None:
    """The host neither closes the agent nor exits cleanly (SIGKILL): its server still ends."""
    host = subprocess.Popen([sys.executable, "-c", _HOST, mcp_python(), str(SERVER), str(markers),
                             "hang" if ending == "sigkill" else "exit"], stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None and host.stdout.readline().strip() == "ready"
        [pid] = server_pids(markers)
        assert alive(pid)
        if ending == "sigkill":
            host.send_signal(signal.SIGKILL)
        host.wait(30)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    assert wait_until(lambda: not alive(pid), 5), f"MCP server {pid} outlived its host"


def test_elicitation_requests_go_to_the_hook() -> None:
    asked: List[Any] = []

    def answer(request: Dict[str, Any], context: Any) -> Dict[str, Any]:
        asked.append((context.server, request["message"]))
        return {"action": "accept", "content": {"name": "Ada Lovelace"}}

    server = mcp_stdio_server("everything", everything(), ["stdio"], on_elicitation=answer)
    with create_agent(id="eli", mcp_servers=[server]) as agent:
        result = agent.run(input="go", client=ScriptedClient([calls(call("c1", "trigger-elicitation-request")),
                                                              {"text": "ok"}]))
    assert asked == [("everything", "Please provide inputs for the following fields:")]
    assert "Ada Lovelace" in json.dumps(tool_results(result)[0]["result"])


def test_bad_declarations_get_clear_errors(markers: Path) -> None:
    with pytest.raises(AgentDefinitionError, match=r"Invalid MCP server 't': unknown field 'timeout' of a stdio "
                                                   r"server \(known: name, command, args, env, cwd, allow_tools, "):
        mcp_stdio_server("t", "x", timeout=5)  # type: ignore[call-arg]
    with pytest.raises(AgentDefinitionError, match=r"Invalid MCP server 't': unknown field 'allowTools'"):
        mcp_stdio_server("t", "x", allowTools=["a"])  # type: ignore[call-arg]
    with pytest.raises(AgentDefinitionError, match=r"Invalid MCP server 't': unknown field 'bearer' of a stdio server"):
        mcp_stdio_server("t", "x", bearer_token="x")  # type: ignore[call-arg]
    with pytest.raises(AgentDefinitionError, match=r"Invalid MCP server 't': command must be a string, got 3"):
        mcp_stdio_server("t", 3)  # type: ignore[arg-type]
    with pytest.raises(AgentDefinitionError, match=r"Invalid MCP server 't': filter must be a function"):
        mcp_stdio_server("t", "x", filter="all")  # type: ignore[arg-type]
    with pytest.raises(AgentDefinitionError, match=r"Invalid MCP server 't': optional must be true or false, got 1"):
        mcp_stdio_server("t", "x", optional=1)  # type: ignore[arg-type]
    with pytest.raises(AgentDefinitionError, match=r"require_approval must be true, false, a predicate or \"destructive\""):
        mcp_stdio_server("t", "x", require_approval="sometimes")
    with pytest.raises(AgentDefinitionError, match=r"url must start with http:// or https://"):
        create_agent(id="x", mcp_servers=[mcp_http_server("h", "ftp://x")])
    with pytest.raises(AgentDefinitionError, match=r"timeout_ms must be a positive number"):
        mcp_stdio_server("t", "x", timeout_ms=0)
    with pytest.raises(AgentDefinitionError, match=r"on_error must be \"fail-run\" or \"return-to-model\", got \"explode\""):
        mcp_stdio_server("t", "x", on_error="explode")
    with pytest.raises(AgentDefinitionError, match=r"deny_tools must be an array of strings, got \"crash\""):
        mcp_stdio_server("t", "x", deny_tools="crash")  # type: ignore[arg-type]
    with pytest.raises(AgentDefinitionError, match=r"mcp_servers must be a list"):
        create_agent(id="x", mcp_servers=["not a server"])
    with pytest.raises(AgentDefinitionError, match=r"duplicate MCP server name 't'"):
        create_agent(id="x", mcp_servers=[test_server("t", markers), test_server("t", markers)])
