#!/usr/bin/env python3
"""The heat map of the LBE-vs-BBR grid (docs/lbe-vs-bbr.md), from its data.

    scripts/lbe-vs-bbr-heatmap.py [SVG]     (default docs/lbe-vs-bbr-heatmap.svg)

Reads docs/data/lbe-vs-bbr-beside-bbr2.csv and lbe-vs-bbr-beside-cubic.csv
(written by `scripts/paper-figures.sh --only lbe-vs-bbr-beside-bbr2 --only
lbe-vs-bbr-beside-cubic`) and draws, per foreground and LBE, the mean over
the seeds of the LBE's share of the two (flow1.share) per base RTT (rows)
and buffer (columns: 0.5, 1, 2, 4 BDP and 500 ms); white is 0, orange 0.5,
red 1. Runs nothing: re-measure with paper-figures.sh, then run this.
"""

import os
import sys

from docs_data import DATA, ms, rows
RTTS_MS = [10, 20, 40, 60, 100, 200]
BUFFERS = ["0.5", "1", "2", "4", "500ms"]
BUFFER_LABELS = ["0.5 BDP", "1 BDP", "2 BDP", "4 BDP", "500 ms"]
# The LBE: its name in the tables' pivot columns (flow1.share@NAME), its cc.
LBES = [("draft", "ledbatpp:profile=draft"), ("full", "ledbatpp:profile=full"),
        ("cdg", "cdg"), ("ledbat", "ledbat")]
FOREGROUNDS = ["bbr2", "cubic"]


def buffer_column(buffer, rtt_ms):
    """The column of a buffer: '500ms' or its size in BDPs ('0.5' .. '4')."""
    if buffer == "500ms":
        return "500ms"
    return f"{ms(buffer) / rtt_ms:g}"


def load():
    """(fg, lbe name, rtt_ms, column) -> the mean share."""
    cells = {}
    for fg in FOREGROUNDS:
        for row in rows(f"lbe-vs-bbr-beside-{fg}"):
            rtt = ms(row["link.rtt"])
            column = buffer_column(row["link.buffer"], rtt)
            for name, _ in LBES:
                value = row.get(f"flow1.share@{name}", "")
                if value != "":
                    cells[(fg, name, int(rtt), column)] = float(value)
    return cells


def colour(share):
    """0 (yields) white .. 0.5 (equal) orange .. 1 red."""
    s = max(0.0, min(1.0, share))
    if s <= 0.5:
        t = s / 0.5
        r, g, b = 255, int(255 - 90 * t), int(255 - 255 * t)
    else:
        t = (s - 0.5) / 0.5
        r, g, b = int(255 - 75 * t), int(165 - 165 * t), 0
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(cells):
    cw, ch = 46, 20
    left, top = 58, 40
    panel_w = left + cw * len(BUFFERS) + 20
    panel_h = top + ch * len(RTTS_MS) + 30
    width = panel_w * len(LBES)
    height = panel_h * len(FOREGROUNDS) + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="10">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for fi, fg in enumerate(FOREGROUNDS):
        for li, (name, cc) in enumerate(LBES):
            x0, y0 = li * panel_w, fi * panel_h
            out.append(f'<text x="{x0 + left}" y="{y0 + 14}" font-size="11" font-weight="bold">'
                       f'{cc} beside {fg}</text>')
            for bi, label in enumerate(BUFFER_LABELS):
                out.append(f'<text x="{x0 + left + bi * cw + cw / 2}" y="{y0 + top - 6}" '
                           f'text-anchor="middle">{label}</text>')
            for ri, rtt in enumerate(RTTS_MS):
                y = y0 + top + ri * ch
                out.append(f'<text x="{x0 + left - 4}" y="{y + ch / 2 + 3}" text-anchor="end">{rtt} ms</text>')
                for bi, b in enumerate(BUFFERS):
                    x = x0 + left + bi * cw
                    mean = cells.get((fg, name, rtt, b))
                    if mean is not None:
                        fill, text = colour(mean), f"{mean:.2f}"
                    else:
                        fill, text = "#dddddd", "–"
                    out.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" stroke="white"/>')
                    out.append(f'<text x="{x + cw / 2}" y="{y + ch / 2 + 3}" text-anchor="middle">{text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) > 2:
        raise SystemExit("usage: lbe-vs-bbr-heatmap.py [SVG]")
    svg = sys.argv[1] if len(sys.argv) == 2 else os.path.join(DATA, "..", "lbe-vs-bbr-heatmap.svg")
    cells = load()
    if not cells:
        raise SystemExit("docs/data/lbe-vs-bbr-beside-*.csv: no cells")
    with open(svg, "w") as f:
        f.write(heatmap(cells))


if __name__ == "__main__":
    main()
