//! Sweeps: a grid of scenarios run in the simulator (or in real time), with
//! results that shard across machines and merge back.
//!
//! A sweep file is a scenario file (see [`crate::scenario`]) in which any
//! value of `[link]`, `[analysis]` or a `[[flow]]` may be a list: the grid
//! is every combination of the lists. `seeds = N` (or a list) repeats each
//! combination with seeds 1..=N. `[[figure]]` tables say what to plot.
//!
//! ```toml
//! name = "solo-rate-vs-rtt"
//! seeds = 8
//! [link]
//! rate = "20mbit"
//! rtt = ["10ms", "20ms", "50ms"]
//! buffer = ["500ms", "30ms"]
//! [[flow]]
//! cc = "ledbatpp"
//! stop = "300s"
//! [[figure]]
//! name = "rate-vs-rtt"
//! x = "link.rtt"              # an axis
//! y = "flow1.goodput_mbps"    # a metric (below)
//! series = ["link.buffer"]    # one line per value (default: the other axes)
//! title = "LEDBAT++ alone"
//! log_x = true
//! reference = [[10, 18.0], [20, 18.1]]   # the paper's points, same units
//! reference_label = "seed 000 Fig. 2"
//! where = { "link.buffer" = "500ms" }    # only these runs (optional)
//! ```
//!
//! Axes are named `link.KEY`, `analysis.KEY`, `flowN.KEY` (N from 1) and
//! `seed`. Metrics: `utilization`, `utilization_of_max`, `jain_index`,
//! `total_goodput_mbps`, and per bulk flow `flowN.goodput_mbps`,
//! `flowN.share`, `flowN.queue_mean_ms`, `flowN.queue_p95_ms`,
//! `flowN.lost_packets`; per workload flow (web, ping, video, cbr) the
//! dotted keys of its `summary.json` figures, `flowN.fct_s.p95`,
//! `flowN.added_delay_ms.p95`, `flowN.stall_s`, and with `--baseline`
//! `flowN.baseline.…` and `flowN.harm.…` (a wrong key is refused with the
//! list of the flow's keys).
//!
//! A whole sweep (or a merge of its shards) also writes `report.html`:
//! its axes, its figures and, with workload flows, a foreground section
//! of CDFs with one line per bulk controller
//! ([`crate::foreground::sweep_sections`]), drawn from the samples each
//! run keeps in `results.json` (a web flow's completion times, a ping
//! flow's added delays).
//!
//! Runs are numbered in grid order (the last axis, `seed`, fastest).
//! `--shard I/N` runs those whose number is I modulo N (I from 0, as
//! Kubernetes' `JOB_COMPLETION_INDEX`; a Slurm array passes
//! `$SLURM_ARRAY_TASK_ID`), and [`merge`] puts shards back together: the
//! merged `results.json` is byte for byte the unsharded one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;

use serde::Deserialize;
use serde::Serialize;
use toml::Table;
use toml::Value;

use lbe_workload::figures::WorkloadFigures;

use crate::scenario::Scenario;
use crate::workload::WorkloadSummary;

/// One swept key and its values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub name: String,
    /// As written in the file (`"10ms"`, `0.01`, `3`).
    pub values: Vec<String>,
}

/// A `[[figure]]` of a sweep file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    pub name: String,
    pub x: String,
    pub y: String,
    #[serde(default)]
    pub series: Option<Vec<String>>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub log_x: bool,
    #[serde(default)]
    pub reference: Option<Vec<(f64, f64)>>,
    #[serde(default)]
    pub reference_label: Option<String>,
    /// Only the runs whose axes have these values (`where = { "link.buffer" = "500ms" }`).
    #[serde(default, rename = "where")]
    pub filter: Option<BTreeMap<String, String>>,
}

/// A checked sweep.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    pub axes: Vec<Axis>,
    pub figures: Vec<FigureSpec>,
    base: Table,
    raw_axes: Vec<(AxisPath, Vec<Value>)>,
    path: String,
}

#[derive(Clone, Debug)]
enum AxisPath {
    Seed,
    Key(&'static str, String),
    Flow(usize, String),
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub index: usize,
    /// Axis name → value, as in the file.
    pub params: BTreeMap<String, String>,
    pub utilization: Option<f64>,
    pub utilization_of_max: Option<f64>,
    pub jain_index: Option<f64>,
    /// The bulk flows (quic-bulk, h3), in scenario order.
    pub flows: Vec<FlowResult>,
    /// The workload flows (web, ping, video, cbr), in scenario order
    /// (absent without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadResult>,
}

impl RunResult {
    /// The bulk flows' positions among the scenario's flows (flowN's N,
    /// from 1), in order: the positions the workload flows leave.
    pub fn bulk_positions(&self) -> Vec<usize> {
        (1..)
            .filter(|n| !self.workloads.iter().any(|w| w.flow == *n))
            .take(self.flows.len())
            .collect()
    }

    /// The bulk flow at position `n` among the scenario's flows.
    fn bulk_flow(&self, n: usize) -> Option<&FlowResult> {
        let i = self.bulk_positions().iter().position(|&p| p == n)?;
        self.flows.get(i)
    }
}

/// What a workload flow of one run measured: its `summary.json` entry's
/// figures, and with `--baseline` the same figures without the bulk flows
/// and the harm. A figure's metric is `flowN.PATH`, PATH its dotted key
/// (`flow3.fct_s.p95`, `flow3.harm.fct_p95_ratio`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// Its position among the scenario's flows, from 1 (flowN's N).
    pub flow: usize,
    pub name: String,
    pub kind: String,
    #[serde(flatten)]
    pub figures: WorkloadFigures,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<WorkloadFigures>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harm: Option<lbe_workload::figures::Harm>,
    /// What its figures summarise, for the report's CDFs: a web flow's
    /// completion times (s), a ping flow's added delays (ms); empty for
    /// the other kinds. Kept here, in `results.json`, so that a merge of
    /// shards draws the same report as the whole sweep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// The baseline's samples (`--baseline`, web and ping flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_samples: Option<Vec<f64>>,
}

impl WorkloadResult {
    fn of(w: crate::workload::WorkloadSummary) -> Self {
        let sampled = crate::foreground::sample_kind(w.kind).is_some();
        WorkloadResult {
            flow: w.id,
            name: w.name,
            kind: w.kind.to_string(),
            figures: w.figures,
            baseline: w.baseline,
            harm: w.harm,
            samples: w.samples,
            baseline_samples: w.baseline_samples.filter(|_| sampled),
        }
    }

    /// Its figure at `path` (dotted keys), when it is a number.
    fn figure(&self, path: &str) -> Option<f64> {
        let json = serde_json::to_value(self).ok()?;
        path.split('.')
            .try_fold(&json, |v, k| v.get(k))
            .and_then(serde_json::Value::as_f64)
    }

    /// Its numeric figures as `(path, value)`, in the JSON's order.
    fn leaves(&self) -> Vec<(String, Option<f64>)> {
        let json = serde_json::to_value(self).unwrap_or_default();
        let mut out = crate::workload::numeric_leaves(&json);
        out.retain(|(k, _)| {
            !matches!(
                k.as_str(),
                "flow" | "name" | "kind" | "samples" | "baseline_samples"
            )
        });
        out
    }
}

/// The metrics a workload flow of `kind` has (`None` for a bulk kind):
/// the dotted keys of its figures, of `baseline.` its figures and of
/// `harm.`, read off a sample of its figures so that they are the ones
/// `summary.json` writes.
fn workload_metrics(kind: &str) -> Option<Vec<String>> {
    use lbe_workload::figures::Download;
    use lbe_workload::figures::Echo;
    use lbe_workload::figures::Outcome;
    use std::time::Duration;
    let w = (Duration::ZERO, Duration::from_secs(2));
    let t = Duration::from_secs(1);
    let figures = match kind {
        "web" => WorkloadFigures::web(
            &[Download {
                at: t,
                size_bytes: 1,
                outcome: Outcome::Finished(t),
            }],
            w,
        ),
        "ping" => WorkloadFigures::ping(
            &[Echo {
                sent_at: t,
                rtt: Some(t),
            }],
            Duration::ZERO,
            w,
        ),
        "video" => WorkloadFigures::Video {
            stalls: 0,
            stall_s: 0.0,
            startup_s: Some(1.0),
            chunks: 1,
            failed: 0,
        },
        "cbr" => WorkloadFigures::cbr(1, &[(t, 1)], w, w),
        _ => return None,
    };
    let sample = WorkloadResult {
        flow: 1,
        name: String::new(),
        kind: kind.to_string(),
        harm: figures.harm(&figures),
        baseline: Some(figures.clone()),
        figures,
        samples: Vec::new(),
        baseline_samples: None,
    };
    Some(sample.leaves().into_iter().map(|(k, _)| k).collect())
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    pub name: String,
    pub cc: String,
    pub goodput_bps: f64,
    pub share: Option<f64>,
    pub queue_mean_ms: Option<f64>,
    pub queue_p95_ms: Option<f64>,
    pub lost_packets: u64,
}

/// Which runs of a sweep one process does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--shard '{s}': expected I/N with 0 <= I < N, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// `results.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub sweep: String,
    /// `sim` or `real`.
    pub mode: String,
    /// What ran a simulated sweep's connections: `quiche`
    /// ([`lbe_sim::ENGINE`]; results from before the re-stated engine was
    /// removed may say `auto` or `restated`); absent for a real-time one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    pub runs_total: usize,
    pub axes: Vec<Axis>,
    pub figures: Vec<FigureSpec>,
    /// `null` for a whole sweep (or a merge of all its shards).
    pub shard: Option<Shard>,
    pub runs: Vec<RunResult>,
}

impl Results {
    /// Whether any point's workloads were also run without the bulk
    /// flows (`--baseline`).
    pub fn has_baselines(&self) -> bool {
        self.runs
            .iter()
            .flat_map(|r| &r.workloads)
            .any(|w| w.baseline.is_some())
    }
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
    let mut doc: Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        format!("{p}:{line}: {}", crate::scenario::toml_message(&e))
    })?;
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
                if let Value::Array(a) = v {
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
        crate::scenario::parse(Path::new("scenario"), &text).map_err(|e| {
            let e = e.strip_prefix("scenario:").unwrap_or(&e);
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

const RUN_METRICS: [&str; 4] = [
    "utilization",
    "utilization_of_max",
    "jain_index",
    "total_goodput_mbps",
];
const FLOW_METRICS: [&str; 5] = [
    "goodput_mbps",
    "share",
    "queue_mean_ms",
    "queue_p95_ms",
    "lost_packets",
];

/// Checks figure metric `y` against the sweep's flows (`kinds`, each
/// flow's `kind` in file order).
fn metric_check(y: &str, kinds: &[String]) -> Result<(), String> {
    let flows = kinds.len();
    if RUN_METRICS.contains(&y) {
        return Ok(());
    }
    if let Some((f, m)) = y.split_once('.') {
        if let Some(n) = f.strip_prefix("flow").and_then(|n| n.parse::<usize>().ok()) {
            if let Some(kind) = n.checked_sub(1).and_then(|i| kinds.get(i)) {
                return match workload_metrics(kind) {
                    None if FLOW_METRICS.contains(&m) => Ok(()),
                    None => Err(format!(
                        "unknown metric '{y}' (flow{n} is a {kind} flow: flow{n}.{{{}}})",
                        FLOW_METRICS.join(", ")
                    )),
                    Some(paths) if paths.iter().any(|p| p == m) => Ok(()),
                    Some(paths) => Err(format!(
                        "unknown metric '{y}' (flow{n} is a {kind} flow: flow{n}.{{{}}})",
                        paths.join(", ")
                    )),
                };
            }
        }
    }
    Err(format!(
        "unknown metric '{y}' (allowed: {}, or flowN.{{{}}} with N from 1 to {flows}, or a workload flow's figure)",
        RUN_METRICS.join(", "),
        FLOW_METRICS.join(", ")
    ))
}

fn metric(r: &RunResult, y: &str) -> Option<f64> {
    match y {
        "utilization" => r.utilization,
        "utilization_of_max" => r.utilization_of_max,
        "jain_index" => r.jain_index,
        "total_goodput_mbps" => Some(r.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e6),
        _ => {
            let (f, m) = y.split_once('.')?;
            let n: usize = f.strip_prefix("flow")?.parse().ok()?;
            if let Some(w) = r.workloads.iter().find(|w| w.flow == n) {
                return w.figure(m);
            }
            let fl = r.bulk_flow(n)?;
            match m {
                "goodput_mbps" => Some(fl.goodput_bps / 1e6),
                "share" => fl.share,
                "queue_mean_ms" => fl.queue_mean_ms,
                "queue_p95_ms" => fl.queue_p95_ms,
                "lost_packets" => Some(fl.lost_packets as f64),
                _ => None,
            }
        }
    }
}

/// The unit [`numeric`] puts an axis value in, for an axis label.
fn unit_of(v: &str) -> &'static str {
    if v.parse::<f64>().is_ok() {
        ""
    } else if lbe_units::parse_duration(v).is_ok() {
        " (ms)"
    } else if lbe_units::parse_rate(v).is_ok() {
        " (Mbit/s)"
    } else {
        ""
    }
}

/// An axis value as a number for an x axis: durations in ms, rates in
/// Mbit/s, else the number itself.
pub fn numeric(v: &str) -> Option<f64> {
    if let Ok(x) = v.parse::<f64>() {
        return Some(x);
    }
    if let Ok(d) = lbe_units::parse_duration(v) {
        return Some(d.as_secs_f64() * 1e3);
    }
    if let Ok(r) = lbe_units::parse_rate(v) {
        return Some(r as f64 / 1e6);
    }
    None
}

fn result_of(
    index: usize,
    params: BTreeMap<String, String>,
    parts: &qlog_analysis::SummaryParts,
    flows: &[(String, String)],
    workloads: Vec<crate::workload::WorkloadSummary>,
) -> RunResult {
    let total: f64 = parts.flows.iter().map(|f| f.goodput_bps).sum();
    RunResult {
        index,
        params,
        utilization: parts.utilization,
        utilization_of_max: parts.utilization_of_max,
        jain_index: parts.jain_index,
        workloads: workloads.into_iter().map(WorkloadResult::of).collect(),
        flows: parts
            .flows
            .iter()
            .zip(flows)
            .map(|(f, (name, cc))| FlowResult {
                name: name.clone(),
                cc: cc.clone(),
                goodput_bps: f.goodput_bps,
                share: (total > 0.0).then(|| f.goodput_bps / total),
                queue_mean_ms: f.queuing_delay_ms.mean,
                queue_p95_ms: f.queuing_delay_ms.p95,
                lost_packets: f.lost_packets,
            })
            .collect(),
    }
}

/// The figures across flows of a run's summary, as the analysis gave them.
fn parts_of<F, T>(
    s: &crate::summary::RunSummary<F, T>,
    figures: impl Fn(&F) -> &qlog_analysis::FlowSummary,
) -> qlog_analysis::SummaryParts {
    qlog_analysis::SummaryParts {
        window: qlog_analysis::Window {
            from_s: s.window.from_s,
            to_s: s.window.to_s,
        },
        flows: s.flows.iter().map(|f| figures(f).clone()).collect(),
        utilization: s.utilization,
        max_goodput_bps: s.max_goodput_bps,
        utilization_of_max: s.utilization_of_max,
        jain_index: s.jain_index,
    }
}

/// The workloads-alone runs of a simulated sweep (`--baseline`), one per
/// distinct scenario. The simulator is deterministic, so points whose
/// scenario without bulk flows is the same (every value of a bulk flow's
/// `cc` axis, in a harm sweep) share one run, with the figures each would
/// have had from its own. Real-time sweeps run every point's baseline:
/// each measures the machine as it is at that moment.
#[derive(Default)]
pub struct Baselines {
    /// By the scenario's `Debug` text: every field, in a fixed order.
    runs: Mutex<std::collections::HashMap<String, Arc<OnceLock<SimBaseline>>>>,
    simulated: AtomicUsize,
}

type SimBaseline = Result<Vec<WorkloadSummary>, String>;

impl Baselines {
    /// The workloads of `alone`, simulated once; a second caller for the
    /// same scenario waits for the first one's run.
    pub fn get(&self, alone: &Scenario) -> SimBaseline {
        let key = format!("{alone:?}");
        let cell = Arc::clone(
            self.runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(key)
                .or_default(),
        );
        cell.get_or_init(|| {
            self.simulated.fetch_add(1, Ordering::Relaxed);
            crate::sim::simulate(alone).map(|(s, _)| s.tail.workloads)
        })
        .clone()
    }

    /// Baseline runs simulated so far.
    pub fn simulated(&self) -> usize {
        self.simulated.load(Ordering::Relaxed)
    }
}

/// Runs one point in the simulator; with `baseline`, its
/// workloads alone too (same seed, shared with the points that have the
/// same workloads alone), for their `baseline` figures and `harm`.
pub fn run_sim(
    sweep: &Sweep,
    index: usize,
    baseline: Option<&Baselines>,
) -> Result<RunResult, String> {
    let scenario = sweep.scenario(index)?;
    let (s, _) = crate::sim::simulate(&scenario)?;
    let parts = parts_of(&s, |f| &f.figures);
    let flows: Vec<(String, String)> = s
        .flows
        .iter()
        .map(|f| (f.name.clone(), f.cc.clone()))
        .collect();
    let mut workloads = s.tail.workloads;
    if let Some(baselines) = baseline {
        let alone = crate::baseline_scenario(&scenario, Path::new(&sweep.path))?;
        crate::add_baseline(&mut workloads, baselines.get(&alone)?);
    }
    Ok(result_of(
        index,
        sweep.params(index),
        &parts,
        &flows,
        workloads,
    ))
}

/// How to run a sweep.
pub struct Options {
    pub jobs: usize,
    pub shard: Option<Shard>,
    /// Real time through lbe-netem, one run at a time, each into
    /// `out/runs/<index>/`.
    pub real: bool,
    /// Also run each point's workloads without its bulk flows (into
    /// `out/runs/<index>/baseline/` in real time): their `baseline`
    /// figures and `harm`.
    pub baseline: bool,
}

/// Runs `sweep` (or its shard) into `out`: `results.json`, `results.csv`,
/// and for a whole sweep `figures/` and `report.html`.
pub fn run(
    sweep: &Sweep,
    out: &Path,
    options: &Options,
    stop: &Arc<AtomicBool>,
    log: &(dyn Fn(&str) + Sync),
) -> Result<Results, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let indices: Vec<usize> = (0..sweep.len())
        .filter(|i| options.shard.is_none_or(|s| i % s.count == s.index))
        .collect();
    let mut runs: Vec<RunResult> = Vec::with_capacity(indices.len());
    if options.real {
        for &i in &indices {
            if stop.load(Ordering::Relaxed) {
                return Err("interrupted".into());
            }
            let scenario = sweep.scenario(i)?;
            let dir = out.join("runs").join(i.to_string());
            let s = crate::run::run(&scenario, &dir, stop, &|_| {})?;
            let parts = parts_of(&s, |f| &f.figures);
            let flows: Vec<(String, String)> = s
                .flows
                .iter()
                .map(|f| (f.name.clone(), f.cc.clone()))
                .collect();
            let mut workloads = s.tail.workloads;
            if options.baseline {
                let alone = crate::baseline_scenario(&scenario, Path::new(&sweep.path))?;
                let without = crate::run::run(&alone, &dir.join("baseline"), stop, &|_| {})?;
                crate::add_baseline(&mut workloads, without.tail.workloads);
            }
            runs.push(result_of(i, sweep.params(i), &parts, &flows, workloads));
            log(&format!("run {i} done ({}/{})", runs.len(), indices.len()));
        }
    } else {
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let slots: Mutex<Vec<Option<Result<RunResult, String>>>> =
            Mutex::new(vec![None; indices.len()]);
        let baselines = options.baseline.then(Baselines::default);
        std::thread::scope(|scope| {
            for _ in 0..options.jobs.max(1) {
                scope.spawn(|| loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = indices.get(k) else { return };
                    let r = run_sim(sweep, i, baselines.as_ref());
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if n.is_multiple_of(10) || n == indices.len() {
                        log(&format!("{n}/{} runs done", indices.len()));
                    }
                    slots.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(r);
                });
            }
        });
        if stop.load(Ordering::Relaxed) {
            return Err("interrupted".into());
        }
        if let Some(b) = &baselines {
            log(&format!(
                "baseline runs simulated: {} for {} points (points with the same workloads alone share one)",
                b.simulated(),
                indices.len()
            ));
        }
        for r in slots.into_inner().unwrap_or_else(|e| e.into_inner()) {
            runs.push(r.ok_or("a run did not finish")??);
        }
    }
    let results = Results {
        sweep: sweep.name.clone(),
        mode: if options.real { "real" } else { "sim" }.into(),
        engine: (!options.real).then(|| lbe_sim::ENGINE.to_string()),
        runs_total: sweep.len(),
        axes: sweep.axes.clone(),
        figures: sweep.figures.clone(),
        shard: options.shard,
        runs,
    };
    write(&results, out)?;
    Ok(results)
}

/// Combines shards: the same sweep, every run exactly once.
pub fn merge(inputs: &[impl AsRef<Path>], out: &Path) -> Result<Results, String> {
    let mut merged: Option<Results> = None;
    for dir in inputs {
        let path = dir.as_ref().join("results.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let r: Results = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a sweep's results.json: {e}", path.display()))?;
        match &mut merged {
            None => merged = Some(r),
            Some(m) => {
                if (&m.sweep, &m.mode, m.runs_total, &m.axes, &m.figures)
                    != (&r.sweep, &r.mode, r.runs_total, &r.axes, &r.figures)
                {
                    return Err(format!(
                        "{}: a different sweep ('{}', {} runs) from the first ('{}', {} runs)",
                        path.display(),
                        r.sweep,
                        r.runs_total,
                        m.sweep,
                        m.runs_total
                    ));
                }
                if m.engine != r.engine {
                    return Err(format!(
                        "{}: run on engine {} where the first shard ran on {}",
                        path.display(),
                        r.engine.as_deref().unwrap_or("none (real time)"),
                        m.engine.as_deref().unwrap_or("none (real time)")
                    ));
                }
                m.runs.extend(r.runs);
            }
        }
    }
    let mut m = merged.ok_or("merge needs at least one directory")?;
    m.runs.sort_by_key(|r| r.index);
    if let Some(w) = m.runs.windows(2).find(|w| w[0].index == w[1].index) {
        return Err(format!("run {} appears in more than one shard", w[0].index));
    }
    let have: Vec<usize> = m.runs.iter().map(|r| r.index).collect();
    let missing: Vec<usize> = (0..m.runs_total)
        .filter(|i| have.binary_search(i).is_err())
        .collect();
    if !missing.is_empty() {
        let first: Vec<String> = missing.iter().take(10).map(|i| i.to_string()).collect();
        return Err(format!(
            "{} of {} runs missing (first: {}); merge every shard",
            missing.len(),
            m.runs_total,
            first.join(", ")
        ));
    }
    m.shard = None;
    write(&m, out)?;
    Ok(m)
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x}"))
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
/// break, as `--cc` specs with several keys do.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: a row per run, the axes then the figures.
pub fn csv(results: &Results) -> String {
    let mut s = String::from("index");
    for a in &results.axes {
        let _ = write!(s, ",{}", field(&a.name));
    }
    s.push_str(",utilization,utilization_of_max,jain_index");
    let first = results.runs.first();
    let workloads: Vec<(usize, Vec<String>)> = first.map_or_else(Vec::new, |r| {
        r.workloads
            .iter()
            .map(|w| (w.flow, w.leaves().into_iter().map(|(k, _)| k).collect()))
            .collect()
    });
    for n in first.map_or_else(Vec::new, RunResult::bulk_positions) {
        for m in [
            "cc",
            "goodput_bps",
            "share",
            "queue_mean_ms",
            "queue_p95_ms",
            "lost_packets",
        ] {
            let _ = write!(s, ",flow{n}.{m}");
        }
    }
    for (n, paths) in &workloads {
        for m in paths {
            let _ = write!(s, ",flow{n}.{m}");
        }
    }
    s.push('\n');
    for r in &results.runs {
        let _ = write!(s, "{}", r.index);
        for a in &results.axes {
            let _ = write!(
                s,
                ",{}",
                field(r.params.get(&a.name).map_or("", String::as_str))
            );
        }
        let _ = write!(
            s,
            ",{},{},{}",
            opt(r.utilization),
            opt(r.utilization_of_max),
            opt(r.jain_index)
        );
        for f in &r.flows {
            let _ = write!(
                s,
                ",{},{},{},{},{},{}",
                field(&f.cc),
                f.goodput_bps,
                opt(f.share),
                opt(f.queue_mean_ms),
                opt(f.queue_p95_ms),
                f.lost_packets
            );
        }
        for (n, paths) in &workloads {
            // Each workload's figures read once per run, not once per column.
            let leaves = r
                .workloads
                .iter()
                .find(|w| w.flow == *n)
                .map(WorkloadResult::leaves)
                .unwrap_or_default();
            for m in paths {
                let v = leaves.iter().find(|(k, _)| k == m).and_then(|(_, v)| *v);
                let _ = write!(s, ",{}", opt(v));
            }
        }
        s.push('\n');
    }
    s
}

/// The points of a figure: per series, per x, mean/min/max of y over the
/// runs that share them.
pub fn figure_points(results: &Results, f: &FigureSpec) -> Vec<qlog_analysis::xy::XySeries> {
    let series_axes: Vec<String> = match &f.series {
        Some(s) => s.clone(),
        None => results
            .axes
            .iter()
            .map(|a| a.name.clone())
            .filter(|n| n != &f.x && n != "seed" && !f.filter.iter().flatten().any(|(a, _)| a == n))
            .collect(),
    };
    let xs = results
        .axes
        .iter()
        .find(|a| a.name == f.x)
        .map(|a| a.values.clone())
        .unwrap_or_default();
    let mut groups: BTreeMap<String, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    for r in &results.runs {
        let wanted = f
            .filter
            .iter()
            .flatten()
            .all(|(a, v)| r.params.get(a) == Some(v));
        if !wanted {
            continue;
        }
        let key = series_axes
            .iter()
            .map(|a| format!("{a}={}", r.params.get(a).map_or("", String::as_str)))
            .collect::<Vec<_>>()
            .join(" ");
        let Some(xv) = r.params.get(&f.x) else {
            continue;
        };
        let Some(xi) = xs.iter().position(|v| v == xv) else {
            continue;
        };
        if let Some(y) = metric(r, &f.y).filter(|y| y.is_finite()) {
            groups
                .entry(key)
                .or_default()
                .entry(xi)
                .or_default()
                .push(y);
        }
    }
    groups
        .into_iter()
        .map(|(label, by_x)| qlog_analysis::xy::XySeries {
            label: if label.is_empty() { f.y.clone() } else { label },
            points: by_x
                .into_iter()
                .map(|(xi, ys)| {
                    let x = numeric(&xs[xi]).unwrap_or(xi as f64);
                    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
                    let min = ys.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (x, mean, min, max)
                })
                .collect(),
        })
        .collect()
}

/// `report.html` of a whole sweep: its axes, its `[[figure]]`s (the SVGs
/// in `figures/`) and the foreground section ([`crate::foreground::sweep_sections`]).
pub fn report(results: &Results) -> Result<String, String> {
    use qlog_analysis::report::esc;
    let mut h = qlog_analysis::report::page_start(&format!("{} – sweep report", results.sweep));
    let _ = writeln!(
        h,
        "<h1>Sweep report: {}</h1>\n<p class=sub>{} runs ({}){}.</p>",
        esc(&results.sweep),
        results.runs.len(),
        if results.mode == "sim" {
            "simulated"
        } else {
            "real time"
        },
        if results.has_baselines() {
            ", with baselines"
        } else {
            ""
        }
    );
    h.push_str("<h2 id=axes>Axes</h2>\n<div class=scroll><table class=kv>\n");
    for a in &results.axes {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=l>{}</td></tr>",
            esc(&a.name),
            esc(&a.values.join(", "))
        );
    }
    h.push_str("</table></div>\n<p>Every run's figures are in <code>results.csv</code> and <code>results.json</code>.</p>\n");
    if !results.figures.is_empty() {
        h.push_str("<h2 id=figures>Figures</h2>\n");
        for f in &results.figures {
            let _ = writeln!(
                h,
                "<figure id=\"fig-{0}\"><img src=\"figures/{0}.svg\" alt=\"{1}\">\
                 <figcaption>{1}: {2} against {3} (<a href=\"figures/{0}.csv\">data</a>).</figcaption></figure>",
                esc(&f.name),
                esc(f.title.as_deref().unwrap_or(&f.name)),
                esc(&f.y),
                esc(&f.x)
            );
        }
    }
    qlog_analysis::report::write_sections(&mut h, &crate::foreground::sweep_sections(results)?);
    h.push_str("</body></html>\n");
    Ok(h)
}

fn write(results: &Results, out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let put = |name: &str, body: String| {
        let p = out.join(name);
        std::fs::write(&p, body).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    put(
        "results.json",
        serde_json::to_string_pretty(results).expect("results serialize") + "\n",
    )?;
    put("results.csv", csv(results))?;
    // Figures and the report only for a whole sweep: a shard has a part
    // of every line.
    if results.shard.is_some() {
        return Ok(());
    }
    put("report.html", report(results)?)?;
    if results.figures.is_empty() {
        return Ok(());
    }
    let dir = out.join("figures");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for f in &results.figures {
        let series = figure_points(results, f);
        let mut table = format!("series,{},{} mean,min,max\n", f.x, f.y);
        for s in &series {
            for p in &s.points {
                let _ = writeln!(table, "{},{},{},{},{}", field(&s.label), p.0, p.1, p.2, p.3);
            }
        }
        if let Some(refs) = &f.reference {
            let label = field(f.reference_label.as_deref().unwrap_or("reference"));
            for (x, y) in refs {
                let _ = writeln!(table, "{label},{x},{y},,");
            }
        }
        std::fs::write(dir.join(format!("{}.csv", f.name)), table)
            .map_err(|e| format!("cannot write figure {}: {e}", f.name))?;
        let unit = results
            .axes
            .iter()
            .find(|a| a.name == f.x)
            .and_then(|a| a.values.first())
            .map_or("", |v| unit_of(v));
        let chart = qlog_analysis::xy::XyChart {
            title: f.title.clone().unwrap_or_else(|| f.name.clone()),
            x_desc: format!("{}{unit}", f.x),
            y_desc: f.y.clone(),
            series,
            reference: f.reference.clone().map(|r| {
                (
                    f.reference_label
                        .clone()
                        .unwrap_or_else(|| "reference".into()),
                    r,
                )
            }),
            log_x: f.log_x,
        };
        match qlog_analysis::xy::draw(&chart, 900, 480) {
            Ok(svg) => std::fs::write(dir.join(format!("{}.svg", f.name)), svg)
                .map_err(|e| format!("cannot write figure {}: {e}", f.name))?,
            Err(e) => return Err(format!("figure {}: {e}", f.name)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::field;
    use super::metric;
    use super::FlowResult;
    use super::RunResult;
    use super::WorkloadResult;
    use lbe_workload::figures::WorkloadFigures;

    /// Flows: cbr, bulk a, cbr, bulk b: flow2 is a, flow4 is b.
    #[test]
    fn flow_n_names_the_scenarios_nth_flow_whatever_its_kind() {
        let bulk = |name: &str, goodput_bps: f64| FlowResult {
            name: name.into(),
            cc: "cubic".into(),
            goodput_bps,
            share: None,
            queue_mean_ms: None,
            queue_p95_ms: None,
            lost_packets: 0,
        };
        let cbr = |flow: usize, goodput_bps: f64| WorkloadResult {
            flow,
            name: format!("cbr{flow}"),
            kind: "cbr".into(),
            figures: WorkloadFigures::Cbr {
                goodput_bps,
                sent_packets: 10,
                received_packets: 10,
                lost_packets: 0,
                loss: 0.0,
            },
            baseline: None,
            harm: None,
            samples: Vec::new(),
            baseline_samples: None,
        };
        let r = RunResult {
            index: 0,
            params: Default::default(),
            utilization: None,
            utilization_of_max: None,
            jain_index: None,
            flows: vec![bulk("a", 2e6), bulk("b", 4e6)],
            workloads: vec![cbr(1, 1e6), cbr(3, 3e6)],
        };
        assert_eq!(r.bulk_positions(), [2, 4]);
        let m = |y: &str| metric(&r, y);
        assert_eq!(m("flow1.goodput_bps"), Some(1e6));
        assert_eq!(m("flow2.goodput_mbps"), Some(2.0));
        assert_eq!(m("flow3.goodput_bps"), Some(3e6));
        assert_eq!(m("flow4.goodput_mbps"), Some(4.0));
        assert_eq!(m("flow5.goodput_mbps"), None);
        let csv = super::csv(&super::Results {
            sweep: "s".into(),
            mode: "sim".into(),
            engine: Some("quiche".into()),
            runs_total: 1,
            axes: Vec::new(),
            figures: Vec::new(),
            shard: None,
            runs: vec![r],
        });
        let header = csv.lines().next().unwrap();
        assert!(
            header.contains(",flow2.cc,") && header.contains(",flow4.cc,"),
            "{header}"
        );
        assert!(!header.contains(",flow1.cc,"), "{header}");
    }

    #[test]
    fn csv_fields_with_commas_or_quotes_are_quoted() {
        assert_eq!(field("ledbatpp"), "ledbatpp");
        assert_eq!(
            field("ledbat:target=5ms,decrease_gain=10"),
            "\"ledbat:target=5ms,decrease_gain=10\""
        );
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
    }
}
