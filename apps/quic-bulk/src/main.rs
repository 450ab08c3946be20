//! `quic-bulk server` / `quic-bulk client`: see `quic-bulk --help`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use clap::Parser;
use clap::Subcommand;
use lbe_app_kit::cli::ClientTlsFlags;
use lbe_app_kit::cli::OnOff;
use lbe_app_kit::cli::ServerFlags;
use quic_bulk::client::ClientArgs;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use quic_bulk::server::ServerArgs;
use quiche_lbe::CcSpec;

#[derive(Parser)]
#[command(
    name = "quic-bulk",
    version,
    about = "Bulk transfers over QUIC with any congestion controller"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve downloads and uploads until interrupted.
    Server(ServerCli),
    /// Run one transfer and print a summary. The server's certificate is
    /// verified against the system's roots unless --ca or --insecure says
    /// otherwise (quic-bulk server --write-cert writes its certificate for
    /// --ca).
    Client(Box<ClientCli>),
}

#[derive(Args)]
struct ServerCli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:4433")]
    listen: SocketAddr,
    #[command(flatten)]
    server: ServerFlags,
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("amount").required(true).args(["bytes", "duration"]))]
struct ClientCli {
    /// Server address.
    #[arg(long)]
    connect: SocketAddr,
    #[arg(
        long,
        value_parser = lbe_app_kit::cli::parse_cc,
        help = lbe_app_kit::cli::cc_help("The sender's congestion controller")
    )]
    cc: CcSpec,
    /// Payload size, e.g. 50MB, 1GiB.
    #[arg(long, value_parser = lbe_units::parse_size)]
    bytes: Option<u64>,
    /// Send for this long instead, e.g. 30s, 2m.
    #[arg(long, value_parser = lbe_units::parse_duration)]
    duration: Option<Duration>,
    /// The client sends (default: the server sends).
    #[arg(long)]
    upload: bool,
    /// Write the client's .sqlog here (the server writes the server's).
    #[arg(long)]
    qlog_dir: Option<PathBuf>,
    /// Print one JSON object instead of a progress bar and a summary.
    #[arg(long)]
    json: bool,
    /// Names this flow in both ends' qlog files.
    #[arg(long, default_value = "bulk")]
    label: String,
    /// Local address to send from.
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// Give up if the handshake does not complete in this time.
    #[arg(long, default_value = "5s", value_parser = lbe_units::parse_duration)]
    timeout: Duration,
    /// Pace the sender (off: send each datagram as soon as quiche builds
    /// it). For a download the server is asked to do the same.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pacing: OnOff,
    /// Finish the download within this time, e.g. 120s: the server's
    /// sender (--cc cdg or ledbatpp) becomes deadline-aware. Needs --bytes.
    #[arg(long, value_parser = lbe_units::parse_duration)]
    deadline: Option<Duration>,
    /// The name the server's certificate must carry [default: the IP
    /// address of --connect].
    #[arg(long, value_name = "NAME")]
    server_name: Option<String>,
    #[command(flatten)]
    tls: ClientTlsFlags,
}

fn main() -> ExitCode {
    let cli: Cli = lbe_app_kit::cli::parse_or_exit("quic-bulk");
    let result = quic_bulk::stop_on_signals().and_then(|stop| match cli.command {
        Command::Server(s) => {
            let flags = &s.server;
            let server = quic_bulk::server::bind(&ServerArgs {
                listen: s.listen,
                qlog_dir: flags.qlog_dir.clone(),
                certificate: flags.certificate()?,
                retry: !flags.no_retry,
                verbose: !flags.quiet,
                pacing: flags.pacing.is_on(),
            })?;
            if !flags.quiet {
                eprintln!("quic-bulk server: listening on {}", server.local_addr());
            }
            server.run(&stop)
        }
        Command::Client(c) => {
            let amount = match (c.bytes, c.duration) {
                (Some(b), _) => Amount::Bytes(b),
                (None, Some(d)) if d.is_zero() => {
                    return Err(quiche_lbe::Error::new("--duration must be above zero"))
                }
                (None, Some(d)) => Amount::DurationMs(quic_bulk::protocol::millis(d)),
                (None, None) => unreachable!("clap requires --bytes or --duration"),
            };
            if let Some(d) = c.deadline {
                if c.bytes.is_none() || c.upload {
                    return Err(quiche_lbe::Error::new(
                        "--deadline needs a download of --bytes (not --duration or --upload)",
                    ));
                }
                c.cc.with_deadline(d)
                    .map_err(|e| quiche_lbe::Error::new(format!("--deadline: {e}")))?;
            }
            let json = c.json;
            let trust = c.tls.trust("quic-bulk")?;
            let summary = quic_bulk::client::run(
                ClientArgs {
                    connect: c.connect,
                    bind: c.bind,
                    cc: c.cc,
                    amount,
                    direction: if c.upload {
                        Direction::Upload
                    } else {
                        Direction::Download
                    },
                    qlog_dir: c.qlog_dir,
                    label: c.label,
                    handshake_timeout: c.timeout,
                    progress: !json,
                    pacing: c.pacing.is_on(),
                    deadline: c.deadline,
                    trust,
                    server_name: c.server_name,
                },
                &stop,
            )?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string(&summary).expect("summary serializes")
                );
            } else {
                println!("{}", summary.human());
            }
            Ok(())
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quic-bulk: error: {e}");
            ExitCode::FAILURE
        }
    }
}
