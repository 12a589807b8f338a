"""The support-desk demo in Python: three tools on the offline test client, a pause for
approval and a manual step, and a continue from the state's JSON text.

    python examples/python/support_desk.py
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Dict

from phaseo_agent import (
    AgentTool,
    AgentToolDecision,
    AgentToolOutput,
    RunResult,
    TestClient,
    ToolReturn,
    ToolRuntime,
    create_agent,
    define_tool,
)


async def lookup_ticket(tool_input: Dict[str, Any], runtime: ToolRuntime) -> Any:
    """An async generator: each yield is progress; ToolReturn ends it with the result."""
    yield {"phase": "searching"}
    await asyncio.sleep(0.02)
    yield {"phase": "found"}
    yield ToolReturn({"ticket_id": tool_input["ticketId"], "customer": "Ana", "status": "open", "paid": 150})


def print_event(event: Dict[str, Any]) -> None:
    detail = ""
    if event["type"].startswith("tool."):
        detail = f" {event['tool_name']}"
        if "result" in event:
            detail += f" progress {event['result']}"
        if "output" in event:
            detail += f" -> {event['output']}"
    elif event["type"] == "run.waiting_for_human":
        detail = f" ({event['pause']['kind']})"
    print(f"  event {event['type']}{detail}")


def support_desk() -> Any:
    tools = [
        define_tool(AgentTool(
            id="lookup_ticket",
            description="Load a support ticket by id.",
            parameters={"type": "object", "properties": {"ticketId": {"type": "string", "examples": ["T-1001"]}},
                        "required": ["ticketId"], "additionalProperties": False},
            execute=lookup_ticket,
            timeout_ms=2000,
        )),
        define_tool(AgentTool(
            id="issue_refund",
            description="Refund a ticket's customer. Amounts over 100 need a person's approval.",
            parameters={"type": "object",
                        "properties": {"ticketId": {"type": "string", "examples": ["T-1001"]},
                                       "amount": {"type": "number", "minimum": 0, "examples": [150]}},
                        "required": ["ticketId", "amount"], "additionalProperties": False},
            execute=lambda tool_input, runtime: {"refunded": tool_input["amount"], "idempotency_key": runtime.tool_call["id"]},
            require_approval=lambda tool_input, runtime: tool_input["amount"] > 100,
        )),
        define_tool(AgentTool(
            id="escalate",
            description="Hand the ticket to a human specialist, who answers later.",
            parameters={"type": "object",
                        "properties": {"ticketId": {"type": "string", "examples": ["T-1001"]},
                                       "reason": {"type": "string", "examples": ["customer asked for a manager"]}},
                        "required": ["ticketId", "reason"]},
        )),
    ]
    return create_agent({"id": "support-desk", "instructions": "You resolve support tickets.", "tools": tools})


def client_from_env() -> Any:
    """A real model when the environment names one (PHASEO_API_KEY: the Phaseo gateway;
    OPENAI_BASE_URL: an OpenAI-compatible server), else the offline test client."""
    if os.environ.get("PHASEO_API_KEY"):
        print("model: Phaseo gateway")
        return create_gateway_agent_client(model=os.environ.get("PHASEO_MODEL") or None)
    if os.environ.get("OPENAI_BASE_URL"):
        print("model: OpenAI-compatible server")
        return create_openai_compatible_client(model=os.environ.get("OPENAI_MODEL") or None)
    print("model: offline test client (set PHASEO_API_KEY or OPENAI_BASE_URL for a real one)")
    return TestClient()


def main() -> None:
    agent = support_desk()
    client = client_from_env()
    print("== run")
    paused = agent.run(input="Ticket T-1001: the customer wants a refund of 150.", client=client,
                       context={"operator": "demo"}, on_event=print_event)
    print(f"status: {paused.status}")
    if paused.status != "waiting_for_human":
        print(f"answer: {paused.output}")
        return
    for p in paused.pending:
        print(f"pending: {p.tool_call_id} {p.tool_name} {p.input} ({p.reason})")

    stored = paused.to_json()  # an application stores this text and continues later, anywhere
    print(f"stored state: {len(stored)} bytes")
    restored = RunResult.from_json(stored)
    approvals = [AgentToolDecision(p.tool_call_id) for p in restored.pending if p.tool_name == "issue_refund"]
    outputs = [AgentToolOutput(p.tool_call_id, {"assigned_to": "Berta", "eta": "2h"})
               for p in restored.pending if p.tool_name == "escalate"]
    print("== continue")
    done = agent.continue_run(state=restored, client=client, approvals=approvals, tool_outputs=outputs,
                              on_event=print_event)
    print(f"status: {done.status}")
    print(f"answer: {done.output}")


if __name__ == "__main__":
    main()
