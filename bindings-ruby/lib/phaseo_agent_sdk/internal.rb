# frozen_string_literal: true

module PhaseoAgentSdk
  # The Ruby half of the native bridge (not public API). The core names Ruby callables by
  # registry ids; calls run on Ruby threads of their own (see `start_call`).
  module Internal
    REGISTRY = {} # rubocop:disable Style/MutableConstant
    THREADS = {} # rubocop:disable Style/MutableConstant
    # Calls started and not yet taken by a thread, oldest first (see `start_call`).
    PENDING = [] # rubocop:disable Style/MutableConstant
    MUTEX = Mutex.new
    # Ids of collected agents, dropped from REGISTRY at the next registration.
    RELEASED = Queue.new
    @next_id = 0

    MARKER = "\u0001phaseo:"
    # The wake pipe: the native queue writes a byte whenever a job or an outcome arrives;
    # a thread waiting for a run waits on it in Ruby (so Ctrl-C and Thread#raise reach it).
    WAKE_R, WAKE_W = IO.pipe
    WAKE_W.nonblock = true
    WAKE_R.nonblock = true
    Native.set_wake_fd(WAKE_W.fileno)
    # The thread that serves the queue for a while after an interrupted wait
    # (bindings-ruby/src/drain.rs) stops when the program exits rather than holding the exit.
    at_exit { Native.stop_drain }
    # How long a cancelled call may take to notice `runtime.cancelled?` (or end) by itself.
    CANCEL_GRACE = 0.05
    # How deep `stringify` walks: a value's own 64 levels plus the SDK's structure around it,
    # as deep as a state may be (the native conversion then checks each value's limit
    # exactly).
    WALK_DEPTH = Native::STATE_DEPTH

    class << self
      # Waits (GVL released, interruptible) until woken or `timeout` seconds pass.
      def wait(timeout)
        WAKE_R.wait_readable(timeout) && WAKE_R.read_nonblock(4096, exception: false)
        nil
      end

      # Registers a callable; returns its id.
      def register(callable)
        raise TypeError, "expected a callable (responds to call), got #{callable.class}" unless callable.respond_to?(:call)

        MUTEX.synchronize do
          RELEASED.pop(true).each { |id| REGISTRY.delete(id) } until RELEASED.empty?
          @next_id += 1
          REGISTRY[@next_id] = callable
          @next_id
        end
      end

      # Forgets callables registered for one run.
      def release(ids)
        MUTEX.synchronize { ids.each { |id| REGISTRY.delete(id) } }
      end

      # A finalizer releasing these ids (it must not capture the agent itself).
      # (A finalizer may run inside MUTEX on this very thread, or at exit: it only queues.)
      def releaser(ids)
        proc { RELEASED << ids }
      end

      # An event listener (run on the thread that called `run`): its exceptions are
      # reported, never raised into the run; an interrupt of that thread (Ctrl-C,
      # `Thread#raise` of a SignalException, `exit`) is the caller's, and is re-raised
      # (the run is cancelled, see `host::serve_run`).
      def call_listener(id, args)
        REGISTRY.fetch(id).call(*args)
        nil
      rescue SignalException, SystemExit
        raise
      rescue Exception => e # rubocop:disable Lint/RescueException
        warn "phaseo_agent_sdk: on_event raised #{e.class}: #{exception_text(e)}"
        nil
      end

      # Starts a call (a tool, a validator, a hook, a model client...) on a Ruby thread of
      # its own with `args`; the thread answers on `completion`, exactly once, whatever
      # happens to it. An exception of ANY class (even Interrupt or SystemExit raised by the
      # callable) becomes the call's error: a callable never takes the process down. The
      # call is queued and a thread started for it; Ruby starts threads in no particular
      # order, so a thread runs the oldest call no thread has taken (`run_oldest_call`):
      # calls start in call order, and the thread serving the run goes on at once (it only
      # queues calls and starts threads, so a callable that blocks never keeps a cancelled
      # run from returning, see cancel_call).
      #
      # Interrupts from other threads (the cancellation's Timeout::Error, Thread#raise,
      # Thread#kill) are deferred everywhere but inside the callable itself: one landing in
      # the rescue or ensure would leave the call unanswered.
      def start_call(id, args, completion, key)
        fn = REGISTRY.fetch(id)
        # Deferred for the whole hand-over: an interrupt of the serving thread between
        # queueing the call and starting its thread would leave the call queued with no
        # thread started for it. Created inside the deferring block, the thread starts with
        # interrupts deferred too (a thread inherits its creator's interrupt mask): none can
        # come before its first line.
        Thread.handle_interrupt(Object => :never) do
          MUTEX.synchronize { PENDING << [fn, args, completion, key] }
          begin
            Thread.new { run_oldest_call }
          rescue Exception # rubocop:disable Lint/RescueException
            # No thread (the system's limit): the call is not left queued for another's.
            MUTEX.synchronize { PENDING.reject! { |call| call[3] == key } }
            raise
          end
        end
        nil
      end

      # The body of a call's thread: takes the oldest queued call and runs it, registered
      # (for cancel_call) under the call's key from the moment it is taken until it is
      # answered. Nothing to take: the call this thread was started for was cancelled
      # before any thread took it.
      def run_oldest_call
        Thread.current.report_on_exception = false
        fn, args, completion, key = MUTEX.synchronize do
          call = PENDING.shift
          THREADS[call[3]] = Thread.current if call
          call
        end
        return if completion.nil?

        answered = false
        begin
          value = Thread.handle_interrupt(Object => :immediate) { fn.call(*args) }
          answered = true
          completion.ok(value)
        rescue Exception => e # rubocop:disable Lint/RescueException
          answered = true
          completion.err(exception_text(e))
        ensure
          # The callable left by Thread.exit or `throw`: no value and no exception.
          completion.err("the tool's thread ended without returning a value") unless answered
          MUTEX.synchronize { THREADS.delete(key) }
        end
      end

      # What an exception says: its message, else its class name; never raises (a message
      # method that raises, or returns something odd, still gives a text), and always UTF-8
      # (bytes that are not become U+FFFD).
      def exception_text(error)
        text = begin
          utf8(error.message.to_s)
        rescue Exception # rubocop:disable Lint/RescueException
          nil
        end
        return text unless text.nil? || text.empty?

        begin
          error.class.name.to_s
        rescue Exception # rubocop:disable Lint/RescueException
          "a Ruby callable raised an exception whose message could not be read"
        end
      end

      # `text` as valid UTF-8 (a binary or broken String's bad bytes replaced).
      def utf8(text)
        text = text.dup.force_encoding(Encoding::UTF_8) if text.encoding == Encoding::BINARY
        text = text.encode(Encoding::UTF_8, invalid: :replace, undef: :replace) unless text.encoding == Encoding::UTF_8
        text.valid_encoding? ? text : text.scrub
      end

      # The core abandoned a call (timeout, cancellation): a tool's `runtime.cancelled?` is
      # true at once; a thread still running after CANCEL_GRACE seconds is interrupted the
      # way `Timeout.timeout` does (Timeout::Error raised in it). The run does not wait.
      def cancel_call(key)
        thread = MUTEX.synchronize do
          # Not taken yet: it never starts (the core no longer waits for its answer).
          PENDING.reject! { |call| call[3] == key } unless THREADS.key?(key)
          THREADS.delete(key)
        end
        return unless thread&.alive?

        Thread.new do
          sleep CANCEL_GRACE
          thread.raise(Timeout::Error, "execution expired") if thread.alive?
        end
        nil
      end

      # Runs a native entry point, turning encoded core errors into SDK exceptions.
      def native
        yield
      rescue ArgumentError => e
        raise unless e.message.start_with?(MARKER)

        raise error_from_json(e.message.delete_prefix(MARKER))
      end

      # Raises the SDK exception of the core's error JSON. A timed-out call's error
      # (`tool_timeout`, a ToolError) has a Timeout::Error as its `cause`, so code written for
      # Ruby's timeouts finds one (`rescue PhaseoAgentSdk::ToolError => e; e.cause`).
      def raise_error(text)
        error = text.is_a?(AgentError) ? text : error_from_json(text)
        cause = error.code == "tool_timeout" ? Timeout::Error.new(error.message) : nil
        raise error, cause: cause
      end

      # An SDK exception from the core's error JSON.
      def error_from_json(text)
        body = Native.parse_json(text)
        result = body["result"] && RunResult.new(Native.to_json(body["result"]))
        PhaseoAgentSdk.error_class(body["code"]).new(
          body["message"], code: body["code"], result: result, target: body["target"], gateway: body["gateway"]
        )
      end

      # A call the core handed over (`{"id", "name", "input"}`) as a ToolCall.
      def tool_call(hash)
        ToolCall.new(id: hash["id"], name: hash["name"], input: hash["input"])
      end

      # A name the caller gave (an id, a command, a URL…) as text: a String, Symbol or
      # Integer; anything else raises TypeError naming `what` (its own `to_s` is never called).
      def name(value, what)
        case value
        when String, Symbol, Integer then value.to_s
        else raise TypeError, "#{what} must be a String or Symbol, got #{Module.instance_method(:name).bind_call(value.class) || 'an anonymous class'}"
        end
      end

      # `snake_case` → `camelCase` (a key of the core's definition format).
      def camel(key)
        key.to_s.gsub(/_([a-z0-9])/) { Regexp.last_match(1).upcase }
      end

      # Deep-converts Symbol keys to String keys (values handed on to the core as they are).
      # Counts its depth and keeps the containers of its path, so a value nested 10,000
      # deep or holding itself raises ArgumentError ("`what`: value is nested more than 64
      # levels deep" / "...: value contains a cycle") instead of running out of stack.
      def stringify(value, what = "value", depth = 0, path = nil)
        return value unless value.is_a?(Hash) || value.is_a?(Array)
        raise ArgumentError, "#{what}: #{Native::TOO_DEEP}" if depth >= WALK_DEPTH

        path ||= {}.compare_by_identity
        raise ArgumentError, "#{what}: #{Native::CYCLE}" if path.key?(value)

        path[value] = true
        begin
          if value.is_a?(Hash)
            value.each_with_object({}) { |(k, v), h| h[k.is_a?(Symbol) ? k.to_s : k] = stringify(v, what, depth + 1, path) }
          else
            value.map { |v| stringify(v, what, depth + 1, path) }
          end
        ensure
          path.delete(value)
        end
      end

      # A Hash's own keys as Strings (Symbol keys converted), its values left as they are.
      def string_keys(hash)
        hash.to_h.transform_keys { |k| k.is_a?(Symbol) ? k.to_s : k }
      end
    end
  end

  # What a tool sees of its run (the native class): `run_id`, `agent_id`, `step_index`,
  # `context`, `tool_call`, `tool_annotations`, `attempt` (1-based; see `Tool#retry`),
  # `idempotency_key` (`"<run_id>:<tool_call_id>"`, the same on every attempt and across
  # continue and recover: hand it to a side-effecting service), `cancelled?`.
  # `emit_progress` and `set_context` are procs, as in the product:
  # `runtime.emit_progress.call(stage: "fetch")`.
  class ToolRuntime
    alias native_tool_call tool_call
    private :native_tool_call

    # The call being run, a `ToolCall`: `runtime.tool_call.id`
    # (or `runtime.tool_call["id"]`).
    def tool_call = Internal.tool_call(native_tool_call)

    # A proc publishing a progress value (`tool.preliminary_result`).
    def emit_progress
      ->(value = nil, **fields) { native_emit_progress(fields.empty? ? value : fields) }
    end

    # A proc replacing the application context for later turns.
    def set_context
      ->(value = nil, **fields) { native_set_context(fields.empty? ? value : fields) }
    end

    # Whether the call was cancelled (timeout or run cancellation).
    def cancelled
      cancelled?
    end
  end
end
