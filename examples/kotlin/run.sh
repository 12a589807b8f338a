#!/usr/bin/env bash
# Runs a Kotlin example compiled by `make kotlin` (the JVM library's Maven build compiles
# examples/kotlin with its test sources): `examples/kotlin/run.sh ServeTools`.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
kotlin="$repo/bindings-uniffi/kotlin"
native="${CARGO_TARGET_DIR:-$repo/target}/debug"
main="examples.${1:-ServeTools}Kt"
if [ ! -f "$kotlin/target/classpath.txt" ] || [ ! -f "$kotlin/target/test-classes/${main//.//}.class" ]; then
  echo "examples/kotlin: the JVM library and its examples are not built: run \`make kotlin\`." >&2
  exit 2
fi
exec java -Djna.library.path="$native" \
  -cp "$kotlin/target/classes:$kotlin/target/test-classes:$(cat "$kotlin/target/classpath.txt")" "$main"
