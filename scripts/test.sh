#!/usr/bin/env bash
# `make test`: every test suite of the workspace, even when one fails
# (--no-fail-fast), and quiche's own recovery tests on the patched crate
# (scripts/quiche-test.sh), then one line counted over all of them:
#
#   N passed, M failed, K skipped
#
# (skipped = cargo's "ignored"), with the failing tests listed above it.
# Exits non-zero when any test failed or anything did not build.
#
#   scripts/test.sh [extra cargo test arguments]
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log_dir="$root/target/test-logs"
mkdir -p "$log_dir"
log="$log_dir/cargo-test.log"

# Everything the tests run, built first with a progress line (a fresh
# machine spends most of a `make test` here); cargo test then finds it built.
# A build error still reaches cargo test below, which reports it.
CARGO=${CARGO:-cargo} "$root/scripts/build.sh" --workspace -- --all-targets 2>&1 | tee "$log"

${CARGO:-cargo} test --release --workspace --no-fail-fast "$@" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}

# quiche's own recovery tests on the patched crate, our patch's among them
# (scripts/quiche-test.sh); counted in the same line.
CARGO=${CARGO:-cargo} "$root/scripts/quiche-test.sh" 2>&1 | tee -a "$log"
quiche_status=${PIPESTATUS[0]}
[ "$status" -ne 0 ] || status=$quiche_status

# Every test binary (unit, integration, doc) ends with one line:
#   test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; ...
read -r passed failed skipped < <(
    awk '/^test result: / {
            for (i = 1; i <= NF; i++) {
                if ($(i+1) ~ /^passed;?$/)  p += $i
                if ($(i+1) ~ /^failed;?$/)  f += $i
                if ($(i+1) ~ /^ignored;?$/) s += $i
            }
         }
         END { printf "%d %d %d\n", p, f, s }' "$log"
)

failing=$(grep -E '^test .* \.\.\. FAILED$' "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/  \1/' || true)
if [ -n "$failing" ]; then
    printf '\nfailed tests:\n%s\n' "$failing"
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    # cargo failed without a failing test: a build error or a test binary that
    # crashed before reporting. Count it, so the line never reads as a pass.
    printf '\ncargo test exited with status %d without a failing test (build error or crashed test binary; see %s)\n' \
        "$status" "${log#"$root"/}"
    failed=1
fi
printf '\n%d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
