#!/usr/bin/env bash
# Regenerates the seeds' figures in the simulator: every sweeps/*.toml (or the
# ones named) into OUT/<sweep>/ with results.csv, results.json and figures/
# (SVG + CSV, the seed's numbers beside ours where the seed states them).
#
#   scripts/paper-figures.sh [OUT] [SWEEP.toml...]     (default OUT: paper-figures)
#
# The docs' figures were made on the simulator's former re-stated engine
# (quiche's recovery re-stated around the real controllers, removed on
# 2026-11-27); the simulator now runs quiche itself, up to seven times the
# CPU (docs/fidelity.md has the rows re-measured on it).
#
# Builds what it needs first. Prints each sweep's runs and time, and where
# its figures are. docs/seeds/<seed>.md says, figure by figure, which sweep
# makes it, the seed's numbers and ours. One sweep at a time, each on every
# core (`--jobs` is lbe-lab's default); on a cluster, run a sweep as shards
# with sweeps/cluster/ instead. The sweeps' CPU scales with runs x duration
# x rate: a 300 s, 20 Mbit/s flow takes 7.5-9.3 s of one core on this 2-core
# machine (scripts/sim-bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-paper-figures}
shift || true
sweeps=("$@")
if [ ${#sweeps[@]} -eq 0 ]; then
    sweeps=(sweeps/*.toml)
fi
make -s build >/dev/null 2>&1 || make build
lab=target/release/lbe-lab
mkdir -p "$out"
total_start=$SECONDS
for sweep in "${sweeps[@]}"; do
    name=$(basename "$sweep" .toml)
    start=$SECONDS
    "$lab" sweep "$sweep" --out "$out/$name" --quiet
    echo "paper-figures: $name: $(( SECONDS - start )) s; figures in $out/$name/figures/"
done
echo "paper-figures: all in $(( SECONDS - total_start )) s"
