#!/usr/bin/env bash
# Per-ACK cost of each controller as a ratio to `fixed`, measured side by
# side in one run of the criterion bench (cc/benches/per_ack.rs): the bar
# of docs/ledbatpp-full.md ("Per-ACK cost") is draft and profile=full each
# at most 4.5x fixed. Runs the bench ROUNDS times (default 3) and prints,
# per round, each controller's median ns per ACK and its ratio to that
# round's fixed; then the lowest and highest ratio over the rounds.
# Absolute nanoseconds move with the machine; the ratio is the figure.
#
#   scripts/per-ack-ratios.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
case $rounds in
    '' | *[!0-9]* | 0) echo "per-ack-ratios: ROUNDS must be a whole number from 1, got '$rounds'" >&2; exit 2 ;;
esac
cargo bench -q -p lbe-cc --bench per_ack --no-run >/dev/null 2>&1 ||
    { echo "per-ack-ratios: the bench does not build (cargo bench -p lbe-cc --bench per_ack)" >&2; exit 1; }
all=$(mktemp)
trap 'rm -f "$all"' EXIT
for r in $(seq 1 "$rounds"); do
    cargo bench -q -p lbe-cc --bench per_ack -- --warm-up-time 1 --measurement-time 3 >/dev/null 2>&1
    python3 - "$r" >>"$all" <<'EOF'
import json, os, sys
base = "target/criterion/per_ack"
median = {}
for d in sorted(os.listdir(base)):
    est = os.path.join(base, d, "new", "estimates.json")
    meta = os.path.join(base, d, "new", "benchmark.json")
    if os.path.exists(est) and os.path.exists(meta):
        name = json.load(open(meta))["function_id"]
        median[name] = json.load(open(est))["median"]["point_estimate"]
fixed = median["fixed"]
for name, ns in median.items():
    print(f"{sys.argv[1]}\t{name}\t{ns:.2f}\t{ns / fixed:.2f}")
EOF
done
echo "round  controller                      ns/ACK  x fixed"
awk -F'\t' '{ printf "%5s  %-30s %7s  %6s\n", $1, $2, $3, $4 }' "$all"
echo
echo "over $rounds round(s), x fixed:"
awk -F'\t' '$2 != "fixed" {
    if (!($2 in lo) || $4 < lo[$2]) lo[$2] = $4
    if (!($2 in hi) || $4 > hi[$2]) hi[$2] = $4
} END { for (n in lo) printf "  %-30s %s-%s\n", n, lo[n], hi[n] }' "$all" | sort
