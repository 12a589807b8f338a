# frozen_string_literal: true

require "test_helper"
require "timeout"

# Tool input as the model writes it (docs/behaviour.md §16): a Ruby streaming client's
# `tool-input-start`/`tool-input-delta` events and the scripted client's, in the stream's
# `tool.input_started`/`tool.input_delta` events.
class ToolInputTest < Minitest::Test
  include SdkHelpers

  Sdk = PhaseoAgentSdk
  PIECES = ['{"a":', '2,"b"', ":3}"].freeze
  ARGUMENTS = PIECES.join

  # The first attempt writes part of a call and fails; the second streams call c2, holding
  # the rest of it until the reader saw the first fragment; the third answers.
  class InputWriter
    attr_reader :live

    def initialize(gate)
      @gate = gate
      @attempts = 0
      @live = false
    end

    def stream(_request)
      @attempts += 1
      case @attempts
      when 1
        yield({ type: "tool-input-start", tool_call_id: "lost", tool_name: "add" })
        yield({ type: "tool-input-delta", toolCallId: "lost", delta: '{"a":' })
        raise IOError, "connection reset"
      when 2
        yield({ type: "tool-input-start", tool_call_id: "c2", tool_name: "add" })
        yield({ type: "tool-input-delta", tool_call_id: "c2", delta: PIECES[0] })
        @live = Timeout.timeout(60) { @gate.pop }
        PIECES.drop(1).each { |p| yield({ type: "tool.input_delta", tool_call_id: "c2", delta: p }) }
        yield({ type: "response", response: { tool_calls: [{ id: "c2", name: "add", arguments: ARGUMENTS }] } })
      else
        yield({ type: "response", response: { text: "5" } })
      end
    end
  end

  def calculator(**definition)
    add = tool("add", parameters: { type: "object" }, execute: ->(input, _rt) { input["a"] + input["b"] })
    Sdk.create_agent(id: "calc", tools: [add], **definition)
  end

  def deltas(events, id)
    events.select { |e| e["type"] == "tool.input_delta" && e["toolCallId"] == id }.map { |e| e["delta"] }
  end

  def test_a_streaming_clients_input_arrives_live_and_a_failed_attempts_input_stays
    gate = Queue.new
    client = InputWriter.new(gate)
    stream = calculator(model_retry: { max_retries: 1, backoff_ms: 1 }).stream(input: "2+3?", client: client)
    events = []
    stream.full_stream.each do |e|
      if e["type"] == "tool.input_delta" && e["toolCallId"] == "c2" && deltas(events, "c2").empty?
        # The client holds the rest of the call until this first fragment is seen here.
        refute_includes events.map { |x| x["type"] }, "model.completed"
        gate << true
      end
      events << e
    end
    assert_equal "5", stream.result.output
    assert client.live, "the first fragment reached the reader while the client was writing"
    assert_equal ['{"a":'], deltas(events, "lost")
    assert_equal PIECES, deltas(events, "c2")
    assert_equal ["c2"], events.select { |e| e["type"] == "tool.started" }.map { |e| e["toolCallId"] }
    types = events.map { |e| e["type"] }
    assert_operator types.rindex("tool.input_delta"), :<, types.index("model.completed")
    started = events.find { |e| e["type"] == "tool.input_started" && e["toolCallId"] == "c2" }
    assert_equal ["add", 0], [started["toolName"], started["stepIndex"]]
  end

  def test_the_scripted_client_streams_input_in_pieces_and_a_plain_run_reports_none
    stream = calculator.stream(input: "2+3?", client: script({ tool_calls: [call("c1", "add", a: 2, b: 3)] }, { text: "5" }))
    events = stream.full_stream.to_a
    assert_equal "5", stream.result.output
    assert_operator deltas(events, "c1").size, :>, 1
    assert_equal '{"a":2,"b":3}', deltas(events, "c1").join
    seen = []
    calculator.run(input: "2+3?", client: script({ tool_calls: [call("c1", "add", a: 2, b: 3)] }, { text: "5" }),
                   on_event: ->(e) { seen << e["type"] })
    assert_includes seen, "tool.completed"
    assert(seen.none? { |t| t.start_with?("tool.input_") })
  end

  def test_a_malformed_tool_input_event_fails_the_attempt_clearly
    bad = Class.new do
      def stream(_request)
        yield({ type: "tool-input-start", tool_call_id: "c1" })
      end
    end
    error = assert_raises(Sdk::AgentError) { calculator.stream(input: "x", client: bad.new).result }
    assert_includes error.message, 'model stream event "tool-input-start" has no "toolName"'
  end
end
