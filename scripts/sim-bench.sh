#!/usr/bin/env bash
# The simulator's speed, measured (a benchmark, not a test; figures vary with
# the machine's load, so read them side by side in one run):
#  1. one 300 s, 20 Mbit/s, one-flow scenario (LEDBAT++, 50 ms, 500 ms buffer):
#     CPU seconds, times faster than real time, events per CPU second, peak
#     memory;
#  2. the seed 000 Fig. 2 + Fig. 10 sweep (2 buffers x 12 RTTs x 8 seeds x 300 s):
#     wall time, runs per minute, peak memory.
# scripts/sim-profile.sh says where step 1's CPU goes.
#   scripts/sim-bench.sh [--quick]     (--quick: step 1 only)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build >/dev/null 2>&1 || make build
lab=target/release/lbe-lab
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sim-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
scripts/sim-solo-scenario.sh 300 > "$tmp/solo.toml"
/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$lab" run --sim "$tmp/solo.toml" --out "$tmp/solo" --quiet --no-report >/dev/null
read -r user sys kb < "$tmp/time"
events=$(python3 -c "import json;print(json.load(open('$tmp/solo/summary.json'))['events'])")
python3 - "$user" "$sys" "$kb" "$events" <<'PY'
import sys
user, sys_, kb, events = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cpu = user + sys_
print(f"one 300 s flow: {cpu:.2f} s CPU ({300/cpu:.0f}x real time), {events} events, {events/cpu/1e6:.2f} M events/CPU s, peak {kb/1024:.1f} MiB")
PY
if [ "${1:-}" = "--quick" ]; then
    exit 0
fi
start=$(date +%s.%N)
/usr/bin/time -f "%U %S %M" -o "$tmp/time2" "$lab" sweep sweeps/seed000-fig2-fig10.toml --out "$tmp/fig2" --quiet >/dev/null
end=$(date +%s.%N)
read -r user sys kb < "$tmp/time2"
python3 - "$start" "$end" "$user" "$sys" "$kb" "$(nproc)" <<'PY'
import sys
s, e, user, sys_, kb, cores = (float(x) for x in sys.argv[1:])
runs = 192
wall, cpu = e - s, user + sys_
print(f"seed 000 Fig. 2 + Fig. 10 sweep: {runs} runs of 300 s in {wall:.0f} s wall, {cpu:.0f} s CPU "
      f"({runs/wall*60:.0f} runs/min; {cpu/cores:.0f} s on {cores:.0f} otherwise idle cores), peak {kb/1024:.1f} MiB")
PY
