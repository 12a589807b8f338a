"""Errors, error policies, timeouts and cancellation."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import Any, Dict, List

import pytest
from conftest import call, calls

from phaseo_agent import (
    AgentDefinitionError,
    AgentError,
    AgentModelError,
    AgentSchemaValidationError,
    AgentStateError,
    AgentTool,
    AgentToolError,
    AgentToolTimeoutError,
    AgentUnknownToolError,
    CancelToken,
    RunResult,
    ScriptedClient,
    ToolRuntime,
    create_agent,
    define_tool,
)


def agent_with(execute: Any, **tool: Any) -> Any:
    return create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=execute, **tool))]})


def test_exception_fails_the_run_and_carries_the_failed_state() -> None:
    def boom(tool_input: Dict[str, Any], runtime: ToolRuntime) -> None:
        raise ValueError("disk full")

    with pytest.raises(AgentToolError) as raised:
        agent_with(boom).run(input="go", client=ScriptedClient([calls(call("c1", "t"))]))
    assert raised.value.code == "tool_failed"
    assert str(raised.value) == "disk full"
    assert raised.value.result is not None and raised.value.result.status == "failed"
    assert raised.value.result.error == {"code": "tool_failed", "message": "disk full"}


def test_exception_returned_to_the_model() -> None:
    async def boom(tool_input: Dict[str, Any], runtime: ToolRuntime) -> None:
        raise KeyError("missing")

    result = agent_with(boom, on_error="return-to-model").run(
        input="go", client=ScriptedClient([calls(call("c1", "t")), {"text": "sorry"}]))
    assert result.status == "completed"
    tool_message = [m for m in result.messages if m["role"] == "tool"][0]
    assert tool_message["is_error"] is True
    assert tool_message["content"] == '{"error":"\'missing\'"}'


def test_timeout_cancels_a_sync_tool_that_watches_its_flag() -> None:
    observed: List[bool] = []

    def slow(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        observed.append(runtime.cancelled.wait(10))
        return "late"

    # The deadline is 1 s away so that the tool has begun (a thread of a loaded machine may
    # take several hundred ms to start) before it must observe the cancellation.
    started = time.monotonic()
    with pytest.raises(AgentToolTimeoutError) as raised:
        agent_with(slow, timeout_ms=1000).run(input="go", client=ScriptedClient([calls(call("c1", "t"))]))
    assert time.monotonic() - started < 2.5
    assert str(raised.value) == "Tool t timed out after 1000ms"
    deadline = time.monotonic() + 10
    while not observed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert observed == [True]


def test_timeout_cancels_an_async_tool_with_cancelled_error() -> None:
    cancelled = threading.Event()

    async def slow(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    # The deadline is 1 s away so that the coroutine has begun (and can see CancelledError)
    # even when the machine is loaded.
    result = agent_with(slow, timeout_ms=1000, on_error="return-to-model").run(
        input="go", client=ScriptedClient([calls(call("c1", "t")), {"text": "gave up"}]))
    assert result.output == "gave up"
    assert cancelled.wait(10)


def test_a_sync_tool_ignoring_cancellation_does_not_hold_the_run() -> None:
    def stubborn(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        time.sleep(6)
        return "late"

    # The run returns at its 50 ms deadline, not after the 6 s sleep; the bound leaves room
    # for a loaded machine and stays far below the sleep.
    started = time.monotonic()
    with pytest.raises(AgentToolTimeoutError):
        agent_with(stubborn, timeout_ms=50).run(input="go", client=ScriptedClient([calls(call("c1", "t"))]))
    assert time.monotonic() - started < 2.5


def test_cancel_token_ends_the_run_cancelled() -> None:
    async def slow(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        await asyncio.sleep(5)
        return "late"

    token = CancelToken()
    threading.Timer(0.05, token.cancel).start()
    result = agent_with(slow).run(input="go", client=ScriptedClient([calls(call("c1", "t"))]), cancel=token)
    assert result.status == "cancelled"
    assert result.error == {"code": "cancelled", "message": "Agent run cancelled"}


def test_keyboard_interrupt_stops_a_blocking_run() -> None:
    def slow(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        runtime.cancelled.wait(5)
        return "late"

    main = threading.main_thread().ident
    assert main is not None
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        # Armed inside the block: a late main thread cannot let the signal land before it.
        threading.Timer(0.1, lambda: signal.pthread_kill(main, signal.SIGINT)).start()
        agent_with(slow).run(input="go", client=ScriptedClient([calls(call("c1", "t"))]))
    assert time.monotonic() - started < 2


def test_unknown_tool_and_invalid_arguments() -> None:
    agent = agent_with(lambda i, rt: 1, parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
    with pytest.raises(AgentUnknownToolError, match="Unknown tool 'nope'"):
        agent.run(input="go", client=ScriptedClient([calls(call("c1", "nope"))]))
    with pytest.raises(AgentSchemaValidationError) as raised:
        agent.run(input="go", client=ScriptedClient([calls(call("c1", "t", n="x"))]))
    assert raised.value.code == "tool_input_invalid" and raised.value.target == "tool_input"
    assert str(raised.value).startswith("Invalid tool input: /n: ")


def test_model_failures_after_retries() -> None:
    attempts: List[int] = []

    class Flaky:
        def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
            attempts.append(1)
            raise ConnectionError("upstream down")

    agent = create_agent({"id": "a", "model_retry": {"max_retries": 2, "backoff_ms": 1}})
    with pytest.raises(AgentModelError) as raised:
        agent.run(input="hi", client=Flaky())
    assert raised.value.code == "model_failed" and str(raised.value) == "upstream down"
    assert len(attempts) == 3


def test_definition_errors() -> None:
    with pytest.raises(AgentDefinitionError):
        define_tool(AgentTool(id="bad", parameters={"type": 5}))
    with pytest.raises(AgentDefinitionError):
        define_tool(AgentTool(id="neg", execute=lambda i, rt: 1, timeout_ms=-1))
    with pytest.raises(AgentDefinitionError):
        define_tool(AgentTool(id="policy", on_error="explode"))
    t = define_tool(AgentTool(id="dup", execute=lambda i, rt: 1))
    with pytest.raises(AgentDefinitionError, match="duplicate tool id 'dup'"):
        create_agent({"id": "a", "tools": [t, t]})
    with pytest.raises(AgentDefinitionError, match="unknown keys"):
        create_agent({"id": "a", "toolz": []})


def test_invalid_state_is_refused() -> None:
    with pytest.raises(AgentStateError, match="unsupported version 99"):
        RunResult.from_json('{"version": 99, "run": {}}')
    with pytest.raises(AgentStateError, match="not JSON"):
        RunResult.from_json("{")
    with pytest.raises(AgentError) as raised:
        RunResult.from_json('{"version": 1}')
    assert raised.value.code == "state_invalid"


def test_every_error_code_of_the_state_schema_has_its_own_class() -> None:
    import json
    import pathlib

    from phaseo_agent import AgentLeaseLostError, AgentMcpError, AgentStoreError
    from phaseo_agent.errors import AgentError as Base
    from phaseo_agent.errors import error_class

    schema_path = pathlib.Path(__file__).resolve().parents[2] / "core" / "state.schema.json"
    codes = json.loads(schema_path.read_text())["$defs"]["errorCode"]["enum"]
    assert codes[-3:] == ["store_failed", "lease_lost", "mcp_failed"]
    for code in codes:
        cls = error_class(code)
        assert cls is not Base, f"{code} has no class of its own"
        assert isinstance(cls("m", code=code), Base)
    assert error_class("mcp_failed") is AgentMcpError
    assert error_class("store_failed") is AgentStoreError
    assert error_class("lease_lost") is AgentLeaseLostError
    assert error_class("no_such_code") is Base
