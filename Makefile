# The two commands of the README: `make demo` (the demo agents, offline) and `make test`
# (everything CI checks). Both install what they need themselves.
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV := .venvs/py
PY := $(VENV)/bin/python
PY_TOOLS := maturin==1.16.0 pytest==9.2.0 pytest-timeout==2.4.0 mypy==2.4.1 pydantic==2.14.3 hypothesis==6.170.17
export PHASEO_PYTHON := $(abspath $(PY))
export CARGO_TARGET_DIR := $(abspath target)
# CI builds once from a clean clone: incremental caches there only cost disk and time.
ifeq ($(CI),true)
export CARGO_INCREMENTAL := 0
endif

.PHONY: store-tests store-bench store-handoff demo test rust-checks rust-tests mcp-servers bench-mcp python python-tests fuzz-python python-tests-newest python-wheel node node-tests fuzz-node node-outside conformance handoff bench kotlin kotlin-tests swift swift-check fuzz fuzz-core

demo: python node mcp-servers ruby
	$(CARGO) run -q -p support-desk
	$(PY) examples/python/support_desk.py
	node examples/node/support-desk.mjs
	$(PY) examples/python/approval_inbox.py
	node examples/node/approval-inbox.mjs
	$(PY) examples/python/mcp_tools.py
	node examples/node/mcp-tools.mjs
	ruby -Ibindings-ruby/lib examples/ruby/support_desk.rb

test: rust-checks rust-tests python-tests python-tests-newest node-tests kotlin-tests swift-check conformance handoff store-handoff mcp-handoff python-wheel node-outside ruby-tests ruby-gem

rust-checks: ruby-deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

rust-tests: mcp-servers ruby-deps
	scripts/with-test-postgres.sh $(CARGO) test --workspace

# The MCP servers the tests start (SPEC §11), pinned: the reference server
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
python-tests: python mcp-servers
	cd bindings-python && ../scripts/with-test-postgres.sh ../$(PY) -m pytest -q tests
	cd bindings-python && ../$(PY) -m mypy --strict python/phaseo_agent tests/typed_usage.py

# The Python property tests with many more generated inputs (hypothesis profile `fuzz`;
# FUZZ_EXAMPLES sets the examples per property, default 20000).
fuzz-python: python
	cd bindings-python && PHASEO_HYPOTHESIS_PROFILE=fuzz ../$(PY) -m pytest -q -o timeout=0 tests/test_properties.py

# The Python suite + runner on the newest pyenv CPython >= 3.12 (eager tool tasks there),
# under a throwaway PostgreSQL like python-tests.
python-tests-newest: python
	scripts/with-test-postgres.sh bindings-python/scripts/test-newest-python.sh

# `pip install ./bindings-python` into a fresh venv outside the repository (PEP 517 build).
python-wheel:
	rm -rf /tmp/phaseo-wheel-check && $(PYTHON) -m venv /tmp/phaseo-wheel-check
	cd /tmp && /tmp/phaseo-wheel-check/bin/pip install -q $(abspath bindings-python)
	cd /tmp && /tmp/phaseo-wheel-check/bin/python -c "import phaseo_agent as p; a = p.create_agent({'id': 'x'}); print('wheel ok:', a.run(input='hi', client=p.ScriptedClient([{'text': 'ok'}])).output)"

bindings-node/node_modules/.installed: bindings-node/package.json
	cd bindings-node && npm install --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

# The addon, built in debug next to index.js (the npm `install` script builds release).
node: bindings-node/node_modules/.installed
	cd bindings-node && node scripts/build.js --debug

# Under a throwaway PostgreSQL: the run-store tests use it (and fail without it).
node-tests: node mcp-servers
	cd bindings-node && ../scripts/with-test-postgres.sh node --test test/*.test.mjs
	cd bindings-node && node_modules/.bin/tsc -p test/tsconfig.json

# The Node property tests with many more inputs (`PHASEO_FUZZ_RUNS` per property, default
# 20000; `PHASEO_FUZZ_SEED` replays a run).
fuzz-node: node
	cd bindings-node && PHASEO_FUZZ_RUNS=$${PHASEO_FUZZ_RUNS:-20000} node --test test/properties.test.mjs

# `npm install <path>/bindings-node` from a folder outside the repository builds the addon.
node-outside:
	rm -rf /tmp/phaseo-npm-check && mkdir -p /tmp/phaseo-npm-check
	cd /tmp/phaseo-npm-check && echo '{"name":"consumer","version":"1.0.0","private":true}' > package.json
	cd /tmp/phaseo-npm-check && npm install --no-audit --no-fund --loglevel=error $(abspath bindings-node)
	cd /tmp/phaseo-npm-check && node -e "const s = require('@phaseo/agent-sdk'); s.createAgent({id: 'x'}).run({input: 'hi', client: s.createScriptedClient([{text: 'ok'}])}).then((r) => console.log('require ok:', r.output))"
	cd /tmp/phaseo-npm-check && node --input-type=module -e "import { createAgent, createScriptedClient } from '@phaseo/agent-sdk'; const r = await createAgent({id: 'x'}).run({input: 'hi', client: createScriptedClient([{text: 'ok'}])}); console.log('import ok:', r.output)"

conformance: python node kotlin ruby
	tests/conformance/run-all.sh

handoff: python node kotlin ruby
	tests/conformance/run-all.sh --handoff

# Durable runs across languages (issue 12): Python pauses, Node continues by run id (and
# the other way), and Python ↔ Kotlin, on one SQLite file and on PostgreSQL (a throwaway
# server of its own).
store-handoff: python node kotlin
	tests/store-handoff/run.sh

# MCP across languages (issue 13): a run paused on an approval-gated MCP call by one
# language is continued by another, which calls the server itself (every ordered pair of
# LANGS in the script; see its header for the driver contract).
.PHONY: mcp-handoff
mcp-handoff: python node kotlin mcp-servers
	tests/mcp-handoff/run.sh

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
kotlin-tests: kotlin mcp-servers
	cd $(KOTLIN_DIR) && $(abspath scripts/with-test-postgres.sh) $(MVN) $(MVN_FLAGS) surefire:test

# Swift: no compiler on these machines. `swift` rewrites the committed sources after an API
# change; `swift-check` fails when they differ from a fresh generation.
swift:
	bindings-uniffi/scripts/generate.sh --swift

swift-check:
	bindings-uniffi/scripts/generate.sh --check

bench: bench-mcp
	$(CARGO) bench -p phaseo-agent

# MCP call latency over stdio through an agent run vs the official Python client (issue 13).
bench-mcp: mcp-servers
	$(CARGO) run -q --release -p phaseo-agent --example mcp_latency

# Longer fuzzing than `make test`: the core's property tests with many more cases (stable),
# then the libFuzzer targets of core/fuzz for FUZZ_SECONDS each (nightly rustc).
fuzz: fuzz-core fuzz-python fuzz-node

fuzz-core:
	PROPTEST_CASES=20000 $(CARGO) test -q -p phaseo-agent --test state_fuzz
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

# Ruby binding (bindings-ruby, issue 18): Debian's ruby, ruby-dev, ruby-minitest, rake and
# libclang-dev installed when missing; the extension built with cargo (debug) and copied
# next to lib/phaseo_agent_sdk.rb, where `require "phaseo_agent_sdk"` loads it.
RUBY_EXT := bindings-ruby/lib/phaseo_agent_sdk/phaseo_agent_sdk.so
.PHONY: ruby-deps ruby ruby-tests ruby-gem
ruby-deps:
	scripts/ruby-deps.sh
ruby: ruby-deps
	$(CARGO) build -q -p phaseo-agent-ruby
	cp $(CARGO_TARGET_DIR)/debug/libphaseo_agent_sdk.so $(RUBY_EXT)
ruby-tests: ruby tests/mcp/node_modules/.installed
	cd bindings-ruby && ../scripts/with-test-postgres.sh rake test
# The platform gem (x86_64-linux) with the release extension, installed into a fresh
# GEM_HOME with no Rust toolchain on the PATH and run from outside the repository.
ruby-gem: ruby-deps
	$(CARGO) build -q --release -p phaseo-agent-ruby
	scripts/ruby-gem-check.sh
