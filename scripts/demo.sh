#!/usr/bin/env bash
# make demo: a LEDBAT++ download over loopback through the plug-in path, what
# its qlog says, then LEDBAT++ yielding to CUBIC on an emulated bottleneck.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=target/release
out=demo-out
rm -rf "$out" && mkdir -p "$out/qlog"

# The server picks a free port and says which on stderr; it writes its
# self-signed certificate for the client to verify (--ca).
"$bin/quic-bulk" server --listen 127.0.0.1:0 --qlog-dir "$out/qlog" --write-cert "$out/server-cert.pem" 2>"$out/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
addr=
for _ in $(seq 1 100); do
    addr=$(sed -n 's/^quic-bulk server: listening on //p' "$out/server.log")
    [ -n "$addr" ] && break
    sleep 0.05
done
[ -n "$addr" ] || { echo "the quic-bulk server did not start:" >&2; cat "$out/server.log" >&2; exit 1; }

echo "== quic-bulk client --connect $addr --ca $out/server-cert.pem --cc ledbatpp:profile=full --bytes 50MB"
"$bin/quic-bulk" client --connect "$addr" --ca "$out/server-cert.pem" --cc ledbatpp:profile=full --bytes 50MB --label demo | tee "$out/client.txt"
qlog=$(sed -n 's/^sender qlog: //p' "$out/client.txt")

echo
echo "== qlog-analysis summary $qlog"
"$bin/qlog-analysis" summary "$qlog"
"$bin/qlog-analysis" plot "$qlog" --out "$out/plots" >/dev/null
echo "plots: $out/plots/"

echo
echo "== lbe-lab run scenarios/demo-ledbatpp-yields.toml (30 s on an emulated 20 Mbit/s link)"
"$bin/lbe-lab" run scenarios/demo-ledbatpp-yields.toml --out "$out/lab"
echo "report: $out/lab/report.html   figures: $out/lab/summary.json"
