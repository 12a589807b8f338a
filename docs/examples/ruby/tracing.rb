require "phaseo_agent_sdk"

# Every run from now on records spans. The collector's address comes from
# OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless `endpoint:` is given.
PhaseoAgentSdk.enable_tracing(service_name: "orders-bot")

lookup = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "lookup-order",
  description: "Look up an order",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  execute: ->(input, _runtime) { { order: input["order"], status: "shipped" } }
))
client = PhaseoAgentSdk::ScriptedClient.new([
  { tool_calls: [{ id: "c1", name: "lookup-order", arguments: '{"order": "A-7"}' }] },
  { text: "Order A-7 has shipped." }
])
agent = PhaseoAgentSdk.create_agent(id: "support", tools: [lookup])
puts agent.run(input: "where is order A-7?", client: client).output
PhaseoAgentSdk.flush_tracing # export now (what is left is also exported when the process exits)
