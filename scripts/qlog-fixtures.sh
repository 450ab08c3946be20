#!/usr/bin/env bash
# Regenerates qlog-analysis's fixtures from real QUIC implementations:
#   qlog-analysis/tests/fixtures/stacks/quic-go/  (Go program, quic-go from the Go module proxy)
#   qlog-analysis/tests/fixtures/stacks/aioquic/  (Python, aioquic from PyPI in a virtualenv)
#   qlog-analysis/tests/fixtures/stacks/quiche/   (our quic-bulk, LEDBAT++)
#   qlog-analysis/tests/fixtures/stacks/quiche-0.17/  (a 0.3-era quiche from crates.io, in memory)
# Each directory gets the two traces of one short loopback download and
# counts.json: the implementation's own counts (stream bytes, packets sent,
# packets lost), which tests/stacks.rs compares with qlog-analysis's figures.
#
# Needs network access to the registries, so `make test` never runs it; the
# fixtures it writes are committed.
# Usage: scripts/qlog-fixtures.sh [quic-go|aioquic|quiche]...   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=qlog-analysis/tests/fixtures/stacks
stacks=("$@")
[ ${#stacks[@]} -eq 0 ] && stacks=(quic-go aioquic quiche quiche-0.17)

for stack in "${stacks[@]}"; do
    rm -rf "$out/$stack"
    mkdir -p "$out/$stack"
    case "$stack" in
    quic-go)
        # 100 kB download; the server drops its 30th, 31st and 60th datagram.
        (cd qlog-analysis/fixtures/tools/quic-go && go run . -out "$root/$out/quic-go" -bytes 100000 -drop 30,31,60)
        ;;
    aioquic)
        venv=target/qlog-fixtures-venv
        if ! "$venv/bin/python" -c 'import aioquic' 2>/dev/null; then
            python3 -m venv --clear "$venv"
            # The same aioquic as apps/h3-download/tests/interop.rs.
            "$venv/bin/pip" install --quiet --disable-pip-version-check aioquic==1.7.2
        fi
        "$venv/bin/python" qlog-analysis/fixtures/tools/aioquic/transfer.py "$out/aioquic" --bytes 100000 --drop 30,31,70
        ;;
    quiche)
        # QUIC_BULK=path uses an already built quic-bulk.
        bin=${QUIC_BULK:-}
        if [ -z "$bin" ]; then
            make quiche >/dev/null
            cargo build --release -p quic-bulk
            bin=target/release/quic-bulk
        fi
        port=$((20000 + RANDOM % 20000))
        "$bin" server --listen "127.0.0.1:$port" --qlog-dir "$out/quiche" >/dev/null 2>&1 &
        server=$!
        trap 'kill $server 2>/dev/null || true' EXIT
        sleep 1
        summary=$(timeout 60 "$bin" client --connect "127.0.0.1:$port" --cc ledbatpp --bytes 100kB \
            --qlog-dir "$out/quiche" --label fixture --json)
        sleep 1
        kill $server; wait $server 2>/dev/null || true
        trap - EXIT
        # quic-bulk's own counts: payload bytes and the sender's lost packets.
        python3 - "$summary" "$out/quiche" <<'PY'
import json, os, sys
s = json.loads(sys.argv[1])
d = sys.argv[2]
files = sorted(os.listdir(d))
counts = {
    "tool": "quic-bulk (quiche 0.30.0, qlog 0.18)",
    "transfer": "loopback download: the server sends stream_bytes on stream 0; the figures line on stream 4 is not counted by quic-bulk",
    "stream_bytes": s["bytes"],
    "server": {"role": "server", "qlog": next(f for f in files if "-server-" in f), "packets_lost": s["lost_packets"]},
    "client": {"role": "client", "qlog": next(f for f in files if "-client-" in f)},
}
with open(os.path.join(d, "counts.json"), "w") as f:
    json.dump(counts, f, indent=2)
    f.write("\n")
print(json.dumps(counts, indent=2))
PY
        ;;
    quiche-0.17)
        # quiche 0.17.2 builds its own BoringSSL (cmake) on first use.
        tool=qlog-analysis/fixtures/tools/quiche-0.17
        CARGO_TARGET_DIR="$root/target/qlog-fixtures-quiche-0.17" cargo build --release --manifest-path "$tool/Cargo.toml"
        tmp=$(mktemp -d)
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 2 -subj /CN=localhost 2>/dev/null
        "$root/target/qlog-fixtures-quiche-0.17/release/quiche-0-17-fixture" "$out/quiche-0.17" \
            "$tmp/cert.pem" "$tmp/key.pem" 100000 30,31,60
        rm -rf "$tmp"
        ;;
    *)
        echo "qlog-fixtures.sh: unknown stack '$stack' (allowed: quic-go, aioquic, quiche, quiche-0.17)" >&2
        exit 2
        ;;
    esac
done
du -sh "$out"
