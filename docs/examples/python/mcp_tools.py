from phaseo_agent import ScriptedClient, create_agent, mcp_stdio_server

# An MCP server started as a child process and spoken to over stdio: here the protocol's
# reference server, installed under tests/mcp; any server's command works the same way.
everything = mcp_stdio_server(
    "everything",
    "node",
    ["tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
    allow_tools=["echo"],  # offer only these of the server's tools
)
# A scripted model: the first answer calls the server's tool, the second is the final text.
client = ScriptedClient([
    {"tool_calls": [{"id": "c1", "name": "echo", "arguments": '{"message": "hello"}'}]},
    {"text": "The server said hello."},
])


def on_event(event):
    if event["type"] == "tool.completed":
        print(f"{event['tool_name']} -> {event['output']}")


# The server starts when a run first needs its tools and stops with the agent.
with create_agent({"id": "assistant", "mcp_servers": [everything]}) as agent:
    result = agent.run(input="say hello through the server", client=client, on_event=on_event)
    print(result.output)
