"""An agent as a tool of another (docs/behaviour.md §18): the nested run's output and usage,
its events with their parent call, and a nested approval decided on the outer continue from
the stored state, sync and async."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List

import pytest
from conftest import RecordingClient, call, calls

from phaseo_agent import AgentContinueError, AgentDefinitionError, AgentTool, create_agent, define_tool


def researcher() -> Any:
    lookup = define_tool(AgentTool(id="lookup", execute=lambda tool_input, runtime: "fact", require_approval=True))
    return create_agent({"id": "researcher", "tools": [lookup]})


def test_a_nested_approval_pauses_the_outer_run_and_continues_from_its_json() -> None:
    boss = create_agent({"id": "boss", "tools": [researcher().as_tool(id="research", description="Researches")]})
    client = RecordingClient([calls(call("c1", "research", input="topic")), calls(call("n1", "lookup")),
                              {"text": "inner done", "usage": {"input_tokens": 7, "output_tokens": 1}},
                              {"text": "All done."}])
    paused = boss.run(input="study", client=client)
    assert paused.status == "waiting_for_human"
    assert [(p["call"]["id"], p["call"]["name"], p["kind"]) for p in paused.pause["pending_tool_calls"]] \
        == [("c1/n1", "lookup", "approval")]
    assert client.requests[0]["tools"][0]["parameters"] == {
        "type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}

    with pytest.raises(AgentContinueError, match="Unknown tool call c1/n9"):
        boss.continue_run(state=paused.to_json(), client=client, approvals=["c1/n9"])
    events: List[Dict[str, Any]] = []
    done = boss.continue_run(state=paused.to_json(), client=client, approvals=["c1/n1"], on_event=events.append)
    assert done.status == "completed" and done.output == "All done."
    assert done.usage.input_tokens == 7
    nested = [e for e in events if e.get("parent_tool_call_id") == "c1"]
    assert [e["type"] for e in nested][-1] == "run.completed"
    outer_last = [m for m in client.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert (outer_last["tool_call_id"], outer_last["content"]) == ("c1", "inner done")


def test_async_runs_and_a_failed_nested_run_is_a_tool_error() -> None:
    def broken(tool_input: Any, runtime: Any) -> Any:
        raise RuntimeError("index offline")

    nested = create_agent({"id": "researcher", "tools": [define_tool(AgentTool(id="lookup", execute=broken))]})
    boss = create_agent({"id": "boss", "tools": [nested.as_tool()],
                         "tool_execution": {"on_error": "return-to-model"}})
    client = RecordingClient([calls(call("c1", "researcher", input="q")), calls(call("n1", "lookup")),
                              {"text": "Sorry."}])
    done = asyncio.run(boss.run_async(input="go", client=client))
    assert done.output == "Sorry."
    last = client.requests[-1]["messages"][-1]
    assert last["tool_call_id"] == "c1" and last["is_error"] is True
    assert json.loads(last["content"]) == {"error": "index offline"}


def test_nesting_deeper_than_eight_is_refused() -> None:
    agent = create_agent({"id": "a0"})
    for level in range(1, 9):
        agent = create_agent({"id": f"a{level}", "tools": [agent.as_tool()]})
    with pytest.raises(AgentDefinitionError, match="agents nest 9 levels deep as tools, more than 8"):
        agent.as_tool()


def test_a_nested_agent_with_its_own_client_leaves_the_outer_script_alone() -> None:
    nested = create_agent({"id": "researcher"})
    own = RecordingClient([{"text": "from the nested client"}])
    boss = create_agent({"id": "boss", "tools": [nested.as_tool(client=own)]})
    outer = RecordingClient([calls(call("c1", "researcher", input="q")), {"text": "Done."}])
    done = boss.run(input="go", client=outer)
    assert done.output == "Done."
    assert len(own.requests) == 1 and len(outer.requests) == 2
    assert outer.requests[1]["messages"][-1]["content"] == "from the nested client"
