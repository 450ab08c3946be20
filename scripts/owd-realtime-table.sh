#!/usr/bin/env bash
# The one-way-delay table of docs/one-way-delay.md, in real time: quic-bulk
# through `lbe-netem --rate 20mbit --reverse-rate 2mbit --rtt 40ms --buffer
# 500ms`, a 30 s download alone, then beside a saturating CUBIC upload
# started 3 s before it, for each --cc given (default LEDBAT++ full with
# delay=owd and delay=rtt). Loopback only; every process is stopped at the
# end.
#
#   scripts/owd-realtime-table.sh [RUNS] [CC...]     (default: 1 run)
#
# About 70 s per controller and run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
shift || true
ccs=("$@")
[ ${#ccs[@]} -gt 0 ] || ccs=("ledbatpp:profile=full,delay=owd" "ledbatpp:profile=full,delay=rtt")
cargo build --release -q -p quic-bulk -p lbe-netem
bin=target/release
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

port=$((20000 + RANDOM % 20000))
"$bin/quic-bulk" server --listen "127.0.0.1:$port" --write-cert "$tmp/cert.pem" -q &
pids+=($!)
"$bin/lbe-netem" --listen "127.0.0.1:$((port + 1))" --upstream "127.0.0.1:$port" \
    --rate 20mbit --reverse-rate 2mbit --rtt 40ms --buffer 500ms -q >/dev/null &
pids+=($!)
sleep 1
client() { "$bin/quic-bulk" client --connect "127.0.0.1:$((port + 1))" --ca "$tmp/cert.pem" --json "$@"; }
goodput() { python3 -c 'import json,sys; print(json.load(sys.stdin)["goodput_bps"] / 1e6)'; }

echo "| download's controller | run | alone, Mbit/s | beside the upload, Mbit/s | kept |"
echo "| --- | --- | --- | --- | --- |"
for cc in "${ccs[@]}"; do
    for run in $(seq 1 "$runs"); do
        alone=$(client --cc "$cc" --duration 30s --label alone | goodput)
        client --upload --cc cubic --duration 36s --label upload >"$tmp/up.json" &
        up=$!
        sleep 3
        beside=$(client --cc "$cc" --duration 30s --label beside | goodput)
        wait "$up"
        kept=$(python3 -c "print(f'{$beside / $alone:.3f}')")
        printf '| `%s` | %s | %.2f | %.2f | %s |\n' "$cc" "$run" "$alone" "$beside" "$kept"
    done
done
