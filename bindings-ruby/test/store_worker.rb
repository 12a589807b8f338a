# frozen_string_literal: true

# A worker process of the run-store tests and of tests/store-handoff (the same contract as
# bindings-python/tests/store_worker.py): pauses a run, continues one by id, or recovers
# one, against the store named on the command line, and prints one JSON line.
#
#   ruby store_worker.rb STORE pause
#   ruby store_worker.rb STORE continue RUN_ID [--hang | --slow]
#   ruby store_worker.rb STORE recover RUN_ID
#
# STORE is `sqlite:<path>` or a PostgreSQL URL. Every execution of the `deploy` tool
# appends a line to the file `$PHASEO_EXEC_LOG`; with `--hang` the tool then blocks
# forever (the test SIGKILLs the worker after its claim); with `--slow` it returns after
# 2 s (the test freezes the worker meanwhile, so that its lease is taken over).

$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "json"
require "phaseo_agent_sdk"

AGENT_ID = "store-worker"

def open_store(spec)
  return PhaseoAgentSdk::SqliteRunStore.new(spec.delete_prefix("sqlite:")) if spec.start_with?("sqlite:")

  PhaseoAgentSdk::PostgresRunStore.new(spec)
end

def say(value)
  $stdout.puts(JSON.generate(value))
  $stdout.flush
end

spec, mode, run_id = ARGV
hang = ARGV.include?("--hang")
slow = ARGV.include?("--slow")
deploy = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "deploy", require_approval: true,
  execute: lambda do |_input, _runtime|
    File.open(ENV.fetch("PHASEO_EXEC_LOG"), "a") { |log| log.puts(Process.pid) }
    if hang
      say({ executing: true })
      sleep 1 while true # rubocop:disable Style/InfiniteLoop
    end
    if slow
      say({ executing: true })
      sleep 2
    end
    "deployed"
  end
))
begin
  agent = PhaseoAgentSdk.create_agent(id: AGENT_ID, tools: [deploy], store: open_store(spec),
                                      lease: { duration_ms: 1000, renew_every_ms: 250 })
  done = PhaseoAgentSdk::ScriptedClient.new([{ text: "done" }])
  result =
    case mode
    when "pause"
      call = { id: "c1", name: "deploy", arguments: "{}" }
      agent.run(input: "deploy please", client: PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [call] }]))
    when "continue" then agent.continue_run(run_id: run_id, client: done, approvals: ["c1"])
    when "recover" then agent.recover(run_id, client: done)
    else abort "unknown mode #{mode.inspect}"
    end
  say({ run_id: result.run_id, status: result.status, output: result.output })
rescue PhaseoAgentSdk::AgentError => e
  say({ error: e.code, message: e.message })
end
