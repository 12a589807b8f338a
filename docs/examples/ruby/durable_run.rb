require "phaseo_agent_sdk"
require "tmpdir"

refund = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "refund",
  description: "Refund an order",
  parameters: {
    type: "object",
    properties: { order: { type: "string" }, amount: { type: "number" } },
    required: %w[order amount]
  },
  require_approval: true,
  execute: ->(input, _runtime) { { refunded: input["amount"] } }
))
# Every worker builds the same agent over the same store (another process, another day).
support_desk = ->(store) { PhaseoAgentSdk.create_agent(id: "support-desk", tools: [refund], store: store) }

client = PhaseoAgentSdk::ScriptedClient.new([
  { tool_calls: [{ id: "c1", name: "refund", arguments: '{"order": "A-17", "amount": 42}' }] },
  { text: "Refunded 42 on order A-17." }
])
path = File.join(Dir.mktmpdir, "runs.db")

# The chat worker: the run pauses on the refund; its state is saved in the store.
paused = support_desk.(PhaseoAgentSdk::SqliteRunStore.new(path)).run(input: "Refund order A-17", client: client)
puts "run status: #{paused.status}"

# The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
store = PhaseoAgentSdk::SqliteRunStore.new(path)
store.list(status: "waiting_for_human").runs.each do |run|
  run.pending.each do |pending|
    call = pending["call"]
    puts "inbox: #{call["name"]} #{call["input"]["order"]} #{call["input"]["amount"]}"
  end
  done = support_desk.(store).continue_run(run_id: run.run_id, client: client, approvals: ["c1"])
  puts done.output
  puts "stored status: #{store.load(run.run_id).status}"
  # Any other continue of that pause, by any worker, is refused: the refund ran once.
  begin
    support_desk.(store).continue_run(run_id: run.run_id, client: client, approvals: ["c1"])
  rescue PhaseoAgentSdk::ContinueError => e
    puts "again: #{e.code}"
  end
end
