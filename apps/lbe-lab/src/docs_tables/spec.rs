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
    pub sweeps: Vec<String>,
    /// The sweeps run with `--baseline`: each workload flow gets its
    /// figures with the bulk flows removed (same flow numbers, so the same
    /// seeded arrivals) and the harm, as `flowN.harm.*` and
    /// `flowN.baseline.*` metrics.
    #[serde(default)]
    pub baseline: bool,
    pub rows: RowsSpec,
    #[serde(rename = "column")]
    pub columns: Vec<ColumnSpec>,
}

/// Which rows and columns of the sweeps' results `NAME.csv` keeps.
#[derive(Clone, Debug, Deserialize, PartialEq)]
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
}

/// One column of the Markdown table.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub heading: String,
    /// A template, or several: the first whose every `{...}` has a value
    /// in the row makes the cell (none: `–`). `{COL}` is a column of
    /// `NAME.csv`, `{A*B}` the product of two, `{COL:N}` with N decimals;
    /// `{seed.COL}` a column of `NAME.seed.csv`, verbatim.
    pub value: Templates,
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
    let spec: TableSpec = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        format!("{file}:{line}: {}", crate::scenario::toml_message(&e))
    })?;
    if spec.sweeps.is_empty() {
        return Err(format!("{file}: 'sweeps' names no sweep"));
    }
    if spec.columns.is_empty() {
        return Err(format!("{file}: no [[column]]"));
    }
    for k in &spec.rows.order_by {
        if !spec.rows.keys.contains(k) {
            return Err(format!(
                "{file}: order_by '{k}' is not one of the keys ({})",
                spec.rows.keys.join(", ")
            ));
        }
    }
    for (i, c) in spec.columns.iter().enumerate() {
        if c.value.all().is_empty() {
            return Err(format!("{file}: column {} has no value template", i + 1));
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
    }
}
