//! `lbe-lab run --sim`: the scenario in the deterministic simulator
//! (`lbe-sim`), written as a real run is: `summary.json` (with
//! `"mode": "sim"`) and `report.html`, every figure from `qlog-analysis`.

use std::path::Path;

use serde::Serialize;

use crate::scenario::Scenario;
use crate::summary::Mode;
use crate::summary::RunSummary;
use crate::workload::WorkloadSummary;

/// The simulator's seed when the scenario sets none.
pub const DEFAULT_SEED: u64 = 1;

/// `summary.json` of a simulated run (`"mode": "sim"`, with its `seed`):
/// the keys of a real run's, less what only a real run has (wall-clock
/// start, the emulator's and quic-bulk's own counts), plus the simulated
/// bottleneck's counts.
pub type SimSummary = RunSummary<SimFlowSummary, SimTail>;

/// What only a simulated run's `summary.json` has, after the figures
/// across flows.
#[derive(Debug, Serialize)]
pub struct SimTail {
    /// What ran the connections: `"quiche"`, quiche itself
    /// ([`lbe_sim::ENGINE`]; summaries from before the re-stated engine
    /// was removed may say `"restated"`).
    pub engine: &'static str,
    /// What the simulated bottleneck counted over the whole run.
    pub bottleneck: lbe_netem::Totals,
    /// What the client->server link counted, when the scenario limits that
    /// direction (`reverse_rate`, `reverse_loss`; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_bottleneck: Option<lbe_netem::Totals>,
    /// Events the simulator processed (a measure of its work).
    pub events: u64,
    /// The foreground workload flows (web, ping, video, cbr), in scenario
    /// order, as a real run's `workloads` (absent without one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSummary>,
}

#[derive(Debug, Serialize)]
pub struct SimFlowSummary {
    pub id: usize,
    pub name: String,
    pub cc: String,
    pub start_s: f64,
    pub stop_s: Option<f64>,
    #[serde(flatten)]
    pub figures: qlog_analysis::FlowSummary,
    /// With `[analysis] steady_queue`: the seconds from the flow's start to
    /// its steady state ([`crate::summary::steady_s`]); absent when it
    /// never got there or without the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_s: Option<f64>,
    /// The flow's qlog, relative to the output directory, when `--qlog`
    /// asked for one (the figures come from the events in memory either way).
    pub qlog: Option<String>,
    /// The simulated sender's own counts.
    pub transfer: lbe_sim::FlowStats,
    /// Under an AQM (`[link] aqm` other than fifo): the datagrams of this
    /// flow the AQM's control law dropped (CoDel, PIE) and those dropped
    /// for a full buffer (drop-tail, FQ-CoDel's fattest queue).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aqm_drops: Option<lbe_link::FlowDrops>,
    /// A deadline-aware flow's deadline, seconds from its start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_s: Option<f64>,
    /// Whether it finished within the deadline (finished_s − start_s ≤
    /// deadline_s); `false` when it did not finish at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
}

/// The simulator's configuration for a scenario.
pub fn config(scenario: &Scenario) -> Result<lbe_sim::Config, String> {
    if scenario.link.cross_traffic_bps.is_some() {
        return Err(
            "link cross_traffic is not simulated (lbe-netem generates it in real time): run without --sim"
                .to_string(),
        );
    }
    Ok(lbe_sim::Config {
        link: scenario.link.clone(),
        flows: scenario.flows.clone(),
        window: scenario.window,
        seed: scenario.seed.unwrap_or(DEFAULT_SEED),
        host_latency: lbe_sim::HOST_LATENCY,
        qlog_dir: None,
    })
}

/// Simulates `scenario`; returns the summary and the bulk flows' analysis
/// (for the report; `None` for workloads alone).
pub fn simulate(
    scenario: &Scenario,
) -> Result<(SimSummary, Option<qlog_analysis::Analysis>), String> {
    simulate_into(scenario, None)
}

/// [`simulate`], also writing each flow's qlog into `qlog_dir` (the
/// summary's `qlog` names them relative to its parent, as a real run's do).
pub fn simulate_into(
    scenario: &Scenario,
    qlog_dir: Option<&Path>,
) -> Result<(SimSummary, Option<qlog_analysis::Analysis>), String> {
    let mut config = config(scenario)?;
    config.qlog_dir = qlog_dir.map(Path::to_path_buf);
    let out = lbe_sim::run(&config)?;
    let base = qlog_dir.and_then(Path::parent);
    let qlogs: Vec<Option<String>> = out
        .qlogs
        .iter()
        .map(|q| {
            q.as_ref().map(|p| {
                base.and_then(|b| p.strip_prefix(b).ok())
                    .unwrap_or(p)
                    .display()
                    .to_string()
            })
        })
        .collect();
    let parts = match &out.analysis {
        Some(a) => a.summary_parts(),
        None => crate::summary::workloads_only_parts(scenario),
    };
    let fifo = scenario.link.aqm == lbe_link::Aqm::Fifo;
    let flow_drops = out.flow_drops;
    let steady = crate::summary::steady_s(scenario, out.analysis.as_ref());
    let refill_s = crate::summary::refill_s(scenario, out.analysis.as_ref());
    let bulk: Vec<(usize, &crate::scenario::Flow)> = scenario
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind.is_bulk())
        .collect();
    let flows = |figures: Vec<qlog_analysis::FlowSummary>| {
        bulk.iter()
            .zip(figures)
            .zip(out.flows)
            .zip(qlogs)
            .zip(steady)
            .map(
                |(((((i, flow), figures), transfer), qlog), steady_s)| SimFlowSummary {
                    aqm_drops: (!fifo).then(|| flow_drops.get(*i).copied().unwrap_or_default()),
                    id: flow.id,
                    name: flow.name.clone(),
                    cc: flow.cc.to_string(),
                    start_s: flow.start.as_secs_f64(),
                    stop_s: flow.stop().map(|d| d.as_secs_f64()),
                    figures,
                    steady_s,
                    qlog,
                    deadline_s: flow.deadline.map(|d| d.as_secs_f64()),
                    met: flow.deadline.map(|d| {
                        transfer
                            .finished_s
                            .is_some_and(|f| f - flow.start.as_secs_f64() <= d.as_secs_f64())
                    }),
                    transfer,
                },
            )
            .collect()
    };
    let workloads = out
        .workloads
        .into_iter()
        .map(|w| WorkloadSummary::new(&scenario.flows[w.flow], w.figures).with_samples(w.samples))
        .collect();
    let tail = |_: &qlog_analysis::Window| SimTail {
        engine: lbe_sim::ENGINE,
        bottleneck: out.link,
        reverse_bottleneck: out.reverse_link,
        events: out.events,
        workloads,
    };
    let mut summary = RunSummary::new(
        Mode::Sim,
        Some(config.seed),
        &scenario.link,
        &scenario.flows,
        parts,
        flows,
        tail,
    );
    summary.refill_s = refill_s;
    Ok((summary, out.analysis))
}

/// Simulates the scenario file into `out`: `scenario.toml`, `summary.json`,
/// (unless `report` is false) `report.html` and (if `qlog`) `qlog/`. With
/// `baseline`, then simulates it again with every bulk flow removed (into
/// `out/baseline/`, same seed) and adds to each workload flow its
/// `baseline` figures and the `harm`, as a real run does.
pub fn run_file(
    scenario_path: &Path,
    out: &Path,
    options: &RunOptions,
    log: &dyn Fn(&str),
) -> Result<SimSummary, String> {
    let scenario = crate::out_dir::prepare_out(scenario_path, out)?;
    let alone = match options.baseline {
        true => Some(crate::baseline::baseline_scenario(
            &scenario,
            scenario_path,
        )?),
        false => None,
    };
    let qlog_dir = out.join("qlog");
    let (mut summary, analysis) =
        simulate_into(&scenario, options.qlog.then_some(qlog_dir.as_path()))?;
    if let Some(alone) = alone {
        log("baseline: the workloads without the bulk flows");
        let dir = out.join("baseline");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let (without, _) = simulate(&alone)?;
        crate::out_dir::write_summary(&dir, &without, log)?;
        crate::baseline::add_baseline(&mut summary.tail.workloads, without.tail.workloads);
    }
    crate::out_dir::write_summary(out, &summary, log)?;
    match (options.report, analysis) {
        (false, _) => {}
        (true, None) => log("no report: no bulk flow (the workloads' figures are in summary.json)"),
        (true, Some(analysis)) => {
            let sections = crate::foreground::sections(&summary.tail.workloads)?;
            let (html, _warnings) = qlog_analysis::report::build_from_analysis(
                out,
                analysis,
                "the simulator (lbe-lab run --sim)",
                &qlog_analysis::plot::PlotOptions::default(),
                &sections,
            )
            .map_err(|e| format!("report: {e}"))?;
            crate::out_dir::write_out(out, "report.html", html, log)?;
        }
    }
    Ok(summary)
}

/// What `lbe-lab run --sim` was asked for.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Write `report.html`.
    pub report: bool,
    /// Write each bulk flow's qlog into `qlog/`.
    pub qlog: bool,
    /// Also simulate the workloads alone (`--baseline`).
    pub baseline: bool,
}

#[cfg(test)]
mod tests {
    use lbe_test_support::scenario_text::flow;
    use lbe_test_support::scenario_text::link;

    use super::*;

    #[test]
    fn an_h3_flow_against_aioquic_is_not_simulated() {
        let text = link("20mbit", "50ms", "500ms")
            + &flow("cubic", "0s", "40s")
            + "[[flow]]\nkind = \"h3\"\nbytes = \"10MB\"\nserver = \"aioquic\"\n";
        let s = crate::scenario::parse(Path::new("s.toml"), &text).unwrap();
        let config = config(&s).unwrap();
        assert_eq!(
            lbe_sim::run(&config).err().unwrap(),
            "flow flow2: server = \"aioquic\" is not simulated (aioquic's HTTP/3 server is Python, run in real time; simulated: h3-serve, quiche-stock): run without --sim"
        );
    }
}
