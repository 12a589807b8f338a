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

      # Each response is JSON (a tool call's arguments sit 3 levels down): a deep, cyclic or
      # odd one is refused here, naming it.
      responses.each_with_index { |r, i| Native.check_value(r, "responses[#{i}]", 4) }
      @responses = Internal.stringify(responses, "responses").map { |r| self.class.camel(r) }
      @cursor = cursor
    end

    # The native description of this client (internal).
    def native_spec = [@responses, @cursor]

    # A response Hash with the core's key names (`tool_calls` → `toolCalls`, ...): its own
    # keys, its `usage`'s and its `message`'s; the values inside (a tool call's arguments)
    # keep their keys.
    def self.camel(response, level = 0)
      return response unless response.is_a?(Hash)

      response.each_with_object({}) do |(k, v), h|
        h[KEYS.fetch(k, k)] = level.zero? && %w[usage message].include?(k) ? camel(v, 1) : v
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

module PhaseoAgentSdk
  # An HTTP model client of the core (streams when the run streams; retries 408/409/429/5xx
  # under `model_retry`; the API key never reaches state, events, errors or logs).
  class HttpClient
    # The native client (internal).
    attr_reader :native

    def initialize(kind, options)
      @native = Internal.native { Native::HttpClient.new(kind, options) }
    end
  end

  GATEWAY_BODY_FIELDS = %i[provider reasoning temperature max_output_tokens parallel_tool_calls metadata user
                           response_format include_meta web_search_options plugins gateway_tools tool_choice
                           provider_options prompt_cache_key].freeze
  private_constant :GATEWAY_BODY_FIELDS

  # The Phaseo gateway (`POST {base_url}/responses`), as the product's Ruby SDK names it:
  # `api_key` (else PHASEO_API_KEY), `base_url` (else PHASEO_BASE_URL), `model`, `preset`,
  # the named body fields (`temperature`, `tool_choice`, `include_meta` → `meta`, ...) and
  # `request_options` (more body fields; a named value that is set wins).
  def self.create_gateway_agent_client(api_key: nil, base_url: nil, model: nil, preset: nil, request_options: nil,
                                       headers: nil, timeout_ms: nil, **fields)
    unknown = fields.keys - GATEWAY_BODY_FIELDS
    raise ArgumentError, "create_gateway_agent_client: unknown options: #{unknown.join(', ')}" unless unknown.empty?

    body = Internal.stringify(request_options || {})
    fields.each do |key, value|
      next if value.nil?

      body[key == :include_meta ? "meta" : key.to_s] = Internal.stringify(value)
    end
    HttpClient.new("gateway", { "apiKey" => api_key || ENV.fetch("PHASEO_API_KEY", nil),
                                "baseUrl" => base_url || ENV.fetch("PHASEO_BASE_URL", nil), "model" => model,
                                "preset" => preset, "headers" => Internal.stringify(headers || {}),
                                "timeoutMs" => timeout_ms, "bodyDefaults" => body }.compact)
  end

  # An OpenAI-compatible server (`POST {base_url}/chat/completions`: OpenAI, vLLM, Ollama,
  # llama.cpp, LM Studio); `base_url` else OPENAI_BASE_URL, `api_key` else OPENAI_API_KEY.
  def self.create_openai_compatible_client(base_url: nil, api_key: nil, model: nil, headers: nil, timeout_ms: nil)
    HttpClient.new("openai-compatible", { "apiKey" => api_key || ENV.fetch("OPENAI_API_KEY", nil),
                                          "baseUrl" => base_url || ENV.fetch("OPENAI_BASE_URL", nil),
                                          "model" => model, "headers" => Internal.stringify(headers || {}),
                                          "timeoutMs" => timeout_ms }.compact)
  end
end
