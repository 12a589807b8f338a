"""The Python samples of the product's Tools page, copied verbatim (checked by
scripts/check-tools-page-samples.py), run against scripted models and checked against what
the page says they do. Only the application code the samples name is written here
(``deploy_release``, and an ``httpx`` whose ``get`` answers from memory: the page's
service is not reachable from a test)."""

from __future__ import annotations

import json
import sys
import types
from typing import Any, Dict, List

import pytest
from conftest import RecordingClient, call, calls

from phaseo_agent import AgentError, create_agent


class _Response:
    def __init__(self, body: Dict[str, Any]) -> None:
        self._body = body

    def json(self) -> Dict[str, Any]:
        return self._body


@pytest.fixture
def fake_httpx(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """An ``httpx`` module whose ``get`` records the URL and answers with the ticket."""
    urls: List[str] = []
    module = types.ModuleType("httpx")

    def get(url: str, **_: Any) -> _Response:
        urls.append(url)
        return _Response({"id": url.rsplit("/", 1)[-1], "status": "open"})

    module.get = get  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "httpx", module)
    return urls


def test_define_a_tool(fake_httpx: List[str]) -> None:
    import httpx
    from phaseo_agent import AgentTool, define_tool

    def fetch_ticket(tool_input, runtime):
        response = httpx.get(f"https://internal.example/tickets/{tool_input['ticketId']}")
        return response.json()

    fetch_ticket_tool = define_tool(AgentTool(
        id="fetch-ticket",
        description="Load one internal support ticket.",
        parameters={
            "type": "object",
            "properties": {"ticketId": {"type": "string"}},
            "required": ["ticketId"],
            "additionalProperties": False,
        },
        timeout_ms=3_000,
        execute=fetch_ticket,
    ))

    agent = create_agent({"id": "support", "tools": [fetch_ticket_tool]})
    client = RecordingClient([calls(call("c1", "fetch-ticket", ticketId="T-7")), {"text": "T-7 is open."}])
    result = agent.run(input="How is T-7?", client=client)
    assert result.output == "T-7 is open."
    assert fake_httpx == ["https://internal.example/tickets/T-7"]
    offered = client.requests[0]["tools"][0]
    assert (offered["id"], offered["description"]) == ("fetch-ticket", "Load one internal support ticket.")
    tool_messages = [m["content"] for m in client.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_messages == [json.dumps({"id": "T-7", "status": "open"}, separators=(",", ":"))]
    # Arguments that break `parameters` never reach the function.
    with pytest.raises(AgentError) as refused:
        agent.run(input="x", client=RecordingClient([calls(call("c1", "fetch-ticket", ticketId="T-7", extra=1))]))
    assert refused.value.code == "tool_input_invalid"
    assert fake_httpx == ["https://internal.example/tickets/T-7"]


def test_require_approval() -> None:
    from phaseo_agent import AgentTool, define_tool

    deployed: List[Any] = []

    def deploy_release(tool_input: Any, runtime: Any) -> Dict[str, Any]:
        deployed.append(tool_input["environment"])
        return {"deployed": tool_input["environment"]}

    deploy = define_tool(AgentTool(
        id="deploy",
        description="Deploy the selected release",
        require_approval=lambda tool_input, runtime: tool_input["environment"] == "production",
        execute=deploy_release,
    ))

    agent = create_agent({"id": "ops", "tools": [deploy]})
    staged = agent.run(input="ship", client=RecordingClient([
        calls(call("c1", "deploy", environment="staging")), {"text": "staged"}]))
    assert staged.output == "staged" and deployed == ["staging"]
    client = RecordingClient([calls(call("c1", "deploy", environment="production")), {"text": "shipped"}])
    paused = agent.run(input="ship", client=client)
    assert paused.status == "waiting_for_human" and deployed == ["staging"]
    assert [(p.tool_call_id, p.kind) for p in paused.pending] == [("c1", "approval")]
    done = agent.continue_run(state=paused.to_json(), client=client, approvals=["c1"])
    assert done.output == "shipped" and deployed == ["staging", "production"]


def test_report_progress_and_update_the_context() -> None:
    from phaseo_agent import AgentTool, define_tool

    def index_repository(tool_input, runtime):
        runtime.emit_progress({"stage": "indexing"})
        runtime.set_context({"indexed": True})
        return "done"

    agent = create_agent({"id": "indexer", "tools": [define_tool(AgentTool(id="index-repository", execute=index_repository))]})
    client = RecordingClient([calls(call("c1", "index-repository")), {"text": "indexed"}])
    events: List[Dict[str, Any]] = []
    result = agent.run(input="index", client=client, context={"indexed": False}, on_event=events.append)
    assert [e["result"] for e in events if e["type"] == "tool.preliminary_result"] == [{"stage": "indexing"}]
    assert client.requests[1]["context"] == {"indexed": True}
    assert result.context == {"indexed": True}
    assert [m["content"] for m in client.requests[1]["messages"] if m["role"] == "tool"] == ["done"]
