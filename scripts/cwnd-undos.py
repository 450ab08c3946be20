#!/usr/bin/env python3
"""Counts a sender's window reductions and how many of them were undone.

    scripts/cwnd-undos.py QLOG...

For each qlog (JSON-SEQ, as quiche writes it: `.sqlog`), reads the
congestion_window of every `recovery_metrics_updated` event and prints one
line: reductions (updates that lower the window), undos (updates that raise
the window in one step, by more than one ACK's growth, back to exactly what
it was before the latest reduction: what quiche's CUBIC rollback does), and
the undone share. Used for docs/cdg-and-cubic.md.
"""

import json
import sys

# The most one ACK can add to the window: quiche's receiver acknowledges
# every second packet, and slow start adds the bytes acknowledged, so two
# full 1350-byte datagrams. A step back to the old window that is no larger
# is ordinary growth (CDG, for one, often regains a 1-datagram reduction so).
MAX_ACK_GROWTH_BYTES = 2 * 1350


def windows(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip("\x1e \n")
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"cwnd-undos: {path}:{n}: not a JSON-SEQ qlog record ({e.msg})")
            if not isinstance(event, dict):
                continue
            name = str(event.get("name", ""))
            # quiche: "quic:recovery_metrics_updated"; qlog 0.3 drafts and
            # quic-go: "recovery:metrics_updated".
            if name.endswith("metrics_updated"):
                data = event.get("data")
                cwnd = data.get("congestion_window") if isinstance(data, dict) else None
                if isinstance(cwnd, (int, float)):
                    yield event.get("time", 0.0), cwnd


def count(path):
    reductions = undos = 0
    seen = False
    previous = None
    before_reduction = None
    for _, cwnd in windows(path):
        seen = True
        if previous is not None:
            if cwnd < previous:
                reductions += 1
                before_reduction = previous
            elif cwnd == before_reduction and cwnd - previous > MAX_ACK_GROWTH_BYTES:
                undos += 1
                before_reduction = None
        previous = cwnd
    if not seen:
        sys.exit(f"cwnd-undos: {path}: no congestion_window in any metrics_updated event (a sender's qlog is needed)")
    return reductions, undos


def main(paths):
    if not paths:
        sys.exit("usage: scripts/cwnd-undos.py QLOG... (quiche's JSON-SEQ .sqlog files)")
    for path in paths:
        try:
            reductions, undos = count(path)
        except OSError as e:
            sys.exit(f"cwnd-undos: {path}: {e.strerror}")
        except UnicodeDecodeError:
            sys.exit(f"cwnd-undos: {path}: not UTF-8 text, so not a JSON-SEQ qlog")
        share = f"{undos / reductions:.0%}" if reductions else "-"
        print(f"{path}: {reductions} reductions, {undos} undone ({share})")


if __name__ == "__main__":
    main(sys.argv[1:])
