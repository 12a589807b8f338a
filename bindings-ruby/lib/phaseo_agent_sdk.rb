# frozen_string_literal: true

# The Phaseo Agent SDK for Ruby: tools the model calls, validated, timed out, approved by
# a person when it matters, concurrent and observable. All logic is in the Rust core
# (the native extension `phaseo_agent_sdk/phaseo_agent_sdk.so`); this file only shapes
# Ruby values and callables for it.

require "timeout"
require "io/wait"
require "io/nonblock"
require_relative "phaseo_agent_sdk/phaseo_agent_sdk"
require_relative "phaseo_agent_sdk/errors"
require_relative "phaseo_agent_sdk/internal"
require_relative "phaseo_agent_sdk/tool"
require_relative "phaseo_agent_sdk/params"
require_relative "phaseo_agent_sdk/typed_tool"
require_relative "phaseo_agent_sdk/model"
require_relative "phaseo_agent_sdk/clients"
require_relative "phaseo_agent_sdk/result"
require_relative "phaseo_agent_sdk/store"
require_relative "phaseo_agent_sdk/mcp"
require_relative "phaseo_agent_sdk/stream"
require_relative "phaseo_agent_sdk/definition_spec"
require_relative "phaseo_agent_sdk/agent"
require_relative "phaseo_agent_sdk/serve"
require_relative "phaseo_agent_sdk/tracing"

# Module of the SDK (the product's names: `define_tool`, `create_agent`, `Tool`, ...).
module PhaseoAgentSdk
  VERSION = "0.1.0"
end

module PhaseoAgentSdk
  # Cancels the runs it is given to (`run(..., cancel: token)`); `token.cancel` works from
  # any thread or a signal handler.
  CancelToken = Native::CancelToken
end
