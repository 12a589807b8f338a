#!/usr/bin/env bash
# Installs the artifacts of `make dist` where no Rust toolchain exists and runs
# the README's quickstart with each: every command below runs with a PATH holding no
# cargo, rustc or rustup, and CARGO_HOME/RUSTUP_HOME pointing to an empty folder.
#   scripts/dist-check.sh [python] [node] [jvm] [java] [go] [glibc]     (default: all)
# python: auditwheel confirms the manylinux tag; a fresh venv, `pip install --no-index` of
#         the wheel, the Python quickstart; `import phaseo_agent` time.
# node:   a fresh npm folder, `npm install --offline` of the two tarballs, the Node
#         quickstart as an ES module (import) and as CommonJS (require); the addon comes
#         from the platform package; without that package, require names it; require time.
# jvm:    a fresh Maven project depending on app.phaseo:phaseo-agent from dist/maven, the
#         Kotlin quickstart (kotlin-maven-plugin), the library loaded from the JAR by JNA.
# go:     a fresh module outside the repository; `go get` of github.com/phaseo/agent-sdk-go
#         from dist/goproxy (GOPROXY=file://…, a fresh module cache, no checksum database),
#         `go build` (cgo links the prebuilt static library from the module), the Go
#         quickstart run; the module must not hold any Rust or Cargo file.
# java:   the same with the README's Java quickstart (maven-compiler-plugin).
# glibc:  the newest glibc symbol version each prebuilt native library needs (objdump -T)
#         is at most 2.28, the wheel's manylinux tag: the addon, the JVM library, the wheel's,
#         the Ruby and PHP extensions.
# Scratch folders live under /tmp and are deleted at the end, pass or fail.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dist="$repo/dist"
venv="${DIST_VENV:-$repo/.venvs/dist}"
version="$(python3 "$repo/scripts/check-versions.py" --version)"
python_bin="$(python3 -c 'import sys; print(sys.executable)')"  # the interpreter behind a pyenv shim
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(python node jvm java go glibc)

scratch="$(mktemp -d /tmp/phaseo-dist-check.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/empty-cargo" "$scratch/empty-rustup"

# The PATH without Rust: every entry that holds a cargo, rustc or rustup is dropped.
norust_path=""
IFS=: read -ra entries <<<"$PATH"
for entry in "${entries[@]}"; do
  [ -n "$entry" ] || continue
  if [ -x "$entry/cargo" ] || [ -x "$entry/rustc" ] || [ -x "$entry/rustup" ]; then continue; fi
  norust_path="${norust_path:+$norust_path:}$entry"
done

# Runs a command in a clean environment with no Rust reachable.
norust() {
  env -i HOME="$HOME" PATH="$norust_path" LANG=C.UTF-8 TMPDIR=/tmp \
    CARGO_HOME="$scratch/empty-cargo" RUSTUP_HOME="$scratch/empty-rustup" "$@"
}

if norust bash -c 'command -v cargo || command -v rustc || command -v rustup' >/dev/null; then
  echo "FAIL a Rust toolchain is still reachable on the check's PATH" >&2
  exit 1
fi
echo "no Rust: cargo, rustc and rustup are not on the PATH; CARGO_HOME and RUSTUP_HOME are empty"

# The README's Quickstart block of <lang> marked `<!-- dist-check -->` (the form that needs
# no optional package), else the section's first ```<lang> block.
readme_block() {
  python3 - "$repo/README.md" "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
start = text.index("\n## Quickstart")
fence = r"^```" + re.escape(sys.argv[2]) + r"\n(.*?)^```"
match = (re.compile(r"^<!-- dist-check -->\n" + fence, re.S | re.M).search(text, start)
         or re.compile(fence, re.S | re.M).search(text, start))
if not match:
    sys.exit(f"README.md: no ```{sys.argv[2]} block in the Quickstart section")
print(match.group(1), end="")
EOF
}

# Fails unless the last line of $2 is exactly $1.
expect_answer() {
  local want="$1" got
  got="$(printf '%s\n' "$2" | tail -n 1)"
  if [ "$got" != "$want" ]; then
    echo "FAIL $3: expected '$want', got:" >&2
    printf '%s\n' "$2" >&2
    exit 1
  fi
  echo "PASS $3: $got"
}

# The best of five fresh processes, in milliseconds.
best_of_five() {
  local best="" t
  for _ in 1 2 3 4 5; do
    t="$("$@")"
    best="$(python3 -c "import sys; a=[float(x) for x in sys.argv[1:] if x]; print(f'{min(a):.1f}')" "$t" $best)"
  done
  echo "$best"
}

check_python() {
  local wheels=("$dist"/phaseo_agent_sdk-"$version"-*.whl) sdists=("$dist"/phaseo_agent_sdk-"$version".tar.gz)
  [ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || { echo "FAIL dist/ needs exactly one wheel of version $version" >&2; exit 1; }
  [ -f "${sdists[0]}" ] || { echo "FAIL dist/ has no sdist phaseo_agent_sdk-$version.tar.gz" >&2; exit 1; }
  local wheel="${wheels[0]}"
  # The tag: abi3, manylinux 2_28 or older in the file name, and auditwheel agrees.
  python3 - "$(basename "$wheel")" "$("$venv/bin/auditwheel" show "$wheel")" <<'EOF'
import re, sys
name, report = sys.argv[1], sys.argv[2]
tag = re.search(r"-cp\d+-abi3-manylinux_2_(\d+)_x86_64", name)
if not tag or int(tag.group(1)) > 28:
    sys.exit(f"FAIL wheel {name}: not an abi3 manylinux_2_28-or-older wheel")
seen = re.search(r'consistent with the following platform tag:\s*"manylinux_2_(\d+)_x86_64"', report)
if not seen or int(seen.group(1)) > int(tag.group(1)):
    sys.exit(f"FAIL auditwheel does not confirm {name}:\n{report}")
print(f"PASS auditwheel: {name} is consistent with manylinux_2_{seen.group(1)}_x86_64 (tagged 2_{tag.group(1)}, abi3)")
EOF
  # The sdist is complete: the crate, the core it depends on, the lock file.
  local listing
  listing="$(tar tzf "${sdists[0]}")"
  for f in Cargo.lock core/src/lib.rs bindings-python/src/lib.rs python/phaseo_agent/__init__.py pyproject.toml; do
    grep -q "/$f\$" <<<"$listing" || { echo "FAIL the sdist lacks $f" >&2; exit 1; }
  done
  echo "PASS sdist $(basename "${sdists[0]}") holds the crate, the core and Cargo.lock"

  local dir="$scratch/python"
  mkdir -p "$dir"
  norust "$python_bin" -m venv "$dir/venv"
  norust "$dir/venv/bin/pip" install -q --no-index --disable-pip-version-check "$wheel"
  readme_block python >"$dir/quickstart.py"
  expect_answer "Deployed." "$(cd "$dir" && norust "$dir/venv/bin/python" quickstart.py)" "Python quickstart (pip install of the wheel)"
  local ms
  ms="$(best_of_five norust "$dir/venv/bin/python" -c 'import time; t = time.perf_counter(); import phaseo_agent; print((time.perf_counter() - t) * 1000)')"
  echo "TIME import phaseo_agent: ${ms} ms (best of 5 fresh processes)"
}

check_node() {
  local main="$dist/phaseo-agent-sdk-$version.tgz" platform="$dist/phaseo-agent-sdk-linux-x64-gnu-$version.tgz"
  [ -f "$main" ] && [ -f "$platform" ] || { echo "FAIL dist/ needs $(basename "$main") and $(basename "$platform")" >&2; exit 1; }
  local dir="$scratch/node"
  mkdir -p "$dir"
  echo '{"name":"consumer","version":"1.0.0","private":true}' >"$dir/package.json"
  # --offline: everything comes from the two tarballs (the optional dependency is satisfied
  # by the platform tarball; nothing is fetched, nothing is built).
  (cd "$dir" && norust npm install --offline --no-audit --no-fund --loglevel=error "$platform" "$main")
  readme_block js >"$dir/quickstart.mjs"
  expect_answer "Deployed." "$(cd "$dir" && norust node quickstart.mjs)" "Node quickstart via import (npm install of the tarballs)"
  # The same program as CommonJS: the import becomes a require, the body an async function.
  node - "$dir/quickstart.mjs" "$dir/quickstart.cjs" <<'EOF'
const fs = require('node:fs');
const [src, out] = process.argv.slice(2);
const text = fs.readFileSync(src, 'utf8').replace(/^import (\{[^}]*\}) from ('[^']*');$/m, 'const $1 = require($2);');
if (/^import /m.test(text)) throw new Error('the Node quickstart has an import this check cannot rewrite');
const [head, ...body] = text.split('\n');
fs.writeFileSync(out, `${head}\n(async () => {\n${body.join('\n')}\n})().catch((e) => { console.error(e); process.exit(1); });\n`);
EOF
  expect_answer "Deployed." "$(cd "$dir" && norust node quickstart.cjs)" "Node quickstart via require"
  local addon
  addon="$(cd "$dir" && norust node -e "require('@phaseo/agent-sdk'); console.log(Object.keys(require.cache).find((k) => k.endsWith('.node')))")"
  case "$addon" in
    */node_modules/@phaseo/agent-sdk-linux-x64-gnu/phaseo-agent.linux-x64-gnu.node) echo "PASS the addon comes from the platform package" ;;
    *) echo "FAIL the addon was loaded from $addon, not from @phaseo/agent-sdk-linux-x64-gnu" >&2; exit 1 ;;
  esac
  local ms
  ms="$(best_of_five norust node -e "const t = process.hrtime.bigint(); require('$dir/node_modules/@phaseo/agent-sdk'); console.log(Number(process.hrtime.bigint() - t) / 1e6)")"
  echo "TIME require('@phaseo/agent-sdk'): ${ms} ms (best of 5 fresh processes)"
  # Without its platform package, loading names the package it needs.
  rm -rf "$dir/node_modules/@phaseo/agent-sdk-linux-x64-gnu"
  local out
  if out="$(cd "$dir" && norust node -e "require('@phaseo/agent-sdk')" 2>&1)"; then
    echo "FAIL require succeeded without the platform package" >&2; exit 1
  fi
  grep -q "needs its native module package @phaseo/agent-sdk-linux-x64-gnu" <<<"$out" \
    || { echo "FAIL the error without the platform package does not name it:" >&2; echo "$out" >&2; exit 1; }
  echo "PASS without the platform package, require fails naming @phaseo/agent-sdk-linux-x64-gnu"
}

check_jvm() {
  local repo_dir="$dist/maven"
  [ -f "$repo_dir/app/phaseo/phaseo-agent/$version/phaseo-agent-$version.jar" ] || { echo "FAIL dist/maven has no app.phaseo:phaseo-agent:$version" >&2; exit 1; }
  local kotlin_version
  kotlin_version="$(python3 -c "import sys, xml.etree.ElementTree as E; print(E.parse(sys.argv[1]).getroot().findtext('{http://maven.apache.org/POM/4.0.0}properties/{http://maven.apache.org/POM/4.0.0}kotlin.version'))" "$repo/bindings-uniffi/kotlin/pom.xml")"
  local dir="$scratch/jvm"
  mkdir -p "$dir/src/main/kotlin"
  cat >"$dir/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>quickstart</artifactId>
  <version>1.0</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <repositories>
    <repository><id>phaseo-dist</id><url>file://$repo_dir</url></repository>
  </repositories>
  <dependencies>
    <dependency><groupId>app.phaseo</groupId><artifactId>phaseo-agent</artifactId><version>$version</version></dependency>
  </dependencies>
  <build>
    <sourceDirectory>src/main/kotlin</sourceDirectory>
    <plugins>
      <plugin>
        <groupId>org.jetbrains.kotlin</groupId>
        <artifactId>kotlin-maven-plugin</artifactId>
        <version>$kotlin_version</version>
        <executions><execution><id>compile</id><goals><goal>compile</goal></goals></execution></executions>
        <configuration><jvmTarget>17</jvmTarget></configuration>
      </plugin>
    </plugins>
  </build>
</project>
EOF
  readme_block kotlin >"$dir/src/main/kotlin/Quickstart.kt"
  # A copy resolved by an earlier check would be used instead of this build's JAR.
  rm -rf "$HOME/.m2/repository/app/phaseo/phaseo-agent"
  (cd "$dir" && norust mvn -B -ntp -q -Dstyle.color=never package \
    org.apache.maven.plugins:maven-dependency-plugin:3.11.0:build-classpath -Dmdep.outputFile=cp.txt)
  grep -q "app/phaseo/phaseo-agent/$version/phaseo-agent-$version.jar" "$dir/cp.txt" \
    || { echo "FAIL the classpath lacks app.phaseo:phaseo-agent:$version: $(cat "$dir/cp.txt")" >&2; exit 1; }
  local out status=0
  out="$(cd "$dir" && norust java -Djna.debug_load=true -cp "target/classes:$(cat cp.txt)" QuickstartKt 2>"$dir/stderr")" || status=$?
  rm -rf "$HOME/.m2/repository/app/phaseo/phaseo-agent"
  [ "$status" -eq 0 ] || { cat "$dir/stderr" >&2; echo "FAIL the Kotlin quickstart failed" >&2; exit 1; }
  expect_answer "Deployed." "$out" "Kotlin quickstart (Maven dependency on the JAR from dist/maven)"
  grep -q "Found library resource at jar:file:.*phaseo-agent-$version.jar!/linux-x86-64/libphaseo_agent_uniffi.so" "$dir/stderr" \
    || { cat "$dir/stderr" >&2; echo "FAIL JNA did not load the library from the JAR" >&2; exit 1; }
  echo "PASS JNA loaded linux-x86-64/libphaseo_agent_uniffi.so from the JAR"
}

check_go() {
  local module=github.com/phaseo/agent-sdk-go proxy="$dist/goproxy"
  [ -f "$proxy/$module/@v/v$version.zip" ] || { echo "FAIL dist/goproxy has no $module v$version" >&2; exit 1; }
  local dir="$scratch/go"
  mkdir -p "$dir/consumer"
  # Everything the go command fetches comes from dist/goproxy, into a fresh module cache
  # (writable, so that the scratch folder can be deleted); the build cache is the user's
  # (content-addressed: it cannot hold this module's files).
  local goenv=(GOPATH="$dir/gopath" GOMODCACHE="$dir/gopath/pkg/mod" GOPROXY="file://$proxy"
    GOSUMDB=off GOTOOLCHAIN=local GOFLAGS="-modcacherw -buildvcs=false" CGO_ENABLED=1)
  readme_block go >"$dir/consumer/main.go"
  (cd "$dir/consumer" && norust env "${goenv[@]}" go mod init example.com/consumer \
    && norust env "${goenv[@]}" go get "$module@v$version" \
    && norust env "${goenv[@]}" go build -o quickstart .) >"$dir/go.log" 2>&1 \
    || { cat "$dir/go.log" >&2; echo "FAIL go get / go build of the module from dist/goproxy" >&2; exit 1; }
  local unpacked="$dir/gopath/pkg/mod/$module@v$version"
  [ -f "$unpacked/lib/linux_amd64/libphaseo_agent_c.a" ] \
    || { echo "FAIL the module from the proxy has no lib/linux_amd64/libphaseo_agent_c.a" >&2; exit 1; }
  if find "$unpacked" -name '*.rs' -o -name Cargo.toml | grep -q .; then
    echo "FAIL the Go module carries Rust sources" >&2; exit 1
  fi
  echo "PASS go get $module@v$version from dist/goproxy ($(du -h "$dist/goproxy/$module/@v/v$version.zip" | cut -f1) zip), built with cgo, no Rust"
  expect_answer "Deployed." "$(cd "$dir/consumer" && norust ./quickstart)" "Go quickstart (go get of the module from dist/goproxy)"
}

# The README's Java quickstart in a separate Maven project that depends on the JAR
# from dist/maven: the block's statements become the body of `main` (its imports stay
# imports; java.util and java.time.Duration, which the snippet uses, are added).
check_java() {
  local repo_dir="$dist/maven"
  [ -f "$repo_dir/app/phaseo/phaseo-agent/$version/phaseo-agent-$version.jar" ] || { echo "FAIL dist/maven has no app.phaseo:phaseo-agent:$version" >&2; exit 1; }
  local compiler_version
  compiler_version="$(python3 - "$repo/bindings-uniffi/kotlin/pom.xml" <<'EOF'
import sys, xml.etree.ElementTree as E
ns = "{http://maven.apache.org/POM/4.0.0}"
for p in E.parse(sys.argv[1]).getroot().iter(ns + "plugin"):
    if p.findtext(ns + "artifactId") == "maven-compiler-plugin":
        print(p.findtext(ns + "version"))
        break
EOF
)"
  local dir="$scratch/java"
  mkdir -p "$dir/src/main/java"
  cat >"$dir/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>java-quickstart</artifactId>
  <version>1.0</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <repositories>
    <repository><id>phaseo-dist</id><url>file://$repo_dir</url></repository>
  </repositories>
  <dependencies>
    <dependency><groupId>app.phaseo</groupId><artifactId>phaseo-agent</artifactId><version>$version</version></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>$compiler_version</version>
        <configuration><release>17</release></configuration>
      </plugin>
    </plugins>
  </build>
</project>
EOF
  readme_block java >"$dir/block.java"
  python3 - "$dir/block.java" "$dir/src/main/java/Quickstart.java" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
imports = [l for l in lines if l.startswith("import ")]
body = [("        " + l) if l.strip() else "" for l in lines if not l.startswith("import ")]
head = imports + ["import java.time.Duration;", "import java.util.*;", "", "public class Quickstart {",
                  "    public static void main(String[] args) throws Exception {"]
open(sys.argv[2], "w").write("\n".join(head + body + ["    }", "}", ""]))
EOF
  rm -rf "$HOME/.m2/repository/app/phaseo/phaseo-agent"
  (cd "$dir" && norust mvn -B -ntp -q -Dstyle.color=never package \
    org.apache.maven.plugins:maven-dependency-plugin:3.11.0:build-classpath -Dmdep.outputFile=cp.txt)
  grep -q "app/phaseo/phaseo-agent/$version/phaseo-agent-$version.jar" "$dir/cp.txt" \
    || { echo "FAIL the classpath lacks app.phaseo:phaseo-agent:$version: $(cat "$dir/cp.txt")" >&2; exit 1; }
  local out status=0
  out="$(cd "$dir" && norust java -Djna.debug_load=true -cp "target/classes:$(cat cp.txt)" Quickstart 2>"$dir/stderr")" || status=$?
  rm -rf "$HOME/.m2/repository/app/phaseo/phaseo-agent"
  [ "$status" -eq 0 ] || { cat "$dir/stderr" >&2; echo "FAIL the Java quickstart failed" >&2; exit 1; }
  expect_answer "Deployed." "$out" "Java quickstart (Maven dependency on the JAR from dist/maven)"
  grep -q "Found library resource at jar:file:.*phaseo-agent-$version.jar!/linux-x86-64/libphaseo_agent_uniffi.so" "$dir/stderr" \
    || { cat "$dir/stderr" >&2; echo "FAIL JNA did not load the library from the JAR" >&2; exit 1; }
  echo "PASS the Java quickstart loaded linux-x86-64/libphaseo_agent_uniffi.so from the JAR"
}

# The newest GLIBC_x.y symbol version a shared library needs (objdump -T), at most 2.28.
glibc_at_most_2_28() {
  local lib="$1" label="$2" newest
  newest="$(objdump -T "$lib" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)"
  [ -n "$newest" ] || { echo "FAIL $label: objdump -T shows no GLIBC symbol versions" >&2; exit 1; }
  if [ "$(printf '%s\n%s\n' "$newest" 2.28 | sort -V | tail -n 1)" != 2.28 ]; then
    echo "FAIL $label needs glibc $newest (> 2.28):" >&2
    objdump -T "$lib" | grep "GLIBC_$newest" >&2
    exit 1
  fi
  echo "PASS $label needs glibc $newest at most (<= 2.28)"
}

# Every prebuilt native library, read from the artifacts themselves.
check_glibc() {
  local dir="$scratch/glibc"
  mkdir -p "$dir/node" "$dir/jar" "$dir/wheel"
  tar xzf "$dist/phaseo-agent-sdk-linux-x64-gnu-$version.tgz" -C "$dir/node"
  glibc_at_most_2_28 "$dir/node/package/phaseo-agent.linux-x64-gnu.node" "the Node addon"
  (cd "$dir/jar" && unzip -q "$dist/phaseo-agent-$version.jar" 'linux-x86-64/*')
  glibc_at_most_2_28 "$dir/jar/linux-x86-64/libphaseo_agent_uniffi.so" "the JVM library (JAR)"
  local wheels=("$dist"/phaseo_agent_sdk-"$version"-*.whl)
  (cd "$dir/wheel" && unzip -q "${wheels[0]}" '*.so')
  glibc_at_most_2_28 "$(find "$dir/wheel" -name '*.so' | head -n 1)" "the wheel's extension"
  # The Ruby gem's and the PHP package's extensions (packed by ruby-gem-check.sh and
  # php-ext-check.sh from the same native build).
  local native="${CARGO_TARGET_DIR:-$repo/target}/x86_64-unknown-linux-gnu/${DIST_PROFILE:-dist}"
  glibc_at_most_2_28 "$native/libphaseo_agent_sdk.so" "the Ruby extension"
  glibc_at_most_2_28 "$native/libphaseo_agent_php.so" "the PHP extension"
}

for part in "${parts[@]}"; do
  case "$part" in
    python|node|jvm|java|go|glibc) "check_$part" ;;
    *) echo "usage: $0 [python] [node] [jvm] [java] [go] [glibc]" >&2; exit 2 ;;
  esac
done
