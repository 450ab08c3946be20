//! `results.json`: what each run of a sweep measured, its bulk flows' and
//! its workload flows' figures, and which shard of the sweep ran.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

use lbe_workload::figures::WorkloadFigures;

use crate::sweep::spec::Axis;
use crate::sweep::spec::FigureSpec;

/// What one run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub index: usize,
    /// Axis name → value, as in the file.
    pub params: BTreeMap<String, String>,
    pub utilization: Option<f64>,
    pub utilization_of_max: Option<f64>,
    pub jain_index: Option<f64>,
    /// With `[analysis] refill_after`: the seconds from then until the
    /// bulk flows still running took the link back (its `summary.json`'s
    /// `refill_s`); `None` when they never did or without the key (results
    /// of earlier builds have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill_s: Option<f64>,
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
    pub(super) fn bulk_flow(&self, n: usize) -> Option<&FlowResult> {
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
    pub(super) fn of(w: crate::workload::WorkloadSummary) -> Self {
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
    pub(super) fn figure(&self, path: &str) -> Option<f64> {
        let json = serde_json::to_value(self).ok()?;
        path.split('.')
            .try_fold(&json, |v, k| v.get(k))
            .and_then(serde_json::Value::as_f64)
    }

    /// Its numeric figures as `(path, value)`, in the JSON's order.
    pub(super) fn leaves(&self) -> Vec<(String, Option<f64>)> {
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    pub name: String,
    pub cc: String,
    pub goodput_bps: f64,
    pub share: Option<f64>,
    pub queue_mean_ms: Option<f64>,
    pub queue_p95_ms: Option<f64>,
    pub lost_packets: u64,
    /// Seconds from the flow's start to its last byte acknowledged: a
    /// simulated flow of `bytes` that finished; `None` for a flow that did
    /// not, a flow of a duration, or a real-time run (results of earlier
    /// builds have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took_s: Option<f64>,
    /// Seconds from the flow's start to its steady state, with `[analysis]
    /// steady_queue` (its `summary.json`'s `steady_s`); `None` for a flow
    /// that never got there or without the key (results of earlier builds
    /// have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_s: Option<f64>,
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
