//! The `lbe-netem` command: see the crate's README for the options.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use lbe_link::{
    build_aqm, parse_gilbert_elliott, Aqm, DeliveryTrace, GilbertElliott, JitterModel, LinkChange,
    LinkVariation,
};
use lbe_netem::units::{
    parse_addr, parse_buffer, parse_change, parse_duration, parse_loss, parse_path, parse_rate,
    parse_route, ChangeSpec,
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
    #[arg(long, value_parser = parse_rate, required_unless_present = "trace")]
    rate: Option<u64>,
    /// Base round-trip time: rtt/2 is added in each direction (50ms, 1s).
    #[arg(long, value_parser = parse_duration)]
    rtt: Duration,
    /// Bottleneck buffer: time at line rate (500ms) or bytes (375kB, 1MiB).
    #[arg(long, value_parser = parse_buffer)]
    buffer: Buffer,
    /// Random loss probability on the bottleneck (0.01 or 1%).
    #[arg(long, value_parser = parse_loss, default_value = "0")]
    loss: f64,
    /// Bursty loss on the bottleneck instead of --loss: the Gilbert-Elliott
    /// channel, ge:p=P,r=R[,h=H][,k=K] (p = P(Good->Bad), r = P(Bad->Good),
    /// 1-k = loss in Good (k defaults to 1), 1-h = loss in Bad (h defaults
    /// to 0)), e.g. ge:p=0.01,r=0.3.
    #[arg(long, value_parser = parse_gilbert_elliott, value_name = "ge:p=P,r=R[,h=H][,k=K]")]
    loss_model: Option<GilbertElliott>,
    /// Queue discipline of the bottleneck: fifo (drop-tail, the default),
    /// codel (RFC 8289), fq_codel (RFC 8290; --buffer is its memory limit)
    /// or pie (RFC 8033). quiche sends no ECN: the AQMs drop.
    #[arg(long, default_value = "fifo", value_name = "fifo|codel|fq_codel|pie")]
    aqm: String,
    /// CoDel's (and FQ-CoDel's) target (default 5ms).
    #[arg(long)]
    codel_target: Option<String>,
    /// CoDel's (and FQ-CoDel's) interval (default 100ms).
    #[arg(long)]
    codel_interval: Option<String>,
    /// FQ-CoDel's number of queues (default 1024).
    #[arg(long)]
    fq_flows: Option<String>,
    /// FQ-CoDel's quantum in bytes (default 1514).
    #[arg(long)]
    fq_quantum: Option<String>,
    /// PIE's latency target QDELAY_REF (default 15ms).
    #[arg(long)]
    pie_target: Option<String>,
    /// PIE's update period T_UPDATE (default 15ms).
    #[arg(long)]
    pie_tupdate: Option<String>,
    /// PIE's alpha, 1/s (default 0.125).
    #[arg(long)]
    pie_alpha: Option<String>,
    /// PIE's beta, 1/s (default 1.25).
    #[arg(long)]
    pie_beta: Option<String>,
    /// PIE's burst allowance MAX_BURST (default 150ms).
    #[arg(long)]
    pie_max_burst: Option<String>,
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
    /// Bursty loss on the client->server direction instead of
    /// --reverse-loss (same form as --loss-model).
    #[arg(long, value_parser = parse_gilbert_elliott, value_name = "ge:p=P,r=R[,h=H][,k=K]")]
    reverse_loss_model: Option<GilbertElliott>,
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
    /// Rebind every flow this long after the start (e.g. 5s), as a NAT
    /// that loses its mappings: from then on the server sees each client
    /// from a new source port (a new upstream socket per client; the old
    /// one is closed). What the server sent to the old port is lost, also
    /// what the bottleneck still holds.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    rebind_at: Option<Duration>,
    /// Jitter on the bottleneck: an extra delay per datagram drawn from
    /// --jitter-model with this scale (e.g. 5ms), never negative; a flow's
    /// order is kept unless --reorder.
    #[arg(long, value_parser = parse_duration, default_value = "0ms")]
    jitter: Duration,
    /// The jitter's distribution: uniform on [0, jitter), normal
    /// (half-normal, sigma = jitter/2) or pareto (shape 3, scale jitter).
    #[arg(long, default_value = "uniform", value_parser = JitterModel::parse, value_name = "uniform|normal|pareto")]
    jitter_model: JitterModel,
    /// Let jitter reorder a flow's datagrams (netem's behaviour).
    #[arg(long)]
    reorder: bool,
    /// Wi-Fi-like aggregation on the bottleneck: deliveries are held and
    /// released together every this long (e.g. 4ms).
    #[arg(long, value_parser = parse_duration)]
    aggregate: Option<Duration>,
    /// A trace-driven rate for the bottleneck in Mahimahi's format (one
    /// line per 1500-byte delivery opportunity, milliseconds, looped);
    /// replaces --rate.
    #[arg(long, value_name = "FILE", conflicts_with = "rate")]
    trace: Option<std::path::PathBuf>,
    /// A trace-driven rate for the client->server direction; replaces
    /// --reverse-rate.
    #[arg(long, value_name = "FILE", conflicts_with = "reverse_rate")]
    reverse_trace: Option<std::path::PathBuf>,
    /// A change of the link at a time after the start, as a scenario's
    /// [[link.change]]: AT:KEY=VALUE[,KEY=VALUE], KEY one of rate, rtt,
    /// jitter, loss, outage, rebind (e.g. 60s:rtt=80ms, 10s:outage=2s,
    /// 5s:rebind=true, the same as --rebind-at 5s). Repeat for several, in
    /// order of time.
    #[arg(long = "change", value_parser = parse_change, value_name = "AT:KEY=VALUE[,..]")]
    changes: Vec<ChangeSpec>,
    /// More logging (-v: per-flow, -vv: debug).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
}

/// The bottleneck's and the client->server direction's changes from
/// --jitter, --jitter-model, --reorder, --aggregate, --trace,
/// --reverse-trace and --change (their rules: `lbe_link::variation`).
fn link_variation(cli: &Cli) -> Result<(LinkVariation, LinkVariation), String> {
    let read = |p: &Option<std::path::PathBuf>| -> Result<_, String> {
        p.as_deref()
            .map(|p| DeliveryTrace::read(p).map(std::sync::Arc::new))
            .transpose()
    };
    if cli.trace.is_some() && cli.aqm != "fifo" {
        return Err("--trace runs under the FIFO; it excludes --aqm".into());
    }
    if cli.trace.is_some() && cli.changes.iter().any(|c| c.rate_bps.is_some()) {
        return Err("--change rate= on a --trace link: the trace is the rate".into());
    }
    if cli.changes.windows(2).any(|w| w[1].at <= w[0].at) {
        return Err("--change: each change must come after the previous one".into());
    }
    let changes = |bottleneck: bool| -> Vec<LinkChange> {
        cli.changes
            .iter()
            .filter_map(|c| c.on_direction(cli.rtt, bottleneck))
            .collect()
    };
    let down = LinkVariation {
        jitter: cli.jitter,
        jitter_model: cli.jitter_model,
        reorder: cli.reorder,
        aggregate: cli.aggregate.filter(|a| !a.is_zero()),
        trace: read(&cli.trace)?,
        changes: changes(true),
    };
    let up = LinkVariation {
        trace: read(&cli.reverse_trace)?,
        changes: changes(false),
        ..LinkVariation::default()
    };
    Ok((down, up))
}

/// The bottleneck's AQM from --aqm and its parameters' flags; a loss model
/// with a random loss is refused too (one of them decides).
fn cli_aqm(cli: &Cli) -> Result<Aqm, String> {
    if cli.loss_model.is_some() && cli.loss > 0.0 {
        return Err("--loss-model replaces --loss: give one of them".into());
    }
    if cli.reverse_loss_model.is_some() && cli.reverse_loss > 0.0 {
        return Err("--reverse-loss-model replaces --reverse-loss: give one of them".into());
    }
    let params: Vec<(&str, &str)> = [
        ("codel_target", &cli.codel_target),
        ("codel_interval", &cli.codel_interval),
        ("fq_flows", &cli.fq_flows),
        ("fq_quantum", &cli.fq_quantum),
        ("pie_target", &cli.pie_target),
        ("pie_tupdate", &cli.pie_tupdate),
        ("pie_alpha", &cli.pie_alpha),
        ("pie_beta", &cli.pie_beta),
        ("pie_max_burst", &cli.pie_max_burst),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
    .collect();
    // The library names the scenario keys; the flags are their dashed forms.
    build_aqm(&cli.aqm, &params).map_err(|e| {
        let mut e = e;
        for (k, _) in lbe_link::AQM_PARAMS {
            e = e.replace(k, &format!("--{}", k.replace('_', "-")));
        }
        e.replace("aqm ", "--aqm ")
    })
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

    let aqm = match cli_aqm(&cli) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("lbe-netem: {e} (see --help)");
            return ExitCode::from(2);
        }
    };
    let variation = match link_variation(&cli) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("lbe-netem: {e}");
            return ExitCode::from(2);
        }
    };
    let rate = match (cli.rate, &variation.0.trace) {
        (Some(r), _) => r,
        (None, Some(t)) => t.mean_rate_bps(),
        (None, None) => unreachable!("clap requires --rate or --trace"),
    };
    let mut config = Config::new(cli.listen, cli.upstream, rate, cli.rtt, cli.buffer);
    if let Err(e) = config.add_paths_and_routes(&cli.paths, &cli.routes) {
        eprintln!("lbe-netem: {e}");
        return ExitCode::from(2);
    }
    config.down.loss = cli.loss;
    config.down.seed = cli.seed;
    config.down.overhead = cli.overhead;
    config.down.cross_traffic_bps = cli.cross_traffic;
    config.down.aqm = aqm;
    config.down.gilbert_elliott = cli.loss_model;
    config.up = LinkConfig {
        rate_bps: cli.reverse_rate,
        buffer: (cli.reverse_rate.is_some() || cli.reverse_trace.is_some())
            .then(|| cli.reverse_buffer.unwrap_or(cli.buffer)),
        loss: cli.reverse_loss,
        seed: cli.seed ^ 0x9e37_79b9_7f4a_7c15,
        overhead: cli.overhead,
        cross_traffic_bps: None,
        aqm: Aqm::Fifo,
        gilbert_elliott: cli.reverse_loss_model,
        variation: variation.1,
    };
    config.down.variation = variation.0;
    config.stats = cli.stats;
    config.spin = cli.spin;
    config.realtime = !cli.no_realtime;
    config.rx_timestamps = !cli.no_rx_timestamps;
    config.idle_timeout = cli.idle_timeout;
    config.rebind_at = cli.rebind_at;
    let rebinds: Vec<Duration> = cli
        .changes
        .iter()
        .filter(|c| c.rebind)
        .map(|c| c.at)
        .collect();
    match (rebinds.as_slice(), cli.rebind_at) {
        ([], _) => {}
        ([at], None) => config.rebind_at = Some(*at),
        _ => {
            eprintln!(
                "lbe-netem: one rebinding per run (--rebind-at or one --change with rebind=true)"
            );
            return ExitCode::from(2);
        }
    }

    let signals = block_signals();
    let capacity = cli.buffer.bytes_at(rate);
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
            "lbe-netem: {}: rate {} bit/s, buffer {} = {} B, aqm {}, loss {}, cross traffic {} bit/s, seed {}, overhead {} B/datagram",
            paths.join(", "),
            rate,
            cli.buffer,
            capacity,
            aqm,
            cli.loss_model.map_or_else(|| cli.loss.to_string(), |g| g.to_string()),
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
                    "lbe-netem: done after {:.1}s: {} flows; down: {} delivered, {} buffer drops, {} AQM drops, {} random drops; up: {} delivered",
                    summary.duration_s,
                    summary.flows,
                    summary.down.delivered_packets,
                    summary.down.drops_buffer,
                    summary.down.drops_aqm,
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
