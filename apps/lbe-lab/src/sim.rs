//! `lbe-lab run --sim`: the scenario in the deterministic simulator
//! (`lbe-sim`), written as a real run is: `summary.json` (with
//! `"mode": "sim"`) and `report.html`, every figure from `qlog-analysis`.

use std::path::Path;

use serde::Serialize;

use crate::run::LinkSummary;
use crate::run::WindowSummary;
use crate::scenario::FlowEnd;
use crate::scenario::Scenario;

/// The simulator's seed when the scenario sets none.
pub const DEFAULT_SEED: u64 = 1;

/// `summary.json` of a simulated run: the keys of a real run's, less what
/// only a real run has (wall-clock start, the emulator's and quic-bulk's own
/// counts), plus `mode`, `seed` and the simulated bottleneck's counts.
#[derive(Debug, Serialize)]
pub struct SimSummary {
    pub mode: &'static str,
    pub seed: u64,
    pub link: LinkSummary,
    pub window: WindowSummary,
    pub flows: Vec<SimFlowSummary>,
    pub utilization: Option<f64>,
    pub max_goodput_bps: Option<f64>,
    pub utilization_of_max: Option<f64>,
    pub jain_index: Option<f64>,
    /// What the simulated bottleneck counted over the whole run.
    pub bottleneck: lbe_netem::Totals,
    /// Events the simulator processed (a measure of its work).
    pub events: u64,
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
    /// No qlog file: the events went to the analysis in memory.
    pub qlog: Option<String>,
    /// The simulated sender's own counts.
    pub transfer: lbe_sim::FlowStats,
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
        link: lbe_sim::Link {
            rate_bps: scenario.link.rate_bps,
            rtt: scenario.link.rtt,
            buffer: scenario.link.buffer,
            loss: scenario.link.loss,
        },
        flows: scenario
            .flows
            .iter()
            .map(|f| lbe_sim::Flow {
                name: f.name.clone(),
                cc: f.sender_cc(),
                start: f.start,
                end: match f.end {
                    FlowEnd::Stop(t) => lbe_sim::FlowEnd::Stop(t),
                    FlowEnd::Bytes(b) => lbe_sim::FlowEnd::Bytes(b),
                },
                rtt: f.rtt,
                pacing: f.pacing,
            })
            .collect(),
        window: scenario.window,
        seed: scenario.seed.unwrap_or(DEFAULT_SEED),
        ack_policy: lbe_sim::AckPolicy::default(),
        host_latency: lbe_sim::HOST_LATENCY,
        framing: lbe_sim::Framing::default(),
    })
}

/// Simulates `scenario`; returns the summary and the analysis (for the report).
pub fn simulate(scenario: &Scenario) -> Result<(SimSummary, qlog_analysis::Analysis), String> {
    let config = config(scenario)?;
    let out = lbe_sim::run(&config)?;
    let parts = out.analysis.summary_parts();
    let flows = scenario
        .flows
        .iter()
        .zip(parts.flows)
        .zip(out.flows)
        .map(|((flow, figures), transfer)| SimFlowSummary {
            id: flow.id,
            name: flow.name.clone(),
            cc: flow.cc.to_string(),
            start_s: flow.start.as_secs_f64(),
            stop_s: flow.stop().map(|d| d.as_secs_f64()),
            figures,
            qlog: None,
            deadline_s: flow.deadline.map(|d| d.as_secs_f64()),
            met: flow.deadline.map(|d| {
                transfer
                    .finished_s
                    .is_some_and(|f| f - flow.start.as_secs_f64() <= d.as_secs_f64())
            }),
            transfer,
        })
        .collect();
    let summary = SimSummary {
        mode: "sim",
        seed: config.seed,
        link: LinkSummary {
            rate_bps: scenario.link.rate_bps,
            emulated_rtt_ms: scenario.link.rtt.as_secs_f64() * 1e3,
            buffer_ms: scenario.link.buffer_ms(),
        },
        window: WindowSummary {
            from_s: parts.window.from_s,
            to_s: parts.window.to_s,
        },
        flows,
        utilization: parts.utilization,
        max_goodput_bps: parts.max_goodput_bps,
        utilization_of_max: parts.utilization_of_max,
        jain_index: parts.jain_index,
        bottleneck: out.link,
        events: out.events,
    };
    Ok((summary, out.analysis))
}

/// Simulates the scenario file into `out`: `scenario.toml`, `summary.json`
/// and (unless `report` is false) `report.html`.
pub fn run_file(
    scenario_path: &Path,
    out: &Path,
    report: bool,
    log: &dyn Fn(&str),
) -> Result<SimSummary, String> {
    let scenario = crate::scenario::load(scenario_path)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let copy = out.join("scenario.toml");
    std::fs::copy(scenario_path, &copy)
        .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
    let (summary, analysis) = simulate(&scenario)?;
    let path = out.join("summary.json");
    let json = serde_json::to_string_pretty(&summary).expect("summary serializes");
    std::fs::write(&path, json + "\n")
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    log(&format!("wrote {}", path.display()));
    if report {
        let (html, _warnings) = qlog_analysis::report::build_from_analysis(
            out,
            analysis,
            "the simulator (lbe-lab run --sim)",
            &qlog_analysis::plot::PlotOptions::default(),
        )
        .map_err(|e| format!("report: {e}"))?;
        let path = out.join("report.html");
        std::fs::write(&path, html).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        log(&format!("wrote {}", path.display()));
    }
    Ok(summary)
}
