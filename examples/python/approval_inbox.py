"""An approval inbox on a SQLite run store, across two processes.

    python examples/python/approval_inbox.py            # runs both steps
    python examples/python/approval_inbox.py agent DB   # step 1: a run pauses for approval
    python examples/python/approval_inbox.py inbox DB   # step 2: list, decide, continue by id

Step 1 is the agent process: a refund above 100 needs a person, so each run pauses and
the process ends — the states are in the store. Step 2 is another process (the approval
desk): it lists the waiting runs with their pending calls and decides each by run id. The
desk caps refunds at 200: a larger one is approved with the amount edited down (the edited
input is checked against the tool's schema before the tool runs), and one it would rather
settle with store credit is answered in the tool's place (the tool never runs). Continuing
is at most once: a second desk approving the same pause is told
``Pause <pauseId> of run <runId> was already continued``."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any, Dict

from phaseo_agent import (AgentContinueError, AgentTool, AgentToolDecision, AgentToolOutput, ScriptedClient,
                          SqliteRunStore, create_agent, define_tool)


def refund(args: Dict[str, Any], _rt: Any) -> str:
    return f"refunded {args['amount']} to order {args['order']}"


def make_agent(db: str) -> Any:
    tool = define_tool(AgentTool(id="refund", execute=refund, description="Refunds an order",
                                 input_schema={"type": "object", "properties": {"order": {"type": "string"},
                                                                                "amount": {"type": "number"}},
                                               "required": ["order", "amount"]},
                                 require_approval=lambda args, rt: args["amount"] > 100))
    return create_agent(id="support-desk", tools=[tool], store=SqliteRunStore(db))


def agent_process(db: str) -> None:
    # A scripted model stands in for a real one (see the README for real clients).
    agent = make_agent(db)
    for order, amount in (("A-17", 240), ("B-4", 130)):
        model = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "refund",
                                                 "arguments": f'{{"order": "{order}", "amount": {amount}}}'}]}])
        result = agent.run(input=f"Order {order} arrived broken, please refund it.", client=model)
        print(f"[agent] run for {order} is {result.status}")
    print("[agent] the process ends here")


def inbox_process(db: str) -> None:
    store = SqliteRunStore(db)
    agent = make_agent(db)
    reply = ScriptedClient([{"text": "Done: see the desk's decision."}] * 2)
    for run in store.list(status="waiting_for_human").runs:
        call = run.pending[0]
        order, amount = call.input["order"], call.input["amount"]
        if amount > 200:
            print(f"[inbox] {order}: refund {amount} — approved, capped at 200")
            decision = {"approvals": [AgentToolDecision(call.tool_call_id, edited_input={"order": order, "amount": 200})]}
        else:
            print(f"[inbox] {order}: refund {amount} — answered with store credit instead")
            decision = {"responses": [AgentToolOutput(call.tool_call_id, f"store credit of {amount} for order {order}")]}
        done = agent.continue_run(run_id=run.run_id, client=reply, **decision)
        tool_message = next(m for m in done.messages if m["role"] == "tool")
        print(f"[inbox] {order} is {done.status}; the model read: {tool_message['content']}")
        try:
            agent.continue_run(run_id=run.run_id, approvals=[call.tool_call_id], client=ScriptedClient([{"text": "again"}]))
        except AgentContinueError as e:
            print(f"[inbox] a second decision is refused: {e}")


def main() -> None:
    if len(sys.argv) == 3:
        {"agent": agent_process, "inbox": inbox_process}[sys.argv[1]](sys.argv[2])
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "runs.db")
        for step in ("agent", "inbox"):
            subprocess.run([sys.executable, __file__, step, db], check=True)


if __name__ == "__main__":
    main()
