import os
import tempfile

from phaseo_agent import (AgentContinueError, AgentTool, ScriptedClient, SqliteRunStore,
                          create_agent, define_tool)


def refund(tool_input, runtime):
    return {"refunded": tool_input["amount"]}


def support_desk(store):
    """Every worker builds the same agent over the same store (another process, another day)."""
    return create_agent({
        "id": "support-desk",
        "tools": [define_tool(AgentTool(
            id="refund",
            description="Refund an order",
            parameters={
                "type": "object",
                "properties": {"order": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["order", "amount"],
            },
            execute=refund,
            require_approval=True,
        ))],
        "store": store,
    })


client = ScriptedClient([
    {"tool_calls": [{"id": "c1", "name": "refund", "arguments": '{"order": "A-17", "amount": 42}'}]},
    {"text": "Refunded 42 on order A-17."},
])
path = os.path.join(tempfile.mkdtemp(), "runs.db")

# The chat worker: the run pauses on the refund; its state is saved in the store.
paused = support_desk(SqliteRunStore(path)).run(input="Refund order A-17", client=client)
print(f"run status: {paused.status}")

# The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
store = SqliteRunStore(path)
for run in store.list(status="waiting_for_human").runs:
    for call in run.pending:
        print(f"inbox: {call.tool_name} {call.input['order']} {call.input['amount']}")
    done = support_desk(store).continue_run(run_id=run.run_id, client=client, approvals=["c1"])
    print(done.output)
    print(f"stored status: {store.load(run.run_id).status}")
    # Any other continue of that pause, by any worker, is refused: the refund ran once.
    try:
        support_desk(store).continue_run(run_id=run.run_id, client=client, approvals=["c1"])
    except AgentContinueError as error:
        print(f"again: {error.code}")
