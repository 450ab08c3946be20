#!/usr/bin/env bash
# Runs the LBE-vs-BBR grid (sweeps/lbe-vs-bbr-grid-rtt*.toml, docs/lbe-vs-bbr.md)
# in the simulator, seed 1 of every cell first, then seed 2, then seed 3: runs
# are numbered with the seed fastest, so shard I/3 of a file is its seed I+1.
# The buffers below 15 ms at 10 and 20 ms are in their own files, run after
# the others; each sweep is stopped after
# 15 minutes of wall time (a stopped sweep writes nothing). docs/lbe-vs-bbr.md's
# figures were made when the simulator ran the cubic points on its former
# re-stated engine, about a seventh of the CPU (the bbr2 points ran quiche
# itself, as every point now does).
# Each shard's results go to OUT/runs/seedN-<sweep>/ (one already written is
# skipped, so the script can be stopped and started again); /usr/bin/time
# prints the CPU each took. Then scripts/lbe-vs-bbr-tables.py prints the
# tables and writes OUT/lbe-share.csv and the heat map.
#
#   scripts/lbe-vs-bbr-grid.sh [OUT] [JOBS]     (default OUT: out/lbe-vs-bbr-grid, JOBS 1)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/lbe-vs-bbr-grid}
jobs=${2:-1}
lab=target/release/lbe-lab
mkdir -p "$out/runs"
sweeps=(sweeps/lbe-vs-bbr-grid-rtt{10,20,40,60,100,200}ms.toml
    sweeps/lbe-vs-bbr-grid-rtt{10,20}ms-small-buffers.toml)
for shard in 0 1 2; do
    for sweep in "${sweeps[@]}"; do
        name=$(basename "$sweep" .toml)
        dir="$out/runs/seed$((shard + 1))-$name"
        if [ -f "$dir/results.json" ]; then
            continue
        fi
        /usr/bin/time -f "$name seed $((shard + 1)): %U s user %S s sys %e s wall" \
            timeout 900 "$lab" sweep "$sweep" --out "$dir" --jobs "$jobs" --shard "$shard/3" --quiet ||
            echo "$name seed $((shard + 1)): stopped or failed" >&2
    done
done
python3 scripts/lbe-vs-bbr-tables.py "$out"
