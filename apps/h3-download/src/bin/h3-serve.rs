//! `h3-serve`: see `h3-serve --help`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use h3_download::server::ServeArgs;
use lbe_app_kit::cli::ServerFlags;
use quiche_lbe::CcSpec;

/// Serves the files under --root over HTTP/3. A request with
/// `priority: u=7` makes its connection a background one, sent with
/// --background-cc; other connections use CUBIC. A background request may
/// add `lbe-deadline: <ms>` (whole milliseconds, 1 to 3600000): its file is
/// then sent deadline-aware with --deadline-cc (cdg or ledbatpp), and the body
/// ends with a trailer `lbe-time-in-levels: <s>,...` (seconds per
/// aggressiveness level). A malformed deadline is ignored with a warning.
#[derive(Parser)]
#[command(name = "h3-serve", version)]
struct Cli {
    /// Address to listen on (UDP).
    #[arg(long, default_value = "127.0.0.1:4433")]
    listen: SocketAddr,
    /// The directory to serve.
    #[arg(long)]
    root: PathBuf,
    #[arg(
        long,
        default_value = h3_download::server::DEFAULT_BACKGROUND_CC,
        value_parser = lbe_app_kit::cli::parse_cc,
        help = lbe_app_kit::cli::background_cc_help()
    )]
    background_cc: CcSpec,
    /// The controller a background request with a deadline (`lbe-deadline`,
    /// h3-fetch --deadline) is sent with, made deadline-aware: cdg or
    /// ledbatpp (both meet deadlines beside CUBIC in the simulator).
    #[arg(
        long,
        value_name = "SPEC",
        default_value = h3_download::server::DEFAULT_DEADLINE_CC,
        value_parser = lbe_app_kit::cli::parse_cc
    )]
    deadline_cc: CcSpec,
    #[command(flatten)]
    server: ServerFlags,
}

fn main() -> ExitCode {
    let cli: Cli = lbe_app_kit::cli::parse_or_exit("h3-serve");
    let result = lbe_app_kit::cli::stop_on_signals().and_then(|stop| {
        let mut args = ServeArgs::new(cli.listen, cli.root);
        args.background_cc = cli.background_cc;
        args.deadline_cc = cli.deadline_cc;
        args.qlog_dir = cli.server.qlog_dir.clone();
        args.certificate = cli.server.certificate()?;
        args.retry = !cli.server.no_retry;
        args.verbose = !cli.server.quiet;
        args.pacing = cli.server.pacing.is_on();
        let server = h3_download::server::bind(&args)?;
        if !cli.server.quiet {
            eprintln!(
                "h3-serve: serving {} on https://{} (background connections: {})",
                server.root().display(),
                server.local_addr(),
                args.background_cc
            );
        }
        server.run(&stop)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("h3-serve: error: {e}");
            ExitCode::FAILURE
        }
    }
}
