//! Running a scenario: one lbe-netem bottleneck, one quic-bulk server, each
//! flow's client at its start time, then the figures from the qlogs.
//!
//! Everything runs in this process, each part on its own thread: stopping
//! the run (at its end, on an error, on Ctrl-C) stops every part, and
//! nothing outlives it.

use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;

use lbe_app_kit::tls::Certificate;
use quic_bulk::client::ClientArgs;
use quic_bulk::client::Summary as ClientSummary;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use quic_bulk::server::ServerArgs;
use serde::Serialize;

use crate::scenario::distinct_rtts;
use crate::scenario::Flow;
use crate::scenario::FlowEnd;
use crate::scenario::Scenario;

/// How long a byte-counted flow, or a flow's last bytes after its stop
/// time, may take before the run gives up on it.
const GRACE: Duration = Duration::from_secs(120);

/// `summary.json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub link: LinkSummary,
    pub window: WindowSummary,
    pub flows: Vec<FlowSummary>,
    /// Sum of the flows' goodputs over the link rate.
    pub utilization: Option<f64>,
    /// The largest application-layer goodput the link can carry (link rate
    /// × stream bytes per wire byte of this run's data datagrams).
    pub max_goodput_bps: Option<f64>,
    /// Sum of the flows' goodputs over `max_goodput_bps`.
    pub utilization_of_max: Option<f64>,
    pub jain_index: Option<f64>,
    /// Wall-clock start of the scenario (Unix ms): scenario time 0.
    pub started_at_unix_ms: u128,
    /// What the emulator counted over the whole run.
    pub netem: lbe_netem::Summary,
}

#[derive(Debug, Serialize)]
pub struct LinkSummary {
    pub rate_bps: u64,
    /// The base RTT the emulator sets up (the scenario's `rtt`), not a
    /// measured one (each flow's `figures.rtt_ms`).
    pub emulated_rtt_ms: f64,
    pub buffer_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct WindowSummary {
    pub from_s: f64,
    pub to_s: f64,
}

impl LinkSummary {
    /// The scenario's link as `summary.json` states it.
    pub fn of(link: &crate::scenario::Link) -> Self {
        LinkSummary {
            rate_bps: link.rate_bps,
            emulated_rtt_ms: ms(link.rtt),
            buffer_ms: link.buffer_ms(),
        }
    }
}

impl From<qlog_analysis::Window> for WindowSummary {
    fn from(w: qlog_analysis::Window) -> Self {
        WindowSummary {
            from_s: w.from_s,
            to_s: w.to_s,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct FlowSummary {
    pub id: usize,
    pub name: String,
    pub cc: String,
    pub start_s: f64,
    pub stop_s: Option<f64>,
    #[serde(flatten)]
    pub figures: qlog_analysis::FlowSummary,
    /// The sender's qlog, relative to the output directory.
    pub qlog: String,
    /// What quic-bulk itself reported for the whole transfer.
    pub transfer: ClientSummary,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `scenario`, writing into `out`. `stop` (Ctrl-C) aborts the run.
/// `log` receives one line per step.
pub fn run(
    scenario: &Scenario,
    out: &Path,
    stop: &Arc<AtomicBool>,
    log: &dyn Fn(&str),
) -> Result<Summary, String> {
    if let Some(f) = scenario.flows.iter().find(|f| f.receiver_lbe) {
        return Err(format!(
            "flow {}: receiver_lbe is simulated only (quic-bulk's client has no receiver-side control): run with --sim, or use h3-fetch --lbe receiver in real time",
            f.name
        ));
    }
    let qlog_dir = out.join("qlog");
    std::fs::create_dir_all(&qlog_dir)
        .map_err(|e| format!("cannot create {}: {e}", qlog_dir.display()))?;

    // The server, behind the bottleneck.
    let server = quic_bulk::server::bind(&ServerArgs {
        listen: SocketAddr::from(([127, 0, 0, 1], scenario.ports.server)),
        qlog_dir: Some(qlog_dir.clone()),
        certificate: Certificate::SelfSigned,
        retry: true,
        verbose: false,
        pacing: true,
    })
    .map_err(|e| format!("quic-bulk server: {e}"))?;
    let server = server.spawn();
    let server_addr = server.local_addr();

    // The bottleneck: one listening address per base RTT.
    let rtts = distinct_rtts(&scenario.link, &scenario.flows);
    let port = |i: usize| {
        if scenario.ports.netem == 0 {
            0
        } else {
            scenario.ports.netem + i as u16
        }
    };
    let mut config = lbe_netem::Config::new(
        SocketAddr::from(([127, 0, 0, 1], port(0))),
        server_addr,
        scenario.link.rate_bps,
        scenario.link.rtt,
        scenario.link.buffer,
    );
    config.down.loss = scenario.link.loss;
    if let Some(seed) = scenario.seed {
        config.down.seed = seed;
    }
    config.down.cross_traffic_bps = scenario.link.cross_traffic_bps;
    config.stats = Some(out.join("netem-stats.jsonl"));
    config.paths = rtts[1..]
        .iter()
        .enumerate()
        .map(|(i, rtt)| lbe_netem::PathSpec {
            listen: SocketAddr::from(([127, 0, 0, 1], port(i + 1))),
            rtt: *rtt,
        })
        .collect();
    // On an error, dropping `server` stops it.
    let netem = lbe_netem::Netem::spawn(config).map_err(|e| format!("lbe-netem: {e}"))?;
    let listen = netem.listen_addrs().to_vec();
    log(&format!(
        "link {} rtt {:?} buffer {:.0} ms through lbe-netem {:?} to server {server_addr}",
        lbe_units::fmt_rate(scenario.link.rate_bps as f64),
        scenario.link.rtt,
        scenario.link.buffer_ms(),
        listen
    ));

    // The flows, each on its own thread, each at its start time.
    let t0 = Instant::now();
    let started_at = SystemTime::now();
    let flow_threads: Vec<_> = scenario
        .flows
        .iter()
        .map(|flow| {
            let connect = listen[rtts
                .iter()
                .position(|r| *r == flow.rtt)
                .expect("every rtt has a path")];
            let flow = flow.clone();
            let qlog_dir = qlog_dir.clone();
            let stop = stop.clone();
            thread::spawn(move || run_flow(&flow, connect, &qlog_dir, t0, &stop))
        })
        .collect();

    let mut results = Vec::new();
    for (flow, handle) in scenario.flows.iter().zip(flow_threads) {
        let result = handle
            .join()
            .unwrap_or_else(|_| Err("the flow's thread panicked".to_string()));
        match &result {
            Ok(s) => log(&format!(
                "{} ({}) done: {} at {}",
                flow.name,
                flow.cc,
                lbe_units::fmt_bytes(s.bytes),
                lbe_units::fmt_rate(s.goodput_bps)
            )),
            Err(e) => log(&format!("{} ({}) failed: {e}", flow.name, flow.cc)),
        }
        results.push(result);
    }

    let netem_summary = netem.stop().map_err(|e| format!("lbe-netem: {e}"));
    let server_result = server.stop();
    if stop.load(Ordering::Relaxed) {
        return Err("interrupted".to_string());
    }
    server_result.map_err(|e| format!("quic-bulk server: {e}"))?;
    let netem_summary = netem_summary?;

    let mut transfers = Vec::new();
    for (flow, result) in scenario.flows.iter().zip(results) {
        transfers.push(result.map_err(|e| format!("{} ({}): {e}", flow.name, flow.cc))?);
    }

    summarize(scenario, out, started_at, transfers, netem_summary)
}

fn run_flow(
    flow: &Flow,
    connect: SocketAddr,
    qlog_dir: &Path,
    t0: Instant,
    stop: &AtomicBool,
) -> Result<ClientSummary, String> {
    while t0.elapsed() < flow.start {
        if stop.load(Ordering::Relaxed) {
            return Err("interrupted".to_string());
        }
        thread::sleep((flow.start - t0.elapsed()).min(Duration::from_millis(50)));
    }
    let amount = match flow.end {
        FlowEnd::Stop(at) => {
            Amount::DurationMs(at.saturating_sub(t0.elapsed()).as_millis().max(1) as u64)
        }
        FlowEnd::Bytes(b) => Amount::Bytes(b),
    };
    // Past its stop time (or a byte count's grace), a flow is cut off.
    let deadline = flow.stop().unwrap_or(flow.start) + GRACE;
    let abort = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let abort = abort.clone();
        move || {
            while !abort.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) || t0.elapsed() > deadline {
                    abort.store(true, Ordering::Relaxed);
                }
                thread::sleep(Duration::from_millis(50));
            }
        }
    };
    thread::scope(|scope| {
        scope.spawn(watchdog);
        let result = quic_bulk::client::run(
            ClientArgs {
                connect,
                bind: None,
                cc: flow.cc.clone(),
                amount,
                direction: Direction::Download,
                qlog_dir: Some(qlog_dir.to_path_buf()),
                label: flow.name.clone(),
                handshake_timeout: Duration::from_secs(10),
                progress: false,
                pacing: flow.pacing,
                deadline: flow.deadline,
            },
            &abort,
        );
        let timed_out = abort.swap(true, Ordering::Relaxed) && !stop.load(Ordering::Relaxed);
        result.map_err(|e| {
            if timed_out {
                format!("did not finish by {:?} (scenario time)", deadline)
            } else {
                e.to_string()
            }
        })
    })
}

fn summarize(
    scenario: &Scenario,
    out: &Path,
    started_at: SystemTime,
    transfers: Vec<ClientSummary>,
    netem: lbe_netem::Summary,
) -> Result<Summary, String> {
    let qlogs: Vec<PathBuf> = transfers
        .iter()
        .zip(&scenario.flows)
        .map(|(t, f)| {
            t.qlog
                .as_ref()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{}: the server wrote no qlog", f.name))
        })
        .collect::<Result<_, _>>()?;
    let options = qlog_analysis::Options {
        from_s: scenario.window.map(|(from, _)| from.as_secs_f64()),
        to_s: scenario.window.map(|(_, to)| to.as_secs_f64()),
        link_rate_bps: Some(scenario.link.rate_bps as f64),
        // What the emulator charges each datagram on the link.
        datagram_overhead_bytes: u64::from(lbe_netem::IPV4_UDP_OVERHEAD),
        time_base: qlog_analysis::TimeBase::WallClock(started_at),
        ..qlog_analysis::Options::default()
    };
    let inputs = scenario.flows.iter().zip(&qlogs).map(|(f, q)| {
        qlog_analysis::FlowInput::new(q)
            .cc(f.cc.as_str())
            .flow(f.name.clone())
    });
    let parts = qlog_analysis::summary_parts(inputs, &options).map_err(|e| e.to_string())?;

    let flows = scenario
        .flows
        .iter()
        .zip(parts.flows)
        .zip(transfers)
        .zip(&qlogs)
        .map(|(((flow, figures), transfer), qlog)| FlowSummary {
            id: flow.id,
            name: flow.name.clone(),
            cc: flow.cc.to_string(),
            start_s: flow.start.as_secs_f64(),
            stop_s: flow.stop().map(|d| d.as_secs_f64()),
            figures,
            qlog: qlog.strip_prefix(out).unwrap_or(qlog).display().to_string(),
            transfer,
        })
        .collect();

    Ok(Summary {
        link: LinkSummary::of(&scenario.link),
        window: parts.window.into(),
        flows,
        utilization: parts.utilization,
        max_goodput_bps: parts.max_goodput_bps,
        utilization_of_max: parts.utilization_of_max,
        jain_index: parts.jain_index,
        started_at_unix_ms: started_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis()),
        netem,
    })
}
