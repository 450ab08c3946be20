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
print(f"| scenario | flows: goodput (Mbit/s) | utilization | Jain | mean queue (ms) | seed |")
print("|---|---|---|---|---|---|")
for path in scenarios:
    name = os.path.basename(path)[:-5]
    seed = " ".join(l[1:].strip() for l in open(path) if l.startswith("#") and "Seed" in l)
    s = json.load(open(os.path.join(out, name, "summary.json")))
    flows = ", ".join(f"{f['name']} {f['cc']} {f['goodput_bps']/1e6:.2f}" for f in s["flows"])
    queue = "/".join(f"{f['queuing_delay_ms']['mean']:.0f}" for f in s["flows"] if f['queuing_delay_ms']['mean'] is not None)
    u = s.get("utilization"); j = s.get("jain_index")
    print(f"| {name} | {flows} | {u:.3f} | {j:.3f} | {queue} | {seed} |")
PY
