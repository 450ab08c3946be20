#!/usr/bin/env bash
# Paced against unpaced sending, one flow alone through lbe-netem:
# 20 Mbit/s, 50 ms base RTT, 500 ms and 30 ms buffers, for each controller,
# 30 s per run (figures over 5-30 s). Prints a Markdown table.
#
#   scripts/pacing-table.sh [OUT_DIR] [CC...]     (default runs/pacing; bbr2 cubic ledbatpp)
#
# Columns: utilisation = goodput / link rate (summary.json); sender losses
# (quiche's lost packets, summary.json); link drops = datagrams the
# bottleneck's buffer dropped / datagrams that arrived (netem-stats.jsonl);
# queue = queuing delay from the sender's RTT samples (qlog-analysis: RTT
# minus the flow's minimum RTT), mean and p95; netem queue = the
# emulator's own time-averaged queue, for comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/pacing}
shift || true
ccs=("$@")
[ ${#ccs[@]} -gt 0 ] || ccs=(bbr2 cubic ledbatpp)
make -s build >/dev/null || { echo "build failed" >&2; exit 1; }
mkdir -p "$out"

runs=()
for cc in "${ccs[@]}"; do
    for buffer in 500ms 30ms; do
        for pacing in true false; do
            name="$cc-buffer$buffer-pacing-$pacing"
            cat >"$out/$name.toml" <<TOML
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "$buffer"
[analysis]
from = "5s"
to = "30s"
[[flow]]
cc = "$cc"
start = "0s"
stop = "30s"
pacing = $pacing
TOML
            echo "== $name" >&2
            target/release/lbe-lab run "$out/$name.toml" --out "$out/$name" --quiet >/dev/null
            runs+=("$name")
        done
    done
done

python3 - "$out" "${runs[@]}" <<'PY'
import json, os, sys
out, runs = sys.argv[1], sys.argv[2:]
print("| cc | buffer | pacing | utilisation | sender lost pkts | link drops | queue mean (ms) | queue p95 (ms) | netem queue mean (ms) |")
print("|---|---|---|---|---|---|---|---|---|")
for name in runs:
    cc, buffer, pacing = name.split("-", 2)
    d = os.path.join(out, name)
    s = json.load(open(os.path.join(d, "summary.json")))
    f = s["flows"][0]
    lo, hi = s["window"]["from_s"], s["window"]["to_s"]
    arrived = drops = 0
    queue = []
    for line in open(os.path.join(d, "netem-stats.jsonl")):
        st = json.loads(line)
        if lo < st["t_s"] <= hi:
            arrived += st["down"]["arrived_packets"]
            drops += st["down"]["drops_buffer"]
            queue.append(st["down"]["queue_ms_mean"])
    q = f["queuing_delay_ms"]
    fmt = lambda v: "-" if v is None else f"{v:.1f}"
    print(f"| {cc} | {buffer[len('buffer'):]} | {pacing.split('-')[1]} | {s['utilization']:.3f} "
          f"| {f['lost_packets']} | {100 * drops / max(arrived, 1):.2f} % "
          f"| {fmt(q['mean'])} | {fmt(q['p95'])} | {fmt(sum(queue) / len(queue) if queue else None)} |")
PY
