#!/usr/bin/env python3
"""Tables and a heat map of the LBE-vs-BBR grid (docs/lbe-vs-bbr.md).

    scripts/lbe-vs-bbr-tables.py OUT [SVG]

OUT is what scripts/lbe-vs-bbr-grid.sh wrote: OUT/runs/seedN-lbe-vs-bbr-grid-
rttNms*/results.csv, one seed of one sweep file each. Prints, per
foreground and LBE, a markdown table of the LBE's share of the two
(flow1.share) per base RTT (rows) and buffer (columns: 0.5, 1, 2, 4 BDP and
500 ms) as "mean (min-max)" over the seeds present, with the number of
seeds when not 3; writes OUT/lbe-share.csv (a row per cell) and the heat
map (SVG, default OUT/lbe-vs-bbr-heatmap.svg).
"""

import csv
import glob
import os
import re
import sys
from collections import defaultdict

RTTS_MS = [10, 20, 40, 60, 100, 200]
BUFFERS = ["0.5", "1", "2", "4", "500ms"]
BUFFER_LABELS = ["0.5 BDP", "1 BDP", "2 BDP", "4 BDP", "500 ms"]
LBES = ["ledbatpp:profile=draft", "ledbatpp:profile=full", "cdg", "ledbat"]
FOREGROUNDS = ["bbr2", "cubic"]


def ms(text):
    m = re.fullmatch(r"([0-9.]+)ms", text)
    if not m:
        raise SystemExit(f"buffer '{text}': expected milliseconds like '40ms'")
    return float(m.group(1))


def buffer_column(buffer, rtt_ms):
    """The column of a buffer: '500ms' or its size in BDPs ('0.5' .. '4')."""
    if buffer == "500ms":
        return "500ms"
    return f"{ms(buffer) / rtt_ms:g}"


def result_files(out):
    return sorted(glob.glob(os.path.join(out, "runs", "*-lbe-vs-bbr-grid-rtt*", "results.csv")))


def load(out):
    """(fg, lbe, rtt_ms, column) -> {seed: share}."""
    cells = defaultdict(dict)
    for path in result_files(out):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                rtt = float(re.search(r"rtt(\d+)ms", path).group(1))
                column = buffer_column(row["link.buffer"], rtt)
                key = (row["flow2.cc"], row["flow1.cc"], int(rtt), column)
                if row["flow1.share"] == "":
                    continue
                cells[key][int(row["seed"])] = float(row["flow1.share"])
    return cells


def cell_text(shares):
    if not shares:
        return "not run"
    v = list(shares.values())
    mean = sum(v) / len(v)
    text = f"{mean:.2f} ({min(v):.2f}–{max(v):.2f})" if len(v) > 1 else f"{mean:.2f}"
    if len(v) != 3:
        text += f" [{len(v)} seed{'s' if len(v) > 1 else ''}]"
    return text


def tables(cells):
    lines = []
    for fg in FOREGROUNDS:
        for lbe in LBES:
            lines.append(f"**`{lbe}` beside `{fg}`** (the LBE's share of the two, 20-60 s)\n")
            lines.append("| base RTT | " + " | ".join(BUFFER_LABELS) + " |")
            lines.append("|---" * (len(BUFFERS) + 1) + "|")
            for rtt in RTTS_MS:
                row = [cell_text(cells.get((fg, lbe, rtt, b), {})) for b in BUFFERS]
                lines.append(f"| {rtt} ms | " + " | ".join(row) + " |")
            lines.append("")
    return "\n".join(lines)


def colour(share):
    """0 (yields) white-green .. 0.5 (equal) orange .. 1 red."""
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
        for li, lbe in enumerate(LBES):
            x0, y0 = li * panel_w, fi * panel_h
            out.append(f'<text x="{x0 + left}" y="{y0 + 14}" font-size="11" font-weight="bold">'
                       f'{lbe} beside {fg}</text>')
            for bi, label in enumerate(BUFFER_LABELS):
                out.append(f'<text x="{x0 + left + bi * cw + cw / 2}" y="{y0 + top - 6}" '
                           f'text-anchor="middle">{label}</text>')
            for ri, rtt in enumerate(RTTS_MS):
                y = y0 + top + ri * ch
                out.append(f'<text x="{x0 + left - 4}" y="{y + ch / 2 + 3}" text-anchor="end">{rtt} ms</text>')
                for bi, b in enumerate(BUFFERS):
                    x = x0 + left + bi * cw
                    shares = cells.get((fg, lbe, rtt, b), {})
                    if shares:
                        mean = sum(shares.values()) / len(shares)
                        fill, text = colour(mean), f"{mean:.2f}"
                    else:
                        fill, text = "#dddddd", "–"
                    out.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" stroke="white"/>')
                    out.append(f'<text x="{x + cw / 2}" y="{y + ch / 2 + 3}" text-anchor="middle">{text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit("usage: lbe-vs-bbr-tables.py OUT [SVG]")
    out = sys.argv[1]
    svg = sys.argv[2] if len(sys.argv) == 3 else os.path.join(out, "lbe-vs-bbr-heatmap.svg")
    cells = load(out)
    if not cells:
        raise SystemExit(f"{out}: no results.csv of the grid found")
    print(tables(cells))
    with open(os.path.join(out, "lbe-share.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["foreground", "lbe", "rtt_ms", "buffer", "seeds", "mean", "min", "max"])
        for (fg, lbe, rtt, b), shares in sorted(cells.items()):
            v = list(shares.values())
            w.writerow([fg, lbe, rtt, b, len(v), f"{sum(v) / len(v):.4f}", f"{min(v):.4f}", f"{max(v):.4f}"])
    with open(svg, "w") as f:
        f.write(heatmap(cells))


if __name__ == "__main__":
    main()
