//! A figure's metric: the names a sweep file may plot (checked on
//! loading) and their values in a run's results.

use lbe_workload::figures::WorkloadFigures;

use crate::sweep::results::RunResult;
use crate::sweep::results::WorkloadResult;

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

const RUN_METRICS: [&str; 5] = [
    "utilization",
    "utilization_of_max",
    "jain_index",
    "total_goodput_mbps",
    "refill_s",
];
const FLOW_METRICS: [&str; 7] = [
    "goodput_mbps",
    "share",
    "queue_mean_ms",
    "queue_p95_ms",
    "lost_packets",
    "took_s",
    "steady_s",
];

/// Checks figure metric `y` against the sweep's flows (`kinds`, each
/// flow's `kind` in file order).
pub(super) fn metric_check(y: &str, kinds: &[String]) -> Result<(), String> {
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

/// Metric `y` of run `r` (`None` when the run has no such value).
pub fn metric(r: &RunResult, y: &str) -> Option<f64> {
    match y {
        "utilization" => r.utilization,
        "utilization_of_max" => r.utilization_of_max,
        "jain_index" => r.jain_index,
        "total_goodput_mbps" => Some(r.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e6),
        "refill_s" => r.refill_s,
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
                "took_s" => fl.took_s,
                "steady_s" => fl.steady_s,
                _ => None,
            }
        }
    }
}
