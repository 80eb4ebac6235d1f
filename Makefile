# Flame's two commands are `make run` and `make test`; both install what is missing first.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
APP := target/debug/flame-desktop
UI_SOURCES := $(shell find ui/src ui/index.html -type f 2>/dev/null) vite.config.ts package-lock.json
XVFB := xvfb-run -a -s "-screen 0 1280x800x24"

.PHONY: help setup run build ui test fmt-check clippy rust-test fuzz-check ui-check mcp e2e bench bench-rust bench-window bench-app bindings bless fmt clean fuzz package agents

help:
	@echo "make run    install what is missing, build, and open Flame"
	@echo "make test   install what is missing, then every check (format, lints, Rust, UI, end-to-end)"
	@echo "make setup  only install what is missing"
	@echo "make bench  every benchmark, one line per figure: BENCH <name> <value> <unit>"
	@echo "            (its parts alone: make bench-rust, bench-window, bench-app)"
	@echo "make bindings  regenerate ui/src/bindings.ts from the Rust types"
	@echo "make bless  rewrite the golden context documents after an intended change"
	@echo "make fmt    format the Rust and the TypeScript code"
	@echo "make package  the .deb (the app and the flame command line) in target/package/release/bundle/deb/"
	@echo "make agents  the real OpenCode and Codex CLIs the end-to-end tests follow, in target/agents/"

setup:
	@scripts/setup.sh

# The Tauri shell embeds ui/dist at compile time, so the UI is built before any cargo step that
# compiles src-tauri.
ui: ui/dist/index.html
ui/dist/index.html: $(UI_SOURCES)
	npm run --silent build
# The benchmarks' build of the UI (`vite build --mode bench`): the product's with the hooks
# tests/bench calls, which vite.config.ts keeps out of ui/dist. Only `make bench` builds it.
BENCH_UI := target/bench-ui
$(BENCH_UI)/index.html: $(UI_SOURCES)
	npm run --silent build:bench

build: setup ui
	$(CARGO) build -p flame-desktop

# Opens the window on the desktop, or under Xvfb when there is no display.
run: build
	@if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then $(APP); \
	else echo "no display: running Flame under Xvfb"; $(XVFB) $(APP); fi

test: setup ui fmt-check clippy rust-test fuzz-check ui-check mcp e2e
	@echo "make test: every check passed"

fmt-check:
	$(CARGO) fmt --all --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# Includes the bindings freshness check (src-tauri) and the repository rules (tidy).
rust-test:
	$(CARGO) test --workspace --locked

# The fuzz targets are a workspace of their own that nothing else compiles, so an API change can
# break them unseen; checking them keeps them building. libFuzzer itself, C++ that only running
# needs, is left out (`make fuzz` builds it).
fuzz-check:
	$(CARGO) check --manifest-path fuzz/Cargo.toml --locked --bins --no-default-features

# Prettier's check of the TypeScript and CSS (settings in .prettierrc.json, .prettierignore).
ui-check:
	npm run --silent format:check
	npm run --silent typecheck
	npm run --silent lint
	npm run --silent test:ui

# The MCP and end-to-end tests run the binaries of the test build (`cargo test --no-run` leaves
# them in target/debug): a `cargo build` of its own would compile the crates again, with the
# features of the normal dependencies alone, the window's crates twice over.
TEST_BUILD := $(CARGO) test --workspace --locked --no-run

# `flame mcp` driven by the official TypeScript MCP SDK's client.
mcp:
	$(TEST_BUILD)
	npm run --silent test:mcp

# The end-to-end tests use the `flame` command line to build trees and to read the store back.
e2e: ui
	$(TEST_BUILD)
	$(XVFB) npm run --silent test:e2e

# Each benchmark prints `BENCH <name> <value> <unit>` lines on stdout; the rest goes to stderr.
BENCHES := -p flame-store -p flame-api -p flame-tokens -p flame-workspace -p flame-agent -p flame-checkpoint -p flame-cli -p flame-gateway --bench store --bench fts --bench append --bench context --bench cost --bench budget --bench tokens --bench import --bench follow --bench export --bench search --bench sandbox --bench offered --bench checkpoint --bench llama --bench gateway
# The UI benchmarks run the release build in the real window under Xvfb (tests/bench); the app's
# own figures, its size and its memory, are measured on the build the package ships
# (scripts/package.sh --binaries, in target/package/dist).
SHIPPED_APP := $(CURDIR)/target/package/dist/flame-desktop
# The release build the UI benchmarks drive embeds the bench build of the UI instead of ui/dist
# (TAURI_CONFIG points the shell at it). The package is built from ui/dist in a target directory
# of its own (scripts/package.sh), so the hooks never reach it.
# `make bench` runs its three parts in turn; each runs alone too, and each reuses what an earlier
# run built: the Rust benchmarks (`bench-rust`), the window's in the release build
# (`bench-window`), and the app's own figures on the shipped build (`bench-app`, whose `dist`
# build with whole-program optimisation is most of a first `make bench`; scripts/package.sh
# builds it again only when its inputs changed).
bench: bench-rust bench-window bench-app
bench-rust: setup
	@$(CARGO) bench --locked $(BENCHES) | grep '^BENCH '
bench-window: setup ui $(BENCH_UI)/index.html
	@TAURI_CONFIG='{"build":{"frontendDist":"$(BENCH_UI)"}}' \
		$(CARGO) build --release -p flame-desktop -p flame-cli --locked --quiet
	@$(XVFB) npm run --silent bench:ui -- --exclude '**/app.bench.ts' | grep '^BENCH '
bench-app: setup ui
	@CARGO="$(CARGO)" scripts/package.sh --binaries >&2
	@FLAME_APP="$(SHIPPED_APP)" FLAME_CLI="$(CURDIR)/target/package/dist/flame" \
		$(XVFB) npm run --silent bench:ui -- app.bench | grep '^BENCH '

# The Debian package, made by Tauri's bundler from the root tauri.conf.json, in a target directory
# of its own (scripts/package.sh); it fails if the .deb lacks either program or the desktop entry.
package: setup ui
	@CARGO="$(CARGO)" scripts/package.sh

# The real OpenCode and Codex command lines, at the versions the fixtures were made with
# (tests/fixtures/codex/, tests/fixtures/opencode-cli/), for the end-to-end test that follows
# OpenCode while it writes, which skips without them. Not dependencies in package-lock.json: they
# are native programs of some 600 MB, which every cold `npm ci` would fetch.
agents:
	npm install --prefix target/agents --no-save --no-package-lock --no-audit --no-fund \
		opencode-ai@1.18.33 @openai/codex@0.171.0

bindings:
	FLAME_BLESS=1 $(CARGO) test -p flame-desktop --lib bindings

# The golden stack-context documents of the spec's tree, one per focus, and the cases the
# window's TypeScript is checked against (ui/src/cost-text.cases.json,
# ui/src/outline-preview.cases.json).
bless:
	FLAME_BLESS=1 $(CARGO) test -p flame-context --test context golden
	FLAME_BLESS=1 $(CARGO) test -p flame-model the_window_s_cost_text_cases
	FLAME_BLESS=1 $(CARGO) test -p flame-api --lib the_window_s_preview_cases

fmt:
	$(CARGO) fmt --all
	npm run --silent format

# The fuzz targets (fuzz/README.md): cargo-fuzz with libFuzzer on the pinned stable toolchain,
# without a sanitizer (sanitizers need nightly flags), one target at a time, seeded from the
# fixtures by fuzz/seed.sh. A crash stops the run and leaves its input under fuzz/artifacts/.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := sse_openai sse_anthropic import_claude_code import_opencode opencode_db import_flame_json context_xml
fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	fuzz/seed.sh
	for target in $(FUZZ_TARGETS); do \
		$(CARGO) fuzz run --sanitizer none --debug-assertions $$target -- \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=30 -print_final_stats=1; \
	done

clean:
	$(CARGO) clean
	rm -rf ui/dist
