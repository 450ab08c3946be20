#!/usr/bin/env bash
# Prints the one-flow scenario scripts/sim-bench.sh times and
# scripts/sim-profile.sh profiles: LEDBAT++ alone on 20 Mbit/s, 50 ms,
# a 500 ms buffer, for SECONDS.
#   scripts/sim-solo-scenario.sh SECONDS
set -euo pipefail
seconds=${1:?usage: sim-solo-scenario.sh SECONDS}
case "$seconds" in
    *[!0-9]* | "") echo "sim-solo-scenario: error: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac
cat <<TOML
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[[flow]]
cc = "ledbatpp"
stop = "${seconds}s"
TOML
