# frozen_string_literal: true

module PhaseoAgentSdk
  # Writes agents, tools and MCP declarations in the core's definition format (camelCase
  # keys, `{"$callback" => id}` for callables). The includer owns `@callables`: the registry
  # ids of the callables it registered, released when it is done with them.
  module DefinitionSpec
    # The Ruby names of an MCP declaration whose canonical key is not their camelCase.
    MCP_KEYS = { "bearer_token" => "bearer", "tool_timeouts" => "toolTimeoutsMs",
                 "require_approval_fn" => "requireApproval" }.freeze
    private_constant :MCP_KEYS

    private

    # `{"$callback" => id}`: a callable registered for the includer's lifetime, in the core's
    # definition format.
    def fn(callable)
      id = Internal.register(callable)
      @callables << id
      { "$callback" => id }
    end

    def validator(value)
      return nil if value.nil?
      return fn(value) if value.respond_to?(:call)

      Internal.stringify(value, "schema")
    end

    def dynamic(value)
      return nil if value.nil?

      value.respond_to?(:call) ? fn(value) : Internal.stringify(value)
    end

    # A Hash of settings (`tool_execution:`, `model_retry:`) with its keys in the core's
    # camelCase (its values are not renamed).
    def settings(value)
      return nil if value.nil?
      raise ArgumentError, "expected a Hash, got #{value.class}" unless value.is_a?(Hash)

      value.to_h { |k, v| [Internal.camel(k.to_s), Internal.stringify(v, k.to_s)] }
    end

    def tool_spec(tool)
      tool = Tool.new(**tool.transform_keys(&:to_sym)) if tool.is_a?(Hash)
      raise ArgumentError, "tools must be PhaseoAgentSdk::Tool values, got #{tool.class}" unless tool.is_a?(Tool)

      approval = tool.require_approval
      ntp = tool.next_turn_params
      {
        "id" => Internal.name(tool.id, "tool id"), "description" => tool.description, "parameters" => Internal.stringify(tool.parameters, "parameters"),
        "execute" => tool.execute && fn(tool.execute), "timeoutMs" => tool.timeout_ms,
        "requireApproval" => approval.respond_to?(:call) ? fn(approval) : (approval ? true : nil),
        "onError" => tool.on_error && Internal.name(tool.on_error, "on_error"),
        "inputSchema" => validator(tool.input_schema), "outputSchema" => validator(tool.output_schema),
        "eventSchema" => validator(tool.event_schema),
        "onToolCalled" => tool.on_tool_called && fn(tool.on_tool_called),
        "onResponseReceived" => tool.on_response_received && fn(tool.on_response_received),
        "nextTurnParams" => ntp.respond_to?(:call) ? fn(ntp) : Internal.stringify(ntp, "next_turn_params"),
        "strict" => tool.strict, "inputExamples" => Internal.stringify(tool.input_examples, "input_examples"),
        "maxCalls" => tool.max_calls, "retry" => retry_spec(tool.retry),
        "deferLoading" => tool.defer_loading,
        "agent" => tool.agent && nested_spec(tool.agent),
        "annotations" => annotations_spec(tool.annotations)
      }.compact
    end

    # A tool's `annotations:` with camelCase keys (the core checks the keys and values).
    def annotations_spec(annotations)
      return Internal.stringify(annotations, "annotations") unless annotations.is_a?(Hash)

      Internal.stringify(annotations.to_h { |k, v| [Internal.camel(k), v] }, "annotations")
    end

    # A run's (or a served agent's) model client as the native layer takes it; a Ruby
    # client's functions are registered with their ids added to `run_ids`.
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

    def nested_spec(agent)
      raise ArgumentError, "a tool's agent must be a PhaseoAgentSdk::Agent (see Agent#as_tool), got #{agent.class}" unless agent.is_a?(Agent)

      agent_spec(agent.nested_definition)
    end

    # A tool's `retry:` (a ToolRetry or a Hash of its keywords) in the core's format; the
    # core checks the values (`retry.maxAttempts must be …`).
    def retry_spec(value)
      return nil if value.nil?
      return settings(value.to_h.compact) if value.is_a?(ToolRetry) || value.is_a?(Hash)

      raise ArgumentError, "retry must be a PhaseoAgentSdk::ToolRetry or {max_attempts:, backoff_ms:}, got #{value.class}"
    end

    def agent_spec(d)
      approval = d[:require_approval]
      raise ArgumentError, "require_approval (agent level) must be a callable ->(tool_call, runtime)" if approval && !approval.respond_to?(:call)

      {
        "id" => Internal.name(d[:id], "agent id"), "tools" => Array(d[:tools]).map { |t| tool_spec(t) },
        "model" => dynamic(d[:model]), "instructions" => dynamic(d[:instructions]),
        "temperature" => dynamic(d[:temperature]), "maxOutputTokens" => dynamic(d[:max_output_tokens]),
        "topP" => dynamic(d[:top_p]), "maxSteps" => d[:max_steps],
        "stopWhen" => d[:stop_when] && stop_specs(d[:stop_when]),
        "modelRetry" => settings(d[:model_retry]),
        "toolExecution" => settings(d[:tool_execution]),
        "outputSchema" => validator(d[:output_schema]),
        "parseOutput" => d[:parse_output].respond_to?(:call) ? fn(d[:parse_output]) : Internal.stringify(d[:parse_output]),
        "requireApproval" => approval && fn(approval),
        "humanReview" => d[:human_review] && fn(d[:human_review]),
        "stateSecrets" => d[:state_secrets], "toolChoice" => dynamic(d[:tool_choice]),
        "parallelToolCalls" => d[:parallel_tool_calls], "activeTools" => dynamic(d[:active_tools]),
        "mcpServers" => d[:mcp_servers] && Array(d[:mcp_servers]).map { |server| mcp_spec(server) },
        "lease" => settings(d[:lease])
      }.compact
    end

    def mcp_spec(server)
      raise ArgumentError, "mcp_servers takes mcp_stdio_server / mcp_http_server values, got #{server.class}" unless server.is_a?(McpServer)

      spec = server.spec.to_h { |k, v| [MCP_KEYS.fetch(k) { Internal.camel(k) }, v] }
      server.callables.each { |k, callable| spec[MCP_KEYS.fetch(k) { Internal.camel(k) }] = fn(callable) }
      spec
    end

    # Built-in conditions (PhaseoAgentSdk.step_count_is(3), ...) or callables `->(state)`.
    def stop_specs(conditions, run_ids = nil)
      (conditions.is_a?(Array) ? conditions : [conditions]).map do |c|
        next c unless c.respond_to?(:call)
        next fn(c) unless run_ids

        { "$callback" => (run_ids << Internal.register(c)).last }
      end
    end
  end
end
