# frozen_string_literal: true

require "minitest/autorun"
require "json"
require "rbconfig"
require "phaseo_agent_sdk"

# Helpers shared by the suites.
module SdkHelpers
  OBJECT = { type: "object", properties: { env: { type: "string" } }, required: ["env"] }.freeze

  def call(id, name, args = {})
    { id: id, name: name, arguments: JSON.generate(args) }
  end

  def script(*responses)
    PhaseoAgentSdk::ScriptedClient.new(responses)
  end

  def tool(id, **fields)
    PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: id, description: "#{id} tool", parameters: OBJECT, **fields))
  end

  def monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def tool_messages(result)
    result.messages.select { |m| m["role"] == "tool" }
  end

  LIB = File.expand_path("../lib", __dir__)

  # Runs `script` in a child Ruby process (what could crash the process or leave it waiting
  # must not take the suite with it) and returns the JSON values it printed, one a line.
  # A child still running after `deadline` seconds is killed and the test fails, showing
  # what it printed so far. The script has `outcome { ... }`: prints the block's result, or
  # the class, code and message of what it raised.
  def child(script, deadline: 60)
    prelude = <<~RUBY
      require "json"
      require "phaseo_agent_sdk"
      $stdout.sync = true
      def outcome
        value = yield
        puts JSON.generate({ "ok" => value })
      rescue Exception => e # rubocop:disable Lint/RescueException
        puts JSON.generate({ "raised" => e.class.name, "code" => (e.respond_to?(:code) ? e.code : nil),
                             "message" => e.message.to_s.scrub })
      end
    RUBY
    lines = []
    IO.popen([RbConfig.ruby, "-I#{LIB}", "-e", prelude + script], err: File::NULL) do |io|
      reader = Thread.new do
        io.each_line { |line| lines << line.chomp }
      rescue IOError
        nil # the child was killed and its pipe closed
      end
      unless reader.join(deadline)
        Process.kill("KILL", io.pid)
        flunk "the child was still running after #{deadline} s; it printed #{lines.inspect}"
      end
    end
    lines.map { |line| JSON.parse(line) }
  end
end
