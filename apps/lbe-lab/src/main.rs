//! `lbe-lab run SCENARIO.toml --out DIR`, `lbe-lab check SCENARIO.toml`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use clap::Subcommand;

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
        /// Skip the HTML report and plots.
        #[arg(long)]
        no_report: bool,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check a scenario file without running it.
    Check { scenario: Vec<PathBuf> },
}

fn main() -> ExitCode {
    let cli: Cli = lbe_app_kit::cli::parse_or_exit("lbe-lab");
    let result = match cli.command {
        Command::Check { scenario } => scenario.iter().try_for_each(|p| {
            let s = lbe_lab::scenario::load(p)?;
            println!("{}: ok, {} flows", p.display(), s.flows.len());
            Ok(())
        }),
        Command::Run {
            scenario,
            out,
            no_report,
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
                let summary = lbe_lab::run_file(&scenario, &out, !no_report, &stop, &log)?;
                for f in &summary.flows {
                    println!(
                        "{:<12} {:<24} {:>14} RTT p50 {:>7.1} ms  queue mean {:>6.1} ms",
                        f.name,
                        f.cc,
                        lbe_units::fmt_rate(f.figures.goodput_bps),
                        f.figures.rtt_ms.p50.unwrap_or(f64::NAN),
                        f.figures.queuing_delay_ms.mean.unwrap_or(f64::NAN)
                    );
                }
                println!(
                    "utilization {}  jain {}",
                    summary
                        .utilization
                        .map_or("-".into(), |u| format!("{u:.3}")),
                    summary.jain_index.map_or("-".into(), |j| format!("{j:.3}"))
                );
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
