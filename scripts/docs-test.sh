#!/usr/bin/env bash
# Checks the built site in a headless browser (scripts/docs-browser-check.mjs: every page,
# every internal link and anchor, the language tabs), then runs every example of the docs site (docs/examples/<lang>/…) with the bindings built in
# this repository and compares what each prints with docs/examples/<name>.out. Each example
# exists in every language (a missing one fails); Swift is shown but not run (no Swift
# compiler on these machines). Every example runs from the repository's root (the MCP example
# starts a server from tests/mcp). Expects `make python node kotlin go-lib ruby php csharp
# mcp-servers docs docs-browser`.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
examples=docs/examples
failed=0

node scripts/docs-browser-check.mjs "$target/site"

pascal() { echo "$1" | sed -E 's/(^|_)([a-z])/\U\2/g'; }

# The TypeScript examples, type-checked and compiled at once; they import the package by
# its name, resolved to bindings-node.
rm -rf "$target/docs-node"
bindings-node/node_modules/.bin/tsc -p "$examples/node/tsconfig.json"
mkdir -p "$target/docs-node/node_modules/@phaseo"
ln -sfn "$repo/bindings-node" "$target/docs-node/node_modules/@phaseo/agent-sdk"
echo '{"type": "module"}' > "$target/docs-node/package.json"

kotlin="$repo/bindings-uniffi/kotlin"
jvm_cp="$kotlin/target/classes:$kotlin/target/test-classes:$(cat "$kotlin/target/classpath.txt")"
native="$target/debug"
mkdir -p "$target/dotnet/docs" "$target/docs-go"

# check NAME LANG FILE COMMAND...: runs COMMAND, compares its output with NAME.out.
check() {
  local name="$1" lang="$2" file="$3"
  shift 3
  if [ ! -e "$file" ]; then
    echo "FAIL $lang $name: $file is missing (every example exists in every language)"
    failed=1
    return
  fi
  local out
  if ! out="$("$@" 2>&1)"; then
    echo "FAIL $lang $name: $file exited with an error:"
    echo "$out" | tail -20 | sed 's/^/    /'
    failed=1
  elif [ "$out" != "$(cat "$examples/$name.out")" ]; then
    echo "FAIL $lang $name: $file printed:"
    echo "$out" | tail -20 | sed 's/^/    /'
    failed=1
  else
    echo "ok   $lang $name"
  fi
}

count=0
for expected in "$examples"/*.out; do
  name="$(basename "$expected" .out)"
  class="$(pascal "$name")"
  dashed="${name//_/-}"
  count=$((count + 1))
  check "$name" python "$examples/python/$name.py" .venvs/py/bin/python "$examples/python/$name.py"
  check "$name" typescript "$examples/node/$dashed.ts" node "$target/docs-node/$dashed.js"
  check "$name" kotlin "$examples/kotlin/$class.kt" \
    java -Djna.library.path="$native" -cp "$jvm_cp" "docs.examples.${class}Kt"
  check "$name" java "$examples/java/$class.java" \
    java -Djna.library.path="$native" -cp "$kotlin/target/classes:$(cat "$kotlin/target/classpath.txt")" \
    "$examples/java/$class.java"
  # Built in the examples' module, run from the repository's root like every other language.
  check "$name" go "$examples/go/$name/main.go" bash -c \
    "(cd $examples/go && go build -o '$target/docs-go/$name' ./$name) && '$target/docs-go/$name'"
  check "$name" ruby "$examples/ruby/$name.rb" ruby -Ibindings-ruby/lib "$examples/ruby/$name.rb"
  check "$name" php "$examples/php/$name.php" \
    php -d extension="$repo/bindings-php/php/phaseo_agent.so" \
    -d auto_prepend_file="$repo/bindings-php/php/autoload.php" "$examples/php/$name.php"
  check "$name" csharp "$examples/csharp/$class.cs" bash -c \
    "mcs -langversion:7.2 -nologo -warnaserror+ -r:System.Core.dll -r:System.ComponentModel.DataAnnotations.dll -r:'$target/dotnet/Phaseo.AgentSdk.dll' \
       -out:'$target/dotnet/docs/$class.exe' '$examples/csharp/$class.cs' \
     && MONO_PATH='$target/dotnet' LD_LIBRARY_PATH='$native' mono '$target/dotnet/docs/$class.exe'"
  if [ ! -e "$examples/swift/$class.swift" ]; then
    echo "FAIL swift $name: $examples/swift/$class.swift is missing"
    failed=1
  fi
done
# Examples of features only some languages have yet (serving tools over MCP: Python and
# Node), each compared with serving/<name>.out.
for expected in "$examples"/serving/*.out; do
  name="$(basename "$expected" .out)"
  dashed="${name//_/-}"
  count=$((count + 1))
  check "serving/$name" python "$examples/python/$name.py" .venvs/py/bin/python "$examples/python/$name.py"
  check "serving/$name" typescript "$examples/node/$dashed.ts" node "$target/docs-node/$dashed.js"
done
[ "$count" -gt 0 ] || { echo "FAIL: no examples in $examples"; exit 1; }
if [ "$failed" -ne 0 ]; then
  echo "docs-test: some examples failed"
  exit 1
fi
echo "docs-test: $count example(s), each in every language it is shown in (Swift shown, not compiled here)"
