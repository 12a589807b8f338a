require "phaseo_agent_sdk"

lookup = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "lookup-order",
  description: "Look up an order",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  execute: ->(input, _runtime) { { order: input["order"], status: "shipped" } }
))
agent = PhaseoAgentSdk.create_agent(id: "support", tools: [lookup])
# A scripted model: the first answer calls the tool, the second is the final text.
client = PhaseoAgentSdk::ScriptedClient.new([
  { tool_calls: [{ id: "c1", name: "lookup-order", arguments: '{"order": "A-7"}' }] },
  { text: "Order A-7 has shipped." }
])

stream = agent.stream(input: "where is order A-7?", client: client)
stream.full_stream.each do |event|
  # Text, and the tool's arguments as the model writes them, arrive as deltas.
  puts event.key?("delta") ? "#{event['type']} [#{event['delta']}]" : event["type"]
end
puts stream.result.output # replayed: every consumer sees the whole run
