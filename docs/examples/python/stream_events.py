from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool

lookup = define_tool(AgentTool(
    id="lookup-order",
    description="Look up an order",
    parameters={
        "type": "object",
        "properties": {"order": {"type": "string"}},
        "required": ["order"],
    },
    execute=lambda tool_input, runtime: {"order": tool_input["order"], "status": "shipped"},
))
agent = create_agent({"id": "support", "tools": [lookup]})
# A scripted model: the first answer calls the tool, the second is the final text.
client = ScriptedClient([
    {"tool_calls": [{"id": "c1", "name": "lookup-order", "arguments": '{"order": "A-7"}'}]},
    {"text": "Order A-7 has shipped."},
])

stream = agent.stream(input="where is order A-7?", client=client)
for event in stream.events():  # `async for` works the same in async code
    line = event["type"]
    if "delta" in event:  # text, and the tool's arguments as the model writes them
        line += f" [{event['delta']}]"
    print(line)
print(stream.result().output)  # replayed: every consumer sees the whole run
