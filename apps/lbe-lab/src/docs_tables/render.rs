//! A table's Markdown from its description and data: the lines between
//! its markers in a page.

use serde::Deserialize;
use serde::Serialize;

use crate::docs_tables::csv::Csv;
use crate::docs_tables::spec::BarSpec;
use crate::docs_tables::spec::ColumnSpec;
use crate::docs_tables::spec::TableSpec;
use crate::docs_tables::spec::Threshold;
use crate::docs_tables::template::placeholders;
use crate::docs_tables::template::Part;

/// `docs/data/NAME.measured.toml`, written with `NAME.csv` by
/// `lbe-lab docs-data`: what measured the data, for the table's caption.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    /// `sim` or `real` (results.json's `mode`).
    pub mode: String,
    /// The simulator's engine (results.json's `engine`), for `sim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The commit lbe-lab was built at (`git rev-parse --short HEAD`).
    pub commit: String,
    /// The day of the runs (UTC, YYYY-MM-DD).
    pub date: String,
    /// The sweeps' runs that the rows average.
    pub runs: usize,
}

/// Every column a template names is in the data (or the seed's file):
/// the first one that is not, as an error.
pub fn check_columns(
    name: &str,
    spec: &TableSpec,
    data: &Csv,
    seed: Option<&Csv>,
) -> Result<(), String> {
    let known = |f: &str| match data.column(f) {
        Some(_) => Ok(()),
        None => Err(format!(
            "unknown column '{f}' (docs/data/{name}.csv has {})",
            data.header.join(", ")
        )),
    };
    for c in &spec.columns {
        for b in &c.bar {
            known(&b.value)?;
            for t in [&b.at_least, &b.at_most].into_iter().flatten() {
                if let Threshold::Column(f) = t {
                    known(f)?;
                }
            }
            for k in b.when.keys() {
                known(k)?;
            }
        }
        for t in c.value.all() {
            for p in placeholders(t)? {
                match p {
                    Part::Text(_) => {}
                    Part::Data { factors, .. } => {
                        for f in factors {
                            known(&f)?;
                        }
                    }
                    Part::Range { lo, hi, .. } => {
                        known(&lo)?;
                        known(&hi)?;
                    }
                    Part::Seed(col) => match seed {
                        None => {
                            return Err(format!(
                                "'{{seed.{col}}}' but there is no docs/data/{name}.seed.csv"
                            ))
                        }
                        Some(s) if s.column(&col).is_none() => {
                            return Err(format!(
                                "unknown column '{col}' (docs/data/{name}.seed.csv has {})",
                                s.header.join(", ")
                            ))
                        }
                        Some(_) => {}
                    },
                }
            }
        }
    }
    Ok(())
}

/// The seed's row for data row `row`: the one whose every column that
/// `NAME.csv` also has holds the same value.
fn seed_row(name: &str, data: &Csv, row: usize, seed: &Csv) -> Result<Option<usize>, String> {
    let keys: Vec<&String> = seed
        .header
        .iter()
        .filter(|h| data.column(h).is_some())
        .collect();
    let matching: Vec<usize> = (0..seed.rows.len())
        .filter(|&s| {
            keys.iter()
                .all(|k| seed.get(s, k).unwrap_or("") == data.get(row, k).unwrap_or(""))
        })
        .collect();
    match matching[..] {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        [a, b, ..] => Err(format!(
            "docs/data/{name}.seed.csv: rows {} and {} both match row {} of {name}.csv (on {})",
            a + 2,
            b + 2,
            row + 2,
            keys.iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// One template filled from a row, or `None` when a value is missing.
fn fill(
    parts: &[Part],
    c: &ColumnSpec,
    data: &Csv,
    row: usize,
    seed: Option<(&Csv, usize)>,
) -> Result<Option<String>, String> {
    let mut s = String::new();
    for p in parts {
        match p {
            Part::Text(t) => s.push_str(t),
            Part::Seed(col) => match seed.and_then(|(f, r)| f.get(r, col)) {
                Some(v) => s.push_str(v),
                None => return Ok(None),
            },
            Part::Range { lo, hi, decimals } => {
                let (Some(a), Some(b)) = (data.get(row, lo), data.get(row, hi)) else {
                    return Ok(None);
                };
                let d = decimals.or(c.decimals).ok_or_else(|| {
                    format!(
                        "column '{}': a range ({lo}..{hi}) but no 'decimals'",
                        c.heading
                    )
                })?;
                let number = |v: &str| {
                    v.parse::<f64>()
                        .map(|x| format!("{:.d$}", x * c.scale))
                        .map_err(|_| {
                            format!(
                                "column '{}': a range of values that are not numbers ({a}, {b})",
                                c.heading
                            )
                        })
                };
                let (a, b) = (number(a)?, number(b)?);
                match a == b {
                    true => s.push_str(&a),
                    false => s.push_str(&format!("{a}–{b}")),
                }
            }
            Part::Data { factors, decimals } => {
                let raw: Option<Vec<&str>> = factors.iter().map(|f| data.get(row, f)).collect();
                let Some(raw) = raw else { return Ok(None) };
                if let [one] = raw[..] {
                    if let Some(label) = c.labels.get(one) {
                        s.push_str(label);
                        continue;
                    }
                }
                let numbers: Option<Vec<f64>> = raw.iter().map(|v| v.parse::<f64>().ok()).collect();
                match (numbers, &raw[..]) {
                    (Some(ns), _) => {
                        let d = decimals.or(c.decimals).ok_or_else(|| {
                            format!(
                                "column '{}': a number ({}) but no 'decimals'",
                                c.heading,
                                factors.join("*")
                            )
                        })?;
                        let v = ns.iter().product::<f64>() * c.scale;
                        s.push_str(&format!("{v:.d$}"));
                    }
                    (None, [text]) => s.push_str(text),
                    (None, _) => {
                        return Err(format!(
                            "column '{}': '{}' multiplies values that are not numbers ({})",
                            c.heading,
                            factors.join("*"),
                            raw.join(", ")
                        ))
                    }
                }
            }
        }
    }
    Ok(Some(s))
}

/// A `bar` column's cell for row `row`: `yes` when every bar that applies
/// holds, `no` when one does not, `None` (`–`) when none applies or a
/// value is missing.
fn bar_cell(bars: &[BarSpec], data: &Csv, row: usize) -> Option<String> {
    let number = |col: &str| data.get(row, col).and_then(|v| v.parse::<f64>().ok());
    let mut applied = false;
    let mut held = true;
    for b in bars {
        if !b
            .when
            .iter()
            .all(|(k, v)| data.get(row, k) == Some(v.as_str()))
        {
            continue;
        }
        applied = true;
        let value = number(&b.value)?;
        let threshold = |t: &Threshold| match t {
            Threshold::Number(x) => Some(*x),
            Threshold::Column(c) => number(c),
        };
        if let Some(t) = &b.at_least {
            held &= value >= threshold(t)? * b.times;
        }
        if let Some(t) = &b.at_most {
            held &= value <= threshold(t)? * b.times;
        }
    }
    applied.then(|| if held { "yes" } else { "no" }.to_string())
}

/// A Markdown table cell: its `|` escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The lines between the markers of table `name`: the table, a blank
/// line, and a caption saying where its numbers come from.
pub fn render(
    name: &str,
    spec: &TableSpec,
    data: &Csv,
    seed: Option<&Csv>,
    measured: &Measured,
) -> Result<Vec<String>, String> {
    check_columns(name, spec, data, seed)?;
    let templates: Vec<Vec<Vec<Part>>> = spec
        .columns
        .iter()
        .map(|c| c.value.all().into_iter().map(placeholders).collect())
        .collect::<Result<_, _>>()?;
    let mut lines = vec![
        format!(
            "| {} |",
            spec.columns
                .iter()
                .map(|c| cell(&c.heading))
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        format!("|{}", "---|".repeat(spec.columns.len())),
    ];
    let mut above: Vec<Option<String>> = vec![None; spec.columns.len()];
    for row in 0..data.rows.len() {
        let seed = match seed {
            Some(s) => seed_row(name, data, row, s)?.map(|r| (s, r)),
            None => None,
        };
        let mut cells = Vec::new();
        // A repeat = false cell is blanked while every such cell to its
        // left was: within the group those columns make.
        let mut same_group = true;
        for (i, (c, ts)) in spec.columns.iter().zip(&templates).enumerate() {
            let mut value = match c.bar.is_empty() {
                true => None,
                false => bar_cell(&c.bar, data, row),
            };
            for t in ts {
                if let Some(v) = fill(t, c, data, row, seed)? {
                    value = Some(v);
                    break;
                }
            }
            let value = value.unwrap_or_else(|| "–".to_string());
            let blank = !c.repeat && same_group && above[i].as_deref() == Some(value.as_str());
            if !c.repeat && !blank {
                same_group = false;
            }
            let shown = match blank {
                true => String::new(),
                false => cell(&value),
            };
            above[i] = Some(value);
            cells.push(shown);
        }
        let cells: Vec<String> = cells
            .iter()
            .map(|c| match c.is_empty() {
                true => " ".to_string(),
                false => format!(" {c} "),
            })
            .collect();
        lines.push(format!("|{}|", cells.join("|")));
    }
    lines.push(String::new());
    lines.push(caption(name, spec, seed, measured));
    Ok(lines)
}

fn caption(name: &str, spec: &TableSpec, seed: Option<&Csv>, m: &Measured) -> String {
    if let Some(lab) = &spec.lab {
        return format!(
            "*Generated from `docs/data/{name}.csv` by `lbe-lab docs-tables`: the lab's figures (`{lab}`, real-time runs through lbe-netem; its comments date each) beside the simulator's, the mean of seeds 1-3 (of a scenario with web downloads, the lab's seed alone: its arrivals; {} runs in the simulator, engine `{}`), lbe-lab built at commit {} on {}; the simulator's re-measured by `scripts/paper-figures.sh --only {name}`.*",
            m.runs,
            m.engine.as_deref().unwrap_or("quiche"),
            m.commit,
            m.date
        );
    }
    let mut names: Vec<String> = spec.sweeps.iter().map(|s| format!("`{s}`")).collect();
    if let Some(r) = &spec.reference {
        names.extend(r.sweeps.iter().map(|s| format!("`{s}` (the references)")));
    }
    let sweeps = names.join(" and ");
    let how = match (m.mode.as_str(), &m.engine) {
        ("sim", Some(e)) => format!("in the simulator (engine `{e}`)"),
        ("sim", None) => "in the simulator".to_string(),
        _ => "in real time (lbe-netem)".to_string(),
    };
    let over = match spec.rows.range {
        true => "the mean, the lowest and the highest over its runs",
        false => "the mean over its runs",
    };
    let mut s = format!(
        "*Generated from `docs/data/{name}.csv` by `lbe-lab docs-tables`: {} runs of {sweeps} {how}, lbe-lab built at commit {} on {}, each row {over}; re-measured by `scripts/paper-figures.sh --only {name}`.",
        m.runs, m.commit, m.date
    );
    if let Some(seed) = seed {
        let mut sources: Vec<&str> = Vec::new();
        for r in 0..seed.rows.len() {
            if let Some(src) = seed.get(r, "source") {
                if !sources.contains(&src) {
                    sources.push(src);
                }
            }
        }
        s.push_str(&format!(" The seed's numbers: `docs/data/{name}.seed.csv`"));
        if !sources.is_empty() {
            s.push_str(&format!(" ({})", sources.join("; ")));
        }
        s.push('.');
    }
    s.push('*');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> TableSpec {
        crate::docs_tables::spec::parse("t.toml", text).unwrap()
    }

    const SPEC: &str = r#"
sweeps = ["sweeps/a.toml", "sweeps/b.toml"]
[rows]
keys = ["link.buffer", "flow1.cc"]
metrics = ["utilization_of_max", "flow1.share", "flow2.share"]
[[column]]
heading = "buffer"
value = "{link.buffer}"
labels = { "100ms" = "84 packets" }
repeat = false
[[column]]
heading = "cc"
value = "{flow1.cc}"
labels = { "reno" = "Reno alone" }
[[column]]
heading = "seed η (% C)"
value = ["{seed.reno} / {seed.ledbat}", "{seed.total}"]
[[column]]
heading = "ours η (% of max)"
value = ["{flow2.share*utilization_of_max} / {flow1.share*utilization_of_max:1}", "{utilization_of_max}"]
scale = 100
decimals = 2
"#;

    const DATA: &str = "link.buffer,flow1.cc,utilization_of_max,flow1.share,flow2.share,runs\n\
        100ms,\"ledbat:a=1,b=2\",0.5,0.25,0.75,2\n\
        100ms,reno,0.9999,1,,2\n\
        50ms,\"ledbat:a=1,b=2\",1,0.5,0.5,2\n";

    const SEED: &str = "link.buffer,flow1.cc,reno,ledbat,total,source\n\
        100ms,\"ledbat:a=1,b=2\",98.04,1.95,99.99,seed Table I\n\
        100ms,reno,,,99.99,seed Table I\n";

    fn measured() -> Measured {
        Measured {
            mode: "sim".into(),
            engine: Some("quiche".into()),
            commit: "abc1234".into(),
            date: "2026-11-28".into(),
            runs: 6,
        }
    }

    #[test]
    fn a_table_is_its_data_formatted_with_the_seeds_numbers_beside() {
        let data = Csv::parse("d.csv", DATA).unwrap();
        let seed = Csv::parse("s.csv", SEED).unwrap();
        let lines = render("t", &table(SPEC), &data, Some(&seed), &measured()).unwrap();
        assert_eq!(
            lines.join("\n"),
            "| buffer | cc | seed η (% C) | ours η (% of max) |\n\
             |---|---|---|---|\n\
             | 84 packets | ledbat:a=1,b=2 | 98.04 / 1.95 | 37.50 / 12.5 |\n\
             | | Reno alone | 99.99 | 99.99 |\n\
             | 50ms | ledbat:a=1,b=2 | – | 50.00 / 50.0 |\n\
             \n\
             *Generated from `docs/data/t.csv` by `lbe-lab docs-tables`: 6 runs of `sweeps/a.toml` and `sweeps/b.toml` in the simulator (engine `quiche`), lbe-lab built at commit abc1234 on 2026-11-28, each row the mean over its runs; re-measured by `scripts/paper-figures.sh --only t`. The seed's numbers: `docs/data/t.seed.csv` (seed Table I).*"
        );
    }

    #[test]
    fn unknown_columns_and_numbers_without_decimals_are_errors() {
        let data = Csv::parse("d.csv", DATA).unwrap();
        let seed = Csv::parse("s.csv", SEED).unwrap();
        let spec = table(&SPEC.replace("{flow1.cc}", "{flow3.cc}"));
        assert_eq!(
            render("t", &spec, &data, Some(&seed), &measured()).unwrap_err(),
            "unknown column 'flow3.cc' (docs/data/t.csv has link.buffer, flow1.cc, utilization_of_max, flow1.share, flow2.share, runs)"
        );
        let spec = table(&SPEC.replace("{seed.total}", "{seed.sum}"));
        assert_eq!(
            render("t", &spec, &data, Some(&seed), &measured()).unwrap_err(),
            "unknown column 'sum' (docs/data/t.seed.csv has link.buffer, flow1.cc, reno, ledbat, total, source)"
        );
        assert_eq!(
            render("t", &table(SPEC), &data, None, &measured()).unwrap_err(),
            "'{seed.reno}' but there is no docs/data/t.seed.csv"
        );
        let spec = table(&SPEC.replace("decimals = 2\n", ""));
        assert_eq!(
            render("t", &spec, &data, Some(&seed), &measured()).unwrap_err(),
            "column 'ours η (% of max)': a number (flow2.share*utilization_of_max) but no 'decimals'"
        );
        let spec = table(&SPEC.replace("{link.buffer}", "{link.buffer*runs}"));
        assert_eq!(
            render("t", &spec, &data, Some(&seed), &measured()).unwrap_err(),
            "column 'buffer': 'link.buffer*runs' multiplies values that are not numbers (100ms, 2)"
        );
        let twice = format!("{SEED}100ms,reno,,,99.9,again\n");
        let seed = Csv::parse("s.csv", &twice).unwrap();
        assert_eq!(
            render("t", &table(SPEC), &data, Some(&seed), &measured()).unwrap_err(),
            "docs/data/t.seed.csv: rows 3 and 4 both match row 3 of t.csv (on link.buffer, flow1.cc)"
        );
    }

    #[test]
    fn ranges_collapse_when_equal_and_bars_say_yes_no_or_nothing() {
        let spec = table(
            r#"
sweeps = ["s.toml"]
[rows]
keys = ["rtt", "cc"]
metrics = ["u", "q"]
range = true
pivot = ["cc"]
[[column]]
heading = "rtt"
value = "{rtt}"
[[column]]
heading = "draft"
value = "{u.min@draft..u.max@draft:3}; {q.min@draft..q.max@draft:1}"
[[column]]
heading = "full"
value = "{u.min@full..u.max@full}"
decimals = 3
[[column]]
heading = "met"
bar = [
  { value = "u.min@full", at_least = 0.97, when = { rtt = "10ms" } },
  { value = "q.max@full", at_most = 60, when = { rtt = "10ms" } },
  { value = "u.min@full", at_least = "u.max@draft", times = 2, when = { rtt = "300ms" } },
]
"#,
        );
        let data = Csv::parse(
            "d.csv",
            "rtt,u.min@draft,u.max@draft,q.min@draft,q.max@draft,u.min@full,u.max@full,q.max@full\n\
             10ms,0.9701,0.9704,57.49,57.51,0.985,0.999,3.2\n\
             10ms,0.9,0.9,50,50,0.9699,0.99,3.2\n\
             10ms,0.9,0.9,50,50,0.98,0.99,60.01\n\
             300ms,0.2,0.25,1,1,0.5,0.6,1\n\
             300ms,0.2,0.251,1,1,0.5,0.6,1\n\
             300ms,0.2,,1,1,0.5,0.6,1\n\
             50ms,0.2,0.2,1,1,0.5,0.6,1\n",
        )
        .unwrap();
        let lines = render("t", &spec, &data, None, &measured()).unwrap();
        assert_eq!(
            lines[..9],
            [
                "| rtt | draft | full | met |",
                "|---|---|---|---|",
                "| 10ms | 0.970; 57.5 | 0.985–0.999 | yes |",
                "| 10ms | 0.900; 50.0 | 0.970–0.990 | no |",
                "| 10ms | 0.900; 50.0 | 0.980–0.990 | no |",
                "| 300ms | 0.200–0.250; 1.0 | 0.500–0.600 | yes |",
                "| 300ms | 0.200–0.251; 1.0 | 0.500–0.600 | no |",
                "| 300ms | – | 0.500–0.600 | – |",
                "| 50ms | 0.200; 1.0 | 0.500–0.600 | – |",
            ]
        );
        assert_eq!(
            lines[10],
            "*Generated from `docs/data/t.csv` by `lbe-lab docs-tables`: 6 runs of `s.toml` in the simulator (engine `quiche`), lbe-lab built at commit abc1234 on 2026-11-28, each row the mean, the lowest and the highest over its runs; re-measured by `scripts/paper-figures.sh --only t`.*"
        );
        let bad = spec_with_bar("{ value = \"u.min@seed\", at_least = 1 }");
        assert_eq!(
            render("t", &bad, &data, None, &measured()).unwrap_err(),
            "unknown column 'u.min@seed' (docs/data/t.csv has rtt, u.min@draft, u.max@draft, q.min@draft, q.max@draft, u.min@full, u.max@full, q.max@full)"
        );
    }

    fn spec_with_bar(bar: &str) -> TableSpec {
        table(&format!(
            "sweeps = [\"s.toml\"]\n[rows]\nkeys = []\nmetrics = []\n[[column]]\nheading = \"met\"\nbar = [{bar}]\n"
        ))
    }

    #[test]
    fn a_repeated_cell_is_blank_only_within_the_group_on_its_left() {
        let spec = table(
            "sweeps = [\"s.toml\"]\n[rows]\nkeys = [\"g\", \"seed\"]\nmetrics = []\n\
             [[column]]\nheading = \"G\"\nvalue = \"{g}\"\nrepeat = false\n\
             [[column]]\nheading = \"claim\"\nvalue = \"{claim}\"\nrepeat = false\n\
             [[column]]\nheading = \"seed\"\nvalue = \"{seed}\"\ndecimals = 0\n",
        );
        let data = Csv::parse(
            "d.csv",
            "g,claim,seed\n0.1ms,small,1\n0.1ms,small,2\n2ms,full,1\n6ms,full,1\n6ms,full,2\n",
        )
        .unwrap();
        let lines = render("t", &spec, &data, None, &measured()).unwrap();
        assert_eq!(
            lines[2..7],
            [
                "| 0.1ms | small | 1 |",
                "| | | 2 |",
                "| 2ms | full | 1 |",
                "| 6ms | full | 1 |",
                "| | | 2 |",
            ]
        );
    }
}
