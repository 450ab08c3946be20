# quiche-lbe — the two commands a newcomer needs are `make demo` and `make test`.
# Every target sets up what it needs: toolchain check (and install on Debian),
# then the pinned, patched quiche under target/.

CARGO ?= cargo
STAMP := target/quiche-patched/.stamp

.PHONY: all deps build-deps quiche boringssl quiche-test build install test demo docs-tables paper lint doc bench fuzz clean

all: build

# What building needs (a C/C++ compiler, cmake, clang, libclang, patch).
build-deps:
	@./scripts/check-deps.sh --build

# What the tests need besides (python3 with venv, chromium; go is optional).
deps:
	@./scripts/check-deps.sh

# Unpacks and patches quiche (a no-op when patches/ and the script are unchanged).
quiche: build-deps
	@./scripts/quiche-src.sh

# BoringSSL, built once into target/boringssl (scripts/boringssl.sh; a no-op
# when it is there): every build takes it from there (.cargo/config.toml).
boringssl: quiche
	@CARGO=$(CARGO) ./scripts/boringssl.sh

# scripts/build.sh is cargo build with a progress line a CI log can show.
build: boringssl
	@CARGO=$(CARGO) ./scripts/build.sh --workspace -- --bins

# Every binary of the workspace into $(DESTDIR)$(PREFIX)/bin (scripts/install.sh).
PREFIX ?= /usr/local
install: build
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) CARGO=$(CARGO) ./scripts/install.sh

# quiche's own unit tests of the recovery code, ours (congestion::custom) among
# them; `make test` runs them too (scripts/test.sh).
quiche-test: boringssl
	@./scripts/quiche-test.sh

test: deps boringssl
	@CARGO=$(CARGO) ./scripts/test.sh

# Builds only what the demo runs (quic-bulk, qlog-analysis, lbe-lab): not
# the tokio-quiche example, the C library or the fuzzer, which `make test`
# and `make build` build.
demo: boringssl
	@CARGO=$(CARGO) ./scripts/build.sh quic-bulk qlog-analysis lbe-lab -- --bins
	@./scripts/demo.sh

# Every table in docs/ between `<!-- table: NAME -->` and `<!-- /table -->`
# regenerated from docs/data/ (lbe-lab docs-tables); `make test` fails when
# a page differs from its data (apps/lbe-lab/tests/docs_tables.rs).
docs-tables: boringssl
	$(CARGO) run --release -q -p lbe-lab -- docs-tables

# Re-measures those tables: every table's sweeps in the simulator, then
# docs/data/ and the tables (scripts/paper-figures.sh; --only, --shard).
paper: boringssl
	@./scripts/paper-figures.sh

# The stock-quiche interop peer (apps/h3-download/tests/stock-quiche/) is a
# cargo project outside the workspace: its formatting is checked by itself.
lint: boringssl doc
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path apps/h3-download/tests/stock-quiche/Cargo.toml -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

# The API docs of every crate, with any rustdoc warning an error.
doc: boringssl
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --release --no-deps --workspace

bench: boringssl
	$(CARGO) bench --workspace

# Seeded fuzzing of every parser of outside input (fuzz/src/main.rs), for
# FUZZ_SECONDS in total (default 60), on stable Rust; exit 1 on a failure.
FUZZ_SECONDS ?= 60
fuzz: boringssl
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(CARGO) run --release -p lbe-fuzz

clean:
	$(CARGO) clean
