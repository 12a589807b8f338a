"""Tracing from Python against a real OTLP/HTTP receiver on 127.0.0.1
(``tests/otlp/receiver.py``, decoding with ``opentelemetry-proto``): span names, GenAI
attributes, the span tree, a timeout, a pause continued in the same trace, the host's
``opentelemetry-api`` span as parent, content only on opt-in, no API key anywhere."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from phaseo_agent import (AgentTool, AgentToolTimeoutError, RunResult, ScriptedClient, create_agent,
                          create_openai_compatible_client, define_tool, enable_tracing, flush_tracing,
                          shutdown_tracing)

from conftest import call, calls

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "otlp"))
from receiver import Receiver  # noqa: E402

TOKEN = "collector-token-py-51"


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    # Tracing is process-wide: the other test modules must see it off again.
    shutdown_tracing()
    r.close()


def enable(r: Receiver, capture_content: bool = False) -> None:
    enable_tracing(endpoint=r.url, headers={"x-collector-token": TOKEN}, service_name="py-tests",
                   capture_content=capture_content)


def ids(result: RunResult) -> List[str]:
    traceparent = json.loads(result.to_json())["run"]["traceparent"]
    version, trace_id, span_id, flags = traceparent.split("-")
    assert (version, flags) == ("00", "01")
    return [trace_id, span_id]


def spans_of(r: Receiver, result: RunResult, count: int) -> List[Dict[str, Any]]:
    flush_tracing()
    trace_id = ids(result)[0]
    deadline = time.monotonic() + 10
    while len(r.trace(trace_id)) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    found = r.trace(trace_id)
    assert len(found) >= count, found
    return found


def one(spans: List[Dict[str, Any]], name: str) -> Dict[str, Any]:
    found = [s for s in spans if s["name"] == name]
    assert len(found) == 1, (name, spans)
    return found[0]


def calculator() -> Any:
    add = define_tool(AgentTool(id="add", execute=lambda i, rt: i["a"] + i["b"]))
    return create_agent({"id": "calculator", "tools": [add]})


def run_calculator() -> RunResult:
    client = ScriptedClient([calls(call("c1", "add", a=2, b=3)), {"text": "the sum is 5"}])
    return calculator().run(input="what is 2+3?", client=client, model="m-1")


def test_a_run_with_a_tool_step_is_one_tree_of_genai_spans(receiver: Receiver) -> None:
    enable(receiver)
    result = run_calculator()
    spans = spans_of(receiver, result, 4)
    assert sorted(s["name"] for s in spans) == ["chat m-1", "chat m-1", "execute_tool add",
                                               "invoke_agent calculator"]
    run = one(spans, "invoke_agent calculator")
    assert run["spanId"] == ids(result)[1] and run["parentSpanId"] == ""
    assert run["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert run["attributes"]["gen_ai.agent.id"] == "calculator"
    assert run["attributes"]["phaseo.run.id"] == result.run_id
    assert run["service"] == "py-tests"
    assert run["headers"]["x-collector-token"] == TOKEN
    tool = one(spans, "execute_tool add")
    assert tool["parentSpanId"] == run["spanId"]
    assert tool["attributes"]["gen_ai.tool.call.id"] == "c1"
    assert tool["attributes"]["gen_ai.tool.type"] == "function"
    for s in spans:
        if s["name"].startswith("chat"):
            assert s["parentSpanId"] == run["spanId"] and s["kind"] == 3
            assert s["attributes"]["gen_ai.request.model"] == "m-1"
        text = json.dumps(s["attributes"])
        assert "what is 2+3?" not in text and "the sum is 5" not in text and TOKEN not in text
        assert "gen_ai.tool.call.arguments" not in s["attributes"]


def test_content_is_recorded_only_when_opted_in(receiver: Receiver) -> None:
    enable(receiver, capture_content=True)
    try:
        spans = spans_of(receiver, run_calculator(), 4)
    finally:
        enable(receiver)
    tool = one(spans, "execute_tool add")
    assert json.loads(tool["attributes"]["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert tool["attributes"]["gen_ai.tool.call.result"] == "5"
    assert any("what is 2+3?" in s["attributes"].get("gen_ai.input.messages", "") for s in spans)


def slow_until_cancelled(_input: Any, rt: Any) -> None:
    # Cooperative: it must not outlive the test. This is the last test file, and a sync tool
    # still sleeping when the interpreter finalizes woke up in the middle of it (a crash at
    # exit on CPython 3.13, after every test had passed).
    rt.cancelled.wait(2)


def test_a_timeout_sets_error_type(receiver: Receiver) -> None:
    enable(receiver)
    slow = define_tool(AgentTool(id="slow", execute=slow_until_cancelled, timeout_ms=50))
    agent = create_agent({"id": "sleeper", "tools": [slow]})
    with pytest.raises(AgentToolTimeoutError) as raised:
        agent.run(input="go", client=ScriptedClient([calls(call("c1", "slow"))]))
    result = raised.value.result
    assert result is not None
    spans = spans_of(receiver, result, 3)
    assert one(spans, "execute_tool slow")["attributes"]["error.type"] == "tool_timeout"
    assert one(spans, "invoke_agent sleeper")["attributes"]["error.type"] == "tool_timeout"


def mailer() -> Any:
    send = define_tool(AgentTool(id="send", execute=lambda i, rt: "sent", require_approval=True))
    return create_agent({"id": "mailer", "tools": [send]})


def test_a_continue_from_the_json_state_lands_in_the_same_trace(receiver: Receiver) -> None:
    enable(receiver)
    agent = mailer()
    paused = agent.run(input="mail bob", client=ScriptedClient([calls(call("c1", "send"))]))
    assert paused.status == "waiting_for_human"
    done = agent.continue_run(state=paused.to_json(), client=ScriptedClient([{"text": "done"}]),
                              approvals=["c1"])
    assert done.status == "completed"
    (trace_id, first), (same, second) = ids(paused), ids(done)
    assert same == trace_id and second != first
    spans = spans_of(receiver, done, 5)
    resumed = next(s for s in spans if s["spanId"] == second)
    assert resumed["parentSpanId"] == first
    assert resumed["links"] == [{"traceId": trace_id, "spanId": first}]
    paused_span = next(s for s in spans if s["spanId"] == first)
    assert paused_span["attributes"]["phaseo.pause.kind"] == "tool_approval"
    assert one(spans, "execute_tool send")["attributes"]["phaseo.tool.approval"] == "approved"


def test_the_hosts_current_span_is_the_parent(receiver: Receiver) -> None:
    enable(receiver)
    host = SpanContext(trace_id=0x4BF92F3577B34DA6A3CE929D0E0E4736, span_id=0x00F067AA0BA902B7,
                       is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    with trace.use_span(NonRecordingSpan(host)):
        result = run_calculator()
    assert ids(result)[0] == "4bf92f3577b34da6a3ce929d0e0e4736"
    run = one(spans_of(receiver, result, 4), "invoke_agent calculator")
    assert run["parentSpanId"] == "00f067aa0ba902b7"
    # Outside the host span a run is a root again.
    assert one(spans_of(receiver, run_calculator(), 4), "invoke_agent calculator")["parentSpanId"] == ""


def test_the_hosts_span_is_read_in_asyncio_too(receiver: Receiver) -> None:
    import asyncio

    enable(receiver)
    host = SpanContext(trace_id=0x11111111111111111111111111111111, span_id=0x2222222222222222,
                       is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))

    async def main() -> RunResult:
        with trace.use_span(NonRecordingSpan(host)):
            client = ScriptedClient([{"text": "hi"}])
            return await calculator().run_async(input="x", client=client)

    result = asyncio.run(main())
    assert ids(result)[0] == "11111111111111111111111111111111"


class _ModelServer:
    """A chat-completions server answering every request with one text reply."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                body = json.dumps({"id": "chatcmpl-py", "model": "served", "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hello"}}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def test_an_api_key_is_never_in_any_attribute(receiver: Receiver) -> None:
    key = "sk-py-secret-9f8e7d6c5b4a"
    server = _ModelServer()
    enable(receiver, capture_content=True)
    try:
        client = create_openai_compatible_client(base_url=server.url, api_key=key, model="served")
        result = create_agent({"id": "keyed"}).run(input="hi", client=client)
        spans = spans_of(receiver, result, 2)
    finally:
        enable(receiver)
        server.server.shutdown()
    assert one(spans, "chat served")["attributes"]["gen_ai.response.id"] == "chatcmpl-py"
    for s in spans:
        assert key not in json.dumps(s)
