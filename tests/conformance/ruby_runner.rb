# frozen_string_literal: true

# Ruby conformance runner: runs the cross-language JSON cases through the PUBLIC API of the
# Ruby binding (`PhaseoAgentSdk`), with real Ruby lambdas as executors, validators,
# predicates, hooks and a host model client (see tests/conformance/README.md). Started by
# ruby_runner.sh:
#   ruby_runner.sh [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...
# Ruby has one executor form (a lambda run on a Ruby thread): the `async`/`asGenerator`
# flags choose nothing here. `sleepMs` polls `runtime.cancelled?`; a Timeout::Error raised
# into the tool's thread also counts as the call observing cancellation.

require "json"
require "fileutils"
require "phaseo_agent_sdk"

# A difference or an unsupported feature of a case.
class CaseError < StandardError; end

CASE_KEYS = %w[name description agent tools model steps expectDefinitionError].freeze
AGENT_KEYS = %w[id model instructions maxSteps stopWhen modelRetry toolExecution temperature maxOutputTokens
                topP outputSchema requireApproval humanReview stateSecret toolChoice parallelToolCalls activeTools].freeze
TOOL_KEYS = %w[id description asAgent parameters inputSchema outputSchema eventSchema timeoutMs onError requireApproval
               nextTurnParams manual onToolCalled onResponseReceived behavior asGenerator async strict inputExamples
               maxCalls retry deferLoading].freeze
MODEL_ENTRY_KEYS = %w[text toolCalls usage cost finishReason fail].freeze
OVERRIDE_KEYS = %w[model maxSteps stopWhen modelRetry toolExecution temperature maxOutputTokens topP toolChoice
                   parallelToolCalls activeTools].freeze
RUN_KEYS = (%w[input context messages cancelAfterMs] + OVERRIDE_KEYS).freeze
CONTINUE_KEYS = (%w[approvals rejections toolOutputs responses humanInput context cancelAfterMs] + OVERRIDE_KEYS).freeze
EXPECT_KEYS = %w[status output stopReason pauseKind context error pending executed cancelled maxConcurrent
                 modelRequests events toolEvents preliminaryResults usage minWallMs maxWallMs].freeze
REQUEST_KEYS = %w[toolMessages tools context temperature model instructions lastUserMessage maxOutputTokens topP
                  toolChoice parallelToolCalls toolSpecs toolCalls].freeze
TOOL_SPEC_KEYS = %w[id strict inputExamples].freeze
USAGE_KEYS = %w[inputTokens outputTokens cachedTokens totalTokens cost].freeze
TERMINAL = %w[return returnInput throw returnContext returnRuntime returnAttempt returnIdempotencyKey].freeze
ACTIONS = (TERMINAL + %w[progress setContext sleepMs blockingSleepMs throwUntilAttempt]).freeze
# Actions whose object has a second key, `message`.
WITH_MESSAGE = %w[throwUntilAttempt].freeze
TOOL_EVENT_TYPES = %w[tool.started tool.preliminary_result tool.completed tool.failed tool.retrying].freeze
STOP = {
  "stepCountIs" => ->(v) { PhaseoAgentSdk.step_count_is(Integer(v)) },
  "maxTokensUsed" => ->(v) { PhaseoAgentSdk.max_tokens_used(Integer(v)) },
  "maxCost" => ->(v) { PhaseoAgentSdk.max_cost(Float(v)) },
  "maxDuration" => ->(v) { PhaseoAgentSdk.max_duration(Integer(v)) },
  "hasToolCall" => ->(v) { PhaseoAgentSdk.has_tool_call(text(v)) },
  "finishReasonIs" => ->(v) { PhaseoAgentSdk.finish_reason_is(text(v)) }
}.freeze
EXECUTOR_GRACE_S = 1.0

def json_eq(a, b)
  return (a == true || a == false) && a == b if [true, false].include?(a) || [true, false].include?(b)
  return a.to_f == b.to_f if a.is_a?(Numeric) && b.is_a?(Numeric)
  return a.size == b.size && a.zip(b).all? { |x, y| json_eq(x, y) } if a.is_a?(Array) && b.is_a?(Array)
  return (a.keys | b.keys).all? { |k| json_eq(a[k], b[k]) } if a.is_a?(Hash) && b.is_a?(Hash)

  a.instance_of?(b.class) && a == b
end

def show(value)
  s = JSON.generate(value, quirks_mode: true) rescue value.inspect # rubocop:disable Style/RescueModifier
  s.size <= 300 ? s : "#{s[0, 300]}…"
end

def text(value) = value.is_a?(String) ? value : JSON.generate(value, quirks_mode: true)

def diff(key, expected, actual)
  raise CaseError, "#{key}: expected #{show(expected)}, got #{show(actual)}" unless json_eq(expected, actual)
end

def check_keys(obj, allowed, what)
  return unless obj.is_a?(Hash)

  obj.each_key { |k| raise CaseError, "#{what}: unsupported key #{k.to_json}" unless allowed.include?(k) }
end

def single_entry(action, what)
  raise CaseError, "#{what} must be an object with one key: #{show(action)}" unless action.is_a?(Hash) && action.size == 1

  action.first
end

# A behavior action: its key, its value and its `message` (`throwUntilAttempt` has one,
# every other action has none).
def behavior_action(action)
  raise CaseError, "behavior action must be an object: #{show(action)}" unless action.is_a?(Hash)

  key, arg = action.find { |k, _| k != "message" }
  wanted = WITH_MESSAGE.include?(key) ? 2 : 1
  unless key && ACTIONS.include?(key) && action.size == wanted && (wanted == 1 || action.key?("message"))
    raise CaseError, "unsupported behavior action #{show(action)}"
  end

  [key, arg, action["message"]]
end

def deep_copy(v) = v.nil? ? nil : JSON.parse(JSON.generate(v, quirks_mode: true), quirks_mode: true)

# What executors record during one step (tools run on Ruby threads).
class Observations
  attr_reader :mutex

  def initialize
    @mutex = Mutex.new
    @active = 0
    reset
  end

  def reset
    @mutex.synchronize do
      @executed = []
      @cancelled = []
      @running = 0
      @max_running = 0
    end
  end

  def executing(call_id)
    @mutex.synchronize do
      @executed << call_id
      @active += 1
      @running += 1
      @max_running = [@max_running, @running].max
    end
    yield
  ensure
    @mutex.synchronize do
      @running -= 1
      @active -= 1
    end
  end

  def record_cancelled(id) = @mutex.synchronize { @cancelled << id }
  def idle? = @mutex.synchronize { @active.zero? }
  def snapshot = @mutex.synchronize { [@executed.sort, @cancelled.uniq.sort, @max_running] }
end

def runtime_value(runtime)
  run_id = runtime.run_id
  raise "runtime run id is not a non-empty string: #{run_id.inspect}" unless run_id.is_a?(String) && !run_id.empty?

  { "runId" => "<run>", "agentId" => runtime.agent_id, "stepIndex" => runtime.step_index,
    "toolCallId" => runtime.tool_call["id"] }
end

def terminal(key, arg, input, runtime)
  case key
  when "return" then deep_copy(arg)
  when "returnInput" then input
  when "throw" then raise text(arg)
  when "returnContext" then runtime.context
  when "returnAttempt" then runtime.attempt
  when "returnIdempotencyKey" then idempotency_key(runtime)
  else runtime_value(runtime)
  end
end

# The runtime's idempotency key with its run id (checked to be its start) written `<run>`.
def idempotency_key(runtime)
  key = runtime.idempotency_key
  run_id = runtime.run_id
  prefix = "#{run_id}:"
  raise "idempotency key #{key.inspect} does not start with the run id #{run_id.inspect}" if run_id.empty? || !key.start_with?(prefix)

  "<run>:#{key.delete_prefix(prefix)}"
end

def cooperative_sleep(ms, runtime, call_id, obs)
  deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (Float(ms) / 1000)
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    if runtime.cancelled?
      obs.record_cancelled(call_id)
      raise "cancelled"
    end
    sleep 0.002
  end
rescue Timeout::Error
  obs.record_cancelled(call_id)
  raise
end

def executor(spec, obs)
  actions = (spec["behavior"] || []).map do |a|
    behavior_action(a)
  rescue CaseError => e
    raise CaseError, "tool #{spec['id'].to_json}: #{e.message}"
  end
  lambda do |input, runtime|
    call_id = runtime.tool_call["id"]
    obs.executing(call_id) do
      result = nil
      actions.each do |key, arg, message|
        if TERMINAL.include?(key)
          result = terminal(key, arg, input, runtime)
          break
        end
        case key
        when "progress" then runtime.emit_progress.call(deep_copy(arg))
        when "setContext" then runtime.set_context.call(deep_copy(arg))
        when "sleepMs" then cooperative_sleep(arg, runtime, call_id, obs)
        when "blockingSleepMs" then sleep(Float(arg) / 1000)
        when "throwUntilAttempt" then raise text(message) if runtime.attempt < Integer(arg)
        end
      end
      result
    end
  end
end

def schema_validator(schema)
  check = PhaseoAgentSdk.json_schema_validator(schema)
  ->(value) { check.call(value) }
end

def input_equals(expected, input)
  input.is_a?(Hash) && expected.all? { |k, v| input.key?(k) && json_eq(input[k], v) }
end

def tool_approval(rule)
  return rule if rule.nil? || rule == true || rule == false

  expected = rule.is_a?(Hash) ? rule["inputEquals"] : nil
  raise CaseError, "tool requireApproval: unsupported rule #{show(rule)}" unless expected.is_a?(Hash) && rule.size == 1

  ->(input, _runtime) { input_equals(expected, input) }
end

def agent_approval(rule)
  key, arg = single_entry(rule, "agent requireApproval")
  return ->(call, _rt) { arg.include?(call["name"]) } if key == "toolIds" && arg.is_a?(Array)
  return ->(call, _rt) { input_equals(arg, call["input"]) } if key == "inputEquals" && arg.is_a?(Hash)

  raise CaseError, "agent requireApproval: unsupported rule #{show(rule)}"
end

def on_tool_called(form)
  return nil if form.nil?
  return ->(_input, _rt) {} if form == "pause"
  return ->(_input, _rt) { deep_copy(form["return"]) } if form.is_a?(Hash) && form.keys == ["return"]

  raise CaseError, "onToolCalled: unsupported form #{show(form)}"
end

def on_response_received(form)
  return nil if form.nil?
  if form.is_a?(Hash) && form.keys == ["wrap"] && form["wrap"].is_a?(String)
    key = form["wrap"]
    return ->(output, _rt) { { key => output } }
  end
  raise CaseError, "onResponseReceived: unsupported form #{show(form)}"
end

def human_review(form)
  raise CaseError, "humanReview: unsupported form #{show(form)}" unless form.is_a?(Hash) && form.keys == ["pauseOnFinal"]

  spec = form["pauseOnFinal"] || {}
  check_keys(spec, %w[reason payload], "humanReview.pauseOnFinal")
  lambda do |ctx|
    users = (ctx["messages"] || []).count { |m| m["role"] == "user" }
    final = ctx["isFinal"].nil? ? ctx["is_final"] : ctx["isFinal"]
    final && users == 1 ? { "reason" => spec["reason"] || "", "payload" => deep_copy(spec["payload"]) } : nil
  end
end

def stop_conditions(value)
  return nil if value.nil?

  (value.is_a?(Array) ? value : [value]).map do |item|
    key, arg = single_entry(item, "stopWhen condition")
    raise CaseError, "stopWhen: unsupported condition #{key.to_json}" unless STOP.key?(key)

    STOP[key].call(arg)
  end
end

def tool_execution(value)
  return nil if value.nil?

  check_keys(value, %w[toolConcurrency onError maxOutputChars maxToolCalls], "toolExecution")
  { tool_concurrency: value["toolConcurrency"], on_error: value["onError"], max_output_chars: value["maxOutputChars"],
    max_tool_calls: value["maxToolCalls"] }.compact
end

def model_retry(value)
  return nil if value.nil?

  check_keys(value, %w[maxRetries backoffMs], "modelRetry")
  { max_retries: value["maxRetries"] || 0, backoff_ms: value["backoffMs"] || 250 }
end

def snake_choice(choice) = choice.is_a?(Hash) ? choice.to_h { |k, v| [k == "toolId" ? "tool_id" : k, v] } : choice

def build_tool(spec, obs)
  check_keys(spec, TOOL_KEYS, "tool")
  raise CaseError, "tool without id" unless spec["id"].is_a?(String)

  validator = ->(key) { spec[key].nil? ? nil : schema_validator(spec[key]) }
  PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
    id: spec["id"], description: spec["description"] || "", parameters: spec["parameters"],
    execute: spec["manual"] == true ? nil : executor(spec, obs), timeout_ms: spec["timeoutMs"],
    require_approval: tool_approval(spec["requireApproval"]), on_error: spec["onError"],
    input_schema: validator.call("inputSchema"), output_schema: validator.call("outputSchema"),
    event_schema: validator.call("eventSchema"), on_tool_called: on_tool_called(spec["onToolCalled"]),
    on_response_received: on_response_received(spec["onResponseReceived"]),
    next_turn_params: deep_copy(spec["nextTurnParams"]), strict: spec["strict"] == true ? true : nil,
    input_examples: deep_copy(spec["inputExamples"]), max_calls: spec["maxCalls"], retry: tool_retry(spec["retry"]),
    defer_loading: spec["deferLoading"]
  ))
end

def tool_retry(value)
  return nil if value.nil?

  check_keys(value, %w[maxAttempts backoffMs], "retry")
  PhaseoAgentSdk::ToolRetry.new(max_attempts: value["maxAttempts"], backoff_ms: value["backoffMs"])
end

# `{id, description?, asAgent: {agent, tools}}`: the nested agent built like the case's own
# and registered with `as_tool` (docs/behaviour.md §18).
def agent_tool(spec, obs)
  check_keys(spec, %w[id description asAgent], "tool")
  check_keys(spec["asAgent"], %w[agent tools], "asAgent")
  nested = build_agent(spec["asAgent"], obs)
  raise nested if nested.is_a?(PhaseoAgentSdk::AgentError)

  nested.as_tool(id: spec["id"], description: spec["description"])
end

def build_agent(c, obs)
  a = c["agent"]
  raise CaseError, "case without agent" unless a.is_a?(Hash)

  check_keys(a, AGENT_KEYS, "agent")
  begin
    tools = (c["tools"] || []).map { |t| t.is_a?(Hash) && t.key?("asAgent") ? agent_tool(t, obs) : build_tool(t, obs) }
    definition = {
      id: a["id"], tools: tools, tool_choice: snake_choice(a["toolChoice"]), parallel_tool_calls: a["parallelToolCalls"],
      active_tools: deep_copy(a["activeTools"]), model: a["model"], instructions: a["instructions"],
      max_steps: a["maxSteps"], temperature: a["temperature"], max_output_tokens: a["maxOutputTokens"], top_p: a["topP"],
      stop_when: stop_conditions(a["stopWhen"]), model_retry: model_retry(a["modelRetry"]),
      tool_execution: tool_execution(a["toolExecution"])
    }
    definition[:output_schema] = schema_validator(a["outputSchema"]) unless a["outputSchema"].nil?
    definition[:require_approval] = agent_approval(a["requireApproval"]) unless a["requireApproval"].nil?
    definition[:human_review] = human_review(a["humanReview"]) unless a["humanReview"].nil?
    definition[:state_secrets] = Array(a["stateSecret"]) unless a["stateSecret"].nil?
    PhaseoAgentSdk.create_agent(definition.compact)
  rescue PhaseoAgentSdk::AgentError => e
    e
  end
end

# A request as the product's Ruby client sees it (a PhaseoAgentSdk::ModelRequest with
# snake_case members), summarised in the case format's camelCase.
def request_summary(request)
  raise CaseError, "a host client got #{request.class}, not a PhaseoAgentSdk::ModelRequest" unless request.is_a?(PhaseoAgentSdk::ModelRequest)

  messages = request.messages
  tail = messages.reverse.take_while { |m| m.role == "tool" }.reverse
  users = messages.select { |m| m.role == "user" }
  tools = request.tools
  choice = request.tool_choice
  choice = { "toolId" => choice["tool_id"] } if choice.is_a?(Hash)
  {
    "toolMessages" => tail.map { |m| { "toolCallId" => m.tool_call_id, "content" => m.content, "isError" => m.is_error == true } },
    "tools" => tools.map(&:id), "context" => request.context, "temperature" => request.temperature,
    "model" => request.model, "instructions" => request.instructions,
    "lastUserMessage" => users.empty? ? nil : users.last.content, "maxOutputTokens" => request.max_output_tokens,
    "topP" => request.top_p, "toolChoice" => choice, "parallelToolCalls" => request.parallel_tool_calls,
    "toolSpecs" => tools.map { |t| { "id" => t.id, "strict" => t.strict || false, "inputExamples" => t.input_examples } },
    "toolCalls" => last_tool_calls(messages)
  }
end

# The last assistant message's tool calls (`[{id, name, arguments}]`), as the model reads them.
def last_tool_calls(messages)
  calls = messages.reverse.map(&:tool_calls).find { |c| c && !c.empty? } || []
  calls.map { |c| { "id" => c.id, "name" => c.name, "arguments" => c.input } }
end

# The case's model: a host client (an object with `generate`) recording every request.
class ScriptedModel
  attr_accessor :cursor
  attr_reader :requests, :ran_out

  def initialize(entries, cursor)
    @entries = entries
    @cursor = cursor
    @requests = []
    @mutex = Mutex.new
    @ran_out = nil
  end

  def generate(request)
    entry = @mutex.synchronize do
      @requests << request_summary(request)
      index = @cursor
      @cursor += 1
      if index >= @entries.size
        @ran_out = "case error: the scripted model ran out of responses (#{@entries.size} scripted)"
        raise @ran_out
      end
      @entries[index]
    end
    if entry.key?("fail")
      failure = entry["fail"]
      raise(failure.is_a?(Hash) ? failure["message"].to_s : text(failure))
    end
    deep_copy(entry)
  end
end

Outcome = Struct.new(:state, :error, :events, :requests, :executed, :cancelled, :max_concurrent, :wall_ms,
                     keyword_init: true)

def override_kwargs(spec)
  {
    model: spec["model"], max_steps: spec["maxSteps"], stop_when: stop_conditions(spec["stopWhen"]),
    model_retry: model_retry(spec["modelRetry"]), tool_execution: tool_execution(spec["toolExecution"]),
    temperature: spec["temperature"], max_output_tokens: spec["maxOutputTokens"], top_p: spec["topP"],
    tool_choice: snake_choice(spec["toolChoice"]), parallel_tool_calls: spec["parallelToolCalls"],
    active_tools: deep_copy(spec["activeTools"])
  }.compact
end

# Approvals (`edits`: an entry may carry `editedInput`) or rejections.
def decisions(items, edits: false)
  return [] if items.nil?

  items.map do |d|
    next d if d.is_a?(String)
    raise CaseError, "unsupported decision #{show(d)}" unless d.is_a?(Hash) && d["toolCallId"].is_a?(String)

    check_keys(d, edits ? %w[toolCallId reason editedInput] : %w[toolCallId reason], edits ? "approval" : "rejection")
    decision = { tool_call_id: d["toolCallId"], reason: d["reason"] }
    decision[:edited_input] = deep_copy(d["editedInput"]) if d.key?("editedInput")
    decision
  end
end

# Tool outputs or responses (both `{toolCallId, output}`).
def tool_outputs(items, what = "toolOutput")
  (items || []).map do |o|
    check_keys(o, %w[toolCallId output], what)
    raise CaseError, "#{what} without toolCallId: #{show(o)}" unless o.is_a?(Hash) && o["toolCallId"].is_a?(String)

    { tool_call_id: o["toolCallId"], output: deep_copy(o["output"]) }
  end
end

# One case's agent, model and current state across its steps.
class CaseRun
  attr_accessor :state

  def initialize(agent, model, obs, state)
    @agent = agent
    @model = model
    @obs = obs
    @state = state # a RunResult, or JSON text after an editState step
  end

  def step(step)
    @obs.reset
    @model.requests.clear
    events = []
    token = PhaseoAgentSdk::CancelToken.new
    common = { client: @model, on_event: ->(e) { events << e }, cancel: token }
    if step.key?("run")
      spec = step["run"]
      args = override_kwargs(spec).merge(input: deep_copy(spec["input"]), context: deep_copy(spec["context"]))
      args[:messages] = deep_copy(spec["messages"]) unless spec["messages"].nil?
      method = :run
    elsif step.key?("continue")
      spec = step["continue"]
      raise CaseError, "continue without a state" if @state.nil?

      args = override_kwargs(spec).merge(state: @state, approvals: decisions(spec["approvals"], edits: true),
                                         rejections: decisions(spec["rejections"]),
                                         tool_outputs: tool_outputs(spec["toolOutputs"]),
                                         responses: tool_outputs(spec["responses"], "response"),
                                         human_input: spec["humanInput"], context: deep_copy(spec["context"]))
      method = :continue_run
    else
      raise CaseError, "a step is neither run nor continue"
    end
    timer = spec["cancelAfterMs"] && Thread.new { sleep(Float(spec["cancelAfterMs"]) / 1000); token.cancel }
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    begin
      result = @agent.public_send(method, **args, **common)
      error = nil
    rescue PhaseoAgentSdk::AgentError => e
      result = e.result
      error = e
    ensure
      timer&.kill
    end
    wall_ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started) * 1000
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + EXECUTOR_GRACE_S
    sleep 0.005 until @obs.idle? || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    raise CaseError, @model.ran_out if @model.ran_out

    unless result.nil?
      begin
        @state = PhaseoAgentSdk::RunResult.from_json(result.to_json)
      rescue PhaseoAgentSdk::AgentError => e
        raise CaseError, "state round trip: #{e.code}: #{e.message}"
      end
    end
    executed, cancelled, max_concurrent = @obs.snapshot
    Outcome.new(state: @state.is_a?(String) ? nil : @state, error: error, events: events, requests: @model.requests.dup,
                executed: executed, cancelled: cancelled, max_concurrent: max_concurrent, wall_ms: wall_ms)
  end
end

def tool_message_matches(expected, actual)
  return false unless json_eq(expected["toolCallId"], actual["toolCallId"])
  return false if (expected["isError"] || false) != (actual["isError"] || false)

  content = actual["content"] || ""
  if expected.key?("content")
    parsed = begin
      JSON.parse(content, quirks_mode: true)
    rescue JSON::ParserError
      content
    end
    return false unless json_eq(expected["content"], parsed)
  end
  contains = expected["contentContains"]
  !contains.is_a?(String) || content.include?(contains)
end

def check_request(i, expected, actual)
  expected.each do |key, want|
    got = actual[key]
    case key
    when "toolMessages"
      w = want || []
      g = got || []
      unless w.size == g.size && w.zip(g).all? { |x, y| tool_message_matches(x, y) }
        raise CaseError, "modelRequests[#{i}].toolMessages: expected #{show(w)}, got #{show(g)}"
      end
    when "toolCalls"
      w = want || []
      g = got || []
      same = w.size == g.size && w.zip(g).all? do |x, y|
        x["id"] == y["id"] && x["name"] == y["name"] && json_eq(as_json(x["arguments"]), as_json(y["arguments"]))
      end
      raise CaseError, "modelRequests[#{i}].toolCalls: expected #{show(w)}, got #{show(g)}" unless same
    when "toolSpecs"
      w = want || []
      g = got || []
      unless w.size == g.size && w.zip(g).all? { |x, y| x.all? { |k, v| TOOL_SPEC_KEYS.include?(k) && json_eq(v, y[k]) } }
        raise CaseError, "modelRequests[#{i}].toolSpecs: expected #{show(w)}, got #{show(g)}"
      end
    else diff("modelRequests[#{i}].#{key}", want, got)
    end
  end
end

# Tool call arguments compared as JSON: a String holding JSON stands for that JSON.
def as_json(value)
  return value unless value.is_a?(String)

  JSON.parse(value, quirks_mode: true)
rescue JSON::ParserError
  value
end

def check_definition_error(want, built)
  raise CaseError, "expectDefinitionError: expected #{show(want)}, but the definition was accepted" unless built.is_a?(PhaseoAgentSdk::AgentError)
  if want.key?("code") && !json_eq(want["code"], built.code)
    raise CaseError, "expectDefinitionError.code: expected #{show(want['code'])}, got #{show(built.code)} (message: #{built.message})"
  end

  contains = want["messageContains"]
  return unless contains.is_a?(String) && !built.message.include?(contains)

  raise CaseError, "expectDefinitionError.message: expected to contain #{contains.inspect}, got #{built.message.inspect}"
end

def check_error(want, o)
  run_error = o.state&.error
  if o.error
    code = o.error.code
    message = o.error.message
  elsif run_error.is_a?(Hash)
    code = run_error["code"]
    message = run_error["message"].to_s
  else
    raise CaseError, "error: expected #{show(want)}, got no error"
  end
  raise CaseError, "error.code: expected #{show(want['code'])}, got #{show(code)} (message: #{message})" if want.key?("code") && !json_eq(want["code"], code)

  contains = want["messageContains"]
  raise CaseError, "error.message: expected to contain #{contains.inspect}, got #{message.inspect}" if contains.is_a?(String) && !message.include?(contains)
end

def events_by_call(events, types)
  events.select { |e| types.include?(e["type"]) }.group_by { |e| e["toolCallId"].to_s }
end

def state_fields(state)
  return {} if state.nil?

  pause = state.pause
  { "status" => state.status, "output" => state.output, "stopReason" => state.stop_reason,
    "pauseKind" => pause.is_a?(Hash) ? pause["kind"] : nil, "context" => state.context,
    "pending" => state.pending.map { |p| { "toolCallId" => p["call"]["id"], "toolName" => p["call"]["name"], "kind" => p["kind"] } } }
end

def check_expect(expect, o)
  fields = state_fields(o.state)
  expect.each do |key, want|
    case key
    when "status", "output", "stopReason", "pauseKind", "context", "pending" then diff(key, want, fields[key])
    when "error" then check_error(want, o)
    when "executed" then diff(key, want, o.executed)
    when "cancelled" then diff(key, want, o.cancelled)
    when "maxConcurrent" then diff(key, want, o.max_concurrent)
    when "modelRequests"
      raise CaseError, "modelRequests: expected #{want.size} requests, got #{o.requests.size}" unless want.size == o.requests.size

      want.zip(o.requests).each_with_index { |(w, g), i| check_request(i, w, g) }
    when "events" then diff(key, want, o.events.map { |e| e["type"] }.reject { |t| t.to_s.start_with?("response.") })
    when "toolEvents"
      got = events_by_call(o.events, TOOL_EVENT_TYPES)
      want.each { |id, types| diff("toolEvents.#{id}", types, (got[id] || []).map { |e| e["type"] }) }
    when "preliminaryResults"
      got = events_by_call(o.events, ["tool.preliminary_result"])
      want.each { |id, values| diff("preliminaryResults.#{id}", values, (got[id] || []).map { |e| e["result"] }) }
    when "usage"
      usage = o.state&.usage
      want.each { |k, v| diff("usage.#{k}", v, usage && usage[k]) }
    when "minWallMs"
      raise CaseError, "minWallMs: took #{o.wall_ms.to_i} ms, at least #{want} ms expected" if o.wall_ms < Float(want)
    when "maxWallMs"
      raise CaseError, "maxWallMs: took #{o.wall_ms.to_i} ms, limit #{want} ms" if o.wall_ms > Float(want)
    end
  end
  raise CaseError, "unexpected error #{o.error.code}: #{o.error.message}" if o.error && !expect.key?("error")
end

def check_case(c)
  check_keys(c, CASE_KEYS, "case")
  (c["model"] || []).each do |entry|
    check_keys(entry, MODEL_ENTRY_KEYS, "model entry")
    ((entry.is_a?(Hash) && entry["toolCalls"]) || []).each { |tc| check_keys(tc, %w[id name arguments], "model entry toolCalls") }
  end
  (c["steps"] || []).each_with_index do |step, i|
    if step.is_a?(Hash) && step.key?("editState")
      check_keys(step, ["editState"], "step #{i}")
      next
    end
    check_keys(step, %w[run continue expect], "step #{i}")
    check_keys(step["run"], RUN_KEYS, "step #{i}: run")
    check_keys(step["continue"], CONTINUE_KEYS, "step #{i}: continue")
    expect = step["expect"] || {}
    check_keys(expect, EXPECT_KEYS, "step #{i}: expect")
    check_keys(expect["usage"], USAGE_KEYS, "step #{i}: expect.usage")
    check_keys(expect["error"], %w[code messageContains], "step #{i}: expect.error")
    (expect["modelRequests"] || []).each do |request|
      check_keys(request, REQUEST_KEYS, "step #{i}: expect.modelRequests")
      ((request.is_a?(Hash) && request["toolMessages"]) || []).each do |m|
        check_keys(m, %w[toolCallId content contentContains isError], "step #{i}: expect.modelRequests.toolMessages")
      end
      ((request.is_a?(Hash) && request["toolCalls"]) || []).each do |tc|
        check_keys(tc, %w[id name arguments], "step #{i}: expect.modelRequests.toolCalls")
      end
    end
  end
end

def json_patch(text_doc, ops)
  doc = JSON.parse(text_doc)
  raise CaseError, "editState must be a list of operations" unless ops.is_a?(Array)

  ops.each do |op|
    check_keys(op, %w[op path value], "editState")
    kind = op["op"]
    path = op["path"]
    if path == "" && %w[add replace].include?(kind)
      doc = op["value"]
      next
    end
    raise CaseError, "editState: bad path #{path.to_json}" unless path.is_a?(String) && path.start_with?("/")

    parts = path[1..].split("/", -1).map { |p| p.gsub("~1", "/").gsub("~0", "~") }
    begin
      target = parts[0...-1].reduce(doc) { |t, part| t.is_a?(Array) ? t.fetch(Integer(part)) : t.fetch(part) }
      key = parts.last
      case kind
      when "remove"
        if target.is_a?(Array)
          target.fetch(Integer(key))
          target.delete_at(Integer(key))
        else
          target.fetch(key)
          target.delete(key)
        end
      when "replace"
        if target.is_a?(Array)
          target.fetch(Integer(key))
          target[Integer(key)] = op["value"]
        else
          target.fetch(key)
          target[key] = op["value"]
        end
      when "add"
        if target.is_a?(Array)
          target.insert(key == "-" ? target.size : Integer(key), op["value"])
        else
          target[key] = op["value"]
        end
      else raise CaseError, "editState: unsupported op #{kind.to_json}"
      end
    rescue KeyError, IndexError, ArgumentError, TypeError, NoMethodError => e
      raise CaseError, "editState: cannot apply #{show(op)}: #{e.message}"
    end
  end
  JSON.generate(doc)
end

Mode = Struct.new(:stop_after, :save_dir, :resume_dir, :from_step)

def load_saved(path)
  doc = JSON.parse(File.read(path))
  begin
    [PhaseoAgentSdk::RunResult.from_json(JSON.generate(doc["state"])), Integer(doc["modelCursor"] || 0)]
  rescue PhaseoAgentSdk::AgentError => e
    raise CaseError, "saved state refused: #{e.code}: #{e.message}"
  end
end

def run_case(path, c, mode)
  steps = c["steps"]
  raise CaseError, "case without steps" unless steps.is_a?(Array)

  file_name = File.basename(path)
  state = nil
  cursor = 0
  indices = (0...steps.size)
  if mode.stop_after
    return false if steps.size <= mode.stop_after

    indices = (0...mode.stop_after)
  elsif mode.resume_dir
    saved = File.join(mode.resume_dir, file_name)
    return false unless File.exist?(saved)

    state, cursor = load_saved(saved)
    indices = ((mode.from_step || 0)...steps.size)
  end
  check_case(c)
  obs = Observations.new
  agent = build_agent(c, obs)
  if c.key?("expectDefinitionError")
    return false if mode.stop_after || mode.resume_dir

    check_definition_error(c["expectDefinitionError"] || {}, agent)
    return true
  end
  raise CaseError, "agent definition refused: #{agent.code}: #{agent.message}" if agent.is_a?(PhaseoAgentSdk::AgentError)

  model = ScriptedModel.new(c["model"] || [], cursor)
  run = CaseRun.new(agent, model, obs, state)
  indices.each do |i|
    if steps[i].key?("editState")
      raise CaseError, "step #{i}: editState without a state" if run.state.nil?

      current = run.state.is_a?(String) ? run.state : run.state.to_json
      run.state = json_patch(current, steps[i]["editState"])
      next
    end
    begin
      outcome = run.step(steps[i])
      check_expect(steps[i]["expect"] || {}, outcome)
    rescue CaseError => e
      raise CaseError, "step #{i}: #{e.message}"
    rescue StandardError => e
      raise CaseError, "step #{i}: #{e.class}: #{e.message}"
    end
  end
  if mode.save_dir
    raise CaseError, "no state to save" if run.state.nil?

    FileUtils.mkdir_p(mode.save_dir)
    st = run.state.is_a?(String) ? PhaseoAgentSdk::RunResult.from_json(run.state) : run.state
    File.write(File.join(mode.save_dir, file_name), JSON.generate({ "state" => JSON.parse(st.to_json), "modelCursor" => model.cursor }))
  end
  true
end

def collect(path, out)
  if File.directory?(path)
    Dir.children(path).sort.each { |e| collect(File.join(path, e), out) }
  elsif path.end_with?(".json")
    out << path
  end
end

def usage!
  warn "usage: ruby_runner.sh [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH..."
  exit 2
end

def parse_args(argv)
  mode = Mode.new
  paths = []
  args = argv.dup
  until args.empty?
    arg = args.shift
    case arg
    when "--" then next
    when "--stop-after" then mode.stop_after = Integer(args.shift || usage!)
    when "--save-state" then mode.save_dir = args.shift || usage!
    when "--resume-state" then mode.resume_dir = args.shift || usage!
    when "--from-step" then mode.from_step = Integer(args.shift || usage!)
    else
      usage! if arg.start_with?("--")
      paths << arg
    end
  end
  stopping = mode.stop_after || mode.save_dir
  resuming = mode.resume_dir || mode.from_step
  usage! if stopping && (resuming || mode.save_dir.nil? || mode.stop_after.nil? || mode.stop_after < 1)
  usage! if resuming && (mode.resume_dir.nil? || mode.from_step.nil?)
  [mode, paths.empty? ? ["tests/conformance/cases"] : paths]
rescue ArgumentError
  usage!
end

def main(argv)
  mode, paths = parse_args(argv)
  files = []
  paths.each do |p|
    unless File.exist?(p)
      warn "no such case file or folder: #{p}"
      return 2
    end
    collect(p, files)
  end
  passed = 0
  failed = 0
  files.each do |path|
    name = path
    begin
      c = JSON.parse(File.read(path))
      name = c["name"] || path
      ran = run_case(path, c, mode)
      error = nil
    rescue CaseError => e
      ran = nil
      error = e.message
    rescue StandardError => e
      ran = nil
      error = "#{e.class}: #{e.message}"
    end
    if ran.nil?
      failed += 1
      puts "FAIL #{name}: #{error}"
    elsif ran
      passed += 1
      puts "PASS #{name}"
    end
    $stdout.flush
  end
  puts "#{passed} passed, #{failed} failed"
  failed.zero? ? 0 : 1
end

exit main(ARGV)
