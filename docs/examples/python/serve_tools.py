# Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
# desktop assistant, another agent) starts this program and calls them.
from phaseo_agent import AgentTool, define_tool, serve_mcp

order = {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}

lookup = define_tool(AgentTool(
    id="lookup-order",
    description="Look up an order",
    parameters=order,
    execute=lambda tool_input, runtime: {"order": tool_input["order"], "status": "shipped"},
))
cancel = define_tool(AgentTool(
    id="cancel-order",
    description="Cancel an order",
    parameters=order,
    execute=lambda tool_input, runtime: {"order": tool_input["order"], "cancelled": True},
))

# stdout now speaks MCP: log to stderr, never print. Serves until the client closes stdin.
with serve_mcp([lookup, cancel], name="orders") as server:
    server.wait()
