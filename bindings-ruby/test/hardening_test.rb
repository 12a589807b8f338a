# frozen_string_literal: true

require "test_helper"

# Hostile values at the boundary (docs/behaviour.md §7): states that are not valid text or hold members
# that are not JSON, values nested 10,000 deep or holding themselves, callables that block
# after their run was cancelled, timeouts as Ruby's Timeout::Error. Whatever comes in, the
# caller gets the documented error, never a Ruby exception of another kind, a crash or a
# run left waiting.
class HardeningTest < Minitest::Test
  include SdkHelpers

  Sdk = PhaseoAgentSdk
  TOO_DEEP = "value is nested more than 64 levels deep"
  CYCLE = "value contains a cycle"

  def approval_agent
    ran = []
    deploy = tool("deploy", require_approval: true, execute: ->(input, _rt) { ran << input; "ran" })
    [Sdk.create_agent(id: "ops", tools: [deploy]), ran]
  end

  def paused_state
    agent, = approval_agent
    paused = agent.run(input: "go", client: script({ tool_calls: [call("c1", "deploy", env: "prod")] }))
    assert_equal "waiting_for_human", paused.status
    paused
  end

  def continue_from(state)
    agent, = approval_agent
    agent.continue_run(state: state, client: script({ text: "done" }), approvals: ["c1"])
  end

  def assert_state_invalid(state, message = nil)
    # (Not `state.inspect`: a state 10,000 levels deep cannot be inspected.)
    error = assert_raises(Sdk::StateError, "#{state.class}: #{message}") { continue_from(state) }
    assert_equal "state_invalid", error.code
    assert_match(/\AInvalid state: /, error.message)
    assert_includes error.message, message if message
    assert_nil error.result
    error
  end

  def test_a_state_text_that_is_not_utf8_is_state_invalid_and_the_original_still_continues
    text = paused_state.to_json
    assert_includes text, '"input":"go"'
    broken = text.sub('"input":"go"', "\"input\":\"g\xFFo\"")
    binary = broken.b
    [broken, binary].each do |state|
      assert_state_invalid(state, "text is not valid UTF-8 (byte 0xFF at offset")
      error = assert_raises(Sdk::StateError) { Sdk::RunResult.from_json(state) }
      assert_equal "state_invalid", error.code
      agent, = approval_agent
      error = assert_raises(Sdk::StateError) { agent.continue_stream(state: state, client: script({ text: "x" })) }
      assert_equal "state_invalid", error.code
    end
    # Text in another encoding, or binary bytes that are UTF-8, is read as what it says.
    assert_equal "completed", continue_from(text.b).status
    assert_equal "completed", continue_from(text.encode("UTF-16LE")).status
    assert_equal "completed", continue_from(text).status
  end

  def test_a_state_hash_whose_members_are_not_json_is_state_invalid
    cyclic = JSON.parse(paused_state.to_json)
    cyclic["run"]["context"] = cyclic
    members = [
      [2**70, "integer 1180591620717411303424 does not fit in 64 bits"],
      [-(2**64), "does not fit in 64 bits"],
      [1 << 20_000, "integer of 20001 bits does not fit in 64 bits"],
      [Float::NAN, "NaN is not a JSON number"],
      [-Float::INFINITY, "-Infinity is not a JSON number"],
      [Object.new, "a Object is not a JSON value"],
      [{ 1 => 2 }, "Hash keys must be Strings or Symbols, got a Integer"],
      ["g\xFFo", "a String whose text is not valid UTF-8"],
      [10_000.times.reduce(1) { |inner, _| [inner] }, TOO_DEEP],
      [10_000.times.reduce(1) { |inner, _| { "k" => inner } }, TOO_DEEP]
    ]
    members.each do |member, message|
      state = JSON.parse(paused_state.to_json)
      state["run"]["context"] = member
      assert_state_invalid(state, message)
    end
    assert_state_invalid(cyclic, CYCLE)
    [42, false, [1, 2], :state, Object.new].each do |odd|
      assert_state_invalid(odd, "expected a RunResult, its JSON text or a Hash, got a ")
    end
    [42, nil, [1, 2], Object.new, "", "{}"].each do |odd|
      error = assert_raises(Sdk::StateError) { Sdk::RunResult.from_json(odd) }
      assert_equal "state_invalid", error.code
    end
    assert_raises(ArgumentError) { approval_agent.first.continue_stream(state: nil, client: script) }
  end

  # A state may nest 64 + 8 levels from its root (docs/behaviour.md §7): a Hash state holding a value
  # 66 levels deep (a context 68 levels down) continues, as its text does.
  def test_a_state_hash_as_deep_as_a_state_may_be_continues
    state = JSON.parse(paused_state.to_json)
    state["run"]["context"] = 66.times.reduce(1) { |inner, _| [inner] }
    assert_equal "completed", continue_from(state).status
    assert_equal "completed", continue_from(JSON.generate(state, max_nesting: false)).status
    assert_equal paused_state.status, Sdk::RunResult.from_json(JSON.parse(paused_state.to_json)).status
  end

  # A caller's own argument beyond the limits raises its ArgumentError naming it (docs/behaviour.md §7:
  # a host error), whatever the argument and however deep: never SystemStackError.
  def test_callers_values_nested_10000_deep_or_cyclic_raise_naming_the_argument
    seen = child(<<~RUBY)
      deep = 10_000.times.reduce(1) { |inner, _| [inner] }
      deep_hash = 10_000.times.reduce(1) { |inner, _| { k: inner } }
      cyclic = []
      cyclic << cyclic
      looped = { a: 1 }
      looped[:b] = [looped]
      tool = PhaseoAgentSdk::Tool.new(id: "t", parameters: { type: "object" })
      agent = PhaseoAgentSdk.create_agent(id: "a", tools: [tool])
      client = -> { PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [{ id: "c1", name: "t", arguments: "{}" }] }, { text: "ok" }]) }
      outcome { agent.run(input: deep, client: client.call).status }
      outcome { agent.run(input: "go", context: deep_hash, client: client.call).status }
      outcome { agent.run(input: "go", context: looped, client: client.call).status }
      outcome { agent.run(input: "go", client: client.call, temperature: deep).status }
      outcome { agent.run(input: "go", client: client.call, tool_choice: cyclic).status }
      paused = agent.run(input: "go", client: client.call)
      outcome { agent.continue_run(state: paused, client: client.call, tool_outputs: [{ tool_call_id: "c1", output: deep }]).status }
      outcome { agent.continue_run(state: paused, client: client.call, tool_outputs: [{ tool_call_id: "c1", output: cyclic }]).status }
      outcome { PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [{ id: "c1", name: "t", arguments: deep }] }]) && "built" }
      outcome { PhaseoAgentSdk::ScriptedClient.new([{ text: "x" }, cyclic]) && "built" }
      outcome { PhaseoAgentSdk.create_agent(id: "a", tools: [PhaseoAgentSdk::Tool.new(id: "t", parameters: deep_hash)]) && "built" }
      outcome { PhaseoAgentSdk.json_schema_validator(looped) && "built" }
      done = PhaseoAgentSdk::ScriptedClient.new([{ text: "ok" }])
      outcome { agent.continue_run(state: paused, client: done, tool_outputs: [{ tool_call_id: "c1", output: 1 }]).status }
    RUBY
    expected = [
      ["ArgumentError", "input: #{TOO_DEEP}"], ["ArgumentError", "context: #{TOO_DEEP}"],
      ["ArgumentError", "context: #{CYCLE}"], ["ArgumentError", "temperature: #{TOO_DEEP}"],
      ["ArgumentError", "tool_choice: #{CYCLE}"], ["ArgumentError", "tool_outputs: #{TOO_DEEP}"],
      ["ArgumentError", "tool_outputs: #{CYCLE}"], ["ArgumentError", "responses[0]: #{TOO_DEEP}"],
      ["ArgumentError", "responses[1]: #{CYCLE}"], ["ArgumentError", "parameters: #{TOO_DEEP}"],
      ["ArgumentError", "schema: #{CYCLE}"]
    ]
    assert_equal expected, seen.first(expected.size).map { |o| [o["raised"], o["message"]] }, seen.inspect
    assert_equal({ "ok" => "completed" }, seen.last)
  end

  # 64 levels is the limit, not 62: a run's input and context are limited by their own
  # nesting, not by where the SDK keeps them.
  def test_an_input_and_a_context_64_levels_deep_are_kept_exactly
    deep = 63.times.reduce({ "n" => 2**64 - 1 }) { |inner, _| [inner] }
    echo = tool("echo", execute: ->(_input, rt) { rt.context })
    result = Sdk.create_agent(id: "a", tools: [echo]).run(
      input: "go", context: deep, client: script({ tool_calls: [call("c1", "echo", env: "x")] }, { text: "ok" })
    )
    assert_equal "completed", result.status
    assert_equal deep, result.context
    assert_equal deep, result.step_results.first["toolResults"].first["result"]
    assert_raises(ArgumentError) { Sdk.create_agent(id: "a").run(input: [deep], client: script({ text: "ok" })) }
  end

  # What a callable gives back beyond the limits (deep, cyclic, huge, not JSON) is refused
  # with the code of where it entered; the process goes on.
  def test_callback_values_beyond_the_limits_give_the_code_of_their_place
    cyclic = { "a" => [] }
    cyclic["a"] << cyclic
    values = {
      TOO_DEEP => 10_000.times.reduce(1) { |inner, _| [inner] }, CYCLE => cyclic,
      "does not fit in 64 bits" => { "n" => -(2**63) - 1 }, "Infinity is not a JSON number" => [Float::INFINITY],
      "a String whose text is not valid UTF-8" => "\xFF".b, "a Object is not a JSON value" => Object.new
    }
    values.each do |message, value|
      places = {
        result: [->(_i, _rt) { value }, {}, "tool_output_invalid"],
        progress: [->(_i, rt) { rt.emit_progress.call(value); 1 }, {}, "tool_event_invalid"],
        set_context: [->(_i, rt) { rt.set_context.call(value); 1 }, {}, "tool_failed"],
        validator: [->(_i, _rt) { 1 }, { output_schema: ->(_v) { value } }, "tool_output_invalid"],
        hook: [nil, { on_tool_called: ->(_i, _rt) { value } }, "tool_failed"]
      }
      places.each do |place, (execute, fields, code)|
        agent = Sdk.create_agent(id: "a", tools: [tool("t", execute: execute, **fields)])
        error = assert_raises(Sdk::AgentError, "#{place}: #{message}") do
          agent.run(input: "go", client: script({ tool_calls: [call("c1", "t", env: "x")] }, { text: "ok" }))
        end
        assert_equal code, error.code, "#{place}: #{error.message}"
        assert_includes error.message, message, place
      end
      error = assert_raises(Sdk::ModelError, message) do
        Sdk.create_agent(id: "a").run(input: "go", client: ->(_request) { { text: "x", provider_data: value } })
      end
      assert_equal "model_failed", error.code
      assert_includes error.message, message
      refute_includes error.message, "stack level too deep"
    end
  end

  # A validator, a hook, a predicate or a host model client that blocks (and ignores its
  # cancellation) does not keep a cancelled run waiting: the run returns on time and the
  # callable gets Timeout::Error, as a tool does. In a child process: the run would
  # otherwise wait for the full 60 s sleep.
  def test_a_blocking_callable_does_not_keep_a_cancelled_run_waiting
    seen = child(<<~RUBY, deadline: 90)
      started = Queue.new
      stopped = Queue.new
      blocking = lambda do |*|
        started << true
        sleep 60
      rescue Timeout::Error
        stopped << true
        raise
      end
      call = { tool_calls: [{ id: "c1", name: "t", arguments: "{}" }] }
      agents = {
        "validator" => [PhaseoAgentSdk::Tool.new(id: "t", parameters: { type: "object" }, execute: ->(_i, _r) { 1 }, output_schema: blocking)],
        "hook" => [PhaseoAgentSdk::Tool.new(id: "t", parameters: { type: "object" }, on_tool_called: blocking)],
        "predicate" => [PhaseoAgentSdk::Tool.new(id: "t", parameters: { type: "object" }, execute: ->(_i, _r) { 1 }, require_approval: blocking)],
        "model" => []
      }
      agents.each do |kind, tools|
        agent = PhaseoAgentSdk.create_agent(id: "a", tools: tools)
        client = kind == "model" ? blocking : PhaseoAgentSdk::ScriptedClient.new([call, { text: "ok" }])
        token = PhaseoAgentSdk::CancelToken.new
        Thread.new { started.pop; token.cancel }
        outcome do
          began = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          status = agent.run(input: "go", client: client, cancel: token).status
          on_time = Process.clock_gettime(Process::CLOCK_MONOTONIC) - began < 30
          [kind, status, on_time, Timeout.timeout(30) { stopped.pop }]
        end
      end
      # Timeout.timeout around a run: its Timeout::Error reaches the caller (the blocking
      # validator does not take it for its own).
      agent = PhaseoAgentSdk.create_agent(id: "a", tools: agents["validator"])
      outcome { Timeout.timeout(2) { agent.run(input: "go", client: PhaseoAgentSdk::ScriptedClient.new([call, { text: "ok" }])) } }
    RUBY
    assert_equal(%w[validator hook predicate model].map { |kind| { "ok" => [kind, "cancelled", true, true] } }, seen.first(4))
    assert_equal "Timeout::Error", seen.last["raised"], seen.last.inspect
  end

  # Timeouts surface as Ruby's Timeout::Error: the run's ToolError (`tool_timeout`) has one
  # as its cause.
  def test_a_timed_out_calls_error_has_a_timeout_error_as_its_cause
    slow = tool("slow", timeout_ms: 200, execute: ->(_i, rt) { sleep 0.01 until rt.cancelled? })
    agent = Sdk.create_agent(id: "a", tools: [slow])
    begin
      agent.run(input: "go", client: script({ tool_calls: [call("c1", "slow", env: "x")] }))
      flunk "the run did not fail"
    rescue Sdk::ToolError => e
      assert_equal "tool_timeout", e.code
      assert_kind_of Timeout::Error, e.cause
      assert_equal e.message, e.cause.message
    end
    streamed = agent.stream(input: "go", client: script({ tool_calls: [call("c1", "slow", env: "x")] }))
    error = assert_raises(Sdk::ToolError) { streamed.result }
    assert_kind_of Timeout::Error, error.cause
    failing = Sdk.create_agent(id: "a", tools: [tool("boom", execute: ->(_i, _r) { raise "kaput" })])
    error = assert_raises(Sdk::ToolError) { failing.run(input: "go", client: script({ tool_calls: [call("c1", "boom", env: "x")] })) }
    assert_nil error.cause
  end

  # A tool that leaves by Thread.exit, or raises an exception whose `message` raises, with
  # no timeout to end its call: the call is answered (tool_failed), the run does not wait.
  def test_a_tool_leaving_by_thread_exit_or_an_unreadable_exception_fails_the_call_without_a_timeout
    seen = child(<<~RUBY)
      class Unreadable < StandardError
        def message = raise("no message")
      end
      call = { tool_calls: [{ id: "c1", name: "t", arguments: "{}" }] }
      { "exit" => -> { Thread.exit }, "unreadable" => -> { raise Unreadable } }.each_value do |leave|
        tool = PhaseoAgentSdk::Tool.new(id: "t", parameters: { type: "object" }, execute: ->(_i, _r) { leave.call })
        agent = PhaseoAgentSdk.create_agent(id: "a", tools: [tool])
        outcome { agent.run(input: "go", client: PhaseoAgentSdk::ScriptedClient.new([call, { text: "ok" }])).status }
      end
    RUBY
    assert_equal [["PhaseoAgentSdk::ToolError", "tool_failed"]] * 2, seen.map { |o| [o["raised"], o["code"]] }, seen.inspect
    assert_includes seen[0]["message"], "the tool's thread ended without returning a value"
    assert_includes seen[1]["message"], "Unreadable"
  end

  # What the hostile probe (test/fuzz_test.rb) found. A listener runs on the caller's thread:
  # a deadline, Thread#kill or Thread.exit there ends the run and the thread, and the process
  # then exits (the listener's interrupt was once swallowed, leaving the process unable to end).
  def test_a_blocking_listener_is_interrupted_with_its_callers_thread
    seen = child(<<~RUBY)
      require "timeout"
      tool = PhaseoAgentSdk::Tool.new(id: "t", parameters: { type: "object" }, execute: ->(_i, _r) { "ok" })
      agent = PhaseoAgentSdk.create_agent(id: "a", tools: [tool])
      client = -> { PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [{ id: "c1", name: "t", arguments: "{}" }] }, { text: "done" }]) }
      outcome { Timeout.timeout(0.5) { agent.run(input: "go", client: client.call, on_event: ->(_e) { sleep }) } }
      started = Queue.new
      killed = Thread.new { agent.run(input: "go", client: client.call, on_event: ->(_e) { started << 1; sleep }) }
      started.pop
      killed.kill
      outcome { killed.join(30) ? "killed" : "still running" }
      exited = Thread.new { agent.run(input: "go", client: client.call, on_event: ->(_e) { Thread.exit }) }
      outcome { exited.join(30) ? "exited" : "still running" }
      types = []
      outcome { [agent.run(input: "go", client: client.call, on_event: ->(e) { types << e["type"] }).status, types.first, types.last] }
    RUBY
    assert_equal "Timeout::Error", seen[0]["raised"]
    assert_equal({ "ok" => "killed" }, seen[1])
    assert_equal({ "ok" => "exited" }, seen[2])
    assert_equal({ "ok" => ["completed", "run.started", "run.completed"] }, seen[3])
  end

  def test_a_name_that_is_not_text_raises_type_error_without_calling_its_to_s
    odd = Object.new
    def odd.to_s = raise("no to_s")
    [-> { Sdk.create_agent(id: odd) }, -> { Sdk.create_agent(id: "a", tools: [tool("x").tap { |t| t.id = odd }]) },
     -> { Sdk.mcp_stdio_server("m", odd) }, -> { Sdk.mcp_stdio_server("m", "cmd", env: "x") }].each do |make|
      error = assert_raises(TypeError) { make.call }
      assert_match(/must be a (String or Symbol|Hash)/, error.message)
    end
  end

  # Every call's thread is forgotten once it ended, however quickly it ended.
  def test_no_call_thread_stays_registered_after_many_quick_calls
    quick = tool("q", execute: ->(_i, _r) { "ok" })
    agent = Sdk.create_agent(id: "q", tools: [quick])
    calls = Array.new(50) { |i| call("c#{i}", "q", env: "x") }
    agent.run(input: "go", client: script({ tool_calls: calls }, { text: "done" }))
    assert_empty Sdk::Internal::THREADS
  end

  # A duration too long for a clock is the longest wait: the tool runs, its timeout never
  # fires; an infinite one has no JSON form and is refused as an argument.
  def test_a_duration_too_long_for_a_clock_is_no_limit
    quick = tool("t", timeout_ms: 1e300, execute: ->(_i, _rt) { 1 })
    agent = Sdk.create_agent(id: "a", tools: [quick], model_retry: { max_retries: 1, backoff_ms: 1e300 })
    result = agent.run(input: "go", client: script({ tool_calls: [call("c1", "t", env: "x")] }, { text: "done" }))
    assert_equal "completed", result.status
    endless = tool("t", timeout_ms: Float::INFINITY, execute: ->(_i, _rt) { 1 })
    error = assert_raises(ArgumentError) { Sdk.create_agent(id: "a", tools: [endless]) }
    assert_equal "agent definition: Infinity is not a JSON number", error.message
  end

  # A run interrupted in a tool returns after its grace (2 s) while the cancelled run still
  # waits for the save of its final state (up to 5 s); when the run lets go of that save,
  # a blocked save's thread is stopped without any further call into the SDK.
  def test_a_callable_abandoned_after_an_interrupt_is_stopped_without_another_call
    blocked = Queue.new
    accessor = Object.new
    accessor.define_singleton_method(:load) { |_run_id| nil }
    accessor.define_singleton_method(:save) do |result|
      next unless result.status == "cancelled"

      blocked << Thread.current
      sleep
    end
    slow = tool("slow", execute: ->(_i, _rt) { sleep 30 })
    agent = Sdk.create_agent(id: "a", tools: [slow], store: accessor)
    client = script({ tool_calls: [call("c1", "slow", env: "x")] }, { text: "done" })
    assert_raises(Timeout::Error) { Timeout.timeout(0.5) { agent.run(input: "go", client: client) } }
    saving = blocked.pop
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 20
    sleep 0.05 while saving.alive? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    refute saving.alive?, "the abandoned save's thread is still blocked"
  end
end
