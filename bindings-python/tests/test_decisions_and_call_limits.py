"""Approvals with an edited input, responses instead of running, call budgets, retries and
the runtime's attempt and idempotency key (docs/behaviour.md §14, §15)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List

import pytest
from conftest import RecordingClient, call, calls

from phaseo_agent import (AgentContinueError, AgentDefinitionError, AgentTool, AgentToolDecision,
                          AgentToolExecutionConfig, AgentToolOutput, ToolRetry, create_agent, define_tool)

DEPLOY_PARAMETERS = {
    "type": "object",
    "properties": {"environment": {"type": "string", "enum": ["staging", "production"]}},
    "required": ["environment"],
    "additionalProperties": False,
}


def deploy_agent(ran: List[Any]) -> Any:
    def deploy(tool_input: Dict[str, Any], runtime: Any) -> Dict[str, Any]:
        ran.append(tool_input)
        return {"deployed": tool_input["environment"]}

    tool = define_tool(AgentTool(id="deploy", execute=deploy, parameters=DEPLOY_PARAMETERS, require_approval=True))
    return create_agent({"id": "deployer", "tools": [tool]})


def tool_messages(request: Dict[str, Any]) -> List[Any]:
    return [(m["tool_call_id"], json.loads(m["content"])) for m in request["messages"] if m["role"] == "tool"]


def test_an_approval_with_an_edited_input_runs_the_tool_with_it() -> None:
    ran: List[Any] = []
    agent = deploy_agent(ran)
    client = RecordingClient([calls(call("c1", "deploy", environment="production")), {"text": "Deployed to staging."}])
    events: List[Dict[str, Any]] = []

    paused = agent.run(input="deploy it", client=client)
    done = agent.continue_run(state=paused.to_json(), client=client, on_event=events.append,
                              approvals=[AgentToolDecision("c1", edited_input={"environment": "staging"})])

    assert done.status == "completed" and done.output == "Deployed to staging."
    assert ran == [{"environment": "staging"}]
    started = next(e for e in events if e["type"] == "tool.started")
    assert started["input_edited"] is True
    # The conversation shows what ran: the assistant's call carries the edited arguments.
    assistant = [m for m in client.requests[1]["messages"] if m.get("tool_calls")][-1]
    assert [(c["id"], c["input"]) for c in assistant["tool_calls"]] == [("c1", {"environment": "staging"})]
    assert tool_messages(client.requests[1]) == [("c1", {"deployed": "staging"})]
    result = done.to_dict()["stepResults"][0]["toolResults"][0]
    assert result["input"] == {"environment": "staging"}
    assert result["originalInput"] == {"environment": "production"}


def test_an_invalid_edited_input_is_refused_and_the_state_stays_usable() -> None:
    ran: List[Any] = []
    agent = deploy_agent(ran)
    client = RecordingClient([calls(call("c1", "deploy", environment="production")), {"text": "Deployed."}])
    paused = agent.run(input="deploy it", client=client)
    saved = paused.to_json()

    with pytest.raises(AgentContinueError, match="Edited input for tool call c1 is invalid") as refused:
        agent.continue_run(state=saved, client=client, approvals=[{"tool_call_id": "c1", "edited_input": {"environment": "moon"}}])
    assert refused.value.code == "continue_invalid"
    assert ran == []

    done = agent.continue_run(state=saved, client=client, approvals=["c1"])
    assert done.status == "completed" and ran == [{"environment": "production"}]


def test_a_response_answers_in_place_of_the_tool_which_never_runs() -> None:
    ran: List[Any] = []
    agent = deploy_agent(ran)
    client = RecordingClient([calls(call("c1", "deploy", environment="production")), {"text": "Skipped."}])
    events: List[Dict[str, Any]] = []
    paused = agent.run(input="deploy it", client=client)

    done = agent.continue_run(state=paused, client=client, on_event=events.append,
                              responses=[AgentToolOutput("c1", {"deployed": "by hand"})])

    assert done.status == "completed" and ran == []
    assert tool_messages(client.requests[1]) == [("c1", {"deployed": "by hand"})]
    tool_events = [e for e in events if e["type"].startswith("tool.")]
    assert [e["type"] for e in tool_events] == ["tool.completed"]
    assert tool_events[0]["responded_by_human"] is True


def test_a_response_for_a_call_not_waiting_for_approval_is_refused() -> None:
    lookup = define_tool(AgentTool(id="lookup", execute=False))
    agent = create_agent({"id": "desk", "tools": [lookup]})
    client = RecordingClient([calls(call("c1", "lookup"))])
    paused = agent.run(input="look", client=client)

    with pytest.raises(AgentContinueError, match="Tool call c1 is not waiting for approval"):
        agent.continue_run(state=paused, client=client, responses=[{"tool_call_id": "c1", "output": 1}])


def test_a_tool_beyond_its_max_calls_is_refused_and_the_model_sees_why() -> None:
    ran: List[str] = []

    def ping(tool_input: Any, runtime: Any) -> Dict[str, bool]:
        ran.append(runtime.tool_call.id)
        return {"pong": True}

    agent = create_agent({"id": "pinger", "tools": [define_tool(AgentTool(id="ping", execute=ping, max_calls=1))]})
    client = RecordingClient([calls(call("c1", "ping"), call("c2", "ping")), {"text": "Done."}])
    events: List[Dict[str, Any]] = []

    done = agent.run(input="ping twice", client=client, on_event=events.append)

    assert done.status == "completed" and ran == ["c1"]
    assert tool_messages(client.requests[1]) == [
        ("c1", {"pong": True}), ("c2", {"error": "Tool ping may be called at most 1 times in a run"})]
    assert [e["type"] for e in events if e.get("tool_call_id") == "c2"] == ["tool.failed"]


@pytest.mark.parametrize("fields, message", [
    ({"max_calls": 0}, "maxCalls must be a whole number of at least 1, got 0"),
    ({"max_calls": 1.5}, "maxCalls must be a whole number of at least 1, got 1.5"),
    ({"retry": ToolRetry(max_attempts=0)}, "retry.maxAttempts must be a whole number of at least 1, got 0"),
    ({"retry": ToolRetry(max_attempts=2, backoff_ms=-1)}, "retry.backoffMs must be a non-negative number"),
    ({"retry": {"attempts": 2}}, "retry needs max_attempts"),
])
def test_bad_limits_are_refused_with_the_core_message(fields: Dict[str, Any], message: str) -> None:
    with pytest.raises(AgentDefinitionError, match=message) as refused:
        define_tool(AgentTool(id="t", execute=lambda i, rt: None, **fields))
    assert refused.value.code == "definition_invalid"
    assert "Invalid definition of tool 't'" in refused.value.message


def test_a_run_level_max_tool_calls_overrides_the_agent() -> None:
    ran: List[str] = []
    tool = define_tool(AgentTool(id="ping", execute=lambda i, rt: ran.append(rt.tool_call.id) or {"pong": True}))
    agent = create_agent({"id": "pinger", "tools": [tool], "tool_execution": AgentToolExecutionConfig(max_tool_calls=5)})
    client = RecordingClient([calls(call("c1", "ping"), call("c2", "ping"), call("c3", "ping")), {"text": "Done."}])

    done = agent.run(input="ping", client=client, tool_execution={"max_tool_calls": 2})

    assert done.status == "completed" and ran == ["c1", "c2"]
    assert tool_messages(client.requests[1])[2] == ("c3", {"error": "A run may make at most 2 tool calls"})


def test_max_tool_calls_below_one_is_refused() -> None:
    with pytest.raises(AgentDefinitionError, match="toolExecution.maxToolCalls must be a whole number of at least 1, got 0"):
        create_agent({"id": "a", "tool_execution": {"max_tool_calls": 0}})


def test_a_retried_call_sees_its_attempts_and_one_idempotency_key() -> None:
    seen: List[Any] = []

    async def charge(tool_input: Any, runtime: Any) -> str:
        seen.append((runtime.attempt, runtime.idempotency_key))
        if runtime.attempt < 3:
            raise RuntimeError("gateway busy")
        return "charged"

    tool = define_tool(AgentTool(id="charge", execute=charge, retry=ToolRetry(max_attempts=3, backoff_ms=1)))
    agent = create_agent({"id": "till", "tools": [tool]})
    client = RecordingClient([calls(call("c1", "charge")), {"text": "Paid."}])
    events: List[Dict[str, Any]] = []

    done = asyncio.run(agent.run_async(input="charge", client=client, on_event=events.append))

    assert done.status == "completed" and done.output == "Paid."
    run_id = done.to_dict()["run"]["id"]
    assert seen == [(1, f"{run_id}:c1"), (2, f"{run_id}:c1"), (3, f"{run_id}:c1")]
    tool_events = [e for e in events if e["type"].startswith("tool.")]
    assert [e["type"] for e in tool_events] == ["tool.started", "tool.retrying", "tool.retrying", "tool.completed"]
    retrying = [e for e in tool_events if e["type"] == "tool.retrying"]
    assert [(e["tool_call_id"], e["tool_name"], e["attempt"]) for e in retrying] == [("c1", "charge", 2), ("c1", "charge", 3)]
    assert all("gateway busy" in e["error"] for e in retrying)
