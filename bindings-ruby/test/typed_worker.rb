# frozen_string_literal: true

# One half of a typed tool's cross-language handoff (docs/behaviour.md §4, §20), run by
# tests/typed-handoff/run.sh:
#   ruby typed_worker.rb pause <state file>     the model asks for a refund; the run pauses
#                                                for approval and its state is written to the file
#   ruby typed_worker.rb continue <state file>  the stored run is approved and continued here
# Prints one JSON line: the status and, after continuing, the refund tool's message.
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "json"
require "phaseo_agent_sdk"
require_relative "typed_params"

mode, path = ARGV
agent = PhaseoAgentSdk.create_agent(id: "desk", tools: [TypedParams.refund_tool])
case mode
when "pause"
  args = { order_id: "A-17", amount: 25, reason: "damaged", lines: [{ sku: "MUG-1", quantity: 2 }, { sku: "CUP-9", quantity: 1 }],
           customer: { email: "ana@example.com" } }
  client = PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [{ id: "c1", name: "refund", arguments: JSON.generate(args) }] }])
  paused = agent.run(input: "refund A-17", client: client)
  File.write(path, paused.to_json)
  puts JSON.generate({ "status" => paused.status, "pending" => paused.pending.map { |p| p["call"]["id"] } })
when "continue"
  client = PhaseoAgentSdk::ScriptedClient.new([{ text: "Refunded." }])
  done = agent.continue_run(state: File.read(path), client: client, approvals: ["c1"])
  tool = done.messages.find { |m| m["role"] == "tool" }
  puts JSON.generate({ "status" => done.status, "output" => done.output, "tool" => JSON.parse(tool["content"]) })
else
  abort "usage: typed_worker.rb pause|continue <state file>"
end
