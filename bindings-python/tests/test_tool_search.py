"""Deferred tools and the built-in ``tool_search`` (docs/behaviour.md §17) through the
public API: ``AgentTool(defer_loading=True)`` and an MCP server's ``defer_loading=True``."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List

import pytest
from conftest import RecordingClient, call, calls

from phaseo_agent import AgentDefinitionError, AgentTool, create_agent, define_tool


def offered(request: Dict[str, Any]) -> List[str]:
    return [t["id"] for t in request["tools"]]


def tool_message(request: Dict[str, Any], call_id: str) -> Any:
    """The request's tool message answering ``call_id``, its content parsed."""
    return json.loads(next(m["content"] for m in request["messages"]
                           if m["role"] == "tool" and m["tool_call_id"] == call_id))


def weather_tools(ran: List[str]) -> List[Any]:
    """An always-loaded tool, one needing approval, and two deferred tools."""

    def get_weather(tool_input: Dict[str, Any], runtime: Any) -> str:
        ran.append(f"get_weather:{tool_input['city']}")
        return "sunny"

    def open_gate(tool_input: Dict[str, Any], runtime: Any) -> str:
        ran.append("gate")
        return "opened"

    return [
        define_tool(AgentTool(id="clock", execute=lambda i, rt: "noon", description="The time")),
        define_tool(AgentTool(id="gate", execute=open_gate,
                              description="Opens the gate", require_approval=True)),
        define_tool(AgentTool(id="get_weather", execute=get_weather, description="Current weather of a city",
                              parameters={"type": "object", "properties": {"city": {"type": "string"}}},
                              defer_loading=True)),
        define_tool(AgentTool(id="stock_price", execute=lambda i, rt: 42, description="Price of a share",
                              defer_loading=True)),
    ]


def test_a_deferred_tool_is_offered_only_after_tool_search_finds_it() -> None:
    ran: List[str] = []
    agent = create_agent({"id": "assistant", "tools": weather_tools(ran)})
    client = RecordingClient([
        calls(call("c1", "tool_search", query="weather in a city")),
        calls(call("c2", "get_weather", city="Oslo")),
        {"text": "Sunny in Oslo."},
    ])

    done = agent.run(input="weather?", client=client)

    assert done.status == "completed" and done.output == "Sunny in Oslo."
    assert ran == ["get_weather:Oslo"]
    # tool_search follows the always-loaded tools; a loaded tool joins at the end.
    assert offered(client.requests[0]) == ["clock", "gate", "tool_search"]
    assert offered(client.requests[1]) == ["clock", "gate", "tool_search", "get_weather"]
    assert tool_message(client.requests[1], "c1") == {
        "tools": [{"id": "get_weather", "description": "Current weather of a city"}]}
    assert offered(client.requests[2]) == ["clock", "gate", "tool_search", "get_weather"]
    assert json.loads(done.to_json())["run"]["loadedTools"] == ["get_weather"]


def test_loaded_tools_are_in_the_state_and_a_continue_keeps_offering_them() -> None:
    ran: List[str] = []
    agent = create_agent({"id": "assistant", "tools": weather_tools(ran)})
    client = RecordingClient([
        calls(call("c1", "tool_search", query="share price"), call("c2", "gate")),
        calls(call("c3", "stock_price")),
        {"text": "42."},
    ])

    paused = agent.run(input="price?", client=client)
    assert paused.status == "waiting_for_human"
    saved = paused.to_json()
    assert json.loads(saved)["run"]["loadedTools"] == ["stock_price"]

    # A fresh agent (as in another process) continues from the saved JSON.
    resumed = create_agent({"id": "assistant", "tools": weather_tools(ran)})
    done = resumed.continue_run(state=saved, client=client, approvals=["c2"])

    assert done.status == "completed" and done.output == "42."
    assert ran == ["gate"]
    assert offered(client.requests[1]) == ["clock", "gate", "tool_search", "stock_price"]
    assert tool_message(client.requests[2], "c3") == 42


def test_the_async_api_loads_deferred_tools_too() -> None:
    ran: List[str] = []
    agent = create_agent({"id": "assistant", "tools": weather_tools(ran)})
    client = RecordingClient([
        calls(call("c1", "tool_search", query="weather", limit=1)),
        calls(call("c2", "get_weather", city="Rome")),
        {"text": "Sunny."},
    ])

    done = asyncio.run(agent.run_async(input="weather?", client=client))

    assert done.status == "completed" and ran == ["get_weather:Rome"]
    assert offered(client.requests[1])[-1] == "get_weather"


def test_an_agent_with_deferred_tools_cannot_define_its_own_tool_search() -> None:
    mine = define_tool(AgentTool(id="tool_search", execute=lambda i, rt: 1))
    later = define_tool(AgentTool(id="later", execute=lambda i, rt: 2, defer_loading=True))
    with pytest.raises(AgentDefinitionError, match="'tool_search'") as refused:
        create_agent({"id": "assistant", "tools": [mine, later]})
    assert refused.value.code == "definition_invalid"


def test_defer_loading_must_be_a_bool() -> None:
    with pytest.raises(AgentDefinitionError, match="defer_loading must be True or False, got 'yes'"):
        define_tool(AgentTool(id="t", execute=lambda i, rt: 1, defer_loading="yes"))  # type: ignore[arg-type]
