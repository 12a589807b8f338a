require "phaseo_agent_sdk"

deploy = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "deploy",
  description: "Deploy a release",
  parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
  require_approval: true,
  timeout_ms: 5_000,
  execute: ->(input, runtime) { # runs on a Ruby thread of its own
    runtime.emit_progress.call(phase: "rolling out")
    { deployed: input["env"], key: runtime.tool_call["id"] }
  }
))
agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [deploy])
# A scripted model: the first answer calls the tool, the second is the final text.
client = PhaseoAgentSdk::ScriptedClient.new([
  { tool_calls: [{ id: "c1", name: "deploy", arguments: '{"env":"prod"}' }] },
  { text: "Deployed." }
])

paused = agent.run(input: "deploy to prod", client: client)
stored = paused.to_json # persist anywhere; any language continues it
done = agent.continue_run(state: stored, client: client, approvals: ["c1"])
puts done.output # Deployed.
