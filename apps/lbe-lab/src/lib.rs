//! lbe-lab: runs a scenario — one emulated bottleneck, several quic-bulk
//! or HTTP/3 (h3-fetch) flows — and writes the qlogs, `summary.json` (every figure from
//! `qlog-analysis`) and an HTML report.

pub mod baseline;
pub mod docs_tables;
pub mod fidelity;
pub mod foreground;
pub mod h3;
mod out_dir;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod summary;
pub mod sweep;
pub mod workload;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use baseline::add_baseline;
use baseline::baseline_scenario;
use out_dir::prepare_out;
use out_dir::write_out;
use out_dir::write_summary;

/// Loads `scenario_path`, runs it into `out`, writes `summary.json`, the
/// scenario file and (unless `report` is false) `report.html` with plots.
/// With `baseline`, then runs the scenario again with every bulk flow
/// removed (into `out/baseline/`) and adds to each workload flow its
/// `baseline` figures and the `harm`.
pub fn run_file(
    scenario_path: &Path,
    out: &Path,
    report: bool,
    baseline: bool,
    stop: &Arc<AtomicBool>,
    log: &dyn Fn(&str),
) -> Result<run::Summary, String> {
    let scenario = prepare_out(scenario_path, out)?;
    let alone = match baseline {
        true => Some(baseline_scenario(&scenario, scenario_path)?),
        false => None,
    };
    let mut summary = run::run(&scenario, out, stop, log)?;
    if let Some(alone) = alone {
        log("baseline: the workloads without the bulk flows");
        let dir = out.join("baseline");
        let without = run::run(&alone, &dir, stop, log)?;
        write_summary(&dir, &without, log)?;
        add_baseline(&mut summary.tail.workloads, without.tail.workloads);
    }
    write_summary(out, &summary, log)?;

    if report && summary.flows.is_empty() {
        log("no report: no bulk flow wrote a qlog (the workloads' figures are in summary.json)");
    } else if report {
        let options = qlog_analysis::Options {
            time_base: qlog_analysis::TimeBase::WallClock(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_millis(summary.tail.started_at_unix_ms as u64),
            ),
            ..qlog_analysis::Options::default()
        };
        let sections = foreground::sections(&summary.tail.workloads)?;
        let (html, _warnings) = qlog_analysis::report::build(
            out,
            &options,
            &qlog_analysis::plot::PlotOptions::default(),
            &sections,
        )
        .map_err(|e| format!("report: {e}"))?;
        write_out(out, "report.html", html, log)?;
    }
    Ok(summary)
}
