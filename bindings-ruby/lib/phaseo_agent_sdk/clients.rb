# frozen_string_literal: true

module PhaseoAgentSdk
  # A model that answers from a script: each response `{text:, tool_calls: [{id:, name:,
  # arguments:}], usage: {input_tokens:, output_tokens:}, cost:, finish_reason:, fail:}`,
  # consumed in order across a run and its continues.
  class ScriptedClient
    KEYS = { "tool_calls" => "toolCalls", "finish_reason" => "finishReason",
             "input_tokens" => "inputTokens", "output_tokens" => "outputTokens" }.freeze
    private_constant :KEYS

    # How many responses were consumed so far.
    attr_accessor :cursor

    def initialize(responses, cursor: 0)
      raise ArgumentError, "ScriptedClient expects an Array of responses" unless responses.is_a?(Array)

      @responses = self.class.camel(Internal.stringify(responses))
      @cursor = cursor
    end

    # The native description of this client (internal).
    def native_spec = [@responses, @cursor]

    # A response Hash with the core's key names (`tool_calls` → `toolCalls`, ...).
    def self.camel(value)
      case value
      when Hash then value.each_with_object({}) { |(k, v), h| h[KEYS.fetch(k, k)] = camel(v) }
      when Array then value.map { |v| camel(v) }
      else value
      end
    end
  end

  # The offline test client: calls every tool once with arguments generated from its
  # schema, then summarizes.
  class TestClient
    attr_accessor :cursor

    def initialize
      @cursor = 0
    end

    # The native description of this client (internal).
    def native_spec = "test"
  end
end
