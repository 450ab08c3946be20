//! The simulator against the lab: every shipped scenario with figures
//! recorded from real-time runs (tests/data/lab-figures.toml) is simulated
//! (mean of seeds 1-3) and held within the tolerances below. Run with
//! `--nocapture` to print the side-by-side table docs/fidelity.md shows.

use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use serde::Deserialize;

const UTILIZATION_TOLERANCE: f64 = 0.03;
const SHARE_TOLERANCE: f64 = 0.05;
const JAIN_TOLERANCE: f64 = 0.05;
const QUEUE_TOLERANCE_MS: f64 = 10.0;
const SEEDS: [u64; 3] = [1, 2, 3];

#[derive(Deserialize)]
struct Recorded {
    scenario: Vec<Lab>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Lab {
    file: String,
    utilization: Option<f64>,
    shares: Option<Vec<f64>>,
    jain: Option<f64>,
    queue_ms: Option<Vec<f64>>,
    #[serde(default = "yes")]
    holds: bool,
    why: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Default)]
struct Sim {
    utilization: f64,
    shares: Vec<f64>,
    jain: f64,
    queue_ms: Vec<f64>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn simulate(file: &str) -> Sim {
    let path = root().join("scenarios").join(file);
    let mut scenario = lbe_lab::scenario::load(&path).unwrap();
    let mut sum = Sim::default();
    for seed in SEEDS {
        scenario.seed = Some(seed);
        let (s, _) = lbe_lab::sim::simulate(&scenario).unwrap();
        let total: f64 = s.flows.iter().map(|f| f.figures.goodput_bps).sum();
        sum.utilization += s.utilization.unwrap_or(0.0);
        sum.jain += s.jain_index.unwrap_or(0.0);
        sum.shares.resize(s.flows.len(), 0.0);
        sum.queue_ms.resize(s.flows.len(), 0.0);
        for (i, f) in s.flows.iter().enumerate() {
            sum.shares[i] += f.figures.goodput_bps / total;
            sum.queue_ms[i] += f.figures.queuing_delay_ms.mean.unwrap_or(f64::NAN);
        }
    }
    let n = SEEDS.len() as f64;
    Sim {
        utilization: sum.utilization / n,
        shares: sum.shares.iter().map(|x| x / n).collect(),
        jain: sum.jain / n,
        queue_ms: sum.queue_ms.iter().map(|x| x / n).collect(),
    }
}

fn fmt(v: &[f64], digits: usize) -> String {
    v.iter()
        .map(|x| format!("{x:.digits$}"))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// [`simulate`] of each file, in order, on as many threads as the machine
/// has cores (the simulator is deterministic: the figures do not depend on
/// which thread ran them).
fn simulate_all(files: &[&str]) -> Vec<Sim> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Sim>>> = Mutex::new(files.iter().map(|_| None).collect());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(files.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let sim = simulate(file);
                done.lock().unwrap()[i] = Some(sim);
            });
        }
    });
    done.into_inner()
        .unwrap()
        .into_iter()
        .map(|s| s.expect("every file simulated"))
        .collect()
}

#[test]
fn the_simulator_matches_the_lab_within_tolerance() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lab-figures.toml"),
    )
    .unwrap();
    let recorded: Recorded = toml::from_str(&text).unwrap();
    let mut failures = Vec::new();
    println!("| scenario | utilisation lab / sim | shares lab / sim | Jain lab / sim | mean queue ms lab / sim | within tolerance |");
    println!("|---|---|---|---|---|---|");
    let files: Vec<&str> = recorded.scenario.iter().map(|l| l.file.as_str()).collect();
    for (lab, sim) in recorded.scenario.iter().zip(simulate_all(&files)) {
        let mut off = Vec::new();
        let mut cells = Vec::new();
        match lab.utilization {
            Some(u) => {
                if (u - sim.utilization).abs() > UTILIZATION_TOLERANCE {
                    off.push(format!("utilization {u:.3} vs {:.3}", sim.utilization));
                }
                cells.push(format!("{u:.3} / {:.3}", sim.utilization));
            }
            None => cells.push(format!("– / {:.3}", sim.utilization)),
        }
        match &lab.shares {
            Some(s) => {
                for (i, (a, b)) in s.iter().zip(&sim.shares).enumerate() {
                    if (a - b).abs() > SHARE_TOLERANCE {
                        off.push(format!("flow {} share {a:.3} vs {b:.3}", i + 1));
                    }
                }
                cells.push(format!("{} / {}", fmt(s, 3), fmt(&sim.shares, 3)));
            }
            None => cells.push("–".into()),
        }
        match lab.jain {
            Some(j) => {
                if (j - sim.jain).abs() > JAIN_TOLERANCE {
                    off.push(format!("Jain {j:.3} vs {:.3}", sim.jain));
                }
                cells.push(format!("{j:.3} / {:.3}", sim.jain));
            }
            None => cells.push("–".into()),
        }
        match &lab.queue_ms {
            Some(q) => {
                for (i, (a, b)) in q.iter().zip(&sim.queue_ms).enumerate() {
                    if (a - b).abs() > QUEUE_TOLERANCE_MS {
                        off.push(format!("flow {} queue {a:.1} vs {b:.1} ms", i + 1));
                    }
                }
                cells.push(format!("{} / {}", fmt(q, 0), fmt(&sim.queue_ms, 1)));
            }
            None => cells.push("–".into()),
        }
        let verdict = match (off.is_empty(), lab.holds) {
            (true, _) => "yes".to_string(),
            (false, true) => {
                failures.push(format!("{}: {}", lab.file, off.join("; ")));
                format!("**no**: {}", off.join("; "))
            }
            (false, false) => format!(
                "no, not asserted: {}",
                lab.why.as_deref().unwrap_or("(no reason recorded)")
            ),
        };
        println!(
            "| `{}` | {} | {} |",
            lab.file.trim_end_matches(".toml"),
            cells.join(" | "),
            verdict
        );
    }
    assert!(
        failures.is_empty(),
        "outside tolerance:\n{}",
        failures.join("\n")
    );
}
