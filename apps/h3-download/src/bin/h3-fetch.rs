//! `h3-fetch`: see `h3-fetch --help`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use h3_download::fetch::FetchArgs;
use h3_download::fetch::LbeMode;
use lbe_app_kit::cli::ClientTlsFlags;
use quiche_lbe::lbe_cc::delay::DelayMode;

/// Downloads an https:// URL over HTTP/3 to FILE, through FILE.part, and
/// renames it only once complete and verified. The server's certificate is
/// verified against the system's roots, unless --ca or --insecure says
/// otherwise.
#[derive(Parser)]
#[command(name = "h3-fetch", version)]
struct Cli {
    /// https://HOST[:PORT]/PATH
    #[allow(rustdoc::broken_intra_doc_links)] // the help text, not a link
    url: String,
    /// Where to write the file.
    #[arg(long, short)]
    output: PathBuf,
    /// Ask for background delivery (`priority: u=7`): an h3-serve server
    /// then sends with a less-than-best-effort controller.
    #[arg(long)]
    background: bool,
    /// With --background, who makes the download less-than-best-effort:
    /// receiver (this client caps the server's flow-control credit with
    /// receiver-side LEDBAT++, against any server), sender (the server, if
    /// it honours u=7), or both [default: both; sender with --deadline].
    #[arg(long, value_enum, value_name = "MODE", requires = "background")]
    lbe: Option<LbeMode>,
    /// With --lbe receiver or both, the delay signal the client's LEDBAT++
    /// reads: auto (the one-way delay of the data where the server sends
    /// QUIC timestamps, as h3-serve does, else the round trip of the
    /// client's own packets), owd (one-way only) or rtt (round trip only).
    /// The one-way delay leaves out the queue of the upload direction.
    #[arg(long, value_name = "SIGNAL", default_value = "auto", value_parser = parse_delay_mode)]
    lbe_delay: DelayMode,
    /// With --background: finish within this time (e.g. 10m; 1ms to
    /// 3600s). Sent as `lbe-deadline: <ms>`; h3-serve then steers its
    /// background controller (cdg or ledbatpp) to meet it. --json adds
    /// deadline_s, finished_s, met and time_in_levels_s.
    #[arg(long, requires = "background", value_parser = parse_deadline)]
    deadline: Option<Duration>,
    /// Continue FILE.part from an earlier run, if the server's file has not
    /// changed since.
    #[arg(long)]
    resume: bool,
    /// Write the client's .sqlog here.
    #[arg(long)]
    qlog_dir: Option<PathBuf>,
    /// Print one JSON object instead of a progress bar and a summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    tls: ClientTlsFlags,
    /// Does nothing (the certificate is verified by default now); kept so
    /// that old command lines still run.
    #[arg(long, hide = true, conflicts_with = "insecure")]
    verify: bool,
    /// Give up if the handshake does not complete in this time.
    #[arg(long, default_value = "5s", value_parser = lbe_units::parse_duration)]
    timeout: Duration,
    /// The connection's idle timeout (1s to 600s): with nothing from the
    /// server for this long, the connection is lost.
    #[arg(long, default_value = "30s", value_parser = parse_idle_timeout)]
    idle_timeout: Duration,
    /// After a connection is lost mid-download (--idle-timeout without
    /// anything from the server: an outage, a roam, a NAT that forgot the
    /// flow), connect again and resume from FILE.part, for up to this long
    /// after the last connection that got data was lost (0s: give up at
    /// once). Waits 1 s before
    /// the first new connection, doubling to 16 s while none gets data
    /// [default: 10m with --background, 0s without].
    #[arg(long, value_name = "DURATION", value_parser = lbe_units::parse_duration)]
    retry_for: Option<Duration>,
}

/// An idle timeout: 1 s to 600 s.
fn parse_idle_timeout(text: &str) -> Result<Duration, String> {
    let d = lbe_units::parse_duration(text)?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(600) {
        return Err(format!("'{text}' is out of range: from 1s to 600s"));
    }
    Ok(d)
}

/// A duration with a unit, 1 ms to 3600 s (the controller's range).
fn parse_deadline(text: &str) -> Result<Duration, String> {
    let d = lbe_units::parse_duration(text)?;
    if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
        return Err(format!("'{text}' is out of range: from 1ms to 3600s"));
    }
    Ok(d)
}

/// A `--lbe-delay` value.
fn parse_delay_mode(text: &str) -> Result<DelayMode, String> {
    // clap names the flag and the value; the allowed values are the
    // parser's.
    DelayMode::parse("delay", text).map_err(|e| match e {
        quiche_lbe::lbe_cc::ParamError::BadValue { allowed, .. } => format!("expected {allowed}"),
        e => e.to_string(),
    })
}

/// Who yields. A deadline is the server's to steer (it lifts its
/// controller to keep to the schedule); a receiver-side cap would hold the
/// download to LEDBAT++'s window whatever the deadline, so the two do not
/// combine: with --deadline the mode is `sender`, and asking for the
/// receiver's cap too is a usage error.
fn lbe_mode(lbe: Option<LbeMode>, deadline: Option<Duration>) -> Result<LbeMode, String> {
    match (lbe, deadline) {
        (None, Some(_)) => Ok(LbeMode::Sender),
        (Some(mode), Some(_)) if mode.receiver() => Err(format!(
            "--deadline is met by the server's controller, and --lbe {} would cap it at the \
             receiver: use --lbe sender (the default with --deadline)",
            mode.name()
        )),
        (mode, _) => Ok(mode.unwrap_or_default()),
    }
}

fn main() -> ExitCode {
    let cli: Cli = lbe_app_kit::cli::parse_or_exit("h3-fetch");
    let lbe = match lbe_mode(cli.lbe, cli.deadline) {
        Ok(mode) => mode,
        Err(e) => {
            eprintln!("h3-fetch: error: {e} (see --help)");
            return ExitCode::from(2);
        }
    };
    if cli.verify {
        eprintln!(
            "h3-fetch: warning: --verify is deprecated and does nothing: the server's \
             certificate is verified by default"
        );
    }
    let trust = match cli.tls.trust("h3-fetch") {
        Ok(trust) => trust,
        Err(e) => {
            eprintln!("h3-fetch: error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let args = FetchArgs {
        url: cli.url,
        output: cli.output,
        background: cli.background,
        lbe,
        lbe_delay: cli.lbe_delay,
        deadline: cli.deadline,
        resume: cli.resume,
        qlog_dir: cli.qlog_dir,
        trust,
        timeout: cli.timeout,
        idle_timeout: cli.idle_timeout,
        retry_for: cli.retry_for.unwrap_or(if cli.background {
            h3_download::fetch::BACKGROUND_RETRY_FOR
        } else {
            Duration::ZERO
        }),
        progress: !cli.json,
    };
    let result =
        lbe_app_kit::cli::stop_on_signals().and_then(|stop| h3_download::fetch::run(&args, &stop));
    match result {
        Ok(summary) => {
            if cli.json {
                println!(
                    "{}",
                    serde_json::to_string(&summary).expect("summary serializes")
                );
            } else {
                println!("{}", summary.human());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("h3-fetch: error: {e}");
            ExitCode::FAILURE
        }
    }
}
