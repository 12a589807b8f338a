require "phaseo_agent_sdk"

lookup = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "lookup-order",
  description: "Look up an order",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  execute: lambda { |input, _runtime|
    raise "order service down" if input["order"] == "B-0"

    { order: input["order"], status: "shipped" }
  }
))
agent = PhaseoAgentSdk.create_agent(id: "support", max_steps: 2, tools: [lookup])

# One scripted model answer: a call of tool `name`.
def call(name, arguments) = { tool_calls: [{ id: "c1", name: name, arguments: arguments }] }

attempts = {
  "arguments that fail the schema" => [call("lookup-order", '{"order": 7}')],
  "a tool the agent does not have" => [call("delete-everything", "{}")],
  "a tool that raises" => [call("lookup-order", '{"order": "B-0"}')],
  "a model that never answers" => [call("lookup-order", '{"order": "A-7"}')] * 2
}
attempts.each do |what, answers|
  agent.run(input: "where is my order?", client: PhaseoAgentSdk::ScriptedClient.new(answers))
rescue PhaseoAgentSdk::AgentError => e # one family; `code` is the same in every language
  puts "#{what}\n  #{e.code}: #{e.message}"
  raise "the error carries the run's final state" unless e.result&.status == "failed"
end
