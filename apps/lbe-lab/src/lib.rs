//! lbe-lab: runs a scenario — one emulated bottleneck, several quic-bulk
//! or HTTP/3 (h3-fetch) flows — and writes the qlogs, `summary.json` (every figure from
//! `qlog-analysis`) and an HTML report.

pub mod foreground;
pub mod h3;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod summary;
pub mod sweep;
pub mod workload;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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

/// The scenario of a `--baseline` run: `scenario` with every bulk flow
/// removed; an error unless it has both bulk and workload flows.
pub fn baseline_scenario(
    scenario: &scenario::Scenario,
    path: &Path,
) -> Result<scenario::Scenario, String> {
    scenario.without_bulk().ok_or_else(|| {
        format!(
            "{}: --baseline needs both bulk flows (quic-bulk, h3) and workload flows (web, ping, video, cbr)",
            path.display()
        )
    })
}

/// Gives each workload flow of `with` its figures in `without` (matched by
/// name) as `baseline`, and the harm.
pub fn add_baseline(
    with: &mut Vec<workload::WorkloadSummary>,
    without: Vec<workload::WorkloadSummary>,
) {
    for w in without {
        if let Some(i) = with.iter().position(|f| f.name == w.name) {
            let flow = with.remove(i);
            with.insert(i, flow.with_baseline(w));
        }
    }
}

/// Loads the scenario, creates `out` and copies the scenario file into it
/// (`scenario.toml`), as every run, real or simulated, starts.
fn prepare_out(scenario_path: &Path, out: &Path) -> Result<scenario::Scenario, String> {
    let scenario = scenario::load(scenario_path)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let copy = out.join("scenario.toml");
    std::fs::copy(scenario_path, &copy)
        .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
    Ok(scenario)
}

/// `out/summary.json`: pretty JSON and a final newline.
fn write_summary(
    out: &Path,
    summary: &impl serde::Serialize,
    log: &dyn Fn(&str),
) -> Result<(), String> {
    let json = serde_json::to_string_pretty(summary).expect("summary serializes");
    write_out(out, "summary.json", json + "\n", log)
}

fn write_out(out: &Path, name: &str, contents: String, log: &dyn Fn(&str)) -> Result<(), String> {
    let path = out.join(name);
    std::fs::write(&path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    log(&format!("wrote {}", path.display()));
    Ok(())
}
