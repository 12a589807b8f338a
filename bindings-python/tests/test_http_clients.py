"""The HTTP model clients through the Python API, against local servers on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from phaseo_agent import (
    AgentGatewayError,
    AgentModelError,
    AgentTool,
    create_agent,
    create_gateway_agent_client,
    create_openai_compatible_client,
    define_tool,
)

Reply = Tuple[int, Dict[str, str], str]


class Server:
    """Answers each POST with the next scripted reply and records the requests."""

    def __init__(self, replies: List[Reply]) -> None:
        self.replies = list(replies)
        self.requests: List[Dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": json.loads(body)})
                status, headers, text = server.replies.pop(0)
                if status == 0:
                    time.sleep(float(text))
                    return
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(text.encode())))
                self.end_headers()
                self.wfile.write(text.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


def serve(replies: List[Reply]) -> Iterator[Server]:
    server = Server(replies)
    try:
        yield server
    finally:
        server.close()


JSON = {"content-type": "application/json"}
KEY = "sk-test-secret-123"


def agent() -> Any:
    tool = define_tool(AgentTool(id="lookup", parameters={"type": "object"}, execute=lambda i, rt: {"found": i["id"]}))
    return create_agent({"id": "desk", "instructions": "Be brief.", "tools": [tool]})


def responses_reply(output: List[Dict[str, Any]]) -> Reply:
    return (200, JSON, json.dumps({"id": "resp_1", "status": "completed", "output": output,
                                   "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}))


def test_gateway_round_trip_keeps_the_key_out_of_state_and_context_off_the_wire() -> None:
    for server in serve([
        responses_reply([{"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"id": 7}'}]),
        responses_reply([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Found 7."}]}]),
    ]):
        client = create_gateway_agent_client(api_key=KEY, base_url=server.url, model="phaseo/test")
        result = agent().run(input="find 7", client=client, context={"secret_context": "do-not-send"})
        assert result.output == "Found 7."
        assert result.usage.total_tokens == 10
        assert [r["path"] for r in server.requests] == ["/v1/responses", "/v1/responses"]
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
        first, second = (r["body"] for r in server.requests)
        assert first["model"] == "phaseo/test" and first["instructions"] == "Be brief."
        assert "do-not-send" not in json.dumps(first)
        assert {"type": "function_call_output", "call_id": "c1", "output": '{"found":7}'} in second["input"]
        assert KEY not in result.to_json()


def test_openai_compatible_streaming_deltas_in_order() -> None:
    chunks = ["Hel", "lo ", "there"]
    sse = "".join(f"data: {json.dumps({'id': 'x', 'choices': [{'index': 0, 'delta': {'content': c}}]})}\n\n" for c in chunks)
    sse += "data: " + json.dumps({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}) + "\n\ndata: [DONE]\n\n"
    for server in serve([(200, {"content-type": "text/event-stream"}, sse)]):
        client = create_openai_compatible_client(base_url=server.url, model="local-model")
        stream = create_agent({"id": "a"}).stream(input="hi", client=client)
        assert list(stream.text_stream()) == chunks
        assert stream.result().output == "Hello there"
        body = server.requests[0]["body"]
        assert server.requests[0]["path"] == "/v1/chat/completions" and body["stream"] is True
        assert "authorization" not in server.requests[0]["headers"]


def test_rate_limit_then_success_and_server_errors() -> None:
    for server in serve([
        (429, {**JSON, "retry-after": "0"}, json.dumps({"error": {"message": "slow down"}})),
        responses_reply([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}]),
    ]):
        client = create_gateway_agent_client(api_key=KEY, base_url=server.url)
        result = create_agent({"id": "a", "model_retry": {"max_retries": 1, "backoff_ms": 30000}}).run(input="x", client=client)
        assert result.output == "ok" and len(server.requests) == 2

    for server in serve([(500, {**JSON, "x-request-id": "req_9"}, json.dumps({"error": {"message": "boom"}}))] * 3):
        client = create_gateway_agent_client(api_key=KEY, base_url=server.url)
        with pytest.raises(AgentGatewayError) as raised:
            create_agent({"id": "a", "model_retry": {"max_retries": 2, "backoff_ms": 1}}).run(input="x", client=client)
        error = raised.value
        assert (error.code, error.status, error.request_id) == ("gateway", 500, "req_9")
        assert str(error) == "Gateway request failed: 500 Internal Server Error - boom"
        assert len(server.requests) == 3 and KEY not in str(error) and error.result is not None

    for server in serve([(400, JSON, json.dumps({"error": {"message": "bad request"}}))] * 3):
        client = create_openai_compatible_client(base_url=server.url, api_key=KEY)
        with pytest.raises(AgentGatewayError) as raised:
            create_agent({"id": "a", "model_retry": {"max_retries": 2, "backoff_ms": 1}}).run(input="x", client=client)
        assert raised.value.status == 400 and len(server.requests) == 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_refused_malformed_body_and_timeout() -> None:
    client = create_openai_compatible_client(base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(AgentModelError) as raised:
        create_agent({"id": "a"}).run(input="x", client=client)
    assert raised.value.code == "model_failed" and "connection failed" in str(raised.value)

    for server in serve([(200, JSON, "{not json")]):
        client = create_openai_compatible_client(base_url=server.url)
        with pytest.raises(AgentModelError, match="malformed response body"):
            create_agent({"id": "a"}).run(input="x", client=client)

    for server in serve([(0, {}, "3")]):
        client = create_gateway_agent_client(api_key=KEY, base_url=server.url, timeout_ms=200)
        started = time.monotonic()
        with pytest.raises(AgentModelError, match="timed out"):
            create_agent({"id": "a"}).run(input="x", client=client)
        assert time.monotonic() - started < 2


def test_run_async_talks_http_and_waits_out_a_retry_from_the_event_loop() -> None:
    """run_async polls the run on the caller's loop: sockets and the retry timer still work."""
    import asyncio

    async def lookup(tool_input: Dict[str, Any], runtime: Any) -> Dict[str, Any]:
        await asyncio.sleep(0.01)
        return {"found": tool_input["id"]}

    for server in serve([
        (429, {**JSON, "retry-after": "0"}, json.dumps({"error": {"message": "slow down"}})),
        responses_reply([{"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"id": 7}'}]),
        responses_reply([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Found 7."}]}]),
    ]):
        client = create_gateway_agent_client(api_key=KEY, base_url=server.url)
        tool = define_tool(AgentTool(id="lookup", parameters={"type": "object"}, execute=lookup))
        agent = create_agent({"id": "desk", "tools": [tool], "model_retry": {"max_retries": 1, "backoff_ms": 20}})
        result = asyncio.run(agent.run_async(input="find 7", client=client))
        assert result.output == "Found 7."
        assert len(server.requests) == 3
        assert {"type": "function_call_output", "call_id": "c1", "output": '{"found":7}'} in server.requests[2]["body"]["input"]
