# frozen_string_literal: true

# One side of the trace handoff check, in Ruby (as step.py): `pause <state file>` runs the
# mailer agent until it pauses on an approval and writes the state; `continue <state
# file>` approves and finishes the run written by the other language. Tracing goes to
# OTEL_EXPORTER_OTLP_ENDPOINT (the check's receiver); spans are exported at exit.

$LOAD_PATH.unshift(File.expand_path("../../bindings-ruby/lib", __dir__))
require "json"
require "phaseo_agent_sdk"

mode, path = ARGV
PhaseoAgentSdk.enable_tracing(service_name: "handoff-ruby")
send = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: "send", execute: ->(_i, _rt) { "sent" }, require_approval: true))
agent = PhaseoAgentSdk.create_agent(id: "mailer", tools: [send])
if mode == "pause"
  tool_call = { id: "c1", name: "send", arguments: "{}" }
  state = agent.run(input: "mail bob", client: PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [tool_call] }]))
  raise "expected a pause, got #{state.status}" unless state.status == "waiting_for_human"

  File.write(path, state.to_json)
else
  state = agent.continue_run(state: File.read(path), approvals: ["c1"],
                             client: PhaseoAgentSdk::ScriptedClient.new([{ text: "done" }]))
  raise "expected completed, got #{state.status}" unless state.status == "completed"

  File.write("#{path}.done", state.to_json)
end
puts state.run["traceparent"]
