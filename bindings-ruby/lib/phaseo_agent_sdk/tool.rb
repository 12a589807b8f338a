# frozen_string_literal: true

module PhaseoAgentSdk
  # A tool, as in the product: `PhaseoAgentSdk::Tool.new(id:, execute: ->(input, runtime) {...}, ...)`.
  # `execute` nil makes a manual tool (the run pauses for its output). `input_schema`,
  # `output_schema`, `event_schema`: a JSON Schema Hash (checked by the core) or a callable
  # `->(value) { value }` that raises when the value is invalid. `require_approval`: true,
  # false or `->(input, runtime) { bool }`. `next_turn_params`: a Hash or
  # `->(input, runtime) { Hash }`. `max_calls`: how many of this tool's calls a run admits
  # (later calls get an error tool message). `retry`: a `ToolRetry` (or
  # `{max_attempts:, backoff_ms:}`) running a call that raises or times out again; the tool
  # reads `runtime.attempt` and `runtime.idempotency_key` (docs/behaviour.md §15).
  # `defer_loading: true`: the tool is not offered to the model until the built-in
  # `tool_search` (which the core then offers after the other tools) finds it; from the next
  # model request on it is offered to the end of the run, and the state keeps it loaded
  # (`loadedTools`) across a pause and continue (docs/behaviour.md §17).
  # `agent`: the Agent an agent tool runs, set by `Agent#as_tool` (docs/behaviour.md §18).
  # `annotations`: the MCP hints listed when the tool is served (docs/behaviour.md §19),
  # `{ read_only_hint: true, title: "…" }` (`destructive_hint`, `idempotent_hint`,
  # `open_world_hint`; camelCase keys work too), checked by the core.
  Tool = Struct.new(:id, :execute, :description, :parameters, :timeout_ms, :input_schema,
                    :output_schema, :event_schema, :require_approval, :on_tool_called,
                    :on_response_received, :next_turn_params, :on_error, :strict,
                    :input_examples, :max_calls, :retry, :defer_loading, :agent, :annotations,
                    keyword_init: true)

  # How a tool's failed call is tried again: `ToolRetry.new(max_attempts: 3, backoff_ms: 100)`.
  # `max_attempts` counts every attempt (the first included); the n-th retry waits
  # `backoff_ms * n` milliseconds (`backoff_ms` defaults to 0). Each retry is announced by a
  # `tool.retrying` event (`"toolCallId"`, `"toolName"`, `"attempt"`, `"error"`).
  ToolRetry = Struct.new(:max_attempts, :backoff_ms, keyword_init: true)

  # Returns the tool (the product's identity function; checks the type).
  def self.define_tool(tool)
    raise ArgumentError, "define_tool expects a PhaseoAgentSdk::Tool, got #{tool.class}" unless tool.is_a?(Tool)

    tool
  end

  # A validator callable checking values against a JSON Schema (draft 2020-12) in the
  # core: returns the value, raises `ArgumentError("<pointer>: <reason>")` when invalid.
  def self.json_schema_validator(schema)
    schema = Internal.stringify(schema, "schema")
    Internal.native { Native.schema_check(schema, nil) }
    lambda do |value|
      problem = Internal.native { Native.schema_check(schema, value) }
      raise ArgumentError, problem if problem

      value
    end
  end

  # Built-in stop conditions (`stop_when: [PhaseoAgentSdk.step_count_is(3)]`), in the core's
  # definition format.
  def self.step_count_is(n) = { "stepCountIs" => n }
  # Stops once this many tokens were used.
  def self.max_tokens_used(n) = { "maxTokensUsed" => n }
  # Stops once the run cost this much.
  def self.max_cost(x) = { "maxCost" => x }
  # Stops after this many milliseconds.
  def self.max_duration(ms) = { "maxDuration" => ms }
  # Stops after a call to this tool.
  def self.has_tool_call(name) = { "hasToolCall" => name } # rubocop:disable Naming/PredicateName
  # Stops on this finish reason.
  def self.finish_reason_is(reason) = { "finishReasonIs" => reason }
end
