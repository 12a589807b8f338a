# frozen_string_literal: true

# The support-desk demo in Ruby: three tools on the offline test client (or a real model
# when PHASEO_API_KEY / OPENAI_BASE_URL is set), a pause for approval and a manual step,
# and a continue from the state's JSON text.
#
#   ruby -Ibindings-ruby/lib examples/ruby/support_desk.rb      (after `make ruby`)

require "phaseo_agent_sdk"

LOOKUP = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "lookup_ticket", description: "Load a support ticket by id.",
  parameters: { type: "object", properties: { ticketId: { type: "string", examples: ["T-1001"] } },
                required: ["ticketId"], additionalProperties: false },
  timeout_ms: 2000,
  execute: lambda do |input, runtime|
    runtime.emit_progress.call(phase: "searching")
    sleep 0.02
    runtime.emit_progress.call(phase: "found")
    { ticket_id: input["ticketId"], customer: "Ana", status: "open", paid: 150 }
  end
))

REFUND = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "issue_refund", description: "Refund a ticket's customer. Amounts over 100 need a person's approval.",
  parameters: { type: "object",
                properties: { ticketId: { type: "string", examples: ["T-1001"] },
                              amount: { type: "number", minimum: 0, examples: [150] } },
                required: %w[ticketId amount], additionalProperties: false },
  require_approval: ->(input, _runtime) { input["amount"] > 100 },
  execute: ->(input, runtime) { { refunded: input["amount"], idempotency_key: runtime.tool_call["id"] } }
))

ESCALATE = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "escalate", description: "Hand the ticket to a human specialist, who answers later.",
  parameters: { type: "object",
                properties: { ticketId: { type: "string", examples: ["T-1001"] },
                              reason: { type: "string", examples: ["customer asked for a manager"] } },
                required: %w[ticketId reason] }
))

def print_event(event)
  detail = ""
  if event["type"].start_with?("tool.")
    detail = " #{event['toolName']}"
    detail += " progress #{event['result']}" if event.key?("result")
    detail += " -> #{event['output']}" if event.key?("output")
  elsif event["type"] == "run.waiting_for_human"
    detail = " (#{event['pause']['kind']})"
  end
  puts "  event #{event['type']}#{detail}"
end

def client_from_env
  if ENV["PHASEO_API_KEY"]
    puts "model: Phaseo gateway"
    return PhaseoAgentSdk.create_gateway_agent_client(model: ENV["PHASEO_MODEL"])
  end
  if ENV["OPENAI_BASE_URL"]
    puts "model: OpenAI-compatible server"
    return PhaseoAgentSdk.create_openai_compatible_client(model: ENV["OPENAI_MODEL"])
  end
  puts "model: offline test client (set PHASEO_API_KEY or OPENAI_BASE_URL for a real one)"
  PhaseoAgentSdk::TestClient.new
end

agent = PhaseoAgentSdk.create_agent(id: "support-desk", instructions: "You resolve support tickets.",
                                    tools: [LOOKUP, REFUND, ESCALATE], tool_execution: { tool_concurrency: 4 })
client = client_from_env
puts "== run"
paused = agent.run(input: "Ticket T-1001: the customer wants a refund of 150.", client: client,
                   context: { operator: "demo" }, on_event: method(:print_event))
puts "status: #{paused.status}"
if paused.status != "waiting_for_human"
  puts "answer: #{paused.output}"
  exit
end
paused.pending.each { |p| puts "pending: #{p['call']['id']} #{p['call']['name']} #{p['call']['input']} (#{p['reason']})" }

stored = paused.to_json # an application stores this text and continues later, anywhere
puts "stored state: #{stored.bytesize} bytes"
restored = PhaseoAgentSdk::RunResult.from_json(stored)
approvals = restored.pending.select { |p| p["call"]["name"] == "issue_refund" }.map { |p| p["call"]["id"] }
outputs = restored.pending.select { |p| p["call"]["name"] == "escalate" }
                  .map { |p| { tool_call_id: p["call"]["id"], output: { assigned_to: "Berta", eta: "2h" } } }
puts "== continue"
done = agent.continue_run(state: restored, client: client, approvals: approvals, tool_outputs: outputs,
                          on_event: method(:print_event))
puts "status: #{done.status}"
puts "answer: #{done.output}"
