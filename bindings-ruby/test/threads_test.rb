# frozen_string_literal: true

require "test_helper"
require "rbconfig"
require "minitest/mock"

# Tools on Ruby threads: concurrency, timeouts, interrupts.
class ThreadsTest < Minitest::Test
  include SdkHelpers

  # Counts the tools in flight. Each waits (up to 10 s) until `target` were in flight at
  # once: a barrier rather than a fixed sleep, so that threads a loaded machine starts
  # slowly still overlap, while a lower cap leaves the peak below `target`.
  def counting_tool(id, target, stats, mutex)
    all_in = ConditionVariable.new
    tool(id, execute: lambda { |input, _rt|
      mutex.synchronize do
        stats[:now] += 1
        stats[:max] = [stats[:max], stats[:now]].max
        all_in.broadcast if stats[:max] >= target
        deadline = monotonic + 10
        all_in.wait(mutex, deadline - monotonic) while stats[:max] < target && monotonic < deadline
        stats[:now] -= 1
      end
      input
    })
  end

  # Each tool waits (up to 10 s) until all 200 are in flight at once: a cap below 200, or
  # tools run one after another, leave the peak below 200. A barrier rather than a fixed
  # sleep, so that starting 200 threads on a busy machine cannot make the count flaky.
  def test_200_concurrent_tools_run_at_once_results_in_call_order
    stats = { now: 0, max: 0 }
    mutex = Mutex.new
    all_in = ConditionVariable.new
    work = tool("work", execute: lambda { |input, _rt|
      mutex.synchronize do
        stats[:now] += 1
        stats[:max] = [stats[:max], stats[:now]].max
        all_in.broadcast if stats[:now] == 200
        deadline = monotonic + 10
        all_in.wait(mutex, deadline - monotonic) while stats[:max] < 200 && monotonic < deadline
        stats[:now] -= 1
      end
      input
    })
    agent = PhaseoAgentSdk.create_agent(id: "many", tools: [work], tool_execution: { tool_concurrency: 200 })
    calls = (0...200).map { |i| call("c#{i}", "work", env: i.to_s) }
    started = monotonic
    result = agent.run(input: "go", client: script({ tool_calls: calls }, { text: "done" }))
    elapsed = monotonic - started
    assert_equal "done", result.output
    assert_equal 200, stats[:max]
    assert_operator elapsed, :<, 10.0, "200 tools must be in flight at once (took #{elapsed}s)"
    assert_equal (0...200).map { |i| { "env" => i.to_s } }, tool_messages(result).map { |m| JSON.parse(m["content"]) }
  end

  def test_tool_concurrency_limit
    stats = { now: 0, max: 0 }
    mutex = Mutex.new
    agent = PhaseoAgentSdk.create_agent(id: "four", tools: [counting_tool("work", 4, stats, mutex)],
                                        tool_execution: { tool_concurrency: 4 })
    agent.run(input: "go", client: script({ tool_calls: (0...12).map { |i| call("c#{i}", "work", env: "x") } }, { text: "ok" }))
    assert_equal 4, stats[:max]
  end

  def test_cooperative_tool_sees_cancelled_on_timeout
    observed = Queue.new
    # The deadline is 1 s away so that the tool's thread has begun before it must see the
    # cancellation (a loaded machine may take several hundred ms to start it).
    t = tool("slow", timeout_ms: 1000, on_error: "return-to-model", execute: lambda { |_i, rt|
      1500.times do
        break observed << :cancelled if rt.cancelled?

        sleep 0.01
      end
    })
    agent = PhaseoAgentSdk.create_agent(id: "t", tools: [t])
    started = monotonic
    result = agent.run(input: "go", client: script({ tool_calls: [call("c", "slow", env: "x")] }, { text: "after timeout" }))
    assert_operator monotonic - started, :<, 2.5
    assert_equal "after timeout", result.output
    assert_includes tool_messages(result).first["content"], "timed out"
    assert_equal :cancelled, Timeout.timeout(10) { observed.pop }
  end

  def test_blocking_tool_is_interrupted_like_timeout_timeout_and_the_run_returns_on_time
    interrupted = Queue.new
    # The deadline is 1 s away so that the tool's thread has begun (and can be interrupted)
    # even on a loaded machine; the bound below stays far from the 30 s sleep.
    t = tool("block", timeout_ms: 1000, execute: lambda { |_i, _rt|
      begin
        sleep 30 # ignores cancellation
      rescue Timeout::Error => e
        interrupted << e.class
        raise
      end
    })
    agent = PhaseoAgentSdk.create_agent(id: "t", tools: [t])
    started = monotonic
    error = assert_raises(PhaseoAgentSdk::ToolError) do
      agent.run(input: "go", client: script({ tool_calls: [call("c", "block", env: "x")] }))
    end
    assert_operator monotonic - started, :<, 2.5
    assert_equal "tool_timeout", error.code
    assert_equal "failed", error.result.status
    assert_equal Timeout::Error, Timeout.timeout(10) { interrupted.pop }
  end

  # The eight runs' tools wait for each other (a barrier, up to 10 s): the peak shows the
  # runs were in flight at once however slowly a loaded machine starts the threads.
  def test_runs_from_several_ruby_threads_at_once
    stats = { now: 0, max: 0 }
    mutex = Mutex.new
    agent = PhaseoAgentSdk.create_agent(id: "par", tools: [counting_tool("echo", 8, stats, mutex)])
    outputs = (0...8).map do |n|
      Thread.new do
        agent.run(input: "go", client: script({ tool_calls: [call("c", "echo", env: n.to_s)] }, { text: "r#{n}" })).output
      end
    end.map(&:value)
    assert_equal (0...8).map { |n| "r#{n}" }, outputs
    assert_equal 8, stats[:max], "the eight runs were not in flight at once"
  end

  def test_ctrl_c_stops_a_blocking_run
    script_text = <<~RUBY
      require "phaseo_agent_sdk"
      # "running" once the tool has begun: the run is in progress when the signal comes.
      t = PhaseoAgentSdk::Tool.new(id: "block", parameters: { type: "object" },
                                   execute: ->(_i, _r) { $stdout.puts "running"; $stdout.flush; sleep 60 })
      agent = PhaseoAgentSdk.create_agent(id: "c", tools: [t])
      client = PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [{ id: "c", name: "block", arguments: "{}" }] }])
      begin
        agent.run(input: "go", client: client)
      rescue Interrupt
        $stdout.puts "interrupted"; exit 42
      end
    RUBY
    lib = File.expand_path("../lib", __dir__)
    IO.popen([RbConfig.ruby, "-I#{lib}", "-e", script_text], err: File::NULL) do |io|
      assert_equal "running\n", io.gets
      sleep 0.3
      started = monotonic
      Process.kill("INT", io.pid)
      assert_equal "interrupted\n", io.gets
      assert_operator monotonic - started, :<, 5.0
    end
    assert_equal 42, $?.exitstatus
  end

  # Runs whose first tool calls start at once, while Ruby switches threads at every
  # constant lookup (a TracePoint passes the GVL on): the lookups of the SDK's own classes
  # must not leave one thread waiting on another that waits for the GVL (the process
  # would hang). In a child process, killed if it hangs.
  def test_runs_starting_together_while_ruby_switches_threads_never_hang
    seen = child(<<~RUBY, deadline: 60)
      switching = TracePoint.new(:c_call) { |tp| 3.times { Thread.pass } if tp.method_id == :const_get }
      tool = PhaseoAgentSdk::Tool.new(id: "t", parameters: { type: "object" }, execute: ->(_i, _r) { "ok" })
      agent = PhaseoAgentSdk.create_agent(id: "a", tools: [tool])
      call = { tool_calls: [{ id: "c1", name: "t", arguments: "{}" }] }
      switching.enable
      runs = Array.new(16) do
        Thread.new { agent.run(input: "go", client: PhaseoAgentSdk::ScriptedClient.new([call, { text: "ok" }])).status }
      end
      statuses = runs.map(&:value)
      switching.disable
      outcome { statuses.tally }
    RUBY
    assert_equal [{ "ok" => { "completed" => 16 } }], seen
  end

  # Hundreds of runs at once, each with a tool that outlives its 5 ms timeout by about the
  # grace before the interrupt: the interrupt lands anywhere in the tool's thread (before
  # its first line, in the tool, in its rescue or ensure), and every run still returns. On
  # a loaded machine a tool may finish before its timeout fires (the run then completes,
  # or fails with the tool's error); what may not happen is a run left waiting. In a child
  # process, killed if it hangs.
  def test_interrupts_landing_anywhere_in_a_tool_thread_never_leave_a_run_waiting
    script_text = <<~RUBY
      require "json"
      require "phaseo_agent_sdk"
      t = PhaseoAgentSdk::Tool.new(id: "slow", parameters: { type: "object" }, timeout_ms: 5,
                                   execute: lambda { |_i, _r|
                                     sleep(0.04 + (rand * 0.03))
                                     raise "done late" if rand < 0.5

                                     "late"
                                   })
      agent = PhaseoAgentSdk.create_agent(id: "race", tools: [t])
      3.times do
        codes = Queue.new
        Array.new(300) do
          Thread.new do
            client = PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [{ id: "c", name: "slow", arguments: "{}" }] }, { text: "ok" }])
            agent.run(input: "go", client: client)
            codes << "completed"
          rescue PhaseoAgentSdk::AgentError => e
            codes << e.code
          end
        end.each(&:join)
        counts = Hash.new(0)
        counts[codes.pop] += 1 until codes.empty?
        $stdout.puts JSON.generate(counts)
        $stdout.flush
      end
    RUBY
    lib = File.expand_path("../lib", __dir__)
    lines = []
    IO.popen([RbConfig.ruby, "-I#{lib}", "-e", script_text], err: File::NULL) do |io|
      reader = Thread.new { io.each_line { |line| lines << line.chomp } }
      unless reader.join(60)
        Process.kill("KILL", io.pid)
        flunk "runs were left waiting: after 60 s the child printed #{lines.inspect}"
      end
    end
    assert_equal 3, lines.size, lines.inspect
    lines.each do |line|
      counts = JSON.parse(line)
      assert_equal 300, counts.values.sum, line
      assert_empty counts.keys - %w[tool_timeout tool_failed completed], line
      assert_operator counts.fetch("tool_timeout", 0), :>, 0, line
    end
  end

  # A call the core abandons (its timeout, the run's cancellation) before any thread took
  # it never starts: its thread finds nothing to run. The threads are held at their start
  # (a gate in front of `run_oldest_call`) so that the cancellation comes first whatever
  # the scheduler does; the second call, not cancelled, still runs once the gate opens.
  def test_a_call_cancelled_before_a_thread_took_it_never_runs
    internal = PhaseoAgentSdk::Internal
    gate = Queue.new
    ran = Queue.new
    answers = Queue.new
    completion = Struct.new(:name) do
      define_method(:ok) { |value| answers << [name, :ok, value] }
      define_method(:err) { |text| answers << [name, :err, text] }
    end
    original = internal.method(:run_oldest_call)
    internal.define_singleton_method(:run_oldest_call) do
      gate.pop
      original.call
    end
    begin
      id = internal.register(->(name) { ran << name; name })
      internal.start_call(id, ["first"], completion.new("first"), -1)
      internal.start_call(id, ["second"], completion.new("second"), -2)
      internal.cancel_call(-1)
      2.times { gate << true }
      assert_equal ["second", :ok, "second"], answers.pop
      sleep 0.05
      assert_equal ["second"], Array.new(ran.size) { ran.pop }
      assert answers.empty?, -> { "the cancelled call was answered: #{answers.pop.inspect}" }
      assert_empty internal::PENDING
    ensure
      internal.define_singleton_method(:run_oldest_call, original)
      internal.release([id]) if id
    end
  end

  # A call whose thread cannot be started (the system's limit on threads) fails where it is
  # started and is not left queued, where the thread of a later call would run it.
  def test_a_call_whose_thread_cannot_start_is_not_left_queued
    internal = PhaseoAgentSdk::Internal
    id = internal.register(->(*) { flunk "the call ran" })
    Thread.stub(:new, ->(*) { raise ThreadError, "can't create Thread: Resource temporarily unavailable" }) do
      error = assert_raises(ThreadError) { internal.start_call(id, [], Object.new, -3) }
      assert_match(/can't create Thread/, error.message)
    end
    assert_empty internal::PENDING
  ensure
    internal.release([id]) if id
  end
end
