"""Signed state (docs/behaviour.md §7): ``state_secret`` signs every state; an edited one is refused."""

from __future__ import annotations

import json

import pytest
from conftest import call, calls

from phaseo_agent import AgentError, AgentTool, ScriptedClient, create_agent, define_tool


def gated_agent(secret: object) -> object:
    deploy = define_tool(AgentTool(id="deploy", execute=lambda i, rt: "deployed", require_approval=True))
    return create_agent({"id": "ops", "tools": [deploy], "state_secret": secret})


def test_signed_state_continues_and_edits_are_refused() -> None:
    agent = gated_agent("s3cret")
    paused = agent.run(input="go", client=ScriptedClient([calls(call("c1", "deploy"))]))  # type: ignore[attr-defined]
    stored = json.loads(paused.to_json())
    assert len(stored["signature"]) == 64
    tampered = dict(stored, run=dict(stored["run"], context={"role": "admin"}))
    with pytest.raises(AgentError) as refused:
        agent.continue_run(state=json.dumps(tampered), client=ScriptedClient([]), approvals=["c1"])  # type: ignore[attr-defined]
    assert (refused.value.code, refused.value.message) == ("state_invalid", "State signature does not match")
    stripped = {k: v for k, v in stored.items() if k != "signature"}
    with pytest.raises(AgentError) as missing:
        agent.continue_run(state=json.dumps(stripped), client=ScriptedClient([]), approvals=["c1"])  # type: ignore[attr-defined]
    assert missing.value.message == "State signature is missing"
    # A list rotates: the first secret signs, any verifies.
    rotated = gated_agent(["new", "s3cret"])
    done = rotated.continue_run(state=paused.to_json(), client=ScriptedClient([{"text": "ok"}]), approvals=["c1"])  # type: ignore[attr-defined]
    assert done.status == "completed"
    assert json.loads(done.to_json())["signature"] != stored["signature"]


def test_state_secret_must_be_text() -> None:
    with pytest.raises(AgentError) as bad:
        gated_agent(42)
    assert bad.value.code == "definition_invalid"
