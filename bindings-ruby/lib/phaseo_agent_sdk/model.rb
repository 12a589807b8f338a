# frozen_string_literal: true

module PhaseoAgentSdk
  # A decision on a pending call, as in the product: `continue_run(approvals: [ToolDecision.new(
  # tool_call_id: "c1")], rejections: [ToolDecision.new(tool_call_id: "c2", reason: "no")])`
  # (a plain id or `{tool_call_id:, reason:}` works too). An approval may carry the person's
  # corrected arguments, `edited_input:` (`{tool_call_id:, edited_input:}` too): they are
  # checked as the model's would be, before anything runs, and the tool runs with them
  # (docs/behaviour.md §14).
  ToolDecision = Struct.new(:tool_call_id, :reason, :edited_input, keyword_init: true)

  # An output supplied for a manual call: `continue_run(tool_outputs: [ToolOutput.new(
  # tool_call_id: "c1", output: {...})])` (or `{tool_call_id:, output:}`); the same shape
  # answers an approval-gated call in the tool's place (`continue_run(responses: [...])`).
  ToolOutput = Struct.new(:tool_call_id, :output, keyword_init: true)

  # A call the model requested (`id` is the idempotency key), as in the product.
  ToolCall = Struct.new(:id, :name, :input, keyword_init: true)

  # One conversation message of a model request (the product's `Message`, plus
  # `reasoning`). Struct members read as methods and as `message["role"]`.
  Message = Struct.new(:role, :content, :tool_calls, :tool_call_id, :name, :is_error, :reasoning,
                       keyword_init: true)

  # What a host model client's `generate(request)` / `stream(request)` receives: the
  # product's `ModelRequest` (`tools` are `Tool` values with `id`, `description`,
  # `parameters`, `strict`, `input_examples`), plus the request controls of docs/behaviour.md §12
  # (`tool_choice`: "auto", "required", "none" or `{"tool_id" => id}`;
  # `parallel_tool_calls`) and `stream` (whether the run streams).
  ModelRequest = Struct.new(:agent_id, :messages, :tools, :model, :instructions, :context, :temperature,
                            :max_output_tokens, :top_p, :stream, :tool_choice, :parallel_tool_calls,
                            keyword_init: true)

  # What a host model client may answer (the product's `ModelResponse`); a Hash works too:
  # `{text:, tool_calls: [{id:, name:, arguments: | input:}], usage: {input_tokens:,
  # output_tokens:}, cost:, finish_reason:}` or `{message: {content:, tool_calls:}, ...}`.
  ModelResponse = Struct.new(:message, :usage, :request_id, :native_response_id, :provider, :model,
                             :response_meta, :finish_reason, :cost, :warnings, keyword_init: true)

  # The bridge between host model clients and the core's camelCase JSON (not public API).
  module ModelBridge
    RESPONSE_KEYS = { "finish_reason" => "finishReason", "request_id" => "requestId",
                      "native_response_id" => "nativeResponseId", "response_meta" => "responseMeta" }.freeze
    USAGE_KEYS = { "input_tokens" => "inputTokens", "output_tokens" => "outputTokens",
                   "cached_tokens" => "cachedTokens", "total_tokens" => "totalTokens" }.freeze
    # A tool input event's keys in Ruby spelling (`tool_call_id:`, `tool_name:`).
    STREAM_EVENT_KEYS = { "tool_call_id" => "toolCallId", "tool_name" => "toolName" }.freeze

    class << self
      # The native request (camelCase JSON) as the product's `ModelRequest`.
      def request(native)
        choice = native["toolChoice"]
        choice = { "tool_id" => choice["toolId"] } if choice.is_a?(Hash)
        ModelRequest.new(
          agent_id: native["agentId"], model: native["model"], instructions: native["instructions"],
          messages: Array(native["messages"]).map { |m| message(m) },
          tools: Array(native["tools"]).map do |t|
            Tool.new(id: t["id"], description: t["description"], parameters: t["parameters"],
                     strict: t["strict"] || false, input_examples: t["inputExamples"])
          end,
          context: native["context"], temperature: native["temperature"],
          max_output_tokens: native["maxOutputTokens"], top_p: native["topP"], stream: native["stream"] == true,
          tool_choice: choice, parallel_tool_calls: native["parallelToolCalls"]
        )
      end

      # A client's answer (Hash or ModelResponse, snake_case or camelCase keys) as the
      # core's response JSON.
      def response(value)
        value = value.to_h if value.is_a?(Struct)
        raise TypeError, "a model response must be a Hash or a PhaseoAgentSdk::ModelResponse, got #{value.class}" unless value.is_a?(Hash)

        value.each_with_object({}) do |(key, v), out|
          key = key.to_s
          next if v.nil?

          case key
          when "message" then out["message"] = response_message(v)
          when "tool_calls", "toolCalls" then out["toolCalls"] = calls(v)
          when "usage" then out["usage"] = usage(v)
          else out[RESPONSE_KEYS.fetch(key, key)] = Internal.stringify(v, "model response #{key}")
          end
        end
      end

      # One event a streaming client yielded, as the core reads it (see `drain`).
      def event(value)
        value = value.to_h if value.is_a?(Struct)
        raise TypeError, "a model stream event must be a Hash, got #{value.class}" unless value.is_a?(Hash)

        value.each_with_object({}) do |(key, v), out|
          key = key.to_s
          next if key == "raw" # the product's events carry the provider's raw chunk: not needed

          out[STREAM_EVENT_KEYS.fetch(key, key)] =
            key == "response" && !v.nil? ? response(v) : Internal.stringify(v, "model stream event #{key}")
        end
      end

      # Reads `client.stream(request)` into the run's sink, event by event: the client
      # yields to the block given (as the product's clients do), or returns an Enumerable
      # of events, or returns its final response. Events: `{type:
      # "response.output_text.delta", delta:}` (or "text-delta"),
      # `"response.reasoning.delta"` (or "reasoning-delta"), a call's input as the model
      # writes it (docs/behaviour.md §16): `{type: "tool-input-start", tool_call_id:,
      # tool_name:}` then `{type: "tool-input-delta", tool_call_id:, delta:}` (camelCase keys
      # and the spellings "tool.input_started"/"tool.input_delta" are accepted too),
      # `{type: "response.item", item:}`, and the final `{type: "response.completed",
      # response:}` (or "response").
      def drain(client, request, sink)
        yielded = false
        returned = client.stream(request) do |e|
          yielded = true
          sink.push(event(e))
        end
        if !yielded && returned.respond_to?(:each) && !returned.is_a?(Hash) && !returned.is_a?(Struct)
          returned.each do |e|
            break if sink.closed?

            sink.push(event(e))
          end
        elsif returned.is_a?(Hash) || returned.is_a?(ModelResponse)
          sink.push({ "type" => "response", "response" => response(returned) })
        end
        nil
      end

      private

      def message(m)
        calls = m["toolCalls"]&.map { |c| ToolCall.new(id: c["id"], name: c["name"], input: c["input"]) }
        Message.new(role: m["role"], content: m["content"], tool_calls: calls, tool_call_id: m["toolCallId"],
                    name: m["name"], is_error: m["isError"] == true, reasoning: m["reasoning"])
      end

      def response_message(m)
        m = m.to_h if m.is_a?(Struct)
        return Internal.stringify(m, "model response message") unless m.is_a?(Hash)

        m.each_with_object({}) do |(key, v), out|
          key = key.to_s
          case key
          when "tool_calls", "toolCalls" then out["toolCalls"] = calls(v)
          when "content", "reasoning" then out[key] = v
          end
        end
      end

      def calls(list)
        Array(list).map do |c|
          c = c.to_h if c.is_a?(Struct)
          raise TypeError, "a tool call must be a Hash or a PhaseoAgentSdk::ToolCall, got #{c.class}" unless c.is_a?(Hash)

          Internal.stringify(c.compact, "model response tool_calls")
        end
      end

      def usage(u)
        u = u.to_h if u.is_a?(Struct)
        return u unless u.is_a?(Hash)

        u.each_with_object({}) { |(k, v), out| out[USAGE_KEYS.fetch(k.to_s, k.to_s)] = v }
      end
    end
  end
end
