#!/usr/bin/env bash
# Runs the Java example with the JVM library built by `make kotlin` (single-file source
# launch: no build step of its own).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
kotlin="$repo/bindings-uniffi/kotlin"
native="${CARGO_TARGET_DIR:-$repo/target}/debug"
if [ ! -f "$kotlin/target/classpath.txt" ] || [ ! -d "$kotlin/target/classes/app/phaseo/agent" ]; then
  echo "examples/java: the JVM library is not built: run \`make kotlin\`." >&2
  exit 2
fi
exec java -Djna.library.path="$native" -cp "$kotlin/target/classes:$(cat "$kotlin/target/classpath.txt")" \
  "$repo/examples/java/${1:-SupportDesk}.java"
