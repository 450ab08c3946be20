#!/usr/bin/env bash
# Re-measures the tables in docs/ that are generated from data: for each
# table described in docs/data/NAME.toml, runs its sweeps in the simulator
# (`lbe-lab sweep`, into target/paper/NAME/<sweep>/), writes
# docs/data/NAME.csv and NAME.measured.toml from their results.json
# (`lbe-lab docs-data`, as NAME.toml's [rows] say), then regenerates every
# table (`lbe-lab docs-tables`). docs/testing.md has the CPU it takes.
#
#   scripts/paper-figures.sh [--only NAME]... [--jobs N] [--shard I/N]
#                            [--no-run] [--list]
#
#   --only NAME  this table only (repeatable; default: every table)
#   --jobs N     simulations in parallel (default: lbe-lab's, every core)
#   --shard I/N  run shard I of N of each sweep (into <sweep>.shard-I-of-N/)
#                and stop there: a cluster runs the shards
#                (sweeps/cluster/), `lbe-lab merge` puts each sweep back
#                into target/paper/NAME/<sweep>/, then --no-run
#   --no-run     use the results already in target/paper/NAME/<sweep>/,
#                measured at the commit and date in their measured-at file
#                (written by a run of this script; for merged shards, write
#                "COMMIT YYYY-MM-DD" into it by hand)
#   --list       each table, its runs and its sweeps; runs nothing
#
# A table of the lab's figures beside the simulator's (docs/data/NAME.toml
# with `lab = FILE`: fidelity, bbr2, links-that-change-realtime,
# foreground-realtime, ledbatpp-profiles-realtime) has no
# sweep: `lbe-lab docs-data NAME` simulates the scenarios FILE lists and
# writes its data; the lab's real-time figures in FILE are measured by
# hand (scripts/lab-runs.sh).
#
# After the tables it redraws the figures drawn from docs/data/
# (scripts/lbe-vs-bbr-heatmap.py: docs/lbe-vs-bbr-heatmap.svg;
# scripts/seed000-figures.py: docs/seeds/seed000-*.svg).
#
# A sweep that several tables list runs once: the first table's results
# serve the others (target/paper/OTHER/<sweep> is a link to them).
#
# Progress, on stderr: the table and the sweep, its runs done of its runs,
# all runs done of all runs, the CPU used so far and an estimate of the
# CPU to the end (CPU so far per run done, times the runs left).
#
# LBE_LAB=PATH runs that lbe-lab binary and builds nothing (a machine
# with a prebuilt binary; the commit recorded is still this tree's HEAD, so
# build it from HEAD).
#
# The former use is kept: `scripts/paper-figures.sh OUT SWEEP.toml...`
# runs those sweeps (default: every sweeps/*.toml) into OUT/<sweep>/ with
# their figures (SVG + CSV) and changes nothing in docs/.
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${LBE_LAB:-target/release/lbe-lab}

build() {
    if [ -n "${LBE_LAB:-}" ]; then
        [ -x "$LBE_LAB" ] || { echo "paper-figures: LBE_LAB=$LBE_LAB is not an executable" >&2; exit 2; }
        return
    fi
    make -s quiche >/dev/null
    cargo build --release -q -p lbe-lab --bins
}

if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
    out=$1
    shift
    sweeps=("$@")
    if [ ${#sweeps[@]} -eq 0 ]; then
        sweeps=(sweeps/*.toml)
    fi
    build
    mkdir -p "$out"
    total_start=$SECONDS
    for sweep in "${sweeps[@]}"; do
        name=$(basename "$sweep" .toml)
        start=$SECONDS
        "$lab" sweep "$sweep" --out "$out/$name" --quiet
        echo "paper-figures: $name: $((SECONDS - start)) s; figures in $out/$name/figures/"
    done
    echo "paper-figures: all in $((SECONDS - total_start)) s"
    exit 0
fi

only=()
jobs=()
shard=
run=1
list=0
while [ $# -gt 0 ]; do
    case $1 in
        --only) only+=("$2"); shift 2 ;;
        --jobs) jobs=(--jobs "$2"); shift 2 ;;
        --shard) shard=$2; shift 2 ;;
        --no-run) run=0; shift ;;
        --list) list=1; shift ;;
        -h|--help) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "paper-figures: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done

build
if [ "$list" = 1 ]; then
    printf '%-28s %6s %-9s %s\n' table runs baseline sweeps
    "$lab" docs-tables --list | while IFS=$'\t' read -r name runs baseline sweeps; do
        printf '%-28s %6s %-9s %s\n' "$name" "$runs" "$baseline" "$sweeps"
    done
    exit 0
fi

# The tables (NAME, runs, "sweep:runs ...") to measure.
mapfile -t tables < <("$lab" docs-tables --list)
if [ ${#only[@]} -gt 0 ]; then
    picked=()
    for o in "${only[@]}"; do
        found=
        for t in "${tables[@]}"; do
            if [ "${t%%$'\t'*}" = "$o" ]; then picked+=("$t"); found=1; fi
        done
        if [ -z "$found" ]; then
            echo "paper-figures: no table '$o' (scripts/paper-figures.sh --list)" >&2
            exit 2
        fi
    done
    tables=("${picked[@]}")
fi

# A sweep of N runs has, in shard I/N', the runs numbered I modulo N'.
runs_in_shard() {
    local n=$1
    if [ -z "$shard" ]; then echo "$n"; return; fi
    local i=${shard%/*} c=${shard#*/}
    if [ "$i" -ge "$n" ]; then echo 0; else echo $(((n - i + c - 1) / c)); fi
}

# A sweep that two tables list (with the same `baseline`) runs once, for
# the first; the others' target/paper/NAME/<sweep> is a link to its results.
all_runs=0
declare -A counted=()
for t in "${tables[@]}"; do
    IFS=$'\t' read -r _ _ baseline sweeps <<<"$t"
    for s in $sweeps; do
        [ -n "${counted[${s%:*} $baseline]:-}" ] && continue
        counted[${s%:*} $baseline]=1
        all_runs=$((all_runs + $(runs_in_shard "${s##*:}")))
    done
done
declare -A ran=()

tick=$(getconf CLK_TCK)
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
# child_cpu: the CPU (s) of the children waited for since the build (every
# sweep's lbe-lab, and the few tools this loop runs), from `times`' second
# line; `times` runs in this shell, not in a $(...) subshell, which has
# children of its own.
child_cpu=0
base_cpu=
update_child_cpu() {
    times >"$times_file"
    local all
    all=$(sed -n 2p "$times_file" | awk '{
        s = 0
        for (f = 1; f <= 2; f++) { split($f, a, /[ms]/); s += a[1] * 60 + a[2] }
        printf "%.1f", s
    }')
    base_cpu=${base_cpu:-$all}
    child_cpu=$(awk -v a="$all" -v b="$base_cpu" 'BEGIN { printf "%.1f", a - b }')
}
update_child_cpu
# CPU (s) of running process $1 so far, from /proc/$1/stat (utime + stime).
process_cpu() {
    awk -v t="$tick" '{ sub(/.*\) /, ""); printf "%.1f", ($12 + $13) / t }' "/proc/$1/stat" 2>/dev/null || echo 0
}

done_before=0
commit=$(git rev-parse --short HEAD)
# lbe-lab built from a tree with uncommitted changes in what it compiles.
if ! git diff --quiet HEAD -- apps crates cc src patches Cargo.lock Cargo.toml; then
    commit="$commit-dirty"
fi
date=$(date -u +%F)
start=$SECONDS
k=0
if [ "$run" = 1 ]; then
    echo "paper-figures: ${#tables[@]} tables, $all_runs runs${shard:+ (shard $shard)}" >&2
fi
for t in "${tables[@]}"; do
    k=$((k + 1))
    IFS=$'\t' read -r name _ baseline sweeps <<<"$t"
    # A table of the lab's figures (docs/data/NAME.toml's `lab`, e.g.
    # fidelity): no sweep; `lbe-lab docs-data` simulates its scenarios.
    if [ "$baseline" = lab ]; then
        if [ "$run" = 0 ] || [ -n "$shard" ]; then
            echo "paper-figures: [$k/${#tables[@]} $name] simulated by lbe-lab docs-data itself, not with --no-run or --shard: skipped" >&2
            continue
        fi
        echo "paper-figures: [$k/${#tables[@]} $name] lbe-lab docs-data $name (simulates the lab's scenarios)" >&2
        "$lab" docs-data "$name" "${jobs[@]}" --commit "$commit" --date "$date"
        update_child_cpu
        continue
    fi
    # A table whose data needs the workloads alone (docs/data/NAME.toml's
    # `baseline = true`).
    baseline_flag=()
    [ "$baseline" = baseline ] && baseline_flag=(--baseline)
    dirs=()
    for s in $sweeps; do
        sweep=${s%:*}
        n=$(runs_in_shard "${s##*:}")
        dir=target/paper/$name/$(basename "$sweep" .toml)
        if [ -n "$shard" ]; then
            dir=$dir.shard-${shard%/*}-of-${shard#*/}
        fi
        dirs+=("$dir")
        [ "$run" = 1 ] || continue
        first=${ran[$sweep $baseline]:-}
        if [ -n "$first" ]; then
            rm -rf "$dir"
            mkdir -p "$(dirname "$dir")"
            ln -s "$(realpath --relative-to="$(dirname "$dir")" "$first")" "$dir"
            echo "paper-figures: [$k/${#tables[@]} $name] $sweep: the runs of $first" >&2
            continue
        fi
        ran[$sweep $baseline]=$dir
        [ -L "$dir" ] && rm "$dir"
        mkdir -p "$dir"
        log=$dir/sweep.log
        "$lab" sweep "$sweep" --out "$dir" "${jobs[@]}" "${baseline_flag[@]}" ${shard:+--shard "$shard"} 2>"$log" >/dev/null &
        pid=$!
        last=
        last_at=$SECONDS
        while kill -0 "$pid" 2>/dev/null; do
            sleep 2
            done_now=$(grep -oE '[0-9]+/[0-9]+ runs done' "$log" | tail -1 | cut -d/ -f1 || true)
            done_now=${done_now:-0}
            update_child_cpu
            cpu=$(awk -v a="$child_cpu" -v b="$(process_cpu "$pid")" 'BEGIN { printf "%.1f", a + b }')
            all_done=$((done_before + done_now))
            left=$(awk -v c="$cpu" -v d="$all_done" -v l="$((all_runs - all_done))" \
                'BEGIN { if (d > 0) printf "about %.0f s", c / d * l; else printf "unknown until a run is done" }')
            line="paper-figures: [$k/${#tables[@]} $name] $sweep: $done_now/$n runs; all: $all_done/$all_runs runs, CPU ${cpu} s, to the end: $left of CPU"
            # A line when a run is done, else every 30 s (the CPU moves
            # every poll, so it is not what counts as a change).
            if [ "$all_done" != "$last" ] || [ $((SECONDS - last_at)) -ge 30 ]; then
                echo "$line" >&2
                last=$all_done
                last_at=$SECONDS
            fi
        done
        if ! wait "$pid"; then
            echo "paper-figures: $sweep failed; its log ($log):" >&2
            tail -20 "$log" >&2
            exit 1
        fi
        echo "$commit $date" >"$dir/measured-at"
        done_before=$((done_before + n))
        update_child_cpu
        echo "paper-figures: [$k/${#tables[@]} $name] $sweep: $n runs done; all: $done_before/$all_runs runs, CPU $child_cpu s, $((SECONDS - start)) s of wall time" >&2
    done
    if [ -n "$shard" ]; then
        continue
    fi
    # The commit and day the results were measured at (with --no-run, an
    # earlier run's).
    if [ ! -f "${dirs[0]}/measured-at" ]; then
        echo "paper-figures: no ${dirs[0]}/measured-at (\"COMMIT YYYY-MM-DD\" of the runs)" >&2
        exit 1
    fi
    read -r at_commit at_date <"${dirs[0]}/measured-at"
    "$lab" docs-data "$name" "${dirs[@]}" --commit "$at_commit" --date "$at_date"
done
if [ -n "$shard" ]; then
    echo "paper-figures: shard $shard done; merge each sweep's shards into target/paper/NAME/<sweep>/ (lbe-lab merge), then scripts/paper-figures.sh --no-run" >&2
    exit 0
fi
"$lab" docs-tables
# The figures drawn from docs/data/ (SVG, committed beside their pages).
python3 scripts/lbe-vs-bbr-heatmap.py >/dev/null
python3 scripts/seed000-figures.py >/dev/null
if [ "$run" = 1 ]; then
    update_child_cpu
    echo "paper-figures: $all_runs runs, CPU $child_cpu s, $((SECONDS - start)) s of wall time" >&2
fi
