# frozen_string_literal: true

module PhaseoAgentSdk
  # Every SDK error: `code` (docs/behaviour.md §9), `result` (the failed run's state, when there is one),
  # `target` (for validation errors) and `gateway` (HTTP details of gateway errors).
  class AgentError < StandardError
    attr_reader :code, :result, :target, :gateway

    # The HTTP status of a gateway error.
    def status = gateway && gateway["status"]

    # The request id of a gateway error.
    def request_id = gateway && gateway["requestId"]

    def initialize(message = nil, code: nil, result: nil, target: nil, gateway: nil)
      super(message)
      @code = code
      @result = result
      @target = target
      @gateway = gateway
    end
  end

  # The agent or a tool is defined wrongly (`definition_invalid`).
  class DefinitionError < AgentError; end
  # A stored state cannot be read (`state_invalid`).
  class StateError < AgentError; end
  # A continue was refused (`continue_invalid`); nothing ran.
  class ContinueError < AgentError; end
  # A tool failed the run (`tool_failed`, `tool_timeout`, `unknown_tool`, validation codes).
  class ToolError < AgentError; end
  # The model failed (`model_failed`, `gateway`).
  class ModelError < AgentError; end
  # The run was cancelled (`cancelled`).
  class CancelledError < AgentError; end
  # The run hit its step limit (`max_steps`).
  class MaxStepsError < AgentError; end
  # A run store failed (`store_failed`, `lease_lost`).
  class StoreError < AgentError; end
  # An MCP server could not start, died or broke the protocol (`mcp_failed`).
  class McpError < AgentError; end

  ERROR_CLASSES = {
    "definition_invalid" => DefinitionError, "state_invalid" => StateError,
    "continue_invalid" => ContinueError, "model_failed" => ModelError, "gateway" => ModelError,
    "cancelled" => CancelledError, "max_steps" => MaxStepsError,
    "store_failed" => StoreError, "lease_lost" => StoreError, "mcp_failed" => McpError
  }.freeze
  private_constant :ERROR_CLASSES

  # The error class of a code.
  def self.error_class(code)
    ERROR_CLASSES.fetch(code, ToolError)
  end
end
