//! `summary.json`, one type for real and simulated runs: the link, the
//! analysis window, the flows and the figures across them (utilisation,
//! max goodput, utilisation of max, Jain), built by [`RunSummary::new`]
//! from `qlog-analysis`' summary parts; what only one mode has is its
//! per-flow type `F` and its tail `T` (a real run's emulator counts, a
//! simulated run's bottleneck counts and events).
//!
//! The keys, in order: `mode`, `seed` (simulated runs), `link`, `window`,
//! `flows`, `utilization`, `max_goodput_bps`, `utilization_of_max`,
//! `jain_index`, `refill_s` (with `[analysis] refill_after`), `groups`
//! (with a `count` group), then the tail's.

use std::time::Duration;

use serde::Serialize;

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
    /// With `[analysis] refill_after`: the seconds from then until the bulk
    /// flows still running took the link back ([`refill_s`]); absent when
    /// they never did or without the key. Set by the caller after
    /// [`RunSummary::new`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refill_s: Option<f64>,
    /// The `count` groups (absent without one): their share and fairness.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSummary>,
    #[serde(flatten)]
    pub tail: T,
}

#[derive(Debug, Serialize)]
pub struct LinkSummary {
    pub rate_bps: u64,
    /// The base RTT the emulator sets up (the scenario's `rtt`), not a
    /// measured one (each flow's `figures.rtt_ms`).
    pub emulated_rtt_ms: f64,
    pub buffer_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct WindowSummary {
    pub from_s: f64,
    pub to_s: f64,
}

impl LinkSummary {
    /// The scenario's link as `summary.json` states it.
    pub fn of(link: &crate::scenario::Link) -> Self {
        LinkSummary {
            rate_bps: link.rate_bps,
            emulated_rtt_ms: ms(link.rtt),
            buffer_ms: link.buffer_ms(),
        }
    }
}

impl From<qlog_analysis::Window> for WindowSummary {
    fn from(w: qlog_analysis::Window) -> Self {
        WindowSummary {
            from_s: w.from_s,
            to_s: w.to_s,
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A `count = N` group's figures over the analysis window.
#[derive(Debug, Serialize, PartialEq)]
pub struct GroupSummary {
    /// The name its flows share (NAME of NAME-1..NAME-N).
    pub name: String,
    /// How many flows.
    pub flows: usize,
    /// The sum of their goodputs.
    pub goodput_bps: f64,
    /// Their goodputs' mean.
    pub mean_goodput_bps: f64,
    /// Their goodput over every flow's.
    pub share: Option<f64>,
    /// Jain's index over their goodputs.
    pub jain_index: Option<f64>,
}

/// The groups of `groups` (each flow's group, in scenario order) with the
/// flows' `goodputs` in the same order.
pub fn group_summaries(groups: &[Option<String>], goodputs: &[f64]) -> Vec<GroupSummary> {
    let total: f64 = goodputs.iter().sum();
    let mut names: Vec<&String> = Vec::new();
    for g in groups.iter().flatten() {
        if !names.contains(&g) {
            names.push(g);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let xs: Vec<f64> = groups
                .iter()
                .zip(goodputs)
                .filter(|(g, _)| g.as_ref() == Some(name))
                .map(|(_, &x)| x)
                .collect();
            let sum: f64 = xs.iter().sum();
            GroupSummary {
                name: name.clone(),
                flows: xs.len(),
                goodput_bps: sum,
                mean_goodput_bps: sum / xs.len() as f64,
                share: (total > 0.0).then(|| sum / total),
                jain_index: qlog_analysis::jain_index(&xs),
            }
        })
        .collect()
}

impl<F, T> RunSummary<F, T> {
    /// The summary of a run of a scenario on `link`: `flows` makes the
    /// flows' summaries from their figures (in scenario order), `tail` the
    /// mode's own part from the analysis window.
    pub fn new(
        mode: Mode,
        seed: Option<u64>,
        link: &crate::scenario::Link,
        scenario_flows: &[crate::scenario::Flow],
        parts: qlog_analysis::SummaryParts,
        flows: impl FnOnce(Vec<qlog_analysis::FlowSummary>) -> Vec<F>,
        tail: impl FnOnce(&qlog_analysis::Window) -> T,
    ) -> Self {
        // The figures are the bulk flows' (workload flows have their own).
        let groups: Vec<Option<String>> = scenario_flows
            .iter()
            .filter(|f| f.kind.is_bulk())
            .map(|f| f.group.clone())
            .collect();
        let goodputs: Vec<f64> = parts.flows.iter().map(|f| f.goodput_bps).collect();
        RunSummary {
            groups: group_summaries(&groups, &goodputs),
            mode,
            seed,
            link: LinkSummary::of(link),
            window: parts.window.into(),
            flows: flows(parts.flows),
            utilization: parts.utilization,
            max_goodput_bps: parts.max_goodput_bps,
            utilization_of_max: parts.utilization_of_max,
            jain_index: parts.jain_index,
            refill_s: None,
            tail: tail(&parts.window),
        }
    }
}

/// Each bulk flow's `steady_s`, in scenario order, from the analysis of
/// the bulk flows (in the same order): with `[analysis] steady_queue`, the
/// seconds from the flow's start to its steady state
/// ([`qlog_analysis::flow::FlowSeries::steady_at_s`], over the whole run);
/// `None` when it never got there, without the key, or without an
/// analysis.
pub fn steady_s(
    scenario: &crate::scenario::Scenario,
    analysis: Option<&qlog_analysis::Analysis>,
) -> Vec<Option<f64>> {
    let bulk = scenario.flows.iter().filter(|f| f.kind.is_bulk());
    bulk.enumerate()
        .map(|(k, flow)| {
            let queue_ms = scenario.steady_queue?.as_secs_f64() * 1e3;
            let start_s = flow.start.as_secs_f64();
            let series = &analysis?.flows.get(k)?.series;
            series.steady_at_s(start_s, queue_ms).map(|at| at - start_s)
        })
        .collect()
}

/// The share of the most goodput the link carries at which [`refill_s`]
/// counts the link as taken back.
pub const REFILL_OF_MAX: f64 = 0.9;

/// The run's `refill_s`, from the analysis of the bulk flows (in scenario
/// order): with `[analysis] refill_after`, the seconds from that time to
/// the end of the first 250 ms bin after it in which the bulk flows still
/// running then (each one's `stop` later than it, or a flow of `bytes`)
/// together delivered at least [`REFILL_OF_MAX`] of the most goodput the
/// link carries ([`qlog_analysis::flow::FlowSeries::refill_at_s`], over
/// the whole run). `None` without the key, an analysis or the link's
/// most, when no flow runs past that time, or when they never got there.
pub fn refill_s(
    scenario: &crate::scenario::Scenario,
    analysis: Option<&qlog_analysis::Analysis>,
) -> Option<f64> {
    let after = scenario.refill_after?;
    let analysis = analysis?;
    let level_bps = REFILL_OF_MAX * analysis.max_goodput_bps?;
    let running: Vec<&qlog_analysis::flow::FlowSeries> = scenario
        .flows
        .iter()
        .filter(|f| f.kind.is_bulk())
        .zip(&analysis.flows)
        .filter(|(flow, _)| flow.stop().is_none_or(|stop| stop > after))
        .map(|(_, a)| &a.series)
        .collect();
    let after_s = after.as_secs_f64();
    qlog_analysis::flow::FlowSeries::refill_at_s(&running, after_s, level_bps)
        .map(|at| at - after_s)
}

/// The figures across flows of a run of workloads alone (a `--baseline`
/// run): no bulk flow, so none; the window is the scenario's, else the
/// workloads' span.
pub fn workloads_only_parts(scenario: &crate::scenario::Scenario) -> qlog_analysis::SummaryParts {
    let (from, to) = scenario.window.unwrap_or_else(|| {
        let from = scenario.flows.iter().map(|f| f.start).min();
        let to = scenario
            .flows
            .iter()
            .filter_map(crate::scenario::Flow::stop)
            .max();
        (from.unwrap_or_default(), to.unwrap_or_default())
    });
    qlog_analysis::SummaryParts {
        window: qlog_analysis::Window {
            from_s: from.as_secs_f64(),
            to_s: to.as_secs_f64(),
        },
        flows: Vec::new(),
        utilization: None,
        max_goodput_bps: None,
        utilization_of_max: None,
        jain_index: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_sum_their_flows_share_and_fairness() {
        let bg = Some("bg".to_string());
        let groups = [None, bg.clone(), bg.clone(), bg];
        // CUBIC 12 Mbit/s; three LBE flows 1, 2, 3 Mbit/s of 18 in all.
        let g = group_summaries(&groups, &[12e6, 1e6, 2e6, 3e6]);
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].name.as_str(), g[0].flows), ("bg", 3));
        assert_eq!((g[0].goodput_bps, g[0].mean_goodput_bps), (6e6, 2e6));
        assert!((g[0].share.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        // Jain: 6^2 / (3 x 14) = 36/42.
        assert!((g[0].jain_index.unwrap() - 36.0 / 42.0).abs() < 1e-12);
        assert!(group_summaries(&[None, None], &[1.0, 2.0]).is_empty());
    }
}
