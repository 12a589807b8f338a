# The two commands of the README: `make demo` (the demo agents, offline) and `make test`
# (everything CI checks). Both install what they need themselves.
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV := .venvs/py
PY := $(VENV)/bin/python
PY_TOOLS := maturin==1.16.0 pytest==9.2.0 pytest-timeout==2.4.0 pytest-xdist==3.8.0 mypy==2.4.1 pydantic==2.14.3 docstring-parser==0.18.0 hypothesis==6.170.17
export PHASEO_PYTHON := $(abspath $(PY))
export CARGO_TARGET_DIR := $(abspath target)
# CI builds once from a clean clone: incremental caches there only cost disk and time.
ifeq ($(CI),true)
export CARGO_INCREMENTAL := 0
endif

.PHONY: trace-handoff bench-tracing store-tests store-bench store-handoff demo test rust-checks rust-tests mcp-servers bench-mcp python python-tests fuzz-python python-tests-newest node node-tests fuzz-node fuzz-csharp fuzz-php fuzz-go fuzz-java conformance handoff bench kotlin kotlin-tests swift swift-check fuzz fuzz-core

demo: system-deps python node mcp-servers go-lib kotlin ruby csharp php
	$(CARGO) run -q -p support-desk
	$(PY) examples/python/support_desk.py
	node examples/node/support-desk.mjs
	$(PY) examples/python/approval_inbox.py
	node examples/node/approval-inbox.mjs
	$(PY) examples/python/mcp_tools.py
	node examples/node/mcp-tools.mjs
	$(PY) examples/python/use_served_tools.py
	cd examples/go && $(GO_LINK_STAMP) go run .
	examples/java/run.sh
	ruby -Ibindings-ruby/lib examples/ruby/support_desk.rb
	examples/csharp/run.sh
	php -d extension=$(abspath $(PHP_EXT)) examples/php/support_desk.php

# `conformance` runs every language's runner (Go and C# included: `go-conformance` and
# `csharp-conformance` are for running one alone). The suites of the C ABI's hosts, Ruby
# and PHP come last, three at a time (`host-tests`): each is mostly one process waiting on
# its own, and one after the other they took a third of a cold `make test`.
# Each target is made in turn and timed (scripts/timed-make.sh prints the table at the end).
# The packages are built in the `dist-test` profile: the release profile's fat LTO is for
# `make dist` alone. `fresh-machine-check` comes last, once every suite has installed what it needs.
TEST_TARGETS := disk-check system-deps tools-page-check rust-checks rust-tests python-tests python-tests-newest node-tests kotlin-tests swift-check conformance handoff store-handoff typed-handoff mcp-handoff trace-handoff versions-check dist dist-check host-tests docs-test fresh-machine-check
test:
	MAKE="$(MAKE)" DIST_PROFILE=dist-test scripts/timed-make.sh $(TEST_TARGETS)

# Fails at once when the disk cannot take the run (scripts/disk-check.sh says how much it needs).
.PHONY: disk-check
disk-check:
	scripts/disk-check.sh

# The product's Tools page (../shared/seeds beside the clone): every code sample carried
# verbatim by a test of its language (scripts/check-tools-page-samples.py says which).
.PHONY: tools-page-check
tools-page-check:
	scripts/check-tools-page-samples.py

# Every Debian package of every target (scripts/system-deps.sh: one list, checked by package
# name), installed at once before anything builds; each target also asks for its own group.
.PHONY: system-deps fresh-machine-check
system-deps:
	scripts/system-deps.sh image all

# The documentation site (mkdocs.yml; MkDocs with the Material theme, pinned): `make docs`
# builds it strictly into target/site; `make docs-test` builds it and runs every example
# it shows, in each language (scripts/docs-test.sh).
DOCS_VENV := .venvs/docs
DOCS_TOOLS := mkdocs==1.6.1 mkdocs-material==9.8.1 pymdown-extensions==13.1
$(DOCS_VENV)/.tools: Makefile
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install -q $(DOCS_TOOLS)
	touch $@
.PHONY: docs docs-test
docs: $(DOCS_VENV)/.tools
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build -q --strict
docs-test: docs docs-browser python node kotlin go-lib ruby php csharp mcp-servers $(VENV)/.otel
	scripts/docs-test.sh
# The browser check of the built site (scripts/docs-browser-check.mjs, run by docs-test):
# Debian's chromium driven by playwright-core (pinned in tests/docs-browser), no browser download.
.PHONY: docs-browser
docs-browser: tests/docs-browser/node_modules/.installed
	scripts/system-deps.sh docs
tests/docs-browser/node_modules/.installed: tests/docs-browser/package.json tests/docs-browser/package-lock.json
	cd tests/docs-browser && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Fails when a package in use is neither in a fresh image nor installed by system-deps.sh.
fresh-machine-check:
	scripts/fresh-machine-check.sh
	scripts/fresh-machine-check.sh --self-test

# DIST_READY: `dist` was made before (the sub-make would otherwise make it again for
# ruby-gem and php-ext-check). Each target's output is printed whole when it ends.
.PHONY: host-tests
host-tests: go-lib ruby csharp php mcp-servers $(VENV)/.otel
	$(MAKE) -j3 --output-sync=target DIST_READY=1 c-header-check c-tests go-tests ruby-tests ruby-gem csharp-tests php-tests php-ext-check

rust-checks: ruby-deps php-deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The uniffi-bindgen CLI has no tests, and the features its dependencies turn on (serde_json's
# `unbounded_depth`) would reach the core's tests, which must see the core as shipped.
rust-tests: mcp-servers ruby-deps php-deps
	scripts/with-test-postgres.sh $(CARGO) test --workspace --exclude uniffi-bindgen

# The MCP servers the tests start (docs/behaviour.md §11), pinned: the reference server
# `@modelcontextprotocol/server-everything` (npm, tests/mcp/package.json) and the official
# Python `mcp` package in the dev venv (our small server tests/mcp/test_server.py).
MCP_PY := mcp==2.3.0
mcp-servers: tests/mcp/node_modules/.installed $(VENV)/.mcp
tests/mcp/node_modules/.installed: tests/mcp/package.json tests/mcp/package-lock.json
	cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error
	touch $@
$(VENV)/.mcp: Makefile $(VENV)/.tools
	$(PY) -m pip install -q $(MCP_PY)
	touch $@

# The tracing tests' OTLP receiver (tests/otlp/receiver.py) decodes with the official
# protobuf messages; `opentelemetry-api` is the host API whose current span a run joins.
OTEL_PY := opentelemetry-proto==1.45.2 opentelemetry-api==1.45.2
$(VENV)/.otel: Makefile $(VENV)/.tools
	$(PY) -m pip install -q $(OTEL_PY)
	touch $@

# Re-run when the pins above change (an existing venv gets the new tools).
$(VENV)/.tools: Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(PY_TOOLS)
	touch $@

# The binding, built in debug into the dev venv (editable install).
python: $(VENV)/.tools
	cd bindings-python && VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH maturin develop -q

# Under a throwaway PostgreSQL: the run-store tests use it (and fail without it).
# pytest-xdist runs the tests in 3 processes: most of them wait on child processes, servers
# and timeouts, one at a time they left a core idle.
python-tests: python mcp-servers $(VENV)/.otel
	cd bindings-python && ../scripts/with-test-postgres.sh ../$(PY) -m pytest -q -n 3 tests
	cd bindings-python && ../$(PY) -m mypy --strict python/phaseo_agent tests/typed_usage.py

# The Python property tests with many more generated inputs (hypothesis profile `fuzz`;
# FUZZ_EXAMPLES sets the examples per property, default 20000).
fuzz-python: python
	cd bindings-python && PHASEO_HYPOTHESIS_PROFILE=fuzz ../$(PY) -m pytest -q -o timeout=0 tests/test_properties.py

# The Python suite + runner on the newest pyenv CPython >= 3.12 (eager tool tasks there),
# under a throwaway PostgreSQL like python-tests.
python-tests-newest: python
	scripts/with-test-postgres.sh bindings-python/scripts/test-newest-python.sh

bindings-node/node_modules/.installed: bindings-node/package.json
	cd bindings-node && npm install --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

# The addon, built in debug next to index.js, where native.js looks first (the npm `install`
# script builds only with PHASEO_BUILD_FROM_SOURCE=1; see `make dist` for the packages).
node: bindings-node/node_modules/.installed
	cd bindings-node && node scripts/build.js --debug

# Under a throwaway PostgreSQL: the run-store tests use it (and fail without it). The Python
# binding too: a typed-tool test continues a run its Python twin paused, and a Python agent
# calls a tool the Node binding serves over MCP (mcp-serve.test.mjs).
node-tests: node python mcp-servers $(VENV)/.otel
	cd bindings-node && ../scripts/with-test-postgres.sh node --test --test-concurrency=3 test/*.test.mjs
	cd bindings-node && node_modules/.bin/tsc -p test/tsconfig.json
	cd bindings-node && rm -rf target-ts && node_modules/.bin/tsc -p test/tools-page.tsconfig.json && node --test target-ts/tools-page.test.js

# The Node property tests with many more inputs (`PHASEO_FUZZ_RUNS` per property, default
# 20000; `PHASEO_FUZZ_SEED` replays a run).
fuzz-node: node
	cd bindings-node && PHASEO_FUZZ_RUNS=$${PHASEO_FUZZ_RUNS:-20000} node --test test/properties.test.mjs

# The C# fuzz fixture (bindings-dotnet/tests/FuzzTests.cs: hostile values through every kind
# of callback, mutated paused states through continue) with many more inputs
# (`PHASEO_FUZZ_RUNS` per property, default 20000; `PHASEO_FUZZ_SEED` replays a run), and the
# hostile probe (bindings-dotnet/tests/ProbeTests.cs) with `PHASEO_PROBE_INPUTS` (default 20000).
fuzz-csharp: csharp-test-build
	cd $(DOTNET_OUT) && LD_LIBRARY_PATH=$(CARGO_TARGET_DIR)/debug PHASEO_FUZZ_RUNS=$${PHASEO_FUZZ_RUNS:-20000} \
	  PHASEO_PROBE_INPUTS=$${PHASEO_PROBE_INPUTS:-20000} \
	  nunit-console -nologo -domain=None -labels -run=PhaseoAgentSdk.Tests.FuzzTests,PhaseoAgentSdk.Tests.ProbeTests -xml=FuzzResult.xml Phaseo.AgentSdk.Tests.dll

# The PHP property tests (bindings-php/tests/FuzzTest.php, each property in a child process)
# with many more inputs (`PHASEO_FUZZ_RUNS` per property, default 20000; `PHASEO_FUZZ_SEED`
# replays a run). `make php-tests` runs them with 1000.
fuzz-php: php
	cd bindings-php && PHASEO_FUZZ_RUNS=$${PHASEO_FUZZ_RUNS:-20000} php -d extension=$(abspath $(PHP_EXT)) /usr/bin/phpunit tests/FuzzTest.php

# The Ruby fuzz test (bindings-ruby/test/fuzz_test.rb) with many more inputs
# (`PHASEO_FUZZ_RUNS` per property, default 10000; `PHASEO_FUZZ_SEED` replays a run,
# `PHASEO_FUZZ_CASE` one case of it).
.PHONY: fuzz-ruby
fuzz-ruby: ruby
	cd bindings-ruby && PHASEO_FUZZ_RUNS=$${PHASEO_FUZZ_RUNS:-10000} ruby -Ilib -Itest test/fuzz_test.rb

# The Java fuzz class (bindings-uniffi/kotlin/src/test/java/app/phaseo/agent/javaapi/FuzzTest.java:
# hostile values and exceptions through every kind of callback, mutated paused states through
# continue; the risky inputs in a child JVM (FuzzChild.java): real stack overflows and heap
# exhaustion, 10,000-deep values, callbacks that never return, interrupts, cancellation at
# random points, where deaths, hangs, wrong errors, lost states and leaks are counted) with
# many more inputs (`PHASEO_FUZZ_RUNS` per property, default 20000, a tenth of them in the
# child, `PHASEO_FUZZ_CHILD_RUNS`; `PHASEO_FUZZ_SEED` replays a run, `PHASEO_FUZZ_CASE` one
# child input).
fuzz-java: kotlin
	cd $(KOTLIN_DIR) && PHASEO_FUZZ_RUNS=$${PHASEO_FUZZ_RUNS:-20000} $(MVN) $(MVN_FLAGS) surefire:test -Dtest=FuzzTest

conformance: python node kotlin go-lib ruby csharp php
	tests/conformance/run-all.sh

handoff: python node kotlin go-lib ruby csharp php
	tests/conformance/run-all.sh --handoff

# One trace across a pause: Python pauses and Node continues (and the reverse),
# and Python ↔ Ruby, tracing to one OTLP receiver; the two run spans must be one trace, linked.
trace-handoff: python node ruby php $(VENV)/.otel
	tests/trace-handoff/run.sh

# Durable runs across languages: Python pauses, Node continues by run id (and
# the other way), Python ↔ Kotlin and Python ↔ Ruby, on one SQLite file and on PostgreSQL
# (a throwaway server of its own).
store-handoff: python node kotlin ruby
	tests/store-handoff/run.sh

# Tools from host types across languages (docs/behaviour.md §20): a typed tool's run paused for
# approval by one language is continued by another with its own typed definition of the tool
# (every ordered pair of Ruby, C#, PHP and Java).
.PHONY: typed-handoff
typed-handoff: ruby csharp-test-build php kotlin
	tests/typed-handoff/run.sh

# MCP across languages: a run paused on an approval-gated MCP call by one
# language is continued by another, which calls the server itself (every ordered pair of
# LANGS in the script; see its header for the driver contract). Then the client matrix
# below, which needs the same builds (`kotlin` is made again on every make).
.PHONY: mcp-handoff
mcp-handoff: python node kotlin ruby go-lib csharp-test-build php mcp-servers
	tests/mcp-handoff/run.sh
	$(PY) tests/mcp/test_client_matrix.py

# MCP clients we did not write (the official Python and TypeScript SDK clients,
# tests/mcp/served_client.py and ts_client.mjs) against the tools each binding serves, over
# stdio and Streamable HTTP; prints the client × transport × language matrix. Part of
# `make mcp-handoff` (and so of `make test`).
.PHONY: mcp-client-matrix
mcp-client-matrix: python node kotlin go-lib ruby csharp-test-build php mcp-servers
	$(PY) tests/mcp/test_client_matrix.py

# Kotlin/JVM binding (bindings-uniffi): the cdylib and the generated Kotlin (dev-profile
# uniffi-bindgen), compiled by Maven, which also writes the runtime classpath that
# tests/conformance/kotlin_runner.sh starts `java -cp` with. Maven fetches its plugins and
# libraries itself (into ~/.m2).
MVN ?= mvn
MVN_FLAGS := -B -ntp -Dphaseo.native.dir=$(CARGO_TARGET_DIR)/debug
KOTLIN_DIR := bindings-uniffi/kotlin

# The compiled classes are dropped first: the incremental builds do not notice a
# changed Kotlin signature, and stale classes then fail with NoSuchMethodError.
kotlin:
	bindings-uniffi/scripts/generate.sh
	rm -rf $(KOTLIN_DIR)/target/classes $(KOTLIN_DIR)/target/test-classes
	cd $(KOTLIN_DIR) && $(MVN) $(MVN_FLAGS) -q -DskipTests package

# JUnit 5 under Surefire, loading target/debug/libphaseo_agent_uniffi.so through JNA.
# Under a throwaway PostgreSQL: the run-store tests use it (and fail without it).
kotlin-tests: kotlin mcp-servers $(VENV)/.otel
	cd $(KOTLIN_DIR) && $(abspath scripts/with-test-postgres.sh) $(MVN) $(MVN_FLAGS) surefire:test

# Swift: no compiler on these machines. `swift` rewrites the committed sources after an API
# change; `swift-check` fails when they differ from a fresh generation.
swift:
	bindings-uniffi/scripts/generate.sh --swift

swift-check:
	bindings-uniffi/scripts/generate.sh --check

bench: bench-mcp bench-tracing
	$(CARGO) bench -p phaseo-agent

# Side by side with the peer SDKs of a language, each SDK in a process of its own. Not in
# `make test` (minutes long, and the figures need a quiet machine). Each language's
# benchmark joins PEER_BENCHES and its guard PEER_BENCH_CHECKS, the lists a run of every
# language goes through.
PEER_BENCHES += bench-java
PEER_BENCH_CHECKS += bench-check-java
.PHONY: bench-java bench-check-java
# The JVM: ours (the Java and Kotlin APIs, native library in the release profile;
# PROFILE=dist for the packages' build) against LangChain4j, Spring AI and Koog from Maven
# Central
# (benchmarks/java/run.sh; figures in docs/performance.md).
bench-java:
	benchmarks/java/run.sh
# Fails when our fan-out or sequential figure is behind the best JVM peer's (ratio below 1).
bench-check-java:
	benchmarks/java/run.sh --check

PEER_BENCHES += bench-go
PEER_BENCH_CHECKS += bench-check-go
.PHONY: bench-go bench-check-go
# Go: ours (the Go binding, C ABI library in the release profile) against Eino (its ReAct
# agent and ChatModelAgent) and Google's ADK for Go from the Go module proxy
# (benchmarks/go/run.sh; figures in docs/performance.md).
bench-go:
	benchmarks/go/run.sh
# Fails when our fan-out or sequential figure is behind the best Go peer's (ratio below 1).
bench-check-go:
	benchmarks/go/run.sh --check

PEER_BENCHES += bench-python bench-node bench-ruby bench-php bench-csharp
.PHONY: bench-python bench-node bench-ruby bench-php bench-csharp bench-peers bench-check
# Python and Node: ours against their installable peers, in one process each
# (benchmarks/{python,node}/run.sh). Ruby, PHP and C# have no installable peer: ours against
# the host's floor, bare threads / Fibers / Tasks doing the same trivial work
# (benchmarks/{ruby,php,csharp}/run.sh).
bench-python:
	benchmarks/python/run.sh
bench-node:
	benchmarks/node/run.sh
bench-ruby:
	benchmarks/ruby/run.sh
bench-php:
	benchmarks/php/run.sh
bench-csharp:
	benchmarks/csharp/run.sh

# Every language's benchmark above, one after the other, the native libraries in the `dist`
# profile (PROFILE=release builds faster; LANGS="go java" runs some), then one table of every
# language's figures with the ratio to the best peer (benchmarks/peers.sh, logs in
# target/bench-peers/). Not in `make test`.
bench-peers:
	benchmarks/peers.sh
# The same, failing when a fan-out or sequential ratio against a language's best peer is
# below 1 (the floors of Ruby, PHP and C# are reported, not judged).
bench-check:
	benchmarks/peers.sh --check

# Tracing overhead: the 1,000-call fan-out and the 400-turn run, tracing off
# (feature built in, not enabled) vs on (exporting to a local OTLP receiver).
bench-tracing:
	$(CARGO) bench -p phaseo-agent --features otel --bench tracing

# MCP call latency over stdio through an agent run vs the official Python client.
bench-mcp: mcp-servers
	$(CARGO) run -q --release -p phaseo-agent --example mcp_latency

# Longer fuzzing than `make test`: the core's property tests with many more cases (stable:
# mutated states, hostile clients of a served MCP tool set, hostile MCP servers of an
# agent, hostile model endpoints of the HTTP clients), then the libFuzzer targets
# of core/fuzz for FUZZ_SECONDS each (nightly rustc).
fuzz: fuzz-core fuzz-python fuzz-node fuzz-csharp fuzz-php fuzz-ruby fuzz-go fuzz-java

# Go's native fuzzing: each target for FUZZ_SECONDS (its corpus grows in the Go cache); then the
# hostile probe (bindings-go/probe_test.go) with PHASEO_PROBE_INPUTS inputs (default 20000).
fuzz-go: go-lib
	cd bindings-go && for t in FuzzHostileToolValues FuzzMutatedContinue; do \
	  $(GO_LINK_STAMP) go test -run '^$$' -fuzz "^$$t$$" -fuzztime $${FUZZ_SECONDS:-60}s . || exit 1; done
	cd bindings-go && PHASEO_PROBE_INPUTS=$${PHASEO_PROBE_INPUTS:-20000} $(GO_LINK_STAMP) go test -count=1 -timeout 0 -v -run '^TestHostileProbe$$' .

fuzz-core:
	PROPTEST_CASES=20000 $(CARGO) test -q -p phaseo-agent --test state_fuzz
	PROPTEST_CASES=2000 $(CARGO) test -q -p phaseo-agent --test mcp_serve_hostile
	PROPTEST_CASES=1000 $(CARGO) test -q -p phaseo-agent --test mcp_hostile_server
	PROPTEST_CASES=3000 $(CARGO) test -q -p phaseo-agent --test http_model_hostile
	FUZZ_SECONDS=$${FUZZ_SECONDS:-60} core/fuzz/run.sh

# The run-store tests (SQLite and a real PostgreSQL): scripts/with-test-postgres.sh
# installs Debian's postgresql when missing, starts a throwaway cluster on 127.0.0.1,
# runs the tests with its URL, and stops it even when they fail. A Postgres test without
# its server FAILS.
STORE_TESTS := store_memory store_sqlite store_postgres store_processes
store-tests:
	scripts/with-test-postgres.sh $(CARGO) test -p phaseo-agent $(addprefix --test ,$(STORE_TESTS))

# The store benchmark (release): SQLite saves/loads/listing, PostgreSQL claims per second,
# the overhead of a store on a 25-turn run.
store-bench:
	scripts/with-test-postgres.sh $(CARGO) bench -q -p phaseo-agent --bench store

# The C ABI (bindings-c): the static + shared library, its header check
# (cbindgen), and the C test linked to the static library.
.PHONY: c-abi c-header-check c-tests
C_LIB := target/debug/libphaseo_agent_c.a
C_LINK := -lpthread -ldl -lm
c-abi:
	$(CARGO) build -q -p phaseo-agent-c
c-header-check:
	$(CARGO) test -q -p phaseo-agent-c --test header
	cmp bindings-c/include/phaseo_agent.h bindings-go/include/phaseo_agent.h || { \
	  echo "bindings-go/include/phaseo_agent.h differs from bindings-c's: cp bindings-c/include/phaseo_agent.h bindings-go/include/"; exit 1; }
c-tests: c-abi
	mkdir -p target/c-tests
	gcc -std=c11 -Wall -Wextra -Werror -o target/c-tests/run_test tests/c/run_test.c -Ibindings-c/include $(C_LIB) $(C_LINK)
	target/c-tests/run_test

# The Go binding (bindings-go, package phaseoagent) over the C ABI: the static library
# copied where cgo links it, go vet + go test under the race detector, the Go conformance
# runner (also joined to run-all.sh and every handoff pair), the benchmark (on the library of the `dist` profile, as `go get` users link it).
.PHONY: go-lib go-tests go-conformance go-bench
GO_LIB_DIR := bindings-go/lib/linux_amd64
# The go command does not hash the files named in `#cgo LDFLAGS`: after the library changes
# (go-lib copies the debug build, go-bench the dist one) it would reuse a test binary linked
# with the other. The library's checksum as a linker flag makes it relink.
GO_LINK_STAMP = GOFLAGS="$$(go env GOFLAGS) -ldflags=-X=github.com/phaseo/agent-sdk-go.linkedLibrary=$$(sha256sum $(abspath $(GO_LIB_DIR))/libphaseo_agent_c.a | cut -c1-16)"
go-lib: c-abi
	mkdir -p $(GO_LIB_DIR)
	cp -p target/debug/libphaseo_agent_c.a $(GO_LIB_DIR)/
go-tests: go-lib mcp-servers
	@unformatted="$$(gofmt -l bindings-go tests/conformance/go examples/go docs/examples/go)"; \
	  [ -z "$$unformatted" ] || { echo "gofmt: not formatted (gofmt -w them): $$unformatted"; exit 1; }
	cd bindings-go && go vet ./... && $(GO_LINK_STAMP) ../scripts/with-test-postgres.sh go test -race -count=1 -timeout 40m ./...
	cd tests/conformance/go && go vet ./...
	cd examples/go && go vet ./...
go-conformance: go-lib
	tests/conformance/go_runner.sh tests/conformance/cases
go-bench:
	$(CARGO) build -q --profile dist -p phaseo-agent-c
	mkdir -p $(GO_LIB_DIR)
	cp -p target/dist/libphaseo_agent_c.a $(GO_LIB_DIR)/
	cd bindings-go && $(GO_LINK_STAMP) go test -run '^$$' -bench . -count 3 ./...
	$(MAKE) go-lib

# Prebuilt packages: `make dist` writes into dist/, from scratch, with the
# workspace version: the abi3 manylinux_2_28 wheel + sdist (maturin --zig), the two npm
# tarballs (@phaseo/agent-sdk and its platform package @phaseo/agent-sdk-linux-x64-gnu),
# the JAR carrying the native library, deployed to the throwaway Maven repository
# dist/maven. Cargo profile `dist` (root Cargo.toml). One release compile per artifact:
# the wheel's and one for the Node addon and the JVM library together, both linked by zig
# against glibc 2.28 (scripts/zig/).
# `make dist-check` installs each where no Rust toolchain is reachable and runs the
# README's quickstart with it (scripts/dist-check.sh: Python, Node, Kotlin and Java), and
# fails when a native library needs a glibc newer than 2.28 (objdump -T).
.PHONY: dist dist-check versions-check
DIST_VENV := .venvs/dist
DIST_PY_TOOLS := maturin==1.16.0 ziglang==0.14.1 auditwheel==6.8.2
export DIST_VENV := $(abspath $(DIST_VENV))
# The cargo profile of the packages: `dist` (fat LTO) unless told otherwise (`make test`
# checks them built in `dist-test`).
DIST_PROFILE ?= dist
export DIST_PROFILE
$(DIST_VENV)/.tools: Makefile
	$(PYTHON) -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/python -m pip install -q --upgrade pip
	$(DIST_VENV)/bin/python -m pip install -q $(DIST_PY_TOOLS)
	touch $@

# One version everywhere; --self-test proves that a changed manifest fails the check.
versions-check:
	scripts/check-versions.py
	scripts/check-versions.py --self-test

# The Go static library is built by scripts/dist.sh `native` with the other
# native libraries (one cargo build); `go` puts it into the module and writes the module,
# as a Go module proxy serves it, into dist/goproxy.
dist: $(DIST_VENV)/.tools kotlin ruby-deps php-deps
	rm -rf dist
	scripts/check-versions.py
	scripts/dist.sh python native node jvm go
	scripts/dist.sh sizes

dist-check: $(DIST_VENV)/.tools
	scripts/dist-check.sh python node jvm java go glibc

# Ruby binding (bindings-ruby): Debian's ruby, ruby-dev, ruby-minitest, rake and
# libclang-dev installed when missing; the extension built with cargo (debug) and copied
# next to lib/phaseo_agent_sdk.rb, where `require "phaseo_agent_sdk"` loads it.
# The extensions are replaced by a rename, never written over: a process that has the old
# one loaded (a test or fuzz run still going) keeps reading it instead of dying by SIGBUS.
RUBY_EXT := bindings-ruby/lib/phaseo_agent_sdk/phaseo_agent_sdk.so
.PHONY: ruby-deps ruby ruby-tests ruby-gem
ruby-deps:
	scripts/system-deps.sh ruby
ruby: ruby-deps
	$(CARGO) build -q -p phaseo-agent-ruby
	cp $(CARGO_TARGET_DIR)/debug/libphaseo_agent_sdk.so $(RUBY_EXT).tmp && mv -f $(RUBY_EXT).tmp $(RUBY_EXT)
ruby-tests: ruby mcp-servers $(VENV)/.otel
	cd bindings-ruby && ../scripts/with-test-postgres.sh rake test
# The platform gem (x86_64-linux) with the extension built in the `dist` profile, installed into a fresh
# GEM_HOME with no Rust toolchain on the PATH and run from outside the repository.
# The extension comes from `make dist`'s one native build (zig, glibc 2.28).
ruby-gem: ruby-deps $(if $(DIST_READY),,dist)
	scripts/ruby-gem-check.sh

# The C# binding (bindings-dotnet, assembly Phaseo.AgentSdk) over the C ABI's cdylib, built
# with Debian's Mono (mcs, C# 7) into target/dotnet; NUnit 2.6 tests (closing line
# "N passed, N failed" from TestResult.xml); the C# conformance runner (also in run-all.sh
# and every handoff pair). The Debian packages are installed when missing.
.PHONY: csharp-deps csharp csharp-test-build csharp-tests csharp-conformance
DOTNET_OUT := $(CARGO_TARGET_DIR)/dotnet
NUNIT_DLL := /usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll
MCS := mcs -langversion:7.2 -nologo -warnaserror+ -r:System.Core.dll -r:System.ComponentModel.DataAnnotations.dll
csharp-deps:
	scripts/system-deps.sh csharp
csharp: csharp-deps c-abi
	mkdir -p $(DOTNET_OUT)
	$(MCS) -target:library -doc:$(DOTNET_OUT)/Phaseo.AgentSdk.xml -out:$(DOTNET_OUT)/Phaseo.AgentSdk.dll bindings-dotnet/src/*.cs
csharp-test-build: csharp
	$(MCS) -target:library -out:$(DOTNET_OUT)/Phaseo.AgentSdk.Tests.dll -r:$(DOTNET_OUT)/Phaseo.AgentSdk.dll -r:$(NUNIT_DLL) bindings-dotnet/tests/*.cs
	$(MCS) -target:exe -out:$(DOTNET_OUT)/Phaseo.AgentSdk.TestWorker.exe -r:$(DOTNET_OUT)/Phaseo.AgentSdk.dll -r:$(DOTNET_OUT)/Phaseo.AgentSdk.Tests.dll -r:$(NUNIT_DLL) bindings-dotnet/tests/worker/*.cs
	cp -p $(NUNIT_DLL) $(DOTNET_OUT)/
# Every fixture, the fuzz fixture (FuzzTests) with its default 3000 inputs per property and the
# hostile probe (ProbeTests, worker processes) with its default 800 inputs included.
csharp-tests: csharp-test-build mcp-servers
	rm -f $(DOTNET_OUT)/TestResult.xml
	cd $(DOTNET_OUT) && LD_LIBRARY_PATH=$(CARGO_TARGET_DIR)/debug PHASEO_REPO=$(CURDIR) \
	  timeout 1500 $(CURDIR)/scripts/with-test-postgres.sh nunit-console -nologo -domain=None -labels Phaseo.AgentSdk.Tests.dll -xml=TestResult.xml || true
	python3 scripts/nunit-summary.py $(DOTNET_OUT)/TestResult.xml
csharp-conformance: csharp
	tests/conformance/csharp_runner.sh tests/conformance/cases

# PHP binding (bindings-php): Debian's php8.2-cli, php8.2-dev, phpunit and
# libclang-dev installed when missing; the extension built with cargo (debug) and copied to
# bindings-php/php/phaseo_agent.so, next to the PHP layer's autoload.php.
PHP_EXT := bindings-php/php/phaseo_agent.so
.PHONY: php-deps php php-tests php-ext-check
php-deps:
	scripts/system-deps.sh php
php: php-deps
	$(CARGO) build -q -p phaseo-agent-php
	cp $(CARGO_TARGET_DIR)/debug/libphaseo_agent_php.so $(PHP_EXT).tmp && mv -f $(PHP_EXT).tmp $(PHP_EXT)
# PHPUnit under a throwaway PostgreSQL (the store tests use it and fail without it), with
# the MCP reference server installed.
php-tests: php tests/mcp/node_modules/.installed $(VENV)/.otel
	cd bindings-php && ../scripts/with-test-postgres.sh php -d extension=$(abspath $(PHP_EXT)) /usr/bin/phpunit
# The package (the extension in the `dist` profile, its stub and the PHP layer) installed in
# a folder outside the repository and run from there with `php -n -d extension=...`.
php-ext-check: php-deps $(if $(DIST_READY),,dist)
	scripts/php-ext-check.sh
