"""Every executor form, progress, context and the runtime, through the public API."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Dict, List

import pytest
from conftest import RecordingClient, call, calls

from phaseo_agent import AgentTool, ScriptedClient, ToolReturn, ToolRuntime, create_agent, define_tool


def run_one(execute: Any, events: List[Dict[str, Any]], **tool: Any) -> Any:
    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute, **tool))]})
    client = ScriptedClient([calls(call("c1", "t", x=2)), {"text": "done"}])
    return agent.run(input="go", client=client, on_event=events.append)


def tool_output(events: List[Dict[str, Any]]) -> Any:
    return next(e["output"] for e in events if e["type"] == "tool.completed")


def progress(events: List[Dict[str, Any]]) -> List[Any]:
    return [e["result"] for e in events if e["type"] == "tool.preliminary_result"]


def test_sync_def_runs_on_a_worker_thread(events: List[Dict[str, Any]]) -> None:
    main = threading.get_ident()

    def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> Dict[str, Any]:
        runtime.emit_progress({"step": 1})
        return {"double": tool_input["x"] * 2, "same_thread": threading.get_ident() == main}

    result = run_one(execute, events)
    assert result.status == "completed"
    assert tool_output(events) == {"double": 4, "same_thread": False}
    assert progress(events) == [{"step": 1}]


def test_async_def(events: List[Dict[str, Any]]) -> None:
    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> int:
        await asyncio.sleep(0.001)
        return int(tool_input["x"]) + 1

    run_one(execute, events)
    assert tool_output(events) == 3


def test_generator_yields_progress_and_returns_result(events: List[Dict[str, Any]]) -> None:
    def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> Any:
        yield {"phase": "scan"}
        yield {"phase": "embed"}
        return {"indexed": 248}

    result = run_one(execute, events)
    assert progress(events) == [{"phase": "scan"}, {"phase": "embed"}]
    assert tool_output(events) == {"indexed": 248}
    assert result.step_results[0]["tool_results"][0]["preliminary_results"] == [{"phase": "scan"}, {"phase": "embed"}]


def test_async_generator_with_tool_return(events: List[Dict[str, Any]]) -> None:
    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> Any:
        yield {"percent": 50}
        await asyncio.sleep(0)
        yield ToolReturn("finished")

    run_one(execute, events)
    assert progress(events) == [{"percent": 50}]
    assert tool_output(events) == "finished"


def test_runtime_fields_and_set_context() -> None:
    seen: Dict[str, Any] = {}

    def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        seen.update(run_id=runtime.run_id, agent_id=runtime.agent_id, step=runtime.step_index,
                    call=runtime.tool_call, context=runtime.context)
        runtime.set_context({"user": "ana", "visits": 2})
        return "ok"

    agent = create_agent({"id": "ctx-agent", "tools": [define_tool(AgentTool(id="t", execute=execute))]})
    client = RecordingClient([calls(call("c1", "t", a=1)), {"text": "done"}])
    result = agent.run(input="go", client=client, context={"user": "ana"})
    assert seen["agent_id"] == "ctx-agent" and seen["run_id"] == result.run_id and seen["step"] == 0
    assert seen["call"] == {"id": "c1", "name": "t", "input": {"a": 1}}
    assert seen["context"] == {"user": "ana"}
    assert result.context == {"user": "ana", "visits": 2}
    assert client.requests[1]["context"] == {"user": "ana", "visits": 2}
    assert client.requests[1]["messages"][-1] == {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "t"}


def test_async_model_client_and_instructions() -> None:
    class AsyncClient:
        def __init__(self) -> None:
            self.requests: List[Dict[str, Any]] = []

        async def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
            await asyncio.sleep(0)
            self.requests.append(request)
            return {"message": {"content": "hello"}, "usage": {"input_tokens": 3, "output_tokens": 2}, "cost": 0.25}

    client = AsyncClient()
    agent = create_agent({"id": "a", "instructions": "Be brief.", "temperature": 0.3})
    result = agent.run(input="hi", client=client)
    assert result.output == "hello"
    assert result.usage.total_tokens == 5 and result.usage.cost == 0.25
    assert client.requests[0]["instructions"] == "Be brief."
    assert client.requests[0]["temperature"] == 0.3
    assert client.requests[0]["messages"] == [{"role": "user", "content": "hi"}]


def test_dynamic_instructions_per_turn() -> None:
    client = RecordingClient([calls(call("c1", "t")), {"text": "done"}])
    agent = create_agent({"id": "a", "instructions": lambda turn: f"turn {turn['number_of_turns']}",
                          "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: 1))]})
    agent.run(input="go", client=client)
    assert [r["instructions"] for r in client.requests] == ["turn 1", "turn 2"]


@pytest.mark.parametrize("entry", ["blocking", "asyncio"])
def test_two_hundred_concurrent_async_tools_do_not_deadlock(entry: str) -> None:
    running = 0
    peak = 0

    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        # A barrier rather than a fixed sleep: each tool waits (up to 10 s) until all 200
        # are in flight, so that a loaded machine starting them slowly cannot lower the peak,
        # while a cap on concurrency still leaves it below 200.
        deadline = time.monotonic() + 10
        while peak < 200 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        running -= 1
        return int(tool_input["i"])

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))],
                          "tool_execution": {"tool_concurrency": 200}})
    client = ScriptedClient([calls(*[call(f"c{i}", "t", i=i) for i in range(200)]), {"text": "done"}])
    if entry == "blocking":
        result = agent.run(input="go", client=client)
    else:
        result = asyncio.run(agent.run_async(input="go", client=client))
    assert result.status == "completed"
    assert peak == 200
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == [f"c{i}" for i in range(200)]


def test_sync_tools_that_wait_on_each_other_all_run_once_idle_threads_are_left() -> None:
    # An earlier turn leaves two idle worker threads; then three `def` tools, allowed to run
    # at once, wait for each other. Each queued call must get a thread of its own, not wait
    # behind the two idle ones (that wait would never end: they wait for the third).
    barrier = threading.Barrier(3, timeout=10)

    def warm(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        time.sleep(0.2)
        return "warm"

    def meet(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        barrier.wait()  # BrokenBarrierError after 10 s unless all three run at once
        return "met"

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="warm", execute=warm)),
                                               define_tool(AgentTool(id="meet", execute=meet))],
                          "tool_execution": {"tool_concurrency": 3}})
    client = ScriptedClient([calls(call("w1", "warm"), call("w2", "warm")),
                             calls(call("m1", "meet"), call("m2", "meet"), call("m3", "meet")),
                             {"text": "done"}])
    result = agent.run(input="go", client=client)
    assert result.status == "completed", result.error
    contents = {m["tool_call_id"]: m["content"] for m in result.messages if m["role"] == "tool"}
    assert contents == {"w1": "warm", "w2": "warm", "m1": "met", "m2": "met", "m3": "met"}


def test_async_tools_run_on_the_callers_loop() -> None:
    loops: List[Any] = []

    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        loops.append(asyncio.get_running_loop())
        return "ok"

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))]})

    async def main() -> Any:
        result = await agent.run_async(input="go", client=ScriptedClient([calls(call("c1", "t")), {"text": "x"}]))
        return result, asyncio.get_running_loop()

    result, caller_loop = asyncio.run(main())
    assert result.status == "completed"
    assert loops == [caller_loop]
