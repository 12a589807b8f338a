# frozen_string_literal: true

module PhaseoAgentSdk
  # Serves tools as an MCP server (docs/behaviour.md §19) that any MCP client lists and
  # calls: `serve_mcp(tools: [add, search], name: "files") { |server| server.wait }`.
  #
  # `transport:` is `"stdio"` (the default: the process's stdin and stdout speak MCP, so
  # the program must not print to stdout), `"http"`, or `{type: "http", host:, port:, path:,
  # auth_token:, allowed_origins:, allowed_hosts:}` (Streamable HTTP; `server.url` is its
  # address, port 0 picks a free one). `tool_execution: {tool_concurrency:, max_tool_calls:}`
  # limits the calls served at once and over the server's lifetime. A tool's
  # `require_approval` is asked of the client's user through elicitation; a client that
  # cannot be asked gets an error result. Tools without `execute` cannot be served.
  #
  # `agent:` (instead of `tools:`) serves one agent as a single tool: its id, one string
  # `input`, `description:` the tool's; a call runs the agent on `client:` (a model client
  # as `Agent#run` takes; without one, a DefinitionError) and returns its output, and its
  # approvals are asked of the MCP client through elicitation (docs/behaviour.md §19).
  #
  # With a block, yields the server, closes it when the block ends (however it ends) and
  # returns the block's value; without one, returns the running McpToolServer.
  def self.serve_mcp(name:, tools: nil, agent: nil, client: nil, description: nil, version: "0.0.0", transport: "stdio",
                     tool_execution: nil)
    server = McpToolServer.new(name: name, tools: tools, agent: agent, client: client, description: description,
                               version: version, transport: transport, tool_execution: tool_execution)
    return server unless block_given?

    begin
      yield server
    ensure
      server.close
    end
  end

  # A running MCP server from `serve_mcp`: `url`, `closed?`, `wait`, `close`. The tools'
  # calls run on Ruby threads of their own, started by a thread the server keeps while it
  # runs.
  class McpToolServer
    include DefinitionSpec

    # Starts the server (see PhaseoAgentSdk.serve_mcp for the options).
    def initialize(name:, tools:, agent:, client:, description:, version:, transport:, tool_execution:)
      @callables = []
      spec = { "name" => Internal.name(name, "name"), "version" => Internal.name(version, "version"),
               "tools" => Array(tools).map { |t| tool_spec(t) }, "agent" => agent && served_agent(agent),
               "description" => description, "transport" => transport_spec(transport),
               "toolExecution" => settings(tool_execution) }.compact
      # The client's Ruby functions stay registered while the server runs.
      model = client && client_spec(client, @callables)
      http = client.is_a?(HttpClient) ? client.native : nil
      @native = Internal.native { Native::McpToolServer.start(spec, model, http) }
      native = @native
      @serving = Thread.new do
        Thread.current.report_on_exception = false
        Internal.native { native.serve(nil) }
      end
    rescue StandardError
      Internal.release(@callables)
      raise
    end

    # `http://host:port/path` of a Streamable HTTP server; nil on stdio.
    def url
      @native.url
    end

    # Whether the server has stopped (closed, or its stdio client closed the input).
    def closed?
      @native.closed?
    end

    # Waits until the server stops, at most `timeout` seconds (nil: no limit); returns
    # whether it stopped. Ctrl-C interrupts the wait (the server keeps running).
    def wait(timeout = nil)
      !@serving.join(timeout).nil?
    end

    # Stops the server (calls in flight are cancelled) and waits until it has stopped.
    def close
      Internal.native { @native.close }
      @serving.join
      Internal.release(@callables)
      nil
    end

    private

    # The served agent's definition (its functions registered for the server's lifetime).
    def served_agent(agent)
      raise ArgumentError, "agent must be a PhaseoAgentSdk::Agent, got #{agent.class}" unless agent.is_a?(Agent)

      nested_spec(agent)
    end

    def transport_spec(transport)
      case transport
      when String, Symbol then transport.to_s
      when Hash
        spec = settings(transport)
        spec["type"] = spec["type"].to_s if spec["type"].is_a?(Symbol)
        spec
      else raise ArgumentError, "transport must be \"stdio\", \"http\" or {type:, host:, port:, path:, ...}, got #{transport.class}"
      end
    end
  end
end
