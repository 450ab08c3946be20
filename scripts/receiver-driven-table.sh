#!/usr/bin/env bash
# The receiver-driven LEDBAT++ table in real time (docs/receiver-driven.md): runs scenarios/receiver-driven/*.toml (or those
# given) one after another through lbe-netem, each into OUT/<name>/, and
# prints the table: per LBE mode (receiver-only, sender-only, both, none)
# and server (h3-serve, quiche-stock, aioquic), the download's goodput
# alone on the 500 ms buffer against a normal download from the same
# server, the bottleneck's mean queue then, and CUBIC's share of the two
# flows' goodput with 500 ms and 30 ms buffers.
#
#   scripts/receiver-driven-table.sh [OUT_DIR] [SCENARIO.toml...]   (default runs/receiver-driven)
#   TABLE_ONLY=1 scripts/receiver-driven-table.sh [OUT_DIR]          (print from earlier runs)
#
# About 50 s per scenario, 18 scenarios: ~16 minutes. A scenario that
# fails is reported and skipped (its cells print "–"); the table is
# printed from whatever OUT_DIR holds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/receiver-driven}
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(scenarios/receiver-driven/*.toml)

if [ -z "${TABLE_ONLY:-}" ]; then
    cargo build --release -q -p lbe-lab || { echo "build failed" >&2; exit 1; }
    for s in "${scenarios[@]}"; do
        name=$(basename "$s" .toml)
        echo "== $name ($(date -u +%H:%M:%S))" >&2
        rm -rf "${out:?}/$name"
        target/release/lbe-lab run "$s" --out "$out/$name" --quiet --no-report >/dev/null \
            || echo "!! $name failed" >&2
    done
fi

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]

def load(name):
    p = os.path.join(out, name, "summary.json")
    return json.load(open(p)) if os.path.exists(p) else None

def flow(s, name):
    return next(f for f in s["flows"] if f["name"] == name) if s else None

def f(v, spec):
    return "–" if v is None else format(v, spec)

MODES = [("receiver", "receiver-only"), ("sender", "sender-only"),
         ("both", "both"), ("none", "none")]
SERVERS = ["h3-serve", "quiche-stock", "aioquic"]
# A normal download from h3-serve is quiche-stock's (h3-serve switches
# only background connections).
NORMAL = {"h3-serve": "quiche-stock", "quiche-stock": "quiche-stock", "aioquic": "aioquic"}

print("| LBE | server | alone 500 ms: Mbit/s | of normal (bar ≥ 0.85) | mean queue ms (bar ≤ 75) "
      "| vs CUBIC 500 ms: CUBIC share (bar ≥ 0.9) | download / CUBIC Mbit/s "
      "| vs CUBIC 30 ms: CUBIC share | download / CUBIC Mbit/s |")
print("|---|---|---|---|---|---|---|---|---|")
for mode, label in MODES:
    for server in SERVERS:
        key = f"{server}-{mode}"
        alone = load(f"alone500-{key}")
        if alone is None and not any(load(f"{k}-{key}") for k in ("cubic500", "cubic30")):
            continue
        normal = load(f"alone500-{NORMAL[server]}-none")
        g = flow(alone, "download")["goodput_bps"] / 1e6 if alone else None
        n = flow(normal, "download")["goodput_bps"] / 1e6 if normal else None
        ratio = g / n if g is not None and n else None
        queue = alone.get("link_queue_ms", {}) if alone else {}
        queue = queue.get("mean") if queue else None
        cells = [label, server, f(g, ".2f"), f(ratio, ".3f") if mode != "none" else "1 (ref.)" if ratio else "–",
                 f(queue, ".0f")]
        for kind in ("cubic500", "cubic30"):
            s = load(f"{kind}-{key}")
            if s is None:
                cells += ["–", "–"]
                continue
            d = flow(s, "download")["goodput_bps"] / 1e6
            c = flow(s, "cubic")["goodput_bps"] / 1e6
            cells += [f(c / (c + d) if c + d > 0 else None, ".3f"), f"{d:.2f} / {c:.2f}"]
        print("| " + " | ".join(cells) + " |")
PY
