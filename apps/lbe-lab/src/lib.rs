//! lbe-lab: runs a scenario — one emulated bottleneck, several quic-bulk
//! flows — and writes the qlogs, `summary.json` (every figure from
//! `qlog-analysis`) and an HTML report.

pub mod run;
pub mod scenario;
pub mod sim;
pub mod sweep;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Loads `scenario_path`, runs it into `out`, writes `summary.json`, the
/// scenario file and (unless `report` is false) `report.html` with plots.
pub fn run_file(
    scenario_path: &Path,
    out: &Path,
    report: bool,
    stop: &Arc<AtomicBool>,
    log: &dyn Fn(&str),
) -> Result<run::Summary, String> {
    let scenario = scenario::load(scenario_path)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let copy = out.join("scenario.toml");
    std::fs::copy(scenario_path, &copy)
        .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;

    let summary = run::run(&scenario, out, stop, log)?;
    let path = out.join("summary.json");
    let json = serde_json::to_string_pretty(&summary).expect("summary serializes");
    std::fs::write(&path, json + "\n")
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    log(&format!("wrote {}", path.display()));

    if report {
        let options = qlog_analysis::Options {
            time_base: qlog_analysis::TimeBase::WallClock(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_millis(summary.started_at_unix_ms as u64),
            ),
            ..qlog_analysis::Options::default()
        };
        let (html, _warnings) = qlog_analysis::report::build(
            out,
            &options,
            &qlog_analysis::plot::PlotOptions::default(),
        )
        .map_err(|e| format!("report: {e}"))?;
        let path = out.join("report.html");
        std::fs::write(&path, html).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        log(&format!("wrote {}", path.display()));
    }
    Ok(summary)
}
