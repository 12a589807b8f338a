# frozen_string_literal: true

module PhaseoAgentSdk
  # A run's result: its state (canonical JSON, continued later by any language) and
  # accessors for what applications read.
  class RunResult
    # Reads a state from its JSON text (a String holding UTF-8 text, of any encoding) or
    # its Hash form; raises StateError (`state_invalid`) when it is not a valid state,
    # whatever is wrong with it.
    def self.from_json(text)
      new(Internal.native { Native.canonical_state(text) })
    end

    def initialize(json)
      @json = json
    end

    # The canonical JSON text of the state (store it; continue from it later).
    def to_json(*_args) = @json
    alias to_s to_json

    # The state as plain Ruby (String keys).
    def state = (@state ||= Native.parse_json(@json))

    # The run record.
    def run = state["run"]

    # "completed", "waiting_for_human", "failed", "cancelled", "stopped"...
    def status = run["status"]

    # The final output (nil unless completed or stopped).
    def output = run["result"]

    # The run id.
    def run_id = run["id"]

    # Why the run stopped early, if it did.
    def stop_reason = run["stopReason"]

    # The final application context.
    def context = run["context"]

    # The conversation.
    def messages = run["messages"]

    # Cumulative usage (`{"inputTokens", "outputTokens", "totalTokens", "cost"}`).
    def usage = run["usage"]

    # The pause, when the run waits for a person.
    def pause = run["pause"]

    # The calls waiting for a decision or an output.
    def pending = (pause && pause["pendingToolCalls"]) || []

    # The run's error record, when it failed.
    def error = run["error"]

    # One record per model step (the product's `steps`: tool calls, usage, finish reason).
    def steps = state["steps"]

    # Per step, the tool results (`[{"toolResults" => [...]}, ...]`).
    def step_results = state["stepResults"]

    # The run's output items (messages, reasoning, tool calls and results), in order.
    def items = state["items"]

    def inspect = "#<PhaseoAgentSdk::RunResult status=#{status.inspect} run_id=#{run_id.inspect}>"
  end
end
