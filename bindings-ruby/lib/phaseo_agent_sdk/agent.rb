# frozen_string_literal: true

module PhaseoAgentSdk
  AGENT_KEYS = %i[id instructions model tools max_steps tool_execution require_approval stop_when
                  model_retry output_schema human_review temperature max_output_tokens top_p state_secrets
                  tool_choice parallel_tool_calls active_tools store mcp_servers lease].freeze
  RUN_OVERRIDES = %i[model max_steps stop_when model_retry tool_execution temperature
                     max_output_tokens top_p tool_choice parallel_tool_calls active_tools].freeze
  private_constant :AGENT_KEYS, :RUN_OVERRIDES

  # Defines an agent from a Hash (or keywords): `create_agent(id:, tools: [...],
  # tool_execution: { tool_concurrency: 4 }, require_approval: ->(tool_call, runtime) {...})`.
  # Unknown keys raise ArgumentError, as in the product.
  def self.create_agent(definition = nil, **keywords)
    Agent.new(definition ? definition.to_h.merge(keywords) : keywords)
  end

  # An agent: `run`, `continue_run`, `stream`.
  class Agent
    def initialize(definition)
      definition = definition.transform_keys(&:to_sym)
      unknown = definition.keys - AGENT_KEYS
      raise ArgumentError, "unknown agent definition keys: #{unknown.join(', ')}" unless unknown.empty?

      @callables = []
      store = definition.delete(:store)
      store = AccessorRunStore.new(store) if store && !store.is_a?(RunStore)
      spec = agent_spec(definition)
      @native = Internal.native { Native::Agent.new(spec, store&.native) }
      # The registry holds this agent's callables until the agent is collected.
      ObjectSpace.define_finalizer(self, Internal.releaser(@callables))
    end

    # Runs the agent to completion or to a pause. Blocks this thread (without holding the
    # GVL while Rust waits); tools run on Ruby threads. Raises an AgentError subclass when
    # the run fails (its `result` is the failed state).
    def run(input:, client:, context: nil, messages: nil, on_event: nil, cancel: nil, **overrides)
      call(client, on_event, cancel, overrides) do |spec|
        spec.merge("input" => input, "context" => context, "messages" => messages)
      end
    end

    # Continues a paused run from its state (a RunResult, its JSON text or Hash) with the
    # decisions: approvals/rejections (ids or `{tool_call_id:, reason:}`), tool_outputs
    # (`{tool_call_id:, output:}`), human_input.
    def continue_run(client:, state: nil, run: nil, run_id: nil, approvals: [], rejections: [], tool_outputs: [],
                     human_input: nil, context: nil, on_event: nil, cancel: nil, **overrides)
      state ||= run
      raise ArgumentError, "continue_run needs state: (a RunResult or its JSON) or run_id:" if state.nil? && run_id.nil?

      call(client, on_event, cancel, overrides) do |spec|
        spec.merge("state" => state && state_text(state), "run_id" => run_id&.to_s, "approvals" => decisions(approvals),
                   "rejections" => decisions(rejections), "tool_outputs" => outputs(tool_outputs),
                   "human_input" => human_input, "context" => context)
      end
    end

    # Stops the agent's MCP servers.
    def close
      Internal.native { @native.close }
      nil
    end

    # Finishes a stored run whose worker died (its lease expired), with the decisions
    # stored for it.
    def recover(run_id, client:, on_event: nil, cancel: nil, **overrides)
      call(client, on_event, cancel, overrides) { |spec| spec.merge("run_id" => run_id.to_s, "recover" => true) }
    end

    # Streams a run: returns a StreamResult (`full_stream`, `text_stream`, `item_stream`,
    # `result`, `cancel`; Enumerable over the events). With a block, yields each event and
    # returns the result.
    def stream(input:, client:, context: nil, messages: nil, cancel: nil, **overrides, &block)
      streamed(client, cancel, overrides, block) do |spec|
        spec.merge("input" => input, "context" => context, "messages" => messages)
      end
    end

    # Streams a continue from a state (as `continue_run` with a state; returns a
    # StreamResult, or with a block yields the events and returns the result).
    def continue_stream(client:, state:, approvals: [], rejections: [], tool_outputs: [], human_input: nil,
                        context: nil, cancel: nil, **overrides, &block)
      streamed(client, cancel, overrides, block) do |spec|
        spec.merge("state" => state_text(state), "approvals" => decisions(approvals),
                   "rejections" => decisions(rejections), "tool_outputs" => outputs(tool_outputs),
                   "human_input" => human_input, "context" => context)
      end
    end

    private

    def call(client, on_event, cancel, overrides)
      unknown = overrides.keys - RUN_OVERRIDES
      raise ArgumentError, "unknown run options: #{unknown.join(', ')}" unless unknown.empty?
      raise ArgumentError, "cancel must be a PhaseoAgentSdk::CancelToken" unless cancel.nil? || cancel.is_a?(CancelToken)

      run_ids = []
      spec = { "client" => client_spec(client, run_ids), "overrides" => overrides_spec(overrides) }
      spec["on_event"] = (run_ids << Internal.register(on_event)).last if on_event
      spec = yield(spec).compact
      http = client.is_a?(HttpClient) ? client.native : nil
      kind, payload, cursor = Internal.native { @native.call(spec, cancel, http) }
      client.cursor = cursor if client.is_a?(ScriptedClient)
      raise Internal.error_from_json(payload) if kind == "error"

      RunResult.new(payload)
    ensure
      Internal.release(run_ids) if run_ids
    end

    def streamed(client, cancel, overrides, block)
      unknown = overrides.keys - RUN_OVERRIDES
      raise ArgumentError, "unknown run options: #{unknown.join(', ')}" unless unknown.empty?

      run_ids = []
      spec = yield({ "client" => client_spec(client, run_ids), "overrides" => overrides_spec(overrides),
                     "stream" => true }).compact
      http = client.is_a?(HttpClient) ? client.native : nil
      kind, native = Internal.native { @native.call(spec, cancel, http) }
      raise Internal.error_from_json(native) if kind == "error"

      result = StreamResult.new(native, -> { Internal.release(run_ids) })
      return result unless block

      result.each(&block)
      result.result
    end

    def client_spec(client, run_ids)
      return nil if client.is_a?(HttpClient)
      return client.native_spec if client.respond_to?(:native_spec)
      host_client_spec(client, run_ids)
    end

    # A model client written in Ruby: an object with `generate(request)` and/or
    # `stream(request) { |event| ... }`, or a callable `->(request) { response }`. It gets
    # a `ModelRequest` and answers a `ModelResponse` or a Hash (see ModelBridge).
    def host_client_spec(client, run_ids)
      generate = client.respond_to?(:generate) ? client.method(:generate) : nil
      generate ||= client if !client.respond_to?(:stream) && client.respond_to?(:call)
      unless generate || client.respond_to?(:stream)
        raise ArgumentError, "client must be a ScriptedClient, a TestClient, an HTTP client or an object with " \
                             "generate(request) and/or stream(request)"
      end

      spec = {}
      if generate
        spec["generate"] = (run_ids << Internal.register(lambda do |request|
          ModelBridge.response(generate.call(ModelBridge.request(request)))
        end)).last
      end
      if client.respond_to?(:stream)
        spec["stream"] = (run_ids << Internal.register(lambda do |request, sink|
          ModelBridge.drain(client, ModelBridge.request(request), sink)
        end)).last
      end
      spec
    end

    def fn(callable)
      id = Internal.register(callable)
      @callables << id
      id
    end

    def validator(value)
      return nil if value.nil?
      return { "func" => fn(value) } if value.respond_to?(:call)

      { "schema" => Internal.stringify(value) }
    end

    def dynamic(value)
      return nil if value.nil?

      value.respond_to?(:call) ? { "func" => fn(value) } : { "value" => Internal.stringify(value) }
    end

    def tool_spec(tool)
      tool = Tool.new(**tool.transform_keys(&:to_sym)) if tool.is_a?(Hash)
      raise ArgumentError, "tools must be PhaseoAgentSdk::Tool values, got #{tool.class}" unless tool.is_a?(Tool)

      approval = tool.require_approval
      ntp = tool.next_turn_params
      {
        "id" => tool.id.to_s, "description" => tool.description, "parameters" => Internal.stringify(tool.parameters),
        "execute" => tool.execute && fn(tool.execute), "timeout_ms" => tool.timeout_ms,
        "require_approval" => approval.respond_to?(:call) ? nil : (approval ? true : nil),
        "require_approval_fn" => approval.respond_to?(:call) ? fn(approval) : nil,
        "on_error" => tool.on_error&.to_s,
        "input_schema" => validator(tool.input_schema), "output_schema" => validator(tool.output_schema),
        "event_schema" => validator(tool.event_schema),
        "on_tool_called" => tool.on_tool_called && fn(tool.on_tool_called),
        "on_response_received" => tool.on_response_received && fn(tool.on_response_received),
        "next_turn_params" => ntp.respond_to?(:call) ? nil : Internal.stringify(ntp),
        "next_turn_params_fn" => ntp.respond_to?(:call) ? fn(ntp) : nil,
        "strict" => tool.strict, "input_examples" => Internal.stringify(tool.input_examples)
      }.compact
    end

    def agent_spec(d)
      approval = d[:require_approval]
      raise ArgumentError, "require_approval (agent level) must be a callable ->(tool_call, runtime)" if approval && !approval.respond_to?(:call)

      {
        "id" => d[:id].to_s, "tools" => Array(d[:tools]).map { |t| tool_spec(t) },
        "model" => dynamic(d[:model]), "instructions" => dynamic(d[:instructions]),
        "temperature" => dynamic(d[:temperature]), "max_output_tokens" => dynamic(d[:max_output_tokens]),
        "top_p" => dynamic(d[:top_p]), "max_steps" => d[:max_steps],
        "stop_when" => d[:stop_when] && stop_specs(d[:stop_when]),
        "model_retry" => Internal.stringify(d[:model_retry]),
        "tool_execution" => Internal.stringify(d[:tool_execution]),
        "output_schema" => validator(d[:output_schema]),
        "require_approval" => approval && fn(approval),
        "human_review" => d[:human_review] && fn(d[:human_review]),
        "state_secrets" => d[:state_secrets], "tool_choice" => dynamic(d[:tool_choice]),
        "parallel_tool_calls" => d[:parallel_tool_calls], "active_tools" => dynamic(d[:active_tools]),
        "mcp_servers" => d[:mcp_servers] && Array(d[:mcp_servers]).map { |server| mcp_spec(server) },
        "lease" => Internal.stringify(d[:lease])
      }.compact
    end

    def mcp_spec(server)
      raise ArgumentError, "mcp_servers takes mcp_stdio_server / mcp_http_server values, got #{server.class}" unless server.is_a?(McpServer)

      server.spec.merge(server.callables.transform_values { |callable| fn(callable) })
    end

    def overrides_spec(o)
      spec = Internal.stringify(o.compact)
      spec["stop_when"] = stop_specs(o[:stop_when]) if o[:stop_when]
      spec
    end

    # Built-in conditions (PhaseoAgentSdk.step_count_is(3), ...) or callables `->(state)`.
    def stop_specs(conditions)
      (conditions.is_a?(Array) ? conditions : [conditions]).map do |c|
        c.respond_to?(:call) ? { "kind" => "custom", "func" => fn(c) } : c
      end
    end

    def state_text(state)
      case state
      when RunResult then state.to_json
      when String then state
      when Hash then Native.to_json(state)
      else raise ArgumentError, "state must be a RunResult, its JSON text or a Hash, got #{state.class}"
      end
    end

    def decisions(list)
      Array(list).map do |d|
        case d
        when String, Symbol then { "tool_call_id" => d.to_s }
        when Hash, ToolDecision then Internal.stringify(d.to_h).slice("tool_call_id", "reason")
        else raise ArgumentError, "a decision is a tool call id or {tool_call_id:, reason:}, got #{d.class}"
        end
      end
    end

    def outputs(list)
      Array(list).map do |o|
        o = Internal.stringify(o.to_h)
        raise ArgumentError, "a tool output is {tool_call_id:, output:}" unless o.key?("tool_call_id")

        { "tool_call_id" => o["tool_call_id"].to_s, "output" => o["output"] }
      end
    end
  end
end
