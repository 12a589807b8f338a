"""Host model clients that stream (docs/behaviour.md §6, §8): ``stream(request)`` as a generator or an
async generator, plain functions as clients, retries of a client failing mid-stream."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, AsyncIterator, Dict, Iterator, List

import pytest

from phaseo_agent import AgentError, AgentTool, create_agent, define_tool


def summary(event: Dict[str, Any]) -> str:
    if event["type"] in ("response.output_text.delta", "response.reasoning.delta"):
        return f"{event['type']}:{event['delta']}"
    if event["type"] == "response.item":
        return f"item:{event['item']['type']}"
    return str(event["type"])


def model_slice(events: List[str]) -> List[str]:
    start = events.index("model.requested")
    return events[start:events.index("model.completed", start) + 1]


class GeneratorClient:
    """``stream`` is a generator; each event waits until the test saw the previous one."""

    def __init__(self) -> None:
        self.seen = threading.Event()
        self.live = True

    def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
        raise AssertionError("a streamed run uses stream()")

    def stream(self, request: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        yield {"type": "reasoning-delta", "delta": "thinking"}
        yield {"type": "text-delta", "delta": "Hel"}
        # Live: the consumer gets "Hel" before the client produces the rest.
        self.live = self.seen.wait(10)
        yield {"type": "text-delta", "delta": "lo"}
        yield {"type": "item", "item": {"type": "message", "role": "assistant", "content": "Hello"}}
        yield {"type": "response", "response": {"text": "Hello"}}


def test_a_generator_client_streams_deltas_and_items_live_and_in_order() -> None:
    client = GeneratorClient()
    agent = create_agent({"id": "s"})
    stream = agent.stream(input="hi", client=client)
    events: List[str] = []
    for event in stream.events():
        events.append(summary(event))
        if events[-1] == "response.output_text.delta:Hel":
            client.seen.set()
    assert client.live, "the first delta reached the consumer while the client was still streaming"
    assert model_slice(events) == [
        "model.requested",
        "response.reasoning.delta:thinking",
        "response.output_text.delta:Hel",
        "response.output_text.delta:lo",
        "item:message",
        "model.completed",
    ]
    assert events.count("item:message") == 1, "the client's items replace the derived ones"
    assert stream.text() == "Hello"
    assert list(stream.text_stream()) == ["Hel", "lo"]


class AsyncClient:
    """``stream`` is an async generator ending with a tool call, then a text answer."""

    def __init__(self) -> None:
        self.turn = 0

    async def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self.turn += 1
        return {"text": "unstreamed"} if self.turn > 1 else {"tool_calls": [{"id": "c1", "name": "t", "input": {"q": 1}}]}

    async def stream(self, request: Dict[str, Any]) -> AsyncIterator[Dict[str, Any]]:
        self.turn += 1
        if self.turn == 1:
            await asyncio.sleep(0)
            # The product's spellings work too; a tool call may carry a parsed `input`.
            yield {"type": "response.completed", "response": {"message": {"content": "", "tool_calls": [{"id": "c1", "name": "t", "input": {"q": 1}}]}}}
            return
        for piece in ["Do", "ne"]:
            await asyncio.sleep(0)
            yield {"type": "response.output_text.delta", "delta": piece}
        yield {"type": "response", "response": {"text": "Done"}}


def test_an_async_generator_client_streams_and_its_tool_calls_run() -> None:
    agent = create_agent({"id": "s", "tools": [define_tool(AgentTool("t", lambda i, rt: {"got": i}))]})
    stream = agent.stream(input="hi", client=AsyncClient())
    result = stream.result()
    assert result.status == "completed"
    assert result.step_results[0]["tool_results"][0]["result"] == {"got": {"q": 1}}
    assert list(stream.text_stream()) == ["Do", "ne"]
    items = [i["type"] for i in stream.items_stream()]
    assert items == ["tool_call", "tool_result", "message", "output"]
    # Not streamed: generate() is used.
    assert agent.run(input="hi", client=AsyncClient()).step_count == 2


def test_an_async_stream_runs_on_the_callers_loop() -> None:
    agent = create_agent({"id": "s"})
    seen: List[bool] = []

    async def main() -> str:
        loop = asyncio.get_running_loop()

        class Client:
            async def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
                return {"text": "x"}

            async def stream(self, request: Dict[str, Any]) -> AsyncIterator[Dict[str, Any]]:
                seen.append(asyncio.get_running_loop() is loop)
                yield {"type": "text-delta", "delta": "x"}
                yield {"type": "response", "response": {"text": "x"}}

        return await agent.stream(input="hi", client=Client()).text_async()

    assert asyncio.run(main()) == "x"
    assert seen == [True]


class FlakyClient:
    """Fails mid-stream on the first attempt, then answers."""

    def __init__(self) -> None:
        self.attempts = 0

    def generate(self, request: Dict[str, Any]) -> Dict[str, Any]:
        raise AssertionError("streamed")

    def stream(self, request: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        self.attempts += 1
        if self.attempts == 1:
            yield {"type": "text-delta", "delta": "Wrong "}
            yield {"type": "text-delta", "delta": "answ"}
            raise ConnectionError("connection reset")
        yield {"type": "text-delta", "delta": "Right"}
        return {"text": "Right"}  # a generator may return its final response


def test_a_client_failing_mid_stream_is_retried_and_only_the_good_attempt_is_the_output() -> None:
    agent = create_agent({"id": "s", "model_retry": {"max_retries": 1, "backoff_ms": 0}})
    stream = agent.stream(input="hi", client=FlakyClient())
    events = [summary(e) for e in stream.events()]
    assert list(stream.text_stream()) == ["Wrong ", "answ", "Right"], "the failed attempt's deltas stay"
    assert events.count("model.requested") == 2
    assert stream.text() == "Right"
    result = stream.result()
    assert result.output == "Right"
    assert result.step_results[0]["text"] == "Right"
    assert [i for i in stream.items_stream() if i["type"] == "message"] == [{"type": "message", "role": "assistant", "content": "Right"}]


def test_bad_stream_events_and_a_stream_without_response_fail_clearly() -> None:
    agent = create_agent({"id": "s"})

    class Bad:
        def stream(self, request: Dict[str, Any]) -> Iterator[Any]:
            yield {"type": "text", "delta": "x"}

    with pytest.raises(AgentError) as bad:
        agent.stream(input="hi", client=Bad()).result()
    assert bad.value.code == "model_failed"
    assert 'unknown model stream event type "text"' in str(bad.value)

    class NoResponse:
        def stream(self, request: Dict[str, Any]) -> Iterator[Any]:
            yield {"type": "text-delta", "delta": "x"}

    with pytest.raises(AgentError) as none:
        agent.stream(input="hi", client=NoResponse()).result()
    assert "ended without a final" in str(none.value)
    # A client with only stream() also answers non-streamed runs.

    class OnlyStream:
        def stream(self, request: Dict[str, Any]) -> Iterator[Any]:
            yield {"type": "text-delta", "delta": "o"}
            yield {"type": "response", "response": {"text": "ok"}}

    assert agent.run(input="hi", client=OnlyStream()).output == "ok"


def test_plain_functions_are_clients() -> None:
    agent = create_agent({"id": "f"})
    requests: List[Dict[str, Any]] = []

    def client(request: Dict[str, Any]) -> Dict[str, Any]:
        requests.append(request)
        return {"text": "from a function"}

    async def async_client(request: Dict[str, Any]) -> Dict[str, Any]:
        return {"text": "from a coroutine"}

    assert agent.run(input="hi", client=client).output == "from a function"
    assert requests[0]["agent_id"] == "f"
    assert agent.run(input="hi", client=async_client).output == "from a coroutine"
    with pytest.raises(TypeError, match="stream\\(request\\)"):
        agent.run(input="hi", client=42)


def test_cancelling_a_stream_stops_a_blocking_generator_client() -> None:
    agent = create_agent({"id": "s"})
    stopped = threading.Event()

    class Endless:
        def stream(self, request: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
            try:
                while True:
                    yield {"type": "text-delta", "delta": "."}
                    threading.Event().wait(0.01)
            finally:
                stopped.set()

    stream = agent.stream(input="hi", client=Endless())
    for _ in stream.text_stream():
        stream.cancel("enough")
        break
    assert stream.result().status == "cancelled"
    assert stopped.wait(5), "the generator was closed once its attempt was over"
