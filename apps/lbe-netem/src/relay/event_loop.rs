//! The relay's thread: one `mio` loop that reads datagrams into the two
//! [`Link`] models, sends them on when they are due, injects cross traffic,
//! keeps the flow table (one upstream socket per client) and writes the
//! stats lines.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket as StdUdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};

use super::os::{set_buffers, thread_cpu_time};
use super::report::{
    lateness_histogram, CrossTotals, FlowCounters, FlowDropTotals, FlowLine, Lateness, StatsLine,
    Summary,
};
use super::Config;
use crate::rx;
use crate::timer::{set_min_timer_slack, set_realtime, TimerFd};
use lbe_link::{CrossTraffic, FlowDrops, Link, Verdict};

/// The waker's token ([`super::Stopper::stop`]).
pub(super) const WAKER: Token = Token(0);
/// The timerfd's token.
pub(super) const TIMER: Token = Token(1);
/// Listener `i` has token `LISTEN_BASE + i`.
const LISTEN_BASE: usize = 16;
/// Flow `id`'s upstream socket has token `FLOW_BASE + id`.
const FLOW_BASE: usize = 1 << 20;
/// Datagrams read from one socket before the others get a turn.
const READ_BATCH: usize = 32;
/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_535;

/// Which socket a poll token stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// The listening socket of path `i` (`--listen` is 0).
    Listener(usize),
    /// The upstream socket of flow `id`.
    Flow(u64),
}

impl Source {
    /// The source of `token` with `listeners` listening sockets; `None` for
    /// the waker, the timer and unknown tokens.
    fn of(token: Token, listeners: usize) -> Option<Self> {
        let t = token.0;
        if (LISTEN_BASE..LISTEN_BASE + listeners).contains(&t) {
            Some(Source::Listener(t - LISTEN_BASE))
        } else if t >= FLOW_BASE {
            Some(Source::Flow((t - FLOW_BASE) as u64))
        } else {
            None
        }
    }

    /// The token to register this source with.
    pub(super) fn token(self) -> Token {
        match self {
            Source::Listener(i) => Token(LISTEN_BASE + i),
            Source::Flow(id) => Token(FLOW_BASE + id as usize),
        }
    }
}

/// A listening socket, the one-way delay of its flows and the server they
/// are relayed to.
pub(super) struct Listener {
    pub(super) socket: UdpSocket,
    pub(super) owd: Duration,
    pub(super) upstream: SocketAddr,
}

struct Flow {
    client: SocketAddr,
    path: usize,
    socket: UdpSocket,
    owd: Duration,
    last_active: Instant,
    counters: FlowCounters,
    /// Its key at the bottleneck (FQ-CoDel's flow hash, the per-flow drop
    /// counts): [`flow_key`].
    key: u64,
    /// The bottleneck's drops of this flow up to the last stats line.
    reported_drops: FlowDrops,
    /// How many times the flow was rebound ([`Config::rebind_at`]): its
    /// datagrams from the server carry the binding they came through.
    binding: u32,
}

/// The flow key of a client's datagrams at the server→client bottleneck:
/// a hash (FNV-1a, 64 bits) of their 5-tuple as a router there sees it,
/// (UDP, server address, client address), the server being the listener's
/// upstream and the client the address the relay sends to.
pub(super) fn flow_key(server: SocketAddr, client: SocketAddr) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&[17]);
    for a in [server, client] {
        match a.ip() {
            std::net::IpAddr::V4(ip) => eat(&ip.octets()),
            std::net::IpAddr::V6(ip) => eat(&ip.octets()),
        }
        eat(&a.port().to_be_bytes());
    }
    h
}

/// A socket's address for a log line, or why it has none.
fn addr_text(addr: io::Result<SocketAddr>) -> String {
    addr.map_or_else(|e| e.to_string(), |a| a.to_string())
}

/// Server→client datagram: sent from the listening socket of `path`.
struct DownItem {
    flow: u64,
    /// The flow's binding when the server sent it ([`Flow::binding`]).
    binding: u32,
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

/// The emulator's state, owned by its thread.
pub(super) struct Relay {
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
    /// Server→client datagrams dropped because their flow was rebound
    /// since the server sent them.
    rebind_drops: u64,
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
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        config: Config,
        stop: Arc<AtomicBool>,
        poll: Poll,
        timer: TimerFd,
        listeners: Vec<Listener>,
        stats: Option<BufWriter<File>>,
    ) -> Self {
        Self {
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
            rebind_drops: 0,
            interval_send_errors: 0,
            late_interval: lateness_histogram(),
            late_total: lateness_histogram(),
            rx_interval: lateness_histogram(),
            rx_total: lateness_histogram(),
            config,
            stop,
        }
    }

    pub(super) fn run(mut self) -> io::Result<Summary> {
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
        // The links' changes count from now.
        self.down.start_at(start);
        self.up.start_at(start);
        // Both links' first stats interval starts now.
        self.down.take_interval(start);
        self.up.take_interval(start);
        let interval = self.config.stats_interval.max(Duration::from_millis(1));
        let mut next_stats = start + interval;
        let mut rebind_at = self.config.rebind_at.map(|d| start + d);
        let mut events = Events::with_capacity(256);
        let mut pending: Vec<Token> = Vec::new();
        let mut still: Vec<Token> = Vec::new();

        let result = loop {
            if self.stop.load(Ordering::SeqCst) {
                break Ok(());
            }
            let now = Instant::now();
            if rebind_at.is_some_and(|at| now >= at) {
                rebind_at = None;
                self.rebind_flows();
            }
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
                rebind_at,
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
        if self.config.rebind_at.is_some() {
            log::info!(
                "{} datagrams from the servers dropped: sent to a port rebound since",
                self.rebind_drops
            );
        }
        let write_result = self
            .write_stats(start, end)
            .and_then(|()| match &mut self.stats {
                Some(w) => w.flush(),
                None => Ok(()),
            });
        result?;
        write_result?;
        let mut flow_drops: Vec<FlowDropTotals> = self
            .flows
            .iter()
            .map(|(&id, f)| FlowDropTotals {
                id,
                client: f.client,
                drops: self.down.flow_drops(f.key),
            })
            .collect();
        flow_drops.sort_by_key(|f| f.id);
        Ok(Summary {
            aqm: self.down.aqm_name(),
            flow_drops,
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
            // Sent to the port the flow had before it was rebound: the
            // NAT no longer has that mapping.
            if self
                .flows
                .get(&item.flow)
                .is_some_and(|f| f.binding != item.binding)
            {
                self.rebind_drops += 1;
                continue;
            }
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
            if let Verdict::DroppedBuffer | Verdict::DroppedLoss | Verdict::DroppedAqm = self
                .down
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
        match Source::of(token, self.listeners.len()) {
            Some(Source::Listener(path)) => self.read_listener(path),
            Some(Source::Flow(id)) => self.read_flow(id),
            None => ReadResult::Drained,
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
                Verdict::Queued { .. } | Verdict::Enqueued => {}
                Verdict::DroppedBuffer | Verdict::DroppedLoss | Verdict::DroppedAqm => {
                    flow.counters.up_drops += 1
                }
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
                binding: flow.binding,
                path: flow.path,
                client: flow.client,
                data: self.buf[..n].to_vec(),
            };
            // Buffer and AQM drops are counted by the link per flow key
            // (FQ-CoDel's overflow and CoDel's drops hit datagrams that
            // arrived earlier): see write_stats.
            if let Verdict::DroppedLoss =
                self.down
                    .enqueue_flow(now, flow.key, n, flow.owd, Down::Flow(item))
            {
                flow.counters.down_drops_loss += 1;
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
        let upstream = self.listeners[path].upstream;
        match self.open_upstream(Source::Flow(id).token(), upstream) {
            Ok(socket) => {
                self.next_flow += 1;
                if log::log_enabled!(log::Level::Info) {
                    log::info!(
                        "flow {id}: client {client} via {} (rtt {:?}) -> upstream {upstream} from {}",
                        addr_text(self.listeners[path].socket.local_addr()),
                        self.listeners[path].owd * 2,
                        addr_text(socket.local_addr()),
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
                        key: flow_key(upstream, client),
                        reported_drops: FlowDrops::default(),
                        binding: 0,
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

    fn open_upstream(&self, token: Token, upstream: SocketAddr) -> io::Result<UdpSocket> {
        let any: SocketAddr = match upstream {
            SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let s = StdUdpSocket::bind(any)?;
        set_buffers(&s, self.config.socket_buffer);
        if self.config.rx_timestamps {
            rx::enable_timestamps(s.as_raw_fd())?;
        }
        s.connect(upstream)?;
        s.set_nonblocking(true)?;
        let mut s = UdpSocket::from_std(s);
        self.poll
            .registry()
            .register(&mut s, token, Interest::READABLE)?;
        Ok(s)
    }

    /// Gives every flow a new upstream socket (a new source port towards
    /// its server) and closes the old one: [`Config::rebind_at`]. What the
    /// server sent to the old port and the bottleneck still holds is
    /// dropped when it is due. A flow whose new socket cannot be opened
    /// keeps its old one (logged).
    fn rebind_flows(&mut self) {
        let mut ids: Vec<u64> = self.flows.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let upstream = self.listeners[self.flows[&id].path].upstream;
            // The old socket leaves the poll first: the new one takes its
            // token.
            let flow = self.flows.get_mut(&id).expect("listed above");
            let _ = self.poll.registry().deregister(&mut flow.socket);
            match self.open_upstream(Source::Flow(id).token(), upstream) {
                Ok(socket) => {
                    let flow = self.flows.get_mut(&id).expect("listed above");
                    let old = std::mem::replace(&mut flow.socket, socket);
                    flow.binding += 1;
                    log::info!(
                        "flow {id}: client {} rebound: upstream {upstream} now from {} (was {})",
                        flow.client,
                        addr_text(flow.socket.local_addr()),
                        addr_text(old.local_addr()),
                    );
                }
                Err(e) => {
                    log::warn!("flow {id}: cannot rebind (keeps its socket): {e}");
                    let flow = self.flows.get_mut(&id).expect("listed above");
                    let token = Source::Flow(id).token();
                    if let Err(e) =
                        self.poll
                            .registry()
                            .register(&mut flow.socket, token, Interest::READABLE)
                    {
                        log::warn!("flow {id}: cannot poll its socket again: {e}");
                    }
                }
            }
        }
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
            let drops = self.down.flow_drops(f.key);
            f.counters.down_drops_buffer = drops.buffer - f.reported_drops.buffer;
            f.counters.down_drops_aqm = drops.aqm - f.reported_drops.aqm;
            f.reported_drops = drops;
            let c = std::mem::take(&mut f.counters);
            if !c.is_zero() {
                flows.push(FlowLine {
                    id,
                    client: f.client,
                    listen: self.listeners[f.path]
                        .socket
                        .local_addr()
                        .unwrap_or(self.config.listen),
                    upstream: self.listeners[f.path].upstream,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_sockets_and_back() {
        assert_eq!(Source::of(WAKER, 2), None);
        assert_eq!(Source::of(TIMER, 2), None);
        assert_eq!(Source::of(Token(16), 2), Some(Source::Listener(0)));
        assert_eq!(Source::of(Token(17), 2), Some(Source::Listener(1)));
        assert_eq!(Source::of(Token(18), 2), None, "only two listeners");
        assert_eq!(Source::of(Token(1 << 20), 2), Some(Source::Flow(0)));
        for source in [Source::Listener(1), Source::Flow(0), Source::Flow(12_345)] {
            assert_eq!(Source::of(source.token(), 2), Some(source));
        }
    }

    #[test]
    fn the_flow_key_hashes_the_five_tuple() {
        let server: SocketAddr = "127.0.0.1:4433".parse().unwrap();
        let a: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:5001".parse().unwrap();
        assert_eq!(flow_key(server, a), flow_key(server, a));
        assert_ne!(flow_key(server, a), flow_key(server, b));
        assert_ne!(flow_key(server, a), flow_key(a, server));
        // FNV-1a of the bytes 17, 127.0.0.1, 4433, 127.0.0.1, 5000.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in [17u8, 127, 0, 0, 1, 0x11, 0x51, 127, 0, 0, 1, 0x13, 0x88] {
            h = (h ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        }
        assert_eq!(flow_key(server, a), h);
    }
}
