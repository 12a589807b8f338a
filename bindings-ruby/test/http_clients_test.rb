# frozen_string_literal: true

require "test_helper"
require "socket"

# The HTTP model clients against a local server (a TCPServer: WEBrick is not in Ruby 3.1).
class HttpClientsTest < Minitest::Test
  include SdkHelpers

  KEY = "sk-test-secret-123"

  # Answers each request with the next scripted reply `[status, headers, body]` and records
  # the requests (`path`, lower-case `headers`, parsed `body`).
  class Server
    attr_reader :requests, :url

    def initialize(replies)
      @replies = replies.dup
      @requests = []
      @server = TCPServer.new("127.0.0.1", 0)
      @url = "http://127.0.0.1:#{@server.addr[1]}/v1"
      @thread = Thread.new { loop { serve(@server.accept) } }
    end

    def close
      @thread.kill
      @server.close
    end

    private

    def serve(socket)
      loop do
        request_line = socket.gets or break
        headers = {}
        while (line = socket.gets) && line != "\r\n"
          name, value = line.split(":", 2)
          headers[name.downcase] = value.strip
        end
        body = socket.read(headers.fetch("content-length", "0").to_i)
        @requests << { "path" => request_line.split[1], "headers" => headers, "body" => JSON.parse(body) }
        status, reply_headers, text = @replies.shift
        reason = { 200 => "OK", 429 => "Too Many Requests", 500 => "Internal Server Error", 400 => "Bad Request" }[status]
        head = ["HTTP/1.1 #{status} #{reason}", "content-length: #{text.bytesize}"]
        reply_headers.each { |k, v| head << "#{k}: #{v}" }
        socket.write("#{head.join("\r\n")}\r\n\r\n#{text}")
      end
    rescue IOError, SystemCallError
      nil
    ensure
      socket.close
    end
  end

  JSON_TYPE = { "content-type" => "application/json" }.freeze

  def serve(replies)
    server = Server.new(replies)
    yield server
  ensure
    server&.close
  end

  def responses_reply(output)
    [200, JSON_TYPE, JSON.generate({ id: "resp_1", status: "completed", output: output,
                                     usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } })]
  end

  def agent
    lookup = tool("lookup", parameters: { type: "object" }, execute: ->(input, _rt) { { found: input["id"] } })
    PhaseoAgentSdk.create_agent(id: "desk", instructions: "Be brief.", tools: [lookup])
  end

  def test_gateway_round_trip_keeps_the_key_out_of_state
    serve([
      responses_reply([{ type: "function_call", call_id: "c1", name: "lookup", arguments: '{"id": 7}' }]),
      responses_reply([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Found 7." }] }])
    ]) do |server|
      client = PhaseoAgentSdk.create_gateway_agent_client(api_key: KEY, base_url: server.url, model: "phaseo/test",
                                                          temperature: 0.3, include_meta: true)
      result = agent.run(input: "find 7", client: client, context: { secret_context: "do-not-send" })
      assert_equal "Found 7.", result.output
      assert_equal 10, result.usage["totalTokens"]
      assert_equal ["/v1/responses", "/v1/responses"], server.requests.map { |r| r["path"] }
      assert_equal "Bearer #{KEY}", server.requests[0]["headers"]["authorization"]
      first, second = server.requests.map { |r| r["body"] }
      assert_equal "phaseo/test", first["model"]
      assert_equal "Be brief.", first["instructions"]
      assert_equal 0.3, first["temperature"]
      assert_equal true, first["meta"]
      refute_includes JSON.generate(first), "do-not-send"
      assert_includes second["input"], { "type" => "function_call_output", "call_id" => "c1", "output" => '{"found":7}' }
      refute_includes result.to_json, KEY
    end
  end

  def test_openai_compatible_completion
    reply = { id: "x", choices: [{ index: 0, message: { role: "assistant", content: "Hello there" }, finish_reason: "stop" }] }
    serve([[200, JSON_TYPE, JSON.generate(reply)]]) do |server|
      client = PhaseoAgentSdk.create_openai_compatible_client(base_url: server.url, model: "local-model")
      result = PhaseoAgentSdk.create_agent(id: "a").run(input: "hi", client: client)
      assert_equal "Hello there", result.output
      assert_equal "/v1/chat/completions", server.requests[0]["path"]
      assert_equal "local-model", server.requests[0]["body"]["model"]
      refute server.requests[0]["headers"].key?("authorization")
    end
  end

  def test_rate_limit_retry_then_gateway_error_with_status
    serve([
      [429, JSON_TYPE.merge("retry-after" => "0"), JSON.generate({ error: { message: "slow down" } })],
      responses_reply([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }])
    ]) do |server|
      client = PhaseoAgentSdk.create_gateway_agent_client(api_key: KEY, base_url: server.url)
      result = PhaseoAgentSdk.create_agent(id: "a", model_retry: { max_retries: 1, backoff_ms: 30_000 }).run(input: "x", client: client)
      assert_equal "ok", result.output
      assert_equal 2, server.requests.size
    end
    serve([[500, JSON_TYPE.merge("x-request-id" => "req_9"), JSON.generate({ error: { message: "boom" } })]] * 3) do |server|
      client = PhaseoAgentSdk.create_gateway_agent_client(api_key: KEY, base_url: server.url)
      error = assert_raises(PhaseoAgentSdk::ModelError) do
        PhaseoAgentSdk.create_agent(id: "a", model_retry: { max_retries: 2, backoff_ms: 1 }).run(input: "x", client: client)
      end
      assert_equal "gateway", error.code
      assert_equal 500, error.status
      assert_equal "req_9", error.request_id
      assert_equal "Gateway request failed: 500 Internal Server Error - boom", error.message
      assert_equal 3, server.requests.size
      refute_includes error.message, KEY
      assert_equal "failed", error.result.status
    end
  end

  def test_connection_refused_is_model_failed
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
    client = PhaseoAgentSdk.create_openai_compatible_client(base_url: "http://127.0.0.1:#{port}/v1")
    error = assert_raises(PhaseoAgentSdk::ModelError) { PhaseoAgentSdk.create_agent(id: "a").run(input: "x", client: client) }
    assert_equal "model_failed", error.code
    assert_includes error.message, "connection failed"
  end

  def test_unknown_gateway_option_is_refused
    assert_raises(ArgumentError) { PhaseoAgentSdk.create_gateway_agent_client(colour: "red") }
  end

  def test_a_preset_is_the_model_with_or_without_its_at_sign
    reply = responses_reply([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }])
    %w[@fast fast].each do |preset|
      serve([reply]) do |server|
        client = PhaseoAgentSdk.create_gateway_agent_client(api_key: KEY, base_url: server.url, preset: preset)
        assert_equal "ok", PhaseoAgentSdk.create_agent(id: "a").run(input: "x", client: client).output
        assert_equal "@fast", server.requests[0]["body"]["model"]
      end
    end
  end

  def test_bad_option_values_are_refused_naming_the_keyword
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_openai_compatible_client(base_url: "http://127.0.0.1:9/v1", timeout_ms: -5)
    end
    assert_equal "definition_invalid", error.code
    assert_equal "Invalid HTTP client options: timeout_ms must be a positive number of milliseconds, got -5",
                 error.message
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_gateway_agent_client(api_key: KEY, headers: { "X-N" => 5 })
    end
    assert_includes error.message, "Invalid HTTP client options: headers.X-N must be a string, got 5"
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_gateway_agent_client(api_key: 7)
    end
    assert_includes error.message, "Invalid HTTP client options: api_key must be a string, got 7"
  end
end
