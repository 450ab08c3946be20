//! A table's description, `docs/data/NAME.toml`: the sweeps behind it,
//! which of their results its data keeps (`[rows]`) and how each column
//! shows them (`[[column]]`). The format is documented in docs/lbe-lab.md
//! ("Tables in docs/ from data").

use std::collections::BTreeMap;

use serde::Deserialize;

/// `docs/data/NAME.toml`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// The sweep files behind the table, from the repository's top
    /// (`sweeps/seed004-table1.toml`); their rows follow one another in
    /// `NAME.csv`, in this order.
    #[serde(default)]
    pub sweeps: Vec<String>,
    /// Instead of sweeps: a file of figures the lab measured in real time
    /// (`docs/data/fidelity.lab.toml`), beside which `lbe-lab docs-data`
    /// puts the simulator's ([`crate::fidelity`]); the table's data is
    /// then the comparison's, and `[rows]` is not used.
    #[serde(default)]
    pub lab: Option<String>,
    /// The sweeps run with `--baseline`: each workload flow gets its
    /// figures with the bulk flows removed (same flow numbers, so the same
    /// seeded arrivals) and the harm, as `flowN.harm.*` and
    /// `flowN.baseline.*` metrics.
    #[serde(default)]
    pub baseline: bool,
    /// Other sweeps each run of `sweeps` is matched to, run for run, for
    /// the metrics `ref.M` and `A/B` (`[rows]`).
    #[serde(default)]
    pub reference: Option<ReferenceSpec>,
    #[serde(default)]
    pub rows: RowsSpec,
    #[serde(rename = "column")]
    pub columns: Vec<ColumnSpec>,
}

/// `[reference]`: the sweeps whose runs are the table's runs' references.
/// Each run of `sweeps` has exactly one run of these with the same values
/// of `on`; its metric M is the run's `ref.M`, and `A/B` divides two
/// metrics of the run (either may be a `ref.`), run by run before the
/// mean: a download's goodput beside an upload over its goodput alone,
/// seed by seed (`flow1.goodput_mbps/ref.flow1.goodput_mbps`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    /// Sweep files, as `sweeps`.
    pub sweeps: Vec<String>,
    /// What a run and its reference share: axes, or `flowN.cc`
    /// (`seed` for seed by seed).
    pub on: Vec<String>,
}

impl TableSpec {
    /// Every sweep the table's data comes from: `sweeps`, then
    /// `[reference]`'s (the results directories `lbe-lab docs-data` takes,
    /// in this order).
    pub fn all_sweeps(&self) -> Vec<&String> {
        let reference = self.reference.iter().flat_map(|r| &r.sweeps);
        self.sweeps.iter().chain(reference).collect()
    }
}

/// Which rows and columns of the sweeps' results `NAME.csv` keeps.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RowsSpec {
    /// A row per distinct value of these (axes, or `flowN.cc`), in the
    /// order they first appear; every run with those values counts in the
    /// row, and its metrics are their mean over those runs (over the
    /// seeds, when every other axis is a key or fixed by `where`).
    pub keys: Vec<String>,
    /// The sweep's metric names (`utilization_of_max`, `flow2.share`,
    /// `flow1.goodput_mbps`, a workload flow's `flow3.fct_s.p95`, ...).
    pub metrics: Vec<String>,
    /// Only the runs with these axis values.
    #[serde(default, rename = "where")]
    pub filter: BTreeMap<String, String>,
    /// Rows grouped by these keys (stable: each group where its value
    /// first appears), e.g. two sweeps' rows interleaved by buffer.
    #[serde(default)]
    pub order_by: Vec<String>,
    /// Each metric also as `METRIC.min` and `METRIC.max`: the lowest and
    /// highest over the row's runs (over the seeds).
    #[serde(default)]
    pub range: bool,
    /// Keys whose values become columns instead of rows: a row per value
    /// of the other keys, and each metric (and `runs`) once per value of
    /// these, as `METRIC@VALUE` (several keys: their values joined by
    /// `,`), e.g. the three profiles side by side.
    #[serde(default)]
    pub pivot: Vec<String>,
    /// The name a pivot value takes in its columns' names
    /// (`"ledbatpp:profile=draft" = "draft"`); without one, the value.
    #[serde(default)]
    pub pivot_names: BTreeMap<String, String>,
}

/// One column of the Markdown table.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub heading: String,
    /// A template, or several: the first whose every `{...}` has a value
    /// in the row makes the cell (none: `–`). `{COL}` is a column of
    /// `NAME.csv`, `{A*B}` the product of two, `{COL:N}` with N decimals,
    /// `{LO..HI}` a range of two (`0.985–0.999`, or one number when both
    /// show the same); `{seed.COL}` a column of `NAME.seed.csv`, verbatim.
    /// A column has a `value` or a `bar`, not both.
    #[serde(default)]
    pub value: Templates,
    /// A bar check instead of a value: `yes` when every bar that applies
    /// to the row holds, `no` when one does not, `–` when none applies or
    /// a value is missing.
    #[serde(default)]
    pub bar: Vec<BarSpec>,
    /// Decimals of the numbers from `NAME.csv` (after `scale`).
    #[serde(default)]
    pub decimals: Option<usize>,
    /// What numbers from `NAME.csv` are multiplied by (100 for percent).
    #[serde(default = "one")]
    pub scale: f64,
    /// Text shown for a value of `NAME.csv` (`"100ms" = "84 packets"`).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// `false`: a cell equal to the one above it is left blank (a group's
    /// first row names it), while every `repeat = false` cell to its left
    /// is blank too (within the group they make).
    #[serde(default = "yes")]
    pub repeat: bool,
}

/// One bar of a `bar` column: a column of `NAME.csv` against a threshold,
/// on the unrounded values.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BarSpec {
    /// The column checked (`utilization_of_max.min@full`).
    pub value: String,
    /// The bar holds when the value is at least this (times `times`).
    #[serde(default)]
    pub at_least: Option<Threshold>,
    /// The bar holds when the value is at most this (times `times`).
    #[serde(default)]
    pub at_most: Option<Threshold>,
    /// What the threshold is multiplied by (`2`: twice the draft's).
    #[serde(default = "one")]
    pub times: f64,
    /// Only in the rows whose columns have these values.
    #[serde(default)]
    pub when: BTreeMap<String, String>,
}

/// A bar's threshold: a number, or a column of `NAME.csv` (the same
/// row's value).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Threshold {
    Number(f64),
    Column(String),
}

fn one() -> f64 {
    1.0
}

fn yes() -> bool {
    true
}

/// One template or a list of them.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Templates {
    One(String),
    Many(Vec<String>),
}

impl Default for Templates {
    fn default() -> Self {
        Templates::Many(Vec::new())
    }
}

impl Templates {
    pub fn all(&self) -> Vec<&str> {
        match self {
            Templates::One(t) => vec![t.as_str()],
            Templates::Many(ts) => ts.iter().map(String::as_str).collect(),
        }
    }
}

/// Reads a table's description; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<TableSpec, String> {
    let spec: TableSpec =
        toml::from_str(text).map_err(|e| crate::scenario::toml_error(file, text, &e))?;
    match (&spec.lab, spec.sweeps.is_empty()) {
        (None, true) => {
            return Err(format!(
                "{file}: 'sweeps' names no sweep (or 'lab' a file of the lab's figures)"
            ))
        }
        (Some(_), false) => {
            return Err(format!(
                "{file}: a table comes from 'sweeps' or from 'lab', not both"
            ))
        }
        (Some(_), true) if spec.reference.is_some() || spec.baseline => {
            return Err(format!(
                "{file}: a 'lab' table has no [reference] and no 'baseline' (the lab's figures are its reference)"
            ))
        }
        (Some(_), true) if spec.rows != RowsSpec::default() => {
            return Err(format!(
                "{file}: a 'lab' table has no [rows] (its rows are the lab file's scenarios)"
            ))
        }
        _ => (),
    }
    if spec.columns.is_empty() {
        return Err(format!("{file}: no [[column]]"));
    }
    match &spec.reference {
        Some(r) if r.sweeps.is_empty() => {
            return Err(format!("{file}: [reference] 'sweeps' names no sweep"))
        }
        Some(r) if r.on.is_empty() => {
            return Err(format!(
                "{file}: [reference] 'on' names no key (the axes a run and its reference share)"
            ))
        }
        Some(_) => (),
        None => {
            if let Some(m) = spec.rows.metrics.iter().find(|m| m.contains("ref.")) {
                return Err(format!(
                    "{file}: metric '{m}' reads a reference run, but the table has no [reference]"
                ));
            }
        }
    }
    for k in &spec.rows.order_by {
        if !spec.rows.keys.contains(k) {
            return Err(format!(
                "{file}: order_by '{k}' is not one of the keys ({})",
                spec.rows.keys.join(", ")
            ));
        }
    }
    for k in &spec.rows.pivot {
        if !spec.rows.keys.contains(k) {
            return Err(format!(
                "{file}: pivot '{k}' is not one of the keys ({})",
                spec.rows.keys.join(", ")
            ));
        }
        if spec.rows.order_by.contains(k) {
            return Err(format!(
                "{file}: '{k}' is both a pivot and an order_by key (a pivot key makes columns, not rows)"
            ));
        }
    }
    for (i, c) in spec.columns.iter().enumerate() {
        match (c.value.all().is_empty(), c.bar.is_empty()) {
            (true, true) => return Err(format!("{file}: column {} has no value template", i + 1)),
            (false, false) => {
                return Err(format!(
                    "{file}: column {} ('{}'): a 'value' or a 'bar', not both",
                    i + 1,
                    c.heading
                ))
            }
            _ => {}
        }
        for b in &c.bar {
            if b.at_least.is_some() == b.at_most.is_some() {
                return Err(format!(
                    "{file}: column {} ('{}'): each bar has one of 'at_least' and 'at_most' (bar on '{}')",
                    i + 1,
                    c.heading,
                    b.value
                ));
            }
        }
        for t in c.value.all() {
            crate::docs_tables::template::placeholders(t)
                .map_err(|e| format!("{file}: column {} ('{}'): {e}", i + 1, c.heading))?;
        }
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_bad_templates_are_refused_with_the_line() {
        let e = parse(
            "t.toml",
            "sweeps = [\"s.toml\"]\n[rows]\nkeys = []\nmetrics = []\ncolour = 1\n",
        )
        .unwrap_err();
        assert!(e.starts_with("t.toml:5: "), "{e}");
        assert!(e.contains("colour"), "{e}");
        let e = parse(
            "t.toml",
            "sweeps = [\"s.toml\"]\n[rows]\nkeys = []\nmetrics = []\n[[column]]\nheading = \"x\"\nvalue = \"{a\"\n",
        )
        .unwrap_err();
        assert_eq!(e, "t.toml: column 1 ('x'): '{' without its '}' in '{a'");
        let e = parse(
            "t.toml",
            "sweeps = [\"s.toml\"]\n[rows]\nkeys = [\"a\"]\nmetrics = []\norder_by = [\"b\"]\n[[column]]\nheading = \"x\"\nvalue = \"{a}\"\n",
        )
        .unwrap_err();
        assert_eq!(e, "t.toml: order_by 'b' is not one of the keys (a)");
        let body = "[rows]\nkeys = [\"a\"]\nmetrics = [\"m/ref.m\"]\n[[column]]\nheading = \"x\"\nvalue = \"{a}\"\n";
        let e = parse("t.toml", &format!("sweeps = [\"s.toml\"]\n{body}")).unwrap_err();
        assert_eq!(
            e,
            "t.toml: metric 'm/ref.m' reads a reference run, but the table has no [reference]"
        );
        let with = |reference: &str| {
            parse(
                "t.toml",
                &format!("sweeps = [\"s.toml\"]\n[reference]\n{reference}\n{body}"),
            )
        };
        assert_eq!(
            with("sweeps = [\"r.toml\"]\non = []").unwrap_err(),
            "t.toml: [reference] 'on' names no key (the axes a run and its reference share)"
        );
        let spec = with("sweeps = [\"r.toml\"]\non = [\"seed\"]").unwrap();
        assert_eq!(spec.all_sweeps(), ["s.toml", "r.toml"]);
        let table = |rows: &str, column: &str| {
            parse(
                "t.toml",
                &format!("sweeps = [\"s.toml\"]\n[rows]\nkeys = [\"a\", \"cc\"]\nmetrics = []\n{rows}\n[[column]]\nheading = \"x\"\n{column}\n"),
            )
        };
        assert_eq!(
            table("pivot = [\"b\"]", "value = \"{a}\"").unwrap_err(),
            "t.toml: pivot 'b' is not one of the keys (a, cc)"
        );
        assert_eq!(
            table("pivot = [\"a\"]\norder_by = [\"a\"]", "value = \"{a}\"").unwrap_err(),
            "t.toml: 'a' is both a pivot and an order_by key (a pivot key makes columns, not rows)"
        );
        assert_eq!(
            table(
                "",
                "value = \"{a}\"\nbar = [{ value = \"a\", at_least = 1 }]"
            )
            .unwrap_err(),
            "t.toml: column 1 ('x'): a 'value' or a 'bar', not both"
        );
        assert_eq!(
            table("", "bar = [{ value = \"a\" }]").unwrap_err(),
            "t.toml: column 1 ('x'): each bar has one of 'at_least' and 'at_most' (bar on 'a')"
        );
        let spec = table(
            "range = true\npivot = [\"cc\"]\npivot_names = { \"ledbatpp:profile=full\" = \"full\" }",
            "bar = [{ value = \"a.min@full\", at_least = \"a.max@draft\", times = 2, when = { a = \"1\" } }]",
        )
        .unwrap();
        assert_eq!(
            spec.columns[0].bar,
            [BarSpec {
                value: "a.min@full".into(),
                at_least: Some(Threshold::Column("a.max@draft".into())),
                at_most: None,
                times: 2.0,
                when: [("a".to_string(), "1".to_string())].into(),
            }]
        );
        assert_eq!(spec.rows.pivot_names["ledbatpp:profile=full"], "full");
    }

    #[test]
    fn a_table_comes_from_sweeps_or_from_the_labs_figures() {
        let column = "[[column]]\nheading = \"x\"\nvalue = \"{scenario}\"\n";
        let spec = parse(
            "t.toml",
            &format!("lab = \"docs/data/t.lab.toml\"\n{column}"),
        )
        .unwrap();
        assert_eq!(spec.lab.as_deref(), Some("docs/data/t.lab.toml"));
        assert!(spec.all_sweeps().is_empty());
        assert_eq!(
            parse("t.toml", column).unwrap_err(),
            "t.toml: 'sweeps' names no sweep (or 'lab' a file of the lab's figures)"
        );
        assert_eq!(
            parse(
                "t.toml",
                &format!("sweeps = [\"s.toml\"]\nlab = \"l.toml\"\n{column}")
            )
            .unwrap_err(),
            "t.toml: a table comes from 'sweeps' or from 'lab', not both"
        );
        assert_eq!(
            parse("t.toml", &format!("lab = \"l.toml\"\nbaseline = true\n{column}")).unwrap_err(),
            "t.toml: a 'lab' table has no [reference] and no 'baseline' (the lab's figures are its reference)"
        );
        assert_eq!(
            parse(
                "t.toml",
                &format!("lab = \"l.toml\"\n[rows]\nkeys = [\"a\"]\nmetrics = []\n{column}")
            )
            .unwrap_err(),
            "t.toml: a 'lab' table has no [rows] (its rows are the lab file's scenarios)"
        );
    }
}
