#!/usr/bin/env bash
# Measures a lab table's figures in real time: runs each scenario through
# lbe-netem (`lbe-lab run`, with --baseline when it has workload flows),
# RUNS times one after another into target/lab/<scenario>/run-K/, and
# prints its `[[scenario]]` entry for docs/data/NAME.lab.toml (the mean of
# the runs that finished, `lbe-lab lab-figures`; a failed run is reported
# with its log's last line, and the exit status is 1). Run it on an
# otherwise idle machine: the emulator's timers and the endpoints share
# its cores.
#
#   scripts/lab-runs.sh [--runs N] [--drop-qlogs] SCENARIO...
#                                              (paths under scenarios/)
#
# A real run always writes its qlogs: at 1 Gbit/s about 4 GB a run.
# --drop-qlogs deletes each run's qlog/ once its summary.json is written.
#
# LBE_LAB=PATH runs that lbe-lab binary and builds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${LBE_LAB:-target/release/lbe-lab}
runs=1
drop=0
failed=0
files=()
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --drop-qlogs) drop=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "lab-runs: unknown option '$1' (--help)" >&2; exit 2 ;;
        *) files+=("$1"); shift ;;
    esac
done
if [ ${#files[@]} -eq 0 ]; then
    echo "lab-runs: name at least one scenario under scenarios/ (--help)" >&2
    exit 2
fi
if [ -z "${LBE_LAB:-}" ]; then
    make -s quiche >/dev/null
    cargo build --release -q -p lbe-lab --bins
fi
for f in "${files[@]}"; do
    rel=${f#scenarios/}
    [ -f "scenarios/$rel" ] || { echo "lab-runs: no scenarios/$rel" >&2; exit 2; }
    baseline=()
    if grep -qE '^kind = "(web|ping|video|cbr)"' "scenarios/$rel"; then baseline=(--baseline); fi
    dirs=()
    for k in $(seq 1 "$runs"); do
        dir=target/lab/${rel%.toml}/run-$k
        rm -rf "$dir" "$dir.log"
        mkdir -p "$(dirname "$dir")"
        echo "lab-runs: $rel, run $k of $runs ($(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg))" >&2
        if "$lab" run "scenarios/$rel" --out "$dir" --no-report "${baseline[@]}" >"$dir.log" 2>&1; then
            dirs+=("$dir")
            [ "$drop" = 0 ] || rm -rf "$dir/qlog" "$dir/baseline/qlog"
        else
            echo "lab-runs: $rel, run $k failed: $(tail -1 "$dir.log") (all of it: $dir.log)" >&2
            failed=1
        fi
    done
    [ ${#dirs[@]} -gt 0 ] || continue
    echo "# $(date -u +%F), lbe-lab at $(git rev-parse --short HEAD)"
    "$lab" lab-figures --scenario "$rel" "${dirs[@]}"
    echo
done
exit "$failed"
