#!/usr/bin/env bash
# runs every scenario of scenarios/ledbatpp-profiles-realtime/ (or those
# given) through `lbe-lab run` (lbe-netem, ~1x real time), once for each of
# ledbatpp:profile=draft, seed and full (the files are written for
# profile=full; the profile is substituted), one run at a time, and prints
# the table of bars (docs/ledbatpp-profiles.md).
#
#   scripts/ledbatpp-profiles-realtime.sh [OUT_DIR] [SCENARIO.toml...]   (default runs/ledbatpp-profiles-realtime)
#
# About 31 minutes for all ten scenarios and three profiles. PROFILES="full"
# runs one profile only. Each run's qlogs, summary.json and report.html are
# in OUT_DIR/NAME-PROFILE/; the table is also written to OUT_DIR/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/ledbatpp-profiles-realtime}
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(scenarios/ledbatpp-profiles-realtime/*.toml)
profiles=${PROFILES:-draft seed full}
cargo build --release -q -p lbe-lab || { echo "build failed" >&2; exit 1; }
mkdir -p "$out"

for s in "${scenarios[@]}"; do
    name=$(basename "$s" .toml)
    for p in $profiles; do
        dir="$out/$name-$p"
        mkdir -p "$dir"
        sed "s/ledbatpp:profile=full/ledbatpp:profile=$p/g" "$s" >"$dir.toml"
        echo "== $(date -u +%H:%M:%S) $name $p" >&2
        target/release/lbe-lab run "$dir.toml" --out "$dir" --quiet >/dev/null ||
            echo "$name $p: run failed" >&2
    done
done

python3 - "$out" "$profiles" "${scenarios[@]}" <<'PY' | tee "$out/table.md"
import json, os, sys
out, profiles, scenarios = sys.argv[1], sys.argv[2].split(), sys.argv[3:]

def cell(name, s):
    flows = s["flows"]
    g = [f["goodput_bps"] for f in flows]
    total = sum(g) or 1.0
    q = flows[0]["queuing_delay_ms"]["mean"]
    u = s.get("utilization_of_max")
    jain = s.get("jain_index")
    if name.startswith("alone"):
        return f"{u:.3f}; {q:.1f} ms" if q is not None else f"{u:.3f}"
    if name.startswith("loss"):
        return f"{g[0] / 1e6:.2f} Mbit/s"
    if name == "vs-cubic-buffer30":
        return f"{g[1] / g[0]:.1f} ×" if g[0] > 0 else "∞"
    if name.startswith("vs-cubic"):
        return f"{g[1] / total:.3f}"
    if name.startswith("vs-bbr2"):
        return f"{g[0] / total:.3f}"
    if name in ("pair-rtt20", "four"):
        return f"{jain:.3f}"
    if name.startswith("cubic-stops"):
        return f"{u:.3f}"
    return f"{u:.3f}"

bars = {
    "alone-rtt50": "alone 50 ms: utilization_of_max ≥ 0.97; mean queue ≤ 60 ms",
    "alone-rtt300": "alone 300 ms: the same",
    "alone-rtt50-buffer30": "alone 50 ms, 30 ms buffer: utilization_of_max, not below draft",
    "loss-rtt300": "1 % loss, 300 ms: goodput ≥ 2 × draft",
    "vs-cubic": "then CUBIC from 10 s, 50 ms: CUBIC's share ≥ 0.95",
    "vs-cubic-buffer30": "then CUBIC, 30 ms buffer: CUBIC ≥ 5 × LEDBAT++",
    "pair-rtt20": "two flows 10 s apart, 20 ms: Jain ≥ 0.95 over [40 s, 100 s]",
    "four": "four flows 10 s apart, 50 ms: Jain ≥ 0.9 over [90 s, 150 s]",
    "cubic-stops": "CUBIC from 10 s to 30 s: utilization_of_max over [32 s, 35 s] (≥ 0.9 within 2 s)",
    "vs-bbr2": "then BBRv2 (paced) from 10 s: LEDBAT++'s share (≤ 0.2 wanted)",
}
print("| real time (`scenarios/ledbatpp-profiles-realtime/NAME.toml`) | " + " | ".join(profiles) + " |")
print("|---|" + "---|" * len(profiles))
for path in scenarios:
    name = os.path.basename(path)[:-5]
    cells = []
    for p in profiles:
        try:
            s = json.load(open(os.path.join(out, f"{name}-{p}", "summary.json")))
            cells.append(cell(name, s))
        except (OSError, KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            cells.append(f"– ({type(e).__name__})")
    print(f"| {bars.get(name, name)} (`{name}`) | " + " | ".join(cells) + " |")
PY
