# frozen_string_literal: true

require "test_helper"

# Deferred tools and the core's built-in tool_search (docs/behaviour.md §17).
class ToolSearchTest < Minitest::Test
  include SdkHelpers

  # A host model answering `replies` in turn and keeping every request it was sent.
  def recording_model(replies)
    model = Object.new
    requests = []
    model.define_singleton_method(:generate) do |request|
      requests << request
      replies.shift or raise "the model was asked more often than scripted"
    end
    [model, requests]
  end

  def offered(requests) = requests.map { |r| r.tools.map(&:id) }

  def weather_tool(ran)
    tool("get_weather", description: "Current weather of a city", defer_loading: true,
                        parameters: { type: "object", properties: { city: { type: "string" } } },
                        execute: ->(input, _rt) { ran << input["city"]; "sunny in #{input['city']}" })
  end

  def test_a_deferred_tool_is_found_by_tool_search_and_then_runs
    ran = []
    echo = tool("echo", execute: ->(input, _rt) { input })
    agent = PhaseoAgentSdk.create_agent(id: "deferred", tools: [echo, weather_tool(ran)])
    model, requests = recording_model([
                                        { tool_calls: [call("c1", "tool_search", query: "weather in a city")] },
                                        { tool_calls: [call("c2", "get_weather", city: "Oslo")] },
                                        { text: "Sunny in Oslo." }
                                      ])
    done = agent.run(input: "weather?", client: model)
    assert_equal "completed", done.status
    assert_equal "Sunny in Oslo.", done.output
    assert_equal ["Oslo"], ran
    # Not offered at first; tool_search comes after the always-loaded tools and the found
    # tool joins at the end of the list.
    assert_equal [%w[echo tool_search], %w[echo tool_search get_weather], %w[echo tool_search get_weather]],
                 offered(requests)
    found = JSON.parse(tool_messages(done).find { |m| m["toolCallId"] == "c1" }["content"])
    assert_equal({ "tools" => [{ "id" => "get_weather", "description" => "Current weather of a city" }] }, found)
    assert_equal ["get_weather"], JSON.parse(done.to_json)["run"]["loadedTools"]
  end

  def test_a_deferred_tool_that_was_not_loaded_is_an_unknown_tool
    ran = []
    agent = PhaseoAgentSdk.create_agent(id: "deferred", tools: [weather_tool(ran)],
                                        tool_execution: { on_error: "return-to-model" })
    model, requests = recording_model([{ tool_calls: [call("c1", "get_weather", city: "Oslo")] }, { text: "no" }])
    done = agent.run(input: "weather?", client: model)
    assert_empty ran
    assert_equal [["tool_search"], ["tool_search"]], offered(requests)
    assert_includes tool_messages(done).first["content"], "Unknown tool 'get_weather'"
  end

  def test_loaded_tools_survive_a_pause_and_a_continue_from_json
    ran = []
    gate = tool("gate", require_approval: true, execute: ->(_input, _rt) { "opened" })
    tools = [gate, weather_tool(ran)]
    search_and_gate = [call("c1", "tool_search", query: "weather"), call("c2", "gate", env: "prod")]
    model, requests = recording_model([{ tool_calls: search_and_gate },
                                       { tool_calls: [call("c3", "get_weather", city: "Rome")] },
                                       { text: "done" }])
    paused = PhaseoAgentSdk.create_agent(id: "deferred", tools: tools).run(input: "go", client: model)
    assert_equal "waiting_for_human", paused.status
    stored = paused.to_json
    assert_equal ["get_weather"], JSON.parse(stored)["run"]["loadedTools"]
    # A new agent (as another process would have) continues from the JSON text.
    done = PhaseoAgentSdk.create_agent(id: "deferred", tools: tools)
                         .continue_run(state: stored, client: model, approvals: ["c2"])
    assert_equal "completed", done.status
    assert_equal ["Rome"], ran
    assert_equal [%w[gate tool_search], %w[gate tool_search get_weather], %w[gate tool_search get_weather]],
                 offered(requests)
  end

  def test_an_agent_with_deferred_tools_cannot_define_its_own_tool_search
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "bad", tools: [tool("tool_search", execute: ->(_i, _r) { 1 }),
                                                     tool("later", defer_loading: true, execute: ->(_i, _r) { 2 })])
    end
    assert_equal "definition_invalid", error.code
    assert_includes error.message, "'tool_search'"
  end

  def test_defer_loading_must_be_a_boolean
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "bad", tools: [tool("later", defer_loading: "yes", execute: ->(_i, _r) { 2 })])
    end
    assert_equal "definition_invalid", error.code
    assert_includes error.message, "defer_loading"
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      server = PhaseoAgentSdk.mcp_stdio_server("s", "cmd", defer_loading: 1)
      PhaseoAgentSdk.create_agent(id: "bad", mcp_servers: [server])
    end
    assert_includes error.message, "defer_loading must be true or false, got 1"
  end
end
