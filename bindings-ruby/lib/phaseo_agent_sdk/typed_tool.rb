# frozen_string_literal: true

module PhaseoAgentSdk
  # A tool whose arguments are declared by a `Params` class instead of a hand-written JSON
  # Schema (docs/behaviour.md §20):
  #
  #   book = PhaseoAgentSdk.typed_tool(id: "book_flight", description: "Books a flight",
  #                                    params: Booking, returns: Confirmation) do |booking, runtime|
  #     Confirmation.decode("reference" => "PX#{booking.passengers.size}")
  #   end
  #
  # The generated schema is the tool's `parameters` (with `strict: true` in its strict form,
  # made by the core); the core checks the model's arguments against it, then they are
  # decoded into a `params` instance before the block runs. A value that cannot be decoded
  # is a tool input error `Invalid tool input: <pointer>: <reason>`, which `on_error:
  # "return-to-model"` sends back to the model. `returns:` (a `Params` class) gives the
  # output schema; the block may return an instance of it or a Hash. Without a block the
  # tool is manual (the run pauses for its output). Every other `Tool` field
  # (`require_approval:`, `on_error:`, `timeout_ms:`, ...) is passed on as it is.
  def self.typed_tool(id:, params:, returns: nil, strict: false, **fields, &execute)
    check_params_class(params, "params")
    check_params_class(returns, "returns") unless returns.nil?
    %i[parameters input_schema output_schema execute].each do |taken|
      raise ArgumentError, "typed_tool sets #{taken}: itself; leave it out" if fields.key?(taken)
    end
    schema = params.json_schema
    schema = Internal.native { Native.schema_strict(schema) } if strict
    decode = ->(value) { params.decode(value) && value }
    run = execute && lambda do |input, runtime|
      Params.plain(execute.call(params.decode(input), runtime))
    end
    define_tool(Tool.new(id: id, parameters: schema, strict: strict, input_schema: decode,
                         output_schema: returns&.json_schema, execute: run, **fields))
  end

  def self.check_params_class(value, what)
    return if Params.params_class?(value)

    raise ArgumentError, "typed_tool #{what}: expects a PhaseoAgentSdk::Params class, got #{value.inspect}"
  end
  private_class_method :check_params_class
end
