# frozen_string_literal: true

# Seeded fuzzing of the Ruby boundary: generated host values (deep, cyclic, huge integers,
# NaN/Infinity, text that is not UTF-8, binary and UTF-16 Strings, Symbols, objects that are
# not JSON, objects whose to_s/to_json/inspect raise, frozen things, Hash/Array subclasses)
# returned through every kind of callable; odd exceptions raised by every kind of callable;
# mutated paused states (their text and their Hash form) through continue_run. Each value
# is judged by a small reference model of docs/behaviour.md §7 (docs/behaviour.md) written here:
# accepted values must come back exactly, refused ones with the error of the place they
# entered; a state is continued or refused with state_invalid/continue_invalid, and after a
# refusal the original state still continues. Never a Ruby exception of another kind, a
# crash or a hang.
#
# The hostile probe adds: every kind of callable (tool, validators, approval predicates,
# hooks, stop conditions, dynamic instructions/model, human review, on_event, a host model's
# generate and stream, a state accessor's load and save) misbehaving in every way Ruby
# allows (odd values, any exception, throw, Thread.exit/kill, Fibers, Ractors, endless
# recursion, blocking, nested runs, GC.compact) with the run cancelled, under a deadline or
# timed out at a random point; wrong option types and values; many concurrent runs; batches
# checked for left-over threads and growing memory; big states (up to 16 MB) read from any
# thread.
#
# `PHASEO_FUZZ_RUNS` sets the inputs per property (default 800: about 8,000 in all;
# `make fuzz-ruby` uses many more), `PHASEO_FUZZ_SEED` the seed (printed on failure), and
# `PHASEO_FUZZ_CASE` replays one case. Each property runs in child processes (this file,
# with PHASEO_FUZZ_PROPERTY set), each case on a thread of its own; the parent counts a
# child that dies (a death) or stops printing (a hang) and goes on from the next case, and
# the children count failed checks by kind (wrong error kind, lost state, hang, leak).

require "json"
require "rbconfig"

# Generators, the reference model and the properties (run in the child).
module Fuzz
  SEED = Integer(ENV.fetch("PHASEO_FUZZ_SEED", "20261203"))
  RUNS = [Integer(ENV.fetch("PHASEO_FUZZ_RUNS", "800")), 1].max
  ONLY_CASE = ENV["PHASEO_FUZZ_CASE"]&.then { |c| Integer(c) }
  MAX_DEPTH = 64
  TOO_DEEP = "value is nested more than 64 levels deep"
  CYCLE = "value contains a cycle"
  NOT_JSON = "is not a JSON value"
  CALL = { tool_calls: [{ id: "c1", name: "t", arguments: "{}" }] }.freeze

  # The value the SDK keeps for a host value, or the reason it refuses it.
  Refused = Struct.new(:message)

  # Objects whose text methods raise: the SDK never calls them.
  class Unprintable
    def to_s = raise("no to_s")
    def to_json(*) = raise("no to_json")
    def inspect = raise("no inspect")
  end

  class OddHash < Hash; end
  class OddArray < Array; end

  module_function

  # --- the reference model (docs/behaviour.md §7 as the Ruby binding applies it) -------------------

  # What `value` becomes (String keys, UTF-8 text), or a Refused with the reader's reason.
  def expected(value, limit = MAX_DEPTH)
    path = {}.compare_by_identity
    walk = lambda do |v|
      case v
      when nil, true, false then v
      when Integer
        return v if v >= -(2**63) && v < 2**64

        digits = v.bit_length <= 4096 ? v.to_s : "of #{v.bit_length} bits"
        throw :refused, Refused.new("integer #{digits} does not fit in 64 bits")
      when Float
        return json_float(v) if v.finite?

        throw :refused, Refused.new("#{v.nan? ? 'NaN' : (v.positive? ? 'Infinity' : '-Infinity')} is not a JSON number")
      when String then text(v) || throw(:refused, Refused.new("a String whose text"))
      when Symbol then v.to_s
      when Array, Hash
        throw :refused, Refused.new(TOO_DEEP) if path.size >= limit
        throw :refused, Refused.new(CYCLE) if path.key?(v)

        path[v] = true
        out = if v.is_a?(Array)
                v.map { |item| walk.call(item) }
              else
                v.each_with_object({}) do |(k, item), h|
                  key = case k
                        when String then text(k) || throw(:refused, Refused.new("a Hash key whose text"))
                        when Symbol then k.to_s
                        else throw :refused, Refused.new("Hash keys must be Strings or Symbols")
                        end
                  h[key] = walk.call(item)
                end
              end
        path.delete(v)
        out
      else throw :refused, Refused.new(NOT_JSON)
      end
    end
    catch(:refused) { walk.call(value) }
  end

  # A Float as it reads back from canonical JSON, which writes an integral float without a
  # fraction, in its shortest digits (2.0**63 → 9223372036854776000): one beyond 2^53 that
  # fits 64 bits then reads as the Integer of those digits.
  def json_float(float)
    return float unless float.abs >= 2**53 && float == float.truncate

    digits = float.to_s.to_r.to_i
    digits >= -(2**63) && digits < 2**64 ? digits : float
  end

  # A String's UTF-8 text, or nil: UTF-8, US-ASCII and binary Strings are their bytes,
  # others are transcoded.
  def text(string)
    if [Encoding::UTF_8, Encoding::US_ASCII, Encoding::BINARY].include?(string.encoding)
      utf8 = string.dup.force_encoding(Encoding::UTF_8)
      utf8.valid_encoding? ? utf8 : nil
    else
      string.encode(Encoding::UTF_8)
    end
  rescue EncodingError
    nil
  end

  # --- generators ------------------------------------------------------------------

  CHARS = ["a", "z", " ", "\"", "\\", "\u0000", "\n", "é", "ß", "\u2028", "漢", "😀", "\u{10FFFF}", "{", "]"].freeze
  FLOATS = [0.0, -0.0, 0.5, -1.5, 1e300, -1e-300, 5e-324, 2.0**53, 2.0**63, 2.0**64, 1e20, 1.7976931348623157e308].freeze
  INTS = [0, 1, -1, 2**53, -(2**63), 2**63 - 1, 2**63, 2**64 - 1].freeze

  # UTF-8 text.
  def plain(rng) = Array.new(rng.rand(0..6)) { CHARS.sample(random: rng) }.join

  # Text in UTF-8, as binary bytes, or in UTF-16.
  def string(rng)
    s = plain(rng)
    case rng.rand(6)
    when 0 then s.b # binary bytes that are UTF-8
    when 1 then s.encode(Encoding::UTF_16LE)
    else s
    end
  end

  # Storable values: what must come back exactly (after `expected`).
  def storable(rng, depth = 0)
    case rng.rand(depth >= 4 ? 7 : 10)
    when 0 then nil
    when 1 then rng.rand(2).zero?
    when 2 then rng.rand(3).zero? ? INTS.sample(random: rng) : rng.rand(-(2**63)...(2**64))
    when 3 then rng.rand(2).zero? ? FLOATS.sample(random: rng) : (rng.rand - 0.5) * (10**rng.rand(-30..30))
    when 4, 5 then string(rng)
    when 6 then plain(rng).to_sym
    when 7 then (rng.rand(4).zero? ? OddArray.new : []).concat(Array.new(rng.rand(0..4)) { storable(rng, depth + 1) })
    else
      hash = rng.rand(4).zero? ? OddHash.new : {}
      rng.rand(0..4).times do |i|
        key = "#{plain(rng)}#{i}"
        hash[rng.rand(3).zero? ? key.to_sym : key] = storable(rng, depth + 1)
      end
      hash
    end.then { |v| rng.rand(5).zero? ? v.freeze : v }
  end

  # A value nested `levels` deep around `inner`.
  def nest(inner, levels, rng)
    array = rng.rand(2).zero?
    levels.times.reduce(inner) { |v, _| array ? [v] : { "k" => v } }
  end

  # Values the SDK must refuse (or, for the odd ones, may keep): placed somewhere inside a
  # storable value.
  def hostile(rng)
    bad = case rng.rand(12)
          when 0 then nest(storable(rng), rng.rand(65..3000), rng)
          when 1
            loop = { "inner" => storable(rng) }
            loop["self"] = nest(loop, rng.rand(0..5), rng)
            { "wrap" => loop }
          when 2 then [1, -1].sample(random: rng) * (2**64 + rng.rand(2**rng.rand(1..300)))
          when 3 then 1 << rng.rand(4097..30_000)
          when 4 then [Float::NAN, Float::INFINITY, -Float::INFINITY].sample(random: rng)
          when 5 then "ok\xFF\xFE#{plain(rng)}".dup.force_encoding(rng.rand(2).zero? ? Encoding::UTF_8 : Encoding::BINARY)
          when 6 then { [1, nil, 2.5, [], Object.new].sample(random: rng) => storable(rng) }
          when 7 then { "\xC3(".b => 1 }
          when 8 then [Object.new, Unprintable.new, 1..2, Time.at(0), -> {}, Class.new.new, Struct.new(:a).new(1)].sample(random: rng)
          when 9 then Unprintable.new.freeze
          when 10 then "\xFF".dup.force_encoding(Encoding::UTF_16LE)
          else storable(rng) # sometimes nothing wrong at all
          end
    embed(storable_container(rng), bad, rng)
  end

  def storable_container(rng)
    rng.rand(3).zero? ? nil : [{ "a" => 1 }, [0, 1], { "list" => [] }].sample(random: rng)
  end

  # `bad` placed into a copy of `outer` (a nil outer: `bad` itself).
  def embed(outer, bad, _rng)
    case outer
    when Hash then outer.merge("bad" => bad)
    when Array then outer + [bad]
    else bad
    end
  end

  # Deep-copies plain JSON-like data (the paused state).
  def copy(value) = Marshal.load(Marshal.dump(value))

  # A short description of a value that may be deep, cyclic or impossible to inspect.
  def describe(value, depth = 0)
    return "…" if depth > 3

    case value
    when Hash then "{#{value.first(3).map { |k, v| "#{describe(k, depth + 1)}=>#{describe(v, depth + 1)}" }.join(', ')}#{value.size > 3 ? ', …' : ''}}"
    when Array then "[#{value.first(3).map { |v| describe(v, depth + 1) }.join(', ')}#{value.size > 3 ? ', …' : ''}]"
    when String then "#{value.encoding}:#{value.b[0, 20].inspect}"
    when Integer then value.bit_length > 80 ? "Integer(#{value.bit_length} bits)" : value.to_s
    when nil, true, false, Float, Symbol then value.inspect
    else "#<#{value.class.name || 'anonymous class'}>"
    end
  end

  # --- properties ------------------------------------------------------------------

  # A failed check, and what it counts as: `:wrong_kind` (an error outside the documented
  # classes and codes, or a wrong value), `:lost_state`, `:hang` or `:leak`.
  class Failure < StandardError
    attr_reader :kind

    def initialize(message, kind = :wrong_kind)
      super(message)
      @kind = kind
    end
  end

  # The message block runs only on failure (it may describe what only exists then).
  def check(condition, kind = :wrong_kind)
    raise Failure.new(yield, kind) unless condition
  end

  def sdk = PhaseoAgentSdk

  def tool(**fields) = sdk::Tool.new(id: "t", parameters: { type: "object" }, **fields)

  def one_call = sdk::ScriptedClient.new([CALL, { text: "done" }])

  # A callable's value through each place; `limit`: the value's own depth limit there.
  VALUE_PLACES = {
    "result" => { limit: 64, codes: %w[tool_output_invalid] },
    "progress" => { limit: 64, codes: %w[tool_event_invalid] },
    "set_context" => { limit: 64, codes: %w[tool_failed] },
    "validator" => { limit: 64, codes: %w[tool_output_invalid] },
    "hook" => { limit: 63, codes: %w[tool_failed] },
    "model" => { limit: 63, codes: %w[model_failed tool_input_invalid] },
    "stream" => { limit: 63, codes: %w[model_failed tool_input_invalid] },
    "input" => { limit: 64, host: true },
    "context" => { limit: 64, host: true },
    "tool_output" => { limit: 64, host: true }
  }.freeze

  # Runs `value` through `place`: [:ok, the value read back] or [:error, exception].
  def through(place, value)
    tool_result = ->(result) { result.step_results.first["toolResults"].first }
    case place
    when "result", "validator", "hook", "progress", "set_context"
      fields = {
        "result" => { execute: ->(_i, _r) { value } },
        "validator" => { execute: ->(_i, _r) { 1 }, output_schema: ->(_v) { value } },
        "hook" => { on_tool_called: ->(_i, _r) { [value] } },
        "progress" => { execute: ->(_i, rt) { rt.emit_progress.call(value) ; "ok" } },
        "set_context" => { execute: ->(_i, rt) { rt.set_context.call(value) ; "ok" } }
      }.fetch(place)
      result = sdk.create_agent(id: "a", tools: [tool(**fields)]).run(input: "go", client: one_call)
      read = case place
             when "progress" then tool_result.call(result)["preliminaryResults"].first
             when "set_context" then result.context
             when "hook" then tool_result.call(result)["result"].first
             else tool_result.call(result)["result"]
             end
      [:ok, read, result]
    when "model", "stream"
      echo = sdk.create_agent(id: "a", tools: [tool(execute: ->(input, _r) { [input["v"]] })])
      answer = lambda do |request|
        if request.messages.last.role == "tool"
          { text: "done" }
        else
          { tool_calls: [{ id: "c1", name: "t", input: { "v" => value } }] }
        end
      end
      client = if place == "model"
                 answer
               else
                 streaming = Object.new
                 streaming.define_singleton_method(:stream) { |request, &emit| emit.call({ type: "response", response: answer.call(request) }) }
                 streaming
               end
      result = place == "model" ? echo.run(input: "go", client: client) : echo.stream(input: "go", client: client).result
      [:ok, tool_result.call(result)["result"].first, result]
    when "input"
      result = sdk.create_agent(id: "a").run(input: value, client: sdk::ScriptedClient.new([{ text: "done" }]))
      [:ok, result.run["input"], result]
    when "context"
      result = sdk.create_agent(id: "a").run(input: "go", context: value, client: sdk::ScriptedClient.new([{ text: "done" }]))
      [:ok, result.context, result]
    when "tool_output"
      agent = sdk.create_agent(id: "a", tools: [tool])
      paused = agent.run(input: "go", client: sdk::ScriptedClient.new([CALL]))
      result = agent.continue_run(state: paused, client: sdk::ScriptedClient.new([{ text: "done" }]),
                                  tool_outputs: [{ tool_call_id: "c1", output: value }])
      [:ok, tool_result.call(result)["result"], result]
    end
  rescue Exception => e # rubocop:disable Lint/RescueException
    [:error, e]
  end

  # Values through every place: kept ones come back exactly (also across a state round
  # trip), refused ones give the place's error with the reader's reason.
  def values_property(rng, hostile_share)
    place = VALUE_PLACES.keys.sample(random: rng)
    spec = VALUE_PLACES.fetch(place)
    value = rng.rand < hostile_share ? hostile(rng) : storable(rng)
    want = expected(value, spec[:limit])
    outcome, got, result = through(place, value)
    where = "#{place} #{describe(value)}"
    if want.is_a?(Refused)
      check(outcome == :error) { "#{where}: accepted, expected refused (#{want.message})" }
      if spec[:host]
        host_error = [ArgumentError, TypeError, RangeError].any? { |c| got.is_a?(c) } && !got.is_a?(sdk::AgentError)
        check(host_error) { "#{where}: #{got.class} #{got.message}, expected a host error" }
      else
        check(got.is_a?(sdk::AgentError)) { "#{where}: #{got.class}: #{got.message}" }
        check(spec[:codes].include?(got.code)) { "#{where}: code #{got.code} (#{got.message})" }
      end
      check(got.message.include?(want.message)) { "#{where}: #{got.message.inspect} does not say #{want.message.inspect}" }
      check(got.message.valid_encoding?) { "#{where}: message is not valid text" }
    else
      check(outcome == :ok) { "#{where}: refused #{got.class}: #{got.message}" }
      check(got == want) { "#{where}: came back as #{describe(got)}" }
      again = sdk::RunResult.from_json(result.to_json)
      check(again.to_json == result.to_json) { "#{where}: the state does not round-trip as text" }
      check(sdk::RunResult.from_json(result.state).to_json == result.to_json) { "#{where}: the state does not round-trip as a Hash" }
    end
  end

  # Exceptions of any kind, with messages of any kind.
  def odd_exception(rng)
    message = [
      "plain", "", "bad \xFF bytes", "bad \xFF bytes".b, "utf16 ü".encode(Encoding::UTF_16LE), "x" * 100_000, "é😀"
    ].sample(random: rng).dup
    case rng.rand(9)
    when 0 then RuntimeError.new(message)
    when 1 then Class.new(StandardError) { define_method(:message) { raise "no message" } }.new
    when 2 then Class.new(StandardError) { define_method(:message) { [nil, 42, Object.new].sample } }.new
    when 3 then Interrupt.new(message)
    when 4 then SystemExit.new(3, message)
    when 5 then NoMemoryError.new(message)
    when 6 then SignalException.new("TERM")
    when 7 then ScriptError.new(message)
    else Class.new(Exception).new(message) # rubocop:disable Lint/InheritException
    end
  end

  CALLABLES = %w[execute validator hook predicate next_turn stop model stream review instructions listener].freeze

  # A callable that raises (or throws, or leaves its thread) anywhere: the run returns a
  # result or raises an AgentError; every message is valid text.
  def exceptions_property(rng)
    how = rng.rand(6)
    error = odd_exception(rng)
    place = CALLABLES.sample(random: rng)
    fail_now = lambda do |*|
      case how
      when 0 then throw :nowhere
      when 1 then place == "listener" ? raise(error) : Thread.exit
      else raise error
      end
    end
    tools = [tool(execute: place == "execute" ? fail_now : ->(i, _r) { i },
                  output_schema: place == "validator" ? fail_now : nil,
                  on_tool_called: place == "hook" ? fail_now : nil,
                  require_approval: place == "predicate" ? fail_now : nil,
                  next_turn_params: place == "next_turn" ? fail_now : nil,
                  on_error: rng.rand(2).zero? ? "return-to-model" : nil)]
    definition = { id: "a", tools: tools }
    definition[:human_review] = fail_now if place == "review"
    definition[:instructions] = fail_now if place == "instructions"
    definition[:stop_when] = [fail_now] if place == "stop"
    client = case place
             when "model" then fail_now
             when "stream"
               streaming = Object.new
               streaming.define_singleton_method(:stream) { |_request, &_emit| fail_now.call }
               streaming
             else one_call
             end
    where = "#{place} #{how} #{error.class}"
    begin
      result = sdk.create_agent(**definition).run(input: "go", client: client, on_event: place == "listener" ? fail_now : nil)
      texts = result.messages.map { |m| m["content"] }.grep(String)
      texts << result.error["message"] if result.error
      texts.each { |t| check(t.valid_encoding?) { "#{where}: #{t.b[0, 60].inspect} is not valid text" } }
    rescue sdk::AgentError => e
      check(e.code.is_a?(String) && e.message.is_a?(String) && e.message.valid_encoding?) { "#{where}: #{e.code} #{e.message.b[0, 80].inspect}" }
    rescue SignalException, SystemExit => e
      # A listener runs on the caller's thread: an interrupt there is the caller's (README).
      check(place == "listener" && e.equal?(error)) { "#{where}: #{e.class}: #{e.message.b[0, 200].inspect}" }
    rescue Exception => e # rubocop:disable Lint/RescueException
      check(false) { "#{where}: #{e.class}: #{e.message.b[0, 200].inspect}" }
    end
  end

  def paused
    @paused ||= begin
      gate = tool(require_approval: true, execute: ->(input, _r) { { "ran" => input } })
      @gate_agent = sdk.create_agent(id: "gates", tools: [gate])
      state = @gate_agent.run(input: { "ask" => [1, 2.5, "x"] }, context: { "user" => "u" },
                              client: sdk::ScriptedClient.new([{ tool_calls: [{ id: "c1", name: "t", arguments: '{"n":1}' }] }]))
      raise "the baseline did not pause: #{state.status}" unless state.status == "waiting_for_human"

      state
    end
  end

  def continue(state, decisions)
    @gate_agent.continue_run(state: state, client: sdk::ScriptedClient.new([{ text: "done" }]), **decisions)
  end

  # Paths to the members of a state (down to 10 levels; a mutation may have made it
  # deep or cyclic).
  def paths(value, path = [], seen = {}.compare_by_identity, out = [])
    out << path
    return out if path.size >= 10 || seen.key?(value)

    seen[value] = true
    case value
    when Hash then value.each { |k, v| paths(v, path + [k], seen, out) }
    when Array then value.each_with_index { |v, i| paths(v, path + [i], seen, out) }
    end
    out
  end

  def mutate_hash(rng)
    state = copy(paused.state)
    rng.rand(1..3).times do
      path = paths(state).sample(random: rng)
      if path.empty?
        state = rng.rand(2).zero? ? hostile(rng) : storable(rng)
        next
      end
      parent = path[0...-1].reduce(state) { |v, k| v[k] }
      key = path.last
      next if parent.frozen? # a generated value that was frozen stays as it is
      case rng.rand(6)
      when 0, 1
        parent[key] = [hostile(rng), storable(rng), "c1", "", -1, 2**64 - 1, 2**64, 1e300, [], {}, nil].sample(random: rng)
      when 2 then parent.is_a?(Hash) ? parent.delete(key) : parent.delete_at(key)
      when 3 then parent[key][plain(rng)] = storable(rng) if parent[key].is_a?(Hash) && !parent[key].frozen?
      when 4 then parent[key] = nest(parent[key], [10, 70, 2000].sample(random: rng), rng)
      else parent[key] = [parent[key], state] if parent[key].is_a?(Hash) || parent[key].is_a?(Array)
      end
    end
    state
  end

  INSERTS = ["\xFF", "\xC3", "[" * 100, "18446744073709551616", "-9223372036854775809", "\"", "\\u", "\\ud800",
             "1e400", "{}", "null", ",", ":"].freeze

  def mutate_text(rng)
    text = paused.to_json.dup
    rng.rand(1..3).times do
      at = rng.rand(0..text.bytesize)
      cut = rng.rand(0..8)
      insert = rng.rand(2).zero? ? INSERTS.sample(random: rng) : Array.new(rng.rand(0..4)) { rng.rand(256).chr }.join
      text = text.b[0, at] + insert.b + (text.b[at + cut..] || "".b)
    end
    rng.rand(2).zero? ? text.force_encoding(Encoding::UTF_8) : text
  end

  # A mutated state (Hash or text) continues, or is refused with state_invalid or
  # continue_invalid (a run that fails after continuing carries its state); after a
  # refusal the original state still continues.
  def states_property(rng)
    state = rng.rand(2).zero? ? mutate_hash(rng) : mutate_text(rng)
    decisions = [{ approvals: ["c1"] }, { rejections: [{ tool_call_id: "c1", reason: "no" }] }, {}].sample(random: rng)
    where = "#{state.is_a?(String) ? 'text' : 'Hash'} #{describe(state)} #{decisions}"
    if state.nil? # no state at all: the caller's mistake
      begin
        continue(state, decisions)
        check(false) { "#{where}: continued without a state" }
      rescue ArgumentError => e
        check(!e.is_a?(sdk::AgentError)) { "#{where}: #{e.class}" }
      end
      return
    end
    begin
      result = continue(state, decisions)
      check(sdk::RunResult.from_json(result.to_json).to_json == result.to_json) { "#{where}: result does not round-trip" }
    rescue sdk::AgentError => e
      if e.result.nil?
        check(%w[state_invalid continue_invalid].include?(e.code)) { "#{where}: #{e.code} #{e.message}" }
        check(e.code != "state_invalid" || e.message.start_with?("Invalid state: ")) { "#{where}: #{e.message}" }
        check(e.is_a?(e.code == "state_invalid" ? sdk::StateError : sdk::ContinueError)) { "#{where}: #{e.class}" }
        done = begin
          continue(paused, approvals: ["c1"])
        rescue Exception => again # rubocop:disable Lint/RescueException
          check(false, :lost_state) { "#{where}: the original state then raised #{again.class}: #{again.message.b[0, 200]}" }
        end
        check(done.status == "completed", :lost_state) { "#{where}: the original state then ended #{done.status}" }
      else
        check(sdk::RunResult.from_json(e.result.to_json).to_json == e.result.to_json) { "#{where}: failed state does not round-trip" }
      end
    rescue Exception => e # rubocop:disable Lint/RescueException
      check(false) { "#{where}: #{e.class}: #{e.message.b[0, 200].inspect}" }
    end
    # RunResult.from_json reads the same states (a result or StateError).
    begin
      sdk::RunResult.from_json(state)
    rescue sdk::StateError => e
      check(e.code == "state_invalid") { "#{where}: from_json #{e.code}" }
    rescue Exception => e # rubocop:disable Lint/RescueException
      check(false) { "#{where}: from_json #{e.class}: #{e.message.b[0, 200].inspect}" }
    end
  end

  # --- the hostile probe: every kind of callable misbehaving, cancellation, load -------

  # Every error a run may raise (docs/behaviour.md §9), and the caller's own mistakes
  # (docs/behaviour.md §7: a host error naming the argument).
  HOST_ERRORS = [ArgumentError, TypeError, RangeError].freeze
  CODES = %w[tool_input_invalid tool_output_invalid tool_event_invalid agent_output_invalid unknown_tool
             tool_timeout tool_failed max_steps continue_invalid state_invalid model_failed gateway
             definition_invalid cancelled store_failed lease_lost mcp_failed].freeze
  # Seconds a run may take past its cancellation or deadline before it counts as a hang:
  # generous, as other builds share the machine.
  LATE = 15

  KINDS = %w[execute input_schema output_schema event_schema tool_approval agent_approval on_tool_called
             on_response_received next_turn_params stop_when instructions model human_review on_event
             generate stream store_load store_save].freeze
  BEHAVIOURS = %w[value value raise throw thread_exit kill fiber ractor recurse block sleep nested gc
                  timeout_error].freeze

  # What a misbehaving callable does (`args`: what it was called with).
  def behave(how, rng)
    value = rng.rand(3).zero? ? storable(rng) : hostile(rng)
    error = odd_exception(rng)
    extra = [-> {}, Thread.current, Fiber.new { 1 }, Float::NAN, :sym, 2**100, "\xFF".b.freeze, Object.new, Mutex.new].sample(random: rng)
    nap = rng.rand * 0.05
    lambda do |*_args, &_blk|
      case how
      when "value" then rng.rand(4).zero? ? extra : value
      when "raise" then raise error
      when "throw" then throw :probe
      when "thread_exit" then Thread.exit
      when "kill" then Thread.current.kill
      when "fiber"
        fiber = Fiber.new { Fiber.yield(1); raise "from a fiber" }
        fiber.resume
        rng.rand(2).zero? ? fiber.resume : Fiber.yield(2)
      when "ractor" then Ractor.new { PhaseoAgentSdk::Native.parse_json("[1]") }.take
      when "recurse"
        deeper = ->(n) { deeper.call(n + 1) + 1 }
        deeper.call(0)
      when "block" then rng.rand(2).zero? ? sleep : Queue.new.pop
      when "sleep" then sleep(nap) && value
      when "nested"
        inner = sdk.create_agent(id: "inner", tools: [tool(execute: ->(i, _r) { i })])
        inner.run(input: "in", client: one_call).output
      when "gc"
        GC.start(full_mark: true, immediate_sweep: true)
        GC.compact if GC.respond_to?(:compact)
        value
      when "timeout_error" then raise Timeout::Error, "the callable's own timeout"
      end
    end
  end

  # A state accessor keeping states in a Hash (`bad` as its load or save).
  def accessor(load: nil, save: nil)
    saved = {}
    store = Object.new
    store.define_singleton_method(:load) { |id| load ? load.call(id) : saved[id] }
    store.define_singleton_method(:save) { |result| save ? save.call(result) : (saved[result.run_id] = result) }
    store
  end

  # One run where the callable of `kind` misbehaves `how`, cancelled or timed out at a random
  # point. The run returns a result or raises an AgentError of a documented code (or the
  # caller's own Timeout::Error of `Timeout.timeout`), on time.
  def callbacks_property(rng)
    kind = KINDS.sample(random: rng)
    how = BEHAVIOURS.sample(random: rng)
    bad = behave(how, rng)
    plan = %w[none none cancel deadline tool_timeout].sample(random: rng)
    plan = %w[cancel deadline].sample(random: rng) if how == "block" && (plan == "none" || kind != "execute")
    # A listener runs on the caller's thread: what stops one that blocks is an interrupt of
    # that thread (bindings-ruby/README.md, "Threads, timeouts and interrupts"), not a CancelToken.
    plan = "deadline" if how == "block" && kind == "on_event"
    where = @current = "#{kind} #{how} #{plan}"
    fields = { execute: ->(_i, rt) { rt.emit_progress.call({ "p" => 1 }) ; "ok" } }
    fields[:execute] = bad if kind == "execute"
    fields[:execute] = nil if kind == "on_response_received"
    { "input_schema" => :input_schema, "output_schema" => :output_schema, "event_schema" => :event_schema,
      "tool_approval" => :require_approval, "on_tool_called" => :on_tool_called,
      "on_response_received" => :on_response_received, "next_turn_params" => :next_turn_params }
      .each { |k, field| fields[field] = bad if k == kind }
    fields[:timeout_ms] = rng.rand(1..200) if plan == "tool_timeout"
    fields[:on_error] = "return-to-model" if rng.rand(3).zero?
    definition = { id: "probe", tools: [tool(**fields)] }
    definition[:require_approval] = bad if kind == "agent_approval"
    definition[:stop_when] = [bad] if kind == "stop_when"
    definition[:instructions] = bad if kind == "instructions"
    definition[:model] = bad if kind == "model"
    definition[:human_review] = bad if kind == "human_review"
    definition[:store] = accessor(load: kind == "store_load" ? bad : nil, save: kind == "store_save" ? bad : nil) if kind.start_with?("store")
    client = case kind
             when "generate"
               turn = 0
               ->(request) { (turn += 1) == 1 ? bad.call(request) : { text: "done" } }
             when "stream"
               streaming = Object.new
               streaming.define_singleton_method(:stream) do |request, &emit|
                 out = bad.call(request)
                 emit.call(out) if how == "value"
                 emit.call({ type: "response", response: { text: "done" } })
               end
               streaming
             else sdk::ScriptedClient.new([CALL, { text: "done" }, { text: "again" }])
             end
    token = sdk::CancelToken.new
    at = rng.rand * 0.3
    canceller = plan == "cancel" ? Thread.new { sleep at ; token.cancel } : nil
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    begin
      agent = sdk.create_agent(**definition)
      go = lambda do
        options = { input: "go", client: client, cancel: token }
        options[:on_event] = bad if kind == "on_event"
        if kind == "stream"
          options.delete(:on_event)
          agent.stream(**options).tap { |s| s.each { nil } }.result
        else
          result = agent.run(**options)
          if kind == "on_response_received" && result.status == "waiting_for_human"
            result = agent.continue_run(state: result, client: sdk::ScriptedClient.new([{ text: "done" }]), cancel: token,
                                        tool_outputs: [{ tool_call_id: "c1", output: "given" }])
          end
          if kind == "store_load" && result.status == "waiting_for_human"
            result = agent.continue_run(run_id: result.run_id, client: sdk::ScriptedClient.new([{ text: "done" }]),
                                        cancel: token, tool_outputs: [{ tool_call_id: "c1", output: "given" }])
          end
          result
        end
      end
      result = plan == "deadline" ? Timeout.timeout(at + 0.01) { go.call } : go.call
      check(result.is_a?(sdk::RunResult)) { "#{where}: returned #{result.class}" }
    rescue Timeout::Error => e
      check(plan == "deadline" || e.is_a?(sdk::AgentError)) { "#{where}: Timeout::Error #{e.message.b[0, 100].inspect}" }
    rescue sdk::AgentError => e
      check(CODES.include?(e.code) && e.is_a?(sdk.error_class(e.code))) { "#{where}: #{e.class} #{e.code.inspect}" }
      check(e.message.is_a?(String) && e.message.valid_encoding?) { "#{where}: message #{e.message.b[0, 80].inspect}" }
    rescue SignalException, SystemExit => e
      # A listener runs on the caller's thread: an interrupt there is the caller's (README).
      check(kind == "on_event" && how == "raise") { "#{where}: #{e.class}: #{e.message.to_s.b[0, 200].inspect}" }
    rescue Exception => e # rubocop:disable Lint/RescueException
      check(false) { "#{where}: #{e.class}: #{e.message.to_s.b[0, 200].inspect}" }
    ensure
      canceller&.kill
    end
    took = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    check(took < LATE + at + 0.3, :hang) { "#{where}: returned after #{took.round(1)} s" }
  end

  # Wrong types and values for every option of a definition, a tool and a run: a host
  # error (ArgumentError, TypeError, RangeError), a DefinitionError, or a run that goes on.
  WRONG = [nil, -1, 0, 2**70, -(2**70), Float::NAN, Float::INFINITY, 1.5, "", "x", "\xFF".b, :sym, [], [nil], {},
           { "a" => [1] }, Object.new, -> {}, true, Unprintable.new, "5", 1e300].freeze
  DEFINITION_FIELDS = %i[id instructions model tools max_steps tool_execution require_approval stop_when model_retry
                         output_schema human_review temperature max_output_tokens top_p state_secrets tool_choice
                         parallel_tool_calls active_tools lease mcp_servers store].freeze
  TOOL_FIELDS = %i[id execute description parameters timeout_ms input_schema output_schema event_schema
                   require_approval on_tool_called on_response_received next_turn_params on_error strict input_examples].freeze
  RUN_FIELDS = %i[input context messages max_steps stop_when model_retry tool_execution temperature max_output_tokens
                  top_p tool_choice parallel_tool_calls active_tools traceparent cancel client on_event model].freeze

  def wrong(rng)
    case rng.rand(6)
    when 0 then { tool_concurrency: WRONG.sample(random: rng) }
    when 1 then { max_retries: WRONG.sample(random: rng), base_delay_ms: WRONG.sample(random: rng) }
    when 2 then [WRONG.sample(random: rng)]
    when 3 then sdk.mcp_stdio_server(WRONG.sample(random: rng).to_s, "/nonexistent/#{rng.rand(9)}", [WRONG.sample(random: rng).to_s],
                                     timeout_ms: WRONG.sample(random: rng))
    else WRONG.sample(random: rng)
    end
  rescue StandardError
    WRONG.sample(random: rng)
  end

  def options_property(rng)
    definition = { id: "opts", tools: [tool(execute: ->(i, _r) { i })] }
    tool_fields = {}
    run = { input: "go", client: one_call }
    rng.rand(1..3).times do
      case rng.rand(3)
      when 0 then definition[DEFINITION_FIELDS.sample(random: rng)] = wrong(rng)
      when 1 then tool_fields[TOOL_FIELDS.sample(random: rng)] = wrong(rng)
      else run[RUN_FIELDS.sample(random: rng)] = wrong(rng)
      end
    end
    where = "definition #{describe(definition)} tool #{describe(tool_fields)} run #{describe(run)}"
    begin
      definition[:tools] = [tool(**{ execute: ->(i, _r) { i } }.merge(tool_fields))] unless tool_fields.empty?
      agent = sdk.create_agent(**definition)
      result = Timeout.timeout(LATE * 2) { agent.run(**run) }
      check(result.is_a?(sdk::RunResult)) { "#{where}: returned #{result.class}" }
      agent.close
    rescue sdk::AgentError => e
      check(CODES.include?(e.code) && e.is_a?(sdk.error_class(e.code))) { "#{where}: #{e.class} #{e.code.inspect}" }
    rescue Timeout::Error
      check(false, :hang) { "#{where}: did not return in #{LATE * 2} s" }
    rescue *HOST_ERRORS => e
      check(e.message.valid_encoding?) { "#{where}: #{e.class} message is not text" }
    rescue Exception => e # rubocop:disable Lint/RescueException
      check(false) { "#{where}: #{e.class}: #{e.message.to_s.b[0, 200].inspect}" }
    end
  end

  # Many runs at once from Ruby threads, their tools timing out, failing or cancelled at
  # random points: every run returns, with a result or a documented error.
  def concurrency_property(rng)
    n = rng.rand(20..120)
    slow = tool(timeout_ms: rng.rand(1..30), execute: lambda do |_i, rt|
      case rt.tool_call.id.delete_prefix("c").to_i % 4
      when 0 then sleep 0.5
      when 1 then raise "boom"
      else sleep(rng.rand * 0.02) && "ok"
      end
    end)
    agent = sdk.create_agent(id: "many", tools: [slow])
    gate = Queue.new
    outcomes = Queue.new
    threads = Array.new(n) do |k|
      token = sdk::CancelToken.new
      Thread.new do
        gate.pop
        Thread.new { sleep(rng.rand * 0.05) ; token.cancel } if k.odd?
        r = agent.run(input: "go", cancel: token, client: sdk::ScriptedClient.new(
          [{ tool_calls: [{ id: "c#{k}", name: "t", arguments: "{}" }] }, { text: "ok" }]
        ))
        outcomes << r.status
      rescue sdk::AgentError => e
        outcomes << (CODES.include?(e.code) ? e.code : "bad code #{e.code}")
      rescue Exception => e # rubocop:disable Lint/RescueException
        outcomes << "#{e.class}: #{e.message.to_s.scrub[0, 100]}"
      end
    end
    n.times { gate << true }
    stuck = threads.count { |t| t.join(LATE + 30).nil? }
    threads.each(&:kill)
    check(stuck.zero?, :hang) { "#{stuck} of #{n} concurrent runs did not return" }
    seen = Array.new(outcomes.size) { outcomes.pop }
    bad = seen.reject { |o| %w[completed].include?(o) || CODES.include?(o) }
    check(bad.empty?) { "#{n} concurrent runs: #{bad.tally}" }
  end

  # The process's resident memory in MB.
  def rss_mb = File.read("/proc/self/statm").split[1].to_i * 4096 / 1_048_576.0

  # Runs batches of misbehaving runs: once a batch has settled, no Ruby thread, registered
  # callable or call thread is left over, and memory stops growing.
  def leaks_property(rng)
    @leak_base ||= begin
      3.times { callbacks_property(Random.new(rng.rand(1 << 30))) }
      settle_threads(Thread.list.size + 50)
      GC.start
      { threads: Thread.list.size, rss: rss_mb }
    end
    60.times { callbacks_property(Random.new(rng.rand(1 << 30))) }
    concurrency_property(Random.new(rng.rand(1 << 30)))
    threads = settle_threads(@leak_base[:threads])
    check(threads <= @leak_base[:threads], :leak) { "#{threads - @leak_base[:threads]} Ruby threads left over: #{Thread.list.map { |t| "#{t.name} #{t.status} #{t.backtrace&.first(6)}" }}" }
    calls = sdk::Internal::THREADS.size
    check(calls.zero?, :leak) { "#{calls} call threads still registered" }
    GC.start
    rss = rss_mb
    @leak_rss = [(@leak_rss || []), rss].flatten.last(8)
    grew = @leak_rss.size >= 8 && @leak_rss.each_cons(2).all? { |a, b| b > a + 1 } && rss > @leak_base[:rss] + 200
    check(!grew, :leak) { "RSS keeps growing: #{@leak_rss.map(&:round)} MB (from #{@leak_base[:rss].round} MB)" }
  end

  # Waits (up to LATE seconds) until at most `limit` Ruby threads are alive; their number.
  def settle_threads(limit)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + LATE
    sleep 0.05 while Thread.list.size > limit && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    Thread.list.size
  end

  # Big states (up to 16 MB of text) read back, continued, and cut short, from Ruby threads
  # as well as the main one: a state, or state_invalid.
  def big_states_property(rng)
    size = rng.rand(1..16) << 20
    @big_agent ||= sdk.create_agent(id: "big", tools: [tool(require_approval: true, execute: ->(i, _r) { i })])
    context = case rng.rand(3)
              when 0 then { "blob" => "x" * size }
              when 1 then { "list" => Array.new(size / 64) { |i| { "k" => i, "s" => "y" * 40 } } }
              else { "deep" => nest({ "blob" => "z" * (size / 2) }, 60, rng) }
              end
    text = @big_agent.run(input: "go", context: context, client: sdk::ScriptedClient.new([CALL])).to_json
    text = text.b[0, rng.rand(text.bytesize)] if rng.rand(3).zero?
    text = text.dup.force_encoding(Encoding::BINARY).tap { |t| t.setbyte(rng.rand(t.bytesize), 0xFF) } if rng.rand(4).zero?
    where = "#{text.bytesize} bytes"
    body = lambda do
      state = rng.rand(2).zero? ? text : (JSON.parse(text, max_nesting: false) rescue text)
      read = sdk::RunResult.from_json(state)
      done = @big_agent.continue_run(state: read, client: sdk::ScriptedClient.new([{ text: "done" }]), approvals: ["c1"])
      check(done.status == "completed") { "#{where}: continued to #{done.status}" }
    rescue sdk::StateError => e
      check(e.code == "state_invalid") { "#{where}: #{e.code}" }
    rescue Exception => e # rubocop:disable Lint/RescueException
      check(false) { "#{where}: #{e.class}: #{e.message.to_s.b[0, 200].inspect}" }
    end
    rng.rand(2).zero? ? body.call : Thread.new(&body).value
  end

  # name => [share of RUNS, body]
  PROPERTIES = {
    "storable_values_come_back_exactly_from_every_place" => [1.0, ->(rng) { values_property(rng, 0.0) }],
    "hostile_values_are_refused_with_the_code_of_their_place" => [1.5, ->(rng) { values_property(rng, 1.0) }],
    "odd_exceptions_from_every_callable_become_errors_with_text" => [1.0, ->(rng) { exceptions_property(rng) }],
    "mutated_states_continue_or_are_refused_and_the_original_still_continues" => [2.0, ->(rng) { states_property(rng) }],
    "misbehaving_callables_of_every_kind_end_their_run_on_time" => [2.0, ->(rng) { callbacks_property(rng) }],
    "wrong_options_raise_host_errors_or_definition_errors" => [1.0, ->(rng) { options_property(rng) }],
    "concurrent_runs_all_return" => [0.02, ->(rng) { concurrency_property(rng) }],
    "nothing_is_left_over_after_batches_of_misbehaving_runs" => [0.01, ->(rng) { leaks_property(rng) }],
    "big_states_are_read_or_refused" => [0.03, ->(rng) { big_states_property(rng) }]
  }.freeze

  # Longest a case may take before it counts as a hang (the concurrent ones run 120 runs).
  CASE_LIMIT = 120

  # Runs one property from case `PHASEO_FUZZ_FROM` on, each case on a Ruby thread of its
  # own: prints `{"at" => i}` before case i, `{"failure", "kind", "case"}` for each failed
  # case (and goes on), and `{"cases" => n}` at the end. A case still running after
  # CASE_LIMIT seconds is a hang; the parent restarts a child that died or stopped printing
  # from the next case.
  def work(name)
    share, body = PROPERTIES.fetch(name)
    index = PROPERTIES.keys.index(name)
    count = (RUNS * share).round.clamp(1, 1 << 20)
    from = Integer(ENV.fetch("PHASEO_FUZZ_FROM", "0"))
    cases = ONLY_CASE ? [ONLY_CASE] : (from...count)
    cases.each do |i|
      puts JSON.generate("at" => i)
      @current = nil
      failure = nil
      runner = Thread.new do
        Thread.current.report_on_exception = false
        body.call(Random.new((SEED << 24) + (index << 20) + i))
        :done
      rescue Failure, StandardError, ScriptError, SystemStackError, NoMemoryError => e
        failure = e
      end
      finished = runner.join(CASE_LIMIT)
      failure ||= Failure.new("#{@current} still running after #{CASE_LIMIT} s", :hang) unless finished
      next unless failure

      puts JSON.generate("failure" => failure.message.scrub[0, 2000], "case" => i, "class" => failure.class.name,
                         "kind" => failure.is_a?(Failure) ? failure.kind : :wrong_kind,
                         "backtrace" => failure.is_a?(Failure) ? [] : failure.backtrace&.first(8))
    end
    puts JSON.generate("cases" => cases.size)
  end
end

if (property = ENV["PHASEO_FUZZ_PROPERTY"])
  require "phaseo_agent_sdk"
  $stdout.sync = true
  Fuzz.work(property)
else
  require "test_helper"

  # Runs each property in child processes (see the header) and counts, per property, the
  # children that died (a crash), the cases that hung, and the failed checks by kind.
  class FuzzTest < Minitest::Test
    include SdkHelpers

    KINDS = %w[death hang wrong_kind lost_state leak].freeze

    # Runs `name` from case `from` in a child; yields each line it prints. Returns :done,
    # :died or :stalled (printed nothing for `silence` seconds: killed).
    def child_run(name, from, silence)
      env = { "PHASEO_FUZZ_PROPERTY" => name, "PHASEO_FUZZ_SEED" => Fuzz::SEED.to_s,
              "PHASEO_FUZZ_RUNS" => Fuzz::RUNS.to_s, "PHASEO_FUZZ_FROM" => from.to_s }
      IO.popen(env, [RbConfig.ruby, "-I#{LIB}", "-I#{__dir__}", __FILE__], err: File::NULL) do |io|
        buffer = +""
        loop do
          unless io.wait_readable(silence)
            Process.kill("KILL", io.pid)
            return :stalled
          end
          chunk = io.read_nonblock(65_536, exception: false)
          return :died if chunk.nil?
          next if chunk == :wait_readable

          buffer << chunk
          while (line = buffer.slice!(/\A[^\n]*\n/))
            parsed = JSON.parse(line)
            yield parsed
            return :done if parsed.key?("cases")
          end
        end
      end
    end

    Fuzz::PROPERTIES.each do |name, (share, _)|
      define_method("test_#{name}") do
        total = (Fuzz::ONLY_CASE ? 1 : (Fuzz::RUNS * share).round.clamp(1, 1 << 20))
        counts = KINDS.to_h { |k| [k, 0] }
        failures = []
        from = 0
        loop do
          at = nil
          how = child_run(name, from, Fuzz::CASE_LIMIT + 60) do |line|
            if line.key?("at") then at = line["at"]
            elsif line.key?("failure")
              counts[line["kind"]] += 1
              failures << line if failures.size < 10
            end
          end
          break if how == :done

          counts[how == :died ? "death" : "hang"] += 1
          failures << { "failure" => "the child #{how == :died ? "died (#{$?.inspect})" : 'stopped printing'}", "case" => at } if failures.size < 10
          break if at.nil? || Fuzz::ONLY_CASE

          from = at + 1
          break if from >= total
        end
        warn format("%-75s %6d inputs: %s (PHASEO_FUZZ_SEED=%d)", name, total, counts.map { |k, n| "#{k} #{n}" }.join(", "), Fuzz::SEED)
        report = failures.map { |f| "case #{f['case']} [#{f['kind'] || 'death/hang'}] #{f['failure']} #{f['backtrace']}" }.join("\n")
        assert counts.values.all?(&:zero?),
               "#{name} (replay one case: PHASEO_FUZZ_SEED=#{Fuzz::SEED} PHASEO_FUZZ_CASE=<case>): #{counts}\n#{report}"
      end
    end
  end
end
