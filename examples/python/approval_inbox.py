"""An approval inbox on a SQLite run store, across two processes.

    python examples/python/approval_inbox.py            # runs both steps
    python examples/python/approval_inbox.py agent DB   # step 1: a run pauses for approval
    python examples/python/approval_inbox.py inbox DB   # step 2: list, approve, continue by id

Step 1 is the agent process: a refund above 100 needs a person, so the run pauses and
the process ends — the state is in the store. Step 2 is another process (the approval
desk): it lists the waiting runs with their pending calls, approves, and continues each
by run id. Continuing is at most once: a second desk approving the same pause is told
``Pause <pauseId> of run <runId> was already continued``."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any, Dict

from phaseo_agent import AgentContinueError, AgentTool, ScriptedClient, SqliteRunStore, create_agent, define_tool


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
    model = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "refund",
                                             "arguments": '{"order": "A-17", "amount": 240}'}]}])
    result = make_agent(db).run(input="Order A-17 arrived broken, please refund it.", client=model)
    print(f"[agent] run {result.run_id[:8]} is {result.status}; the process ends here")


def inbox_process(db: str) -> None:
    store = SqliteRunStore(db)
    agent = make_agent(db)
    for run in store.list(status="waiting_for_human").runs:
        for pending in run.pending:
            print(f"[inbox] run {run.run_id[:8]}: {pending.tool_name} {pending.input} — approving")
        done = agent.continue_run(run_id=run.run_id, approvals=[p.tool_call_id for p in run.pending],
                                  client=ScriptedClient([{"text": "Your refund is on its way."}]))
        print(f"[inbox] run {run.run_id[:8]} is {done.status}: {done.output}")
        try:
            agent.continue_run(run_id=run.run_id, approvals=["c1"], client=ScriptedClient([{"text": "again"}]))
        except AgentContinueError as e:
            print(f"[inbox] a second approval is refused: {e}")


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
