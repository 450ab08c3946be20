#!/usr/bin/env bash
# Fetches the pinned quiche release through cargo, verifies it, unpacks it under
# target/ and applies our patches in the order patches/series lists them:
# patches/core, then patches/ext, then patches/lab (docs/patches.md). The
# workspace's [patch.crates-io] points at the result. Idempotent: a second run
# with unchanged inputs does nothing.
#
#   scripts/quiche-src.sh [--out DIR] [--only core]
#
# --out DIR unpacks somewhere else than target/quiche-patched (.ci/run uses it,
# with an empty CARGO_HOME, to prove the set-up works on a fresh machine).
# --only core applies patches/core alone: the quiche an operator needs for
# our controllers chosen by name (docs/adopting.md). It needs --out: the
# workspace's own copy carries every patch.
set -euo pipefail

QUICHE_VERSION=0.30.0
QUICHE_SHA256=52b35a721a2a56797347929745fa783fc99e680d9484b80324ce40106b75493a

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/quiche-patched"
out_given=
only=
usage="usage: quiche-src.sh [--out DIR] [--only core]"
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ -n "${2:-}" ] || { echo "quiche-src: error: --out needs a directory" >&2; exit 2; }
               mkdir -p "$2" && out=$(cd "$2" && pwd) && out_given=1; shift 2 ;;
        --only) [ "${2:-}" = core ] || { echo "quiche-src: error: --only takes 'core' ($usage)" >&2; exit 2; }
                only=core; shift 2 ;;
        *) echo "quiche-src: error: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
done
[ -z "$only" ] || [ -n "$out_given" ] \
    || { echo "quiche-src: error: --only core needs --out DIR (target/quiche-patched has every patch)" >&2; exit 2; }
src="$out/quiche-$QUICHE_VERSION"
stamp="$out/.stamp"

step() { printf 'quiche-src: %s\n' "$*" >&2; }
fail() { printf 'quiche-src: error: %s\n' "$*" >&2; exit 1; }

# The patches to apply, in order: patches/series without its comments, only
# its core/ lines with --only core.
series="$root/patches/series"
[ -f "$series" ] || fail "$series is missing"
patches=()
while read -r line; do
    case "$line" in ""|"#"*) continue ;; esac
    [ -z "$only" ] || [ "${line%%/*}" = "$only" ] || continue
    [ -f "$root/patches/$line" ] || fail "patches/series lists $line, which is not in patches/"
    patches+=("$root/patches/$line")
done <"$series"
want_stamp=$( (cat "$0" "$series" "${patches[@]}"; echo "only=$only") | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] && [ -f "$src/Cargo.toml" ]; then
    exit 0
fi

command -v cargo >/dev/null || fail "cargo not found on PATH (install Rust with rustup)"

cargo_home=${CARGO_HOME:-$HOME/.cargo}
# The .crate cargo keeps in its registry cache, or nothing. A glob, not `ls`:
# with nullglob an unmatched pattern vanishes, and a bare `ls` would list the
# working directory (that is how a fresh CARGO_HOME once "found" Cargo.lock).
cached_crate() {
    local found=("$cargo_home"/registry/cache/*/"quiche-$QUICHE_VERSION.crate")
    [ ${#found[@]} -gt 0 ] && [ -f "${found[0]}" ] && printf '%s\n' "${found[0]}"
    return 0
}
crate=$(cached_crate)
if [ -z "$crate" ]; then
    step "fetching quiche $QUICHE_VERSION from crates.io through cargo"
    fetch_dir="$out.fetch"
    mkdir -p "$fetch_dir/src"
    cat >"$fetch_dir/Cargo.toml" <<TOML
[package]
name = "quiche-fetch"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
quiche = { version = "=$QUICHE_VERSION", default-features = false }
[workspace]
TOML
    : >"$fetch_dir/src/lib.rs"
    cargo fetch --manifest-path "$fetch_dir/Cargo.toml" >&2 \
        || fail "step 'fetch': cargo could not download quiche $QUICHE_VERSION (is crates.io reachable?)"
    crate=$(cached_crate)
    [ -n "$crate" ] || fail "step 'fetch': cargo reported success but quiche-$QUICHE_VERSION.crate is not in $cargo_home/registry/cache"
fi

step "verifying $crate"
got=$(sha256sum "$crate" | cut -d' ' -f1)
[ "$got" = "$QUICHE_SHA256" ] \
    || fail "step 'verify': sha256 of $crate is $got, expected $QUICHE_SHA256"

step "unpacking into $out"
rm -rf "$src" "$stamp"
mkdir -p "$out"
tar -xzf "$crate" -C "$out" || fail "step 'unpack': tar could not read $crate"

# Exactly: no fuzz, and so no backup files left in the tree.
for p in "${patches[@]}"; do
    step "applying ${p#"$root"/patches/}"
    patch -d "$src" -p1 --forward --quiet --fuzz=0 --no-backup-if-mismatch <"$p" \
        || fail "step 'patch': ${p#"$root"/patches/} does not apply to quiche $QUICHE_VERSION"
done

# The unpacked crate lies inside our workspace's directory; an empty
# [workspace] table makes it a workspace of its own, so that cargo can run
# quiche's unit tests (ours among them) from there: scripts/quiche-test.sh.
# The workspace's [patch.crates-io] still uses it as a path dependency.
printf '\n[workspace]\n' >>"$src/Cargo.toml"

echo "$want_stamp" >"$stamp"
step "ready: $src"
