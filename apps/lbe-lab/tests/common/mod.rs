//! Set-ups shared by lbe-lab's tests, on lbe-test-support's.

// Each test binary uses a part of these set-ups and re-exports (one that
// builds its own scenario text uses none of lbe-test-support's).
#![allow(dead_code, unused_imports)]

use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use lbe_test_support::scenario_text::*;
pub use lbe_test_support::*;

use lbe_lab::run::Summary;
use lbe_lab::scenario::Scenario;
use lbe_lab::sim::SimFlowSummary;
use lbe_lab::sim::SimSummary;
use lbe_lab::summary::RunSummary;

/// A scenario from inline text (errors name the file `name`).
pub fn parse(name: &str, text: &str) -> Scenario {
    lbe_lab::scenario::parse(Path::new(name), text).unwrap()
}

/// Runs `scenario` in real time (lbe-netem, the real servers and
/// clients) into a fresh `lbe-lab-test-NAME` under the test's target temp
/// dir, its progress on stderr tagged `[NAME]`; the summary and that
/// directory (kept, to look at).
pub fn run_real(name: &str, scenario: &Scenario) -> (Summary, PathBuf) {
    let out =
        fresh_dir(&Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lbe-lab-test-{name}")));
    let summary = lbe_lab::run::run(scenario, &out, &Arc::new(AtomicBool::new(false)), &|line| {
        eprintln!("[{name}] {line}")
    })
    .unwrap();
    (summary, out)
}

/// The second flow's share of a two-flow run's goodput.
pub fn second_flow_share(s: &SimSummary) -> f64 {
    let g: Vec<f64> = s.flows.iter().map(|f| f.figures.goodput_bps).collect();
    g[1] / (g[0] + g[1])
}

/// `lbe-lab run --sim --no-report` of the scenario `file` into `out`, with
/// `--baseline` when `baseline`.
pub fn simulate_file(file: &Path, out: &Path, baseline: bool) -> SimSummary {
    let options = lbe_lab::sim::RunOptions {
        report: false,
        qlog: false,
        baseline,
    };
    lbe_lab::sim::run_file(file, out, &options, &|_| {}).unwrap()
}

/// Simulates scenario `text` with `seed` (a `seed = ` line put before it);
/// the summary and the bulk flows' analysis.
pub fn simulate_seeded(text: &str, seed: u64) -> (SimSummary, qlog_analysis::Analysis) {
    let text = format!("seed = {seed}\n{text}");
    let scenario = lbe_lab::scenario::parse(Path::new("test.toml"), &text).unwrap();
    let (summary, analysis) = lbe_lab::sim::simulate(&scenario).unwrap();
    (summary, analysis.expect("bulk flows' analysis"))
}

/// A bulk flow of a summary, real or simulated: its name and figures.
pub trait BulkFlow {
    fn name(&self) -> &str;
    fn figures(&self) -> &qlog_analysis::FlowSummary;
}

impl BulkFlow for lbe_lab::run::FlowSummary {
    fn name(&self) -> &str {
        &self.name
    }
    fn figures(&self) -> &qlog_analysis::FlowSummary {
        &self.figures
    }
}

impl BulkFlow for SimFlowSummary {
    fn name(&self) -> &str {
        &self.name
    }
    fn figures(&self) -> &qlog_analysis::FlowSummary {
        &self.figures
    }
}

/// The goodput of the bulk flow named `name` of a real or simulated run.
pub fn goodput_bps<F: BulkFlow, T>(s: &RunSummary<F, T>, name: &str) -> f64 {
    s.flows
        .iter()
        .find(|f| f.name() == name)
        .unwrap()
        .figures()
        .goodput_bps
}

/// A web workload's p95 completion time over its time alone (`--baseline`
/// ran), once every one of its downloads finished.
pub fn finished_web_p95_ratio(web: &lbe_lab::workload::WorkloadSummary) -> f64 {
    let lbe_workload::figures::WorkloadFigures::Web {
        unfinished: 0,
        failed: 0,
        ..
    } = &web.figures
    else {
        panic!("every download finished: {:?}", web.figures);
    };
    web.harm.as_ref().unwrap().fct_p95_ratio.unwrap()
}
