//! The `lbe-netem` command: see the crate's README for the options.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use lbe_netem::units::{
    parse_addr, parse_buffer, parse_duration, parse_loss, parse_path, parse_rate, parse_route,
};
use lbe_netem::{Buffer, Config, LinkConfig, Netem, PathSpec, RouteSpec, IPV4_UDP_OVERHEAD};

/// Userspace UDP bottleneck: relays clients on --listen to the server on
/// --upstream, adds rtt/2 each way, and sends the server->client direction
/// through one drop-tail FIFO served at --rate.
#[derive(Parser, Debug)]
#[command(name = "lbe-netem", version)]
struct Cli {
    /// Address the clients send to (IP:PORT).
    #[arg(long, value_parser = parse_addr)]
    listen: SocketAddr,
    /// The server's address (IP:PORT).
    #[arg(long, value_parser = parse_addr)]
    upstream: SocketAddr,
    /// Bottleneck rate (server->client), in bits per second: 20mbit, 2.5Mbit,
    /// 500kbit, 1gbit, 20Mbps (bps means bits here, unlike tc).
    #[arg(long, value_parser = parse_rate)]
    rate: u64,
    /// Base round-trip time: rtt/2 is added in each direction (50ms, 1s).
    #[arg(long, value_parser = parse_duration)]
    rtt: Duration,
    /// Bottleneck buffer: time at line rate (500ms) or bytes (375kB, 1MiB).
    #[arg(long, value_parser = parse_buffer)]
    buffer: Buffer,
    /// Random loss probability on the bottleneck (0.01 or 1%).
    #[arg(long, value_parser = parse_loss, default_value = "0")]
    loss: f64,
    /// Seed of the random loss and of the cross traffic.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Unresponsive cross traffic through the bottleneck at this mean rate
    /// (e.g. 1mbit): 1450-byte datagrams with exponential gaps (Poisson
    /// arrivals), discarded after the bottleneck. It breaks the loss
    /// synchronisation that drop-tail imposes on a few long flows.
    #[arg(long, value_parser = parse_rate)]
    cross_traffic: Option<u64>,
    /// Write per-second JSON lines (queue, drops, delivered bytes) here.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Extra listening address whose flows get their own base RTT, sharing
    /// the same bottleneck: ADDR=RTT, e.g. 127.0.0.1:5001=100ms. Repeatable.
    #[arg(long = "path", value_name = "ADDR=RTT", value_parser = parse_path)]
    paths: Vec<PathSpec>,
    /// Extra listening address relayed to a server of its own, through the
    /// same bottleneck (one FIFO, one rate): LISTEN=UPSTREAM, e.g.
    /// 127.0.0.1:5002=127.0.0.1:4434. Its flows get --rtt, or the RTT of a
    /// --path for the same LISTEN address. Repeatable.
    #[arg(long = "route", value_name = "LISTEN=UPSTREAM", value_parser = parse_route)]
    routes: Vec<RouteSpec>,
    /// Rate-limit the client->server direction too (not limited by default).
    #[arg(long, value_parser = parse_rate)]
    reverse_rate: Option<u64>,
    /// Buffer of the client->server direction when --reverse-rate is given
    /// (default: same as --buffer).
    #[arg(long, value_parser = parse_buffer, requires = "reverse_rate")]
    reverse_buffer: Option<Buffer>,
    /// Random loss probability on the client->server direction.
    #[arg(long, value_parser = parse_loss, default_value = "0")]
    reverse_loss: f64,
    /// Bytes counted per datagram on top of its UDP payload for rate and
    /// buffer (28 = IPv4 + UDP headers; 48 for IPv6; 0 for payload only).
    #[arg(long, default_value_t = IPV4_UDP_OVERHEAD, value_parser = clap::value_parser!(u32).range(0..=1500))]
    overhead: u32,
    /// Busy-wait this long before each delivery instead of sleeping
    /// (e.g. 50us); 0 sleeps on the timerfd only.
    #[arg(long, value_parser = parse_duration, default_value = "0ms")]
    spin: Duration,
    /// Run the relay thread at normal priority. By default it asks for
    /// SCHED_FIFO (needs root or CAP_SYS_NICE), so that busy endpoints on
    /// the same cores do not delay its wake-ups; without the permission it
    /// runs at normal priority anyway.
    #[arg(long)]
    no_realtime: bool,
    /// Take arrival times from when the relay reads datagrams instead of
    /// from the kernel's receive timestamps.
    #[arg(long)]
    no_rx_timestamps: bool,
    /// Forget flows idle this long (default: never).
    #[arg(long, value_parser = parse_duration)]
    idle_timeout: Option<Duration>,
    /// More logging (-v: per-flow, -vv: debug).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
}

struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::max_level()
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            eprintln!(
                "lbe-netem: {}: {}",
                r.level().as_str().to_lowercase(),
                r.args()
            );
        }
    }
    fn flush(&self) {}
}

/// Parses the command line; any error is printed on one line.
fn parse_cli() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|e| {
        use clap::error::ErrorKind;
        if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        let text = e.render().to_string();
        let msg: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
            .collect();
        eprintln!("lbe-netem: {} (see --help)", msg.join(" "));
        ExitCode::from(2)
    })
}

/// Blocks SIGINT and SIGTERM in this thread and (by inheritance) in every
/// thread started after, so that they are taken with `sigtimedwait`.
fn block_signals() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local, zero-initialised set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Waits up to `timeout` for one of `set`; the signal number if one came.
fn wait_signal(set: &libc::sigset_t, timeout: Duration) -> Option<i32> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: valid set and timespec; no siginfo wanted.
    let r = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) };
    (r > 0).then_some(r)
}

fn main() -> ExitCode {
    let cli = match parse_cli() {
        Ok(c) => c,
        Err(code) => return code,
    };
    log::set_max_level(match (cli.quiet, cli.verbose) {
        (true, _) => log::LevelFilter::Error,
        (false, 0) => log::LevelFilter::Warn,
        (false, 1) => log::LevelFilter::Info,
        _ => log::LevelFilter::Debug,
    });
    let _ = log::set_logger(&StderrLogger);

    let mut config = Config::new(cli.listen, cli.upstream, cli.rate, cli.rtt, cli.buffer);
    if let Err(e) = config.add_paths_and_routes(&cli.paths, &cli.routes) {
        eprintln!("lbe-netem: {e}");
        return ExitCode::from(2);
    }
    config.down.loss = cli.loss;
    config.down.seed = cli.seed;
    config.down.overhead = cli.overhead;
    config.down.cross_traffic_bps = cli.cross_traffic;
    config.up = LinkConfig {
        rate_bps: cli.reverse_rate,
        buffer: cli
            .reverse_rate
            .map(|_| cli.reverse_buffer.unwrap_or(cli.buffer)),
        loss: cli.reverse_loss,
        seed: cli.seed ^ 0x9e37_79b9_7f4a_7c15,
        overhead: cli.overhead,
        cross_traffic_bps: None,
    };
    config.stats = cli.stats;
    config.spin = cli.spin;
    config.realtime = !cli.no_realtime;
    config.rx_timestamps = !cli.no_rx_timestamps;
    config.idle_timeout = cli.idle_timeout;

    let signals = block_signals();
    let capacity = cli.buffer.bytes_at(cli.rate);
    let netem = match Netem::spawn(config.clone()) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("lbe-netem: error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addrs: Vec<String> = netem.listen_addrs().iter().map(|a| a.to_string()).collect();
    if !cli.quiet {
        let paths: Vec<String> = std::iter::once((cli.rtt, cli.upstream))
            .chain(config.paths.iter().map(|p| (p.rtt, cli.upstream)))
            .chain(config.routes.iter().map(|r| (r.rtt, r.upstream)))
            .zip(&addrs)
            .map(|((rtt, upstream), a)| format!("{a} (rtt {rtt:?}) -> {upstream}"))
            .collect();
        eprintln!(
            "lbe-netem: {}: rate {} bit/s, buffer {} = {} B, loss {}, cross traffic {} bit/s, seed {}, overhead {} B/datagram",
            paths.join(", "),
            cli.rate,
            cli.buffer,
            capacity,
            cli.loss,
            cli.cross_traffic.unwrap_or(0),
            cli.seed,
            cli.overhead,
        );
    }
    // One machine-readable line for whoever started us (e.g. with port 0).
    let upstreams: Vec<String> = std::iter::repeat_n(cli.upstream, 1 + config.paths.len())
        .chain(config.routes.iter().map(|r| r.upstream))
        .map(|a| a.to_string())
        .collect();
    let ready = serde_json::json!({
        "event": "ready",
        "listen": addrs,
        "upstream": cli.upstream,
        "upstreams": upstreams,
    });
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{ready}");
    let _ = out.flush();
    drop(out);

    while !netem.is_finished() {
        if let Some(sig) = wait_signal(&signals, Duration::from_millis(200)) {
            log::info!("signal {sig}: stopping");
            break;
        }
    }
    match netem.stop() {
        Ok(summary) => {
            if !cli.quiet {
                eprintln!(
                    "lbe-netem: done after {:.1}s: {} flows; down: {} delivered, {} buffer drops, {} random drops; up: {} delivered",
                    summary.duration_s,
                    summary.flows,
                    summary.down.delivered_packets,
                    summary.down.drops_buffer,
                    summary.down.drops_loss,
                    summary.up.delivered_packets,
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lbe-netem: error: {e}");
            ExitCode::FAILURE
        }
    }
}
