#!/usr/bin/env bash
# Where the simulator's CPU goes (a profile, not a test): one 30 s,
# 20 Mbit/s, 50 ms LEDBAT++ flow under `valgrind --tool=callgrind`, whose
# instruction counts the machine's load does not move, then each part's
# share of the instructions, inclusive (a part's callees count in it; the
# qlog events are built inside quiche's sending and receiving, so those
# rows overlap). docs/lbe-sim.md ("Where the time goes") has the figures.
#   scripts/sim-profile.sh [SECONDS]     (default 30: about a minute under valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
command -v valgrind >/dev/null || { echo "sim-profile: needs valgrind (apt install valgrind)" >&2; exit 1; }
make -s build >/dev/null 2>&1 || make build
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sim-profile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
scripts/sim-solo-scenario.sh "$seconds" > "$tmp/solo.toml"
valgrind --tool=callgrind --callgrind-out-file="$tmp/callgrind.out" \
    target/release/lbe-lab run --sim "$tmp/solo.toml" --out "$tmp/run" --quiet --no-report \
    >/dev/null 2>"$tmp/valgrind.log"
callgrind_annotate --inclusive=yes --threshold=100 "$tmp/callgrind.out" >"$tmp/annotated.txt" 2>/dev/null
python3 - "$tmp/annotated.txt" "$seconds" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
seconds = sys.argv[2]
total = None
m = re.search(r"^([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text, re.M)
if m:
    total = int(m.group(1).replace(",", ""))
# "1,234 (12.34%)  file:function [object]": the largest count per function
# (a function can appear once per source file it was inlined from).
inclusive = {}
for line in text.splitlines():
    m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(?:[^:\s]*:)?(.+?)(?: \[[^\]]*\])?$", line)
    if m:
        n = int(m.group(1).replace(",", ""))
        name = m.group(2)
        inclusive[name] = max(n, inclusive.get(name, 0))
if not total:
    sys.exit("sim-profile: no program total in callgrind's output")
def part(name):
    return inclusive.get(name, 0)
recv = part("quiche::Connection<F>::recv")
send = part("quiche::Connection<F>::send_on_path")
# quiche's own work: what the connections do to move the data, less what
# of ours they call (the analysis of their qlog events; our controllers
# through the plug-in adapter). The floor of any simulator that runs
# quiche: docs/lbe-sim.md ("The floor: quiche's own work").
ours_inside = part("qlog_analysis::flow::FlowAnalyzer::record") + sum(
    n for name, n in inclusive.items()
    if name.startswith("<quiche_lbe::adapter::Adapter as ")
)
quiche_own = (
    recv + send
    + part("quiche::Connection<F>::stream_do_send")
    + part("quiche::Connection<F>::do_stream_recv")
    + part("quiche::Connection<F>::timeout_instant")
    - ours_inside
)
decrypt = part("quiche::packet::decrypt_pkt")
encrypt = part("quiche::packet::encrypt_pkt")
rows = [
    ("quiche's own work (less our analysis, controller)", quiche_own),
    ("  of which encrypting and decrypting (AES-GCM)", encrypt + decrypt),
    ("quiche receiving (Connection::recv)", recv),
    ("  of which decrypting (packet::decrypt_pkt)", decrypt),
    ("quiche sending (Connection::send_on_path)", send),
    ("  of which encrypting (packet::encrypt_pkt)", encrypt),
    ("qlog events built and handed over, in both above", part("quiche::QlogOutput::add_event_data_with_instant")),
    ("  of which FlowAnalyzer::record", part("qlog_analysis::flow::FlowAnalyzer::record")),
    ("writing the stream (Connection::stream_send)", part("quiche::Connection<F>::stream_send") or part("quiche::Connection<F>::stream_do_send")),
    ("the link model (Link::poll, Link::enqueue_flow)", part("lbe_link::model::Link<T>::poll") + part("lbe_link::model::Link<T>::enqueue_flow")),
]
print(f"one {seconds} s, 20 Mbit/s, 50 ms LEDBAT++ flow: {total/1e9:.2f} G instructions")
for name, n in rows:
    print(f"  {name:<52} {100*n/total:5.1f} %")
PY
