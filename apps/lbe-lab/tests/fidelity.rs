//! The simulator against the lab: every shipped scenario with figures
//! recorded from real-time runs (docs/data/fidelity.lab.toml) is simulated
//! (mean of seeds 1-3) and held within `lbe_lab::fidelity`'s tolerances,
//! unless its entry says why it does not hold. docs/fidelity.md shows the
//! same comparison (`lbe-lab docs-data fidelity` writes it).

use std::path::Path;
use std::path::PathBuf;

use lbe_lab::fidelity;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_simulator_matches_the_lab_within_tolerance() {
    let labs = fidelity::load_lab(&root().join("docs/data/fidelity.lab.toml")).unwrap();
    let files: Vec<&str> = labs.iter().map(|l| l.file.as_str()).collect();
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let sims = fidelity::simulate_all(&root().join("scenarios"), &files, jobs).unwrap();
    let failures: Vec<String> = labs
        .iter()
        .zip(&sims)
        .filter(|(lab, _)| lab.holds)
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
