# quiche-lbe — the two commands a newcomer needs are `make demo` and `make test`.
# Every target sets up what it needs: toolchain check (and install on Debian),
# then the pinned, patched quiche under target/.

CARGO ?= cargo
STAMP := target/quiche-patched/.stamp

.PHONY: all deps quiche quiche-test build install test demo lint doc bench fuzz clean

all: build

deps:
	@./scripts/check-deps.sh

# Unpacks and patches quiche (a no-op when patches/ and the script are unchanged).
quiche: deps
	@./scripts/quiche-src.sh

build: quiche
	$(CARGO) build --release --workspace --bins

# Every binary of the workspace into $(DESTDIR)$(PREFIX)/bin (scripts/install.sh).
PREFIX ?= /usr/local
install: build
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) CARGO=$(CARGO) ./scripts/install.sh

# quiche's own unit tests of the recovery code, ours (congestion::custom) among
# them; `make test` runs them too (scripts/test.sh).
quiche-test: quiche
	@./scripts/quiche-test.sh

test: quiche
	@CARGO=$(CARGO) ./scripts/test.sh

demo: build
	@./scripts/demo.sh

# The stock-quiche interop peer (apps/h3-download/tests/stock-quiche/) is a
# cargo project outside the workspace: its formatting is checked by itself.
lint: quiche doc
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path apps/h3-download/tests/stock-quiche/Cargo.toml -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

# The API docs of every crate, with any rustdoc warning an error.
doc: quiche
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --release --no-deps --workspace

bench: quiche
	$(CARGO) bench --workspace

# Seeded fuzzing of every parser of outside input (fuzz/src/main.rs), for
# FUZZ_SECONDS in total (default 60), on stable Rust; exit 1 on a failure.
FUZZ_SECONDS ?= 60
fuzz: quiche
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(CARGO) run --release -p lbe-fuzz

clean:
	$(CARGO) clean
