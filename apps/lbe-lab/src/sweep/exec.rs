//! Running a sweep: each point of the grid (or of a shard) in the
//! simulator on several threads, or in real time one at a time, its
//! figures taken from the run's summary.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;

use crate::scenario::Scenario;
use crate::sweep::grid::Sweep;
use crate::sweep::output::write;
use crate::sweep::results::FlowResult;
use crate::sweep::results::Results;
use crate::sweep::results::RunResult;
use crate::sweep::results::Shard;
use crate::sweep::results::WorkloadResult;
use crate::workload::WorkloadSummary;

/// Run `index`'s result from its summary's figures across flows (`parts`
/// and `refill_s`) and what it keeps of each bulk flow and workload.
fn result_of(
    index: usize,
    params: BTreeMap<String, String>,
    (parts, refill_s): (&qlog_analysis::SummaryParts, Option<f64>),
    flows: &[BulkFlow],
    workloads: Vec<crate::workload::WorkloadSummary>,
) -> RunResult {
    let total: f64 = parts.flows.iter().map(|f| f.goodput_bps).sum();
    RunResult {
        index,
        params,
        utilization: parts.utilization,
        utilization_of_max: parts.utilization_of_max,
        jain_index: parts.jain_index,
        refill_s,
        workloads: workloads.into_iter().map(WorkloadResult::of).collect(),
        flows: parts
            .flows
            .iter()
            .zip(flows)
            .map(|(f, b)| FlowResult {
                name: b.name.clone(),
                cc: b.cc.clone(),
                goodput_bps: f.goodput_bps,
                share: (total > 0.0).then(|| f.goodput_bps / total),
                queue_mean_ms: f.queuing_delay_ms.mean,
                queue_p95_ms: f.queuing_delay_ms.p95,
                lost_packets: f.lost_packets,
                took_s: b.took_s,
                steady_s: b.steady_s,
            })
            .collect(),
    }
}

/// What a run's result keeps of a bulk flow beside the analysis' figures.
struct BulkFlow {
    name: String,
    cc: String,
    /// Seconds from its start to its last byte acknowledged (a simulated
    /// flow of `bytes` that finished).
    took_s: Option<f64>,
    /// Seconds from its start to its steady state (`[analysis]
    /// steady_queue`).
    steady_s: Option<f64>,
}

/// The figures across flows of a run's summary, as the analysis gave them,
/// and what the result keeps of each bulk flow beside them; `flow` reads
/// both off a flow's summary (a real run's or a simulated one's).
fn parts_of<F, T>(
    s: &crate::summary::RunSummary<F, T>,
    flow: impl Fn(&F) -> (&qlog_analysis::FlowSummary, BulkFlow),
) -> (qlog_analysis::SummaryParts, Vec<BulkFlow>) {
    let parts = qlog_analysis::SummaryParts {
        window: qlog_analysis::Window {
            from_s: s.window.from_s,
            to_s: s.window.to_s,
        },
        flows: s.flows.iter().map(|f| flow(f).0.clone()).collect(),
        utilization: s.utilization,
        max_goodput_bps: s.max_goodput_bps,
        utilization_of_max: s.utilization_of_max,
        jain_index: s.jain_index,
    };
    let flows = s.flows.iter().map(|f| flow(f).1).collect();
    (parts, flows)
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
    let (parts, flows) = parts_of(&s, |f| {
        let bulk = BulkFlow {
            name: f.name.clone(),
            cc: f.cc.clone(),
            took_s: f.transfer.finished_s.map(|at| at - f.start_s),
            steady_s: f.steady_s,
        };
        (&f.figures, bulk)
    });
    let mut workloads = s.tail.workloads;
    if let Some(baselines) = baseline {
        let alone = crate::baseline::baseline_scenario(&scenario, Path::new(&sweep.path))?;
        crate::baseline::add_baseline(&mut workloads, baselines.get(&alone)?);
    }
    Ok(result_of(
        index,
        sweep.params(index),
        (&parts, s.refill_s),
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
            let (parts, flows) = parts_of(&s, |f| {
                let bulk = BulkFlow {
                    name: f.name.clone(),
                    cc: f.cc.clone(),
                    // A real run's client reports no time to its last byte.
                    took_s: None,
                    steady_s: f.steady_s,
                };
                (&f.figures, bulk)
            });
            let mut workloads = s.tail.workloads;
            if options.baseline {
                let alone = crate::baseline::baseline_scenario(&scenario, Path::new(&sweep.path))?;
                let without = crate::run::run(&alone, &dir.join("baseline"), stop, &|_| {})?;
                crate::baseline::add_baseline(&mut workloads, without.tail.workloads);
            }
            runs.push(result_of(
                i,
                sweep.params(i),
                (&parts, s.refill_s),
                &flows,
                workloads,
            ));
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
