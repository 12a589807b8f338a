from phaseo_agent import (AgentTool, AgentToolExecutionConfig, ScriptedClient,
                          create_agent, define_tool)


def check_service(tool_input, runtime):
    service = tool_input["service"]
    runtime.emit_progress({"checking": service})  # a tool.preliminary_result event
    return {"service": service, "up": service != "db"}


agent = create_agent({
    "id": "status",
    "tools": [define_tool(AgentTool(
        id="check-service",
        description="Check one service",
        parameters={
            "type": "object",
            "properties": {"service": {"type": "string"}},
            "required": ["service"],
        },
        execute=check_service,
        timeout_ms=3_000,
    ))],
    # The three calls of one turn run side by side; results keep the model's call order.
    "tool_execution": AgentToolExecutionConfig(tool_concurrency=3),
})
client = ScriptedClient([
    {"tool_calls": [
        {"id": f"c{i}", "name": "check-service", "arguments": f'{{"service": "{s}"}}'}
        for i, s in enumerate(["api", "db", "queue"], start=1)
    ]},
    {"text": "api and queue are up; db is down."},
])

progress = []  # appended from the tools' threads


def on_event(event):
    if event["type"] == "tool.preliminary_result":
        progress.append(f"{event['tool_call_id']} progress: checking {event['result']['checking']}")


result = agent.run(input="status?", client=client, on_event=on_event)
print("\n".join(sorted(progress)))  # the calls overlap: their progress arrives in any order
print(result.output)
