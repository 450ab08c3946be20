//! The I/O layer: sockets, the flow table and the timing loop around the two
//! [`Link`] models (server→client: the bottleneck; client→server: the
//! reverse path).
//!
//! One thread does everything, so nothing is shared or locked on the data
//! path: a `mio` poll waits on the listening sockets, one connected upstream
//! socket per flow, a `timerfd` armed for the next delivery (see
//! [`crate::timer`]) and a waker for [`Stopper::stop`]. Each datagram is
//! stamped with `Instant::now()` as it is read and handed to the model; the
//! model says when it is due and the loop sends it then.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket as StdUdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use mio::net::UdpSocket;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use serde::Serialize;

use crate::model::{CrossTraffic, IntervalStats, Link, LinkConfig, Totals, Verdict};
use crate::rx;
use crate::timer::{set_min_timer_slack, set_realtime, TimerFd};
use crate::units::{Buffer, PathSpec};

const WAKER: Token = Token(0);
const TIMER: Token = Token(1);
const LISTEN_BASE: usize = 16;
const FLOW_BASE: usize = 1 << 20;
/// Datagrams read from one socket before the loop checks what is due.
const READ_BATCH: usize = 32;
/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_535;

/// Everything the emulator needs to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where clients send (port 0 picks a free port; see
    /// [`NetemHandle::listen_addrs`]).
    pub listen: SocketAddr,
    /// The server every flow is relayed to.
    pub upstream: SocketAddr,
    /// Base RTT of flows through `listen`: rtt/2 is added each way.
    pub rtt: Duration,
    /// Extra listening addresses whose flows get their own base RTT, all
    /// through the same bottleneck.
    pub paths: Vec<PathSpec>,
    /// The server→client bottleneck: rate, buffer, loss, seed, overhead.
    pub down: LinkConfig,
    /// The client→server direction: by default no rate limit and no loss.
    pub up: LinkConfig,
    /// Where to write the per-interval JSON lines, if anywhere.
    pub stats: Option<PathBuf>,
    /// Length of one stats interval (1 s).
    pub stats_interval: Duration,
    /// Busy-wait this long before each deadline instead of sleeping (0 by
    /// default: the timerfd alone is accurate enough, see the README).
    pub spin: Duration,
    /// Run the I/O thread under `SCHED_FIFO` (priority 10) if permitted
    /// (root or `CAP_SYS_NICE`); on by default. Without the permission the
    /// thread runs at normal priority and says so at `info` level.
    pub realtime: bool,
    /// Forget a flow (and close its upstream socket) after this long without
    /// traffic in either direction; `None` keeps every flow until the end.
    pub idle_timeout: Option<Duration>,
    /// `SO_RCVBUF`/`SO_SNDBUF` asked for every socket, in bytes.
    pub socket_buffer: usize,
    /// Take each datagram's arrival time from the kernel's receive
    /// timestamp (`SO_TIMESTAMPNS`) rather than from when it was read.
    pub rx_timestamps: bool,
}

impl Config {
    /// A bottleneck of `rate_bps` with `buffer`, base RTT `rtt`, no loss, no
    /// stats, no reverse rate limit.
    pub fn new(
        listen: SocketAddr,
        upstream: SocketAddr,
        rate_bps: u64,
        rtt: Duration,
        buffer: Buffer,
    ) -> Self {
        Self {
            listen,
            upstream,
            rtt,
            paths: Vec::new(),
            down: LinkConfig {
                rate_bps: Some(rate_bps),
                buffer: Some(buffer),
                ..LinkConfig::default()
            },
            up: LinkConfig {
                seed: 0x9e37_79b9_7f4a_7c15,
                ..LinkConfig::default()
            },
            stats: None,
            stats_interval: Duration::from_secs(1),
            spin: Duration::ZERO,
            realtime: true,
            idle_timeout: None,
            socket_buffer: 4 << 20,
            rx_timestamps: true,
        }
    }
}

/// Cross-traffic datagrams offered to the bottleneck, and how many it dropped.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CrossTotals {
    /// Datagrams that arrived at the bottleneck.
    pub packets: u64,
    /// Of those, dropped (buffer full, or random loss).
    pub drops: u64,
}

/// What happened over the whole run, returned when the emulator stops.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// How long it ran.
    pub duration_s: f64,
    /// CPU time its thread used, in seconds.
    pub cpu_s: f64,
    /// Flows (client addresses) seen.
    pub flows: u64,
    /// The server→client direction.
    pub down: Totals,
    /// The client→server direction.
    pub up: Totals,
    /// Datagrams that could not be sent on (socket errors).
    pub send_errors: u64,
    /// Receive errors (e.g. ICMP port unreachable while no server runs).
    pub recv_errors: u64,
    /// The cross traffic's datagrams (see [`crate::model::CrossTraffic`]);
    /// they are counted in `down` too.
    pub cross_traffic: CrossTotals,
    /// How late datagrams were sent on, against their due time, over the run.
    pub lateness_us: Lateness,
    /// How long datagrams waited in the emulator's sockets before it read
    /// them (from kernel timestamps; compensated in their delivery time).
    pub rx_wait_us: Lateness,
}

/// A distribution of the emulator's own timing errors, in microseconds:
/// how late it sent datagrams on compared with the time the model said they
/// were due (`lateness_us`), or how long they waited in its sockets before
/// being read (`rx_wait_us`). Both directions together.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Lateness {
    /// Datagrams measured.
    pub count: u64,
    /// Median, in microseconds.
    pub p50: f64,
    /// 99th percentile, in microseconds.
    pub p99: f64,
    /// 99.9th percentile, in microseconds.
    pub p999: f64,
    /// Largest, in microseconds.
    pub max: f64,
}

impl Lateness {
    fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let us = |ns: u64| ns as f64 / 1e3;
        Self {
            count: h.len(),
            p50: us(h.value_at_quantile(0.5)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        }
    }
}

/// A histogram of nanoseconds from 1 ns to 100 s, 2 significant digits.
fn lateness_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 2).expect("valid histogram bounds")
}

/// Stops a running emulator; cheap to clone and to send to another thread.
#[derive(Clone)]
pub struct Stopper {
    flag: Arc<AtomicBool>,
    waker: Arc<Waker>,
}

impl Stopper {
    /// Asks the emulator to stop: it writes its last stats line and ends.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
    }
}

/// The emulator.
pub struct Netem;

impl Netem {
    /// Binds every socket and starts the emulator on its own thread. Errors
    /// (address in use, stats file not writable) are returned here, before
    /// anything runs.
    pub fn spawn(config: Config) -> io::Result<NetemHandle> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let timer = TimerFd::new()?;
        poll.registry()
            .register(&mut SourceFd(&timer.as_raw_fd()), TIMER, Interest::READABLE)?;

        let mut paths = vec![PathSpec {
            listen: config.listen,
            rtt: config.rtt,
        }];
        paths.extend(config.paths.iter().copied());
        let mut listeners = Vec::with_capacity(paths.len());
        let mut listen_addrs = Vec::with_capacity(paths.len());
        for (i, p) in paths.iter().enumerate() {
            let std_sock = StdUdpSocket::bind(p.listen).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot listen on {}: {e}", p.listen))
            })?;
            set_buffers(&std_sock, config.socket_buffer);
            if config.rx_timestamps {
                rx::enable_timestamps(std_sock.as_raw_fd())?;
            }
            std_sock.set_nonblocking(true)?;
            listen_addrs.push(std_sock.local_addr()?);
            let mut sock = UdpSocket::from_std(std_sock);
            poll.registry()
                .register(&mut sock, Token(LISTEN_BASE + i), Interest::READABLE)?;
            listeners.push(Listener {
                socket: sock,
                owd: p.rtt / 2,
            });
        }

        let stats = match &config.stats {
            Some(path) => Some(BufWriter::new(File::create(path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot create stats file {}: {e}", path.display()),
                )
            })?)),
            None => None,
        };

        let flag = Arc::new(AtomicBool::new(false));
        let stopper = Stopper {
            flag: flag.clone(),
            waker,
        };
        let relay = Relay {
            down: Link::new(&config.down),
            up: Link::new(&config.up),
            cross: CrossTraffic::new(&config.down),
            cross_totals: CrossTotals::default(),
            poll,
            timer,
            listeners,
            flows: HashMap::new(),
            flow_by_client: HashMap::new(),
            next_flow: 0,
            buf: vec![0; MAX_DATAGRAM],
            stats,
            send_errors: 0,
            recv_errors: 0,
            interval_send_errors: 0,
            late_interval: lateness_histogram(),
            late_total: lateness_histogram(),
            rx_interval: lateness_histogram(),
            rx_total: lateness_histogram(),
            config,
            stop: flag,
        };
        let thread = std::thread::Builder::new()
            .name("lbe-netem".into())
            .spawn(move || relay.run())?;
        Ok(NetemHandle {
            listen_addrs,
            stopper,
            thread: Some(thread),
        })
    }
}

/// A running emulator. Dropping it stops it.
pub struct NetemHandle {
    listen_addrs: Vec<SocketAddr>,
    stopper: Stopper,
    thread: Option<JoinHandle<io::Result<Summary>>>,
}

impl NetemHandle {
    /// The main listening address (`--listen`), with its real port.
    pub fn listen_addr(&self) -> SocketAddr {
        self.listen_addrs[0]
    }

    /// Every listening address: `--listen` first, then each `--path` in the
    /// order given.
    pub fn listen_addrs(&self) -> &[SocketAddr] {
        &self.listen_addrs
    }

    /// A handle that can stop the emulator from elsewhere.
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Whether the emulator thread has ended (stopped, or failed).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops the emulator and waits for it to flush its stats.
    pub fn stop(mut self) -> io::Result<Summary> {
        self.stopper.stop();
        self.join_thread()
    }

    /// Waits until the emulator ends (after [`Stopper::stop`], or an error).
    pub fn join(mut self) -> io::Result<Summary> {
        self.join_thread()
    }

    fn join_thread(&mut self) -> io::Result<Summary> {
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("lbe-netem thread panicked"))),
            None => Err(io::Error::other("lbe-netem already joined")),
        }
    }
}

impl Drop for NetemHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stopper.stop();
            let _ = self.join_thread();
        }
    }
}

struct Listener {
    socket: UdpSocket,
    owd: Duration,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
struct FlowCounters {
    down_delivered_packets: u64,
    down_delivered_payload_bytes: u64,
    down_drops_buffer: u64,
    down_drops_loss: u64,
    up_delivered_packets: u64,
    up_delivered_payload_bytes: u64,
    up_drops: u64,
}

impl FlowCounters {
    fn is_zero(&self) -> bool {
        self.down_delivered_packets == 0
            && self.down_drops_buffer == 0
            && self.down_drops_loss == 0
            && self.up_delivered_packets == 0
            && self.up_drops == 0
    }
}

struct Flow {
    client: SocketAddr,
    path: usize,
    socket: UdpSocket,
    owd: Duration,
    last_active: Instant,
    counters: FlowCounters,
}

/// Server→client datagram: sent from the listening socket of `path`.
struct DownItem {
    flow: u64,
    path: usize,
    client: SocketAddr,
    data: Vec<u8>,
}

/// What the bottleneck carries server→client: a flow's datagram, or one of
/// the cross traffic's, which is discarded on delivery.
enum Down {
    Flow(DownItem),
    Cross,
}

/// Client→server datagram: sent from the flow's upstream socket.
struct UpItem {
    flow: u64,
    data: Vec<u8>,
}

#[derive(Serialize)]
struct FlowLine {
    id: u64,
    client: SocketAddr,
    listen: SocketAddr,
    #[serde(flatten)]
    counters: FlowCounters,
}

#[derive(Serialize)]
struct StatsLine {
    /// Seconds since the emulator started, at the end of the interval.
    t_s: f64,
    /// Wall-clock time at the end of the interval (ms since the Unix epoch),
    /// to line up with qlog's reference time.
    unix_ms: f64,
    down: IntervalStats,
    up: IntervalStats,
    flows_active: usize,
    flows: Vec<FlowLine>,
    send_errors: u64,
    /// How late datagrams were sent on in this interval.
    lateness_us: Lateness,
    /// How long datagrams waited in the sockets before being read.
    rx_wait_us: Lateness,
}

struct Relay {
    config: Config,
    stop: Arc<AtomicBool>,
    down: Link<Down>,
    up: Link<UpItem>,
    cross: Option<CrossTraffic>,
    cross_totals: CrossTotals,
    poll: Poll,
    timer: TimerFd,
    listeners: Vec<Listener>,
    flows: HashMap<u64, Flow>,
    flow_by_client: HashMap<(usize, SocketAddr), u64>,
    next_flow: u64,
    buf: Vec<u8>,
    stats: Option<BufWriter<File>>,
    send_errors: u64,
    recv_errors: u64,
    interval_send_errors: u64,
    late_interval: Histogram<u64>,
    late_total: Histogram<u64>,
    rx_interval: Histogram<u64>,
    rx_total: Histogram<u64>,
}

enum ReadResult {
    Drained,
    More,
}

impl Relay {
    fn run(mut self) -> io::Result<Summary> {
        if let Err(e) = set_min_timer_slack() {
            log::warn!("cannot set timer slack: {e}");
        }
        if self.config.realtime {
            match set_realtime(10) {
                Ok(()) => log::info!("I/O thread runs under SCHED_FIFO"),
                Err(e) => log::info!("cannot use SCHED_FIFO ({e}); running at normal priority"),
            }
        }
        let start = Instant::now();
        // Both links' first stats interval starts now.
        self.down.take_interval(start);
        self.up.take_interval(start);
        let interval = self.config.stats_interval.max(Duration::from_millis(1));
        let mut next_stats = start + interval;
        let mut events = Events::with_capacity(256);
        let mut pending: Vec<Token> = Vec::new();
        let mut still: Vec<Token> = Vec::new();

        let result = loop {
            if self.stop.load(Ordering::SeqCst) {
                break Ok(());
            }
            let now = Instant::now();
            self.deliver_due(now);
            self.inject_cross_traffic(now);
            if now >= next_stats {
                if let Err(e) = self.write_stats(start, now) {
                    break Err(e);
                }
                self.expire_idle(now);
                next_stats += interval;
                if next_stats <= now {
                    next_stats = now + interval;
                }
            }

            let deadline = [
                self.down.next_delivery(),
                self.up.next_delivery(),
                self.cross.as_mut().map(|c| c.next_arrival(now)),
                Some(next_stats),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(next_stats);
            let timeout = if pending.is_empty() {
                let wait = deadline.saturating_duration_since(Instant::now());
                if wait <= self.config.spin {
                    Some(Duration::ZERO)
                } else {
                    self.timer.arm(wait - self.config.spin)?;
                    None
                }
            } else {
                Some(Duration::ZERO)
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break Err(e);
            }
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {}
                    TIMER => self.timer.clear(),
                    t => {
                        if !pending.contains(&t) {
                            pending.push(t);
                        }
                    }
                }
            }
            for t in pending.drain(..) {
                if let ReadResult::More = self.read_socket(t) {
                    still.push(t);
                }
            }
            std::mem::swap(&mut pending, &mut still);
        };

        let end = Instant::now();
        self.deliver_due(end);
        let write_result = self
            .write_stats(start, end)
            .and_then(|()| match &mut self.stats {
                Some(w) => w.flush(),
                None => Ok(()),
            });
        result?;
        write_result?;
        Ok(Summary {
            duration_s: end.duration_since(start).as_secs_f64(),
            cpu_s: thread_cpu_time().as_secs_f64(),
            flows: self.next_flow,
            down: self.down.totals().clone(),
            up: self.up.totals().clone(),
            send_errors: self.send_errors,
            recv_errors: self.recv_errors,
            cross_traffic: self.cross_totals.clone(),
            lateness_us: Lateness::of(&self.late_total),
            rx_wait_us: Lateness::of(&self.rx_total),
        })
    }

    /// Sends every datagram due by `now`, both directions.
    fn deliver_due(&mut self, now: Instant) {
        while let Some(d) = self.down.poll(now) {
            self.record_lateness(d.due);
            let (payload, item) = match d.item {
                Down::Flow(item) => (d.payload, item),
                Down::Cross => continue,
            };
            let listener = &self.listeners[item.path];
            match listener.socket.send_to(&item.data, item.client) {
                Ok(_) => {}
                Err(e) => {
                    log::debug!("send to client {} failed: {e}", item.client);
                    self.send_errors += 1;
                    self.interval_send_errors += 1;
                }
            }
            if let Some(f) = self.flows.get_mut(&item.flow) {
                f.counters.down_delivered_packets += 1;
                f.counters.down_delivered_payload_bytes += payload as u64;
            }
        }
        while let Some(d) = self.up.poll(now) {
            self.record_lateness(d.due);
            let (item, payload) = (d.item, d.payload);
            let Some(f) = self.flows.get_mut(&item.flow) else {
                continue;
            };
            f.counters.up_delivered_packets += 1;
            f.counters.up_delivered_payload_bytes += payload as u64;
            if let Err(e) = f.socket.send(&item.data) {
                log::debug!("send to upstream for {} failed: {e}", f.client);
                self.send_errors += 1;
                self.interval_send_errors += 1;
            }
        }
    }

    /// Offers the bottleneck every cross-traffic datagram due by `now`, at
    /// its own arrival time.
    fn inject_cross_traffic(&mut self, now: Instant) {
        let Some(cross) = &mut self.cross else {
            return;
        };
        while let Some(at) = cross.take_due(now) {
            self.cross_totals.packets += 1;
            if let Verdict::DroppedBuffer | Verdict::DroppedLoss =
                self.down
                    .enqueue(at, cross.payload(), Duration::ZERO, Down::Cross)
            {
                self.cross_totals.drops += 1;
            }
        }
    }

    /// The arrival time of `r`, read just now; records its wait.
    fn arrival(&mut self, r: &rx::Received) -> Instant {
        if let Some(w) = r.waited {
            self.rx_interval
                .saturating_record((w.as_nanos() as u64).max(1));
        }
        r.arrival(Instant::now())
    }

    fn record_lateness(&mut self, due: Instant) {
        let ns = Instant::now().saturating_duration_since(due).as_nanos();
        self.late_interval
            .saturating_record(u64::try_from(ns).unwrap_or(u64::MAX).max(1));
    }

    /// Reads up to [`READ_BATCH`] datagrams from the socket of `token`.
    fn read_socket(&mut self, token: Token) -> ReadResult {
        let t = token.0;
        if (LISTEN_BASE..LISTEN_BASE + self.listeners.len()).contains(&t) {
            self.read_listener(t - LISTEN_BASE)
        } else if t >= FLOW_BASE {
            self.read_flow((t - FLOW_BASE) as u64)
        } else {
            ReadResult::Drained
        }
    }

    fn read_listener(&mut self, path: usize) -> ReadResult {
        for _ in 0..READ_BATCH {
            let fd = self.listeners[path].socket.as_raw_fd();
            let r = match rx::recv(fd, &mut self.buf) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return ReadResult::Drained,
                Err(e) => {
                    log::debug!("recv on listener {path} failed: {e}");
                    self.recv_errors += 1;
                    continue;
                }
            };
            let Some(client) = r.from else {
                continue;
            };
            let n = r.len;
            let now = self.arrival(&r);
            let Some(id) = self.flow_for(path, client, now) else {
                continue;
            };
            let Some(flow) = self.flows.get_mut(&id) else {
                continue;
            };
            flow.last_active = now;
            let item = UpItem {
                flow: id,
                data: self.buf[..n].to_vec(),
            };
            match self.up.enqueue(now, n, flow.owd, item) {
                Verdict::Queued { .. } => {}
                Verdict::DroppedBuffer | Verdict::DroppedLoss => flow.counters.up_drops += 1,
            }
        }
        ReadResult::More
    }

    fn read_flow(&mut self, id: u64) -> ReadResult {
        for _ in 0..READ_BATCH {
            let Some(flow) = self.flows.get_mut(&id) else {
                return ReadResult::Drained;
            };
            let r = match rx::recv(flow.socket.as_raw_fd(), &mut self.buf) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return ReadResult::Drained,
                Err(e) => {
                    log::debug!("recv from upstream for {} failed: {e}", flow.client);
                    self.recv_errors += 1;
                    continue;
                }
            };
            let n = r.len;
            let now = self.arrival(&r);
            let Some(flow) = self.flows.get_mut(&id) else {
                return ReadResult::Drained;
            };
            flow.last_active = now;
            let item = DownItem {
                flow: id,
                path: flow.path,
                client: flow.client,
                data: self.buf[..n].to_vec(),
            };
            match self.down.enqueue(now, n, flow.owd, Down::Flow(item)) {
                Verdict::Queued { .. } => {}
                Verdict::DroppedBuffer => flow.counters.down_drops_buffer += 1,
                Verdict::DroppedLoss => flow.counters.down_drops_loss += 1,
            }
        }
        ReadResult::More
    }

    /// The flow of `client` on listener `path`, created on first sight with
    /// its own upstream socket.
    fn flow_for(&mut self, path: usize, client: SocketAddr, now: Instant) -> Option<u64> {
        if let Some(&id) = self.flow_by_client.get(&(path, client)) {
            return Some(id);
        }
        let id = self.next_flow;
        match self.open_upstream(Token(FLOW_BASE + id as usize)) {
            Ok(socket) => {
                self.next_flow += 1;
                if log::log_enabled!(log::Level::Info) {
                    let via = self.listeners[path].socket.local_addr();
                    let from = socket.local_addr();
                    log::info!(
                        "flow {id}: client {client} via {} (rtt {:?}) -> upstream from {}",
                        via.map_or_else(|e| e.to_string(), |a| a.to_string()),
                        self.listeners[path].owd * 2,
                        from.map_or_else(|e| e.to_string(), |a| a.to_string()),
                    );
                }
                self.flows.insert(
                    id,
                    Flow {
                        client,
                        path,
                        socket,
                        owd: self.listeners[path].owd,
                        last_active: now,
                        counters: FlowCounters::default(),
                    },
                );
                self.flow_by_client.insert((path, client), id);
                Some(id)
            }
            Err(e) => {
                log::warn!("cannot open an upstream socket for {client}: {e}");
                self.recv_errors += 1;
                None
            }
        }
    }

    fn open_upstream(&self, token: Token) -> io::Result<UdpSocket> {
        let any: SocketAddr = match self.config.upstream {
            SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let s = StdUdpSocket::bind(any)?;
        set_buffers(&s, self.config.socket_buffer);
        if self.config.rx_timestamps {
            rx::enable_timestamps(s.as_raw_fd())?;
        }
        s.connect(self.config.upstream)?;
        s.set_nonblocking(true)?;
        let mut s = UdpSocket::from_std(s);
        self.poll
            .registry()
            .register(&mut s, token, Interest::READABLE)?;
        Ok(s)
    }

    fn expire_idle(&mut self, now: Instant) {
        let Some(limit) = self.config.idle_timeout else {
            return;
        };
        let idle: Vec<u64> = self
            .flows
            .iter()
            .filter(|(_, f)| now.saturating_duration_since(f.last_active) > limit)
            .map(|(&id, _)| id)
            .collect();
        for id in idle {
            if let Some(mut f) = self.flows.remove(&id) {
                log::info!("flow {id}: client {} idle, forgotten", f.client);
                let _ = self.poll.registry().deregister(&mut f.socket);
                self.flow_by_client.remove(&(f.path, f.client));
            }
        }
    }

    fn write_stats(&mut self, start: Instant, now: Instant) -> io::Result<()> {
        let down = self.down.take_interval(now);
        let up = self.up.take_interval(now);
        let mut flows: Vec<FlowLine> = Vec::new();
        for (&id, f) in self.flows.iter_mut() {
            let c = std::mem::take(&mut f.counters);
            if !c.is_zero() {
                flows.push(FlowLine {
                    id,
                    client: f.client,
                    listen: self.listeners[f.path]
                        .socket
                        .local_addr()
                        .unwrap_or(self.config.listen),
                    counters: c,
                });
            }
        }
        let send_errors = std::mem::take(&mut self.interval_send_errors);
        let lateness_us = Lateness::of(&self.late_interval);
        let _ = self.late_total.add(&self.late_interval);
        self.late_interval.reset();
        let rx_wait_us = Lateness::of(&self.rx_interval);
        let _ = self.rx_total.add(&self.rx_interval);
        self.rx_interval.reset();
        let Some(w) = self.stats.as_mut() else {
            return Ok(());
        };
        flows.sort_by_key(|f| f.id);
        let line = StatsLine {
            t_s: now.duration_since(start).as_secs_f64(),
            unix_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64() * 1e3),
            down,
            up,
            flows_active: flows.len(),
            flows,
            send_errors,
            lateness_us,
            rx_wait_us,
        };
        serde_json::to_writer(&mut *w, &line)?;
        w.write_all(b"\n")?;
        w.flush()
    }
}

/// Asks for large socket buffers, so that bursts wait in the emulator's own
/// (measured) queue rather than overflowing the kernel's. As root the
/// `*FORCE` variants go past `rmem_max`/`wmem_max`; otherwise the kernel caps.
fn set_buffers(s: &StdUdpSocket, bytes: usize) {
    let fd = s.as_raw_fd();
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    for (force, plain) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        for opt in [force, plain] {
            // SAFETY: valid fd, pointer to a live c_int of the size given.
            let r = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    (&v as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if r == 0 {
                break;
            }
        }
    }
}

/// CPU time used so far by the calling thread.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid clock id and pointer to a live timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r < 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}
