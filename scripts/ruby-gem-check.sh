#!/usr/bin/env bash
# Builds the platform gem from the extension of `make dist`'s one native build (profile
# DIST_PROFILE, default `dist`, linked by zig against glibc 2.28) and installs it into a fresh
# GEM_HOME with no Rust toolchain on the PATH, then runs an agent from outside the repo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d /tmp/phaseo-ruby-gem-XXXXXX)"
trap 'rm -rf "$work"' EXIT
stage="$work/src"
mkdir -p "$stage"
# The Ruby sources without the development build's extension (`make ruby` replaces it
# through a temporary file beside it, maybe while this runs): the gem gets the dist one.
(cd "$root/bindings-ruby" && tar cf - --exclude='*.so' --exclude='*.so.tmp' lib phaseo-agent-sdk.gemspec) |
  (cd "$stage" && tar xf -)
cp "${CARGO_TARGET_DIR:-$root/target}/x86_64-unknown-linux-gnu/${DIST_PROFILE:-dist}/libphaseo_agent_sdk.so" "$stage/lib/phaseo_agent_sdk/phaseo_agent_sdk.so"
strip --strip-debug "$stage/lib/phaseo_agent_sdk/phaseo_agent_sdk.so"
(cd "$stage" && gem build -q phaseo-agent-sdk.gemspec >/dev/null)
gemfile="$(ls "$stage"/phaseo-agent-sdk-*-x86_64-linux.gem)"
# No cargo/rustc on the PATH: only the system's directories.
clean_path=/usr/local/bin:/usr/bin:/bin
if PATH=$clean_path command -v cargo >/dev/null 2>&1; then
  echo "ruby-gem-check: cargo is on the clean PATH ($clean_path); the check would prove nothing" >&2
  exit 1
fi
cd "$work"
env -i PATH=$clean_path HOME="$work" GEM_HOME="$work/gems" GEM_PATH="$work/gems" \
  gem install -q --local --no-document "$gemfile" >/dev/null
env -i PATH=$clean_path HOME="$work" GEM_HOME="$work/gems" GEM_PATH="$work/gems" ruby -e '
  require "phaseo_agent_sdk"
  tool = PhaseoAgentSdk.define_tool(PhaseoAgentSdk::Tool.new(id: "echo", parameters: { type: "object" },
                                                             execute: ->(input, _runtime) { input }))
  agent = PhaseoAgentSdk.create_agent(id: "gem", tools: [tool])
  client = PhaseoAgentSdk::ScriptedClient.new([{ tool_calls: [{ id: "c1", name: "echo", arguments: "{\"a\":1}" }] }, { text: "ok" }])
  result = agent.run(input: "hi", client: client)
  raise "unexpected #{result.inspect}" unless result.output == "ok"
  puts "gem ok: #{Gem.loaded_specs.fetch("phaseo-agent-sdk").full_name} from #{$LOADED_FEATURES.grep(/phaseo_agent_sdk\.so/).first}"
'
