//! Running a scenario: one lbe-netem bottleneck, one quic-bulk server, a
//! server per h3 flow (behind an lbe-netem route of its own: see
//! [`crate::h3`]), each flow's client at its start time, then the figures
//! from the qlogs: the sender's (quic-bulk's server) for a quic-bulk flow,
//! the client's (h3-fetch's) for an h3 flow, whatever its server.
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
use lbe_app_kit::tls::SelfSignedCert;
use lbe_app_kit::tls::ServerTrust;
use quic_bulk::client::ClientArgs;
use quic_bulk::client::Summary as ClientSummary;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use quic_bulk::server::ServerArgs;
use serde::Serialize;

use crate::h3::H3Transfer;
use crate::h3::Served;
use crate::scenario::netem_path;
use crate::scenario::netem_paths;
use crate::scenario::Flow;
use crate::scenario::FlowEnd;
use crate::scenario::FlowKind;
use crate::scenario::Scenario;
use crate::scenario::Upstream;
use crate::summary::Mode;
use crate::summary::RunSummary;
use crate::workload::UdpServer;
use crate::workload::WorkloadSummary;

/// `summary.json` of a real run (`"mode": "real"`).
pub type Summary = RunSummary<FlowSummary, RealTail>;

/// What only a real run's `summary.json` has, after the figures across
/// flows.
#[derive(Debug, Serialize)]
pub struct RealTail {
    /// The foreground workload flows (web, ping, video, cbr), in scenario
    /// order, with their own figures (`flows` are the bulk flows, the
    /// figures across flows theirs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSummary>,
    /// The bottleneck's own queue over the window, from lbe-netem's stats
    /// lines (time-weighted; every flow's datagrams in it).
    pub link_queue_ms: Option<LinkQueue>,
    /// Wall-clock start of the scenario (Unix ms): scenario time 0.
    pub started_at_unix_ms: u128,
    /// What the emulator counted over the whole run.
    pub netem: lbe_netem::Summary,
}

/// The bottleneck queue over the analysis window, in ms at line rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkQueue {
    /// Time-weighted mean.
    pub mean: f64,
    /// Largest.
    pub max: f64,
}

/// What a flow's client reported.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Transfer {
    /// quic-bulk's own summary of the whole transfer.
    QuicBulk(ClientSummary),
    /// The h3 flow's download and its check.
    H3(Box<H3Transfer>),
}

impl Transfer {
    /// quic-bulk's summary, for a quic-bulk flow.
    pub fn quic_bulk(&self) -> Option<&ClientSummary> {
        match self {
            Transfer::QuicBulk(s) => Some(s),
            Transfer::H3(_) => None,
        }
    }

    /// The h3 flow's transfer, for an h3 flow.
    pub fn h3(&self) -> Option<&H3Transfer> {
        match self {
            Transfer::H3(t) => Some(t),
            Transfer::QuicBulk(_) => None,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct FlowSummary {
    pub id: usize,
    pub name: String,
    /// "quic-bulk" or "h3".
    pub kind: &'static str,
    /// The sender's controller (an h3 flow's: its server's).
    pub cc: String,
    pub start_s: f64,
    pub stop_s: Option<f64>,
    #[serde(flatten)]
    pub figures: qlog_analysis::FlowSummary,
    /// With `[analysis] steady_queue`: the seconds from the flow's start to
    /// its steady state ([`crate::summary::steady_s`]); absent when it
    /// never got there or without the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_s: Option<f64>,
    /// The qlog the figures come from, relative to the output directory:
    /// the sender's for a quic-bulk flow, the client's for an h3 flow.
    pub qlog: String,
    /// What the client reported.
    pub transfer: Transfer,
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
    if let Some(f) = scenario
        .flows
        .iter()
        .find(|f| !f.client_clock.is_exact() || !f.server_clock.is_exact())
    {
        return Err(format!(
            "flow {}: client/server clock offsets and skews are simulated only (real hosts have their own clocks): run with --sim",
            f.name
        ));
    }
    let qlog_dir = out.join("qlog");
    std::fs::create_dir_all(&qlog_dir)
        .map_err(|e| format!("cannot create {}: {e}", qlog_dir.display()))?;

    // The server, behind the bottleneck, with a certificate its clients
    // trust (they verify it as any client would).
    let certificate = SelfSignedCert::generate().map_err(|e| format!("quic-bulk server: {e}"))?;
    let server = quic_bulk::server::bind(&ServerArgs {
        listen: SocketAddr::from(([127, 0, 0, 1], scenario.ports.server)),
        qlog_dir: Some(qlog_dir.clone()),
        certificate: Certificate::Generated(certificate),
        retry: true,
        verbose: false,
        pacing: true,
    })
    .map_err(|e| format!("quic-bulk server: {e}"))?;
    let server = server.spawn();
    let server_addr = server.local_addr();
    let bulk_trust = server.trust();

    // Each h3 flow's file and server.
    let mut aioquic = None;
    let mut served: Vec<Option<Served>> = Vec::new();
    for flow in &scenario.flows {
        served.push(match &flow.kind {
            FlowKind::H3(h3) => {
                let s = Served::start(&scenario.link, flow, h3, out, &mut aioquic)?;
                log(&format!(
                    "{}: {} serves {} ({}) on {}",
                    flow.name,
                    h3.server.name(),
                    lbe_units::fmt_bytes(s.size),
                    flow.cc,
                    s.addr
                ));
                Some(s)
            }
            _ => None,
        });
    }

    // The workloads' servers: a quic-bulk server for web and video
    // connections (no qlog: dozens of short connections; no Retry: a web
    // server's handshake is one round trip), a UDP server per ping or cbr
    // flow.
    let workload_quic = if scenario
        .flows
        .iter()
        .any(|f| matches!(f.kind, FlowKind::Web(_) | FlowKind::Video(_)))
    {
        let certificate =
            SelfSignedCert::generate().map_err(|e| format!("workload server: {e}"))?;
        let server = quic_bulk::server::bind(&ServerArgs {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            qlog_dir: None,
            certificate: Certificate::Generated(certificate),
            retry: false,
            verbose: false,
            pacing: true,
        })
        .map_err(|e| format!("workload server: {e}"))?;
        Some(server.spawn())
    } else {
        None
    };
    let workload_trust = workload_quic.as_ref().map(|s| s.trust());
    let mut udp_servers: Vec<Option<UdpServer>> = Vec::new();
    for flow in &scenario.flows {
        udp_servers.push(match &flow.kind {
            FlowKind::Ping(_) => Some(UdpServer::echo()?),
            FlowKind::Cbr(cbr) => Some(UdpServer::cbr(
                *cbr,
                flow.stop().unwrap_or_default().saturating_sub(flow.start),
            )?),
            _ => None,
        });
    }

    // The bottleneck: one listening address per base RTT of the quic-bulk
    // flows, and a route per h3 flow to its server.
    let paths = netem_paths(&scenario.link, &scenario.flows);
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
    config.down.aqm = scenario.link.aqm;
    config.down.gilbert_elliott = scenario.link.gilbert_elliott;
    config.up = scenario.link.reverse_path(config.down.seed);
    // Jitter, aggregation, a trace, [[link.change]]: lbe-link's model, as
    // in the simulator; `rebind = true` is lbe-netem's --rebind-at.
    config.down.variation = scenario.link.bottleneck(config.down.seed).variation;
    config.rebind_at = match scenario.link.rebinds().as_slice() {
        [] => None,
        [at] => Some(*at),
        _ => {
            return Err(
                "a real-time run rebinds once (lbe-netem's --rebind-at): give one change with rebind = true, or run --sim"
                    .into(),
            )
        }
    };
    config.stats = Some(out.join("netem-stats.jsonl"));
    for (i, (upstream, rtt)) in paths.iter().enumerate().skip(1) {
        let listen = SocketAddr::from(([127, 0, 0, 1], port(i)));
        match upstream {
            Upstream::QuicBulk => config.paths.push(lbe_netem::PathSpec { listen, rtt: *rtt }),
            Upstream::H3(f) => config.routes.push(lbe_netem::Route {
                listen,
                upstream: served[*f].as_ref().expect("an h3 flow has a server").addr,
                rtt: *rtt,
            }),
            Upstream::Workload(f) => config.routes.push(lbe_netem::Route {
                listen,
                upstream: match &udp_servers[*f] {
                    Some(udp) => udp.addr(),
                    None => workload_quic
                        .as_ref()
                        .expect("web and video flows have a server")
                        .local_addr(),
                },
                rtt: *rtt,
            }),
        }
    }
    // On an error, dropping `server` and `served` stops them.
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
    let seed = scenario.seed.unwrap_or(1);
    let results: Vec<Result<FlowOutcome, String>> = thread::scope(|scope| {
        let flow_threads: Vec<_> = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, flow)| {
                let path = netem_path(&scenario.flows, i);
                let connect = listen[paths
                    .iter()
                    .position(|p| *p == path)
                    .expect("every flow has a path")];
                let (qlog_dir, served, bulk_trust) = (&qlog_dir, served[i].as_ref(), &bulk_trust);
                let (workload_trust, udp) = (&workload_trust, udp_servers[i].as_ref());
                scope.spawn(move || {
                    if flow.kind.is_bulk() {
                        return run_flow(flow, served, bulk_trust, connect, qlog_dir, t0, stop)
                            .map(|(t, q)| FlowOutcome::Bulk(t, q));
                    }
                    let trust = workload_trust.clone().unwrap_or_else(|| bulk_trust.clone());
                    let ctx = crate::workload::Context {
                        t0,
                        stop,
                        connect,
                        trust: &trust,
                        seed,
                        window: scenario.window,
                        cbr_sent: udp.map(|u| u.sent()),
                    };
                    crate::workload::run(flow, &ctx).map(|w| FlowOutcome::Workload(Box::new(w)))
                })
            })
            .collect();
        scenario
            .flows
            .iter()
            .zip(flow_threads)
            .map(|(flow, handle)| {
                let result = handle
                    .join()
                    .unwrap_or_else(|_| Err("the flow's thread panicked".to_string()));
                match &result {
                    Ok(FlowOutcome::Workload(w)) => log(&format!(
                        "{} ({}) done: {}",
                        flow.name,
                        flow.kind.name(),
                        serde_json::to_string(&w.figures).unwrap_or_default()
                    )),
                    Ok(FlowOutcome::Bulk(Transfer::QuicBulk(s), _)) => log(&format!(
                        "{} ({}) done: {} at {}",
                        flow.name,
                        flow.cc,
                        lbe_units::fmt_bytes(s.bytes),
                        lbe_units::fmt_rate(s.goodput_bps)
                    )),
                    Ok(FlowOutcome::Bulk(Transfer::H3(t), _)) => log(&format!(
                        "{} ({}, {}) done: {} received, SHA-256 verified{}",
                        flow.name,
                        t.server,
                        flow.cc,
                        lbe_units::fmt_bytes(t.received_bytes),
                        if t.complete {
                            ""
                        } else {
                            " (cut off at its stop time)"
                        }
                    )),
                    Err(e) => log(&format!("{} ({}) failed: {e}", flow.name, flow.cc)),
                }
                result
            })
            .collect()
    });

    let netem_summary = netem.stop().map_err(|e| format!("lbe-netem: {e}"));
    let mut served_result = Ok(());
    for s in served.into_iter().flatten() {
        served_result = served_result.and(s.finish());
    }
    drop(udp_servers);
    let workload_result = workload_quic.map_or(Ok(()), |s| s.stop());
    let server_result = server.stop();
    if stop.load(Ordering::Relaxed) {
        return Err("interrupted".to_string());
    }
    server_result.map_err(|e| format!("quic-bulk server: {e}"))?;
    workload_result.map_err(|e| format!("workload server: {e}"))?;
    served_result?;
    let netem_summary = netem_summary?;

    let mut transfers = Vec::new();
    let mut workloads = Vec::new();
    for (flow, result) in scenario.flows.iter().zip(results) {
        match result.map_err(|e| format!("{} ({}): {e}", flow.name, flow.cc))? {
            FlowOutcome::Bulk(t, q) => transfers.push((t, q)),
            FlowOutcome::Workload(summary) => workloads.push(*summary),
        }
    }

    summarize(
        scenario,
        out,
        started_at,
        transfers,
        workloads,
        netem_summary,
    )
}

/// What a flow's thread returns.
enum FlowOutcome {
    /// A bulk flow: what its client reported, the qlog of its figures.
    Bulk(Transfer, PathBuf),
    /// A workload flow: its figures.
    Workload(Box<WorkloadSummary>),
}

/// Runs one flow from its start time; what its client reported and the
/// qlog its figures come from.
fn run_flow(
    flow: &Flow,
    served: Option<&Served>,
    bulk_trust: &ServerTrust,
    connect: SocketAddr,
    qlog_dir: &Path,
    t0: Instant,
    stop: &AtomicBool,
) -> Result<(Transfer, PathBuf), String> {
    if !crate::h3::wait_until(t0, flow.start, stop) {
        return Err("interrupted".to_string());
    }
    // Past its give-up time a flow is cut off; an h3 flow with a stop time
    // is cut off at it (its file is larger than the link can carry by then).
    let deadline = flow.give_up_at();
    let cut_at = match flow.kind {
        FlowKind::H3(_) => flow.stop(),
        _ => None,
    };
    let abort = Arc::new(AtomicBool::new(false));
    let at_stop = AtomicBool::new(false);
    let watchdog = || {
        while !abort.load(Ordering::Relaxed) {
            if stop.load(Ordering::Relaxed) || t0.elapsed() > deadline {
                abort.store(true, Ordering::Relaxed);
            } else if cut_at.is_some_and(|at| t0.elapsed() >= at) {
                at_stop.store(true, Ordering::Relaxed);
                abort.store(true, Ordering::Relaxed);
            }
            thread::sleep(Duration::from_millis(10));
        }
    };
    thread::scope(|scope| {
        scope.spawn(watchdog);
        let result = match (&flow.kind, served) {
            (FlowKind::H3(h3), Some(served)) => {
                let dir = qlog_dir.join(&flow.name);
                crate::h3::fetch(h3, served, connect, &dir, &abort, &|| {
                    at_stop.load(Ordering::Relaxed)
                })
                .map(|(t, qlog)| (Transfer::H3(Box::new(t)), qlog))
            }
            (FlowKind::H3(_), None) => Err("the h3 flow has no server".to_string()),
            (FlowKind::QuicBulk, _) => {
                run_quic_bulk(flow, bulk_trust, connect, qlog_dir, t0, &abort)
            }
            _ => Err("not a bulk flow".to_string()),
        };
        let timed_out = abort.swap(true, Ordering::Relaxed)
            && !stop.load(Ordering::Relaxed)
            && !at_stop.load(Ordering::Relaxed);
        result.map_err(|e| {
            if timed_out {
                format!("did not finish by {:?} (scenario time)", deadline)
            } else {
                e
            }
        })
    })
}

fn run_quic_bulk(
    flow: &Flow,
    trust: &ServerTrust,
    connect: SocketAddr,
    qlog_dir: &Path,
    t0: Instant,
    abort: &AtomicBool,
) -> Result<(Transfer, PathBuf), String> {
    let amount = match flow.end {
        FlowEnd::Stop(at) => {
            Amount::DurationMs(quic_bulk::protocol::millis(at.saturating_sub(t0.elapsed())))
        }
        FlowEnd::Bytes(b) => Amount::Bytes(b),
    };
    let summary = quic_bulk::client::run(
        ClientArgs {
            connect,
            bind: None,
            cc: flow.cc.clone(),
            amount,
            direction: match flow.direction {
                lbe_scenario::Direction::Download => Direction::Download,
                lbe_scenario::Direction::Upload => Direction::Upload,
            },
            qlog_dir: Some(qlog_dir.to_path_buf()),
            label: flow.name.clone(),
            handshake_timeout: Duration::from_secs(10),
            progress: false,
            pacing: flow.pacing,
            deadline: flow.deadline,
            trust: trust.clone(),
            server_name: None,
        },
        abort,
    )
    .map_err(|e| e.to_string())?;
    let qlog = summary
        .qlog
        .as_ref()
        .map(PathBuf::from)
        .ok_or_else(|| format!("{}: the sender wrote no qlog", flow.name))?;
    Ok((Transfer::QuicBulk(summary), qlog))
}

fn summarize(
    scenario: &Scenario,
    out: &Path,
    started_at: SystemTime,
    transfers: Vec<(Transfer, PathBuf)>,
    workloads: Vec<WorkloadSummary>,
    netem: lbe_netem::Summary,
) -> Result<Summary, String> {
    let bulk: Vec<&Flow> = scenario.flows.iter().filter(|f| f.kind.is_bulk()).collect();
    let (transfers, qlogs): (Vec<Transfer>, Vec<PathBuf>) = transfers.into_iter().unzip();
    let options = qlog_analysis::Options {
        from_s: scenario.window.map(|(from, _)| from.as_secs_f64()),
        to_s: scenario.window.map(|(_, to)| to.as_secs_f64()),
        link_rate_bps: Some(scenario.link.rate_bps as f64),
        // What the emulator charges each datagram on the link.
        datagram_overhead_bytes: u64::from(lbe_netem::IPV4_UDP_OVERHEAD),
        time_base: qlog_analysis::TimeBase::WallClock(started_at),
        ..qlog_analysis::Options::default()
    };
    let inputs = bulk.iter().zip(&qlogs).map(|(f, q)| {
        qlog_analysis::FlowInput::new(q)
            .cc(f.cc.as_str())
            .flow(f.name.clone())
    });
    let analysis = if bulk.is_empty() {
        // Workloads alone (a --baseline run): no bulk flow, no qlog.
        None
    } else {
        Some(qlog_analysis::analyze(inputs, &options).map_err(|e| e.to_string())?)
    };
    let parts = match &analysis {
        Some(a) => a.summary_parts(),
        None => crate::summary::workloads_only_parts(scenario),
    };
    let steady = crate::summary::steady_s(scenario, analysis.as_ref());
    let refill_s = crate::summary::refill_s(scenario, analysis.as_ref());

    let flows = |figures: Vec<qlog_analysis::FlowSummary>| {
        bulk.iter()
            .zip(figures)
            .zip(transfers)
            .zip(&qlogs)
            .zip(steady)
            .map(
                |((((flow, figures), transfer), qlog), steady_s)| FlowSummary {
                    id: flow.id,
                    name: flow.name.clone(),
                    kind: flow.kind.name(),
                    cc: flow.cc.to_string(),
                    start_s: flow.start.as_secs_f64(),
                    stop_s: flow.stop().map(|d| d.as_secs_f64()),
                    figures,
                    steady_s,
                    qlog: qlog.strip_prefix(out).unwrap_or(qlog).display().to_string(),
                    transfer,
                },
            )
            .collect()
    };
    let tail = |window: &qlog_analysis::Window| RealTail {
        workloads,
        link_queue_ms: link_queue(
            &out.join("netem-stats.jsonl"),
            started_at,
            (window.from_s, window.to_s),
        ),
        started_at_unix_ms: started_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis()),
        netem,
    };
    let mut summary = RunSummary::new(
        Mode::Real,
        None,
        &scenario.link,
        &scenario.flows,
        parts,
        flows,
        tail,
    );
    summary.refill_s = refill_s;
    Ok(summary)
}

/// The bottleneck's queue over `window` (scenario seconds), from
/// lbe-netem's stats lines: each line's `down.queue_ms_mean` weighted by
/// how much of its interval lies in the window, and the largest
/// `down.queue_ms_max` of those lines. `None` if no line overlaps.
pub fn link_queue(stats: &Path, started_at: SystemTime, window: (f64, f64)) -> Option<LinkQueue> {
    let text = std::fs::read_to_string(stats).ok()?;
    let start_ms = started_at
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_secs_f64()
        * 1e3;
    link_queue_of(&text, start_ms, window)
}

/// [`link_queue`] of a stats file's text, scenario time 0 at `start_ms`
/// (Unix ms).
pub fn link_queue_of(text: &str, start_ms: f64, (from, to): (f64, f64)) -> Option<LinkQueue> {
    let (mut weighted, mut weight, mut max) = (0.0, 0.0, f64::NEG_INFINITY);
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(end_ms), Some(len), Some(mean), Some(top)) = (
            v["unix_ms"].as_f64(),
            v["down"]["interval_s"].as_f64(),
            v["down"]["queue_ms_mean"].as_f64(),
            v["down"]["queue_ms_max"].as_f64(),
        ) else {
            continue;
        };
        let end = (end_ms - start_ms) / 1e3;
        let overlap = end.min(to) - (end - len).max(from);
        if overlap > 0.0 {
            weighted += mean * overlap;
            weight += overlap;
            max = max.max(top);
        }
    }
    (weight > 0.0).then(|| LinkQueue {
        mean: weighted / weight,
        max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_queue_is_weighted_by_overlap_with_the_window() {
        let line = |end_s: f64, mean: f64, max: f64| {
            format!(
                "{{\"unix_ms\":{},\"down\":{{\"interval_s\":1.0,\"queue_ms_mean\":{mean},\"queue_ms_max\":{max}}}}}\n",
                1000.0 + end_s * 1e3
            )
        };
        let text = [
            line(1.0, 500.0, 900.0),
            line(2.0, 10.0, 20.0),
            line(3.0, 40.0, 50.0),
            line(4.0, 100.0, 800.0),
        ]
        .concat();
        // Window 1.5..3.0: half of the second line, all of the third.
        assert_eq!(
            link_queue_of(&text, 1000.0, (1.5, 3.0)),
            Some(LinkQueue {
                mean: (10.0 * 0.5 + 40.0) / 1.5,
                max: 50.0
            })
        );
        assert_eq!(link_queue_of(&text, 1000.0, (10.0, 20.0)), None);
        assert_eq!(link_queue_of("not json\n", 0.0, (0.0, 1.0)), None);
    }
}
