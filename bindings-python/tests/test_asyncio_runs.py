"""How ``run_async`` behaves inside asyncio: where callbacks run, which task and
contextvars they see, cancellation from the awaiting task, and nothing kept per loop."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import threading
import time
from typing import Any, Dict, List, Optional

from conftest import call, calls

from phaseo_agent import AgentTool, ScriptedClient, ToolRuntime, create_agent, define_tool

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


def test_callbacks_see_a_copy_of_the_callers_context() -> None:
    seen: List[str] = []

    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        seen.append(request_id.get())
        request_id.set("changed by the tool")  # must not leak to the caller or other calls
        return "ok"

    def check_input(value: Any) -> Any:  # a synchronous callback of the run
        seen.append("hook:" + request_id.get())
        return value

    tool = define_tool(AgentTool(id="t", execute=execute, input_schema=check_input))
    agent = create_agent({"id": "a", "tools": [tool], "tool_execution": {"tool_concurrency": 3}})

    async def main() -> str:
        request_id.set("req-42")
        client = ScriptedClient([calls(call("c1", "t"), call("c2", "t"), call("c3", "t")), {"text": "done"}])
        result = await agent.run_async(input="go", client=client)
        assert result.status == "completed"
        return request_id.get()

    assert asyncio.run(main()) == "req-42"
    assert sorted(seen) == ["hook:req-42"] * 3 + ["req-42"] * 3


def test_each_async_tool_runs_in_its_own_task_on_the_callers_thread() -> None:
    tasks: List[Optional[asyncio.Task[Any]]] = []
    threads: List[int] = []

    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        tasks.append(asyncio.current_task())
        threads.append(threading.get_ident())
        # asyncio.timeout (and anyio / aiohttp timeouts) need the current task
        async with asyncio.timeout(5):
            await asyncio.sleep(0.01)
        return "ok"

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))],
                          "tool_execution": {"tool_concurrency": 2}})

    async def main() -> Any:
        client = ScriptedClient([calls(call("c1", "t"), call("c2", "t")), {"text": "done"}])
        result = await agent.run_async(input="go", client=client)
        return result, asyncio.current_task()

    result, caller = asyncio.run(main())
    assert result.status == "completed", result.error
    assert len(tasks) == 2 and all(t is not None for t in tasks)
    assert tasks[0] is not tasks[1] and caller not in tasks
    assert threads == [threading.get_ident()] * 2


def test_cancelling_the_awaiting_task_cancels_running_tools() -> None:
    cancelled: List[str] = []
    began: List[str] = []

    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        began.append(tool_input["who"])
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(tool_input["who"])
            raise
        return "never"

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))],
                          "tool_execution": {"tool_concurrency": 2}})

    async def main() -> None:
        client = ScriptedClient([calls(call("c1", "t", who="x"), call("c2", "t", who="y")), {"text": "done"}])
        run = asyncio.ensure_future(agent.run_async(input="go", client=client))
        # Cancel once both tools are running (on a loaded machine they may take a while to
        # begin), so that both have a CancelledError to see.
        deadline = time.monotonic() + 10
        while len(began) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert sorted(began) == ["x", "y"], "the tools did not both begin"
        run.cancel()
        try:
            await run
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the run was not cancelled")
        deadline = time.monotonic() + 10  # the tools' tasks are cancelled on the following iterations
        while len(cancelled) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert sorted(cancelled) == ["x", "y"]


def test_finished_loops_leave_no_sockets_or_runs_behind() -> None:
    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> int:
        await asyncio.sleep(0)
        return 1

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))]})

    async def main() -> None:
        client = ScriptedClient([calls(call("c1", "t")), {"text": "done"}])
        assert (await agent.run_async(input="go", client=client)).output == "done"

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    asyncio.run(main())
    gc.collect()
    before = open_fds()
    for _ in range(30):
        asyncio.run(main())
    gc.collect()
    assert open_fds() <= before + 1  # each loop's wake-up sockets are closed with it


def test_a_stream_does_not_see_the_context_of_whoever_ran_first_on_the_loop() -> None:
    user: contextvars.ContextVar[str] = contextvars.ContextVar("user", default="unset")
    seen: List[str] = []

    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> int:
        seen.append(user.get())
        return 1

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))]})

    def client() -> ScriptedClient:
        return ScriptedClient([calls(call("c1", "t")), {"text": "ok"}])

    async def alice() -> None:
        user.set("alice")
        await agent.run_async(input="go", client=client())  # the loop's bridge is made here

    async def bob() -> None:
        user.set("bob")
        await agent.stream(input="go", client=client())  # its tools reach the loop via the bridge

    async def main() -> None:
        await asyncio.create_task(alice())
        await asyncio.create_task(bob())

    asyncio.run(main())
    assert seen[0] == "alice" and seen[1] != "alice"


def test_keyboard_interrupt_in_a_tool_stops_the_loop() -> None:
    # On Python 3.12+ the tool's first step runs eagerly inside the run's poll.
    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        raise KeyboardInterrupt("stop!")

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))]})
    client = ScriptedClient([calls(call("c1", "t")), {"text": "done"}])
    try:
        asyncio.run(agent.run_async(input="go", client=client))
    except KeyboardInterrupt as interrupt:
        assert str(interrupt) == "stop!"
    else:
        raise AssertionError("KeyboardInterrupt did not propagate")


def test_a_loop_closed_with_a_run_pending_lets_go_of_the_run_and_its_sockets() -> None:
    finished: List[str] = []
    began: List[str] = []

    async def execute(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        began.append("began")
        try:
            await asyncio.sleep(30)
        finally:
            finished.append("finally")
        return "never"

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute))]})

    def abandon_a_run() -> None:
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(lambda loop, context: None)

        async def main() -> Any:
            return await agent.run_async(input="go", client=ScriptedClient([calls(call("c1", "t")), {"text": "done"}]))

        async def until_the_tool_began(count: int) -> None:
            # The tool must be running (inside its try) when the loop closes; on a loaded
            # machine that may take a while, so wait for it rather than a fixed time.
            deadline = time.monotonic() + 10
            while len(began) == count and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
            assert len(began) > count, "the tool did not begin"

        loop.create_task(main())
        loop.run_until_complete(until_the_tool_began(len(began)))
        loop.close()  # not asyncio.run: nothing cancels or finishes the run

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    def next_run() -> None:  # a run on a new loop: its bridge lookup closes those of closed loops
        plain = create_agent({"id": "plain"})
        asyncio.run(plain.run_async(input="go", client=ScriptedClient([{"text": "ok"}])))

    abandon_a_run()
    next_run()
    gc.collect()
    before = open_fds()
    finished.clear()
    for _ in range(10):
        abandon_a_run()
    next_run()
    gc.collect()
    assert open_fds() <= before + 3  # the asyncio.run loop of next_run keeps its own bridge
    assert finished == ["finally"] * 10  # every abandoned tool was closed
