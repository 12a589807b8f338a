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

    # `json`: the state's text, or the state a run just ended with, held natively (its
    # text is then written only when asked for; the status, output and other small fields
    # are read from its head, the text without the history).
    def initialize(json)
      if json.is_a?(String)
        @json = json
      else
        @native = json
      end
    end

    # The canonical JSON text of the state (store it; continue from it later).
    def to_json(*_args)
      return @json if @json

      # The native state is let go only once the text is there: a thread that finds neither
      # the text nor the native state reads the text another thread has just set.
      native = @native or return @json
      @json = native.to_json
      @native = nil
      @json
    end
    alias to_s to_json

    # The state as plain Ruby (String keys).
    def state = (@state ||= Native.parse_json(to_json))

    # The run record.
    def run = state["run"]

    # "completed", "waiting_for_human", "failed", "cancelled", "stopped"...
    def status = summary["status"]

    # The final output (nil unless completed or stopped).
    def output = summary["result"]

    # The run id.
    def run_id = summary["id"]

    # Why the run stopped early, if it did.
    def stop_reason = summary["stopReason"]

    # The final application context.
    def context = summary["context"]

    # The conversation.
    def messages = run["messages"]

    # Cumulative usage (`{"inputTokens", "outputTokens", "totalTokens", "cost"}`).
    def usage = summary["usage"]

    # The pause, when the run waits for a person.
    def pause = summary["pause"]

    # The calls waiting for a decision or an output.
    def pending = (pause && pause["pendingToolCalls"]) || []

    # The run's error record, when it failed.
    def error = summary["error"]

    # One record per model step (the product's `steps`: tool calls, usage, finish reason).
    def steps = state["steps"]

    # Per step, the tool results (`[{"toolResults" => [...]}, ...]`).
    def step_results = state["stepResults"]

    # The run's output items (messages, reasoning, tool calls and results), in order.
    def items = state["items"]

    def inspect = "#<PhaseoAgentSdk::RunResult status=#{status.inspect} run_id=#{run_id.inspect}>"

    private

    # The run record without its messages: from the native state's head while the whole
    # text has not been needed, else from the whole state.
    def summary
      @summary ||= (native = @native) ? Native.parse_json(native.head)["run"] : run
    end
  end
end
