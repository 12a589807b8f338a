# frozen_string_literal: true

require "test_helper"
require "net/http"

# Tracing from Ruby against a real OTLP/HTTP receiver on 127.0.0.1 (tests/otlp/receiver.py,
# decoding with opentelemetry-proto in .venvs/py, installed by `make .venvs/py/.otel`): the
# span tree of a run, its GenAI attributes, content capture, a continue in the same trace.
# A missing receiver FAILS. Tracing is process-wide: every test turns it off at the end.
class TracingTest < Minitest::Test
  include SdkHelpers

  ROOT = File.expand_path("../..", __dir__)
  PYTHON = File.join(ROOT, ".venvs/py/bin/python")

  def setup
    flunk "opentelemetry-proto (.venvs/py) is not installed: run `make .venvs/py/.otel`" unless File.exist?(File.join(ROOT, ".venvs/py/.otel"))
    @receiver = IO.popen([PYTHON, File.join(ROOT, "tests/otlp/receiver.py")], "r+")
    line = @receiver.gets
    flunk "the OTLP receiver did not start" unless line&.start_with?("PORT ")
    @base = "http://127.0.0.1:#{line.split.last}"
  end

  def teardown
    PhaseoAgentSdk.shutdown_tracing if PhaseoAgentSdk.tracing_enabled?
    return unless @receiver

    @receiver.close_write
    Process.wait(@receiver.pid)
    @receiver.close
  end

  def enable(capture_content: false)
    PhaseoAgentSdk.enable_tracing(endpoint: @base, headers: { "x-collector-token": "ruby-token" },
                                  service_name: "ruby-tests", capture_content: capture_content)
  end

  def ids(result)
    version, trace_id, span_id, flags = result.run["traceparent"].split("-")
    assert_equal %w[00 01], [version, flags]
    [trace_id, span_id]
  end

  def spans_of(result, count)
    PhaseoAgentSdk.flush_tracing
    trace_id, = ids(result)
    500.times do
      found = JSON.parse(Net::HTTP.get(URI("#{@base}/spans"))).select { |s| s["traceId"] == trace_id }
      return found if found.size >= count

      sleep 0.02
    end
    flunk "fewer than #{count} spans in trace #{trace_id}"
  end

  def one(spans, name)
    found = spans.select { |s| s["name"] == name }
    assert_equal 1, found.size, "#{name}: #{spans.map { |s| s['name'] }}"
    found.first
  end

  def run_calculator
    add = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: "add", execute: ->(i, _rt) { i["a"] + i["b"] }))
    PhaseoAgentSdk.create_agent(id: "calculator", tools: [add])
                  .run(input: "what is 2+3?", model: "m-1", client: script({ tool_calls: [call("c1", "add", a: 2, b: 3)] },
                                                                          { text: "the sum is 5" }))
  end

  def test_a_traceparent_run_option_makes_the_run_span_a_child_of_the_callers_span
    enable
    caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    caller_span = "00f067aa0ba902b7"
    add = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: "add", execute: ->(i, _rt) { i["a"] + i["b"] }))
    result = PhaseoAgentSdk.create_agent(id: "calculator", tools: [add])
                           .run(input: "2+3?", model: "m-1", traceparent: "00-#{caller_trace}-#{caller_span}-01",
                                client: script({ tool_calls: [call("c1", "add", a: 2, b: 3)] }, { text: "5" }))
    trace_id, = ids(result)
    assert_equal caller_trace, trace_id
    run = one(spans_of(result, 4), "invoke_agent calculator")
    assert_equal caller_span, run["parentSpanId"]
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "calculator", tools: [add])
                    .run(input: "x", traceparent: 7, client: script({ text: "no" }))
    end
    assert_includes error.message, "traceparent"
  end

  def test_a_run_with_a_tool_step_is_one_tree_of_gen_ai_spans_content_off
    enable
    assert PhaseoAgentSdk.tracing_enabled?
    result = run_calculator
    spans = spans_of(result, 4)
    assert_equal ["chat m-1", "chat m-1", "execute_tool add", "invoke_agent calculator"], spans.map { |s| s["name"] }.sort
    run = one(spans, "invoke_agent calculator")
    assert_equal ids(result).last, run["spanId"]
    assert_equal "", run["parentSpanId"]
    assert_equal result.run_id, run["attributes"]["phaseo.run.id"]
    assert_equal "ruby-tests", run["service"]
    assert_equal "ruby-token", run["headers"]["x-collector-token"]
    tool = one(spans, "execute_tool add")
    assert_equal run["spanId"], tool["parentSpanId"]
    assert_equal "c1", tool["attributes"]["gen_ai.tool.call.id"]
    spans.each do |s|
      text = JSON.generate(s["attributes"])
      refute_includes text, "what is 2+3?"
      refute_includes text, "ruby-token"
    end
  end

  def test_content_is_recorded_when_opted_in
    enable(capture_content: true)
    tool = one(spans_of(run_calculator, 4), "execute_tool add")
    assert_equal({ "a" => 2, "b" => 3 }, JSON.parse(tool["attributes"]["gen_ai.tool.call.arguments"]))
    assert_equal "5", tool["attributes"]["gen_ai.tool.call.result"]
  end

  def test_a_continue_from_the_json_state_lands_in_the_same_trace_linked
    enable
    send = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: "send", execute: ->(_i, _rt) { "sent" }, require_approval: true))
    agent = PhaseoAgentSdk.create_agent(id: "mailer", tools: [send])
    paused = agent.run(input: "mail", client: script({ tool_calls: [call("c1", "send")] }))
    done = agent.continue_run(state: paused.to_json, approvals: ["c1"], client: script({ text: "done" }))
    trace_id, paused_span = ids(paused)
    same_trace, done_span = ids(done)
    assert_equal trace_id, same_trace
    runs = spans_of(done, 2).select { |s| s["name"] == "invoke_agent mailer" }.to_h { |s| [s["spanId"], s] }
    assert_equal paused_span, runs.fetch(done_span)["parentSpanId"]
    assert_includes runs.fetch(done_span)["links"], { "traceId" => trace_id, "spanId" => paused_span }
  end

  def test_bad_options_are_refused_by_name
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.enable_tracing(endpoint: @base, headers: { "bad header" => "x" })
    end
    assert_includes error.message, "bad header"
    assert_raises(ArgumentError) { PhaseoAgentSdk.enable_tracing(headers: "x") }
    refute PhaseoAgentSdk.tracing_enabled?
  end
end
