"""Pause and continue, streaming, validators, stop conditions and review."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pydantic
import pytest
from conftest import RecordingClient, call, calls

from phaseo_agent import (
    AgentContinueError,
    AgentSchemaValidationError,
    AgentTool,
    AgentToolDecision,
    AgentToolOutput,
    RunResult,
    ScriptedClient,
    TestClient,
    ToolRuntime,
    create_agent,
    define_tool,
    json_schema_validator,
    max_cost,
    step_count_is,
)


def desk() -> Any:
    refund = define_tool(AgentTool(
        id="refund", execute=lambda i, rt: {"refunded": i["amount"]},
        require_approval=lambda i, rt: i["amount"] > 100))
    escalate = define_tool(AgentTool(id="escalate", on_response_received=lambda out, rt: {"answer": out}))
    return create_agent({"id": "desk", "tools": [refund, escalate]})


def test_pause_store_as_json_and_continue() -> None:
    client = RecordingClient([calls(call("c1", "refund", amount=150), call("c2", "escalate"), call("c3", "refund", amount=5)),
                              {"text": "all done"}])
    agent = desk()
    paused = agent.run(input="help", client=client)
    assert paused.status == "waiting_for_human"
    assert paused.pause is not None and paused.pause["kind"] == "tool_approval"
    assert [(p.tool_call_id, p.kind) for p in paused.pending] == [("c1", "approval"), ("c2", "manual")]
    text = paused.to_json()
    with pytest.raises(AgentContinueError, match="Missing output for tool call c2"):
        agent.continue_run(state=text, client=client, approvals=["c1"])
    assert paused.to_json() == text
    done = agent.continue_run(state=RunResult.from_json(text), client=client,
                              approvals=[AgentToolDecision("c1")], tool_outputs=[AgentToolOutput("c2", "on it")])
    assert done.status == "completed" and done.output == "all done"
    tool_messages = [(m["tool_call_id"], m["content"]) for m in client.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_messages == [("c1", '{"refunded":150}'), ("c2", '{"answer":"on it"}'), ("c3", '{"refunded":5}')]


def test_rejection_with_reason_and_async_continue() -> None:
    client = ScriptedClient([calls(call("c1", "refund", amount=500)), {"text": "refused"}])
    agent = desk()
    paused = agent.run(input="refund", client=client)

    async def main() -> Any:
        return await agent.continue_run_async(run=paused, client=client,
                                              rejections=[AgentToolDecision("c1", "too much")])

    done = asyncio.run(main())
    assert done.output == "refused"
    assert [m for m in done.messages if m["role"] == "tool"][0]["content"] == '{"error":"too much"}'


def test_stream_replays_to_every_consumer() -> None:
    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: 1))]})
    stream = agent.stream(input="go", client=ScriptedClient([calls(call("c1", "t")), {"text": "hello brave world"}]))
    result = stream.result()
    assert result.output == "hello brave world"
    assert "".join(stream.text_stream()) == "hello brave world"
    types = [e["type"] for e in stream.events()]
    assert types[0] == "run.started" and types[-1] == "run.completed"
    # The call's input as the model wrote it (docs/behaviour.md §16), then its run.
    assert [e["type"] for e in stream.tool_stream()] == ["tool.input_started", "tool.input_delta", "tool.started",
                                                         "tool.completed"]
    full = list(stream)
    assert full[-1]["type"] == "result" and full[-1]["result"].output == "hello brave world"
    items = [i["type"] for i in stream.items_stream()]
    assert "tool_call" in items and items[-1] == "output"

    async def consume() -> List[str]:
        return [e["type"] async for e in stream.events()]

    assert asyncio.run(consume()) == types
    assert stream.text() == "hello brave world"


def test_stream_cancel_and_await() -> None:
    async def slow(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
        await asyncio.sleep(5)
        return "late"

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=slow))]})

    async def main() -> Any:
        stream = agent.stream(input="go", client=ScriptedClient([calls(call("c1", "t"))]))
        await asyncio.sleep(0.05)
        stream.cancel("user left")
        return await stream

    result = asyncio.run(main())
    assert result.status == "cancelled"
    assert result.error == {"code": "cancelled", "message": "user left"}


class Order(pydantic.BaseModel):
    item: str
    quantity: int


def test_pydantic_model_as_input_schema_supplies_parameters_and_instances() -> None:
    seen: List[Any] = []

    def place(order: Order, runtime: ToolRuntime) -> Dict[str, Any]:
        seen.append(order)
        return {"ok": True}

    tool = define_tool(AgentTool(id="place", execute=place, input_schema=Order))
    assert tool.parameters["properties"]["quantity"]["type"] == "integer"
    agent = create_agent({"id": "a", "tools": [tool]})
    agent.run(input="go", client=ScriptedClient([calls(call("c1", "place", item="pen", quantity=2)), {"text": "ok"}]))
    assert seen == [Order(item="pen", quantity=2)]
    with pytest.raises(AgentSchemaValidationError, match="Invalid tool input: "):
        agent.run(input="go", client=ScriptedClient([calls(call("c1", "place", item="pen", quantity="many"))]))


class SafeParser:
    def safe_parse(self, value: Any) -> Dict[str, Any]:
        if isinstance(value, dict) and value.get("ok"):
            return {"success": True, "data": {"ok": True, "checked": True}}
        return {"success": False, "error": "not ok"}


@pytest.mark.parametrize("validator", [
    SafeParser(),
    {"type": "object", "required": ["ok"], "properties": {"ok": {"const": True}}},
    json_schema_validator({"type": "object", "required": ["ok"]}),
    lambda value: value if value.get("ok") else (_ for _ in ()).throw(ValueError("not ok")),
])
def test_output_validators_of_every_kind(validator: Any) -> None:
    good = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: {"ok": True}, output_schema=validator))]})
    assert good.run(input="go", client=ScriptedClient([calls(call("c1", "t")), {"text": "fine"}])).status == "completed"
    bad = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: {"nope": 1}, output_schema=validator))]})
    with pytest.raises(AgentSchemaValidationError) as raised:
        bad.run(input="go", client=ScriptedClient([calls(call("c1", "t"))]))
    assert raised.value.target == "tool_output" and str(raised.value).startswith("Invalid tool output: ")


def test_stop_conditions_and_callable_predicate() -> None:
    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="t", execute=lambda i, rt: 1))]})
    script = [dict(calls(call("c1", "t")), usage={"input_tokens": 1, "output_tokens": 1}, cost=0.5),
              dict(calls(call("c2", "t")), cost=0.5), {"text": "never"}]
    result = agent.run(input="go", client=ScriptedClient(script), stop_when=[max_cost(1)])
    assert (result.status, result.stop_reason) == ("stopped", "max_cost:1")
    result = agent.run(input="go", client=ScriptedClient(script), stop_when=step_count_is(1))
    assert result.stop_reason == "step_count:1"
    result = agent.run(input="go", client=ScriptedClient(script),
                       stop_when=lambda state: "enough" if state["step_count"] >= 2 else False)
    assert result.stop_reason == "enough"


def test_human_review_pause_and_events_in_snake_case() -> None:
    events: List[Dict[str, Any]] = []
    agent = create_agent({"id": "a", "human_review": lambda ctx: {"reason": "check", "payload": {"n": 1}} if ctx["is_final"] else None})
    client = ScriptedClient([{"text": "draft"}, {"text": "final"}])
    paused = agent.run(input="write", client=client, on_event=events.append)
    assert paused.pause is not None and paused.pause["kind"] == "human_review" and paused.pause["payload"] == {"n": 1}
    assert events[-1]["type"] == "run.waiting_for_human" and "run_id" in events[-1] and "step_index" in events[-1]
    with pytest.raises(AgentContinueError, match="is waiting for human input"):
        agent.continue_run(state=paused, client=client)


def test_test_client_calls_every_tool_then_summarizes() -> None:
    tool = define_tool(AgentTool(id="echo", parameters={"type": "object", "properties": {"word": {"type": "string", "examples": ["hi"]}}},
                                 execute=lambda i, rt: i["word"]))
    result = create_agent({"id": "a", "tools": [tool]}).run(input="try", client=TestClient())
    assert result.status == "completed" and "echo: hi" in result.output
