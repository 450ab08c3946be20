#!/usr/bin/env bash
# Does the plug-in path cost anything? Runs the same loopback download with
# quiche's own CUBIC and with the LEDBAT++ plug-in, alternating, and prints
# each run's goodput and the ratio of medians (goal: ledbatpp/cubic >= 0.95).
#
#   scripts/bench-plugin-overhead.sh [BYTES] [ROUNDS]     (default 200MB, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
bytes=${1:-200MB}
rounds=${2:-5}
make -s build >/dev/null || { echo "build failed" >&2; exit 1; }
bin=target/release/quic-bulk

port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr=127.0.0.1:$port
"$bin" server --listen "$addr" --quiet &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
sleep 0.5

results=$(mktemp)
for r in $(seq 1 "$rounds"); do
    for cc in cubic ledbatpp; do
        g=$("$bin" client --connect "$addr" --cc "$cc" --bytes "$bytes" --json \
            | python3 -c 'import json,sys; print(json.load(sys.stdin)["goodput_bps"])')
        echo "$cc $g" >>"$results"
        printf 'round %d %-9s %8.1f Mbit/s\n' "$r" "$cc" "$(python3 -c "print($g/1e6)")"
    done
done
python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    cc, g = line.split()
    runs.setdefault(cc, []).append(float(g))
c, l = statistics.median(runs["cubic"]), statistics.median(runs["ledbatpp"])
print(f"median cubic {c/1e6:.1f} Mbit/s, ledbatpp {l/1e6:.1f} Mbit/s, ratio ledbatpp/cubic = {l/c:.3f}")
PY
