//! The event loop: virtual time, the bottleneck, senders and receivers.

use std::time::Duration;
use std::time::Instant;

use qlog_analysis::flow::FlowAnalyzer;
use qlog_analysis::Analysis;
use qlog_analysis::MemoryFlow;
use qlog_analysis::Role;
use serde::Serialize;

use quiche_lbe::lbe_cc::rng::SplitMix64;

use crate::ack::AckPolicy;
use crate::ack::Received;
use crate::queue::EventQueue;
use crate::record::Recorder;
use crate::rtt::RttEstimator;
use crate::rx::Frames;
use crate::rx::ReceiverControl;
use crate::rx::ReceiverWindowStats;
use crate::sender::Built;
use crate::sender::DataLimit;
use crate::sender::Sender;
use crate::Config;
use lbe_scenario::FlowEnd;
use lbe_scenario::GRACE;

/// quiche's initial RTT before any sample (RFC 9002 §6.2.2: 333 ms).
const INITIAL_RTT: Duration = Duration::from_millis(333);
/// quiche's default `max_ack_delay` transport parameter.
const MAX_ACK_DELAY: Duration = Duration::from_millis(25);
/// How early our apps release a paced datagram.
use lbe_endpoint::RELEASE_SLACK;
/// A sender's ACK-only datagram (a receiver-driven flow's sender
/// acknowledging the receiver's packets when it has no data to send): the
/// short header (1 + 16-byte connection ID + 2-byte packet number), a small
/// ACK frame (about 8 bytes) and the 16-byte AEAD tag.
const ACK_ONLY_DATAGRAM: usize = 43;

/// The sender's acknowledgement of a receiver's packets: the largest
/// received, and the ACK delay it reports.
#[derive(Clone, Copy, Debug)]
struct PeerAck {
    largest: u64,
    ack_delay: Duration,
}

/// A datagram on the bottleneck: a flow's data packet (`pn`), or an
/// ACK-only one (`pn` is `None`), either perhaps acknowledging the
/// receiver's packets.
#[derive(Debug)]
struct Datagram {
    flow: usize,
    pn: Option<u64>,
    ack: Option<PeerAck>,
}

#[derive(Debug)]
enum Ev {
    /// The flow's first data (after its handshake).
    Start(usize),
    /// The flow stops taking new data.
    Stop(usize),
    /// A held datagram is released onto the link.
    Release(usize),
    /// The loss-detection timer.
    LossTimer(usize),
    /// The bottleneck's next delivery is due.
    LinkDue,
    /// An ACK frame reaches the sender.
    Ack(usize, Box<AckFrame>),
    /// The receiver's delayed-ACK timer.
    AckTimer(usize),
    /// The receiver's loop wakes: one ACK for what arrived.
    ReceiverWake(usize),
    /// The sender's loop wakes: the ACKs that arrived, then sending.
    SenderWake(usize),
}

/// An ACK-only packet from a receiver.
#[derive(Debug)]
struct AckFrame {
    pn: u64,
    /// Inclusive, ascending.
    ranges: Vec<(u64, u64)>,
    ack_delay: Duration,
    /// A receiver-driven flow's other frames (none otherwise).
    frames: Frames,
}

struct Receiver {
    received: Received,
    /// A wake-up is scheduled ([`Config::host_latency`]).
    wake_scheduled: bool,
    /// Ack-eliciting packets not yet acknowledged, and when the first came.
    pending: u32,
    pending_since: Option<Instant>,
    largest_time: Option<Instant>,
    next_ack_pn: u64,
}

struct FlowState {
    sender: Option<Sender>,
    receiver: Receiver,
    recorder: Recorder,
    one_way: Duration,
    held: Option<Built>,
    /// ACK frames that arrived and wait for the sender's loop.
    inbox: Vec<AckFrame>,
    timer_at: Option<Instant>,
    /// When the earliest pending `LossTimer` event fires: the timer moves
    /// on every packet sent, so an event is queued only when the timer
    /// moves earlier than the one queued, and a later timer is re-queued
    /// when that event fires (the queue stays small).
    timer_event_at: Option<Instant>,
    deadline: Instant,
    done_at: Option<Instant>,
    started: bool,
    /// A deadline-aware controller's progress handle.
    progress: Option<quiche_lbe::lbe_cc::deadline::Progress>,
    /// A receiver-driven flow's control ([`crate::rx`]).
    rx: Option<ReceiverControl>,
    /// A receiver-driven flow's data packets on their way: pn → (chunk, size).
    in_transit: std::collections::HashMap<u64, (crate::sender::Chunk, usize)>,
    /// The largest receiver packet the sender received, and when.
    peer_largest: Option<(u64, Instant)>,
    /// An ack-eliciting receiver packet waits for the sender's ACK.
    peer_ack_due: bool,
    /// The ACK the held datagram carries.
    held_ack: Option<PeerAck>,
}

/// What a flow did, beside the figures of the analysis.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowStats {
    pub sent_packets: u64,
    pub lost_packets: u64,
    pub spurious_losses: u64,
    /// Probe timeouts (RFC 9002 §6.2) that fired over the whole run; the
    /// re-stated engine only (`None` on the quiche engine, whose count
    /// below includes the time-threshold timeouts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_timeouts: Option<u64>,
    /// Times the loss-detection timer fired over the whole run, for a
    /// probe timeout or a time-threshold loss: quiche's
    /// `PathStats::total_pto_count` on the quiche engine (quiche 0.30.0
    /// documents it as "the number of times PTO fired" but increments it
    /// in `Path::on_loss_detection_timeout` whatever fired), the same
    /// count on the re-stated engine. An upper bound on the probe timeouts.
    pub loss_detection_timeouts: u64,
    /// Stream bytes the flow offered (new data, retransmissions not counted).
    pub stream_bytes: u64,
    /// When every byte was acknowledged (byte-counted flows), seconds.
    pub finished_s: Option<f64>,
    /// A deadline-aware controller's time in each aggressiveness level
    /// (`lbe_cc::deadline`), seconds, level 0 (full LBE) first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_in_levels_s: Option<Vec<f64>>,
    /// A receiver-driven flow's window ([`crate::rx`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_window: Option<ReceiverWindowStats>,
}

/// A finished run.
pub struct SimOutput {
    /// The bulk flows' figures; `None` for a run of workloads alone.
    pub analysis: Option<Analysis>,
    /// The bulk flows' own counts, in scenario order.
    pub flows: Vec<FlowStats>,
    /// Each workload flow's figures, in scenario order (the quiche
    /// engine).
    pub workloads: Vec<WorkloadOutput>,
    /// What the bottleneck counted.
    pub link: lbe_link::Totals,
    /// What the client->server link counted, when the scenario limits
    /// that direction (`[link] reverse_rate` or `reverse_loss`; the quiche
    /// engine).
    pub reverse_link: Option<lbe_link::Totals>,
    /// The bottleneck's drops of each flow (its key is its index).
    pub flow_drops: Vec<lbe_link::FlowDrops>,
    /// Events the loop processed.
    pub events: u64,
    /// Virtual time the run covered.
    pub duration: Duration,
    /// Each bulk flow's qlog file, when [`Config::qlog_dir`] asked for
    /// them.
    pub qlogs: Vec<Option<std::path::PathBuf>>,
}

/// What a workload flow measured.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadOutput {
    /// Its position among the scenario's flows (from 0).
    pub flow: usize,
    pub figures: lbe_workload::figures::WorkloadFigures,
    /// What its figures summarise, for a CDF: a web flow's completion
    /// times (s), a ping flow's added delays (ms); empty for the others.
    pub samples: Vec<f64>,
}

impl SimOutput {
    /// The analysis's view of flow number `number` (from 1) of the run.
    pub(crate) fn memory_flow(
        analyzer: FlowAnalyzer,
        flow: &lbe_scenario::Flow,
        number: usize,
    ) -> MemoryFlow {
        MemoryFlow {
            analyzer,
            label: flow.sender_cc().to_string(),
            cc: Some(flow.sender_cc().to_string()),
            flow: Some(if flow.name.is_empty() {
                format!("flow{number}")
            } else {
                flow.name.clone()
            }),
            target_ms: None,
            role: Role::Server,
        }
    }

    /// A finished run's output: the flows analysed together, with the
    /// bottleneck's counts.
    pub(crate) fn assemble<T>(
        config: &Config,
        flows: Vec<MemoryFlow>,
        stats: Vec<FlowStats>,
        link: &lbe_link::Link<T>,
        events: u64,
        duration: Duration,
        qlogs: Vec<Option<std::path::PathBuf>>,
    ) -> Result<SimOutput, String> {
        let options = crate::queue::analysis_options(config);
        let analysis = match flows.is_empty() {
            true => None,
            false => {
                Some(qlog_analysis::analyze_in_memory(flows, &options).map_err(|e| e.to_string())?)
            }
        };
        Ok(SimOutput {
            analysis,
            flows: stats,
            workloads: Vec::new(),
            link: link.totals().clone(),
            reverse_link: None,
            flow_drops: (0..config.flows.len() as u64)
                .map(|i| link.flow_drops(i))
                .collect(),
            events,
            duration,
            qlogs,
        })
    }
}

struct Sim<'a> {
    config: &'a Config,
    epoch: Instant,
    queue: EventQueue<Ev>,
    /// Items: (flow, packet number), kept small: the delay line is a heap.
    link: lbe_link::Link<Datagram>,
    link_due: Option<Instant>,
    flows: Vec<FlowState>,
    events: u64,
    /// Draws the endpoints' wake-up latencies.
    rng: SplitMix64,
}

fn ms(d: Duration) -> f32 {
    d.as_secs_f64() as f32 * 1e3
}

/// Runs `config` to the end.
pub fn run(config: &Config) -> Result<SimOutput, String> {
    if config.flows.is_empty() {
        return Err("a run needs at least one flow".into());
    }
    if config.link.has_reverse() {
        return Err(
            "link reverse_rate and reverse_loss are simulated on the quiche engine only (here the client->server direction is a delay line): run with --engine quiche"
                .to_string(),
        );
    }
    for f in &config.flows {
        if !f.kind.is_bulk() || matches!(f.kind, lbe_scenario::FlowKind::H3(_)) {
            return Err(format!(
                "flow {}: kind = \"{}\" is simulated on the quiche engine only: run with --engine quiche or auto",
                f.name,
                f.kind.name()
            ));
        }
        if f.direction == lbe_scenario::Direction::Upload {
            return Err(format!(
                "flow {}: direction = \"upload\" is simulated on the quiche engine only: run with --engine quiche",
                f.name
            ));
        }
        if !f.client_clock.is_exact() || !f.server_clock.is_exact() {
            return Err(format!(
                "flow {}: client/server clock offsets and skews are simulated on the quiche engine only (this engine has no timestamps): run with --engine quiche",
                f.name
            ));
        }
    }
    // Every controller is built before anything runs, so a spec the
    // simulator cannot run fails at once.
    // A deadline-aware controller reads a progress handle of its own run
    // (a fresh one: runs of one config may go in parallel).
    let mut controllers = Vec::new();
    let mut progress = Vec::new();
    for f in &config.flows {
        let mut spec = f.sender_cc();
        let total = match f.end {
            FlowEnd::Bytes(b) => b,
            FlowEnd::Stop(_) => 0,
        };
        let handle = quiche_lbe::lbe_cc::deadline::Progress::new(total);
        progress.push(spec.set_progress(handle.clone()).then_some(handle));
        controllers.push(
            crate::controller(&spec, &config.framing)
                .map_err(|e| format!("flow {} ({}): {e}", f.name, f.sender_cc()))?,
        );
    }
    let epoch = Instant::now();
    let link = lbe_link::Link::new(&config.link.bottleneck(config.seed));
    let (from, to) = match config.window {
        Some((f, t)) => (Some(f.as_secs_f64()), Some(t.as_secs_f64())),
        None => (None, None),
    };
    let mut sim = Sim {
        config,
        epoch,
        queue: EventQueue::new(),
        link,
        link_due: None,
        flows: Vec::new(),
        events: 0,
        rng: crate::queue::latency_rng(config),
    };
    let mut qlogs = Vec::new();
    if let Some(dir) = &config.qlog_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    for (i, ((f, cc), progress)) in config
        .flows
        .iter()
        .zip(controllers)
        .zip(progress)
        .enumerate()
    {
        let limit = match f.end {
            FlowEnd::Stop(t) => DataLimit::Until(epoch + t),
            FlowEnd::Bytes(b) => DataLimit::Bytes(b),
        };
        let deadline = epoch
            + match f.end {
                FlowEnd::Stop(t) => t + GRACE,
                FlowEnd::Bytes(_) => f.start + GRACE.max(Duration::from_secs(3600)),
            };
        let mut recorder = Recorder::new(FlowAnalyzer::new(0.0, from, to, 0.1));
        let mut qlog = None;
        if let Some(dir) = &config.qlog_dir {
            let (path, r) = with_qlog(recorder, dir, f, i)?;
            recorder = r;
            qlog = Some(path);
        }
        qlogs.push(qlog);
        let mut sender = Sender::new(
            cc,
            RttEstimator::new(INITIAL_RTT, MAX_ACK_DELAY),
            config.framing,
            limit,
            f.pacing,
        );
        if let Some(p) = &progress {
            sender.set_progress(p.clone());
        }
        let rx = f.receiver_lbe.then(|| {
            ReceiverControl::new(config.framing.max_datagram, MAX_ACK_DELAY, epoch + f.start)
        });
        if let Some(rx) = &rx {
            // The initial credit: `initial_max_data`.
            sender.grant_credit(rx.max_data());
        }
        sim.flows.push(FlowState {
            sender: Some(sender),
            receiver: Receiver {
                received: Received::default(),
                wake_scheduled: false,
                pending: 0,
                pending_since: None,
                largest_time: None,
                next_ack_pn: 0,
            },
            recorder,
            one_way: f.rtt / 2,
            held: None,
            inbox: Vec::new(),
            timer_at: None,
            timer_event_at: None,
            deadline,
            done_at: None,
            started: false,
            progress,
            rx,
            in_transit: std::collections::HashMap::new(),
            peer_largest: None,
            peer_ack_due: false,
            held_ack: None,
        });
        // The handshake: the server's first 1-RTT data leaves 1.5 RTTs after
        // the client's first packet, with one RTT sample taken.
        sim.push(epoch + f.start + f.rtt + f.rtt / 2, Ev::Start(i));
        if let FlowEnd::Stop(t) = f.end {
            sim.push(epoch + t, Ev::Stop(i));
        }
    }
    sim.run_loop();
    let mut out = sim.finish()?;
    out.qlogs = qlogs;
    Ok(out)
}

/// The flow's recorder writing a qlog file into `dir` too.
fn with_qlog(
    recorder: Recorder,
    dir: &std::path::Path,
    flow: &lbe_scenario::Flow,
    index: usize,
) -> Result<(std::path::PathBuf, Recorder), String> {
    use quiche_lbe::lbe_cc::qlog_name;
    let name = qlog_name::file_name(
        &flow.name,
        qlog_name::Role::Server,
        &qlog_name::cc_tag(flow.sender_cc().as_str()),
        &(index as u64).to_be_bytes(),
    );
    let path = dir.join(name);
    let file = std::fs::File::create(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let recorder = recorder
        .with_qlog(
            Box::new(std::io::BufWriter::new(file)),
            &format!("lbe-sim {} {}", flow.name, flow.sender_cc()),
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok((path, recorder))
}

impl FlowState {
    /// The sender's ACK of the receiver's packets, if one is due: it goes
    /// out at `now` with the ACK delay since the largest arrived.
    fn peer_ack(&mut self, now: Instant) -> Option<PeerAck> {
        if !std::mem::take(&mut self.peer_ack_due) {
            return None;
        }
        let (largest, at) = self.peer_largest?;
        Some(PeerAck {
            largest,
            ack_delay: now.saturating_duration_since(at),
        })
    }
}

impl Sim<'_> {
    fn push(&mut self, at: Instant, ev: Ev) {
        self.queue.push(at, ev);
    }

    fn wake_latency(&mut self) -> Duration {
        crate::queue::wake_latency(&mut self.rng, self.config)
    }

    fn t_ms(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.epoch).as_secs_f64() * 1e3
    }

    fn run_loop(&mut self) {
        while let Some((at, ev)) = self.queue.pop() {
            self.events += 1;
            if self.flows.iter().all(|f| f.done_at.is_some()) {
                break;
            }
            match ev {
                Ev::Start(i) => {
                    let rtt = self.config.flows[i].rtt;
                    let f = &mut self.flows[i];
                    f.started = true;
                    if let Some(s) = f.sender.as_mut() {
                        s.rtt.update(rtt, Duration::ZERO, at);
                    }
                    if let Some(rx) = f.rx.as_mut() {
                        rx.on_handshake_rtt(rtt, at);
                    }
                    self.try_send(i, at);
                }
                Ev::Stop(i) => {
                    if let Some(s) = self.flows[i].sender.as_mut() {
                        s.stop_new_data(at);
                    }
                    self.check_done(i, at);
                }
                Ev::Release(i) => {
                    if let Some(b) = self.flows[i].held.take() {
                        let ack = self.flows[i].held_ack.take();
                        self.transmit(i, b, ack, at);
                    }
                    self.try_send(i, at);
                }
                Ev::LossTimer(i) => self.on_loss_timer(i, at),
                Ev::LinkDue => {
                    if self.link_due == Some(at) {
                        self.link_due = None;
                    }
                    self.deliver(at);
                }
                Ev::Ack(flow, frame) => {
                    let f = &mut self.flows[flow];
                    if f.rx.is_some() {
                        if f.peer_largest.is_none_or(|(pn, _)| frame.pn > pn) {
                            f.peer_largest = Some((frame.pn, at));
                        }
                        f.peer_ack_due |= frame.frames.ack_eliciting;
                    }
                    let first = f.inbox.is_empty();
                    f.inbox.push(*frame);
                    if first {
                        let wake = at + self.wake_latency();
                        self.push(wake, Ev::SenderWake(flow));
                    }
                }
                Ev::SenderWake(i) => {
                    let inbox = std::mem::take(&mut self.flows[i].inbox);
                    for frame in inbox {
                        self.on_ack(i, &frame, at);
                    }
                    self.try_send(i, at);
                }
                Ev::ReceiverWake(i) => {
                    self.flows[i].receiver.wake_scheduled = false;
                    self.send_ack(i, at);
                }
                Ev::AckTimer(i) => {
                    let r = &self.flows[i].receiver;
                    if r.pending > 0
                        && r.pending_since
                            .is_some_and(|t| t + self.ack_delay_limit() <= at)
                    {
                        self.send_ack(i, at);
                    }
                }
            }
        }
    }

    fn ack_delay_limit(&self) -> Duration {
        match self.config.ack_policy {
            AckPolicy::Immediate => Duration::ZERO,
            AckPolicy::EverySecond { max_ack_delay } => max_ack_delay,
        }
    }

    /// Builds and sends what the window, the pacer and the data allow.
    fn try_send(&mut self, i: usize, now: Instant) {
        if !self.flows[i].started || self.flows[i].held.is_some() || self.flows[i].done_at.is_some()
        {
            return;
        }
        loop {
            let f = &mut self.flows[i];
            let Some(sender) = f.sender.as_mut() else {
                return;
            };
            let Some(built) = sender.build(now) else {
                break;
            };
            let t = self.t_ms(now);
            let f = &mut self.flows[i];
            f.recorder.packet_sent(t, built.pn, built.size, built.chunk);
            let ack = f.peer_ack(now);
            if f.rx.is_some() {
                f.in_transit.insert(built.pn, (built.chunk, built.size));
            }
            match built.release {
                Some(release) if release > now + RELEASE_SLACK => {
                    // Held: nothing more is built until it has left.
                    f.held = Some(built);
                    f.held_ack = ack;
                    self.push(release - RELEASE_SLACK, Ev::Release(i));
                    break;
                }
                _ => self.transmit(i, built, ack, now),
            }
        }
        let f = &mut self.flows[i];
        if f.held.is_none() {
            if let Some(ack) = f.peer_ack(now) {
                // Nothing to send: an ACK-only datagram.
                let delay = f.one_way;
                let d = Datagram {
                    flow: i,
                    pn: None,
                    ack: Some(ack),
                };
                self.link
                    .enqueue_flow(now, i as u64, ACK_ONLY_DATAGRAM, delay, d);
                self.schedule_link();
            }
        }
        self.arm_timer(i);
    }

    fn transmit(&mut self, i: usize, built: Built, ack: Option<PeerAck>, now: Instant) {
        let delay = self.flows[i].one_way;
        let d = Datagram {
            flow: i,
            pn: Some(built.pn),
            ack,
        };
        self.link.enqueue_flow(now, i as u64, built.size, delay, d);
        self.schedule_link();
    }

    fn schedule_link(&mut self) {
        if let Some(due) = self.link.next_delivery() {
            if self.link_due.is_none_or(|d| due < d) {
                self.link_due = Some(due);
                self.push(due, Ev::LinkDue);
            }
        }
    }

    /// Datagrams leaving the delay line reach their receivers.
    fn deliver(&mut self, now: Instant) {
        while let Some(d) = self.link.poll(now) {
            let Datagram { flow: i, pn, ack } = d.item;
            let f = &mut self.flows[i];
            if let (Some(rx), Some(ack)) = (f.rx.as_mut(), ack) {
                rx.on_ack(ack.largest, ack.ack_delay, now);
            }
            let Some(pn) = pn else {
                continue;
            };
            let data = f.in_transit.remove(&pn);
            let r = &mut f.receiver;
            if !r.received.insert(pn) {
                continue;
            }
            if let (Some(rx), Some((chunk, size))) = (f.rx.as_mut(), data) {
                rx.on_data(chunk, size, now);
            }
            let r = &mut self.flows[i].receiver;
            r.largest_time = Some(now);
            r.pending += 1;
            r.pending_since.get_or_insert(now);
            match self.config.ack_policy {
                AckPolicy::Immediate => {
                    if !r.wake_scheduled {
                        r.wake_scheduled = true;
                        let at = now + self.wake_latency();
                        self.push(at, Ev::ReceiverWake(i));
                    }
                }
                AckPolicy::EverySecond { max_ack_delay } => {
                    if r.pending >= 2 {
                        self.send_ack(i, now);
                    } else {
                        self.push(now + max_ack_delay, Ev::AckTimer(i));
                    }
                }
            }
        }
        // Only the event `link_due` names clears it (the LinkDue handler):
        // clearing it here let every stale LinkDue event schedule one more,
        // so under an AQM (whose dequeue times move the next delivery
        // earlier at each arrival) the stale events multiplied: 21.7
        // million LinkDue events in a 12 s CoDel run, 91 % of its CPU.
        self.schedule_link();
    }

    fn send_ack(&mut self, i: usize, now: Instant) {
        let f = &mut self.flows[i];
        let r = &mut f.receiver;
        r.pending = 0;
        r.pending_since = None;
        let ack_delay = r
            .largest_time
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        let pn = r.next_ack_pn;
        r.next_ack_pn += 1;
        let ranges = r.received.ranges();
        let frames =
            f.rx.as_mut()
                .map_or(Frames::default(), |rx| rx.on_send(pn, now));
        let at = now + f.one_way;
        self.push(
            at,
            Ev::Ack(
                i,
                Box::new(AckFrame {
                    pn,
                    ranges,
                    ack_delay,
                    frames,
                }),
            ),
        );
    }

    fn on_ack(&mut self, i: usize, frame: &AckFrame, now: Instant) {
        let AckFrame {
            pn,
            ref ranges,
            ack_delay,
            frames,
        } = *frame;
        let t = self.t_ms(now);
        let f = &mut self.flows[i];
        let Some(sender) = f.sender.as_mut() else {
            return;
        };
        if let Some(max_data) = frames.max_data {
            sender.grant_credit(max_data);
        }
        f.recorder.ack_received(t, pn, ranges, ms(ack_delay));
        let out = sender.on_ack(ranges, ack_delay, now);
        for &lost in &out.lost {
            f.recorder.lost(t, lost);
        }
        let rtt = &sender.rtt;
        f.recorder.metrics(
            t,
            out.rtt_sample.then(|| ms(rtt.latest_rtt)),
            ms(rtt.smoothed_rtt),
            ms(rtt.min_rtt),
            sender.cc().congestion_window() as u64,
            sender.bytes_in_flight() as u64,
        );
        let state = sender.state(now);
        f.recorder.state(t, state);
        self.check_done(i, now);
    }

    fn on_loss_timer(&mut self, i: usize, now: Instant) {
        let t = self.t_ms(now);
        let f = &mut self.flows[i];
        if f.timer_event_at == Some(now) {
            f.timer_event_at = None;
        }
        match f.timer_at {
            Some(at) if at == now => {}
            Some(at) if at > now => {
                // The timer moved later since this event was queued.
                if f.timer_event_at.is_none() {
                    f.timer_event_at = Some(at);
                    self.push(at, Ev::LossTimer(i));
                }
                return;
            }
            _ => return,
        }
        f.timer_at = None;
        let Some(sender) = f.sender.as_mut() else {
            return;
        };
        let lost = sender.on_loss_timer(now);
        for &pn in &lost {
            f.recorder.lost(t, pn);
        }
        let state = sender.state(now);
        f.recorder.state(t, state);
        self.try_send(i, now);
        self.arm_timer(i);
    }

    fn arm_timer(&mut self, i: usize) {
        let f = &mut self.flows[i];
        let Some(sender) = f.sender.as_ref() else {
            return;
        };
        let next = sender.loss_timer();
        f.timer_at = next;
        if let Some(at) = next {
            if f.timer_event_at.is_none_or(|queued| at < queued) {
                f.timer_event_at = Some(at);
                self.push(at, Ev::LossTimer(i));
            }
        }
    }

    fn check_done(&mut self, i: usize, now: Instant) {
        let f = &mut self.flows[i];
        if f.done_at.is_some() {
            return;
        }
        let finished = f.sender.as_ref().is_some_and(|s| s.finished(now));
        if finished || now >= f.deadline {
            f.done_at = Some(now);
        }
    }

    fn finish(self) -> Result<SimOutput, String> {
        let config = self.config;
        let end = self
            .flows
            .iter()
            .filter_map(|f| f.done_at)
            .max()
            .unwrap_or(self.epoch);
        let mut stats = Vec::new();
        let mut flows = Vec::new();
        for ((state, flow), i) in self.flows.into_iter().zip(&config.flows).zip(1..) {
            let sender = state.sender.as_ref();
            stats.push(FlowStats {
                sent_packets: sender.map_or(0, |s| s.sent_packets()),
                lost_packets: sender.map_or(0, |s| s.lost_packets()),
                spurious_losses: sender.map_or(0, |s| s.spurious_losses()),
                probe_timeouts: sender.map(Sender::probe_timeouts),
                loss_detection_timeouts: sender.map_or(0, |s| s.loss_detection_timeouts()),
                stream_bytes: sender.map_or(0, |s| s.stream_bytes_sent()),
                finished_s: match flow.end {
                    FlowEnd::Bytes(_) => state
                        .done_at
                        .filter(|_| sender.is_some_and(|s| s.finished(end)))
                        .map(|t| t.saturating_duration_since(self.epoch).as_secs_f64()),
                    FlowEnd::Stop(_) => None,
                },
                time_in_levels_s: crate::queue::time_in_levels_s(state.progress.as_ref()),
                receiver_window: state.rx.as_ref().map(ReceiverControl::stats),
            });
            flows.push(SimOutput::memory_flow(state.recorder.finish()?, flow, i));
        }
        SimOutput::assemble(
            config,
            flows,
            stats,
            &self.link,
            self.events,
            end.saturating_duration_since(self.epoch),
            Vec::new(),
        )
    }
}
