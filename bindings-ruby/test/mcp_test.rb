# frozen_string_literal: true

require "test_helper"

# MCP servers (SPEC §11) through the Ruby binding, against
# @modelcontextprotocol/server-everything over stdio (installed by `make mcp-servers`).
class McpTest < Minitest::Test
  include SdkHelpers

  EVERYTHING = File.expand_path("../../tests/mcp/node_modules/.bin/mcp-server-everything", __dir__)

  def everything
    flunk "@modelcontextprotocol/server-everything is not installed: run `make mcp-servers`" unless File.exist?(EVERYTHING)
    EVERYTHING
  end

  def test_server_everything_over_stdio
    seen = []
    server = PhaseoAgentSdk.mcp_stdio_server("everything", everything, ["stdio"], tool_prefix: "ev",
                                             filter: ->(info) { seen << info["name"]; true })
    agent = PhaseoAgentSdk.create_agent(id: "everything", mcp_servers: [server])
    requests = []
    model = Object.new
    replies = [{ tool_calls: [call("c1", "ev_echo", message: "hi"), call("c2", "ev_get-sum", a: 2, b: 3)] }, { text: "done" }]
    model.define_singleton_method(:generate) { |request| requests << request; replies.shift }
    result = agent.run(input: "go", client: model)
    assert_equal "completed", result.status
    assert_includes requests.first["tools"].map { |t| t["id"] }, "ev_echo"
    assert_includes seen, "echo"
    contents = tool_messages(result).map { |m| m["content"] }
    assert_includes contents[0], "Echo: hi"
    assert_includes contents[1], "The sum of 2 and 3 is 5."
  ensure
    agent&.close
  end

  def test_bad_declarations_are_refused
    assert_raises(ArgumentError) { PhaseoAgentSdk.mcp_stdio_server("x", "cmd", colour: "red") }
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "a", mcp_servers: [PhaseoAgentSdk.mcp_stdio_server("x", "cmd", timeout_ms: -1)])
    end
    assert_includes error.message, "timeout_ms"
  end
end
