# frozen_string_literal: true

# Tools served over MCP for serve_mcp_test.rb: `ruby mcp_served_tools.rb stdio|http [agent|agent-ask]`.
# In HTTP mode the endpoint URL is printed on the first line of stdout and the server stops
# when stdin closes. A cancelled `slow` call writes "cancelled" to the file CANCEL_MARK.
# With `agent`, one agent is served instead: `researcher`, whose model calls `delete`
# (approval-gated; it writes "deleted" to CANCEL_MARK) and then answers "researched"; with
# `agent-ask` its model calls the manual tool `ask`, so its run pauses for a client tool.

$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "phaseo_agent_sdk"

NUMBERS = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: %w[a b] }.freeze

def served(id, **fields)
  PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: id, **fields))
end

TOOLS = [
  served("add", description: "Adds two numbers", parameters: NUMBERS,
                output_schema: { type: "object", properties: { sum: { type: "number" } } },
                annotations: { read_only_hint: true, title: "Add numbers" },
                execute: ->(input, _rt) { { sum: input["a"] + input["b"] } }),
  served("slow", description: "Waits until cancelled",
                 execute: lambda do |_input, rt|
                   rt.emit_progress.call("started")
                   sleep 0.01 until rt.cancelled?
                   "cancelled"
                 ensure
                   # Also when the cancelled call's thread is interrupted (Timeout::Error).
                   File.write(ENV.fetch("CANCEL_MARK"), "cancelled") if rt.cancelled?
                 end),
  served("steps", description: "Reports progress",
                  execute: lambda do |_input, rt|
                    rt.emit_progress.call(progress: 1, total: 2, message: "half")
                    rt.emit_progress.call("almost")
                    2
                  end),
  served("delete", description: "Deletes a file", require_approval: true,
                   execute: ->(input, _rt) { "deleted #{input['path']}" }),
  served("sleepy", description: "Too slow", timeout_ms: 200, execute: lambda { |_input, _rt|
                                                                  sleep(5)
                                                                  "late"
                                                                })
].freeze

SERVED = if ARGV[1]
           researcher = PhaseoAgentSdk.create_agent(
             id: "researcher",
             tools: [served("delete", description: "Deletes a file", require_approval: true,
                                      execute: lambda { |input, _rt|
                                        File.write(ENV.fetch("CANCEL_MARK"), "deleted")
                                        "deleted #{input['path']}"
                                      }),
                     PhaseoAgentSdk::Tool.new(id: "ask", description: "Asks a person")]
           )
           call = ARGV[1] == "agent-ask" ? { id: "n1", name: "ask", arguments: "{}" } : { id: "n1", name: "delete", arguments: '{"path":"/tmp/x"}' }
           { agent: researcher, description: "Researches",
             client: PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [call] }, { text: "researched" }]) }
         else
           { tools: TOOLS }
         end

if ARGV[0] == "stdio"
  PhaseoAgentSdk.serve_mcp(**SERVED, name: "test-tools", version: "1.0.0",
                                     tool_execution: { tool_concurrency: 4 }, &:wait)
else
  PhaseoAgentSdk.serve_mcp(**SERVED, name: "test-tools", version: "1.0.0", transport: { type: "http" },
                           tool_execution: { tool_concurrency: 4 }) do |server|
    $stdout.puts server.url
    $stdout.flush
    $stdin.read
  end
end
