# frozen_string_literal: true

require "test_helper"
require_relative "typed_params"

# Tools from declared parameter types (docs/behaviour.md §20).
class TypedToolsTest < Minitest::Test
  include SdkHelpers
  include TypedParams

  FIXTURES = File.expand_path("../../tests/typed-tools", __dir__)

  # A host model client that records every request and answers from a script.
  class RecordingClient
    attr_reader :requests

    def initialize(*responses)
      @responses = responses
      @requests = []
    end

    def generate(request)
      @requests << request
      @responses.shift || { text: "done" }
    end
  end

  def fixture(name) = JSON.parse(File.read(File.join(FIXTURES, name)))

  def refund_args(**changes)
    { order_id: "A-17", amount: 25, reason: "damaged",
      lines: [{ sku: "MUG-1", quantity: 2 }, { sku: "CUP-9", quantity: 1 }],
      customer: { email: "ana@example.com" } }.merge(changes)
  end

  def test_the_generated_schema_matches_the_checked_in_file
    assert_equal fixture("refund_schema.json"), Refund.json_schema
    assert_equal fixture("category_schema.json"), Category.json_schema
  end

  def test_the_model_is_sent_the_generated_schema_and_execute_gets_the_decoded_type
    executions = []
    client = RecordingClient.new({ tool_calls: [call("c1", "refund", refund_args)] }, { text: "Refunded." })
    agent = PhaseoAgentSdk.create_agent(id: "desk", tools: [TypedParams.refund_tool(executions)])
    paused = agent.run(input: "refund A-17", client: client)
    assert_equal "waiting_for_human", paused.status
    sent = client.requests.first.tools.find { |t| t.id == "refund" }
    assert_equal fixture("refund_schema.json"), sent.parameters
    refute sent.strict

    done = agent.continue_run(state: paused.to_json, client: client, approvals: ["c1"])
    assert_equal "completed", done.status
    refund = executions.first
    assert_instance_of Refund, refund
    assert_equal "A-17", refund.order_id
    assert_equal 25.0, refund.amount
    assert_instance_of Float, refund.amount
    assert_equal %w[MUG-1 CUP-9], refund.lines.map(&:sku)
    assert_instance_of OrderLine, refund.lines.first
    assert_equal "ana@example.com", refund.customer.email
    assert_equal false, refund.customer.vip, "a left-out field with a default gets the default"
    assert_nil refund.note
    assert_equal({ "order_id" => "A-17", "refunded" => 25.0, "lines" => 3 },
                 JSON.parse(tool_messages(done).first["content"]))
  end

  def test_wrong_types_go_back_to_the_model_which_retries
    executions = []
    tool = PhaseoAgentSdk.typed_tool(id: "refund", description: "Refunds", params: Refund,
                                     on_error: "return-to-model") { |r, _rt| executions << r; { ok: true } }
    bad = refund_args(lines: [{ sku: "MUG-1", quantity: "two" }])
    client = RecordingClient.new({ tool_calls: [call("c1", "refund", bad)] },
                                 { tool_calls: [call("c2", "refund", refund_args(reason: "broken"))] },
                                 { tool_calls: [call("c3", "refund", refund_args)] }, { text: "Refunded." })
    result = PhaseoAgentSdk.create_agent(id: "desk", tools: [tool]).run(input: "refund", client: client)
    assert_equal "completed", result.status
    seen = client.requests[1].messages.select { |m| m.role == "tool" }.map { |m| JSON.parse(m.content)["error"] }
    assert_equal ['Invalid tool input: /lines/0/quantity: "two" is not of type "integer"'], seen
    enum_error = JSON.parse(client.requests[2].messages.select { |m| m.role == "tool" }.last.content)["error"]
    assert_match %r{\AInvalid tool input: /reason: }, enum_error
    assert_equal ["A-17"], executions.map(&:order_id), "only the valid call ran"
  end

  def test_a_value_the_decoder_refuses_is_a_tool_input_error_with_its_pointer
    error = assert_raises(ArgumentError) { Refund.decode(refund_args(lines: [{ sku: 1, quantity: 1 }]).transform_keys(&:to_s)) }
    assert_equal "/lines/0/sku: expected a string, got an integer", error.message
    error = assert_raises(ArgumentError) { Refund.decode({ "amount" => 1 }) }
    assert_equal '/: missing required property "order_id"', error.message
    error = assert_raises(ArgumentError) { Refund.decode(refund_args(reason: "bored").transform_keys(&:to_s)) }
    assert_equal '/reason: "bored" is not one of ["damaged","late","other"]', error.message
    error = assert_raises(ArgumentError) { Refund.decode([1]) }
    assert_equal "/: expected an object, got an array", error.message
  end

  def test_strict_asks_the_core_for_the_strict_form_and_null_means_left_out
    executions = []
    tool = PhaseoAgentSdk.typed_tool(id: "refund", description: "Refunds", params: Refund, strict: true) do |r, _rt|
      executions << r
      "ok"
    end
    schema = tool.parameters
    assert_equal false, schema["additionalProperties"]
    assert_equal %w[order_id amount reason lines customer note], schema["required"]
    assert_equal %w[array null], schema["properties"]["lines"]["type"]
    args = refund_args(lines: nil, customer: { email: "b@example.com", vip: nil }, note: nil)
    client = RecordingClient.new({ tool_calls: [call("c1", "refund", args)] }, { text: "ok" })
    result = PhaseoAgentSdk.create_agent(id: "desk", tools: [tool]).run(input: "go", client: client)
    assert_equal "completed", result.status
    assert client.requests.first.tools.first.strict
    assert_nil executions.first.lines
    assert_equal false, executions.first.customer.vip
  end

  def test_a_recursive_type_is_referenced_and_decoded_at_every_depth
    seen = []
    tool = PhaseoAgentSdk.typed_tool(id: "file", description: "Files a tree", params: Category,
                                     on_error: "return-to-model") do |tree, _rt|
      seen << tree
      tree.children.map(&:name)
    end
    tree = { name: "home", children: [{ name: "kitchen", children: [{ name: "mugs" }] }, { name: "garden" }] }
    bad = { name: "home", children: [{ name: "kitchen", children: [{ name: 7 }] }] }
    client = RecordingClient.new({ tool_calls: [call("c1", "file", tree), call("c2", "file", bad)] }, { text: "ok" })
    result = PhaseoAgentSdk.create_agent(id: "shop", tools: [tool]).run(input: "go", client: client)
    assert_equal "completed", result.status
    assert_equal "mugs", seen.first.children.first.children.first.name
    assert_instance_of Category, seen.first.children.first.children.first
    contents = tool_messages(result).map { |m| m["content"] }
    assert_equal %w[kitchen garden], JSON.parse(contents[0])
    assert_match %r{\AInvalid tool input: /children/0/children/0/name: }, JSON.parse(contents[1])["error"]
  end

  def test_a_declared_return_type_checks_the_result
    tool = PhaseoAgentSdk.typed_tool(id: "refund", description: "Refunds", params: Refund, returns: Receipt) do |_r, _rt|
      { order_id: "A-17" }
    end
    assert_equal Receipt.json_schema, tool.output_schema
    client = RecordingClient.new({ tool_calls: [call("c1", "refund", refund_args)] }, { text: "ok" })
    error = assert_raises(PhaseoAgentSdk::ToolError) do
      PhaseoAgentSdk.create_agent(id: "desk", tools: [tool]).run(input: "go", client: client)
    end
    assert_equal "tool_output_invalid", error.code
    assert_includes error.message, "refunded"
  end

  def test_typed_plain_and_manual_tools_mix
    plain = tool("deploy", execute: ->(input, _rt) { { deployed: input["env"] } })
    typed = PhaseoAgentSdk.typed_tool(id: "file", description: "Files", params: Category) { |c, _rt| c.name.upcase }
    manual = PhaseoAgentSdk.typed_tool(id: "ask", description: "Asks a person", params: Category)
    client = RecordingClient.new({ tool_calls: [call("a", "deploy", env: "prod"), call("b", "file", name: "mugs"),
                                                call("c", "ask", name: "cups")] }, { text: "ok" })
    agent = PhaseoAgentSdk.create_agent(id: "mix", tools: [plain, typed, manual])
    paused = agent.run(input: "go", client: client)
    assert_equal "waiting_for_human", paused.status
    assert_equal %w[deploy file ask], client.requests.first.tools.map(&:id)
    done = agent.continue_run(state: paused, client: client, tool_outputs: [{ tool_call_id: "c", output: "noted" }])
    contents = tool_messages(done).map { |m| m["content"] }
    assert_equal [{ "deployed" => "prod" }, "MUGS", "noted"], contents.map { |c| JSON.parse(c) rescue c }
  end

  def test_nullable_default_and_map_fields
    settings = PhaseoAgentSdk::Params.define do
      param :label, String, nullable: true, required: true, description: "Shown to the customer"
      param :retries, Integer, default: 3
      param :tags, Hash
    end
    schema = settings.json_schema
    assert_equal({ "type" => %w[string null], "description" => "Shown to the customer" }, schema["properties"]["label"])
    assert_equal({ "type" => "integer", "default" => 3 }, schema["properties"]["retries"])
    assert_equal({ "type" => "object" }, schema["properties"]["tags"])
    decoded = settings.decode({ "label" => nil, "tags" => { "a" => 1 } })
    assert_nil decoded.label
    assert_equal 3, decoded.retries
    assert_equal({ "a" => 1 }, decoded[:tags])
    assert_equal({ "label" => nil, "retries" => 3, "tags" => { "a" => 1 } }, decoded.to_h)
    error = assert_raises(ArgumentError) { settings.decode({ "retries" => 1 }) }
    assert_equal '/: missing required property "label"', error.message
  end

  def test_definition_errors_are_clear
    error = assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk::Params.define { param :when, Time } }
    assert_includes error.message, "param :when: unsupported type Time"
    error = assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk::Params.define { param :tags, Array } }
    assert_includes error.message, "param :tags: Array needs of: <type>"
    error = assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk::Params.define { param :level, String, one_of: [] } }
    assert_includes error.message, "one_of must be a non-empty Array"
    error = assert_raises(PhaseoAgentSdk::DefinitionError) { PhaseoAgentSdk::Params.define { param :hash, String } }
    assert_includes error.message, "param :hash would hide the method hash"
    error = assert_raises(PhaseoAgentSdk::DefinitionError) do
      PhaseoAgentSdk::Params.define { param :a, String; param :a, Integer }
    end
    assert_includes error.message, "param :a is declared twice"
    error = assert_raises(ArgumentError) { PhaseoAgentSdk.typed_tool(id: "x", params: { type: "object" }) }
    assert_includes error.message, "typed_tool params: expects a PhaseoAgentSdk::Params class"
    error = assert_raises(ArgumentError) { PhaseoAgentSdk.typed_tool(id: "x", params: Category, parameters: {}) }
    assert_includes error.message, "typed_tool sets parameters: itself"
  end
end
