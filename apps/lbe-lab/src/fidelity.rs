//! The simulator beside the lab (docs/fidelity.md): shipped scenarios with
//! figures recorded from real-time runs (`docs/data/fidelity.lab.toml`),
//! each simulated over seeds 1-3 (a scenario with web downloads at its own
//! seed only: [`seeds_for`]) and compared within the tolerances below.
//! `tests/fidelity.rs` asserts the comparison; `lbe-lab docs-data
//! fidelity` writes it as `docs/data/fidelity.csv`, the table the page
//! shows. The one home of the comparison: the test and the table cannot
//! disagree on what "within tolerance" means.

use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use serde::Deserialize;

use crate::docs_tables::csv::Csv;

/// Utilisation, lab against simulator (absolute, of the link).
pub const UTILIZATION_TOLERANCE: f64 = 0.03;
/// Each flow's share of the goodput.
pub const SHARE_TOLERANCE: f64 = 0.05;
/// Jain's index.
pub const JAIN_TOLERANCE: f64 = 0.05;
/// Each flow's mean queuing delay, milliseconds.
pub const QUEUE_TOLERANCE_MS: f64 = 10.0;
/// The simulator's figure is the mean over these seeds.
pub const SEEDS: [u64; 3] = [1, 2, 3];

/// The seeds `scenario` is simulated at: [`SEEDS`], or the scenario's own
/// seed alone when it has a web flow. A web flow's arrivals are drawn from
/// the run's seed, and the lab ran the scenario's own seed's arrivals;
/// another seed draws other downloads, another workload rather than another
/// sample of the same one (20 Mbit/s, 50 ms, beside the draft: seed 1 puts
/// 15 downloads in the figures' window, seed 3 27, and the simulated
/// utilisation is 0.440, 0.338, 0.219 for the lab's 0.442).
pub fn seeds_for(scenario: &crate::scenario::Scenario) -> Vec<u64> {
    let web = scenario
        .flows
        .iter()
        .any(|f| matches!(f.kind, crate::scenario::FlowKind::Web(_)));
    if web {
        vec![scenario.seed.unwrap_or(crate::sim::DEFAULT_SEED)]
    } else {
        SEEDS.to_vec()
    }
}

/// `NAME.lab.toml`: one `[[scenario]]` per scenario the lab ran.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Recorded {
    scenario: Vec<Lab>,
}

/// A scenario's figures from real-time runs (each optional: a row shows
/// and compares what the lab recorded).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Lab {
    /// The scenario, under `scenarios/`.
    pub file: String,
    pub utilization: Option<f64>,
    /// Each flow's share of the goodput, in file order.
    pub shares: Option<Vec<f64>>,
    pub jain: Option<f64>,
    /// Each flow's mean queuing delay (ms), in file order.
    pub queue_ms: Option<Vec<f64>>,
    /// The web flow's p95 completion time beside the bulk flows over
    /// without them (`--baseline`'s `fct_p95_ratio`). Shown, not held to a
    /// tolerance.
    pub web_p95: Option<f64>,
    /// The ping's p95 added delay with the bulk flows minus without, ms
    /// (`added_delay_p95_ms`). Shown, not held to a tolerance.
    pub ping_p95_ms: Option<f64>,
    /// `false`: the simulator is known not to match; shown with `why`,
    /// not asserted.
    #[serde(default = "yes")]
    pub holds: bool,
    pub why: Option<String>,
}

fn yes() -> bool {
    true
}

/// A scenario's figures as the comparison reads them: of one run, or
/// the simulator's mean over [`seeds_for`] it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sim {
    pub utilization: f64,
    pub shares: Vec<f64>,
    pub jain: f64,
    pub queue_ms: Vec<f64>,
    /// With the workloads alone run too (`--baseline`): the web flow's p95
    /// completion time over its own alone, the ping's p95 added delay.
    pub web_p95: Option<f64>,
    pub ping_p95_ms: Option<f64>,
}

/// The figures of one run's `summary.json` (real or simulated, as
/// JSON): its utilisation and Jain index, each bulk flow's share of their
/// goodput and mean queuing delay, and the first web and ping flows'
/// harm when the run had a baseline. The one reading of a summary for
/// both the lab's runs ([`lab_entry`]) and the simulator's ([`simulate`]).
pub fn figures(summary: &serde_json::Value) -> Sim {
    let num = |v: &serde_json::Value| v.as_f64();
    let flows = summary["flows"].as_array().map_or(&[][..], Vec::as_slice);
    let goodputs: Vec<f64> = flows
        .iter()
        .map(|f| num(&f["goodput_bps"]).unwrap_or(0.0))
        .collect();
    let total: f64 = goodputs.iter().sum();
    let harm = |kind: &str, key: &str| {
        summary["workloads"]
            .as_array()?
            .iter()
            .find(|w| w["kind"] == kind)
            .and_then(|w| num(&w["harm"][key]))
    };
    Sim {
        utilization: num(&summary["utilization"]).unwrap_or(0.0),
        shares: goodputs.iter().map(|g| g / total).collect(),
        jain: num(&summary["jain_index"]).unwrap_or(0.0),
        queue_ms: flows
            .iter()
            .map(|f| num(&f["queuing_delay_ms"]["mean"]).unwrap_or(f64::NAN))
            .collect(),
        web_p95: harm("web", "fct_p95_ratio"),
        ping_p95_ms: harm("ping", "added_delay_p95_ms"),
    }
}

/// The mean of `runs`' figures, flow by flow (a harm figure only if every
/// run has it).
fn mean(runs: &[Sim]) -> Sim {
    let n = runs.len() as f64;
    let flows = runs.iter().map(|r| r.shares.len()).max().unwrap_or(0);
    let per_flow = |f: fn(&Sim) -> &Vec<f64>| {
        (0..flows)
            .map(|i| {
                runs.iter()
                    .map(|r| f(r).get(i).copied().unwrap_or(f64::NAN))
                    .sum::<f64>()
                    / n
            })
            .collect()
    };
    let all = |f: fn(&Sim) -> Option<f64>| runs.iter().map(f).sum::<Option<f64>>().map(|x| x / n);
    Sim {
        utilization: runs.iter().map(|r| r.utilization).sum::<f64>() / n,
        shares: per_flow(|r| &r.shares),
        jain: runs.iter().map(|r| r.jain).sum::<f64>() / n,
        queue_ms: per_flow(|r| &r.queue_ms),
        web_p95: all(|r| r.web_p95),
        ping_p95_ms: all(|r| r.ping_p95_ms),
    }
}

/// The lab's `[[scenario]]` entry for `file` from real-time runs' output
/// directories (each with `summary.json`, `lbe-lab run [--baseline]`):
/// the mean of their figures, as TOML for `NAME.lab.toml`, with a comment
/// naming the runs.
pub fn lab_entry(file: &str, runs: &[std::path::PathBuf]) -> Result<String, String> {
    let mut each = Vec::new();
    for dir in runs {
        let p = dir.join("summary.json");
        let text =
            std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        if v["mode"] != "real" {
            return Err(format!(
                "{}: a run in mode {}, not a real-time one (lbe-lab run without --sim)",
                p.display(),
                v["mode"]
            ));
        }
        each.push(figures(&v));
    }
    if each.is_empty() {
        return Err("no run directory".to_string());
    }
    let m = mean(&each);
    // A flow with no figure in the window (CUBIC after it stopped has no
    // RTT samples) is TOML's `nan`: the table leaves its cell empty.
    let list = |v: &[f64], d: usize| {
        v.iter()
            .map(|x| match x.is_nan() {
                true => "nan".to_string(),
                false => format!("{x:.d$}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = format!(
        "# {} real-time run(s), the mean: {}\n[[scenario]]\nfile = \"{file}\"\nutilization = {:.3}\n",
        each.len(),
        runs.iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        m.utilization
    );
    if m.shares.len() > 1 {
        s += &format!("shares = [{}]\njain = {:.3}\n", list(&m.shares, 3), m.jain);
    }
    s += &format!("queue_ms = [{}]\n", list(&m.queue_ms, 1));
    if let Some(w) = m.web_p95 {
        s += &format!("web_p95 = {w:.3}\n");
    }
    if let Some(p) = m.ping_p95_ms {
        s += &format!("ping_p95_ms = {p:.1}\n");
    }
    Ok(s)
}

/// Reads a lab figures file; errors name the file (and the line).
pub fn load_lab(path: &Path) -> Result<Vec<Lab>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let r: Recorded = toml::from_str(&text)
        .map_err(|e| crate::scenario::toml_error(&path.display().to_string(), &text, &e))?;
    if let Some(l) = r.scenario.iter().find(|l| !l.holds && l.why.is_none()) {
        return Err(format!(
            "{}: scenario {} has holds = false without a 'why'",
            path.display(),
            l.file
        ));
    }
    Ok(r.scenario)
}

/// How many simulator runs [`simulate_all`] makes of `labs`' scenarios
/// (the baselines of the harm not counted): [`seeds_for`] each.
pub fn sim_runs(scenarios: &Path, labs: &[Lab]) -> Result<usize, String> {
    labs.iter().try_fold(0, |n, lab| {
        let scenario = crate::scenario::load(&scenarios.join(&lab.file))
            .map_err(|e| format!("{}: {e}", lab.file))?;
        Ok(n + seeds_for(&scenario).len())
    })
}

/// Simulates `scenarios/FILE` over [`seeds_for`] it: the mean figures;
/// with `harm`, each seed's workloads also alone (`--baseline`), for the
/// harm figures.
pub fn simulate(scenarios: &Path, file: &str, harm: bool) -> Result<Sim, String> {
    let path = scenarios.join(file);
    let mut scenario = crate::scenario::load(&path)?;
    let mut runs = Vec::new();
    for seed in seeds_for(&scenario) {
        scenario.seed = Some(seed);
        let (mut s, _) = crate::sim::simulate(&scenario)?;
        if harm {
            let alone = crate::baseline::baseline_scenario(&scenario, &path)?;
            let (without, _) = crate::sim::simulate(&alone)?;
            crate::baseline::add_baseline(&mut s.tail.workloads, without.tail.workloads);
        }
        let v = serde_json::to_value(&s).map_err(|e| e.to_string())?;
        runs.push(figures(&v));
    }
    Ok(mean(&runs))
}

/// [`simulate`] of each lab entry's scenario (with the harm where the lab
/// has it), in order, `jobs` at a time (the simulator is deterministic:
/// the figures do not depend on which thread ran them).
pub fn simulate_all(scenarios: &Path, labs: &[&Lab], jobs: usize) -> Result<Vec<Sim>, String> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Result<Sim, String>>>> =
        Mutex::new(labs.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(labs.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(lab) = labs.get(i) else { break };
                let harm = lab.web_p95.is_some() || lab.ping_p95_ms.is_some();
                let sim =
                    simulate(scenarios, &lab.file, harm).map_err(|e| format!("{}: {e}", lab.file));
                done.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(sim);
            });
        }
    });
    done.into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|s| s.unwrap_or_else(|| Err("not simulated".to_string())))
        .collect()
}

/// The figures of `sim` outside the tolerances of `lab`'s, one phrase
/// each (empty: it holds).
pub fn outside(lab: &Lab, sim: &Sim) -> Vec<String> {
    let mut off = Vec::new();
    if let Some(u) = lab.utilization {
        if (u - sim.utilization).abs() > UTILIZATION_TOLERANCE {
            off.push(format!("utilization {u:.3} vs {:.3}", sim.utilization));
        }
    }
    for (i, (a, b)) in lab.shares.iter().flatten().zip(&sim.shares).enumerate() {
        if (a - b).abs() > SHARE_TOLERANCE {
            off.push(format!("flow {} share {a:.3} vs {b:.3}", i + 1));
        }
    }
    if let Some(j) = lab.jain {
        if (j - sim.jain).abs() > JAIN_TOLERANCE {
            off.push(format!("Jain {j:.3} vs {:.3}", sim.jain));
        }
    }
    for (i, (a, b)) in lab.queue_ms.iter().flatten().zip(&sim.queue_ms).enumerate() {
        if (a - b).abs() > QUEUE_TOLERANCE_MS {
            off.push(format!("flow {} queue {a:.1} vs {b:.1} ms", i + 1));
        }
    }
    off
}

/// The comparison's word for a row: `yes`, `**no**: ...` (outside
/// tolerance where the lab file says it holds: the test fails), or `no,
/// not asserted: WHY`.
pub fn verdict(lab: &Lab, off: &[String]) -> String {
    match (off.is_empty(), lab.holds) {
        (true, _) => "yes".to_string(),
        (false, true) => format!("**no**: {}", off.join("; ")),
        (false, false) => format!(
            "no, not asserted: {}",
            lab.why.as_deref().unwrap_or_default()
        ),
    }
}

/// The table's data: a row per scenario, its lab and simulated figures
/// (`lab.utilization`, `sim.utilization`, `lab.shareN`, `sim.shareN`,
/// `lab.jain`, `sim.jain`, `lab.queueN`, `sim.queueN` for flow N, the
/// simulator's only for the flows the lab recorded; `lab.web_p95`,
/// `sim.web_p95`, `lab.ping_p95_ms`, `sim.ping_p95_ms` when a lab entry has
/// a harm figure) and its verdict.
pub fn table(labs: &[Lab], sims: &[Sim]) -> Csv {
    let flows = |f: fn(&Lab) -> Option<&Vec<f64>>| {
        labs.iter()
            .filter_map(|l| f(l).map(Vec::len))
            .max()
            .unwrap_or(0)
    };
    let (shares, queues) = (flows(|l| l.shares.as_ref()), flows(|l| l.queue_ms.as_ref()));
    let mut header = vec!["scenario".to_string()];
    header.extend(["lab.utilization", "sim.utilization"].map(String::from));
    for who in ["lab", "sim"] {
        header.extend((1..=shares).map(|i| format!("{who}.share{i}")));
    }
    header.extend(["lab.jain", "sim.jain"].map(String::from));
    for who in ["lab", "sim"] {
        header.extend((1..=queues).map(|i| format!("{who}.queue{i}")));
    }
    let harm = labs
        .iter()
        .any(|l| l.web_p95.is_some() || l.ping_p95_ms.is_some());
    if harm {
        header.extend(
            [
                "lab.web_p95",
                "sim.web_p95",
                "lab.ping_p95_ms",
                "sim.ping_p95_ms",
            ]
            .map(String::from),
        );
    }
    header.push("verdict".to_string());
    let num = |x: f64| x.to_string();
    let list = |lab: Option<&Vec<f64>>, sim: &[f64], n: usize| {
        // The lab's figure, if it has one (not `nan`); the simulator's is
        // shown only beside one.
        let at = |i: usize| lab.and_then(|l| l.get(i)).filter(|x| !x.is_nan());
        let mut cells: Vec<String> = (0..n)
            .map(|i| at(i).map_or(String::new(), |x| num(*x)))
            .collect();
        cells.extend((0..n).map(|i| match (at(i), sim.get(i)) {
            (Some(_), Some(x)) => num(*x),
            _ => String::new(),
        }));
        cells
    };
    let rows = labs
        .iter()
        .zip(sims)
        .map(|(l, s)| {
            let mut r = vec![l.file.trim_end_matches(".toml").to_string()];
            r.push(l.utilization.map_or(String::new(), num));
            r.push(num(s.utilization));
            r.extend(list(l.shares.as_ref(), &s.shares, shares));
            r.push(l.jain.map_or(String::new(), num));
            r.push(match l.jain {
                Some(_) => num(s.jain),
                None => String::new(),
            });
            r.extend(list(l.queue_ms.as_ref(), &s.queue_ms, queues));
            if harm {
                let pair = |lab: Option<f64>, sim: Option<f64>| {
                    let (l, s) = (lab.map(num), lab.and(sim).map(num));
                    [l.unwrap_or_default(), s.unwrap_or_default()]
                };
                r.extend(pair(l.web_p95, s.web_p95));
                r.extend(pair(l.ping_p95_ms, s.ping_p95_ms));
            }
            r.push(verdict(l, &outside(l, s)));
            r
        })
        .collect();
    Csv { header, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(text: &str) -> Lab {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_scenario_with_web_downloads_is_simulated_at_the_labs_seed_only() {
        let parse = |text: &str| crate::scenario::parse(Path::new("s.toml"), text).unwrap();
        let bulk = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                    [[flow]]\ncc = \"cubic\"\nstop = \"10s\"\n";
        assert_eq!(seeds_for(&parse(bulk)), vec![1, 2, 3]);
        let ping = format!("{bulk}[[flow]]\nkind = \"ping\"\nstop = \"10s\"\n");
        assert_eq!(
            seeds_for(&parse(&ping)),
            vec![1, 2, 3],
            "a ping draws nothing"
        );
        let web = format!(
            "{bulk}[[flow]]\nkind = \"web\"\narrivals = \"1/s\"\nsize = \"500kB\"\nstop = \"10s\"\n"
        );
        assert_eq!(
            seeds_for(&parse(&web)),
            vec![1],
            "no seed: the lab's default"
        );
        assert_eq!(seeds_for(&parse(&format!("seed = 7\n{web}"))), vec![7]);
    }

    #[test]
    fn figures_outside_tolerance_are_named_and_a_known_miss_is_not_asserted() {
        let l = lab("file = \"a.toml\"\nutilization = 0.9\nshares = [0.1, 0.9]\nqueue_ms = [50.0]");
        let near = Sim {
            utilization: 0.929,
            shares: vec![0.149, 0.851],
            jain: 0.5,
            queue_ms: vec![59.9, 3.0],
            ..Sim::default()
        };
        assert!(outside(&l, &near).is_empty());
        assert_eq!(verdict(&l, &[]), "yes");
        let far = Sim {
            utilization: 0.94,
            shares: vec![0.16, 0.84],
            jain: 0.5,
            queue_ms: vec![61.0],
            ..Sim::default()
        };
        let off = outside(&l, &far);
        assert_eq!(
            off,
            [
                "utilization 0.900 vs 0.940",
                "flow 1 share 0.100 vs 0.160",
                "flow 2 share 0.900 vs 0.840",
                "flow 1 queue 50.0 vs 61.0 ms"
            ]
        );
        assert_eq!(verdict(&l, &off[..1]), "**no**: utilization 0.900 vs 0.940");
        let known = lab("file = \"a.toml\"\nholds = false\nwhy = \"host timing\"");
        assert_eq!(verdict(&known, &off[..1]), "no, not asserted: host timing");
    }

    #[test]
    fn the_table_has_a_column_per_flow_and_the_simulators_only_where_the_lab_has_one() {
        let labs = [
            lab("file = \"one.toml\"\nutilization = 0.9\nqueue_ms = [50.0]"),
            lab("file = \"two.toml\"\nshares = [0.25, 0.75]\njain = 0.8"),
        ];
        let sims = [
            Sim {
                utilization: 0.91,
                shares: vec![1.0],
                jain: 1.0,
                queue_ms: vec![52.5],
                ..Sim::default()
            },
            Sim {
                utilization: 0.5,
                shares: vec![0.5, 0.5],
                jain: 1.0,
                queue_ms: vec![1.0, 2.0],
                ..Sim::default()
            },
        ];
        let csv = table(&labs, &sims);
        assert_eq!(
            csv.to_text(),
            "scenario,lab.utilization,sim.utilization,lab.share1,lab.share2,sim.share1,sim.share2,lab.jain,sim.jain,lab.queue1,sim.queue1,verdict\n\
             one,0.9,0.91,,,,,,,50,52.5,yes\n\
             two,,0.5,0.25,0.75,0.5,0.5,0.8,1,,,**no**: flow 1 share 0.250 vs 0.500; flow 2 share 0.750 vs 0.500; Jain 0.800 vs 1.000\n"
        );
    }

    /// A run's `summary.json` as `lbe-lab run` writes it (the fields the
    /// comparison reads).
    fn summary(
        mode: &str,
        utilization: f64,
        goodputs: &[f64],
        queues: &[f64],
        harm: bool,
    ) -> String {
        let flows: Vec<String> = goodputs
            .iter()
            .zip(queues)
            .map(|(g, q)| {
                format!("{{\"goodput_bps\": {g}, \"queuing_delay_ms\": {{\"mean\": {q}}}}}")
            })
            .collect();
        let workloads = match harm {
            true => ", \"workloads\": [{\"kind\": \"web\", \"harm\": {\"fct_p95_ratio\": 1.2}}, {\"kind\": \"ping\", \"harm\": {\"added_delay_p95_ms\": 10.5}}]",
            false => "",
        };
        format!(
            "{{\"mode\": \"{mode}\", \"utilization\": {utilization}, \"jain_index\": 0.8, \"flows\": [{}]{workloads}}}",
            flows.join(", ")
        )
    }

    #[test]
    fn a_labs_entry_is_the_mean_of_its_runs_and_a_simulated_run_is_refused() {
        let dir = std::env::temp_dir().join(format!("fidelity-entry-{}", std::process::id()));
        let runs: Vec<std::path::PathBuf> = (1..=3).map(|k| dir.join(format!("run-{k}"))).collect();
        let write = |run: &std::path::Path, text: String| {
            std::fs::create_dir_all(run).unwrap();
            std::fs::write(run.join("summary.json"), text).unwrap();
        };
        write(
            &runs[0],
            summary("real", 0.9, &[1.0e6, 3.0e6], &[10.0, 20.0], true),
        );
        write(
            &runs[1],
            summary("real", 0.8, &[3.0e6, 1.0e6], &[20.0, 40.0], true),
        );
        let entry = lab_entry("x/a.toml", &runs[..2]).unwrap();
        assert_eq!(
            entry.lines().skip(1).collect::<Vec<_>>(),
            [
                "[[scenario]]",
                "file = \"x/a.toml\"",
                "utilization = 0.850",
                "shares = [0.500, 0.500]",
                "jain = 0.800",
                "queue_ms = [15.0, 30.0]",
                "web_p95 = 1.200",
                "ping_p95_ms = 10.5",
            ]
        );
        assert!(entry.starts_with("# 2 real-time run(s)"), "{entry}");
        // A run without a baseline leaves the harm out; one flow, no shares.
        write(&runs[2], summary("real", 0.7, &[5.0e6], &[3.0], false));
        let one = lab_entry("x/b.toml", &runs[2..]).unwrap();
        assert!(
            one.ends_with("utilization = 0.700\nqueue_ms = [3.0]\n"),
            "{one}"
        );
        write(&runs[2], summary("sim", 0.7, &[5.0e6], &[3.0], false));
        let e = lab_entry("x/b.toml", &runs[2..]).unwrap_err();
        assert!(
            e.ends_with("a run in mode \"sim\", not a real-time one (lbe-lab run without --sim)"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_flow_without_a_queue_in_the_window_is_nan_and_an_empty_cell() {
        // CUBIC stopped before the window: it has no RTT samples there.
        let dir = std::env::temp_dir().join(format!("fidelity-nan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("summary.json"),
            "{\"mode\": \"real\", \"utilization\": 0.9, \"jain_index\": 1.0, \"flows\": [\
             {\"goodput_bps\": 1e6, \"queuing_delay_ms\": {\"mean\": 9.7}}, \
             {\"goodput_bps\": 0, \"queuing_delay_ms\": {\"mean\": null}}]}",
        )
        .unwrap();
        let entry = lab_entry("x/c.toml", std::slice::from_ref(&dir)).unwrap();
        assert!(entry.contains("\nqueue_ms = [9.7, nan]\n"), "{entry}");
        let l: Recorded = toml::from_str(&entry).unwrap();
        let sim = Sim {
            utilization: 0.9,
            shares: vec![1.0, 0.0],
            jain: 1.0,
            queue_ms: vec![25.0, f64::NAN],
            ..Sim::default()
        };
        assert_eq!(
            outside(&l.scenario[0], &sim),
            ["flow 1 queue 9.7 vs 25.0 ms"]
        );
        let csv = table(&l.scenario, &[sim]).to_text();
        let mut lines = csv.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .contains("lab.queue1,lab.queue2,sim.queue1,sim.queue2"),
            "{csv}"
        );
        assert!(lines.next().unwrap().contains(",9.7,,25,,"), "{csv}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lab_file_with_an_unknown_key_or_an_unexplained_miss_is_refused() {
        let dir = std::env::temp_dir().join(format!("fidelity-lab-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.lab.toml");
        std::fs::write(&p, "[[scenario]]\nfile = \"a.toml\"\nutilisation = 0.9\n").unwrap();
        let e = load_lab(&p).unwrap_err();
        assert!(e.starts_with(&format!("{}:3: ", p.display())), "{e}");
        assert!(e.contains("utilisation"), "{e}");
        std::fs::write(&p, "[[scenario]]\nfile = \"a.toml\"\nholds = false\n").unwrap();
        assert_eq!(
            load_lab(&p).unwrap_err(),
            format!(
                "{}: scenario a.toml has holds = false without a 'why'",
                p.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
