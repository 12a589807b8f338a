# frozen_string_literal: true

require "test_helper"

# The Tools page, in the product's Ruby shapes.
class ToolsTest < Minitest::Test
  include SdkHelpers

  def test_execute_sees_the_runtime_and_emits_progress_with_symbol_keys
    seen = nil
    deploy = tool("deploy", execute: lambda { |input, runtime|
      runtime.emit_progress.call(stage: "rolling out")
      runtime.set_context.call(deployed: input["env"])
      seen = { run_id: runtime.run_id, agent_id: runtime.agent_id, step: runtime.step_index,
               call: runtime.tool_call, context: runtime.context, cancelled: runtime.cancelled? }
      { "deployed" => input["env"], key: runtime.tool_call["id"] }
    })
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [deploy])
    events = []
    result = agent.run(input: "go", context: { user: "ana" }, on_event: ->(e) { events << e },
                       client: script({ tool_calls: [call("c1", "deploy", env: "prod")] }, { text: "Done." }))
    assert_equal "completed", result.status
    assert_equal "Done.", result.output
    assert_equal({ "deployed" => "prod" }, result.context)
    assert_equal "ops", seen[:agent_id]
    assert_equal result.run_id, seen[:run_id]
    assert_equal 0, seen[:step]
    assert_equal PhaseoAgentSdk::ToolCall.new(id: "c1", name: "deploy", input: { "env" => "prod" }), seen[:call]
    assert_equal({ "user" => "ana" }, seen[:context])
    refute seen[:cancelled]
    progress = events.find { |e| e["type"] == "tool.preliminary_result" }
    assert_equal({ "stage" => "rolling out" }, progress["result"])
    assert_equal "c1", progress["toolCallId"]
    assert_equal({ "deployed" => "prod", "key" => "c1" }, JSON.parse(tool_messages(result).first["content"]))
  end

  def test_validators_hash_schema_and_callable
    checked = []
    input_check = ->(v) { checked << v; raise ArgumentError, "env must not be staging" if v["env"] == "staging"; v }
    t = tool("deploy", input_schema: input_check, output_schema: { type: "object", required: ["ok"] },
                       execute: ->(input, _rt) { input["env"] == "prod" ? { ok: true } : { nope: 1 } }, on_error: "return-to-model")
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [t])
    result = agent.run(input: "go", client: script(
      { tool_calls: [call("a", "deploy", env: "prod"), call("b", "deploy", env: "staging")] }, { text: "ok" }
    ))
    assert_equal "completed", result.status
    contents = tool_messages(result).map { |m| m["content"] }
    assert_equal({ "ok" => true }, JSON.parse(contents[0]))
    assert_includes contents[1], "env must not be staging"
    assert_equal 2, checked.size
    error = assert_raises(PhaseoAgentSdk::ToolError) do
      agent.run(input: "go", client: script({ tool_calls: [call("c", "deploy", env: "dev")] }, { text: "ok" }))
    end
    assert_equal "tool_output_invalid", error.code
    assert_includes error.message, "ok"
  end

  def test_json_schema_validator_helper
    v = PhaseoAgentSdk.json_schema_validator({ type: "object", required: ["a"] })
    assert_equal({ "a" => 1 }, v.call({ "a" => 1 }))
    error = assert_raises(ArgumentError) { v.call({}) }
    assert_includes error.message, "a"
    assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk.json_schema_validator({ type: 12 }) }
  end

  def test_tool_and_agent_approval_predicates
    tool_rule = tool("deploy", require_approval: ->(input, _rt) { input["env"] == "prod" }, execute: ->(i, _r) { i })
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [tool_rule])
    paused = agent.run(input: "go", client: script({ tool_calls: [call("p", "deploy", env: "prod"), call("d", "deploy", env: "dev")] }, { text: "ok" }))
    assert_equal "waiting_for_human", paused.status
    assert_equal ["p"], paused.pending.map { |p| p["call"]["id"] }

    asked = []
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [tool("deploy", execute: ->(i, _r) { i })],
                                        require_approval: ->(tool_call, runtime) { asked << [tool_call.name, tool_call.input, runtime.tool_call["id"]]; true })
    paused = agent.run(input: "go", client: script({ tool_calls: [call("x", "deploy", env: "dev")] }))
    assert_equal "waiting_for_human", paused.status
    assert_equal [["deploy", { "env" => "dev" }, "x"]], asked
  end

  def test_hooks_on_tool_called_on_response_received_next_turn_params
    t = tool("lookup", execute: ->(_i, _r) { "raw" }, next_turn_params: { temperature: 0.2 })
    human = tool("ask", on_tool_called: ->(_input, _rt) {}, on_response_received: ->(value, _rt) { { wrapped: value } },
                        execute: ->(_i, _r) { flunk "must not run" })
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [t, human])
    result = agent.run(input: "go", client: script({ tool_calls: [call("l", "lookup", env: "x")] }, { tool_calls: [call("h", "ask", env: "y")] }))
    assert_equal "raw", tool_messages(result).first["content"]
    assert_equal "waiting_for_human", result.status
    done = agent.continue_run(state: result.to_json, client: script({}, {}, { text: "thanks" }).tap { |c| c.cursor = 2 },
                              tool_outputs: [{ tool_call_id: "h", output: { answer: 42 } }])
    assert_equal "completed", done.status
    assert_equal "thanks", done.output
    assert_equal({ "wrapped" => { "answer" => 42 } }, JSON.parse(tool_messages(done).last["content"]))
  end

  class Boom < Exception; end # rubocop:disable Lint/InheritException

  def test_exceptions_of_any_class_become_tool_errors
    raisers = {
      "std" => -> { raise "plain failure" }, "exc" => -> { raise Boom, "not a StandardError" },
      "exit" => -> { exit 3 }, "int" => -> { raise Interrupt }, "nomem" => -> { raise NoMemoryError, "fake" },
      "throw" => -> { throw :nowhere }
    }
    tools = raisers.map { |id, f| tool(id, execute: ->(_i, _r) { f.call }, on_error: "return-to-model") }
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: tools, tool_execution: { tool_concurrency: 4 })
    result = agent.run(input: "go", client: script({ tool_calls: raisers.keys.map { |id| call(id, id, env: "x") } }, { text: "survived" }))
    assert_equal "survived", result.output
    msgs = tool_messages(result)
    assert_equal raisers.size, msgs.size
    assert(msgs.all? { |m| m["isError"] })
    assert_includes msgs[0]["content"], "plain failure"
    assert_includes msgs[1]["content"], "not a StandardError"
    assert_includes msgs[5]["content"], "nowhere"
  end

  # Not only executors: validators, hooks, predicates, stop conditions, model clients and
  # listeners may raise anything; the run gets an error (or ignores a listener's) and the
  # process goes on.
  def test_exceptions_of_any_class_in_any_callable_never_crash
    raisers = [-> { raise Boom, "boom" }, -> { raise NoMemoryError, "fake" }, -> { throw :nowhere }, -> { raise "plain" }]
    raisers.each do |raiser|
      places = {
        validator: -> { tool("v", input_schema: ->(_v) { raiser.call }, execute: ->(i, _r) { i }) },
        hook: -> { tool("v", on_tool_called: ->(_i, _r) { raiser.call }) },
        predicate: -> { tool("v", execute: ->(i, _r) { i }, require_approval: ->(_i, _r) { raiser.call }) }
      }
      places.each do |place, build|
        agent = PhaseoAgentSdk.create_agent(id: "x", tools: [build.call])
        error = assert_raises(PhaseoAgentSdk::AgentError, place.to_s) do
          agent.run(input: "go", client: script({ tool_calls: [call("c", "v", env: "x")] }, { text: "ok" }))
        end
        assert error.result, "#{place}: the failed state comes with the error"
      end
      stop = PhaseoAgentSdk.create_agent(id: "x", stop_when: [->(_s) { raiser.call }])
      assert_raises(PhaseoAgentSdk::AgentError) { stop.run(input: "go", client: script({ text: "ok" })) }
      model = PhaseoAgentSdk.create_agent(id: "x")
      assert_raises(PhaseoAgentSdk::ModelError) { model.run(input: "go", client: ->(_r) { raiser.call }) }
      streaming = Object.new
      streaming.define_singleton_method(:stream) { |_r| raiser.call }
      assert_raises(PhaseoAgentSdk::ModelError) { model.stream(input: "go", client: streaming).result }
      listened = PhaseoAgentSdk.create_agent(id: "x").run(input: "go", client: script({ text: "ok" }),
                                                          on_event: ->(_e) { raiser.call })
      assert_equal "ok", listened.output
    end
  end

  def test_a_result_that_is_not_json_is_an_invalid_output
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [tool("bad", execute: ->(_i, _r) { Object.new }, on_error: "return-to-model")])
    error = assert_raises(PhaseoAgentSdk::ToolError) do
      agent.run(input: "go", client: script({ tool_calls: [call("c", "bad", env: "x")] }, { text: "no" }))
    end
    assert_equal "tool_output_invalid", error.code
    assert_includes error.message, "a Object is not a JSON value"
  end

  def test_failed_run_raises_with_code_and_result
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [tool("boom", execute: ->(_i, _r) { raise "kaput" })])
    error = assert_raises(PhaseoAgentSdk::ToolError) do
      agent.run(input: "go", client: script({ tool_calls: [call("c", "boom", env: "x")] }))
    end
    assert_equal "tool_failed", error.code
    assert_includes error.message, "kaput"
    assert_equal "failed", error.result.status
  end

  def test_definition_errors
    assert_raises(ArgumentError) { PhaseoAgentSdk.create_agent(id: "a", colour: "red") }
    assert_raises(ArgumentError) { PhaseoAgentSdk.define_tool({ id: "x" }) }
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk.create_agent(id: "a", tools: [tool("t", execute: ->(i, _r) { i }, on_error: "explode")])
    end
    assert_equal "definition_invalid", error.code
    error = assert_raises(TypeError) do
      PhaseoAgentSdk.create_agent(id: "a", tools: [tool("t", execute: ->(i, _r) { i }, parameters: { type: Object.new })])
    end
    assert_includes error.message, "not a JSON value"
  end

  def test_stop_conditions_built_in_and_callable
    agent = PhaseoAgentSdk.create_agent(id: "s", tools: [tool("echo", execute: ->(i, _r) { i })],
                                        stop_when: [PhaseoAgentSdk.step_count_is(5)])
    seen = []
    result = agent.run(input: "go", stop_when: [->(state) { seen << state["stepCount"]; "enough" if state["stepCount"] >= 1 }],
                       client: script({ tool_calls: [call("a", "echo", env: "x")] }, { tool_calls: [call("b", "echo", env: "y")] }))
    assert_equal "stopped", result.status
    assert_equal "enough", result.stop_reason
    assert_equal [1], seen
  end

  # The Tools page's Ruby samples, verbatim (scripts/check-tools-page-samples.py), each
  # run as the page describes it.
  class Tickets
    attr_reader :searched

    def initialize
      @searched = []
    end

    def search(query)
      @searched << query
      [{ "id" => "T-1", "subject" => "#{query} fails" }]
    end
  end

  def test_tools_page_define
    tickets = Tickets.new
    search = PhaseoAgentSdk.define_tool(
      PhaseoAgentSdk::Tool.new(
        id: "search_tickets",
        description: "Search support tickets by keyword",
        parameters: {
          type: "object",
          properties: { query: { type: "string" } },
          required: ["query"]
        },
        timeout_ms: 10_000,
        input_schema: ->(input) { input["query"].is_a?(String) ? input : raise("query is required") },
        execute: ->(input, runtime) { tickets.search(input["query"]) }
      )
    )
    agent = PhaseoAgentSdk.create_agent(id: "support", tools: [search])
    result = agent.run(input: "login?", client: script({ tool_calls: [call("c1", "search_tickets", query: "login")] },
                                                       { text: "One ticket." }))
    assert_equal "completed", result.status
    assert_equal ["login"], tickets.searched
    assert_equal [{ "id" => "T-1", "subject" => "login fails" }], JSON.parse(tool_messages(result).first["content"])
    refused = agent.run(input: "x", tool_execution: { on_error: "return-to-model" },
                        client: script({ tool_calls: [call("c1", "search_tickets", query: 7)] }, { text: "sorry" }))
    assert_includes tool_messages(refused).first["content"], "Invalid tool input"
    assert_equal ["login"], tickets.searched
  end

  class Deployments
    attr_reader :done

    def initialize
      @done = []
    end

    def deploy(input)
      @done << input["environment"]
      { "deployed" => input["environment"] }
    end
  end

  def test_tools_page_approval
    deployments = Deployments.new
    deploy = PhaseoAgentSdk::Tool.new(
      id: "deploy",
      description: "Deploy the selected release",
      require_approval: ->(input, runtime) { input["environment"] == "production" },
      execute: ->(input, runtime) { deployments.deploy(input) }
    )
    agent = PhaseoAgentSdk.create_agent(id: "ops", tools: [deploy])
    staging = agent.run(input: "ship", client: script({ tool_calls: [call("c1", "deploy", environment: "staging")] },
                                                      { text: "done" }))
    assert_equal "completed", staging.status
    paused = agent.run(input: "ship", client: script({ tool_calls: [call("c1", "deploy", environment: "production")] }))
    assert_equal "waiting_for_human", paused.status
    assert_equal ["staging"], deployments.done
    done = agent.continue_run(state: paused, approvals: ["c1"], client: script({ text: "shipped" }))
    assert_equal "completed", done.status
    assert_equal %w[staging production], deployments.done
  end

  def test_tools_page_progress
    index = PhaseoAgentSdk::Tool.new(
      id: "index_repository",
      execute: ->(input, runtime) {
        runtime.emit_progress.call(stage: "indexing") # tool.preliminary_result-Event
        runtime.set_context.call(indexed: true)       # Kontext für spätere Turns
        "done"
      }
    )
    agent = PhaseoAgentSdk.create_agent(id: "indexer", tools: [index])
    events = []
    result = agent.run(input: "index", context: { indexed: false }, on_event: ->(e) { events << e },
                       client: script({ tool_calls: [call("c1", "index_repository")] }, { text: "ok" }))
    assert_equal "completed", result.status
    progress = events.find { |e| e["type"] == "tool.preliminary_result" }
    assert_equal({ "stage" => "indexing" }, progress["result"])
    assert_equal({ "indexed" => true }, result.context)
    assert_equal "done", tool_messages(result).first["content"]
  end
end
