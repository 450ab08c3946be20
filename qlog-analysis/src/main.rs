//! `qlog-analysis`: figures, plots and reports from qlog files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use qlog_analysis::analysis::{analyze, Options, TimeBase};
use qlog_analysis::error::Error;
use qlog_analysis::plot::{self, PlotOptions};
use qlog_analysis::units::{parse_duration, parse_rate};
use qlog_analysis::{report, text};

#[derive(Parser)]
#[command(
    name = "qlog-analysis",
    version,
    about = "Figures, plots and reports from quiche qlog files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum, Default)]
enum Align {
    /// Line traces up by the wall-clock time in their headers.
    #[default]
    Wallclock,
    /// Every trace starts at its own time 0.
    None,
}

#[derive(clap::Args)]
struct WindowArgs {
    /// Window start, e.g. 10s (default: first flow start).
    #[arg(long)]
    from: Option<String>,
    /// Window end, e.g. 40s (default: last delivery).
    #[arg(long)]
    to: Option<String>,
    /// Bottleneck rate for utilisation, e.g. 20mbit.
    #[arg(long)]
    rate: Option<String>,
    /// How traces from different files are put on one clock.
    #[arg(long, value_enum, default_value_t = Align::Wallclock)]
    align: Align,
}

#[derive(Subcommand)]
enum Command {
    /// Per-flow and across-flow figures.
    Summary {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        window: WindowArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// SVG figures (goodput, cwnd, bytes in flight, RTT, queuing delay, states).
    Plot {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        window: WindowArgs,
        /// Goodput averaging bin, e.g. 500ms (default: automatic).
        #[arg(long)]
        bin: Option<String>,
        /// Queuing-delay target to draw, e.g. 60ms (default: from the controller).
        #[arg(long)]
        target: Option<String>,
    },
    /// One self-contained HTML page for a run directory.
    Report {
        dir: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        window: WindowArgs,
    },
}

fn options(w: &WindowArgs) -> Result<Options, Error> {
    let mut o = Options {
        from_s: w.from.as_deref().map(parse_duration).transpose()?,
        to_s: w.to.as_deref().map(parse_duration).transpose()?,
        link_rate_bps: w.rate.as_deref().map(parse_rate).transpose()?,
        ..Options::default()
    };
    o.time_base = match w.align {
        Align::Wallclock => TimeBase::EarliestTrace,
        Align::None => TimeBase::TraceStart,
    };
    Ok(o)
}

fn warn_all(ws: &[qlog_analysis::error::Warning]) {
    for w in ws {
        eprintln!("qlog-analysis: {w}");
    }
}

fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Summary {
            files,
            window,
            json,
        } => {
            let a = analyze(&files, &options(&window)?)?;
            warn_all(&a.warnings);
            if json {
                let s =
                    serde_json::to_string_pretty(&a).map_err(|e| Error::Invalid(e.to_string()))?;
                println!("{s}");
            } else {
                print!("{}", text::summary_table(&a));
            }
        }
        Command::Plot {
            files,
            out,
            window,
            bin,
            target,
        } => {
            let mut a = analyze(&files, &options(&window)?)?;
            warn_all(&a.warnings);
            if let Some(t) = target {
                let t = parse_duration(&t)? * 1e3;
                for f in &mut a.flows {
                    f.target_ms = Some(t);
                }
            }
            let popts = PlotOptions {
                goodput_bin_s: bin.as_deref().map(parse_duration).transpose()?,
                ..Default::default()
            };
            for p in plot::write_figures(&a, None, &out, &popts)? {
                println!("{}", p.display());
            }
        }
        Command::Report { dir, out, window } => {
            let (html, warnings) =
                report::build(&dir, &options(&window)?, &PlotOptions::default(), &[])?;
            warn_all(&warnings);
            std::fs::write(&out, html).map_err(|e| Error::Output {
                path: out.clone(),
                message: e.to_string(),
            })?;
            println!("{}", out.display());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("qlog-analysis: error: {e}");
            ExitCode::FAILURE
        }
    }
}
