//! The foreground workloads in real time, through lbe-netem on loopback:
//! what a user feels beside the bulk flows (docs/foreground.md).
//!
//! - web: each arrival of the flow's seeded Poisson schedule
//!   (`lbe_workload::arrivals`) is a new QUIC connection of quic-bulk's
//!   client library (a thread each, so downloads overlap when they arrive
//!   faster than they finish), against a quic-bulk server of the workloads
//!   (no qlog, no Retry: a web server's handshake is one round trip);
//! - ping: a small UDP request every `interval` to an echo server behind
//!   the bottleneck; the reply comes back through the bottleneck's queue;
//! - video: chunk after chunk as `lbe_workload::playout` asks for them,
//!   each a quic-bulk download of `bitrate` × `chunk` bytes;
//! - cbr: a UDP sender behind the bottleneck, started by the client's
//!   hello datagram, at `rate` (on and off in turn when asked).
//!
//! The figures are `lbe_workload::figures`'s, over the analysis window
//! (the flow's own start to stop when the scenario has none).

use std::net::SocketAddr;
use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use std::time::Instant;

use lbe_app_kit::tls::ServerTrust;
use lbe_workload::figures::Download;
use lbe_workload::figures::Echo;
use lbe_workload::figures::Harm;
use lbe_workload::figures::Outcome;
use lbe_workload::figures::WorkloadFigures;
use lbe_workload::playout::Playout;
use quic_bulk::client::ClientArgs;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use serde::Serialize;

use crate::h3::wait_until;
use crate::scenario::CbrFlow;
use crate::scenario::Flow;
use crate::scenario::FlowKind;
use crate::scenario::PingFlow;
use crate::scenario::VideoFlow;
use crate::scenario::WebFlow;

pub use lbe_workload::cbr::CBR_BYTES;
pub use lbe_workload::CBR_WAIT;
pub use lbe_workload::PING_BYTES;
pub use lbe_workload::PING_WAIT;
pub use lbe_workload::WEB_DRAIN;

/// A workload flow's entry in `summary.json` (`workloads`).
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadSummary {
    pub id: usize,
    pub name: String,
    /// "web", "ping", "video" or "cbr".
    pub kind: &'static str,
    /// The controller of a web or video flow's connections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    pub start_s: f64,
    pub stop_s: f64,
    #[serde(flatten)]
    pub figures: WorkloadFigures,
    /// The same flow's figures with every bulk flow removed (`--baseline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<WorkloadFigures>,
    /// These figures against the baseline's (`--baseline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harm: Option<Harm>,
    /// What the figures summarise, for the report's CDFs: a web flow's
    /// completion times (s), a ping flow's added delays (ms); empty for
    /// the other kinds. Not in `summary.json`.
    #[serde(skip)]
    pub samples: Vec<f64>,
    /// The baseline's samples (`--baseline`).
    #[serde(skip)]
    pub baseline_samples: Option<Vec<f64>>,
}

impl WorkloadSummary {
    pub fn new(flow: &Flow, figures: WorkloadFigures) -> Self {
        WorkloadSummary {
            id: flow.id,
            name: flow.name.clone(),
            kind: flow.kind.name(),
            cc: matches!(flow.kind, FlowKind::Web(_) | FlowKind::Video(_))
                .then(|| flow.cc.to_string()),
            start_s: flow.start.as_secs_f64(),
            stop_s: flow.stop().map_or(0.0, |d| d.as_secs_f64()),
            figures,
            baseline: None,
            harm: None,
            samples: Vec::new(),
            baseline_samples: None,
        }
    }

    /// With the samples its figures summarise.
    pub fn with_samples(mut self, samples: Vec<f64>) -> Self {
        self.samples = samples;
        self
    }

    /// Adds the same flow's figures (and samples) without the bulk flows,
    /// and the harm.
    pub fn with_baseline(mut self, baseline: WorkloadSummary) -> Self {
        self.harm = self.figures.harm(&baseline.figures);
        self.baseline = Some(baseline.figures);
        self.baseline_samples = Some(baseline.samples);
        self
    }
}

/// The numeric leaves of a figures object as `(dotted key, value)`, in
/// the JSON's order (`fct_s.p95`, `unfinished`, ...; `null` as `None`;
/// text left out): the names a sweep's metrics, its CSV columns and the
/// report's table give a workload's figures.
pub fn numeric_leaves(json: &serde_json::Value) -> Vec<(String, Option<f64>)> {
    fn walk(v: &serde_json::Value, prefix: &str, out: &mut Vec<(String, Option<f64>)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(v, &path, out);
                }
            }
            serde_json::Value::String(_) => {}
            other => out.push((prefix.to_string(), other.as_f64())),
        }
    }
    let mut out = Vec::new();
    walk(json, "", &mut out);
    out
}

/// What a workload flow needs of the run.
pub struct Context<'a> {
    /// Scenario time 0.
    pub t0: Instant,
    /// Ctrl-C or an error elsewhere: stop at once.
    pub stop: &'a AtomicBool,
    /// lbe-netem's address for the flow.
    pub connect: SocketAddr,
    /// How web and video connections check the workloads' server.
    pub trust: &'a ServerTrust,
    /// Seeds the web flows' schedules (the scenario's seed, or 1).
    pub seed: u64,
    /// The analysis window, scenario time.
    pub window: Option<(Duration, Duration)>,
    /// A cbr flow's sender's count of datagrams sent.
    pub cbr_sent: Option<&'a AtomicU64>,
}

impl Context<'_> {
    fn now(&self) -> Duration {
        self.t0.elapsed()
    }
}

/// Runs a workload flow from its start to its stop; its summary (figures
/// and samples).
pub fn run(flow: &Flow, ctx: &Context) -> Result<WorkloadSummary, String> {
    let stop = flow.stop().ok_or("a workload flow has a stop time")?;
    let window = ctx.window.unwrap_or((flow.start, stop));
    let (figures, samples) = match &flow.kind {
        FlowKind::Web(web) => run_web(flow, web, stop, window, ctx),
        FlowKind::Ping(ping) => run_ping(flow, ping, stop, window, ctx)?,
        FlowKind::Video(video) => (run_video(flow, video, stop, ctx), Vec::new()),
        FlowKind::Cbr(_) => (run_cbr(flow, stop, window, ctx)?, Vec::new()),
        FlowKind::QuicBulk | FlowKind::H3(_) => return Err("not a workload flow".to_string()),
    };
    Ok(WorkloadSummary::new(flow, figures).with_samples(samples))
}

fn download_args(flow: &Flow, ctx: &Context, bytes: u64, label: String) -> ClientArgs {
    let mut args = ClientArgs::loopback(
        ctx.connect,
        ctx.trust.clone(),
        flow.cc.clone(),
        Amount::Bytes(bytes),
        Direction::Download,
        &label,
    );
    args.pacing = flow.pacing;
    args
}

/// Sets `abort` once `until` (scenario time) passes, on `ctx.stop`, or
/// returns when `done` is set.
fn watchdog(ctx: &Context, until: Duration, abort: &AtomicBool, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        if ctx.stop.load(Ordering::Relaxed) || ctx.now() >= until {
            abort.store(true, Ordering::Relaxed);
            return;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

fn run_web(
    flow: &Flow,
    web: &WebFlow,
    stop: Duration,
    window: (Duration, Duration),
    ctx: &Context,
) -> (WorkloadFigures, Vec<f64>) {
    let schedule = lbe_workload::arrivals::schedule(
        web.arrivals_per_s,
        flow.start,
        stop,
        &web.sizes_bytes,
        lbe_workload::arrivals::flow_seed(ctx.seed, flow.id),
    );
    let abort = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let downloads = thread::scope(|scope| {
        scope.spawn(|| watchdog(ctx, stop + WEB_DRAIN, &abort, &done));
        let mut running = Vec::new();
        for (k, arrival) in schedule.iter().enumerate() {
            if !wait_until(ctx.t0, arrival.at, ctx.stop) {
                break;
            }
            let args = download_args(
                flow,
                ctx,
                arrival.size_bytes,
                format!("{}_{}", flow.name, k + 1),
            );
            let abort = &abort;
            running.push((
                arrival,
                scope.spawn(move || quic_bulk::client::run(args, abort)),
            ));
        }
        let downloads: Vec<Download> = running
            .into_iter()
            .map(|(arrival, handle)| {
                let outcome = match handle.join() {
                    // From the arrival (the connection's first packet) to
                    // the last byte received; not quic-bulk's closing
                    // report exchange.
                    Ok(Ok(done)) => Outcome::Finished(
                        done.finished_at
                            .saturating_duration_since(ctx.t0)
                            .saturating_sub(arrival.at),
                    ),
                    Ok(Err(_)) if abort.load(Ordering::Relaxed) => Outcome::Unfinished,
                    _ => Outcome::Failed,
                };
                Download {
                    at: arrival.at,
                    size_bytes: arrival.size_bytes,
                    outcome,
                }
            })
            .collect();
        done.store(true, Ordering::Relaxed);
        downloads
    });
    (
        WorkloadFigures::web(&downloads, window),
        lbe_workload::figures::fct_samples(&downloads, window),
    )
}

fn run_video(flow: &Flow, video: &VideoFlow, stop: Duration, ctx: &Context) -> WorkloadFigures {
    let mut playout = Playout::new(video.playout, flow.start);
    let mut failed = 0;
    let mut chunk = 0;
    if wait_until(ctx.t0, flow.start, ctx.stop) {
        while let Some(due) = playout.next_request_at() {
            if due >= stop || !wait_until(ctx.t0, due, ctx.stop) {
                break;
            }
            playout.requested(ctx.now());
            chunk += 1;
            let args = download_args(
                flow,
                ctx,
                video.chunk_bytes(),
                format!("{}_{chunk}", flow.name),
            );
            let (abort, done) = (AtomicBool::new(false), AtomicBool::new(false));
            let result = thread::scope(|scope| {
                scope.spawn(|| watchdog(ctx, stop, &abort, &done));
                let result = quic_bulk::client::run(args, &abort);
                done.store(true, Ordering::Relaxed);
                result
            });
            match result {
                Ok(done) => playout.arrived(done.finished_at.saturating_duration_since(ctx.t0)),
                // In flight at the stream's end.
                Err(_) if abort.load(Ordering::Relaxed) => break,
                Err(_) => {
                    failed += 1;
                    playout.failed(ctx.now());
                    thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }
    let f = playout.finish(stop);
    WorkloadFigures::Video {
        stalls: f.stalls,
        stall_s: f.stall_s,
        startup_s: f.startup_s,
        chunks: f.chunks,
        failed,
    }
}

fn client_socket(connect: SocketAddr) -> Result<UdpSocket, String> {
    let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .and_then(|s| s.connect(connect).map(|()| s))
        .map_err(|e| format!("udp socket: {e}"))?;
    Ok(socket)
}

fn run_ping(
    flow: &Flow,
    ping: &PingFlow,
    stop: Duration,
    window: (Duration, Duration),
    ctx: &Context,
) -> Result<(WorkloadFigures, Vec<f64>), String> {
    let socket = client_socket(ctx.connect)?;
    let mut sent: Vec<Duration> = Vec::new();
    let mut rtt: Vec<Option<Duration>> = Vec::new();
    let mut buf = [0u8; 2048];
    let mut next = flow.start;
    let end = stop + PING_WAIT;
    loop {
        let now = ctx.now();
        if ctx.stop.load(Ordering::Relaxed) || now >= end {
            break;
        }
        if next < stop && now >= next {
            let mut request = [0u8; PING_BYTES];
            request[..8].copy_from_slice(&(sent.len() as u64).to_be_bytes());
            // A full socket buffer loses the request, as a network would.
            let _ = socket.send(&request);
            sent.push(now);
            rtt.push(None);
            next += ping.interval;
            continue;
        }
        let wake = if next < stop { next.min(end) } else { end };
        let timeout = wake.saturating_sub(now).max(Duration::from_micros(100));
        socket
            .set_read_timeout(Some(timeout))
            .map_err(|e| format!("udp socket: {e}"))?;
        if let Ok(n) = socket.recv(&mut buf) {
            let at = ctx.now();
            if n >= 8 {
                let seq = u64::from_be_bytes(buf[..8].try_into().expect("8 bytes")) as usize;
                if let (Some(slot), Some(t)) = (rtt.get_mut(seq), sent.get(seq)) {
                    slot.get_or_insert(at.saturating_sub(*t));
                }
            }
        }
    }
    let echoes: Vec<Echo> = sent
        .iter()
        .zip(&rtt)
        .map(|(s, r)| Echo {
            sent_at: *s,
            rtt: *r,
        })
        .collect();
    Ok((
        WorkloadFigures::ping(&echoes, flow.rtt, window),
        lbe_workload::figures::added_delay_samples_ms(&echoes, flow.rtt, window),
    ))
}

fn run_cbr(
    flow: &Flow,
    stop: Duration,
    window: (Duration, Duration),
    ctx: &Context,
) -> Result<WorkloadFigures, String> {
    let FlowKind::Cbr(_) = flow.kind else {
        return Err("not a cbr flow".to_string());
    };
    let socket = client_socket(ctx.connect)?;
    if !wait_until(ctx.t0, flow.start, ctx.stop) {
        return Err("interrupted".to_string());
    }
    let mut arrivals: Vec<(Duration, u64)> = Vec::new();
    let mut buf = [0u8; 2048];
    let mut hello_at = None;
    let end = stop + CBR_WAIT;
    socket
        .set_read_timeout(Some(Duration::from_millis(20)))
        .map_err(|e| format!("udp socket: {e}"))?;
    while ctx.now() < end && !ctx.stop.load(Ordering::Relaxed) {
        // Hello until the first datagram comes (once a second).
        if arrivals.is_empty()
            && ctx.now() < stop
            && hello_at.is_none_or(|t: Duration| ctx.now() >= t + Duration::from_secs(1))
        {
            let _ = socket.send(b"cbr");
            hello_at = Some(ctx.now());
        }
        if let Ok(n) = socket.recv(&mut buf) {
            arrivals.push((ctx.now(), n as u64));
        }
    }
    let sent = ctx.cbr_sent.map_or(0, |s| s.load(Ordering::Relaxed));
    Ok(WorkloadFigures::cbr(
        sent,
        &arrivals,
        (flow.start, stop),
        window,
    ))
}

/// A UDP server behind the bottleneck for a ping flow (echo) or a cbr flow
/// (sender), on its own thread until dropped.
pub struct UdpServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    thread: Option<thread::JoinHandle<()>>,
}

impl UdpServer {
    /// The echo server of a ping flow: every datagram goes back to its
    /// sender as it is.
    pub fn echo() -> Result<Self, String> {
        Self::spawn(|socket, stop, _sent| {
            let mut buf = [0u8; 2048];
            while !stop.load(Ordering::Relaxed) {
                if let Ok((n, from)) = socket.recv_from(&mut buf) {
                    let _ = socket.send_to(&buf[..n], from);
                }
            }
        })
    }

    /// The sender of a cbr flow: from the first datagram it receives, for
    /// `length`, [`CBR_BYTES`] datagrams to its sender at `rate_bps` while
    /// on (on for `on`, off for `off`, in turn, when set).
    pub fn cbr(cbr: CbrFlow, length: Duration) -> Result<Self, String> {
        Self::spawn(move |socket, stop, sent| {
            let mut buf = [0u8; 2048];
            let peer = loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if let Ok((_, from)) = socket.recv_from(&mut buf) {
                    break from;
                }
            };
            let schedule = lbe_workload::cbr::CbrSchedule::new(cbr.rate_bps, cbr.on_off);
            let begun = Instant::now();
            let mut datagram = [0u8; CBR_BYTES];
            let mut count: u64 = 0;
            while !stop.load(Ordering::Relaxed) {
                let elapsed = begun.elapsed();
                if elapsed >= length {
                    return;
                }
                let due = schedule.due_count(elapsed);
                while count < due {
                    datagram[..8].copy_from_slice(&count.to_be_bytes());
                    let _ = socket.send_to(&datagram, peer);
                    count += 1;
                    sent.store(count, Ordering::Relaxed);
                }
                thread::sleep(schedule.gap().min(Duration::from_millis(1)));
            }
        })
    }

    fn spawn(
        body: impl FnOnce(UdpSocket, &AtomicBool, &AtomicU64) + Send + 'static,
    ) -> Result<Self, String> {
        let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .map_err(|e| format!("udp server: {e}"))?;
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .map_err(|e| format!("udp server: {e}"))?;
        let addr = socket
            .local_addr()
            .map_err(|e| format!("udp server: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, sent) = (stop.clone(), sent.clone());
            thread::spawn(move || body(socket, &stop, &sent))
        };
        Ok(UdpServer {
            addr,
            stop,
            sent,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The datagrams a cbr sender has sent so far.
    pub fn sent(&self) -> &AtomicU64 {
        &self.sent
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for UdpServer {
    fn drop(&mut self) {
        self.halt();
    }
}
