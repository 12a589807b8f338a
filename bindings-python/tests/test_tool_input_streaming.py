"""Tool input as the model writes it (docs/behaviour.md §16) through the Python API: both HTTP
clients streaming a tool call in pieces from a local server, a host streaming client, and the
scripted client."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Optional

import pytest

from phaseo_agent import (
    AgentError,
    AgentTool,
    ScriptedClient,
    ToolInputDeltaEvent,
    ToolInputStartedEvent,
    create_agent,
    create_gateway_agent_client,
    create_openai_compatible_client,
    define_tool,
)

Chunks = List[Dict[str, Any]]


class StreamServer:
    """Answers each POST with the next list of SSE events. In the first reply, everything after
    the first two events waits until ``gate`` is set (or 60 s passed)."""

    def __init__(self, replies: List[Chunks]) -> None:
        self.replies = list(replies)
        self.gate = threading.Event()
        self.gate_opened_by_test = False
        self.bodies: List[Dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                server.bodies.append(json.loads(self.rfile.read(int(self.headers.get("content-length", "0")))))
                first = len(server.bodies) == 1
                chunks = server.replies.pop(0)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for i, chunk in enumerate(chunks):
                    if first and i == 2:
                        server.gate_opened_by_test = server.gate.wait(60)
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def serve(replies: List[Chunks]) -> Iterator[StreamServer]:
    server = StreamServer(replies)
    try:
        yield server
    finally:
        server.gate.set()
        server.httpd.shutdown()


PIECES = ['{"a":', '2,"b"', ":3}"]
ARGUMENTS = "".join(PIECES)


def gateway_turns() -> List[Chunks]:
    call: Chunks = [{"type": "response.output_item.added", "output_index": 0,
                     "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": ""}}]
    call += [{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": p}
             for p in PIECES]
    call.append({"type": "response.completed", "response": {"status": "completed", "output": [
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": ARGUMENTS}]}})
    text = [{"type": "response.completed", "response": {"status": "completed", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "5"}]}]}}]
    return [call, text]


def openai_turns() -> List[Chunks]:
    def delta(d: Dict[str, Any], finish: Optional[str] = None) -> Dict[str, Any]:
        return {"id": "x", "choices": [{"index": 0, "delta": d, "finish_reason": finish}]}

    # The id and name come only in the call's first chunk.
    call = [delta({"role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "add", "arguments": ""}}]})]
    call += [delta({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in PIECES]
    call.append(delta({}, "tool_calls"))
    return [call, [delta({"role": "assistant", "content": "5"}), delta({}, "stop")]]


def calculator(**definition: Any) -> Any:
    add = define_tool(AgentTool(id="add", parameters={"type": "object"}, execute=lambda i, rt: i["a"] + i["b"]))
    return create_agent({"id": "calc", "tools": [add], **definition})


def input_deltas(events: List[Dict[str, Any]], call_id: str) -> List[str]:
    return [e["delta"] for e in events if e["type"] == "tool.input_delta" and e["tool_call_id"] == call_id]


@pytest.mark.parametrize("wire", ["gateway", "openai"])
def test_http_clients_report_tool_input_live_before_the_call_runs(wire: str) -> None:
    turns = gateway_turns() if wire == "gateway" else openai_turns()
    for server in serve(turns):
        client = (create_gateway_agent_client(api_key="k", base_url=server.url) if wire == "gateway"
                  else create_openai_compatible_client(base_url=server.url))
        stream = calculator().stream(input="2+3?", client=client)
        events: List[Dict[str, Any]] = []
        for event in stream.events():
            if event["type"] == "tool.input_delta" and not server.gate.is_set():
                # The server still holds the rest of the call: input is reported as it arrives.
                assert "model.completed" not in [e["type"] for e in events]
                server.gate.set()
            events.append(event)
        assert server.gate_opened_by_test, "no tool.input_delta reached the consumer while the call streamed"
        assert stream.result().output == "5"
        types = [e["type"] for e in events]
        started: ToolInputStartedEvent = next(e for e in events if e["type"] == "tool.input_started")  # type: ignore[assignment]
        assert (started["tool_call_id"], started["tool_name"], started["step_index"]) == ("call_1", "add", 0)
        assert input_deltas(events, "call_1") == PIECES
        last_delta = max(i for i, t in enumerate(types) if t == "tool.input_delta")
        assert types.index("tool.input_started") < types.index("tool.input_delta")
        assert last_delta < types.index("model.completed") < types.index("tool.started")
        assert "call_1" in json.dumps(server.bodies[1])


def test_a_run_that_is_not_streamed_reports_no_tool_input() -> None:
    events: List[Dict[str, Any]] = []
    client = ScriptedClient([{"toolCalls": [{"id": "c1", "name": "add", "arguments": ARGUMENTS}]}, {"text": "5"}])
    result = calculator().run(input="2+3?", client=client, on_event=events.append)
    assert result.output == "5"
    types = [e["type"] for e in events]
    assert "tool.completed" in types
    assert "tool.input_started" not in types and "tool.input_delta" not in types


def test_the_scripted_client_streams_tool_input_in_pieces() -> None:
    client = ScriptedClient([{"toolCalls": [{"id": "c1", "name": "add", "arguments": ARGUMENTS}]}, {"text": "5"}])
    stream = calculator().stream(input="2+3?", client=client)
    tool_events = list(stream.tool_stream())
    assert [e["type"] for e in tool_events][:2] == ["tool.input_started", "tool.input_delta"]
    assert "".join(input_deltas(tool_events, "c1")) == ARGUMENTS
    assert len(input_deltas(tool_events, "c1")) > 1


class FailsThenStreams:
    """A host streaming client: the first attempt writes part of a call and fails, the second
    streams a whole call, the third answers."""

    def __init__(self) -> None:
        self.attempts = 0

    def stream(self, request: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        self.attempts += 1
        if self.attempts == 1:
            yield {"type": "tool-input-start", "tool_call_id": "lost", "tool_name": "add"}
            yield {"type": "tool-input-delta", "tool_call_id": "lost", "delta": '{"a":'}
            raise ConnectionError("connection reset")
        if self.attempts == 2:
            yield {"type": "tool-input-start", "tool_call_id": "c2", "tool_name": "add"}
            for piece in PIECES:
                yield {"type": "tool-input-delta", "tool_call_id": "c2", "delta": piece}
            yield {"type": "response", "response": {"toolCalls": [{"id": "c2", "name": "add", "arguments": ARGUMENTS}]}}
            return
        yield {"type": "response", "response": {"text": "5"}}


def test_a_host_streaming_client_reports_tool_input_and_a_failed_attempts_input_stays() -> None:
    client = FailsThenStreams()
    agent = calculator(model_retry={"max_retries": 1, "backoff_ms": 1})
    stream = agent.stream(input="2+3?", client=client)
    events = list(stream.events())
    assert stream.result().output == "5"
    assert input_deltas(events, "lost") == ['{"a":']
    assert input_deltas(events, "c2") == PIECES
    assert [e["tool_call_id"] for e in events if e["type"] == "tool.started"] == ["c2"]
    typed: ToolInputDeltaEvent = next(e for e in events if e["type"] == "tool.input_delta")  # type: ignore[assignment]
    assert typed["delta"] == '{"a":'


def test_a_malformed_tool_input_event_fails_the_attempt_with_a_clear_error() -> None:
    class NoToolName:
        def stream(self, request: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
            yield {"type": "tool-input-start", "tool_call_id": "c1"}

    with pytest.raises(AgentError) as raised:
        calculator().stream(input="x", client=NoToolName()).result()
    assert raised.value.code == "model_failed"
    assert 'model stream event "tool-input-start" has no "toolName"' in str(raised.value)
