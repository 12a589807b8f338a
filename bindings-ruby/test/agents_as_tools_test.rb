# frozen_string_literal: true

require "test_helper"

# An agent as a tool of another (docs/behaviour.md §18): a nested approval pauses the outer
# run as "c1/n1", the outer continue from the stored JSON completes it, and the nested
# events name their parent call.
class AgentsAsToolsTest < Minitest::Test
  include SdkHelpers

  def researcher
    lookup = PhaseoAgentSdk::Tool.new(id: "lookup", require_approval: true, execute: ->(_input, _rt) { "fact" })
    PhaseoAgentSdk.create_agent(id: "researcher", tools: [lookup])
  end

  def test_a_nested_approval_surfaces_and_is_decided_on_the_outer_continue
    tool = researcher.as_tool(id: "research", description: "Researches")
    assert_equal "research", tool.id
    boss = PhaseoAgentSdk.create_agent(id: "boss", tools: [tool])
    client = script({ tool_calls: [call("c1", "research", input: "topic")] }, { tool_calls: [call("n1", "lookup")] },
                    { text: "inner done" }, { text: "All done." })
    paused = boss.run(input: "study", client: client)
    pending = paused.pending
    assert_equal [%w[c1/n1 lookup approval]], pending.map { |p| [p["call"]["id"], p["call"]["name"], p["kind"]] }
    error = assert_raises(PhaseoAgentSdk::AgentError) do
      boss.continue_run(state: paused.to_json, client: client, approvals: ["c1/n9"])
    end
    assert_equal "Unknown tool call c1/n9", error.message
    events = []
    done = boss.continue_run(state: paused.to_json, client: client, approvals: ["c1/n1"], on_event: ->(e) { events << e })
    assert_equal "All done.", done.output
    assert_equal "run.completed", events.select { |e| e["parentToolCallId"] == "c1" }.last["type"]
  end

  def test_nesting_deeper_than_eight_is_refused
    agent = PhaseoAgentSdk.create_agent(id: "a0")
    (1..8).each { |level| agent = PhaseoAgentSdk.create_agent(id: "a#{level}", tools: [agent.as_tool]) }
    error = assert_raises(PhaseoAgentSdk::AgentError) { PhaseoAgentSdk.create_agent(id: "top", tools: [agent.as_tool]) }
    assert_match(/agents nest 9 levels deep as tools, more than 8/, error.message)
  end
end
