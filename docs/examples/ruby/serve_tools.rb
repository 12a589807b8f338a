# Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
# desktop assistant, another agent) starts this program and calls them.
require "phaseo_agent_sdk"

order = { type: "object", properties: { order: { type: "string" } }, required: ["order"] }

lookup = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "lookup-order",
  description: "Look up an order",
  parameters: order,
  execute: ->(input, _runtime) { { order: input["order"], status: "shipped" } }
))
cancel = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "cancel-order",
  description: "Cancel an order",
  parameters: order,
  execute: ->(input, _runtime) { { order: input["order"], cancelled: true } }
))

# $stdout now speaks MCP: log to $stderr, never puts. Serves until the client closes stdin.
PhaseoAgentSdk.serve_mcp(name: "orders", tools: [lookup, cancel]) { |server| server.wait }
