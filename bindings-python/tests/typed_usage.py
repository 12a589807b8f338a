"""A typed usage file: checked with ``mypy --strict`` in ``make test`` so the stubs and the
public annotations stay accurate."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional

from phaseo_agent import (
    AgentError,
    AgentTool,
    AgentToolDecision,
    AgentToolExecutionConfig,
    AgentToolOutput,
    PendingToolCall,
    RunResult,
    ScriptedClient,
    ToolRuntime,
    Usage,
    create_agent,
    define_tool,
    step_count_is,
)


def lookup(tool_input: Dict[str, Any], runtime: ToolRuntime) -> Dict[str, Any]:
    runtime.emit_progress({"phase": "lookup"})
    if runtime.cancelled.is_set():
        raise RuntimeError("cancelled")
    return {"id": tool_input["id"], "run": runtime.run_id, "step": runtime.step_index}


async def slow(tool_input: Dict[str, Any], runtime: ToolRuntime) -> str:
    await asyncio.sleep(0)
    return str(runtime.tool_call["id"])


def main() -> Optional[str]:
    tools = [
        define_tool(AgentTool(id="lookup", execute=lookup, timeout_ms=1000)),
        define_tool(AgentTool(id="slow", execute=slow, require_approval=True)),
        define_tool(AgentTool(id="manual", parameters={"type": "object"})),
        define_tool(AgentTool(id="manual_too", execute=False)),
    ]
    agent = create_agent({"id": "typed", "tools": tools, "stop_when": [step_count_is(5)],
                          "tool_execution": AgentToolExecutionConfig(tool_concurrency=2)})
    client = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "lookup", "arguments": '{"id": 1}'}]}, {"text": "ok"}])
    try:
        result: RunResult = agent.run(input="hi", client=client, context={"user": "ana"})
    except AgentError as error:
        code: str = error.code
        return code
    pending: List[PendingToolCall] = result.pending
    usage: Usage = result.usage
    total: int = usage.total_tokens
    text: str = result.to_json()
    restored = RunResult.from_json(text)
    if restored.status == "waiting_for_human":
        restored = agent.continue_run(state=restored, client=client,
                                      approvals=[AgentToolDecision(p.tool_call_id) for p in pending],
                                      tool_outputs=[AgentToolOutput("c2", {"done": True})])
    stream = agent.stream(input="again", client=client)
    for event in stream.events():
        kind: str = event["type"]
        del kind
    final: RunResult = asyncio.run(agent.run_async(input="x", client=client, tool_choice={"tool_id": "x"},
                                                   parallel_tool_calls=False, active_tools=["x"]))
    strict = AgentTool(id="s", parameters={"type": "object", "additionalProperties": False},
                       strict=True, input_examples=[{}])
    del strict
    return f"{final.status} {total} {restored.output}"
