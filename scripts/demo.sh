#!/usr/bin/env bash
# make demo: a LEDBAT++ download over loopback through the plug-in path,
# then what happened, from the sender's qlog.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=target/release
out=demo-out
rm -rf "$out" && mkdir -p "$out/qlog"

port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr=127.0.0.1:$port

"$bin/quic-bulk" server --listen "$addr" --qlog-dir "$out/qlog" --quiet &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT

echo "== quic-bulk client --connect $addr --cc ledbatpp --bytes 50MB"
ok=
for _ in $(seq 1 50); do
    if "$bin/quic-bulk" client --connect "$addr" --cc ledbatpp --bytes 50MB --label demo --json \
        --timeout 1s >"$out/ledbatpp.json" 2>"$out/client.err"; then
        ok=1
        break
    fi
    sleep 0.1
done
[ -n "$ok" ] || { cat "$out/client.err" >&2; exit 1; }

python3 - "$out/ledbatpp.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{s['cc']} {s['direction']}: {s['bytes']/1e6:.1f} MB in {s['duration_s']:.2f} s "
      f"= {s['goodput_bps']/1e6:.1f} Mbit/s, RTT min/p50/p99 "
      f"{s['rtt_ms']['min']:.2f}/{s['rtt_ms']['p50']:.2f}/{s['rtt_ms']['p99']:.2f} ms, "
      f"{s['lost_packets']} packets lost")
print(f"sender qlog: {s['qlog']}")
PY

qlog=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["qlog"])' "$out/ledbatpp.json")
if [ -x "$bin/qlog-analysis" ]; then
    echo
    echo "== qlog-analysis summary $qlog"
    "$bin/qlog-analysis" summary "$qlog"
    "$bin/qlog-analysis" plot "$qlog" --out "$out/plots" >/dev/null && echo "plots: $out/plots/"
fi
