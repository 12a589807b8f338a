# frozen_string_literal: true

# The Ruby driver of the cross-language MCP handoff (contract: tests/mcp-handoff/run.sh).

ROOT = File.expand_path("../..", __dir__)
$LOAD_PATH.unshift(File.join(ROOT, "bindings-ruby/lib"))
require "json"
require "phaseo_agent_sdk"

def agent
  files = PhaseoAgentSdk.mcp_stdio_server("files", ENV.fetch("PHASEO_PYTHON"), [File.join(ROOT, "tests/mcp/test_server.py")],
                                          env: { "PHASEO_MCP_MARKERS" => ENV.fetch("PHASEO_MCP_MARKERS") },
                                          tool_prefix: "files", require_approval: "destructive")
  PhaseoAgentSdk.create_agent(id: "mcp-handoff", mcp_servers: [files])
end

mode, state_file = ARGV
a = agent
begin
  case mode
  when "pause"
    client = PhaseoAgentSdk::ScriptedClient.new([
      { tool_calls: [{ id: "c1", name: "files_delete_file", arguments: JSON.generate({ path: "report.txt" }) }] },
      { text: "Deleted report.txt." }
    ])
    paused = a.run(input: "Delete report.txt", client: client)
    File.write(state_file, paused.to_json)
    puts JSON.generate({ pid: Process.pid, status: paused.status })
  when "continue"
    done = a.continue_run(state: File.read(state_file), approvals: ["c1"],
                          client: PhaseoAgentSdk::ScriptedClient.new([{ text: "Deleted report.txt." }]))
    puts JSON.generate({ pid: Process.pid, status: done.status, output: done.output })
  else
    abort "unknown mode #{mode.inspect}: use pause or continue"
  end
ensure
  a.close
end
