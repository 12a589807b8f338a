# frozen_string_literal: true

require "test_helper"

require "socket"
require "tmpdir"
require "fileutils"

# MCP servers (docs/behaviour.md §11) through the Ruby binding, against
# @modelcontextprotocol/server-everything over stdio and Streamable HTTP, and the
# project's test server (tests/mcp/test_server.py, the official Python `mcp` package in
# .venvs/py), all installed by `make mcp-servers`. A missing server FAILS the test.
class McpTest < Minitest::Test
  include SdkHelpers

  ROOT = File.expand_path("../..", __dir__)
  EVERYTHING = File.join(ROOT, "tests/mcp/node_modules/.bin/mcp-server-everything")
  MCP_PYTHON = File.join(ROOT, ".venvs/py/bin/python")
  TEST_SERVER = File.join(ROOT, "tests/mcp/test_server.py")

  def everything
    flunk "@modelcontextprotocol/server-everything is not installed: run `make mcp-servers`" unless File.exist?(EVERYTHING)
    EVERYTHING
  end

  def setup
    @markers = Dir.mktmpdir("phaseo-mcp-rb-")
  end

  def teardown
    FileUtils.remove_entry(@markers) if @markers
  end

  # The project's Python test server over stdio, writing marker files into @markers.
  def mcp_test_server(name, **options)
    unless File.exist?(MCP_PYTHON) && File.exist?(File.join(ROOT, ".venvs/py/.mcp"))
      flunk "the Python `mcp` package (.venvs/py) is not installed: run `make mcp-servers`"
    end
    PhaseoAgentSdk.mcp_stdio_server(name, MCP_PYTHON, [TEST_SERVER],
                                    env: { PHASEO_MCP_MARKERS: @markers, PHASEO_MCP_NAME: name }, **options)
  end

  def marker(name) = File.join(@markers, name)

  def wait_until(seconds)
    deadline = monotonic + seconds
    sleep 0.02 until yield || monotonic > deadline
    yield
  end

  def test_server_everything_over_stdio
    everything_round_trip(PhaseoAgentSdk.mcp_stdio_server("everything", everything, ["stdio"], tool_prefix: "ev",
                                                          filter: ->(info) { (@seen ||= []) << info["name"]; true }))
    assert_includes @seen, "echo"
  end

  def test_server_everything_over_streamable_http
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
    out, err = IO.pipe
    pid = Process.spawn({ "PORT" => port.to_s }, everything, "streamableHttp", in: File::NULL, out: File::NULL, err: err)
    err.close
    listening = Thread.new { out.each_line.any? { |line| line.include?("listening on port") } }
    assert listening.join(30)&.value, "server-everything did not start listening"
    everything_round_trip(PhaseoAgentSdk.mcp_http_server("everything", "http://127.0.0.1:#{port}/mcp", { "X-Test" => "1" },
                                                         bearer_token: "not-checked", tool_prefix: "ev"))
  ensure
    if pid
      Process.kill("KILL", pid)
      Process.wait(pid)
    end
    out&.close
  end

  def everything_round_trip(server)
    agent = PhaseoAgentSdk.create_agent(id: "everything", mcp_servers: [server])
    requests = []
    model = Object.new
    replies = [{ tool_calls: [call("c1", "ev_echo", message: "hi"), call("c2", "ev_get-sum", a: 2, b: 3)] }, { text: "done" }]
    model.define_singleton_method(:generate) { |request| requests << request; replies.shift }
    result = agent.run(input: "go", client: model)
    assert_equal "completed", result.status
    assert_includes requests.first.tools.map(&:id), "ev_echo"
    contents = tool_messages(result).map { |m| m["content"] }
    assert_includes contents[0], "Echo: hi"
    assert_includes contents[1], "The sum of 2 and 3 is 5."
  ensure
    agent&.close
  end

  # A tool from a declared type (docs/behaviour.md §20) next to a plain tool and an MCP
  # server's tools, in one turn.
  def test_typed_plain_and_mcp_tools_mix
    require_relative "typed_params"
    typed = PhaseoAgentSdk.typed_tool(id: "file", description: "Files a tree", params: TypedParams::Category) do |tree, _rt|
      tree.children.map(&:name)
    end
    plain = tool("deploy", execute: ->(input, _rt) { { deployed: input["env"] } })
    server = PhaseoAgentSdk.mcp_stdio_server("everything", everything, ["stdio"], tool_prefix: "ev")
    agent = PhaseoAgentSdk.create_agent(id: "mix", tools: [typed, plain], mcp_servers: [server])
    requests = []
    model = Object.new
    replies = [{ tool_calls: [call("c1", "file", name: "home", children: [{ name: "mugs" }]), call("c2", "deploy", env: "prod"),
                              call("c3", "ev_echo", message: "hi")] }, { text: "done" }]
    model.define_singleton_method(:generate) { |request| requests << request; replies.shift }
    result = agent.run(input: "go", client: model)
    assert_equal "completed", result.status
    offered = requests.first.tools
    assert_equal TypedParams::Category.json_schema, offered.find { |t| t.id == "file" }.parameters
    assert_includes offered.map(&:id), "ev_echo"
    contents = tool_messages(result).map { |m| m["content"] }
    assert_equal ["mugs"], JSON.parse(contents[0])
    assert_equal({ "deployed" => "prod" }, JSON.parse(contents[1]))
    assert_includes contents[2], "Echo: hi"
  ensure
    agent&.close
  end

  def test_destructive_approval_pauses_and_a_new_agent_continues_from_json
    client = script({ tool_calls: [call("c1", "echo", text: "free"), call("c2", "delete_file", path: "a.txt")] },
                    { text: "deleted" })
    agent = PhaseoAgentSdk.create_agent(id: "gate", mcp_servers: [mcp_test_server("files", require_approval: "destructive")])
    paused = agent.run(input: "go", client: client)
    assert_equal "waiting_for_human", paused.status
    assert_equal ["c2"], paused.pending.map { |p| p["call"]["id"] } # echo is read-only: not gated
    refute File.exist?(marker("deleted-a.txt"))
    stored = paused.to_json
    agent.close
    # A new agent (as another process would have), from the JSON.
    agent = PhaseoAgentSdk.create_agent(id: "gate", mcp_servers: [mcp_test_server("files", require_approval: "destructive")])
    done = agent.continue_run(state: stored, client: client, approvals: ["c2"])
    assert_equal "completed", done.status
    assert_equal "deleted", done.output
    assert_equal [Process.pid.to_s], File.read(marker("deleted-a.txt")).split
    assert_includes tool_messages(done).map { |m| m["content"] }, "deleted a.txt"
  ensure
    agent&.close
  end

  def test_a_deferred_server_offers_its_tools_only_once_tool_search_finds_them
    agent = PhaseoAgentSdk.create_agent(id: "deferred", mcp_servers: [mcp_test_server("t", defer_loading: true)])
    requests = []
    model = Object.new
    replies = [{ tool_calls: [call("c1", "tool_search", query: "echo", limit: 1)] },
               { tool_calls: [call("c2", "echo", text: "found me")] }, { text: "done" }]
    model.define_singleton_method(:generate) { |request| requests << request; replies.shift }
    done = agent.run(input: "go", client: model)
    assert_equal "completed", done.status
    assert_equal [["tool_search"], %w[tool_search echo], %w[tool_search echo]], requests.map { |r| r.tools.map(&:id) }
    found = JSON.parse(tool_messages(done).first["content"])
    assert_equal ["echo"], found["tools"].map { |t| t["id"] }
    assert_equal "found me", tool_messages(done).last["content"]
    assert_equal ["echo"], JSON.parse(done.to_json)["run"]["loadedTools"]
  ensure
    agent&.close
  end

  def test_a_timeout_returns_on_time_and_the_server_sees_the_cancellation
    # The deadline is 1.5 s away so that the server has begun the call (a loaded machine may
    # take several hundred ms to hand it over) before the cancellation reaches it.
    server = mcp_test_server("t", timeout_ms: 60_000, tool_timeouts: { slow: 1500 }, on_error: "return-to-model")
    agent = PhaseoAgentSdk.create_agent(id: "slow", mcp_servers: [server])
    agent.run(input: "warm", client: script({ text: "ok" })) # the server is up
    started = monotonic
    result = agent.run(input: "go", client: script({ tool_calls: [call("c1", "slow", seconds: 20, tag: "p1")] },
                                                   { text: "ok" }))
    assert_operator monotonic - started, :<, 3.0
    assert_includes tool_messages(result).first["content"], "Tool slow timed out after 1500ms"
    assert wait_until(10) { File.exist?(marker("cancelled-p1")) }, "no notifications/cancelled"
    refute File.exist?(marker("finished-p1"))
  ensure
    agent&.close
  end

  def test_a_crashed_server_fails_the_run_with_mcp_failed
    agent = PhaseoAgentSdk.create_agent(id: "crash", mcp_servers: [mcp_test_server("t")])
    error = assert_raises(PhaseoAgentSdk::McpError) do
      agent.run(input: "go", client: script({ tool_calls: [call("c1", "crash")] }, { text: "ok" }))
    end
    assert_equal "mcp_failed", error.code
    assert error.message.start_with?("MCP server 't' exited"), error.message
    assert_equal "failed", error.result.status
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
