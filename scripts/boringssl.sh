#!/usr/bin/env bash
# BoringSSL, built once for every build of the repository.
#
# boring-sys builds BoringSSL with cmake in its build script (about 2.5
# minutes on two cores). Cargo runs that build script again for every
# distinct set of features its build dependencies resolve to, and `make
# test`'s build (whose dev-dependencies enable other features of bindgen's
# dependencies) resolves them differently from `make demo`'s, so a fresh
# machine built BoringSSL twice, and the operator's project and the
# stock-quiche peer needed tricks of their own not to build it again.
#
# Instead, this script runs boring-sys's own build once, alone (`cargo build
# -p boring-sys`), with boring-sys's `BORING_BSSL_INSTALL_DIR`, which copies
# what it built into target/boringssl/{lib,include}. Every other build then
# takes it with boring-sys's `BORING_BSSL_PATH` (set in .cargo/config.toml,
# so plain `cargo` commands agree with make's): boring-sys only generates
# its bindings. The build is the crate's own, with the workspace's release
# profile: no flag of ours reaches cmake.
#
#   scripts/boringssl.sh    (a no-op when target/boringssl matches Cargo.lock)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo=${CARGO:-cargo}
dir="$root/target/boringssl"

# The boring-sys version Cargo.lock pins: a lock update rebuilds it.
version=$(awk '/^name = "boring-sys"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
[ -n "$version" ] || { echo "boringssl: error: Cargo.lock has no boring-sys" >&2; exit 1; }

if [ -f "$dir/lib/libcrypto.a" ] && [ -f "$dir/lib/libssl.a" ] \
    && [ -f "$dir/include/openssl/x509v3.h" ] \
    && [ "$(cat "$dir/boring-sys-version" 2>/dev/null)" = "$version" ]; then
    exit 0
fi

echo "boringssl: building BoringSSL once (boring-sys $version) into target/boringssl; every build then links it" >&2
mkdir -p "$root/target"
# A new, empty install directory each time (boring-sys requires it empty;
# its build script reruns when the variable's value changes, so a stale
# fresh unit cannot skip the install), moved into place when complete.
install=$(mktemp -d "$root/target/boringssl-install.XXXXXX")
trap 'rm -rf "$install"' EXIT
# The build must build BoringSSL, not take target/boringssl: the config's
# BORING_BSSL_PATH would apply to it (an [env] entry does not override a
# variable that is set, but an unset one is filled in), so the build runs
# from a directory outside the repository, where .cargo/config.toml is not
# read; the manifest path keeps the workspace, its lock and its target/.
env -u BORING_BSSL_PATH -u BORING_BSSL_INCLUDE_PATH \
    BORING_BSSL_INSTALL_DIR="$install" BUILD_CWD=/ CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" \
    CARGO="$cargo" "$root/scripts/build.sh" boring-sys
[ -f "$install/lib/libcrypto.a" ] && [ -f "$install/lib/libssl.a" ] \
    || { echo "boringssl: error: boring-sys's build left no libcrypto.a/libssl.a in $install/lib" >&2; exit 1; }
printf '%s\n' "$version" > "$install/boring-sys-version"
rm -rf "$dir"
chmod 755 "$install"
mv "$install" "$dir"
trap - EXIT
echo "boringssl: target/boringssl ready" >&2
