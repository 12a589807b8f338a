#!/usr/bin/env bash
# The prebuilt packages, written into dist/ by `make dist`, one part at a time:
#   scripts/dist.sh python   the abi3 wheel (manylinux_2_28, linked by zig) + the sdist
#   scripts/dist.sh native   the Node addon, the JVM library, the Go, Ruby and PHP libraries:
#                            ONE cargo build (profile `dist`)
#   scripts/dist.sh node     @phaseo/agent-sdk + @phaseo/agent-sdk-linux-x64-gnu (npm pack)
#   scripts/dist.sh jvm      the JAR carrying linux-x86-64/libphaseo_agent_uniffi.so, deployed
#                            with its POM to the throwaway Maven repository dist/maven
#   scripts/dist.sh go       the Go module with its prebuilt static library
#                            (bindings-go/lib/linux_amd64/libphaseo_agent_c.a, from `native`),
#                            served as a Go module proxy does from dist/goproxy (GOPROXY=file://…)
#   scripts/dist.sh sizes    each artifact's size
# Every part uses the workspace version (scripts/check-versions.py). Needs the dist venv
# (DIST_VENV: maturin, ziglang; `make dist` creates it) and, for `jvm`, the Kotlin classes
# of `make kotlin`. Honours CARGO_TARGET_DIR (default <repo>/target).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dist="$repo/dist"
target="${CARGO_TARGET_DIR:-$repo/target}"
cargo="${CARGO:-cargo}"
venv="${DIST_VENV:-$repo/.venvs/dist}"
version="$(python3 "$repo/scripts/check-versions.py" --version)"
# The libraries built by `native` (one cargo build for every native artifact): the Node
# addon and the JVM library (cdylibs), the Go module's static library (phaseo-agent-c), and
# the Ruby gem's and the PHP package's extensions. One build: their dependencies compile
# once, and their link-time optimizations (one core each) run side by side.
NATIVE_PACKAGES=(phaseo-agent-node phaseo-agent-uniffi phaseo-agent-c phaseo-agent-ruby phaseo-agent-php)
GO_MODULE=github.com/phaseo/agent-sdk-go
# Where `native` writes them: built for the explicit target triple, so that zig (the C
# compiler and linker, scripts/zig/) applies to the libraries and not to build scripts.
native_triple=x86_64-unknown-linux-gnu
# The cargo profile: `dist` for releases; `make test` checks the same artifacts built in the
# cheaper `dist-test` profile (root Cargo.toml).
profile="${DIST_PROFILE:-dist}"
native_out="$target/$native_triple/$profile"
mkdir -p "$dist"

# The environment of every cargo build of the packages: zig (scripts/zig/cc, the dist venv's
# ziglang) as the C compiler and linker of the target, so that the libraries link against
# glibc 2.28's symbols and load on any glibc 2.28+ Linux. The wheel's build and the native
# libraries' build use the very same one: the wheel then reuses the core and every
# dependency the native build compiled (their features are one set, core/Cargo.toml).
zig_env() {
  local triple_env
  triple_env="$(echo "$native_triple" | tr 'a-z-' 'A-Z_')"
  env "CC_${native_triple//-/_}=$repo/scripts/zig/cc" "CXX_${native_triple//-/_}=$repo/scripts/zig/c++" \
    "CARGO_TARGET_${triple_env}_LINKER=$repo/scripts/zig/cc" DIST_VENV="$venv" CARGO_TARGET_DIR="$target" "$@"
}

part_python() {
  # maturin checks the manylinux_2_28 policy of what zig linked (its own `--zig` would bring
  # its own compiler wrapper, whose different environment recompiles every C dependency and
  # all that depends on them).
  cd "$repo/bindings-python"
  zig_env VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
    maturin build --profile "$profile" --target "$native_triple" --compatibility manylinux_2_28 \
    --interpreter python3 --out "$dist"
  VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin sdist --out "$dist"
}

part_native() {
  cd "$repo"
  local args=()
  for p in "${NATIVE_PACKAGES[@]}"; do args+=(-p "$p"); done
  zig_env "$cargo" build --profile "$profile" --target "$native_triple" "${args[@]}"
}

part_node() {
  local lib="$native_out/libphaseo_agent_node.so" stage
  [ -f "$lib" ] || { echo "dist: $lib is missing (run: scripts/dist.sh native)" >&2; exit 1; }
  stage="$(mktemp -d)"
  # The platform package: the .node file only.
  mkdir -p "$stage/platform"
  cp "$repo/bindings-node/npm/linux-x64-gnu/package.json" "$repo/bindings-node/npm/linux-x64-gnu/README.md" "$stage/platform/"
  cp "$lib" "$stage/platform/phaseo-agent.linux-x64-gnu.node"
  # The main package: its `files` (the JavaScript and the types), plus the pin on the
  # platform package, added here as napi-rs's `prepublish` does (in the repository an
  # optional dependency that is not published yet would break `npm install`).
  node -e '
    const fs = require("node:fs");
    const path = require("node:path");
    const [dir, out, version] = process.argv.slice(1);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    for (const file of [...pkg.files, "README.md"]) {
      if (!fs.existsSync(path.join(dir, file))) throw new Error(`package.json files: ${file} does not exist`);
      fs.mkdirSync(path.dirname(path.join(out, file)), { recursive: true });
      fs.cpSync(path.join(dir, file), path.join(out, file), { recursive: true });
    }
    pkg.optionalDependencies = { "@phaseo/agent-sdk-linux-x64-gnu": version };
    delete pkg.devDependencies;
    fs.writeFileSync(path.join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  ' "$repo/bindings-node" "$stage/main" "$version"
  (cd "$stage/platform" && npm pack --silent --pack-destination "$dist" >/dev/null)
  (cd "$stage/main" && npm pack --silent --pack-destination "$dist" >/dev/null)
  rm -rf "$stage"
}

part_jvm() {
  local lib="$native_out/libphaseo_agent_uniffi.so"
  local kotlin="$repo/bindings-uniffi/kotlin"
  local classes="$kotlin/target/phaseo-agent-$version.jar"
  [ -f "$lib" ] || { echo "dist: $lib is missing (run: scripts/dist.sh native)" >&2; exit 1; }
  [ -f "$classes" ] || { echo "dist: $classes is missing (run: make kotlin)" >&2; exit 1; }
  local jar="$dist/phaseo-agent-$version.jar" res
  cp "$classes" "$jar"
  # JNA's resource path for this platform: Native.load extracts it from the classpath.
  res="$(mktemp -d)"
  mkdir -p "$res/linux-x86-64"
  cp "$lib" "$res/linux-x86-64/libphaseo_agent_uniffi.so"
  jar uf "$jar" -C "$res" linux-x86-64/libphaseo_agent_uniffi.so
  rm -rf "$res"
  # The project's POM names the runtime dependencies (Kotlin stdlib, kotlinx-coroutines,
  # kotlinx-serialization-json, JNA); a consumer resolves them from Maven Central.
  rm -rf "$dist/maven"
  mvn -B -ntp -q -Dstyle.color=never org.apache.maven.plugins:maven-deploy-plugin:3.1.4:deploy-file \
    -Dfile="$jar" -DpomFile="$kotlin/pom.xml" -Durl="file://$dist/maven" -DrepositoryId=phaseo-dist
}

part_go() {
  local lib="$native_out/libphaseo_agent_c.a" module="$repo/bindings-go"
  [ -f "$lib" ] || { echo "dist: $lib is missing (run: scripts/dist.sh native)" >&2; exit 1; }
  # Where cgo's LDFLAGS (bindings-go/cgo.go) find it, in the repository (git-ignored) and in
  # the module. Without debug sections and the LLVM bitcode that the LTO profile embeds in
  # every object (needed by no C or Go linker): 205 MB become 100 MB (23 MB compressed).
  mkdir -p "$module/lib/linux_amd64"
  objcopy --strip-debug -R .llvmbc -R .llvmcmd "$lib" "$module/lib/linux_amd64/libphaseo_agent_c.a"
  # The module as a Go module proxy serves it (the GOPROXY protocol on a file:// URL):
  # <module>/@v/list, v<version>.info, .mod, .zip. The zip holds the module's files (git's
  # list, tests excluded) and the library, under "<module>@v<version>/".
  local proxy="$dist/goproxy/$GO_MODULE/@v" v="v$version"
  rm -rf "$dist/goproxy"
  mkdir -p "$proxy"
  echo "$v" >"$proxy/list"
  printf '{"Version":"%s","Time":"%s"}\n' "$v" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$proxy/$v.info"
  cp "$module/go.mod" "$proxy/$v.mod"
  (cd "$module" && git ls-files -- . ':!:*_test.go'; echo lib/linux_amd64/libphaseo_agent_c.a) \
    | python3 -c '
import sys, zipfile
module, prefix, out = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(set(sys.stdin.read().split())):
        z.write(f"{module}/{name}", f"{prefix}/{name}")
' "$module" "$GO_MODULE@$v" "$proxy/$v.zip"
  # The module's dependencies (github.com/google/jsonschema-go for typed tools, and what
  # its go.mod names) beside it, from the module cache, so that a consumer resolves every
  # module from this one proxy.
  (cd "$module" && go mod download -json all) | python3 -c '
import json, os, re, shutil, sys
root, text, pos = sys.argv[1], sys.stdin.read(), 0
decoder = json.JSONDecoder()
while True:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    entry, pos = decoder.raw_decode(text, pos)
    if entry.get("Error"):
        sys.exit("dist: go mod download " + entry["Path"] + ": " + entry["Error"])
    escaped = re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), entry["Path"])
    target = os.path.join(root, escaped, "@v")
    os.makedirs(target, exist_ok=True)
    for key in ("Info", "GoMod", "Zip"):
        if entry.get(key):
            shutil.copy(entry[key], target)
    with open(os.path.join(target, "list"), "a") as listing:
        listing.write(entry["Version"] + "\n")
' "$dist/goproxy"
}

part_sizes() {
  cd "$dist"
  printf '%-58s %10s\n' artifact bytes
  for f in *.whl *.tar.gz *.tgz *.jar goproxy/*/*/*/@v/*.zip; do
    [ -f "$f" ] && printf '%-58s %10s  %s\n' "$f" "$(stat -c %s "$f")" "$(du -h "$f" | cut -f1)"
  done
  for lib in "$native_out/libphaseo_agent_node.so" "$native_out/libphaseo_agent_uniffi.so" "$repo/bindings-go/lib/linux_amd64/libphaseo_agent_c.a"; do
    [ -f "$lib" ] && printf '%-58s %10s  %s (unpacked)\n' "$(basename "$lib")" "$(stat -c %s "$lib")" "$(du -h "$lib" | cut -f1)"
  done
  return 0
}

for part in "$@"; do
  case "$part" in
    python|native|node|jvm|go|sizes) "part_$part" ;;
    *) echo "usage: $0 python|native|node|jvm|go|sizes ..." >&2; exit 2 ;;
  esac
done
