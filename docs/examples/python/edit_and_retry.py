from phaseo_agent import (AgentTool, AgentToolDecision, ScriptedClient, ToolRetry,
                          create_agent, define_tool)


def deploy(tool_input, runtime):
    env = tool_input["env"]
    if runtime.attempt == 1:  # the first attempt fails; the SDK retries it
        print(f"attempt 1 to deploy to {env}: registry busy")
        raise RuntimeError("registry busy")
    # The same key on every attempt and after any continue: hand it to the service.
    assert runtime.idempotency_key.endswith(":c1")
    print(f"attempt {runtime.attempt} deployed to {env}")
    return {"deployed": env}


agent = create_agent({
    "id": "ops",
    "tools": [define_tool(AgentTool(
        id="deploy",
        description="Deploy a release",
        parameters={
            "type": "object",
            "properties": {"env": {"enum": ["staging", "production"]}},
            "required": ["env"],
        },
        execute=deploy,
        require_approval=True,
        retry=ToolRetry(max_attempts=3, backoff_ms=10),
        max_calls=1,  # at most one deploy per run
    ))],
})
client = ScriptedClient([
    {"tool_calls": [{"id": "c1", "name": "deploy", "arguments": '{"env": "production"}'}]},
    {"text": "Deployed to staging."},
])

paused = agent.run(input="deploy", client=client)
# The person approves, but to staging: the edited input is validated before anything runs.
done = agent.continue_run(
    state=paused.to_json(),
    client=client,
    approvals=[AgentToolDecision("c1", edited_input={"env": "staging"})],
)
print(done.output)
