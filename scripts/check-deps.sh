#!/usr/bin/env bash
# Checks for what quiche's BoringSSL build (boring-sys) needs — a C/C++
# compiler, cmake, and libclang for bindgen — and for what the tests need
# (python3 with venv, for the aioquic interop tests and Playwright; chromium,
# the browser the report test opens report.html in). On Debian/Ubuntu, as
# root or with sudo, it installs what is missing; elsewhere it says what to
# install.
#
#   scripts/check-deps.sh [--build]
#
# --build checks only what building needs (`make demo` and `make build` run
# nothing else); without it, what the tests need too (`make test`).
set -euo pipefail

only_build=false
case "${1:-}" in
    "") ;;
    --build) only_build=true ;;
    *) printf 'check-deps: error: unknown argument %s (usage: check-deps.sh [--build])\n' "'$1'" >&2; exit 2 ;;
esac

say() { printf 'check-deps: %s\n' "$*" >&2; }

have_libclang() {
    local f
    for f in ${LIBCLANG_PATH:-/nonexistent}/libclang*.so* /usr/lib/llvm-*/lib/libclang*.so* \
             /usr/lib/*-linux-gnu/libclang*.so* /usr/lib64/libclang*.so*; do
        [ -e "$f" ] && return 0
    done
    return 1
}

missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v clang >/dev/null 2>&1 || missing+=(clang)
have_libclang || missing+=(libclang-dev)
command -v patch >/dev/null 2>&1 || missing+=(patch)
if ! $only_build; then
# The HTTP/3 interop tests run aioquic in a virtualenv of their own.
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
else
    missing+=(python3 python3-venv)
fi
# The report test (apps/lbe-lab/tests/report_in_browser.rs) opens report.html
# in headless Chromium: the distribution's, never a browser downloaded by
# Playwright.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# The quic-go interop tests (apps/h3-download/tests/interop_quic_go.rs) build
# a Go program; without Go they skip (not installed here: Go's own releases
# are newer than the distributions').
command -v go >/dev/null 2>&1 \
    || say "note: no go (https://go.dev/dl/); the quic-go interop tests will skip"
fi

if ! command -v cargo >/dev/null 2>&1; then
    say "error: cargo not found; install Rust (https://rustup.rs), then run make again"
    exit 1
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || { say "error: apt-get update failed"; exit 1; }
    apt-get install -y -qq "${missing[@]}" >&2 \
        || { say "error: apt-get install ${missing[*]} failed"; exit 1; }
elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
    say "installing ${missing[*]} with sudo apt-get"
    sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 \
        || { say "error: sudo apt-get install ${missing[*]} failed"; exit 1; }
else
    say "error: missing ${missing[*]} (needed to build BoringSSL and run the tests); install them with your package manager"
    exit 1
fi
