#!/usr/bin/env bash
# Runs quiche's own unit tests on the patched crate (scripts/quiche-src.sh),
# by default those of our patches: congestion::custom and every recovery and
# congestion-control test beside them (patch 0006's congestion::registry
# among them), and patch 0004's (receive-window limit, late STREAM frames,
# DATA_BLOCKED and quiche's own DATA_BLOCKED tests), patch 0005's
# (stream_acked_bytes), patch 0007's (clock:: and rand::: virtual time and
# seeded randomness, hence the virtual-clock feature), and patch 0008's (timestamp: the TIMESTAMP frame, the
# enable_timestamp transport parameter, and the one-way delay reaching a
# plug-in), patch 0009's (qlog_event_sink: qlog events handed over as
# values), patch 0010's (tx_buffered: written stream bytes not yet
# sent) and core patch 0011's (nat_rebinding: a download whose client's
# port changes mid-transfer, with CUBIC and with BBRv2); `scripts/quiche-test.sh ''` runs all of quiche's ~1190 tests.
#
#   scripts/quiche-test.sh [--own-boringssl] [TEST_FILTER...]
#       (default: clock:: rand:: recovery:: connection_window_limit
#        late_stream_frames data_blocked stream_acked_bytes timestamp
#        qlog_event_sink tx_buffered nat_rebinding)
#
# The crate is built as quiche's own CI builds it: with the Cargo.lock that
# ships in the .crate (`--locked`), plus its dev-dependencies (rstest, url;
# cargo fetches them the first time), into the workspace's target/
# directory. One deviation: that lock pins boring-sys 5.2.0, whose bundled
# BoringSSL is an older commit than the workspace's boring-sys 5.4.0, and
# the build links target/boringssl (the workspace's one BoringSSL build,
# scripts/boringssl.sh; boring-sys's BORING_BSSL_PATH from
# .cargo/config.toml, which applies because the source lies under the
# repository) instead of building 5.2.0's own (about 4 minutes on two
# cores). The 276 tests of the default filter pass on it; of all 1195, two
# fail (bbr2's sends_ack_only_pkt_when_full_cwnd_and_ack_elicited and
# ..._despite_max_unacknowledging), by 6 bytes: they count the bytes of a
# handshake, which depend on the BoringSSL version. `--own-boringssl` runs
# from outside the repository, where .cargo/config.toml is not read, so
# boring-sys 5.2.0 builds its own (a few minutes more, into another unit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/target/quiche-patched/quiche-0.30.0"
[ -f "$src/Cargo.toml" ] || { echo "quiche-test: error: $src is missing; run 'make quiche' first" >&2; exit 1; }
[ -f "$root/target/boringssl/lib/libssl.a" ] || { echo "quiche-test: error: target/boringssl is missing; run 'make boringssl' first" >&2; exit 1; }
own_boringssl=no
if [ "${1:-}" = "--own-boringssl" ]; then
    own_boringssl=yes
    shift
fi
if [ $# -eq 0 ]; then
    set -- clock:: rand:: recovery:: connection_window_limit late_stream_frames data_blocked stream_acked_bytes timestamp qlog_event_sink tx_buffered nat_rebinding
fi
if [ "$own_boringssl" = yes ]; then
    cd /
    unset BORING_BSSL_PATH BORING_BSSL_INCLUDE_PATH
else
    cd "$src"
fi
CARGO_TARGET_DIR="$root/target" exec "${CARGO:-cargo}" test --locked --release --features qlog,virtual-clock --lib \
    --manifest-path "$src/Cargo.toml" -- "$@"
