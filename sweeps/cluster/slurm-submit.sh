#!/bin/bash
# Submits a sweep to Slurm as a job array of N shards and a merge that runs
# when all of them succeeded:
#   sweeps/cluster/slurm-submit.sh SWEEP.toml OUT_DIR N
# OUT_DIR/merged/ then holds results.json, results.csv and figures/, the same
# as `lbe-lab sweep SWEEP.toml --out OUT_DIR/merged` on one machine.
# lbe-lab must be on PATH on the nodes (or set LBE_LAB to its path).
set -euo pipefail
if [ $# -ne 3 ]; then
    echo "usage: $0 SWEEP.toml OUT_DIR SHARDS" >&2
    exit 2
fi
sweep=$(realpath "$1")
out=$(realpath -m "$2")
shards=$3
here=$(dirname "$(realpath "$0")")
lab=${LBE_LAB:-lbe-lab}
mkdir -p "$out/logs"
"$lab" sweep "$sweep" --out "$out/check" --shard "0/1000000" --quiet >/dev/null   # fails early on a bad file
rm -rf "$out/check"
array=$(sbatch --parsable --array="0-$((shards - 1))" \
    --output="$out/logs/shard-%a.out" \
    --export=ALL,SWEEP="$sweep",OUT="$out",LBE_LAB="$lab" \
    "$here/slurm-sweep.sbatch")
sbatch --parsable --dependency="afterok:$array" --job-name=lbe-sweep-merge \
    --output="$out/logs/merge.out" \
    --wrap="$lab merge $out/shard-* --out $out/merged"
echo "submitted: shards $array (0-$((shards - 1))), then the merge into $out/merged"
