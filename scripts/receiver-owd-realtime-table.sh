#!/usr/bin/env bash
# Receiver-side LEDBAT++ on one-way delay, in real time (docs/one-way-delay.md,
# "The receiver side"): `h3-fetch --background --lbe receiver` downloads from
# h3-serve sending with CUBIC (`--background-cc cubic`: only the client yields)
# through `lbe-netem --rate 20mbit --reverse-rate 2mbit --rtt 40ms --buffer
# 500ms`, for 30 s alone, then for 30 s beside a saturating CUBIC upload
# (`quic-bulk client --upload`, routed through the same bottleneck with
# --route) started 3 s before it; once per --lbe-delay value given (default:
# auto, which reads the data's one-way delay from h3-serve's timestamps, and
# rtt). Goodput is the bytes in the part file after 30 s (h3-fetch is stopped
# with SIGINT, as a user would) over 30 s. Loopback only; every process is
# stopped at the end.
#
#   scripts/receiver-owd-realtime-table.sh [RUNS] [SIGNAL...]   (default: 1 run)
#
# About 70 s per value and run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
shift || true
signals=("$@")
[ ${#signals[@]} -gt 0 ] || signals=(auto rtt)
cargo build --release -q -p quic-bulk -p lbe-netem -p h3-download
bin=target/release
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

mkdir -p "$tmp/root" "$tmp/out"
# More than 30 s at 20 Mbit/s.
head -c 100000000 /dev/urandom >"$tmp/root/f"
port=$((20000 + RANDOM % 20000))
"$bin/h3-serve" --listen "127.0.0.1:$port" --root "$tmp/root" --background-cc cubic \
    --write-cert "$tmp/h3.pem" >/dev/null 2>&1 &
pids+=($!)
"$bin/quic-bulk" server --listen "127.0.0.1:$((port + 1))" --write-cert "$tmp/bulk.pem" -q &
pids+=($!)
"$bin/lbe-netem" --listen "127.0.0.1:$((port + 2))" --upstream "127.0.0.1:$port" \
    --route "127.0.0.1:$((port + 3))=127.0.0.1:$((port + 1))" \
    --rate 20mbit --reverse-rate 2mbit --rtt 40ms --buffer 500ms -q >/dev/null &
pids+=($!)
sleep 1

# Mbit/s received in 30 s by `h3-fetch --lbe-delay $1`.
fetch30() {
    rm -f "$tmp/out/f" "$tmp/out/f.part" "$tmp/out/f.part.meta"
    "$bin/h3-fetch" "https://127.0.0.1:$((port + 2))/f" -o "$tmp/out/f" --ca "$tmp/h3.pem" \
        --background --lbe receiver --lbe-delay "$1" --json >/dev/null 2>&1 &
    local f=$!
    sleep 30
    kill -INT "$f" 2>/dev/null || true
    wait "$f" 2>/dev/null || true
    local bytes
    bytes=$(stat -c %s "$tmp/out/f.part" 2>/dev/null || stat -c %s "$tmp/out/f")
    python3 -c "print($bytes * 8 / 30 / 1e6)"
}

echo "| receiver's --lbe-delay | run | alone, Mbit/s | beside the upload, Mbit/s | kept |"
echo "| --- | --- | --- | --- | --- |"
for signal in "${signals[@]}"; do
    for run in $(seq 1 "$runs"); do
        alone=$(fetch30 "$signal")
        "$bin/quic-bulk" client --connect "127.0.0.1:$((port + 3))" --ca "$tmp/bulk.pem" \
            --server-name 127.0.0.1 --upload --cc cubic --duration 36s --json >"$tmp/up.json" &
        up=$!
        sleep 3
        beside=$(fetch30 "$signal")
        wait "$up"
        kept=$(python3 -c "print(f'{$beside / $alone:.3f}')")
        printf '| `%s` | %s | %.2f | %.2f | %s |\n' "$signal" "$run" "$alone" "$beside" "$kept"
    done
done
