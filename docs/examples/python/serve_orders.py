from phaseo_agent import (AgentTool, ScriptedClient, create_agent, define_tool, mcp_http_server,
                          serve_mcp)

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

# Serve the tool over Streamable HTTP, on 127.0.0.1 and a free port (stdio is the default:
# `serve_mcp([...], name="orders")` in a process an MCP client starts, then `server.wait()`).
with serve_mcp([lookup], name="orders", transport={"type": "http"}) as server:
    # Any MCP client can call it now; here, an agent of this SDK.
    orders = mcp_http_server("orders", server.url)
    client = ScriptedClient([
        {"tool_calls": [{"id": "c1", "name": "lookup-order", "arguments": '{"order": "A-7"}'}]},
        {"text": "Order A-7 has shipped."},
    ])

    def on_event(event):
        if event["type"] == "tool.completed":
            print(f"{event['tool_name']} -> {event['output']['status']}")

    with create_agent({"id": "support", "mcp_servers": [orders]}) as agent:
        print(agent.run(input="where is order A-7?", client=client, on_event=on_event).output)
