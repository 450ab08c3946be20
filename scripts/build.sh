#!/usr/bin/env bash
# Builds release targets with cargo and says how far along it is: which
# packages, how many crates of how many are compiled, how long it has taken,
# and when the one long step runs (BoringSSL's cmake build inside boring-sys,
# a few minutes on two cores with nothing to show for it, in the build of
# scripts/boringssl.sh; every other build only makes boring-sys's bindings). cargo's own
# progress bar is only drawn on a terminal; this works in a CI log too.
#
#   scripts/build.sh (--workspace | PACKAGE...) [-- CARGO_BUILD_ARGS...]
#       e.g. scripts/build.sh quic-bulk lbe-lab -- --bins
#
# Errors and warnings are cargo's own (rendered as usual on stderr).
# BUILD_CWD=DIR runs cargo from DIR (the manifest stays the workspace's):
# scripts/boringssl.sh builds from outside the repository so that
# .cargo/config.toml is not read.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "${BUILD_CWD:-$root}"
manifest=(--manifest-path "$root/Cargo.toml")
cargo=${CARGO:-cargo}

scope=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case "$1" in
        --workspace) scope+=(--workspace) ;;
        -*) echo "build: error: unknown option '$1' (usage: build.sh (--workspace | PACKAGE...) [-- CARGO_BUILD_ARGS...])" >&2; exit 2 ;;
        *) scope+=(-p "$1") ;;
    esac
    shift
done
[ "${1:-}" = "--" ] && shift
[ ${#scope[@]} -gt 0 ] || { echo "build: error: no package named (usage: build.sh (--workspace | PACKAGE...) [-- CARGO_BUILD_ARGS...])" >&2; exit 2; }

# The packages the build compiles, counted from cargo's dependency tree
# (normal and build dependencies of the packages asked for): the "of N".
# A proc-macro compiled for the host and a crate for the target are one
# package here, so the count is close, not exact.
total=$("$cargo" tree "${manifest[@]}" "${scope[@]}" -e normal,build --prefix none -f '{p}' 2>/dev/null \
    | sed 's/ (\*)$//' | sort -u | grep -c . || true)
[ "${total:-0}" -gt 0 ] || total='?'

start=$SECONDS
say() { printf 'build: %s\n' "$*" >&2; }
say "cargo build --release ${scope[*]} $* (about $total crates; the first build on two cores takes minutes)"

done_count=0
last_report=$SECONDS
boringssl=idle
"$cargo" build --release --message-format=json-render-diagnostics "${manifest[@]}" "${scope[@]}" "$@" | {
    while IFS= read -r line; do
        case "$line" in
            *'"reason":"compiler-artifact"'*)
                case "$line" in
                    *'"kind":["custom-build"]'*)
                        case "$line" in
                            *'boring-sys@'*)
                                boringssl=running
                                if [ -n "${BORING_BSSL_INSTALL_DIR:-}" ]; then
                                    say "boring-sys: building BoringSSL with cmake (the longest step; $((SECONDS - start)) s so far)"
                                else
                                    say "boring-sys: its bindings, on target/boringssl ($((SECONDS - start)) s so far)"
                                fi ;;
                        esac ;;
                    *)
                        done_count=$((done_count + 1))
                        if [ $((SECONDS - last_report)) -ge 15 ]; then
                            name=$(printf '%s' "$line" | sed -n 's/.*"target":{[^}]*"name":"\([^"]*\)".*/\1/p')
                            of=" of about $total"
                            [ "$total" = '?' ] || [ "$done_count" -lt "$total" ] || of=''
                            say "$done_count$of crates compiled ($((SECONDS - start)) s), last: ${name:-?}"
                            last_report=$SECONDS
                        fi ;;
                esac ;;
            *'"reason":"build-script-executed"'*'boring-sys@'*)
                [ "$boringssl" = running ] && say "boring-sys: done ($((SECONDS - start)) s so far)"
                boringssl=done ;;
            *'"reason":"build-finished"'*'"success":true'*)
                say "done: $done_count crates compiled in $((SECONDS - start)) s" ;;
        esac
    done
}
exit "${PIPESTATUS[0]}"
