#!/usr/bin/env bash
# Generates the bindings from the cdylib with the dev-profile uniffi-bindgen (library mode;
# the configuration is bindings-uniffi/uniffi.toml).
#   bindings-uniffi/scripts/generate.sh           Kotlin into the Maven project
#                                                 (kotlin/src/main/kotlin/app/phaseo/agent/)
#   bindings-uniffi/scripts/generate.sh --swift   Swift into swift/Sources/ (commit the result)
#   bindings-uniffi/scripts/generate.sh --check   regenerate Swift into a temp dir and fail if
#                                                 it differs from the committed Swift sources
# Builds what it needs in the debug profile; honours CARGO_TARGET_DIR (default <repo>/target).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
cargo="${CARGO:-cargo}"
mode="${1:-kotlin}"
case "$mode" in kotlin|--swift|--check) ;; *) echo "usage: $0 [--swift|--check]" >&2; exit 2;; esac

cd "$repo"
# Two builds, not one: built together, cargo would unify uniffi's `cli` feature (the
# generator's clap/askama/goblin) into the cdylib too.
"$cargo" build -q -p phaseo-agent-uniffi
"$cargo" build -q -p uniffi-bindgen
lib="$target/debug/libphaseo_agent_uniffi.so"
[ -f "$lib" ] || lib="$target/debug/libphaseo_agent_uniffi.dylib"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

if [ "$mode" = kotlin ]; then
  "$target/debug/uniffi-bindgen" generate "$lib" --language kotlin --out-dir "$out" --no-format >/dev/null
  kt="$out/app/phaseo/agent/phaseo_agent_uniffi.kt"
  # A JVM string may hold a lone UTF-16 surrogate ("bad \ud800"), which UTF-8 cannot. The
  # generated conversion to native text threw java.nio's MalformedInputException from
  # whichever call carried one (a run's input, a progress value, a callback's answer on a
  # thread of the library, where nothing answered the call). It writes each as U+FFFD
  # instead, as JavaScript's `toWellFormed` does: the one place every string goes through.
  report='onMalformedInput(CodingErrorAction.REPORT)'
  if [ "$(grep -cF "$report" "$kt")" != 1 ]; then
    echo "generate.sh: the generated Kotlin string conversion changed; check how it takes lone surrogates" >&2
    exit 1
  fi
  sed -i 's/onMalformedInput(CodingErrorAction\.REPORT)/onMalformedInput(CodingErrorAction.REPLACE).replaceWith(byteArrayOf(0xEF.toByte(), 0xBF.toByte(), 0xBD.toByte()))/' "$kt"
  # A string with no lone surrogate (nearly all) is written by the JDK's own conversion,
  # which is the same bytes without an encoder and its buffers per string.
  encoder='return Charsets.UTF_8.newEncoder().run {'
  if [ "$(grep -cF "$encoder" "$kt")" != 1 ]; then
    echo "generate.sh: the generated Kotlin string conversion changed; check its fast path" >&2
    exit 1
  fi
  sed -i 's/^\( *\)return Charsets\.UTF_8\.newEncoder()\.run {$/\1if (isWellFormed(value)) return ByteBuffer.wrap(value.toByteArray(Charsets.UTF_8))\n&/' "$kt"
  # Every native thread that calls into the JVM stays attached to it (JvmCallbacks.kt says
  # why): JNA reads that setting when it first hands out a callback's pointer, so the
  # vtables' callbacks get it just before they are registered, and the two callbacks every
  # async call uses (a native future's wake-up, a foreign future's release) before the
  # library is.
  vtables='^\( *\)lib\.\(uniffi_phaseo_agent_uniffi_fn_init_callback_vtable_[a-z_]*\)(vtable)$'
  registers=$(grep -c "$vtables" "$kt" || true)
  if [ "$registers" -lt 1 ] || [ "$(grep -c 'Native.register(UniffiLib::class.java' "$kt")" != 1 ] \
     || ! grep -q '^internal object uniffiRustFutureContinuationCallbackImpl' "$kt" \
     || ! grep -q '^internal object uniffiForeignFutureDroppedCallbackImpl' "$kt"; then
    echo "generate.sh: the generated callback registration changed; keep its threads attached (JvmCallbacks.kt)" >&2
    exit 1
  fi
  sed -i "s/$vtables/\1keepCallbackThreadsAttached(vtable)\n\1lib.\2(vtable)/" "$kt"
  sed -i 's/^\( *\)Native.register(UniffiLib::class.java/\1keepCallbackThreadsAttached(uniffiRustFutureContinuationCallbackImpl, uniffiForeignFutureDroppedCallbackImpl)\n&/' "$kt"
  # Every call takes its status from the calling thread's own (CallStatuses.kt says why)
  # instead of allocating one.
  fresh='^    var status = UniffiRustCallStatus()$'
  if [ "$(grep -c "$fresh" "$kt")" != 1 ] \
     || [ "$(grep -A3 "$fresh" "$kt" | tail -n 3 | tr -d ' \n')" != 'valreturn_value=callback(status)uniffiCheckCallStatus(errorHandler,status)returnreturn_value' ]; then
    echo "generate.sh: the generated call helper changed; check how it gets its call status (CallStatuses.kt)" >&2
    exit 1
  fi
  sed -i "/$fresh/,+3c\\
    val status = CallStatuses.take()\\
    try {\\
        val return_value = callback(status)\\
        uniffiCheckCallStatus(errorHandler, status)\\
        return return_value\\
    } finally {\\
        CallStatuses.give(status)\\
    }" "$kt"
  # A run result that a coroutine drove (JvmDispatch.driveSuspending) carries the status and
  # output JSON read as the run ended, and answers `status()` and `outputJson()` from them
  # without a call (the result never changes; each call returns a JNA structure by value).
  class='/^open class RunResult: /,/^public object FfiConverterTypeRunResult: /'
  if [ "$(sed -n "$class{/^ *\*\/override fun \`status\`(): RunStatus {$/p}" "$kt" | wc -l)" != 1 ] \
     || [ "$(sed -n "$class{/^ *\*\/override fun \`outputJson\`(): kotlin.String {$/p}" "$kt" | wc -l)" != 1 ] \
     || [ "$(grep -c '^open class RunResult: Disposable, AutoCloseable, RunResultInterface$' "$kt")" != 1 ]; then
    echo "generate.sh: the generated RunResult changed; check how a driven run's head reaches it (JvmDispatch.kt)" >&2
    exit 1
  fi
  sed -i "$class{
    s/^{$/{\\n    \/** Status and output JSON read as the run ended, when a coroutine drove it. *\/\\n    @Volatile internal var head: Pair<RunStatus, String?>? = null/
    s/^ *\*\/override fun \`status\`(): RunStatus {$/&\\n        head?.let { return it.first }/
    s/^ *\*\/override fun \`outputJson\`(): kotlin.String {$/&\\n        head?.second?.let { return it }/
  }" "$kt"
  kt_dir="$here/kotlin/src/main/kotlin/app/phaseo/agent"
  mkdir -p "$kt_dir"
  # Only replace the file when it changed, so Maven's up-to-date checks keep working.
  if ! cmp -s "$out/app/phaseo/agent/phaseo_agent_uniffi.kt" "$kt_dir/phaseo_agent_uniffi.kt"; then
    cp "$out/app/phaseo/agent/phaseo_agent_uniffi.kt" "$kt_dir/phaseo_agent_uniffi.kt"
  fi
  exit 0
fi

"$target/debug/uniffi-bindgen" generate "$lib" --language swift --out-dir "$out" --no-format >/dev/null
# SwiftPM layout: the Swift module, and the C module (header + module.modulemap) it imports.
declare -A files=(
  [Sources/PhaseoAgent/PhaseoAgent.swift]="$out/PhaseoAgent.swift"
  [Sources/PhaseoAgentFFI/PhaseoAgentFFI.h]="$out/PhaseoAgentFFI.h"
  [Sources/PhaseoAgentFFI/module.modulemap]="$out/PhaseoAgentFFI.modulemap"
)
if [ "$mode" = --swift ]; then
  for f in "${!files[@]}"; do
    mkdir -p "$(dirname "$here/swift/$f")"
    cp "${files[$f]}" "$here/swift/$f"
  done
  echo "wrote ${#files[@]} files under bindings-uniffi/swift/Sources"
  exit 0
fi

status=0
passed=0
failed=0
for f in $(printf '%s\n' "${!files[@]}" | sort); do
  if cmp -s "${files[$f]}" "$here/swift/$f"; then
    echo "PASS swift/$f matches a fresh generation"
    passed=$((passed + 1))
  else
    echo "FAIL swift/$f differs from a fresh generation:"
    diff -u "$here/swift/$f" "${files[$f]}" 2>&1 | head -20 || true
    status=1
    failed=$((failed + 1))
  fi
done
if [ $status -ne 0 ]; then
  echo "swift-check: regenerate with bindings-uniffi/scripts/generate.sh --swift and commit the result"
fi
echo "$passed passed, $failed failed"
exit $status
