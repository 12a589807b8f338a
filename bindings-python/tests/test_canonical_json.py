"""Numbers in the SDK's JSON text are written as JavaScript writes them (docs/behaviour.md §7), also
where the Python binding hands out text of its own (a stream's ``text()``)."""

from __future__ import annotations

import json
from typing import Any, Dict

from conftest import RecordingClient, call, calls

from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool

ANSWER = '{"small":1e-6,"big":1E21,"whole":2.0,"name":"Zoë","tiny":1.5e-7}'
CANONICAL = '{"small":0.000001,"big":1e+21,"whole":2,"name":"Zoë","tiny":1.5e-7}'


def test_stream_text_of_a_structured_output_is_the_canonical_json() -> None:
    agent = create_agent({"id": "a", "output_schema": {"type": "object"}})
    stream = agent.stream(input="go", client=ScriptedClient([{"text": ANSWER}]))
    assert stream.text() == CANONICAL
    result = stream.result()
    assert result.output == {"small": 1e-6, "big": 1e21, "whole": 2, "name": "Zoë", "tiny": 1.5e-7}
    assert result.output_text() == CANONICAL
    assert '"result":' + CANONICAL in result.to_json()


def test_tool_messages_and_state_write_javascript_numbers() -> None:
    def measure(tool_input: Dict[str, Any], runtime: Any) -> Dict[str, Any]:
        runtime.set_context({"limit": 1e21})
        return {"small": 1e-6, "big": 1e21, "neg": -1e-6, "third": 0.1 + 0.2}

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool(id="measure", execute=measure))]})
    client = RecordingClient([calls(call("c1", "measure")), {"text": "ok"}])
    result = agent.run(input="go", client=client)
    tool_message = [m for m in client.requests[1]["messages"] if m["role"] == "tool"][0]
    assert tool_message["content"] == '{"small":0.000001,"big":1e+21,"neg":-0.000001,"third":0.30000000000000004}'
    state = result.to_json()
    assert '"context":{"limit":1e+21}' in state
    assert json.loads(state)["run"]["context"] == {"limit": 1e21}
