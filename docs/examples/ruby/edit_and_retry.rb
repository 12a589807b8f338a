require "phaseo_agent_sdk"

deploy = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "deploy",
  description: "Deploy a release",
  parameters: { type: "object", properties: { env: { enum: %w[staging production] } }, required: ["env"] },
  require_approval: true,
  retry: PhaseoAgentSdk::ToolRetry.new(max_attempts: 3, backoff_ms: 10),
  max_calls: 1, # at most one deploy per run
  execute: ->(input, runtime) {
    env = input["env"]
    if runtime.attempt == 1 # the first attempt fails; the SDK retries it
      puts "attempt 1 to deploy to #{env}: registry busy"
      raise "registry busy"
    end
    # The same key on every attempt and after any continue: hand it to the service.
    raise "unexpected key" unless runtime.idempotency_key.end_with?(":c1")
    puts "attempt #{runtime.attempt} deployed to #{env}"
    { deployed: env }
  }
))
agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [deploy])
client = PhaseoAgentSdk::ScriptedClient.new([
  { tool_calls: [{ id: "c1", name: "deploy", arguments: '{"env":"production"}' }] },
  { text: "Deployed to staging." }
])

paused = agent.run(input: "deploy", client: client)
# The person approves, but to staging: the edited input is validated before anything runs.
done = agent.continue_run(
  state: paused.to_json,
  client: client,
  approvals: [PhaseoAgentSdk::ToolDecision.new(tool_call_id: "c1", edited_input: { env: "staging" })]
)
puts done.output
