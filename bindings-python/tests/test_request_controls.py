"""Request controls (docs/behaviour.md §12) from Python: tool_choice, parallel_tool_calls, active_tools,
AgentTool(strict=..., input_examples=...), as host model clients receive them; and the
timeout of an interactive hook."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict

import pytest

from phaseo_agent import AgentTool, create_agent, define_tool
from phaseo_agent.errors import AgentDefinitionError, AgentError

from conftest import RecordingClient, call, calls

STRICT = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def echo(tool_id: str, **fields: Any) -> Any:
    return define_tool(AgentTool(id=tool_id, execute=lambda i, rt: i, **fields))


def test_controls_reach_the_host_client_in_snake_case() -> None:
    weather = echo("weather", parameters=STRICT, strict=True, input_examples=[{"city": "Paris"}])
    agent = create_agent({
        "id": "a",
        "tools": [weather, echo("plain")],
        "tool_choice": {"tool_id": "weather"},
        "parallel_tool_calls": False,
    })
    client = RecordingClient([{"text": "ok"}])
    agent.run(input="go", client=client)
    request = client.requests[0]
    assert request["tool_choice"] == {"tool_id": "weather"}
    assert request["parallel_tool_calls"] is False
    assert request["tools"][0]["strict"] is True
    # User data keeps its spelling.
    assert request["tools"][0]["input_examples"] == [{"city": "Paris"}]
    assert "strict" not in request["tools"][1]
    assert "input_examples" not in request["tools"][1]


def test_run_and_turn_values_and_unset_is_none() -> None:
    agent = create_agent({
        "id": "a",
        "tools": [echo("a1"), echo("a2")],
        "tool_choice": lambda turn: "required" if turn["step_index"] == 0 else None,
    })
    client = RecordingClient([calls(call("c1", "a1")), {"text": "ok"}])
    agent.run(input="go", client=client)
    assert [r["tool_choice"] for r in client.requests] == ["required", None]
    assert client.requests[0]["parallel_tool_calls"] is None

    client = RecordingClient([{"text": "ok"}])
    agent.run(input="go", client=client, tool_choice="none", parallel_tool_calls=True, active_tools=["a2"])
    assert client.requests[0]["tool_choice"] == "none"
    assert client.requests[0]["parallel_tool_calls"] is True
    assert [t["id"] for t in client.requests[0]["tools"]] == ["a2"]


def test_a_call_to_a_tool_not_offered_is_unknown_tool() -> None:
    agent = create_agent({"id": "a", "tools": [echo("a1"), echo("a2")], "active_tools": ["a1"]})
    with pytest.raises(AgentError) as info:
        agent.run(input="go", client=RecordingClient([calls(call("c1", "a2"))]))
    assert info.value.code == "unknown_tool"
    assert str(info.value) == "Unknown tool 'a2' (not offered in this turn)"


def test_strict_incompatible_parameters_are_refused_at_definition() -> None:
    with pytest.raises(AgentDefinitionError) as info:
        echo("w", parameters={"type": "object", "properties": {"a": {}}, "required": ["a"]}, strict=True)
    assert info.value.code == "definition_invalid"
    assert "strict: parameters are not strict-compatible: the object schema at / must set" in str(info.value)
    with pytest.raises(AgentDefinitionError, match="names no tool of the agent: 'nope'"):
        create_agent({"id": "a", "tools": [echo("a1")], "active_tools": ["nope"]})
    with pytest.raises(AgentDefinitionError, match="toolChoice must be"):
        create_agent({"id": "a", "tool_choice": "sometimes"})
    agent = create_agent({"id": "a", "tools": [echo("a1")]})
    with pytest.raises(AgentDefinitionError, match="Invalid run options: toolChoice names no tool"):
        agent.run(input="go", client=RecordingClient([]), tool_choice={"tool_id": "nope"})


def test_the_timeout_bounds_on_tool_called() -> None:
    seen: Dict[str, bool] = {}

    async def slow_hook(tool_input: Any, runtime: Any) -> Any:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise
        return "late"

    # The deadline is 1 s away so that the hook has begun (and can see CancelledError) even
    # on a loaded machine; the run still returns long before the hook's 5 s sleep.
    ask = define_tool(AgentTool(id="ask", on_tool_called=slow_hook, timeout_ms=1000))
    agent = create_agent({"id": "a", "tools": [ask]})

    async def main() -> None:
        started = time.monotonic()
        with pytest.raises(AgentError) as info:
            await agent.run_async(input="go", client=RecordingClient([calls(call("c1", "ask"))]))
        assert time.monotonic() - started < 2.5
        assert info.value.code == "tool_timeout"
        assert str(info.value) == "Tool ask timed out after 1000ms"
        deadline = time.monotonic() + 10  # the hook's task sees its cancellation shortly after
        while "cancelled" not in seen and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert seen.get("cancelled") is True


def test_bad_control_values_are_clear_errors() -> None:
    with pytest.raises(AgentDefinitionError, match="inputExamples must be a list of argument objects"):
        echo("w", input_examples={"city": "Paris"})
    with pytest.raises(AgentDefinitionError, match=r"inputExamples\[0\] must be an object of arguments, got 3"):
        echo("w", input_examples=[3])
    agent = create_agent({"id": "a", "tools": [echo("ab")]})
    with pytest.raises(AgentDefinitionError, match="active_tools must be a list of tool ids"):
        agent.run(input="go", client=RecordingClient([]), active_tools="ab")


def test_control_values_are_read_like_every_host_value() -> None:
    cycle: Dict[str, Any] = {"city": "Paris"}
    cycle["self"] = cycle
    with pytest.raises(ValueError, match="^input_examples: value contains a cycle$"):
        echo("w", input_examples=[cycle])
    with pytest.raises(ValueError, match="^tool_choice: value contains a cycle$"):
        create_agent({"id": "a", "tool_choice": cycle})
    agent = create_agent({"id": "a", "tools": [echo("a1")]})
    with pytest.raises(ValueError, match="^tool_choice: value contains a cycle$"):
        agent.run(input="go", client=RecordingClient([]), tool_choice=cycle)
    # A per-turn answer is the turn function's error.
    per_turn = create_agent({"id": "a", "tools": [echo("a1")], "active_tools": lambda turn: [cycle]})
    with pytest.raises(AgentError, match="^activeTools: value contains a cycle$"):
        per_turn.run(input="go", client=RecordingClient([{"text": "x"}]))


def test_a_slow_event_schema_cannot_hold_the_deadline() -> None:
    checked = []

    async def slow_check(value: Any) -> Any:
        checked.append(value)
        await asyncio.sleep(10)
        return value

    async def work(tool_input: Any, runtime: Any) -> Any:
        runtime.emit_progress("a")
        runtime.emit_progress("b")
        await asyncio.sleep(20)
        return "late"

    # The deadline is 1.5 s away so that the tool has begun and "a" is being checked when it
    # comes, even on a loaded machine; the 10 s check is far past the bound below.
    slow = define_tool(AgentTool(id="slow", execute=work, event_schema=slow_check, timeout_ms=1500,
                                 on_error="return-to-model"))
    agent = create_agent({"id": "a", "tools": [slow]})

    async def main() -> None:
        started = time.monotonic()
        result = await agent.run_async(input="go", client=RecordingClient([calls(call("c1", "slow")), {"text": "ok"}]))
        assert time.monotonic() - started < 3.0
        tool_result = result.step_results[0]["tool_results"][0]
        assert tool_result["error"] == "Tool slow timed out after 1500ms"
        assert tool_result["preliminary_results"] == []

    asyncio.run(main())
    # "b" was still queued at the deadline: never checked.
    assert checked == ["a"]


def test_every_entry_point_takes_the_same_overrides_and_refuses_unknown_ones() -> None:
    agent = create_agent({"id": "a", "model": "base"})
    overrides: Dict[str, Any] = {"model": "m2", "temperature": 0.5, "max_steps": 2}
    client = RecordingClient([{"text": "ok"}])
    agent.run(input="x", client=client, **overrides)
    assert client.requests[0]["model"] == "m2"
    assert client.requests[0]["temperature"] == 0.5
    streamed = RecordingClient([{"text": "ok"}])
    assert agent.stream(input="x", client=streamed, **overrides).text() == "ok"
    assert streamed.requests[0]["model"] == "m2"
    for entry in (agent.run, agent.stream):
        with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'max_step'"):
            entry(input="x", client=RecordingClient([]), max_step=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^recover\(\) got an unexpected keyword argument 'temp'"):
        agent.recover("r1", client=RecordingClient([]), temp=1)  # type: ignore[call-arg]
