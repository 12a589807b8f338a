#!/usr/bin/env bash
# Ruby conformance runner (see ruby_runner.rb): runs the cases through the Ruby binding.
# Needs the extension built next to bindings-ruby/lib (`make ruby`).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [ ! -f "$root/bindings-ruby/lib/phaseo_agent_sdk/phaseo_agent_sdk.so" ]; then
  echo "ruby_runner: the Ruby extension is not built; run \`make ruby\` first" >&2
  exit 2
fi
exec ruby -I"$root/bindings-ruby/lib" "$root/tests/conformance/ruby_runner.rb" "$@"
