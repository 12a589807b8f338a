"""The product's Python names and shapes (what a porter types) work as documented."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from phaseo_agent import (
    AgentCancelledError,
    AgentContinueError,
    AgentDefinition,
    AgentDefinitionError,
    AgentError,
    AgentHumanReviewRequest,
    AgentMaxStepsError,
    AgentModelRetry,
    AgentModelRetryConfig,
    AgentRuntimeContext,
    AgentSchemaValidationError,
    AgentStateError,
    AgentTool,
    AgentToolCall,
    AgentToolTimeoutError,
    AgentUnknownToolError,
    GatewayAgentClient,
    HttpModelClient,
    ScriptedClient,
    ToolRuntime,
    create_agent,
    create_gateway_agent_client,
    define_tool,
    tool,
)
from test_http_clients import JSON, KEY, responses_reply, serve


def test_agent_tool_takes_the_products_positional_order() -> None:
    def add(tool_input: Dict[str, Any], runtime: AgentRuntimeContext) -> int:
        return int(tool_input["a"]) + int(tool_input["b"])

    positional = AgentTool("add", add, "Adds", {"type": "object"}, 5_000)
    assert (positional.execute, positional.description, positional.parameters, positional.timeout_ms) == (add, "Adds", {"type": "object"}, 5_000)
    defined = tool(positional)  # `tool` is the product's name of define_tool
    assert not defined.manual and defined.description == "Adds"
    assert define_tool(AgentTool("manual")).manual
    assert define_tool(AgentTool(id="kw", description="By keyword", execute=add)).description == "By keyword"
    agent = create_agent({"id": "calc", "tools": [defined]})
    client = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'}]}, {"text": "5"}])
    assert agent.run(input="2+3", client=client).step_results[0]["tool_results"][0]["result"] == 5


def test_tool_calls_read_as_attributes_and_items() -> None:
    seen: List[Any] = []

    def execute(tool_input: Any, runtime: AgentRuntimeContext) -> str:
        call = runtime.tool_call
        seen.append((call.id, call["id"], call.name, call["name"], call.input, isinstance(call, AgentToolCall)))
        assert call == {"id": "c1", "name": "t", "input": {"q": 1}}
        return "ok"

    def agent_approval(call: AgentToolCall, runtime: ToolRuntime) -> bool:
        seen.append(("agent", call.name, call["input"]))
        return False

    agent = create_agent({"id": "a", "tools": [define_tool(AgentTool("t", execute))], "require_approval": agent_approval})
    agent.run(input="go", client=ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": '{"q": 1}'}]}, {"text": "done"}]))
    assert seen == [("agent", "t", {"q": 1}), ("c1", "c1", "t", "t", {"q": 1}, True)]
    assert AgentRuntimeContext is ToolRuntime
    assert AgentToolCall("x", "y", 1).id == "x"


def test_agent_definition_dataclass_preset_and_parse_output() -> None:
    requests: List[Dict[str, Any]] = []

    def client(request: Dict[str, Any]) -> Dict[str, Any]:
        requests.append(request)
        return {"text": '{"total": 5}'}

    definition = AgentDefinition(id="parsed", preset="fast", parse_output=lambda text: json.loads(text)["total"],
                                 output_schema={"type": "integer"}, max_steps=3)
    result = create_agent(definition).run(input="go", client=client)
    assert requests[0]["model"] == "@fast"
    assert result.output == 5
    assert create_agent({"id": "m", "model": "explicit", "preset": "ignored"}).run(input="go", client=client).output == '{"total": 5}'
    assert requests[1]["model"] == "explicit"
    bad = create_agent(AgentDefinition(id="bad", parse_output=lambda text: json.loads(text)["missing"]))
    with pytest.raises(AgentSchemaValidationError) as err:
        bad.run(input="go", client=client)
    assert err.value.code == "agent_output_invalid"
    with pytest.raises(AgentDefinitionError):
        create_agent({"id": "x", "unknown_key": 1})
    with pytest.raises(AgentDefinitionError) as refused:
        create_agent({"id": "y", "parse_output": "json"})
    assert str(refused.value) == "Invalid agent definition: parse_output must be a function (text) => output"


def test_retry_config_alias_and_item_stream() -> None:
    assert AgentModelRetryConfig is AgentModelRetry
    agent = create_agent({"id": "r", "model_retry": AgentModelRetryConfig(max_retries=1, backoff_ms=0)})
    stream = agent.stream(input="go", client=ScriptedClient([{"fail": "flaky"}, {"text": "ok"}]))
    assert [i["type"] for i in stream.item_stream()] == ["message", "output"]
    assert stream.result().step_results and stream.text() == "ok"


def test_custom_stop_conditions_see_the_products_keys() -> None:
    states: List[Dict[str, Any]] = []

    def stop(state: Dict[str, Any]) -> bool:
        states.append({"calls": [(c.id, c.name) for c in state["tool_calls"]], "finish": state["finish_reason"],
                       "tokens": state["usage"].total_tokens, "steps": state["step_count"]})
        return False

    agent = create_agent({"id": "s", "stop_when": stop, "tools": [define_tool(AgentTool("t", lambda i, rt: 1))]})
    agent.run(input="go", client=ScriptedClient([
        {"tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}], "usage": {"input_tokens": 2, "output_tokens": 1}},
        {"text": "done"}]))
    assert states == [{"calls": [("c1", "t")], "finish": "tool_calls", "tokens": 3, "steps": 1},
                      {"calls": [], "finish": "stop", "tokens": 3, "steps": 2}]


def test_errors_are_also_the_builtins_the_product_raised() -> None:
    assert issubclass(AgentSchemaValidationError, ValueError) and issubclass(AgentUnknownToolError, ValueError)
    assert issubclass(AgentContinueError, ValueError) and issubclass(AgentDefinitionError, ValueError)
    assert issubclass(AgentStateError, ValueError)
    assert issubclass(AgentToolTimeoutError, TimeoutError) and issubclass(AgentMaxStepsError, RuntimeError)
    assert issubclass(AgentCancelledError, InterruptedError)
    agent = create_agent({"id": "e", "max_steps": 1, "tools": [define_tool(AgentTool("t", lambda i, rt: 1))]})
    looping = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "t", "arguments": "{}"}]}])
    with pytest.raises(RuntimeError, match=r"Max steps exceeded \(1\)") as err:
        agent.run(input="go", client=looping)
    assert isinstance(err.value, AgentError) and err.value.code == "max_steps" and err.value.result is not None
    with pytest.raises(ValueError, match="Unknown tool|unknown"):
        agent.run(input="go", client=ScriptedClient([{"tool_calls": [{"id": "c1", "name": "nope", "arguments": "{}"}]}]))


def test_human_review_may_return_a_request_object() -> None:
    class Plain:
        reason = "check the answer"
        payload = {"draft": True}

    seen: List[Any] = []

    def review(ctx: Any, answer: Any) -> Any:
        # The context reads as attributes too, as in the product.
        seen.append((ctx.response.message.content, ctx.messages[-1].content, ctx.step_index))
        return answer if ctx["is_final"] else None

    for answer in (AgentHumanReviewRequest("check the answer", {"draft": True}), Plain()):
        agent = create_agent({"id": "h", "human_review": lambda ctx, answer=answer: review(ctx, answer)})
        paused = agent.run(input="go", client=ScriptedClient([{"text": "draft"}]))
        assert paused.status == "waiting_for_human"
        assert paused.pause is not None
        assert (paused.pause["reason"], paused.pause["payload"]) == ("check the answer", {"draft": True})
    assert seen == [("draft", "draft", 0)] * 2


def test_next_turn_params_may_list_tool_objects() -> None:
    search = define_tool(AgentTool("search", lambda i, rt: "found"))
    other = AgentTool("other", lambda i, rt: "x")
    requests: List[Dict[str, Any]] = []
    # "dyn" is offered next turn: a call to a tool not offered is unknown_tool (docs/behaviour.md §12).
    picker = define_tool(AgentTool("pick", lambda i, rt: "picked", next_turn_params={"tools": [search, other, "pick", "dyn"]}))
    dynamic = define_tool(AgentTool("dyn", lambda i, rt: "d", next_turn_params=lambda i, rt: {"tools": [search]}))
    agent = create_agent({"id": "n", "tools": [search, define_tool(other), picker, dynamic]})
    answers = [{"tool_calls": [{"id": "c1", "name": "pick", "arguments": "{}"}]},
               {"tool_calls": [{"id": "c2", "name": "dyn", "arguments": "{}"}]}, {"text": "done"}, ]

    def client(request: Dict[str, Any]) -> Dict[str, Any]:
        requests.append(request)
        return answers.pop(0)

    agent.run(input="go", client=client)
    assert [t["id"] for t in requests[1]["tools"]] == ["search", "other", "pick", "dyn"]
    assert [t["id"] for t in requests[2]["tools"]] == ["search"]


def test_gateway_client_takes_the_products_options() -> None:
    assert GatewayAgentClient is HttpModelClient
    for server in serve([responses_reply([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}])]):
        client = create_gateway_agent_client(
            client_options={"api_key": KEY, "base_url": server.url},
            preset="support", provider={"order": ["acme"]}, reasoning={"effort": "low"}, temperature=0.7,
            max_output_tokens=64, parallel_tool_calls=False, metadata={"team": "ops"}, user="u-1",
            response_format={"type": "text"}, tool_choice="auto",
            request_options={"store": True, "user": "overridden", "input": "never", "service_tier": "flex"},
        )
        assert isinstance(client, GatewayAgentClient)
        create_agent({"id": "gw", "temperature": 0.1}).run(input="hi", client=client)
        request = server.requests[0]
        body = request["body"]
        assert request["headers"]["authorization"] == f"Bearer {KEY}"
        assert body["model"] == "@support"
        assert body["temperature"] == 0.1, "the agent's own value wins"
        assert (body["max_output_tokens"], body["parallel_tool_calls"], body["tool_choice"]) == (64, False, "auto")
        assert (body["provider"], body["reasoning"], body["user"]) == ({"order": ["acme"]}, {"effort": "low"}, "u-1")
        assert body["response_format"] == {"type": "text"}
        assert body["metadata"] == {"phaseo_agent_id": "gw", "team": "ops"}
        assert (body["store"], body["service_tier"]) == (True, "flex")
        assert body["input"] == [{"type": "message", "role": "user", "content": "hi"}]
    with pytest.raises(AgentDefinitionError, match=r"client_options\.fetch_impl is not supported: requests are made by the native core"):
        create_gateway_agent_client(client_options={"fetch_impl": True})
    with pytest.raises(AgentDefinitionError, match=r"unknown client_options option 'retries' \(known: api_key, "):
        create_gateway_agent_client(client_options={"retries": 3})
    with pytest.raises(AgentDefinitionError, match=r"client \(an SDK instance\) is not supported: pass client_options instead"):
        create_gateway_agent_client(client=object())
    with pytest.raises(AgentDefinitionError, match=r"timeout_ms must be a positive number of milliseconds, got -5"):
        create_gateway_agent_client(timeout_ms=-5)
    assert JSON


def test_a_product_style_client_returning_dataclasses_with_parsed_input() -> None:
    from dataclasses import dataclass, field

    @dataclass
    class Usage:
        input_tokens: int = 0
        output_tokens: int = 0
        cost: float = 0.0

    @dataclass
    class Message:
        role: str
        content: str
        tool_calls: List[AgentToolCall] = field(default_factory=list)
        is_error: bool = False

    @dataclass
    class Response:
        message: Message
        usage: Usage = field(default_factory=Usage)
        finish_reason: Any = None
        warnings: List[str] = field(default_factory=list)

    answers = [Response(Message("assistant", "", [AgentToolCall("c1", "t", {"q": [1, 2]})]), Usage(3, 1, 0.5)),
               Response(Message("assistant", "done"))]

    class Client:
        def generate(self, request: Dict[str, Any]) -> Response:
            return answers.pop(0)

    agent = create_agent({"id": "p", "tools": [define_tool(AgentTool("t", lambda i, rt: i))]})
    result = agent.run(input="go", client=Client())
    assert result.output == "done"
    assert result.step_results[0]["tool_results"][0]["result"] == {"q": [1, 2]}
    assert (result.usage.total_tokens, result.usage.cost) == (4, 0.5)
