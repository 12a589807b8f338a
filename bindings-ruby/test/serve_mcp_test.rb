# frozen_string_literal: true

require "test_helper"

require "open3"
require "tmpdir"
require "timeout"

# Tools served by `PhaseoAgentSdk.serve_mcp` (docs/behaviour.md §19), called by the official
# MCP Python SDK client (PyPI `mcp` in .venvs/py, installed by `make mcp-servers`) over stdio
# and Streamable HTTP. The client is tests/mcp/served_client.py; the served program is
# test/mcp_served_tools.rb. A missing `mcp` package FAILS these tests.
class ServeMcpTest < Minitest::Test
  include SdkHelpers

  ROOT = File.expand_path("../..", __dir__)
  PYTHON = File.join(ROOT, ".venvs/py/bin/python")
  DRIVER = File.join(ROOT, "tests/mcp/served_client.py")
  SERVED = File.join(__dir__, "mcp_served_tools.rb")
  TRANSPORTS = %w[stdio http].freeze

  # What the client saw running `scenario` (answering elicitations with `approve`) against
  # what mcp_served_tools.rb serves over `transport` (`served`: nil for the tools, "agent"
  # or "agent-ask"); "marked": whether the server wrote its CANCEL_MARK file (a cancelled
  # `slow`, or the served agent's `delete` that ran).
  def drive(transport, scenario, approve, served = nil)
    mark = File.join(Dir.tmpdir, "phaseo-serve-#{Process.pid}-#{rand(1 << 30)}")
    flunk "the Python `mcp` package (.venvs/py) is not installed: run `make mcp-servers`" unless File.exist?(File.join(ROOT, ".venvs/py/.mcp"))
    target = transport == "http" ? ["--spawn-url", "--"] : ["--"]
    command = [PYTHON, DRIVER, scenario, approve, "--mark", mark, *target, RbConfig.ruby, SERVED, transport, served].compact
    out = err = nil
    Open3.popen3(*command) do |stdin, stdout, stderr, thread|
      stdin.close
      readers = [Thread.new { stdout.read }, Thread.new { stderr.read }]
      unless thread.join(180)
        Process.kill("KILL", thread.pid)
        flunk "the MCP client did not finish in 180 s: #{readers[1].value}"
      end
      out, err = readers.map(&:value)
      assert thread.value.success?, "the MCP client failed:\n#{err}"
    end
    JSON.parse(out.lines.last).merge("marked" => File.exist?(mark))
  ensure
    File.delete(mark) if File.exist?(mark)
  end

  TRANSPORTS.each do |transport|
    define_method("test_list_call_errors_progress_over_#{transport}") do
      seen = drive(transport, "tools", "none")
      assert_equal %w[add delete sleepy slow steps], seen["tools"].keys.sort
      assert_equal %w[a b], seen["tools"]["add"]["inputSchema"]["required"]
      assert_equal({ "type" => "object", "properties" => { "sum" => { "type" => "number" } } },
                   seen["tools"]["add"]["outputSchema"])
      assert seen["tools"]["delete"]["annotations"]["destructiveHint"], "an approval-gated tool is announced as destructive"
      assert_equal true, seen["tools"]["add"]["annotations"]["readOnlyHint"]
      assert_equal "Add numbers", seen["tools"]["add"]["title"]
      assert_equal({ "isError" => false, "text" => '{"sum":5}', "structured" => { "sum" => 5 } }, seen["add"])
      assert seen["invalid"]["isError"]
      assert seen["invalid"]["text"].start_with?("Invalid tool input"), seen["invalid"]["text"]
      assert_equal({ "isError" => true, "text" => "Tool sleepy timed out after 200ms", "structured" => nil }, seen["sleepy"])
      assert_equal "2", seen["steps"]["text"]
      assert_equal [[1, 2, "half"], [2, nil, "almost"]], seen["progress"]
      assert_equal({ "isError" => true, "text" => "Tool delete requires approval and this client cannot be asked",
                     "structured" => nil }, seen["delete"])
    end

    define_method("test_approval_accepted_through_elicitation_over_#{transport}") do
      seen = drive(transport, "tools", "yes")
      assert_equal({ "isError" => false, "text" => "deleted /x", "structured" => nil }, seen["delete"])
      assert_equal 1, seen["asked"].size
      assert_includes seen["asked"][0], "delete"
      assert_includes seen["asked"][0], '{"path":"/x"}'
    end

    define_method("test_approval_declined_through_elicitation_over_#{transport}") do
      seen = drive(transport, "tools", "no")
      assert_equal({ "isError" => true, "text" => "Tool call rejected by human", "structured" => nil }, seen["delete"])
    end

    define_method("test_cancellation_reaches_the_tool_over_#{transport}") do
      seen = drive(transport, "cancel", "none")
      assert seen["observed"], "the cancelled tool saw its cancellation"
      assert_equal({ "sum" => 2 }, seen["add"]["structured"], "the session is usable after a cancelled call")
    end

    define_method("test_an_agent_served_as_one_tool_over_#{transport}") do
      seen = drive(transport, "agent", "yes", "agent")
      assert_equal ["researcher"], seen["tools"].keys
      listed = seen["tools"]["researcher"]
      assert_equal %w[researcher Researches], [listed["name"], listed["description"]]
      assert_equal({ "type" => "object", "properties" => { "input" => { "type" => "string" } }, "required" => ["input"] },
                   listed["inputSchema"])
      assert_equal({ "isError" => false, "text" => "researched", "structured" => nil }, seen["call"])
      assert seen["marked"], "the approved call ran"
      assert_equal 1, seen["asked"].size
      assert_includes seen["asked"][0], "delete"
      assert_includes seen["asked"][0], '{"path":"/tmp/x"}'
    end
  end

  # A declined approval is the agent's rejection: it goes on and answers.
  def test_a_served_agents_declined_approval_is_its_rejection
    seen = drive("http", "agent", "no", "agent")
    assert_equal({ "isError" => false, "text" => "researched", "structured" => nil }, seen["call"])
    refute seen["marked"], "the declined call did not run"
    assert_equal 1, seen["asked"].size
  end

  def test_a_served_agent_asks_nothing_of_a_client_without_elicitation
    seen = drive("stdio", "agent", "none", "agent")
    assert_equal({ "isError" => true, "text" => "Tool delete requires approval and this client cannot be asked",
                   "structured" => nil }, seen["call"])
    refute seen["marked"]
  end

  def test_a_served_agent_paused_for_a_client_tool_is_an_error_result
    seen = drive("http", "agent", "yes", "agent-ask")
    assert_equal({ "isError" => true, "text" => "Tool ask asks a person for its result and cannot be served",
                   "structured" => nil }, seen["call"])
    assert_empty seen["asked"]
  end

  def adder
    tool("add", execute: ->(input, _rt) { input["env"] * 2 })
  end

  def test_the_block_form_closes_the_server_and_returns_the_block_value
    kept = nil
    value = PhaseoAgentSdk.serve_mcp(tools: [adder], name: "block", transport: "http") do |server|
      kept = server
      assert_match(%r{\Ahttp://127\.0\.0\.1:\d+/mcp\z}, server.url)
      refute server.closed?
      :done
    end
    assert_equal :done, value
    assert kept.closed?
  end

  def test_the_returned_server_waits_and_closes
    server = PhaseoAgentSdk.serve_mcp(tools: [adder], name: "object", transport: { type: :http, port: 0 })
    refute server.wait(0.2), "wait(timeout) is false while the server runs"
    server.close
    assert server.closed?
    assert server.wait(0), "wait is true once it stopped"
  end

  def test_a_server_raising_in_its_block_is_closed
    kept = nil
    assert_raises(RuntimeError) do
      PhaseoAgentSdk.serve_mcp(tools: [adder], name: "raising", transport: "http") do |server|
        kept = server
        raise "boom"
      end
    end
    assert kept.closed?
  end

  def test_bad_annotations_are_refused_by_the_core
    bad = tool("add", execute: ->(_input, _rt) { 1 }, annotations: { read_only_hint: "yes" })
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.serve_mcp(tools: [bad], name: "x") { flunk "a server started" }
    end
    assert_includes error.message, "annotations.readOnlyHint must be a boolean"
  end

  def test_manual_tools_are_refused
    manual = tool("ask")
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.serve_mcp(tools: [manual], name: "x") { flunk "a server started" }
    end
    assert_equal "Tool ask has no execute and cannot be served over MCP", error.message
  end

  def test_an_agent_without_a_model_client_is_refused_with_the_cores_error
    agent = PhaseoAgentSdk.create_agent(id: "a", tools: [adder])
    error = assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk.serve_mcp(agent: agent, name: "x") }
    assert_equal "Tool a runs an agent and needs a model client to be served: give the server a client", error.message
  end

  def test_bad_options_name_what_is_wrong
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.serve_mcp(tools: [adder], name: "x", transport: { type: "smoke" })
    end
    assert_includes error.message, 'transport.type must be "stdio" or "http", got "smoke"'
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.serve_mcp(tools: [adder], name: "x", transport: { type: "stdio", port: 1 })
    end
    assert_includes error.message, "need type \"http\""
    assert_raises(ArgumentError) { PhaseoAgentSdk.serve_mcp(tools: [adder], name: "x", transport: 5) }
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.serve_mcp(tools: [adder], name: "x", transport: "http", tool_execution: { tool_concurency: 2 })
    end
    assert_includes error.message, "Invalid MCP server options: tool_execution: unknown field"
  end

  # examples/ruby/serve_tools.rb, used by a Ruby agent as an MCP server: the approval the
  # served `delete_notes` asks for reaches the agent's `on_elicitation`.
  def test_a_ruby_agent_uses_the_served_example
    asked = []
    notes = PhaseoAgentSdk.mcp_stdio_server(
      "notes", RbConfig.ruby, ["-I#{LIB}", File.join(ROOT, "examples/ruby/serve_tools.rb")], timeout_ms: 30_000,
      on_elicitation: lambda do |request, _info|
        asked << request["message"]
        { action: "accept", content: { approve: true } }
      end
    )
    agent = PhaseoAgentSdk.create_agent(id: "notes-user", mcp_servers: [notes])
    client = script({ tool_calls: [call("c1", "add_note", text: "call the bank"), call("c2", "add_note", text: "renew")] },
                    { tool_calls: [call("c3", "delete_notes")] }, { text: "done" })
    result = agent.run(input: "note, then clear", client: client)
    outputs = result.step_results.flat_map { |s| s["toolResults"] }.to_h { |r| [r["toolCallId"], r["result"]] }
    assert_equal "completed", result.status
    assert_equal [1, 2].sort, [outputs["c1"]["id"], outputs["c2"]["id"]].sort
    assert_equal "deleted 2 notes", outputs["c3"]
    assert_equal 1, asked.size
    assert_includes asked[0], "delete_notes"
  ensure
    agent&.close
  end
end
