# frozen_string_literal: true

# The Ruby binding against the host's floor: no installable Ruby agent SDK runs a tool-calling
# loop offline, so the same workloads also run on bare Ruby threads doing the same trivial work
# (parse the call's JSON arguments, add, write the answer's JSON), which is the least any SDK
# on Ruby's threads can cost. Workloads as in benchmarks/go/harness/workload.go:
#
#   empty       one model turn that returns the final text (wall ms)
#   fanout      one turn of FANOUT_N (1000) add(a, b) calls, then the final turn (µs per call)
#   sequential  SEQ_N (200) turns of one add call each, then the final turn (µs per turn)
#   sleepy      one turn of SLEEPY_N (100) calls of a tool sleeping 50 ms (wall ms)
#
# Setting up a run (the scripted client, the agent) is untimed; the whole run is timed.
# WARMUP (3) warm-up runs, then RUNS (5) timed runs, GC before each, median reported.
# Prints a table, then one JSON document (`figures[sdk][workload]`, as the Go and JVM drivers).
#
#   ruby -Ibindings-ruby/lib benchmarks/ruby/bench.rb     (benchmarks/ruby/run.sh builds first)

require "json"
require "phaseo_agent_sdk"

RUNS = Integer(ENV.fetch("RUNS", "5"))
WARMUP = Integer(ENV.fetch("WARMUP", "3"))
FANOUT_N = Integer(ENV.fetch("FANOUT_N", "1000"))
SEQ_N = Integer(ENV.fetch("SEQ_N", "200"))
SLEEPY_N = Integer(ENV.fetch("SLEEPY_N", "100"))
SLEEP_S = 0.05
WORKLOADS = ENV.fetch("WORKLOADS", "empty,fanout,sequential,sleepy").split(",").map(&:strip)
UNITS = { "empty" => "ms wall", "fanout" => "µs/call", "sequential" => "µs/turn", "sleepy" => "ms wall" }.freeze
PER_UNIT = { "empty" => 0, "fanout" => FANOUT_N, "sequential" => SEQ_N, "sleepy" => 0 }.freeze

# Counts the tool invocations of the current run (every variant's tools count here).
class Counter
  def initialize = (@mutex = Mutex.new; @n = 0)
  def reset = @mutex.synchronize { @n = 0 }
  def bump = @mutex.synchronize { @n += 1 }
  def value = @mutex.synchronize { @n }
end
CALLS = Counter.new

def add_args(i) = JSON.generate({ a: i, b: 1 })
def call(id, name, arguments) = { id: id, name: name, arguments: arguments }

# The scripted turns of a workload: each a list of calls (the final "done" turn not listed).
def turns(workload)
  case workload
  when "empty" then []
  when "fanout" then [Array.new(FANOUT_N) { |i| call("c#{i}", "add", add_args(i)) }]
  when "sequential" then Array.new(SEQ_N) { |i| [call("s#{i}", "add", add_args(i))] }
  when "sleepy" then [Array.new(SLEEPY_N) { |i| call("n#{i}", "nap", JSON.generate({ i: i })) }]
  end
end

def expected(workload) = turns(workload).sum(&:size)

INT = { type: "integer" }.freeze
ADD = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "add", description: "Adds two integers.",
  parameters: { type: "object", properties: { a: INT, b: INT }, required: %w[a b] },
  execute: ->(input, _runtime) { CALLS.bump; input["a"] + input["b"] }
))
NAP = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "nap", description: "Sleeps 50 ms, returns i.",
  parameters: { type: "object", properties: { i: INT }, required: %w[i] },
  execute: ->(input, _runtime) { CALLS.bump; sleep SLEEP_S; input["i"] }
))

# Ours: the agent and its scripted client (untimed), then the timed run.
def ours(workload)
  script = turns(workload)
  lambda do
    client = PhaseoAgentSdk::ScriptedClient.new(script.map { |calls| { tool_calls: calls } } + [{ text: "done" }])
    agent = PhaseoAgentSdk.create_agent(id: "bench", tools: [ADD, NAP], max_steps: script.size + 5,
                                        tool_execution: { tool_concurrency: 1000 })
    lambda do
      result = agent.run(input: "go", client: client)
      raise "ours #{workload}: status #{result.status}" unless result.status == "completed" && result.output == "done"
    end
  end
end

# The floor: each turn's calls on bare threads (one per call, all started, then joined), each
# parsing its arguments, running the tool's body and writing the answer as JSON.
def floor(workload)
  script = turns(workload)
  bodies = { "add" => ->(input) { CALLS.bump; input["a"] + input["b"] },
             "nap" => ->(input) { CALLS.bump; sleep SLEEP_S; input["i"] } }
  lambda do
    lambda do
      answers = []
      script.each do |calls|
        threads = calls.map { |c| Thread.new { JSON.generate(bodies.fetch(c[:name]).call(JSON.parse(c[:arguments]))) } }
        answers.concat(threads.map(&:value))
      end
      raise "floor #{workload}: #{answers.size} answers" unless answers.size == expected(workload)
    end
  end
end

def median(xs) = (s = xs.sort; s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0)

def measure(workload, make)
  want = expected(workload)
  samples = (WARMUP + RUNS).times.map do
    run = make.call
    CALLS.reset
    GC.start
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    run.call
    dt = (Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0) / 1e6
    raise "#{workload}: #{CALLS.value} tool calls, expected #{want}" unless CALLS.value == want
    dt
  end.drop(WARMUP)
  scale = PER_UNIT[workload].positive? ? 1000.0 / PER_UNIT[workload] : 1.0
  [median(samples) * scale, samples.min * scale]
end

def load_avg = File.read("/proc/loadavg").split.first(3).map(&:to_f)

def fmt(v) = v.nil? ? "–" : (v >= 100 ? format("%.0f", v) : (v >= 10 ? format("%.1f", v) : format("%.2f", v)))

load_before = load_avg
figures = { "ours" => {}, "floor" => {} }
fastest = { "ours" => {}, "floor" => {} }
WORKLOADS.each do |w|
  { "ours" => method(:ours), "floor" => method(:floor) }.each do |sdk, variant|
    figures[sdk][w], fastest[sdk][w] = measure(w, variant.call(w))
  end
end
load_after = load_avg

puts
puts "Phaseo Agent SDK (Ruby) vs the floor (bare Ruby threads): median of #{RUNS} runs after #{WARMUP} warm-up; " \
     "ruby #{RUBY_VERSION}; load before #{load_before.join(' ')}, after #{load_after.join(' ')}"
rows = [["workload", "unit", "ours", "floor", "ours ÷ floor", "ours (fastest run)"]]
WORKLOADS.each do |w|
  o, f = figures["ours"][w], figures["floor"][w]
  rows << [w, UNITS[w], fmt(o), fmt(f), "#{fmt(o / f)}×", fmt(fastest["ours"][w])]
end
widths = rows.transpose.map { |col| col.map(&:length).max }
rows.each_with_index do |r, j|
  puts r.each_with_index.map { |c, i| i < 2 ? c.ljust(widths[i]) : c.rjust(widths[i]) }.join("  ")
  puts widths.map { |n| "-" * n }.join("  ") if j.zero?
end
puts
puts "JSON:"
puts JSON.generate({ load_before: load_before, load_after: load_after, runs: RUNS, warmup: WARMUP,
                     versions: { ruby: RUBY_VERSION }, figures: figures, fastest: fastest })
