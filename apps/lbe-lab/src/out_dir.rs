//! A run's output directory, real or simulated: created with the scenario
//! file copied in, then `summary.json` and `report.html` written into it.

use std::path::Path;

use crate::scenario::Scenario;

/// Loads the scenario, creates `out` and copies the scenario file into it
/// (`scenario.toml`), as every run, real or simulated, starts.
pub(crate) fn prepare_out(scenario_path: &Path, out: &Path) -> Result<Scenario, String> {
    let scenario = crate::scenario::load(scenario_path)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let copy = out.join("scenario.toml");
    std::fs::copy(scenario_path, &copy)
        .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
    Ok(scenario)
}

/// `out/summary.json`: pretty JSON and a final newline.
pub(crate) fn write_summary(
    out: &Path,
    summary: &impl serde::Serialize,
    log: &dyn Fn(&str),
) -> Result<(), String> {
    let json = serde_json::to_string_pretty(summary).expect("summary serializes");
    write_out(out, "summary.json", json + "\n", log)
}

pub(crate) fn write_out(
    out: &Path,
    name: &str,
    contents: String,
    log: &dyn Fn(&str),
) -> Result<(), String> {
    let path = out.join(name);
    std::fs::write(&path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    log(&format!("wrote {}", path.display()));
    Ok(())
}
