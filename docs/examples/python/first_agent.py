from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool


async def deploy(tool_input, runtime):  # def, async def and generators work too
    runtime.emit_progress({"phase": "rolling out"})
    return {"deployed": tool_input["env"], "key": runtime.tool_call["id"]}


agent = create_agent({
    "id": "ops",
    "tools": [define_tool(AgentTool(
        id="deploy",
        description="Deploy a release",
        parameters={
            "type": "object",
            "properties": {"env": {"type": "string"}},
            "required": ["env"],
        },
        execute=deploy,
        require_approval=True,
        timeout_ms=5_000,
    ))],
})
# A scripted model: the first answer calls the tool, the second is the final text.
client = ScriptedClient([
    {"tool_calls": [{"id": "c1", "name": "deploy", "arguments": '{"env": "prod"}'}]},
    {"text": "Deployed."},
])

paused = agent.run(input="deploy to prod", client=client)  # or: await agent.run_async(...)
stored = paused.to_json()  # persist anywhere; any language continues it
done = agent.continue_run(state=stored, client=client, approvals=["c1"])
print(done.output)  # Deployed.
