//! `lbe-lab run SCENARIO.toml --out DIR [--sim]`, `lbe-lab check SCENARIO.toml`,
//! `lbe-lab sweep SWEEP.toml --out DIR [--jobs N] [--shard I/N] [--real]`,
//! `lbe-lab merge DIR... --out DIR`, `lbe-lab docs-tables [--check]
//! [--list] [--docs DIR]`, `lbe-lab docs-data NAME RESULTS_DIR...`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use clap::Subcommand;

/// `println!` that ignores a closed stdout (`lbe-lab ... | head`) instead
/// of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

#[derive(Parser)]
#[command(
    name = "lbe-lab",
    version,
    about = "Runs LBE scenarios on an emulated bottleneck"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario; write qlogs, summary.json and report.html into DIR.
    Run {
        scenario: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Run it in the deterministic simulator (virtual time, seconds for
        /// minutes of scenario) instead of in real time through lbe-netem.
        #[arg(long)]
        sim: bool,
        /// With --sim: also write each flow's qlog into DIR/qlog/ (a real
        /// run always does; the simulator computes its figures in memory).
        #[arg(long, requires = "sim")]
        qlog: bool,
        /// Skip the HTML report and plots.
        #[arg(long)]
        no_report: bool,
        /// Also run the scenario with every bulk flow removed (into
        /// DIR/baseline/) and give each workload flow (web, ping, video,
        /// cbr) its `baseline` figures and the `harm` the bulk flows did.
        #[arg(long)]
        baseline: bool,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check a scenario file without running it.
    Check { scenario: Vec<PathBuf> },
    /// Run a grid of scenarios (a sweep file) in the simulator; write
    /// results.json, results.csv, figures/ and report.html (with a
    /// foreground section for workload flows) into DIR.
    Sweep {
        sweep: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Simulations run in parallel (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only the runs numbered I modulo N (I from 0): one task of a
        /// Slurm job array or a Kubernetes Indexed Job; `lbe-lab merge`
        /// combines the shards.
        #[arg(long, value_name = "I/N")]
        shard: Option<lbe_lab::sweep::Shard>,
        /// Run in real time through lbe-netem, one run at a time, each
        /// into DIR/runs/<index>/.
        #[arg(long)]
        real: bool,
        /// Also run each point with every bulk flow removed and give each
        /// workload flow (web, ping, video, cbr) its `baseline` figures and
        /// the `harm` the bulk flows did.
        #[arg(long)]
        baseline: bool,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the `[[scenario]]` entry of a lab table (docs/data/NAME.lab.toml)
    /// for SCENARIO from real-time runs of it (`lbe-lab run [--baseline]`
    /// output directories): the mean of their figures.
    LabFigures {
        /// The scenario, as the lab file names it (under scenarios/).
        #[arg(long)]
        scenario: String,
        #[arg(required = true)]
        runs: Vec<PathBuf>,
    },
    /// Combine the shards of a sweep into one results.json, results.csv,
    /// figures/ and report.html (the same as running it unsharded).
    Merge {
        dirs: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Regenerate every table marked `<!-- table: NAME -->` in the pages
    /// under DIR from DIR/data/ (NAME.toml, NAME.csv, NAME.measured.toml,
    /// NAME.seed.csv).
    DocsTables {
        /// Change nothing; exit 1 with a line per table whose page differs
        /// from what its data gives.
        #[arg(long)]
        check: bool,
        /// Print each table, its sweeps and their runs, and change nothing.
        #[arg(long, conflicts_with = "check")]
        list: bool,
        #[arg(long, value_name = "DIR", default_value = "docs")]
        docs: PathBuf,
    },
    /// Write DIR/data/NAME.csv and NAME.measured.toml from the results of
    /// the sweeps NAME.toml names (one results directory per sweep, in its
    /// order), as its `[rows]` say; for a table of the lab's figures
    /// (NAME.toml's `lab`), no directory: it simulates the lab's scenarios
    /// and writes the comparison.
    DocsData {
        name: String,
        results: Vec<PathBuf>,
        /// Simulations in parallel, for a table of the lab's figures
        /// (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        #[arg(long, value_name = "DIR", default_value = "docs")]
        docs: PathBuf,
        /// The commit lbe-lab was built at (`git rev-parse --short HEAD`).
        #[arg(long)]
        commit: String,
        /// The day of the runs (YYYY-MM-DD).
        #[arg(long)]
        date: String,
    },
}

/// `lbe-lab docs-tables`: the tables regenerated or checked (or listed).
fn docs_tables(docs: &std::path::Path, check: bool, list: bool) -> Result<(), String> {
    use lbe_lab::docs_tables;
    if list {
        // The sweeps are named from the repository's top, DIR's parent.
        let root = docs.parent().unwrap_or(std::path::Path::new("."));
        for name in docs_tables::table_names(docs)? {
            let spec = docs_tables::load_spec(&docs.join("data"), &name)?;
            if let Some(lab) = &spec.lab {
                // Simulated by `docs-data NAME` itself: "lab", no sweeps.
                let labs = lbe_lab::fidelity::load_lab(&root.join(lab))?;
                let n = lbe_lab::fidelity::sim_runs(&root.join("scenarios"), &labs)?;
                out!("{name}\t{n}\tlab\t");
                continue;
            }
            let sweeps = spec.all_sweeps();
            let mut runs = Vec::new();
            for s in &sweeps {
                runs.push(lbe_lab::sweep::load(&root.join(s))?.len());
            }
            out!(
                "{name}\t{}\t{}\t{}",
                runs.iter().sum::<usize>(),
                if spec.baseline { "baseline" } else { "-" },
                sweeps
                    .iter()
                    .zip(&runs)
                    .map(|(s, n)| format!("{s}:{n}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        return Ok(());
    }
    let report = docs_tables::process(docs, check)?;
    for e in &report.errors {
        eprintln!("docs-tables: {e}");
    }
    for d in &report.differs {
        match check {
            true => eprintln!("docs-tables: {d}"),
            false => out!("docs-tables: regenerated: {d}"),
        }
    }
    for p in &report.rewritten {
        out!("docs-tables: wrote {}", p.display());
    }
    if !report.errors.is_empty() {
        return Err(format!("{} error(s)", report.errors.len()));
    }
    if check && !report.differs.is_empty() {
        return Err(format!(
            "{} of {} tables differ from their data (regenerate: make docs-tables)",
            report.differs.len(),
            report.tables
        ));
    }
    out!(
        "docs-tables: {} tables {}",
        report.tables,
        match check {
            true => "as their data gives",
            false => "generated",
        }
    );
    Ok(())
}

/// `lbe-lab docs-data`: NAME.csv and NAME.measured.toml from the sweeps'
/// results.
fn docs_data(
    docs: &std::path::Path,
    name: &str,
    results: &[PathBuf],
    jobs: Option<usize>,
    commit: &str,
    date: &str,
) -> Result<(), String> {
    use lbe_lab::docs_tables;
    let data_dir = docs.join("data");
    let spec = docs_tables::load_spec(&data_dir, name)?;
    let root = docs.parent().unwrap_or(std::path::Path::new("."));
    let put = |file: String, body: String| {
        let p = data_dir.join(file);
        std::fs::write(&p, body).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        out!("docs-data: wrote {}", p.display());
        Ok::<(), String>(())
    };
    let put_measured = |measured: docs_tables::Measured| {
        put(
            format!("{name}.measured.toml"),
            format!(
                "# Written by `lbe-lab docs-data` with {name}.csv: what measured it.\n{}",
                toml::to_string(&measured).map_err(|e| e.to_string())?
            ),
        )
    };
    if let Some(lab) = &spec.lab {
        if !results.is_empty() {
            return Err(format!(
                "table {name} compares the lab's figures ({lab}) with the simulator's: it takes no results directory"
            ));
        }
        let labs = lbe_lab::fidelity::load_lab(&root.join(lab))?;
        let jobs =
            jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let refs: Vec<&lbe_lab::fidelity::Lab> = labs.iter().collect();
        let sims = lbe_lab::fidelity::simulate_all(&root.join("scenarios"), &refs, jobs)?;
        put(
            format!("{name}.csv"),
            lbe_lab::fidelity::table(&labs, &sims).to_text(),
        )?;
        return put_measured(docs_tables::Measured {
            mode: "sim".to_string(),
            engine: Some(lbe_sim::ENGINE.to_string()),
            commit: commit.to_string(),
            date: date.to_string(),
            runs: lbe_lab::fidelity::sim_runs(&root.join("scenarios"), &labs)?,
        });
    }
    if jobs.is_some() {
        return Err(format!(
            "--jobs is for a table of the lab's figures; table {name}'s sweeps ran already"
        ));
    }
    let sweeps = spec.all_sweeps();
    if results.len() != sweeps.len() {
        return Err(format!(
            "table {name} has {} sweeps ({}): give one results directory for each, in that order",
            sweeps.len(),
            sweeps
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut all = Vec::new();
    for (dir, sweep) in results.iter().zip(&sweeps) {
        let p = dir.join("results.json");
        let text =
            std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let r: lbe_lab::sweep::Results =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        let expected = lbe_lab::sweep::load(&root.join(sweep))?.name;
        if r.sweep != expected {
            return Err(format!(
                "{}: results of sweep '{}', where table {name} expects '{expected}' ({sweep})",
                p.display(),
                r.sweep
            ));
        }
        all.push(r);
    }
    let (mode, engine) = (all[0].mode.clone(), all[0].engine.clone());
    if let Some(r) = all.iter().find(|r| r.mode != mode || r.engine != engine) {
        return Err(format!(
            "sweep '{}' ran in mode {} (engine {:?}) where '{}' ran in {mode} ({engine:?}): one table, one way of measuring",
            r.sweep, r.mode, r.engine, all[0].sweep
        ));
    }
    let (main, references) = all.split_at(spec.sweeps.len());
    let reference = spec.reference.as_ref().map(|r| docs_tables::Reference {
        on: &r.on,
        results: references,
    });
    let csv = docs_tables::extract(&spec.rows, main, reference.as_ref())?;
    let measured = docs_tables::Measured {
        mode,
        engine,
        commit: commit.to_string(),
        date: date.to_string(),
        runs: all.iter().map(|r| r.runs.len()).sum(),
    };
    put(format!("{name}.csv"), csv.to_text())?;
    put_measured(measured)
}

fn print_flow(name: &str, cc: &str, figures: &qlog_analysis::FlowSummary) {
    out!(
        "{:<12} {:<24} {:>14} RTT p50 {:>7.1} ms  queue mean {:>6.1} ms",
        name,
        cc,
        lbe_units::fmt_rate(figures.goodput_bps),
        figures.rtt_ms.p50.unwrap_or(f64::NAN),
        figures.queuing_delay_ms.mean.unwrap_or(f64::NAN)
    );
}

/// One line per workload flow: its figures and, with a baseline, the harm.
fn print_workloads(workloads: &[lbe_lab::workload::WorkloadSummary]) {
    for w in workloads {
        out!(
            "{:<12} {:<24} {}{}",
            w.name,
            w.kind,
            serde_json::to_string(&w.figures).unwrap_or_default(),
            w.harm.as_ref().map_or(String::new(), |h| format!(
                " harm {}",
                serde_json::to_string(h).unwrap_or_default()
            ))
        );
    }
}

fn print_totals(utilization: Option<f64>, jain_index: Option<f64>) {
    out!(
        "utilization {}  jain {}",
        utilization.map_or("-".into(), |u| format!("{u:.3}")),
        jain_index.map_or("-".into(), |j| format!("{j:.3}"))
    );
}

fn main() -> ExitCode {
    let cli: Cli = lbe_app_kit::cli::parse_or_exit("lbe-lab");
    let result = match cli.command {
        Command::Check { scenario } => scenario.iter().try_for_each(|p| {
            let s = lbe_lab::scenario::load(p)?;
            out!("{}: ok, {} flows", p.display(), s.flows.len());
            Ok(())
        }),
        Command::Sweep {
            sweep,
            out,
            jobs,
            shard,
            real,
            baseline,
            quiet,
        } => lbe_app_kit::cli::stop_on_signals()
            .map_err(|e| e.to_string())
            .and_then(|stop| {
                let sweep = lbe_lab::sweep::load(&sweep)?;
                let jobs = jobs
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
                if jobs == 0 {
                    return Err("--jobs must be at least 1".to_string());
                }
                let start = std::time::Instant::now();
                let log = move |line: &str| {
                    if !quiet {
                        eprintln!("[{:6.1}s] {line}", start.elapsed().as_secs_f64());
                    }
                };
                if !quiet {
                    eprintln!(
                        "sweep '{}': {} runs{}",
                        sweep.name,
                        sweep.len(),
                        shard.map_or(String::new(), |s| format!(
                            ", shard {}/{}",
                            s.index, s.count
                        ))
                    );
                }
                let options = lbe_lab::sweep::Options {
                    jobs,
                    shard,
                    real,
                    baseline,
                };
                let r = lbe_lab::sweep::run(&sweep, &out, &options, &stop, &log)?;
                out!(
                    "{} runs → {}",
                    r.runs.len(),
                    out.join("results.json").display()
                );
                Ok(())
            }),
        Command::DocsTables { check, list, docs } => docs_tables(&docs, check, list),
        Command::DocsData {
            name,
            results,
            jobs,
            docs,
            commit,
            date,
        } => docs_data(&docs, &name, &results, jobs, &commit, &date),
        Command::LabFigures { scenario, runs } => {
            lbe_lab::fidelity::lab_entry(&scenario, &runs).map(|entry| out!("{}", entry.trim_end()))
        }
        Command::Merge { dirs, out } => lbe_lab::sweep::merge(&dirs, &out).map(|r| {
            out!(
                "{} runs of '{}' → {}",
                r.runs.len(),
                r.sweep,
                out.join("results.json").display()
            );
        }),
        Command::Run {
            scenario,
            out,
            sim: true,
            qlog,
            no_report,
            baseline,
            quiet,
        } => {
            let log = move |line: &str| {
                if !quiet {
                    eprintln!("{line}");
                }
            };
            let options = lbe_lab::sim::RunOptions {
                report: !no_report,
                qlog,
                baseline,
            };
            lbe_lab::sim::run_file(&scenario, &out, &options, &log).map(|summary| {
                for f in &summary.flows {
                    print_flow(&f.name, &f.cc, &f.figures);
                }
                print_workloads(&summary.tail.workloads);
                print_totals(summary.utilization, summary.jain_index);
            })
        }
        Command::Run {
            scenario,
            out,
            sim: false,
            qlog: _,
            no_report,
            baseline,
            quiet,
        } => lbe_app_kit::cli::stop_on_signals()
            .map_err(|e| e.to_string())
            .and_then(|stop| {
                let start = std::time::Instant::now();
                let log = move |line: &str| {
                    if !quiet {
                        eprintln!("[{:6.1}s] {line}", start.elapsed().as_secs_f64());
                    }
                };
                let summary =
                    lbe_lab::run_file(&scenario, &out, !no_report, baseline, &stop, &log)?;
                for f in &summary.flows {
                    print_flow(&f.name, &f.cc, &f.figures);
                }
                print_workloads(&summary.tail.workloads);
                print_totals(summary.utilization, summary.jain_index);
                Ok(())
            }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lbe-lab: error: {e}");
            ExitCode::FAILURE
        }
    }
}
