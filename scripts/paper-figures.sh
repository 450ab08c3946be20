#!/usr/bin/env bash
# Regenerates the seeds' figures in the simulator: every sweeps/*.toml (or the
# ones named) into OUT/<sweep>/ with results.csv, results.json and figures/
# (SVG + CSV, the seed's numbers beside ours where the seed states them).
#
#   scripts/paper-figures.sh [OUT] [SWEEP.toml...]     (default OUT: paper-figures)
#   ENGINE=auto scripts/paper-figures.sh ...           (the simulator's engine,
#                                                       lbe-lab sweep --engine)
#
# The docs' figures were made on the re-stated engine (`auto`, the default
# until 2026-11-26); the default now is quiche itself, up to seven times
# the CPU.
#
# Builds what it needs first. Prints each sweep's runs and time, and where
# its figures are. docs/seeds/<seed>.md says, figure by figure, which sweep
# makes it, the seed's numbers and ours. One sweep at a time, each on every
# core (`--jobs` is lbe-lab's default); on a cluster, run a sweep as shards
# with sweeps/cluster/ instead. CPU time measured on this 2-core machine
# (the engine of lbe-sim at commit 8200a57): a 200 s run of two flows at
# 10 Mbit/s takes about 1.5 s of one core (sweeps/seed004-table1.toml: 16
# runs, 24 s); the sweeps scale with runs x duration x rate.
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
    "$lab" sweep "$sweep" --out "$out/$name" --engine "${ENGINE:-quiche}" --quiet
    echo "paper-figures: $name: $(( SECONDS - start )) s; figures in $out/$name/figures/"
done
echo "paper-figures: all in $(( SECONDS - total_start )) s"
