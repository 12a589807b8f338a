# frozen_string_literal: true

require "minitest/autorun"
require "json"
require "phaseo_agent_sdk"

# Helpers shared by the suites.
module SdkHelpers
  OBJECT = { type: "object", properties: { env: { type: "string" } }, required: ["env"] }.freeze

  def call(id, name, args = {})
    { id: id, name: name, arguments: JSON.generate(args) }
  end

  def script(*responses)
    PhaseoAgentSdk::ScriptedClient.new(responses)
  end

  def tool(id, **fields)
    PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: id, description: "#{id} tool", parameters: OBJECT, **fields))
  end

  def monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def tool_messages(result)
    result.messages.select { |m| m["role"] == "tool" }
  end
end
