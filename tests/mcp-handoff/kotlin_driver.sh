#!/usr/bin/env bash
# The Kotlin driver of the MCP handoff (see bindings-uniffi/kotlin/src/test/kotlin/app/
# phaseo/agent/mcp/McpHandoffDriver.kt):
#   tests/mcp-handoff/kotlin_driver.sh pause STATE_FILE
#   tests/mcp-handoff/kotlin_driver.sh continue STATE_FILE
# Needs `make kotlin mcp-servers`; PHASEO_MCP_MARKERS set by the caller. Started with
# `java -cp` and the classpath `make kotlin` writes (no Maven at run time); `exec`, so the
# pid it prints is this script's pid too.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
kotlin="$repo/bindings-uniffi/kotlin"
native="${CARGO_TARGET_DIR:-$repo/target}/debug"
for f in "$kotlin/target/classpath.txt" "$kotlin/target/test-classes/app/phaseo/agent/mcp/McpHandoffDriverKt.class" \
         "$native/libphaseo_agent_uniffi.so"; do
  if [ ! -f "$f" ]; then
    echo "kotlin_driver: the Kotlin binding is not built (missing ${f#"$repo/"}): run \`make kotlin\`" >&2
    exit 2
  fi
done
export PHASEO_REPO="$repo"
export PHASEO_PYTHON="${PHASEO_PYTHON:-$repo/.venvs/py/bin/python}"
cp="$kotlin/target/classes:$kotlin/target/test-classes:$(cat "$kotlin/target/classpath.txt")"
exec java -Djna.library.path="$native" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss2m -cp "$cp" \
  app.phaseo.agent.mcp.McpHandoffDriverKt "$@"
