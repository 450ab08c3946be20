#!/usr/bin/env bash
# Runs every real-time test (real flows through lbe-netem, real quiche
# connections whose assertions depend on timing) N times, one run at a time,
# and prints, per test, how many runs passed and the distribution (min /
# median / max) of each figure its assertions check. The tests print those
# figures as `flake-figure: <test>: <key> = <value>` lines.
#
#   scripts/flake-check.sh [-n RUNS] [FILTER]
#
# RUNS defaults to 10; FILTER (a substring) picks tests by name. Raw output
# goes to target/flake-check/. Exits non-zero if any run failed. A full run
# (10 x every test) takes about 35 minutes on two cores.
set -uo pipefail

runs=10
if [ "${1:-}" = "-n" ]; then
    [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "flake-check: -n needs a positive number of runs" >&2; exit 2; }
    runs=$2
    shift 2
fi
filter=${1:-}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out="$root/target/flake-check"
mkdir -p "$out"

# package, test binary, test name: every test that runs real flows in real time.
tests=(
    "lbe-lab scenarios cubic_through_the_emulator_fills_the_link_at_its_base_rtt"
    "lbe-lab scenarios ledbatpp_alone_uses_most_of_the_link_and_keeps_the_queue_near_target"
    "lbe-lab scenarios two_flows_share_the_emulated_link_and_are_analysed"
    "lbe-lab h3 a_receiver_driven_download_from_a_stock_server_yields_to_cubic"
    "lbe-netem relay bottleneck_paces_at_the_rate_and_drops_at_the_tail"
    "lbe-netem relay added_delay_on_an_empty_queue_is_at_least_the_rtt"
    "lbe-netem relay reverse_rate_limits_the_client_to_server_direction"
    "lbe-netem relay cross_traffic_passes_the_bottleneck_and_reaches_no_client"
    "quiche-lbe plugin_hooks plugin_sees_the_ack_delay_the_peer_reports"
    "quic-bulk e2e duration_mode_sends_for_the_given_time"
    "quiche-lbe pacing plugin_pacing_rate_spaces_the_datagrams"
    "quiche-lbe pacing pacing_off_sends_as_soon_as_quiche_builds"
)

cargo=${CARGO:-cargo}
# Build every test binary once, so that the runs measure only the tests.
for entry in "${tests[@]}"; do
    read -r pkg bin name <<<"$entry"
    [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
    "$cargo" test --release -q -p "$pkg" --test "$bin" --no-run 2>"$out/build.log" \
        || { echo "flake-check: cannot build $pkg --test $bin (see $out/build.log)" >&2; exit 1; }
done

any_failed=0
summary="$out/summary.txt"
: >"$summary"
for entry in "${tests[@]}"; do
    read -r pkg bin name <<<"$entry"
    [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
    passed=0
    figures="$out/$name.figures"
    : >"$figures"
    for i in $(seq 1 "$runs"); do
        log="$out/$name.$i.log"
        if "$cargo" test --release -q -p "$pkg" --test "$bin" -- --exact "$name" --nocapture >"$log" 2>&1; then
            passed=$((passed + 1))
        else
            any_failed=1
        fi
        sed -n 's/^flake-figure: [^:]*: //p' "$log" >>"$figures"
        printf 'flake-check: %s run %d/%d: %s\n' "$name" "$i" "$runs" \
            "$(grep -q 'test result: ok' "$log" && echo pass || echo FAIL)" >&2
    done
    {
        printf '%s: %d/%d passed\n' "$name" "$passed" "$runs"
        # key = value lines -> min / median / max per key
        sort -k1,1 -k3,3g "$figures" | awk '
            { v[$1, ++n[$1]] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
            END {
                for (j = 1; j <= k; j++) {
                    key = order[j]; c = n[key]
                    m = (c % 2) ? v[key, (c + 1) / 2] : (v[key, c / 2] + v[key, c / 2 + 1]) / 2
                    printf "    %-24s min %-10.4g median %-10.4g max %-10.4g (%d runs)\n", key, v[key, 1], m, v[key, c], c
                }
            }'
    } | tee -a "$summary"
done
echo "flake-check: summary in ${summary#"$root"/}"
exit "$any_failed"
