from phaseo_agent import AgentError, AgentTool, ScriptedClient, create_agent, define_tool


def lookup_order(tool_input, runtime):
    if tool_input["order"] == "B-0":
        raise RuntimeError("order service down")
    return {"order": tool_input["order"], "status": "shipped"}


agent = create_agent({
    "id": "support",
    "max_steps": 2,
    "tools": [define_tool(AgentTool(
        id="lookup-order",
        description="Look up an order",
        parameters={
            "type": "object",
            "properties": {"order": {"type": "string"}},
            "required": ["order"],
        },
        execute=lookup_order,
    ))],
})


def call(name, arguments):
    """One scripted model answer: a call of tool `name`."""
    return {"tool_calls": [{"id": "c1", "name": name, "arguments": arguments}]}


attempts = {
    "arguments that fail the schema": [call("lookup-order", '{"order": 7}')],
    "a tool the agent does not have": [call("delete-everything", "{}")],
    "a tool that raises": [call("lookup-order", '{"order": "B-0"}')],
    "a model that never answers": [call("lookup-order", '{"order": "A-7"}')] * 2,
}
for what, answers in attempts.items():
    try:
        agent.run(input="where is my order?", client=ScriptedClient(answers))
    except AgentError as error:  # one family; `code` is the same in every language
        print(f"{what}\n  {error.code}: {error}")
        assert error.result is not None and error.result.status == "failed"  # the run's final state
