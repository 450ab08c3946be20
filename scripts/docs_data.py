"""What the figure scripts share about docs/data/ (the generated tables'
data, written by `scripts/paper-figures.sh`): where it is, a table's rows,
and the milliseconds of an axis value like '40ms'."""

import csv
import os
import re

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "data")


def ms(text):
    m = re.fullmatch(r"([0-9.]+)ms", text)
    if not m:
        raise SystemExit(f"'{text}': expected milliseconds like '40ms'")
    return float(m.group(1))


def rows(name):
    """docs/data/NAME.csv's rows, as dicts by column."""
    path = os.path.join(DATA, f"{name}.csv")
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise SystemExit(f"{path}: {e} (measure it: scripts/paper-figures.sh --only {name})")
