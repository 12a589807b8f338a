# frozen_string_literal: true

module PhaseoAgentSdk
  AGENT_KEYS = %i[id instructions model tools max_steps tool_execution require_approval stop_when
                  model_retry output_schema parse_output human_review temperature max_output_tokens top_p state_secrets
                  tool_choice parallel_tool_calls active_tools store mcp_servers lease].freeze
  # Per-run settings (`traceparent:` is the W3C traceparent of the caller's span: the run's
  # span becomes its child, a continue's links to it).
  RUN_OVERRIDES = %i[model max_steps stop_when model_retry tool_execution temperature
                     max_output_tokens top_p tool_choice parallel_tool_calls active_tools traceparent].freeze
  private_constant :AGENT_KEYS, :RUN_OVERRIDES

  # Defines an agent from a Hash (or keywords): `create_agent(id:, tools: [...],
  # tool_execution: { tool_concurrency: 4 }, require_approval: ->(tool_call, runtime) {...})`.
  # `parse_output: ->(text) { value }` turns the final text into the output, which
  # `output_schema` then checks (docs/behaviour.md §3). Unknown keys raise ArgumentError, as
  # in the product.
  def self.create_agent(definition = nil, **keywords)
    Agent.new(definition ? definition.to_h.merge(keywords) : keywords)
  end

  # An agent: `run`, `continue_run`, `stream`.
  class Agent
    include DefinitionSpec

    def initialize(definition)
      definition = definition.transform_keys(&:to_sym)
      unknown = definition.keys - AGENT_KEYS
      raise ArgumentError, "unknown agent definition keys: #{unknown.join(', ')}" unless unknown.empty?

      @callables = []
      store = definition.delete(:store)
      store = AccessorRunStore.new(store) if store && !store.is_a?(RunStore)
      @definition = definition
      spec = agent_spec(definition)
      @native = Internal.native { Native::Agent.new(spec, store&.native) }
      # The registry holds this agent's callables until the agent is collected.
      ObjectSpace.define_finalizer(self, Internal.releaser(@callables))
    end

    # Runs the agent to completion or to a pause. Blocks this thread (without holding the
    # GVL while Rust waits); tools run on Ruby threads. Raises an AgentError subclass when
    # the run fails (its `result` is the failed state).
    def run(input:, client:, context: nil, messages: nil, on_event: nil, cancel: nil, **overrides)
      call(client, on_event, cancel, overrides, { "input" => input, "context" => context, "messages" => messages })
    end

    # Continues a paused run from its state (a RunResult, its JSON text or Hash) with the
    # decisions: approvals (ids, ToolDecision or `{tool_call_id:, reason:, edited_input:}`),
    # rejections (ids or `{tool_call_id:, reason:}`), tool_outputs (`{tool_call_id:, output:}`),
    # responses (`{tool_call_id:, output:}`: a person's answer to an approval-gated call, which
    # then never runs), human_input.
    def continue_run(client:, state: nil, run: nil, run_id: nil, approvals: [], rejections: [], tool_outputs: [],
                     responses: [], human_input: nil, context: nil, on_event: nil, cancel: nil, **overrides)
      state = run if state.nil?
      raise ArgumentError, "continue_run needs state: (a RunResult or its JSON) or run_id:" if state.nil? && run_id.nil?

      call(client, on_event, cancel, overrides,
           decided(approvals, rejections, tool_outputs, responses, human_input, context),
           { "run_id" => run_id && Internal.name(run_id, "run_id") }, state_arg(state))
    end

    # The agent's id.
    def id
      @definition[:id]
    end

    # A tool that runs this agent (docs/behaviour.md §18): `id` defaults to the agent's id,
    # `parameters` to one string `"input"`, which is the nested run's input; the nested
    # run's output is the tool's output. When the nested run pauses, the outer run pauses
    # too, listing its calls as `"<outer call id>/<nested call id>"`; decisions for those
    # ids on the outer `continue_run` go to the nested run.
    def as_tool(id: nil, description: nil, parameters: nil)
      Tool.new(id: id || self.id, description: description, parameters: parameters, agent: self)
    end

    # The definition an agent tool of another agent runs (its functions are registered by
    # that agent).
    def nested_definition
      @definition
    end

    # Stops the agent's MCP servers.
    def close
      Internal.native { @native.close }
      nil
    end

    # Finishes a stored run whose worker died (its lease expired), with the decisions
    # stored for it.
    def recover(run_id, client:, on_event: nil, cancel: nil, **overrides)
      call(client, on_event, cancel, overrides, {}, "run_id" => Internal.name(run_id, "run_id"), "recover" => true)
    end

    # Streams a run: returns a StreamResult (`full_stream`, `text_stream`, `item_stream`,
    # `result`, `cancel`; Enumerable over the events). With a block, yields each event and
    # returns the result.
    def stream(input:, client:, context: nil, messages: nil, cancel: nil, **overrides, &block)
      streamed(client, cancel, overrides, block, { "input" => input, "context" => context, "messages" => messages })
    end

    # Streams a continue from a state (as `continue_run` with a state; returns a
    # StreamResult, or with a block yields the events and returns the result).
    def continue_stream(client:, state:, approvals: [], rejections: [], tool_outputs: [], responses: [],
                        human_input: nil, context: nil, cancel: nil, **overrides, &block)
      raise ArgumentError, "continue_stream needs state: (a RunResult, its JSON text or a Hash)" if state.nil?

      streamed(client, cancel, overrides, block,
               decided(approvals, rejections, tool_outputs, responses, human_input, context), {}, state_arg(state))
    end

    private

    # `options`: the run's or continue's own options (canonical names); `top`: what only the
    # native call takes (run id, recover); `state`: the state to continue (its JSON text or
    # a Hash; the native side reads it, refusing anything else as state_invalid).
    def call(client, on_event, cancel, overrides, options, top = {}, state = nil)
      unknown = overrides.keys - RUN_OVERRIDES
      raise ArgumentError, "unknown run options: #{unknown.join(', ')}" unless unknown.empty?
      raise ArgumentError, "cancel must be a PhaseoAgentSdk::CancelToken" unless cancel.nil? || cancel.is_a?(CancelToken)

      run_ids = []
      spec = { "client" => client_spec(client, run_ids),
               "options" => overrides_spec(overrides, run_ids).merge(options).compact }.merge(top)
      spec["on_event"] = (run_ids << Internal.register(on_event)).last if on_event
      spec = spec.compact
      http = client.is_a?(HttpClient) ? client.native : nil
      kind, payload, cursor = Internal.native { @native.call(spec, cancel, http, state) }
      client.cursor = cursor if client.is_a?(ScriptedClient)
      Internal.raise_error(payload) if kind == "error"

      RunResult.new(payload)
    ensure
      Internal.release(run_ids) if run_ids
    end

    def streamed(client, cancel, overrides, block, options, top = {}, state = nil)
      unknown = overrides.keys - RUN_OVERRIDES
      raise ArgumentError, "unknown run options: #{unknown.join(', ')}" unless unknown.empty?

      run_ids = []
      spec = { "client" => client_spec(client, run_ids),
               "options" => overrides_spec(overrides, run_ids).merge(options).compact,
               "stream" => true }.merge(top).compact
      http = client.is_a?(HttpClient) ? client.native : nil
      kind, native = Internal.native { @native.call(spec, cancel, http, state) }
      Internal.raise_error(native) if kind == "error"

      result = StreamResult.new(native, -> { Internal.release(run_ids) })
      return result unless block

      result.each(&block)
      result.result
    end

    # Run-level callables (stop conditions) are released when the run ends (`run_ids`).
    def overrides_spec(o, run_ids)
      spec = o.compact.to_h { |k, v| [Internal.camel(k.to_s), Internal.stringify(v, k.to_s)] }
      spec["stopWhen"] = stop_specs(o[:stop_when], run_ids) if o[:stop_when]
      spec["modelRetry"] = settings(o[:model_retry]) if o[:model_retry]
      spec["toolExecution"] = settings(o[:tool_execution]) if o[:tool_execution]
      spec
    end

    # A continue's own options (canonical names).
    def decided(approvals, rejections, tool_outputs, responses, human_input, context)
      { "approvals" => decisions(approvals), "rejections" => decisions(rejections),
        "toolOutputs" => outputs(tool_outputs), "responses" => outputs(responses, "a response"),
        "humanInput" => human_input, "context" => context }
    end

    # A RunResult as its JSON text; any other state as it is (the native side reads a
    # String or a Hash and refuses anything else as state_invalid).
    def state_arg(state)
      state.is_a?(RunResult) ? state.to_json : state
    end

    # Approvals or rejections: ids, ToolDecision or Hashes; an `edited_input` (nil: none) is
    # handed to the core, which checks it against the tool and the pending call.
    def decisions(list)
      Array(list).map do |d|
        case d
        when String, Symbol then d.to_s
        when Hash, ToolDecision
          d = Internal.string_keys(d)
          decision = { "toolCallId" => d["tool_call_id"], "reason" => d["reason"] }.compact
          decision["editedInput"] = Internal.stringify(d["edited_input"], "edited_input") unless d["edited_input"].nil?
          decision
        else raise ArgumentError, "a decision is a tool call id or {tool_call_id:, reason:, edited_input:}, got #{d.class}"
        end
      end
    end

    def outputs(list, what = "a tool output")
      Array(list).map do |o|
        o = Internal.string_keys(o)
        raise ArgumentError, "#{what} is {tool_call_id:, output:}" unless o.key?("tool_call_id")

        { "toolCallId" => Internal.name(o["tool_call_id"], "tool_call_id"), "output" => o["output"] }
      end
    end
  end
end
