#!/usr/bin/env bash
# Runs every scenario in scenarios/ (or those given) one after another and
# prints a table of the figures next to what the seed reports.
#
#   scripts/run-scenarios.sh [OUT_DIR] [SCENARIO.toml...]    (default runs/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs}
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(scenarios/*.toml)
make -s build >/dev/null || { echo "build failed" >&2; exit 1; }

for s in "${scenarios[@]}"; do
    name=$(basename "$s" .toml)
    echo "== $name" >&2
    target/release/lbe-lab run "$s" --out "$out/$name" --quiet >/dev/null
done

python3 - "$out" "${scenarios[@]}" <<'PY'
import json, os, sys
out, scenarios = sys.argv[1], sys.argv[2:]
def fmt(v, spec):
    return "–" if v is None else format(v, spec)
print("| scenario | flows: goodput Mbit/s (share) | util. of link | util. of max goodput | Jain | mean / p95 queue (ms) | seed |")
print("|---|---|---|---|---|---|---|")
for path in scenarios:
    name = os.path.basename(path)[:-5]
    seed = " ".join(l[1:].strip() for l in open(path) if l.startswith("#") and "Seed" in l)
    s = json.load(open(os.path.join(out, name, "summary.json")))
    total = sum(f["goodput_bps"] for f in s["flows"]) or 1
    flows = ", ".join(
        f"{f['name']} {f['cc']} {f['goodput_bps']/1e6:.2f}"
        + (f" ({f['goodput_bps']/total:.3f})" if len(s["flows"]) > 1 else "")
        for f in s["flows"])
    queue = ", ".join(
        f"{fmt(f['queuing_delay_ms']['mean'], '.0f')}/{fmt(f['queuing_delay_ms']['p95'], '.0f')}"
        for f in s["flows"])
    print(f"| {name} | {flows} | {fmt(s.get('utilization'), '.3f')} "
          f"| {fmt(s.get('utilization_of_max'), '.3f')} | {fmt(s.get('jain_index'), '.3f')} "
          f"| {queue} | {seed} |")
PY
