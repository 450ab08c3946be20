#!/usr/bin/env bash
# `make install`: copies every binary of the workspace (each `bin` target
# cargo metadata lists: quic-bulk, lbe-netem, lbe-lab, h3-serve, h3-fetch,
# qlog-analysis, lbe-fuzz, ...) from the release build into
# $DESTDIR$PREFIX/bin. `make install` builds first (`make build`).
#
#   PREFIX=/usr/local DESTDIR= scripts/install.sh
set -euo pipefail

say() { printf 'install: %s\n' "$*" >&2; }

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prefix=${PREFIX:-/usr/local}
case "$prefix" in
    /*) ;;
    *) say "error: PREFIX must be an absolute path, got '$prefix'"; exit 1 ;;
esac
bindir="${DESTDIR:-}$prefix/bin"

# One line per binary: its name, then the target directory it is built in.
listing=$(${CARGO:-cargo} metadata --no-deps --format-version 1 | python3 -c '
import json, sys
m = json.load(sys.stdin)
members = set(m["workspace_members"])
for p in m["packages"]:
    if p["id"] in members:
        for t in p["targets"]:
            if "bin" in t["kind"]:
                print(t["name"])
print("@" + m["target_directory"])
')
target_dir=$(printf '%s\n' "$listing" | sed -n 's/^@//p')
bins=$(printf '%s\n' "$listing" | grep -v '^@' | sort)
[ -n "$bins" ] || { say "error: cargo metadata lists no binaries"; exit 1; }

mkdir -p "$bindir" || { say "error: cannot create $bindir"; exit 1; }
for b in $bins; do
    src="$target_dir/release/$b"
    [ -x "$src" ] || { say "error: $src is missing; run make build first"; exit 1; }
    install -m 0755 "$src" "$bindir/$b" || { say "error: cannot install $b into $bindir"; exit 1; }
    say "$bindir/$b"
done
