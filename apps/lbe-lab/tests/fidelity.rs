//! The simulator against the lab: every shipped scenario with figures
//! recorded from real-time runs (each `docs/data/*.lab.toml`: the fidelity
//! table's, bbr2's, links-that-change's real-time rows, foreground's,
//! LEDBAT++ profiles') is simulated (mean of seeds 1-3, or the lab's seed
//! for a scenario with web downloads: `fidelity::seeds_for`) and held
//! within `lbe_lab::fidelity`'s tolerances, unless its entry says why it
//! does not hold. docs/fidelity.md, docs/links-that-change.md,
//! docs/foreground.md and docs/ledbatpp-profiles.md show the same
//! comparison (`lbe-lab docs-data NAME` writes it).

use std::path::Path;
use std::path::PathBuf;

use lbe_lab::fidelity;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_simulator_matches_the_lab_within_tolerance() {
    let data = root().join("docs/data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".lab.toml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 2,
        "lab files in {}: {files:?}",
        data.display()
    );
    let mut labs = Vec::new();
    for f in &files {
        labs.extend(fidelity::load_lab(f).unwrap());
    }
    // A row known not to hold is shown in the docs, not asserted: it is
    // not simulated here (some are at 1 Gbit/s, minutes of CPU).
    let held: Vec<&fidelity::Lab> = labs.iter().filter(|l| l.holds).collect();
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let sims = fidelity::simulate_all(&root().join("scenarios"), &held, jobs).unwrap();
    let failures: Vec<String> = held
        .iter()
        .zip(&sims)
        .filter_map(|(lab, sim)| {
            let off = fidelity::outside(lab, sim);
            (!off.is_empty()).then(|| format!("{}: {}", lab.file, off.join("; ")))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "outside tolerance:\n{}",
        failures.join("\n")
    );
}
