#!/usr/bin/env python3
"""Seed 000's figures (docs/seeds/ledbatpp-experimental-evaluation.md), from
their tables' data.

    scripts/seed000-figures.py [DIR]     (default docs/seeds/)

Reads docs/data/seed000-fig2-fig10.csv and seed000-fig17-fig21.csv (written
by `scripts/paper-figures.sh --only seed000-fig2-fig10 --only
seed000-fig17-fig21`) and draws, as the seed's Figs. 2/10 and 21 do, by
base RTT on a log axis:

  seed000-fig2-fig10.svg   LEDBAT++ alone, of the most the link carries,
                           500 ms and 30 ms buffers: the mean over the 8
                           runs with the lowest-highest as a bar, and the
                           seed's text's 0.9 (§5.1.1) as a dashed line;
  seed000-fig21.svg        CUBIC's goodput over LEDBAT++'s with a 30 ms
                           buffer, quiche's CUBIC and Linux-like, with the
                           seed's text's points (§6.2: at least 2.5 at
                           80 ms, 10 at 400 ms).

Each is 390 px wide (a phone's width), its text at least 11 px. Runs
nothing: re-measure with paper-figures.sh, which runs this after the
tables.
"""

import math
import os
import sys

from docs_data import ms, rows

HERE = os.path.dirname(os.path.abspath(__file__))
WIDTH, HEIGHT = 390, 270
LEFT, RIGHT, TOP, BOTTOM = 46, 12, 30, 62
COLOURS = ["#1f77b4", "#d62728"]


def series(table, column):
    """[(rtt_ms, mean, lowest, highest)] of `column` (NAME@PIVOT) by RTT."""
    metric, pivot = column.split("@", 1)
    points = []
    for row in table:
        mean = row.get(column, "")
        if mean == "":
            continue
        points.append((ms(row["link.rtt"]), float(mean),
                       float(row[f"{metric}.min@{pivot}"]), float(row[f"{metric}.max@{pivot}"])))
    if not points:
        raise SystemExit(f"no values of '{column}'")
    return sorted(points)


def chart(title, y_label, y_max, lines, reference, reference_label, joined):
    """An SVG line chart by base RTT (log x, 10-400 ms). `lines`:
    [(label, points)]; `reference`: [(rtt_ms, value)], open circles,
    `joined` by a dashed line (a level the seed states over a range) or
    not (points the seed states alone)."""
    x_lo, x_hi = math.log10(8), math.log10(450)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(rtt):
        return LEFT + (math.log10(rtt) - x_lo) / (x_hi - x_lo) * plot_w

    def y(v):
        return TOP + (1 - min(v, y_max) / y_max) * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" font-size="12" font-weight="bold">{title}</text>',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>',
    ]
    for tick in (10, 20, 40, 100, 200, 400):
        out.append(f'<line x1="{x(tick):.1f}" y1="{TOP + plot_h}" x2="{x(tick):.1f}" '
                   f'y2="{TOP + plot_h + 4}" stroke="#888"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{tick}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{TOP + plot_h + 30}" text-anchor="middle">base RTT (ms)</text>')
    for k in range(5):
        v = y_max * k / 4
        out.append(f'<line x1="{LEFT}" y1="{y(v):.1f}" x2="{LEFT + plot_w}" y2="{y(v):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<text transform="translate(12,{TOP + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">{y_label}</text>')
    if reference:
        path = " ".join(f"{x(r):.1f},{y(v):.1f}" for r, v in reference)
        if joined:
            out.append(f'<polyline points="{path}" fill="none" stroke="#444" stroke-dasharray="5,4"/>')
        for r, v in reference:
            out.append(f'<circle cx="{x(r):.1f}" cy="{y(v):.1f}" r="3" fill="none" stroke="#444"/>')
    for (label, points), colour in zip(lines, COLOURS):
        for rtt, _, lo, hi in points:
            out.append(f'<line x1="{x(rtt):.1f}" y1="{y(lo):.1f}" x2="{x(rtt):.1f}" y2="{y(hi):.1f}" '
                       f'stroke="{colour}" stroke-width="2"/>')
        path = " ".join(f"{x(rtt):.1f},{y(mean):.1f}" for rtt, mean, _, _ in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for rtt, mean, _, _ in points:
            out.append(f'<circle cx="{x(rtt):.1f}" cy="{y(mean):.1f}" r="2.5" fill="{colour}"/>')
    # Legend entries: (label, colour, line or circle).
    legend = [(label, colour, "line") for (label, _), colour in zip(lines, COLOURS)]
    if reference:
        legend.append((reference_label, "#444", "dashed" if joined else "circle"))
    for i, (label, colour, mark) in enumerate(legend):
        ly = TOP + plot_h + 44 + 12 * (i // 2)
        lx = LEFT + (i % 2) * (plot_w / 2)
        if mark == "circle":
            out.append(f'<circle cx="{lx + 8:.1f}" cy="{ly - 4}" r="3" fill="none" stroke="{colour}"/>')
        else:
            dash = ' stroke-dasharray="5,4"' if mark == "dashed" else ""
            out.append(f'<line x1="{lx:.1f}" y1="{ly - 4}" x2="{lx + 16:.1f}" y2="{ly - 4}" '
                       f'stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{lx + 20:.1f}" y="{ly}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) > 2:
        raise SystemExit("usage: seed000-figures.py [DIR]")
    out_dir = sys.argv[1] if len(sys.argv) == 2 else os.path.join(HERE, "..", "docs", "seeds")
    alone = rows("seed000-fig2-fig10")
    figures = {
        "seed000-fig2-fig10.svg": chart(
            "LEDBAT++ alone, 20 Mbit/s (Figs. 2, 10)", "of the most the link carries", 1.0,
            [("500 ms buffer", series(alone, "utilization_of_max@deep")),
             ("30 ms buffer", series(alone, "utilization_of_max@shallow"))],
            [(20, 0.9), (300, 0.9)], "seed: 0.9, 20-300 ms", joined=True),
    }
    cubic = rows("seed000-fig17-fig21")
    ratio = "flow2.goodput_mbps/flow1.goodput_mbps"
    figures["seed000-fig21.svg"] = chart(
        "CUBIC over LEDBAT++, 30 ms buffer (Fig. 21)", "CUBIC's goodput / LEDBAT++'s", 24.0,
        [("quiche's cubic", series(cubic, f"{ratio}@shallow,quiche")),
         ("cubic:rollback=off", series(cubic, f"{ratio}@shallow,linux"))],
        [(80, 2.5), (400, 10.0)], "seed's text: 2.5 at 80, 10 at 400 ms", joined=False)
    for name, svg in figures.items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(svg)


if __name__ == "__main__":
    main()
