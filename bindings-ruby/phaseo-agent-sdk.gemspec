# frozen_string_literal: true

# The platform gem of the Phaseo Agent SDK: the Ruby layer plus the prebuilt native
# extension (built by cargo, copied to lib/phaseo_agent_sdk/phaseo_agent_sdk.so by
# `make ruby-gem`); installing it needs no Rust toolchain.
Gem::Specification.new do |s|
  s.name = "phaseo-agent-sdk"
  s.version = "0.1.0"
  s.summary = "Phaseo Agent SDK: tools a model calls, validated, timed out, approved, concurrent, observable"
  s.authors = ["Phaseo"]
  s.license = "Apache-2.0"
  s.required_ruby_version = ">= 3.1"
  s.platform = Gem::Platform.new("x86_64-linux")
  s.files = Dir["lib/**/*.rb"] + ["lib/phaseo_agent_sdk/phaseo_agent_sdk.so"]
  s.require_paths = ["lib"]
end
