# frozen_string_literal: true

# The application's tools served to any MCP client (Claude Code, Cursor, ...) over stdio.
#
#   ruby -Ibindings-ruby/lib examples/ruby/serve_tools.rb      (an MCP client starts it)
#   claude mcp add notes -- ruby -Ibindings-ruby/lib examples/ruby/serve_tools.rb
#
# Two tools: `add_note` (its input is validated by its schema, its result is structured) and
# `delete_notes`, which needs a person's approval: the server asks the client through MCP
# elicitation before it runs, and a client that cannot ask gets an error instead. Every call
# keeps the tool's timeout and `tool_concurrency`. stdout carries the protocol, so the
# program prints nothing; the server stops when the client closes its input.

require "phaseo_agent_sdk"

NOTES = []
NOTES_LOCK = Mutex.new

ADD_NOTE = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "add_note", description: "Stores a note",
  parameters: { type: "object", properties: { text: { type: "string", minLength: 1 } },
                required: ["text"], additionalProperties: false },
  output_schema: { type: "object", properties: { id: { type: "integer" }, count: { type: "integer" } } },
  timeout_ms: 5000,
  execute: lambda do |input, _runtime|
    NOTES_LOCK.synchronize do
      NOTES << input["text"]
      { id: NOTES.size, count: NOTES.size }
    end
  end
))

DELETE_NOTES = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(
  id: "delete_notes", description: "Deletes every note", require_approval: true,
  execute: lambda do |_input, _runtime|
    deleted = NOTES_LOCK.synchronize { NOTES.size.tap { NOTES.clear } }
    "deleted #{deleted} notes"
  end
))

PhaseoAgentSdk.serve_mcp(tools: [ADD_NOTE, DELETE_NOTES], name: "notes", version: "1.0.0",
                         tool_execution: { tool_concurrency: 4 }, &:wait)
