#!/usr/bin/env bash
# Java conformance runner: runs the cross-language cases through the Java API (AgentSdk) of
# the JVM library (bindings-uniffi/kotlin) with real Java lambdas, starting the JVM directly
# with `java -cp` (`make kotlin` builds the classes and writes target/classpath.txt).
#   tests/conformance/java_runner.sh [--stop-after N --save-state DIR |
#       --resume-state DIR --from-step N] PATH...
# Runs from any folder; relative paths are taken from the current folder.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
kotlin="$repo/bindings-uniffi/kotlin"
native="${CARGO_TARGET_DIR:-$repo/target}/debug"
missing=()
for f in "$kotlin/target/classpath.txt" "$kotlin/target/classes/app/phaseo/agent/AgentSdk.class" \
         "$kotlin/target/test-classes/app/phaseo/agent/conformance/JavaRunner.class"; do
  [ -f "$f" ] || missing+=("$f")
done
if [ ! -f "$native/libphaseo_agent_uniffi.so" ] && [ ! -f "$native/libphaseo_agent_uniffi.dylib" ]; then
  missing+=("$native/libphaseo_agent_uniffi.so")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "java_runner: the JVM library is not built (missing ${missing[0]#"$repo/"})." >&2
  echo "Build it first: \`make kotlin\` (cargo build -p phaseo-agent-uniffi, generate, mvn package)." >&2
  exit 2
fi
cp="$kotlin/target/classes:$kotlin/target/test-classes:$(cat "$kotlin/target/classpath.txt")"
exec java -Djna.library.path="$native" -XX:+UseSerialGC -Xss2m -cp "$cp" \
  app.phaseo.agent.conformance.JavaRunner "$@"
