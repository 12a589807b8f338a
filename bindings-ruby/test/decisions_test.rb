# frozen_string_literal: true

require "test_helper"

# Human decisions beyond yes and no (docs/behaviour.md §14): an approval with an edited
# input, and a response given in the tool's place.
class DecisionsTest < Minitest::Test
  include SdkHelpers

  ENVIRONMENT = { type: "object", properties: { env: { type: "string", enum: %w[staging production] } },
                  required: ["env"], additionalProperties: false }.freeze

  def deploy_agent(ran)
    deploy = PhaseoAgentSdk::Tool.new(id: "deploy", description: "Deploy", parameters: ENVIRONMENT, require_approval: true,
                                      execute: ->(input, _rt) { ran << input; { "deployed" => input["env"] } })
    PhaseoAgentSdk.create_agent(id: "ops", tools: [deploy])
  end

  def paused_deploy(agent, client)
    paused = agent.run(input: "deploy", client: client)
    assert_equal "waiting_for_human", paused.status
    paused
  end

  def test_an_edited_approval_runs_the_tool_with_the_edited_input
    ran = []
    agent = deploy_agent(ran)
    client = script({ tool_calls: [call("c1", "deploy", env: "production")] }, { text: "Deployed to staging." })
    paused = paused_deploy(agent, client)
    events = []
    done = agent.continue_run(state: paused.to_json, client: client, on_event: ->(e) { events << e },
                              approvals: [PhaseoAgentSdk::ToolDecision.new(tool_call_id: "c1", edited_input: { env: "staging" })])
    assert_equal "completed", done.status
    assert_equal [{ "env" => "staging" }], ran
    assistant = done.messages.find { |m| m["role"] == "assistant" && m["toolCalls"] }
    assert_equal({ "env" => "staging" }, assistant["toolCalls"].first["input"])
    result = done.step_results.first["toolResults"].first
    assert_equal({ "env" => "staging" }, result["input"])
    assert_equal({ "env" => "production" }, result["originalInput"])
    started = events.find { |e| e["type"] == "tool.started" }
    assert_equal true, started["inputEdited"]
  end

  def test_an_edited_approval_as_a_hash
    ran = []
    agent = deploy_agent(ran)
    client = script({ tool_calls: [call("c1", "deploy", env: "production")] }, { text: "ok" })
    paused = paused_deploy(agent, client)
    done = agent.continue_run(state: paused, client: client, approvals: [{ tool_call_id: "c1", edited_input: { "env" => "staging" } }])
    assert_equal "completed", done.status
    assert_equal [{ "env" => "staging" }], ran
  end

  def test_an_invalid_edited_input_is_refused_and_the_state_stays_usable
    ran = []
    agent = deploy_agent(ran)
    client = script({ tool_calls: [call("c1", "deploy", env: "production")] }, { text: "Deployed." })
    paused = paused_deploy(agent, client)
    error = assert_raises(PhaseoAgentSdk::ContinueError) do
      agent.continue_run(state: paused, client: client, approvals: [{ tool_call_id: "c1", edited_input: { env: "moon" } }])
    end
    assert_equal "continue_invalid", error.code
    assert_includes error.message, "Edited input for tool call c1 is invalid: "
    assert_empty ran
    done = agent.continue_run(state: paused, client: client, approvals: ["c1"])
    assert_equal "completed", done.status
    assert_equal [{ "env" => "production" }], ran
  end

  def test_a_response_answers_in_the_tools_place
    ran = []
    agent = deploy_agent(ran)
    client = script({ tool_calls: [call("c1", "deploy", env: "production")] }, { text: "Done by hand." })
    paused = paused_deploy(agent, client)
    events = []
    done = agent.continue_run(state: paused, client: client, on_event: ->(e) { events << e },
                              responses: [PhaseoAgentSdk::ToolOutput.new(tool_call_id: "c1", output: { "deployed" => "by hand" })])
    assert_equal "completed", done.status
    assert_empty ran
    message = tool_messages(done).last
    assert_equal({ "deployed" => "by hand" }, JSON.parse(message["content"]))
    refute message["isError"]
    tool_events = events.select { |e| e["type"].start_with?("tool.") }
    assert_equal ["tool.completed"], tool_events.map { |e| e["type"] }
    assert_equal true, tool_events.first["respondedByHuman"]
  end

  def test_a_response_for_a_call_not_waiting_for_approval_is_refused
    manual = PhaseoAgentSdk.create_agent(id: "m", tools: [tool("ask")])
    client = script({ tool_calls: [call("q", "ask", env: "x")] }, { text: "got it" })
    waiting = manual.run(input: "go", client: client)
    error = assert_raises(PhaseoAgentSdk::ContinueError) do
      manual.continue_run(state: waiting, client: client, responses: [{ tool_call_id: "q", output: "x" }])
    end
    assert_includes error.message, "Tool call q is not waiting for approval"
  end

  def test_responses_on_a_streamed_continue
    ran = []
    agent = deploy_agent(ran)
    client = script({ tool_calls: [call("c1", "deploy", env: "production")] }, { text: "Answered." })
    paused = paused_deploy(agent, client)
    types = []
    done = agent.continue_stream(state: paused, client: client, responses: [{ tool_call_id: "c1", output: "manual" }]) do |event|
      types << event["type"]
    end
    assert_equal "completed", done.status
    assert_empty ran
    assert_includes types, "tool.completed"
    refute_includes types, "tool.started"
  end
end
