# frozen_string_literal: true

require "test_helper"

# Call budgets, retries, attempts and idempotency keys (docs/behaviour.md §15).
class ToolLimitsTest < Minitest::Test
  include SdkHelpers

  def test_max_calls_refuses_the_calls_beyond_the_budget
    ran = []
    search = tool("search", max_calls: 1, execute: ->(_input, rt) { ran << rt.tool_call["id"]; "hit" })
    agent = PhaseoAgentSdk.create_agent(id: "budget", tools: [search])
    events = []
    client = script({ tool_calls: [call("c1", "search", env: "a"), call("c2", "search", env: "b")] }, { text: "done" })
    done = agent.run(input: "search", client: client, on_event: ->(e) { events << e })
    assert_equal "completed", done.status
    assert_equal ["c1"], ran
    refused = tool_messages(done).find { |m| m["toolCallId"] == "c2" }
    assert_equal({ "error" => "Tool search may be called at most 1 times in a run" }, JSON.parse(refused["content"]))
    assert refused["isError"]
    assert_equal ["tool.failed"], events.select { |e| e["toolCallId"] == "c2" && e["type"].start_with?("tool.") }.map { |e| e["type"] }
  end

  def test_max_calls_zero_is_the_cores_definition_error
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "bad", tools: [tool("t", max_calls: 0, execute: ->(_i, _r) { 1 })])
    end
    assert_equal "definition_invalid", error.code
    assert_includes error.message, "max_calls must be a whole number of at least 1, got 0"
  end

  def test_a_retry_that_is_not_a_retry_setting_is_refused
    error = assert_raises(ArgumentError) do
      PhaseoAgentSdk.create_agent(id: "bad", tools: [tool("t", retry: 3, execute: ->(_i, _r) { 1 })])
    end
    assert_includes error.message, "retry must be a PhaseoAgentSdk::ToolRetry"
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "bad", tools: [tool("t", retry: { max_attempts: 0 }, execute: ->(_i, _r) { 1 })])
    end
    assert_includes error.message, "retry.max_attempts must be a whole number of at least 1, got 0"
  end

  def test_a_retried_call_sees_its_attempts_and_one_idempotency_key
    attempts = []
    keys = []
    flaky = tool("flaky", retry: PhaseoAgentSdk::ToolRetry.new(max_attempts: 3, backoff_ms: 10),
                          execute: lambda { |_input, rt|
                            attempts << rt.attempt
                            keys << rt.idempotency_key
                            raise "service unavailable" if rt.attempt < 3

                            "worked"
                          })
    agent = PhaseoAgentSdk.create_agent(id: "retry", tools: [flaky])
    events = []
    client = script({ tool_calls: [call("c1", "flaky", env: "x")] }, { text: "ok" })
    done = agent.run(input: "go", client: client, on_event: ->(e) { events << e })
    assert_equal "completed", done.status
    assert_equal [1, 2, 3], attempts
    assert_equal ["#{done.run_id}:c1"], keys.uniq
    assert_equal 3, keys.size
    tool_events = events.select { |e| e["type"].start_with?("tool.") }
    assert_equal %w[tool.started tool.retrying tool.retrying tool.completed], tool_events.map { |e| e["type"] }
    retrying = tool_events.select { |e| e["type"] == "tool.retrying" }
    assert_equal [2, 3], retrying.map { |e| e["attempt"] }
    assert_equal ["flaky"], retrying.map { |e| e["toolName"] }.uniq
    assert_equal ["c1"], retrying.map { |e| e["toolCallId"] }.uniq
    assert_includes retrying.first["error"], "service unavailable"
    assert_equal "worked", tool_messages(done).last["content"]
  end

  def test_retry_as_a_hash_and_exhausted_attempts_follow_on_error
    attempts = []
    down = tool("down", on_error: "return-to-model", retry: { max_attempts: 2 },
                        execute: ->(_input, rt) { attempts << rt.attempt; raise "still down" })
    agent = PhaseoAgentSdk.create_agent(id: "down", tools: [down])
    done = agent.run(input: "go", client: script({ tool_calls: [call("c1", "down", env: "x")] }, { text: "it is down" }))
    assert_equal "completed", done.status
    assert_equal [1, 2], attempts
    message = tool_messages(done).last
    assert message["isError"]
    assert_includes message["content"], "still down"
  end

  def test_the_agents_max_tool_calls
    ran = []
    read = tool("read", execute: ->(_input, rt) { ran << rt.tool_call["id"]; "data" })
    agent = PhaseoAgentSdk.create_agent(id: "agent-budget", tools: [read], tool_execution: { max_tool_calls: 2 })
    client = script({ tool_calls: [call("c1", "read", env: "a"), call("c2", "read", env: "b"), call("c3", "read", env: "c")] },
                    { text: "done" })
    done = agent.run(input: "go", client: client)
    assert_equal %w[c1 c2], ran.sort
    refused = tool_messages(done).find { |m| m["toolCallId"] == "c3" }
    assert_equal({ "error" => "A run may make at most 2 tool calls" }, JSON.parse(refused["content"]))
  end

  def test_a_runs_max_tool_calls_holds_across_a_continue
    ran = []
    read = tool("read", execute: ->(_input, rt) { ran << rt.tool_call["id"]; "data" })
    write = tool("write", require_approval: true, execute: ->(_input, rt) { ran << rt.tool_call["id"]; "written" })
    agent = PhaseoAgentSdk.create_agent(id: "run-budget", tools: [read, write])
    client = script({ tool_calls: [call("c1", "read", env: "a"), call("c2", "write", env: "b")] },
                    { tool_calls: [call("c3", "read", env: "c")] }, { text: "done" })
    paused = agent.run(input: "go", client: client, tool_execution: { max_tool_calls: 2 })
    assert_equal "waiting_for_human", paused.status
    done = agent.continue_run(state: paused.to_json, client: client, approvals: ["c2"], tool_execution: { max_tool_calls: 2 })
    assert_equal "completed", done.status
    assert_equal %w[c1 c2], ran
    refused = tool_messages(done).find { |m| m["toolCallId"] == "c3" }
    assert_equal({ "error" => "A run may make at most 2 tool calls" }, JSON.parse(refused["content"]))
  end

  def test_the_idempotency_key_is_the_same_for_a_call_approved_on_continue
    keys = []
    charge = tool("charge", require_approval: true, execute: ->(_input, rt) { keys << [rt.attempt, rt.idempotency_key]; "charged" })
    agent = PhaseoAgentSdk.create_agent(id: "pay", tools: [charge])
    client = script({ tool_calls: [call("c9", "charge", env: "x")] }, { text: "ok" })
    paused = agent.run(input: "buy", client: client)
    done = agent.continue_run(state: paused.to_json, client: client, approvals: ["c9"])
    assert_equal [[1, "#{paused.run_id}:c9"]], keys
    assert_equal paused.run_id, done.run_id
  end
end
