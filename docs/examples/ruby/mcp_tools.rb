require "phaseo_agent_sdk"

# An MCP server started as a child process and spoken to over stdio: here the protocol's
# reference server, installed under tests/mcp; any server's command works the same way.
everything = PhaseoAgentSdk.mcp_stdio_server(
  "everything", "node",
  ["tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  allow_tools: ["echo"] # offer only these of the server's tools
)
# A scripted model: the first answer calls the server's tool, the second is the final text.
client = PhaseoAgentSdk::ScriptedClient.new([
  { tool_calls: [{ id: "c1", name: "echo", arguments: '{"message": "hello"}' }] },
  { text: "The server said hello." }
])

# The server starts when a run first needs its tools and stops with the agent.
agent = PhaseoAgentSdk.create_agent(id: "assistant", mcp_servers: [everything])
on_event = lambda do |event|
  puts "#{event['toolName']} -> #{event['output']}" if event["type"] == "tool.completed"
end
result = agent.run(input: "say hello through the server", client: client, on_event: on_event)
puts result.output
agent.close
