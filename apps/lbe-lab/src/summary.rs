//! `summary.json`, one type for real and simulated runs: the link, the
//! analysis window, the flows and the figures across them (utilisation,
//! max goodput, utilisation of max, Jain), built by [`RunSummary::new`]
//! from `qlog-analysis`' summary parts; what only one mode has is its
//! per-flow type `F` and its tail `T` (a real run's emulator counts, a
//! simulated run's bottleneck counts and events).
//!
//! The keys, in order: `mode`, `seed` (simulated runs), `link`, `window`,
//! `flows`, `utilization`, `max_goodput_bps`, `utilization_of_max`,
//! `jain_index`, then the tail's.

use serde::Serialize;

use crate::run::LinkSummary;
use crate::run::WindowSummary;

/// Which kind of run wrote the summary: `"real"` (in real time through
/// lbe-netem) or `"sim"` (in the simulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Real,
    Sim,
}

/// `summary.json` of a run: `F` is a flow's summary, `T` what follows the
/// figures across flows (flattened into the same object).
#[derive(Debug, Serialize)]
pub struct RunSummary<F, T> {
    pub mode: Mode,
    /// The simulator's seed (a simulated run's only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub link: LinkSummary,
    pub window: WindowSummary,
    pub flows: Vec<F>,
    /// Sum of the flows' goodputs over the link rate.
    pub utilization: Option<f64>,
    /// The largest application-layer goodput the link can carry (link rate
    /// × stream bytes per wire byte of this run's data datagrams).
    pub max_goodput_bps: Option<f64>,
    /// Sum of the flows' goodputs over `max_goodput_bps`.
    pub utilization_of_max: Option<f64>,
    pub jain_index: Option<f64>,
    #[serde(flatten)]
    pub tail: T,
}

impl<F, T> RunSummary<F, T> {
    /// The summary of a run of a scenario on `link`: `flows` makes the
    /// flows' summaries from their figures (in scenario order), `tail` the
    /// mode's own part from the analysis window.
    pub fn new(
        mode: Mode,
        seed: Option<u64>,
        link: &crate::scenario::Link,
        parts: qlog_analysis::SummaryParts,
        flows: impl FnOnce(Vec<qlog_analysis::FlowSummary>) -> Vec<F>,
        tail: impl FnOnce(&qlog_analysis::Window) -> T,
    ) -> Self {
        RunSummary {
            mode,
            seed,
            link: LinkSummary::of(link),
            window: parts.window.into(),
            flows: flows(parts.flows),
            utilization: parts.utilization,
            max_goodput_bps: parts.max_goodput_bps,
            utilization_of_max: parts.utilization_of_max,
            jain_index: parts.jain_index,
            tail: tail(&parts.window),
        }
    }
}
