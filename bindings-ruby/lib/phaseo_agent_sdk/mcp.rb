# frozen_string_literal: true

module PhaseoAgentSdk
  # An MCP server declaration (docs/behaviour.md §11), given to `create_agent(mcp_servers: [...])`. The
  # server starts when a run first needs its tools, is shared by the agent's runs and stops
  # with `agent.close` (or the process).
  McpServer = Struct.new(:spec, :callables, keyword_init: true)

  MCP_OPTIONS = %i[allow_tools deny_tools filter tool_prefix require_approval timeout_ms tool_timeouts on_error
                   cache_ttl_ms optional defer_loading on_elicitation].freeze
  private_constant :MCP_OPTIONS

  # An MCP server started as a child process (`command` with `args`; `env` added to the
  # inherited environment; `cwd`), spoken to over stdio. Options: `allow_tools:`,
  # `deny_tools:`, `filter: ->(info) { bool }`, `tool_prefix:`, `require_approval:` (true,
  # false, "destructive" or `->(tool_call, runtime) { bool }`), `timeout_ms:`,
  # `tool_timeouts: { name => ms }`, `on_error:`, `cache_ttl_ms:`, `optional:`,
  # `defer_loading: true` (every tool of the server is deferred: offered only once the
  # built-in `tool_search` finds it, docs/behaviour.md §17),
  # `on_elicitation: ->(request, info) { answer }`.
  def self.mcp_stdio_server(name, command, args = [], env: nil, cwd: nil, **options)
    raise TypeError, "env must be a Hash, got #{env.class}" unless env.nil? || env.is_a?(Hash)

    mcp_server({ "name" => Internal.name(name, "MCP server name"), "command" => Internal.name(command, "command"),
                 "args" => Array(args).map { |a| Internal.name(a, "args") },
                 "env" => env && Internal.stringify(env).transform_values { |v| Internal.name(v, "env") },
                 "cwd" => cwd && Internal.name(cwd, "cwd") }, options)
  end

  # An MCP server over Streamable HTTP at `url`, with `headers` on every request and
  # `bearer_token` as `Authorization: Bearer <token>`. Options as `mcp_stdio_server`.
  def self.mcp_http_server(name, url, headers = nil, bearer_token: nil, **options)
    mcp_server({ "name" => Internal.name(name, "MCP server name"), "url" => Internal.name(url, "url"), "headers" => headers && Internal.stringify(headers),
                 "bearer_token" => bearer_token }, options)
  end

  def self.mcp_server(spec, options)
    unknown = options.keys - MCP_OPTIONS
    raise ArgumentError, "MCP server #{spec['name']}: unknown options: #{unknown.join(', ')}" unless unknown.empty?

    callables = {}
    options.each do |key, value|
      next if value.nil?

      case key
      # The core takes a filter's answer as a boolean: any truthy value keeps the tool.
      when :filter then callables["filter"] = value.respond_to?(:call) ? ->(info) { value.call(info) ? true : false } : value
      when :on_elicitation then callables["on_elicitation"] = value
      when :require_approval
        value.respond_to?(:call) ? callables["require_approval_fn"] = value : spec["require_approval"] = value
      when :tool_timeouts then spec["tool_timeouts"] = Internal.stringify(value)
      else spec[key.to_s] = value.is_a?(Symbol) ? value.to_s : value
      end
    end
    McpServer.new(spec: spec.compact, callables: callables)
  end
  private_class_method :mcp_server
end
