require "phaseo_agent_sdk"

check_service = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "check-service",
  description: "Check one service",
  parameters: { type: "object", properties: { service: { type: "string" } }, required: ["service"] },
  timeout_ms: 3_000,
  execute: ->(input, runtime) {
    runtime.emit_progress.call(checking: input["service"]) # a tool.preliminary_result event
    { service: input["service"], up: input["service"] != "db" }
  }
))
# The three calls of one turn run side by side; results keep the model's call order.
agent = PhaseoAgentSdk.create_agent(id: "status", tools: [check_service],
                                    tool_execution: { tool_concurrency: 3 })
client = PhaseoAgentSdk::ScriptedClient.new([
  { tool_calls: %w[api db queue].each_with_index.map { |service, i|
    { id: "c#{i + 1}", name: "check-service", arguments: %({"service": "#{service}"}) }
  } },
  { text: "api and queue are up; db is down." }
])

progress = Queue.new # filled from the tools' threads
result = agent.run(input: "status?", client: client, on_event: ->(event) {
  if event["type"] == "tool.preliminary_result"
    progress << "#{event["toolCallId"]} progress: checking #{event["result"]["checking"]}"
  end
})
lines = []
lines << progress.pop until progress.empty?
puts lines.sort # the calls overlap: their progress arrives in any order
puts result.output
