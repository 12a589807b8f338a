# frozen_string_literal: true

require "test_helper"
require "timeout"
require "rbconfig"

# Model clients written in Ruby (docs/behaviour.md §8), in the product's Ruby shapes: `generate(request)`
# gets a PhaseoAgentSdk::ModelRequest and may answer a ModelResponse; `stream(request)`
# yields the product's events while the run streams.
class ModelClientTest < Minitest::Test
  include SdkHelpers

  Sdk = PhaseoAgentSdk

  # A client in the product's style: Struct requests in, Struct responses out.
  class ProductStyleClient
    attr_reader :requests

    def initialize
      @requests = []
    end

    def generate(request)
      @requests << request
      if request.messages.last.role == "user"
        call = Sdk::ToolCall.new(id: "c1", name: "lookup", input: { "env" => "prod" })
        Sdk::ModelResponse.new(message: Sdk::Message.new(role: "assistant", content: "", tool_calls: [call]),
                               usage: { "input_tokens" => 10, "output_tokens" => 2 }, finish_reason: "tool_calls",
                               request_id: "req_1", cost: 0.5)
      else
        { text: "found #{request.messages.last.content}", usage: { input_tokens: 3, output_tokens: 4 } }
      end
    end
  end

  def agent(**fields)
    Sdk.create_agent(id: "desk", instructions: "be brief", max_output_tokens: 64,
                     tools: [tool("lookup", execute: ->(input, _rt) { { "host" => input["env"] } })], **fields)
  end

  def test_generate_gets_the_products_model_request
    client = ProductStyleClient.new
    result = agent.run(input: "where?", client: client, context: { "team" => "a" }, temperature: 0.2)
    assert_equal "completed", result.status
    assert_equal 'found {"host":"prod"}', result.output
    first, second = client.requests
    assert_kind_of Sdk::ModelRequest, first
    assert_equal "desk", first.agent_id
    assert_equal "be brief", first.instructions
    assert_equal 64, first.max_output_tokens
    assert_equal 0.2, first.temperature
    assert_equal({ "team" => "a" }, first.context)
    assert_equal false, first.stream
    assert_equal ["lookup"], first.tools.map(&:id)
    assert_equal "object", first.tools.first.parameters["type"]
    assert_equal [["user", "where?"]], first.messages.map { |m| [m.role, m.content] }
    # Struct members read by name as well (request["messages"], message["role"]).
    assert_equal "user", first["messages"].first["role"]
    assistant, tool_message = second.messages.last(2)
    assert_equal [Sdk::ToolCall.new(id: "c1", name: "lookup", input: { "env" => "prod" })], assistant.tool_calls
    assert_equal %w[tool c1 lookup], [tool_message.role, tool_message.tool_call_id, tool_message.name]
    assert_equal false, tool_message.is_error
    usage = result.usage
    assert_equal [13, 6], [usage["inputTokens"], usage["outputTokens"]]
    assert_in_delta 0.5, usage["cost"]
  end

  def test_request_controls_reach_the_client
    client = ProductStyleClient.new
    agent(tool_choice: { tool_id: "lookup" }, parallel_tool_calls: false).run(input: "x", client: client)
    assert_equal({ "tool_id" => "lookup" }, client.requests.first.tool_choice)
    assert_equal false, client.requests.first.parallel_tool_calls
  end

  def test_a_callable_is_a_client
    result = Sdk.create_agent(id: "a").run(input: "hi", client: ->(request) { { text: "echo #{request.messages.last.content}" } })
    assert_equal "echo hi", result.output
  end

  def test_a_bad_answer_fails_the_run_with_a_clear_error
    error = assert_raises(Sdk::ModelError) { Sdk.create_agent(id: "a").run(input: "hi", client: ->(_request) { 42 }) }
    assert_includes error.message, "a model response must be a Hash or a PhaseoAgentSdk::ModelResponse, got Integer"
    error = assert_raises(Sdk::ModelError) do
      Sdk.create_agent(id: "a").run(input: "hi", client: ->(_request) { raise IOError, "socket closed" })
    end
    assert_includes error.message, "socket closed"
    assert_raises(ArgumentError) { Sdk.create_agent(id: "a").run(input: "hi", client: Object.new) }
  end

  # Streams as the product's GatewayAgentClient#stream does: yields to the block given.
  class StreamingClient
    attr_reader :requests

    def initialize(pieces, gate: nil)
      @pieces = pieces
      @gate = gate
      @requests = []
    end

    def stream(request)
      return enum_for(:stream, request) unless block_given?

      @requests << request
      @pieces.each_with_index do |piece, i|
        yield({ type: "response.output_text.delta", delta: piece, raw: { "chunk" => i } })
        # The reader must have seen this delta before the next one is produced.
        Timeout.timeout(5) { @gate.pop } if @gate
      end
      response = Sdk::ModelResponse.new(message: Sdk::Message.new(role: "assistant", content: @pieces.join),
                                        usage: { "input_tokens" => 1, "output_tokens" => @pieces.size })
      yield({ type: "response.completed", response: response })
    end
  end

  def test_stream_events_reach_the_reader_while_the_client_streams
    gate = Queue.new
    client = StreamingClient.new(%w[Hel lo !], gate: gate)
    stream = Sdk.create_agent(id: "a").stream(input: "hi", client: client)
    seen = []
    stream.text_stream.each do |delta|
      seen << delta
      gate << true
    end
    assert_equal %w[Hel lo !], seen
    assert_equal "Hello!", stream.result.output
    assert_equal true, client.requests.first.stream
  end

  def test_a_streaming_only_client_serves_a_plain_run
    client = StreamingClient.new(%w[a b])
    assert_equal "ab", Sdk.create_agent(id: "a").run(input: "hi", client: client).output
  end

  def test_a_stream_may_return_an_enumerable_of_events_or_a_final_response
    events = Object.new
    events.define_singleton_method(:stream) do |_request|
      [{ "type" => "text-delta", "delta" => "x" }, { "type" => "response", "response" => { "text" => "x" } }]
    end
    deltas = []
    result = Sdk.create_agent(id: "a").stream(input: "hi", client: events) do |event|
      deltas << event["delta"] if event["type"] == "response.output_text.delta"
    end
    assert_equal ["x"], deltas
    assert_equal "x", result.output
    final = Object.new
    final.define_singleton_method(:stream) { |_request| { text: "whole" } }
    assert_equal "whole", Sdk.create_agent(id: "a").stream(input: "hi", client: final).result.output
  end

  def test_a_malformed_event_fails_the_attempt_with_its_problem
    bad = Object.new
    bad.define_singleton_method(:stream) { |_request, &block| block.call({ type: "response.output_text.delta" }) }
    error = assert_raises(Sdk::ModelError) { Sdk.create_agent(id: "a").stream(input: "hi", client: bad).result }
    assert_includes error.message, "has no \"delta\""
    silent = Object.new
    silent.define_singleton_method(:stream) { |_request, &block| block.call({ type: "text-delta", delta: "a" }) }
    error = assert_raises(Sdk::ModelError) { Sdk.create_agent(id: "a").stream(input: "hi", client: silent).result }
    assert_includes error.message, "ended without a final"
  end

  def test_cancelling_stops_a_blocked_stream_on_time
    stuck = Object.new
    stuck.define_singleton_method(:stream) do |_request, &block|
      block.call({ type: "text-delta", delta: "a" })
      sleep 30
    end
    token = Sdk::CancelToken.new
    Thread.new { sleep 0.3; token.cancel }
    started = monotonic
    result = Sdk.create_agent(id: "a").stream(input: "hi", client: stuck, cancel: token).result
    assert_equal "cancelled", result.status
    assert_operator monotonic - started, :<, 3
  end

  # Ctrl-C stops a run whose model client blocks, in `generate` (on the thread that
  # called `run`) and in `stream` (on a thread of its own).
  def test_ctrl_c_stops_a_run_blocked_in_the_model_client
    lib = File.expand_path("../lib", __dir__)
    { "generate" => "run(input: 'go', client: ->(_r) { sleep 60 })",
      "stream" => "stream(input: 'go', client: stuck).result" }.each do |kind, call|
      script_text = <<~RUBY
        require "phaseo_agent_sdk"
        stuck = Object.new
        stuck.define_singleton_method(:stream) { |_r, &b| b.call({ type: "text-delta", delta: "a" }); sleep 60 }
        agent = PhaseoAgentSdk.create_agent(id: "c")
        $stdout.puts "running"; $stdout.flush
        begin
          agent.#{call}
        rescue Interrupt
          $stdout.puts "interrupted"; exit 42
        end
      RUBY
      IO.popen([RbConfig.ruby, "-I#{lib}", "-e", script_text], err: File::NULL) do |io|
        assert_equal "running\n", io.gets
        sleep 0.3
        started = monotonic
        Process.kill("INT", io.pid)
        assert_equal "interrupted\n", io.gets, kind
        assert_operator monotonic - started, :<, 5.0, kind
      end
      assert_equal 42, $?.exitstatus, kind
    end
  end
end
