//! Set-ups shared by lbe-lab's tests, on lbe-test-support's.

#![allow(dead_code)]

use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use lbe_test_support::scenario_text::*;
pub use lbe_test_support::*;

use lbe_lab::run::Summary;
use lbe_lab::scenario::Scenario;
use lbe_lab::sim::SimSummary;

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
