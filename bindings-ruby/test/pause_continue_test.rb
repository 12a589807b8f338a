# frozen_string_literal: true

require "test_helper"

# Pauses, stored state, continues (also refused ones), streams.
class PauseContinueTest < Minitest::Test
  include SdkHelpers

  def agent_and_client
    ran = []
    deploy = tool("deploy", require_approval: true, execute: ->(input, rt) { ran << rt.tool_call["id"]; { deployed: input["env"] } })
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [deploy])
    client = script({ tool_calls: [call("c1", "deploy", env: "prod"), call("c2", "deploy", env: "dev")] }, { text: "Deployed." })
    [agent, client, ran]
  end

  def test_pause_json_continue
    agent, client, ran = agent_and_client
    paused = agent.run(input: "deploy", client: client)
    assert_equal "waiting_for_human", paused.status
    assert_equal %w[c1 c2], paused.pending.map { |p| p["call"]["id"] }
    assert_equal "tool_approval", paused.pause["kind"]
    stored = paused.to_json
    assert_equal stored, PhaseoAgentSdk::RunResult.from_json(stored).to_json
    done = agent.continue_run(state: stored, client: client, approvals: ["c1"], rejections: [{ tool_call_id: "c2", reason: "not today" }])
    assert_equal "completed", done.status
    assert_equal "Deployed.", done.output
    assert_equal ["c1"], ran
    assert_includes tool_messages(done).last["content"], "not today"
  end

  def test_a_results_small_fields_come_before_its_text_and_agree_with_it
    agent, client, = agent_and_client
    paused = agent.run(input: "deploy", client: client)
    # Read from the state's head: the whole text is not written for these.
    assert_equal "waiting_for_human", paused.status
    assert_equal %w[c1 c2], paused.pending.map { |p| p["call"]["id"] }
    assert_nil paused.instance_variable_get(:@json), "the status and pause need no text"
    assert_equal paused.run_id, paused.run["id"]
    texts = Array.new(4) { Thread.new { paused.to_json } }.map(&:value)
    assert_equal 1, texts.uniq.size
    state = JSON.parse(texts.first)
    assert_equal 2, state["run"]["messages"].size # the input and the calls
    %w[status id pause usage error context stopReason].each do |key|
      assert_equal state["run"][key], paused.run[key], key
    end
    assert_equal state["run"]["usage"], paused.usage
    assert_equal texts.first, PhaseoAgentSdk::RunResult.from_json(texts.first).to_json
    assert_match(/status="waiting_for_human"/, paused.inspect)
  end

  def test_the_products_decision_and_output_structs
    agent, client, ran = agent_and_client
    paused = agent.run(input: "deploy", client: client)
    done = agent.continue_run(state: paused, client: client,
                              approvals: [PhaseoAgentSdk::ToolDecision.new(tool_call_id: "c1")],
                              rejections: [PhaseoAgentSdk::ToolDecision.new(tool_call_id: "c2", reason: "frozen")])
    assert_equal "completed", done.status
    assert_equal ["c1"], ran
    assert_includes tool_messages(done).last["content"], "frozen"
    assert_equal 2, done.steps.size
    assert_equal "Deployed.", done.output

    manual = PhaseoAgentSdk.create_agent(id: "m", tools: [tool("ask")])
    waiting = manual.run(input: "go", client: script({ tool_calls: [call("q", "ask", env: "x")] }, { text: "got it" }))
    assert_equal "waiting_for_human", waiting.status
    answered = manual.continue_run(state: waiting, client: script({ text: "got it" }),
                                   tool_outputs: [PhaseoAgentSdk::ToolOutput.new(tool_call_id: "q", output: { "answer" => 42 })])
    assert_equal "completed", answered.status
    assert_equal({ "answer" => 42 }, JSON.parse(tool_messages(answered).last["content"]))
  end

  def test_refused_continue_loses_nothing
    agent, client, ran = agent_and_client
    paused = agent.run(input: "deploy", client: client)
    error = assert_raises(PhaseoAgentSdk::ContinueError) do
      agent.continue_run(state: paused.to_json, client: client, approvals: ["nope"])
    end
    assert_equal "continue_invalid", error.code
    assert_empty ran
    done = agent.continue_run(state: paused, client: client, approvals: %w[c1 c2])
    assert_equal "completed", done.status
    assert_equal %w[c1 c2], ran.sort
  end

  def test_invalid_state_is_a_state_error
    agent, client, = agent_and_client
    error = assert_raises(PhaseoAgentSdk::StateError) { agent.continue_run(state: "{not json", client: client) }
    assert_equal "state_invalid", error.code
    assert_raises(PhaseoAgentSdk::StateError) { PhaseoAgentSdk::RunResult.from_json('{"version":1}') }
  end

  def test_stream_events_text_and_result
    agent = PhaseoAgentSdk.create_agent(id: "s", tools: [tool("echo", execute: ->(i, rt) { rt.emit_progress.call(step: 1); i })])
    streamed = agent.stream(input: "go", client: script({ tool_calls: [call("c", "echo", env: "x")] }, { text: "hello there" }))
    assert_kind_of Enumerator, streamed.full_stream
    types = streamed.full_stream.map { |e| e["type"] }
    assert_equal "run.started", types.first
    assert_equal "run.completed", types.last
    assert_includes types, "tool.preliminary_result"
    assert_equal "hello there", streamed.text_stream.to_a.join
    thinking = agent.stream(input: "go", client: script({ text: "a", reasoning: "because" }))
    assert_equal "because", thinking.reasoning_stream.to_a.join
    assert_equal types, streamed.map { |e| e["type"] }, "the stream is replayable"
    assert_equal "hello there", streamed.result.output

    seen = []
    result = agent.stream(input: "go", client: script({ text: "x" })) { |e| seen << e["type"] }
    assert_equal "x", result.output
    assert_equal "run.completed", seen.last
  end

  def test_continue_stream
    agent, client, ran = agent_and_client
    paused = agent.run(input: "deploy", client: client)
    streamed = agent.continue_stream(state: paused.to_json, client: client, approvals: %w[c1 c2])
    types = streamed.map { |e| e["type"] }
    assert_equal "run.resumed", types.first
    assert_equal "Deployed.", streamed.result.output
    assert_equal %w[c1 c2], ran.sort
    assert_raises(PhaseoAgentSdk::ContinueError) do
      agent.continue_stream(state: paused.to_json, client: client, approvals: ["nope"]).result
    end
  end

  def test_stream_of_a_failing_run_raises_on_result
    agent = PhaseoAgentSdk.create_agent(id: "s", tools: [tool("boom", execute: ->(_i, _r) { raise "kaput" })])
    streamed = agent.stream(input: "go", client: script({ tool_calls: [call("c", "boom", env: "x")] }))
    assert_includes streamed.map { |e| e["type"] }, "run.failed"
    error = assert_raises(PhaseoAgentSdk::ToolError) { streamed.result }
    assert_equal "tool_failed", error.code
  end
end
