# The two commands of the README: `make demo` (the demo agent, offline) and `make test`
# (everything CI checks). Both install what they need themselves.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: demo test rust-checks rust-tests conformance handoff bench

demo:
	$(CARGO) run -q -p support-desk

test: rust-checks rust-tests conformance handoff

rust-checks:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

rust-tests:
	$(CARGO) test --workspace

conformance:
	tests/conformance/run-all.sh

handoff:
	tests/conformance/run-all.sh --handoff

bench:
	$(CARGO) bench -p phaseo-agent --bench run_loop
