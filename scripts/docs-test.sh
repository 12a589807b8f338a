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

# check NAME LANG FILE COMMAND...: runs COMMAND (at most 10 minutes), compares its output
# with NAME.out.
check() {
  local name="$1" lang="$2" file="$3"
  shift 3
  if [ ! -e "$file" ]; then
    echo "FAIL $lang $name: $file is missing (every example exists in every language)"
    failed=1
    return
  fi
  local out
  if ! out="$(timeout 600 "$@" 2>&1)"; then
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

# example LANG NAME: sets `file` to the example NAME's source in LANG and `cmd` to the command
# that runs it from the repository's root; Go and C# examples are compiled first (a failed
# compile leaves `cmd` printing the compiler's output and failing).
example() {
  local lang="$1" name="$2" class dashed out
  class="$(pascal "$name")"
  dashed="${name//_/-}"
  case "$lang" in
    python) file="$examples/python/$name.py"; cmd=(.venvs/py/bin/python "$file") ;;
    typescript) file="$examples/node/$dashed.ts"; cmd=(node "$target/docs-node/$dashed.js") ;;
    kotlin)
      file="$examples/kotlin/$class.kt"
      cmd=(java -Djna.library.path="$native" -cp "$jvm_cp" "docs.examples.${class}Kt") ;;
    java)
      file="$examples/java/$class.java"
      cmd=(java -Djna.library.path="$native" -cp "$kotlin/target/classes:$(cat "$kotlin/target/classpath.txt")" "$file") ;;
    go)
      # Built in the examples' module, run from the repository's root like every other language.
      file="$examples/go/$name/main.go"
      cmd=("$target/docs-go/$name")
      if [ -e "$file" ] && ! out="$(cd "$examples/go" && go build -o "$target/docs-go/$name" "./$name" 2>&1)"; then
        cmd=(bash -c 'echo "$1"; exit 1' build "$out")
      fi ;;
    ruby) file="$examples/ruby/$name.rb"; cmd=(ruby -Ibindings-ruby/lib "$file") ;;
    php)
      file="$examples/php/$name.php"
      cmd=(php -d extension="$repo/bindings-php/php/phaseo_agent.so"
        -d auto_prepend_file="$repo/bindings-php/php/autoload.php" "$file") ;;
    csharp)
      file="$examples/csharp/$class.cs"
      cmd=(env MONO_PATH="$target/dotnet" LD_LIBRARY_PATH="$native" mono "$target/dotnet/docs/$class.exe")
      if [ -e "$file" ] && ! out="$(mcs -langversion:7.2 -nologo -warnaserror+ -r:System.Core.dll \
          -r:System.ComponentModel.DataAnnotations.dll -r:"$target/dotnet/Phaseo.AgentSdk.dll" \
          -out:"$target/dotnet/docs/$class.exe" "$file" 2>&1)"; then
        cmd=(bash -c 'echo "$1"; exit 1' build "$out")
      fi ;;
    *) echo "docs-test: unknown language $lang" >&2; exit 2 ;;
  esac
}

# queue LABEL LANG NAME [WRAPPER...]: the example NAME in LANG built, run (under WRAPPER)
# and compared with LABEL.out, in the background. DOCS_TEST_JOBS run at once (default 3):
# most of an example's time is a JVM, Mono or a Go build starting, or a server waiting.
# Each writes to a file of its own; the verdicts are printed in order at the end.
jobs_max=${DOCS_TEST_JOBS:-3}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
slots=0
queue() {
  local label="$1" lang="$2" name="$3" slot
  shift 3
  slots=$((slots + 1))
  slot="$work/$(printf '%05d' "$slots")"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  (
    failed=0
    example "$lang" "$name"
    check "$label" "$lang" "$file" "$@" "${cmd[@]}"
    echo "$failed" > "$slot.rc"
  ) > "$slot.out" 2>&1 &
}

all_langs=(python typescript kotlin java go ruby php csharp)
py=.venvs/py/bin/python
count=0
for expected in "$examples"/*.out; do
  name="$(basename "$expected" .out)"
  count=$((count + 1))
  for lang in "${all_langs[@]}"; do
    queue "$name" "$lang" "$name"
  done
  if [ ! -e "$examples/swift/$(pascal "$name").swift" ]; then
    echo "FAIL swift $name: $examples/swift/$(pascal "$name").swift is missing"
    failed=1
  fi
done
# queue_dir DIR "LANG..." [WRAPPER...]: every example whose expected output is DIR/<name>.out,
# in each of LANGS.
queue_dir() {
  local dir="$1" langs="$2" expected name lang
  shift 2
  for expected in "$examples/$dir"/*.out; do
    name="$(basename "$expected" .out)"
    count=$((count + 1))
    for lang in $langs; do
      queue "$dir/$name" "$lang" "$name" "$@"
    done
  done
}
# Serving tools over Streamable HTTP from the program itself (Python and Node).
queue_dir serving "python typescript"
# Tools served over stdio: each language's program is started as an MCP server by an MCP
# client (the official Python SDK's, scripts/docs-mcp-client.py), which lists the tools and
# calls one. Swift is not shown (not built here).
queue_dir served "${all_langs[*]}" "$py" scripts/docs-mcp-client.py
# Tracing: each example runs against a real OTLP receiver (scripts/docs-trace-run.py), whose
# spans are printed after the example's output. Swift is not shown (not built here).
queue_dir traced "${all_langs[*]}" "$py" scripts/docs-trace-run.py
wait
for slot in "$work"/*.out; do
  cat "$slot"
  [ "$(cat "${slot%.out}.rc" 2>/dev/null)" = 0 ] || failed=1
done
[ "$count" -gt 0 ] || { echo "FAIL: no examples in $examples"; exit 1; }
if [ "$failed" -ne 0 ]; then
  echo "docs-test: some examples failed"
  exit 1
fi
echo "docs-test: $count example(s), each in every language it is shown in (Swift shown, not compiled here)"
