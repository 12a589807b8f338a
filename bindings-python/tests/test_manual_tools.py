"""``execute=False`` (TypeScript's ``execute: false``) and ``execute=None`` make manual tools."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import RecordingClient, call, calls

from phaseo_agent import AgentDefinitionError, AgentTool, AgentToolOutput, create_agent, define_tool


@pytest.mark.parametrize("execute", [False, None])
def test_execute_false_or_none_is_a_manual_tool(execute: Any) -> None:
    tool = define_tool(AgentTool(id="lookup", parameters={"type": "object"}, execute=execute))
    agent = create_agent({"id": "desk", "tools": [tool]})
    client = RecordingClient([calls(call("c1", "lookup", number="INV-7")), {"text": "Invoice found."}])
    events: list[dict[str, Any]] = []

    paused = agent.run(input="find INV-7", client=client, on_event=events.append)

    assert paused.status == "waiting_for_human"
    assert paused.pause is not None and paused.pause["kind"] == "manual_tool"
    assert [(p.tool_call_id, p.kind, p.reason) for p in paused.pending] == [
        ("c1", "manual", "Tool requires manual execution")]
    assert not [e for e in events if e["type"].startswith("tool.")]
    done = agent.continue_run(state=paused.to_json(), client=client,
                              tool_outputs=[AgentToolOutput("c1", {"amount": 120})])
    assert done.status == "completed" and done.output == "Invoice found."
    tool_messages = [(m["tool_call_id"], m["content"]) for m in client.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_messages == [("c1", '{"amount":120}')]


@pytest.mark.parametrize("execute", [True, "run", 3])
def test_an_execute_that_is_not_callable_is_refused(execute: Any) -> None:
    with pytest.raises(AgentDefinitionError, match="Invalid definition of tool 'lookup': execute must be a callable, None or False") as info:
        define_tool(AgentTool(id="lookup", execute=execute))
    assert info.value.code == "definition_invalid"
