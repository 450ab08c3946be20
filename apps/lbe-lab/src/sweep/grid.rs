//! The sweep file and its grid: the axes read from the file's lists, and
//! each point of the grid as a scenario (every point checked on loading).

use std::collections::BTreeMap;
use std::path::Path;

use toml::Table;
use toml::Value;

use crate::scenario::Scenario;
use crate::sweep::metrics::metric_check;
use crate::sweep::spec::Axis;
use crate::sweep::spec::FigureSpec;

/// A checked sweep.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    pub axes: Vec<Axis>,
    pub figures: Vec<FigureSpec>,
    base: Table,
    raw_axes: Vec<(AxisPath, Vec<Value>)>,
    pub(super) path: String,
}

#[derive(Clone, Debug)]
enum AxisPath {
    Seed,
    Key(&'static str, String),
    Flow(usize, String),
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads and checks a sweep file: every point of the grid must be a valid
/// scenario.
pub fn load(path: &Path) -> Result<Sweep, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(path, &text)
}

/// Checks a sweep's text; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Sweep, String> {
    let p = path.display().to_string();
    let mut doc: Table = text
        .parse()
        .map_err(|e: toml::de::Error| crate::scenario::toml_error(&p, text, &e))?;
    let name = match doc.remove("name") {
        None => path
            .file_stem()
            .map_or("sweep".into(), |s| s.to_string_lossy().into_owned()),
        Some(Value::String(s)) => s,
        Some(_) => return Err(format!("{p}: 'name' must be a string")),
    };
    let figures: Vec<FigureSpec> = match doc.remove("figure") {
        None => Vec::new(),
        Some(v) => v.try_into().map_err(|e: toml::de::Error| {
            format!("{p}: [[figure]]: {}", crate::scenario::toml_message(&e))
        })?,
    };
    let mut raw_axes: Vec<(AxisPath, Vec<Value>)> = Vec::new();
    for table in ["link", "analysis"] {
        if let Some(Value::Table(t)) = doc.get(table) {
            for (k, v) in t {
                // `[[link.change]]` (an array of tables) is fixed; an array
                // of such arrays is an axis of change lists.
                let changes = k == "change"
                    && !matches!(v, Value::Array(a) if a.iter().all(|c| matches!(c, Value::Array(_))));
                if let (Value::Array(a), false) = (v, changes) {
                    raw_axes.push((AxisPath::Key(table, k.clone()), a.clone()));
                }
            }
        }
    }
    if let Some(Value::Array(flows)) = doc.get("flow") {
        for (i, f) in flows.iter().enumerate() {
            if let Value::Table(t) = f {
                for (k, v) in t {
                    if let Value::Array(a) = v {
                        raw_axes.push((AxisPath::Flow(i, k.clone()), a.clone()));
                    }
                }
            }
        }
    }
    let seeds = match (doc.remove("seeds"), doc.get("seed")) {
        (Some(_), Some(_)) => return Err(format!("{p}: give 'seeds' or 'seed', not both")),
        (Some(Value::Integer(n)), None) if (1..=10_000).contains(&n) => {
            Some((1..=n).map(Value::Integer).collect::<Vec<_>>())
        }
        (Some(Value::Array(a)), None) => Some(a),
        (Some(_), None) => {
            return Err(format!(
                "{p}: 'seeds' must be a count from 1 to 10000 or a list of seeds"
            ))
        }
        (None, Some(Value::Array(a))) => {
            let a = a.clone();
            doc.remove("seed");
            Some(a)
        }
        (None, _) => None,
    };
    if let Some(s) = seeds {
        raw_axes.push((AxisPath::Seed, s));
    }
    for (path_, values) in &raw_axes {
        if values.is_empty() {
            return Err(format!("{p}: {} is an empty list", axis_name(path_)));
        }
    }
    let axes: Vec<Axis> = raw_axes
        .iter()
        .map(|(a, v)| Axis {
            name: axis_name(a),
            values: v.iter().map(value_text).collect(),
        })
        .collect();
    let sweep = Sweep {
        name,
        axes,
        figures,
        base: doc,
        raw_axes,
        path: p.clone(),
    };
    // Checked: with enough axes the product overflows (and would wrap to
    // a small number in a release build).
    let total = sweep
        .raw_axes
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
        .filter(|n| *n <= 1_000_000)
        .ok_or_else(|| format!("{p}: more than 1000000 runs; a sweep may have at most 1000000"))?;
    for i in 0..total {
        sweep.scenario(i)?;
    }
    for f in &sweep.figures {
        sweep.check_figure(f)?;
    }
    Ok(sweep)
}

fn axis_name(a: &AxisPath) -> String {
    match a {
        AxisPath::Seed => "seed".into(),
        AxisPath::Key(t, k) => format!("{t}.{k}"),
        AxisPath::Flow(i, k) => format!("flow{}.{k}", i + 1),
    }
}

impl Sweep {
    /// Number of runs in the grid.
    pub fn len(&self) -> usize {
        self.raw_axes.iter().map(|(_, v)| v.len()).product()
    }

    /// Whether the grid is empty (never: every axis has a value).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each axis's value index for run `index` (the last axis fastest).
    fn digits(&self, mut index: usize) -> Vec<usize> {
        let mut d = vec![0; self.raw_axes.len()];
        for (k, (_, v)) in self.raw_axes.iter().enumerate().rev() {
            d[k] = index % v.len();
            index /= v.len();
        }
        d
    }

    /// Run `index`'s parameters.
    pub fn params(&self, index: usize) -> BTreeMap<String, String> {
        self.digits(index)
            .iter()
            .zip(&self.axes)
            .map(|(&d, a)| (a.name.clone(), a.values[d].clone()))
            .collect()
    }

    /// Run `index` as a scenario.
    pub fn scenario(&self, index: usize) -> Result<Scenario, String> {
        let mut doc = self.base.clone();
        for (&d, (path, values)) in self.digits(index).iter().zip(&self.raw_axes) {
            let v = values[d].clone();
            match path {
                AxisPath::Seed => {
                    doc.insert("seed".into(), v);
                }
                AxisPath::Key(t, k) => {
                    if let Some(Value::Table(tab)) = doc.get_mut(*t) {
                        tab.insert(k.clone(), v);
                    }
                }
                AxisPath::Flow(i, k) => {
                    if let Some(Value::Array(flows)) = doc.get_mut("flow") {
                        if let Some(Value::Table(tab)) = flows.get_mut(*i) {
                            tab.insert(k.clone(), v);
                        }
                    }
                }
            }
        }
        // Top-level keys must come before any table in TOML.
        let mut ordered = Table::new();
        for (k, v) in doc
            .iter()
            .filter(|(_, v)| !matches!(v, Value::Table(_) | Value::Array(_)))
        {
            ordered.insert(k.clone(), v.clone());
        }
        for (k, v) in doc
            .iter()
            .filter(|(_, v)| matches!(v, Value::Table(_) | Value::Array(_)))
        {
            ordered.insert(k.clone(), v.clone());
        }
        let text = toml::to_string(&ordered).map_err(|e| format!("{}: {e}", self.path))?;
        let params = self
            .params(index)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        // Named after the sweep file, so that trace paths are read next to it.
        crate::scenario::parse(Path::new(&self.path), &text).map_err(|e| {
            let e = e.strip_prefix(&format!("{}:", self.path)).unwrap_or(&e);
            let e = e.split_once(": ").map_or(e, |(_, m)| m);
            format!("{}: run {index} ({params}): {e}", self.path)
        })
    }

    fn check_figure(&self, f: &FigureSpec) -> Result<(), String> {
        let p = &self.path;
        if f.name.is_empty()
            || !f
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "{p}: figure name '{}': letters, digits, '-' and '_' only",
                f.name
            ));
        }
        let known = |a: &str| self.axes.iter().any(|x| x.name == a);
        if !known(&f.x) {
            return Err(format!(
                "{p}: figure '{}': x '{}' is not an axis of the sweep (axes: {})",
                f.name,
                f.x,
                self.axes
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for (a, v) in f.filter.iter().flatten() {
            let axis = self.axes.iter().find(|x| &x.name == a).ok_or_else(|| {
                format!(
                    "{p}: figure '{}': where '{a}' is not an axis of the sweep",
                    f.name
                )
            })?;
            if !axis.values.contains(v) {
                return Err(format!(
                    "{p}: figure '{}': where {a} = '{v}' is not one of its values ({})",
                    f.name,
                    axis.values.join(", ")
                ));
            }
        }
        for s in f.series.iter().flatten() {
            if !known(s) {
                return Err(format!(
                    "{p}: figure '{}': series '{s}' is not an axis of the sweep",
                    f.name
                ));
            }
        }
        let kinds: Vec<String> = self
            .base
            .get("flow")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|f| {
                        f.get("kind")
                            .and_then(Value::as_str)
                            .unwrap_or("quic-bulk")
                            .to_string()
                    })
                    .collect()
            })
            .unwrap_or_default();
        metric_check(&f.y, &kinds).map_err(|e| format!("{p}: figure '{}': {e}", f.name))
    }
}
