"""One side of the trace handoff check, in Python: `pause <state file>` runs the mailer
agent until it pauses on an approval and writes the state; `continue <state file>`
approves and finishes the run written by the other language. Tracing goes to
OTEL_EXPORTER_OTLP_ENDPOINT (the check's receiver); spans are exported at exit."""

import json
import sys

from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool, enable_tracing

mode, path = sys.argv[1], sys.argv[2]
enable_tracing(service_name="handoff-python")
send = define_tool(AgentTool(id="send", execute=lambda i, rt: "sent", require_approval=True))
agent = create_agent({"id": "mailer", "tools": [send]})
if mode == "pause":
    tool_call = {"id": "c1", "name": "send", "arguments": "{}"}
    state = agent.run(input="mail bob", client=ScriptedClient([{"tool_calls": [tool_call]}]))
    assert state.status == "waiting_for_human", state.status
    open(path, "w").write(state.to_json())
else:
    state = agent.continue_run(state=open(path).read(), client=ScriptedClient([{"text": "done"}]), approvals=["c1"])
    assert state.status == "completed", state.status
    open(path + ".done", "w").write(state.to_json())
print(json.loads(state.to_json())["run"]["traceparent"])
