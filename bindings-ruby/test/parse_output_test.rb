# frozen_string_literal: true

require "test_helper"

# An agent's `parse_output` (docs/behaviour.md §3): the core runs it on the final text and
# `output_schema` on what it returns.
class ParseOutputTest < Minitest::Test
  include SdkHelpers

  def test_the_parsed_value_is_checked_by_the_output_schema
    agent = PhaseoAgentSdk.create_agent(id: "parsed", parse_output: ->(text) { JSON.parse(text)["total"] },
                                        output_schema: { type: "integer" })
    assert_equal 5, agent.run(input: "go", client: script({ text: '{"total": 5}' })).output
    error = assert_raises(PhaseoAgentSdk::AgentError) { agent.run(input: "go", client: script({ text: '{"total": "five"}' })) }
    assert_equal "agent_output_invalid", error.code
  end

  def test_a_parse_output_that_raises_fails_the_run
    agent = PhaseoAgentSdk.create_agent(id: "raising", parse_output: ->(_text) { raise "not a verdict" })
    error = assert_raises(PhaseoAgentSdk::AgentError) { agent.run(input: "go", client: script({ text: "hi" })) }
    assert_equal "agent_output_invalid", error.code
    assert_includes error.message, "not a verdict"
  end

  def test_a_parse_output_that_is_not_callable_is_refused_in_ruby_names
    error = assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk.create_agent(id: "bad", parse_output: "json") }
    assert_equal "Invalid agent definition: parse_output must be a function (text) => output", error.message
  end
end
