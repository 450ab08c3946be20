//! The sans-IO model of one direction of the emulated path: random loss, a
//! drop-tail FIFO served at a fixed rate, then a propagation delay line.
//!
//! Nothing here reads a clock or touches a socket: every call takes `now`,
//! and the same sequence of calls always gives the same result (the random
//! loss is drawn from a generator seeded by [`LinkConfig::seed`]). The I/O
//! layer (`lbe-netem`'s relay in real time, `lbe-sim`'s event loop in
//! virtual time) feeds it datagrams as they arrive and asks it what is due;
//! unit tests drive it event by event.
//!
//! # Timing
//!
//! A datagram of `payload` bytes counts as `wire = payload + overhead` bytes
//! (see [`LinkConfig::overhead`]). Arriving at `now`, it is dropped at random
//! with probability `loss`; otherwise it is dropped if the bytes already in
//! the buffer plus its own would exceed the capacity (drop-tail); otherwise
//! its serialisation ends at
//!
//! ```text
//! departure = max(now, previous departure) + wire * 8 / rate
//! ```
//!
//! (kept exact in integer nanoseconds: the sub-nanosecond remainders are
//! carried from one datagram to the next while the link stays busy, so a
//! saturated link delivers exactly `rate` over any long interval), and it is
//! handed to the receiver at `departure + delay`, where `delay` is the one-way
//! propagation delay of its flow. The buffer holds a datagram from its
//! arrival until its departure, the one being serialised included.
//!
//! Without a rate the link is a pure delay line: `departure = now`.
//!
//! # Queue disciplines and bursty loss
//!
//! With [`LinkConfig::aqm`] other than the FIFO (CoDel, FQ-CoDel, PIE:
//! [`crate::aqm`]), a datagram's departure is not known on arrival: the
//! discipline holds it, and the link dequeues the next datagram when the
//! previous one's serialisation ends (CoDel decides on its sojourn time
//! then), serialises it at the line rate (the same arithmetic, remainders
//! carried), and hands it to the delay line. [`Link::enqueue_flow`] says
//! which flow a datagram belongs to (FQ-CoDel's flow key; per-flow drop
//! counts for every discipline). The buffer holds the queued datagrams and
//! the one being serialised; without a rate there is no queue and the AQM
//! has nothing to do.
//!
//! With [`LinkConfig::gilbert_elliott`] the random loss is the
//! Gilbert–Elliott channel ([`crate::loss`]) instead of independent losses
//! of probability `loss`.
//!
//! # Links that change
//!
//! [`LinkConfig::variation`] adds jitter, aggregation, a trace-driven rate
//! and changes over time ([`crate::variation`] states their rules). Times
//! of changes count from the link's start: [`Link::start_at`], else its
//! first datagram. Without them the link runs the arithmetic above
//! unchanged.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};

use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use crate::aqm::{Admit, Aqm, Discipline, DropReason, Drops, Packet};
use crate::loss::{GeChannel, GilbertElliott};
use crate::random::uniform;
use crate::stats::{FlowDrops, IntervalStats, Totals};
use crate::trace::TRACE_OPPORTUNITY_BYTES;
use crate::units::Buffer;
use crate::variation::LinkVariation;

/// Bytes of IPv4 (20) and UDP (8) headers: the default per-datagram overhead
/// counted on top of the UDP payload.
pub const IPV4_UDP_OVERHEAD: u32 = 28;

/// How one direction of the path behaves.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Line rate in bits per second; `None` for no rate limit (a pure delay
    /// line, with no queue).
    pub rate_bps: Option<u64>,
    /// Buffer capacity; `None` for unlimited. A time is converted to bytes at
    /// the line rate (and means unlimited without a rate).
    pub buffer: Option<Buffer>,
    /// Probability in [0, 1] that a datagram is dropped at random on arrival,
    /// before the buffer (as netem does): a lost datagram uses no capacity.
    pub loss: f64,
    /// Seed of the loss generator.
    pub seed: u64,
    /// Bytes counted per datagram on top of its UDP payload, for the rate and
    /// the buffer: 28 by default (IPv4 + UDP headers), so that `rate` is the
    /// IP-level rate of a real link.
    pub overhead: u32,
    /// Mean rate of unresponsive cross traffic through this direction's
    /// bottleneck, bits per second at the IP level (see
    /// [`CrossTraffic`](crate::cross_traffic::CrossTraffic));
    /// `None` for none.
    pub cross_traffic_bps: Option<u64>,
    /// The queue discipline; the drop-tail FIFO by default.
    pub aqm: Aqm,
    /// Bursty loss: the Gilbert–Elliott channel replaces the independent
    /// random loss (`loss` is then ignored).
    pub gilbert_elliott: Option<GilbertElliott>,
    /// Jitter, aggregation, a trace-driven rate, changes over time; none
    /// by default.
    pub variation: LinkVariation,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            rate_bps: None,
            buffer: None,
            loss: 0.0,
            seed: 0,
            overhead: IPV4_UDP_OVERHEAD,
            cross_traffic_bps: None,
            aqm: Aqm::Fifo,
            gilbert_elliott: None,
            variation: LinkVariation::default(),
        }
    }
}

/// What became of a datagram given to [`Link::enqueue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted: it leaves the bottleneck at `departure` and reaches the
    /// receiver at `delivery`.
    Queued {
        /// End of its serialisation.
        departure: Instant,
        /// When it is handed to the receiver.
        delivery: Instant,
    },
    /// Accepted by a queue discipline other than the FIFO: its departure
    /// is decided when it reaches the head (it may still be dropped then).
    Enqueued,
    /// Dropped because the buffer was full.
    DroppedBuffer,
    /// Dropped by the random loss.
    DroppedLoss,
    /// Dropped on arrival by the AQM's control law (PIE's early drop).
    DroppedAqm,
}

/// A datagram handed back by [`Link::poll`].
#[derive(Debug)]
pub struct Delivery<T> {
    /// What was given to [`Link::enqueue`].
    pub item: T,
    /// Its UDP payload size.
    pub payload: usize,
    /// When it was due (its delivery time).
    pub due: Instant,
}

/// A datagram in the delay line, ordered by delivery time then arrival order.
struct InFlight<T> {
    delivery: Instant,
    seq: u64,
    payload: usize,
    item: T,
}

impl<T> PartialEq for InFlight<T> {
    fn eq(&self, other: &Self) -> bool {
        self.delivery == other.delivery && self.seq == other.seq
    }
}
impl<T> Eq for InFlight<T> {}
impl<T> PartialOrd for InFlight<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for InFlight<T> {
    // Reversed, so that the std max-heap pops the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.delivery, other.seq).cmp(&(self.delivery, self.seq))
    }
}

/// Accumulates one interval's statistics.
#[derive(Default)]
struct Accum {
    stats: IntervalStats,
    /// Integral of the buffer occupancy over time, in byte-nanoseconds.
    queue_integral: u128,
}

/// One direction of the emulated path. `T` is whatever the caller needs to
/// forward the datagram when it is delivered (its bytes, its destination).
pub struct Link<T> {
    rate_bps: Option<u64>,
    capacity: Option<u64>,
    loss: f64,
    overhead: u64,
    rng: XorShiftRng,
    /// End of the last accepted datagram's serialisation.
    busy_until: Option<Instant>,
    /// Sub-nanosecond remainder of `busy_until`, in units of 1/rate ns.
    busy_rem: u64,
    /// (departure, wire bytes) of every datagram in the buffer, in order.
    queue: VecDeque<(Instant, u64)>,
    queue_bytes: u64,
    delay_line: BinaryHeap<InFlight<T>>,
    seq: u64,
    /// The queue statistics are integrated up to this time.
    accounted_to: Option<Instant>,
    interval_start: Option<Instant>,
    accum: Accum,
    totals: Totals,
    /// The queue discipline, unless the FIFO (which the fields above run).
    aqm: Option<Discipline<T>>,
    /// Under an AQM: (departure, wire bytes) of the datagram being
    /// serialised.
    serving: Option<(Instant, u64)>,
    /// Scratch space for the discipline's drops.
    drops: Drops<T>,
    /// Drops by flow key.
    flow_drops: std::collections::HashMap<u64, FlowDrops>,
    ge: Option<GeChannel>,
    next_id: u64,
    /// Jitter, aggregation, trace, changes.
    variation: LinkVariation,
    /// Whether `variation` is other than the default (else the model runs
    /// the fixed link's arithmetic only).
    varies: bool,
    /// The link's start, from which changes and aggregation count.
    origin: Option<Instant>,
    /// The jitter's own generator, apart from the loss draws.
    jitter_rng: XorShiftRng,
    /// Latest delivery time handed out per flow (order kept).
    last_delivery: std::collections::HashMap<u64, Instant>,
    /// On a traced link: (opportunity index, wire bytes of it used).
    trace_pos: (u64, u64),
}

impl<T> Link<T> {
    /// A link that behaves as `config` says.
    pub fn new(config: &LinkConfig) -> Self {
        let variation = config.variation.clone();
        let mut config = config.clone();
        if let Some(trace) = &variation.trace {
            // The trace's mean rate sizes a buffer in time and reads the
            // queue as time; the trace itself serialises, under the FIFO.
            config.rate_bps = Some(trace.mean_rate_bps());
            config.aqm = Aqm::Fifo;
        }
        let config = &config;
        let capacity = match (config.buffer, config.rate_bps) {
            (None, _) => None,
            (Some(Buffer::Bytes(b)), _) => Some(b),
            (Some(b @ Buffer::Time(_)), Some(rate)) => Some(b.bytes_at(rate)),
            (Some(Buffer::Time(_)), None) => None,
        };
        Self {
            rate_bps: config.rate_bps.filter(|&r| r > 0),
            capacity,
            loss: config.loss.clamp(0.0, 1.0),
            overhead: u64::from(config.overhead),
            rng: XorShiftRng::seed_from_u64(config.seed),
            busy_until: None,
            busy_rem: 0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            delay_line: BinaryHeap::new(),
            seq: 0,
            accounted_to: None,
            interval_start: None,
            accum: Accum::default(),
            totals: Totals::default(),
            aqm: config
                .rate_bps
                .filter(|&r| r > 0)
                .and_then(|_| Discipline::new(&config.aqm, config.seed)),
            serving: None,
            drops: Vec::new(),
            flow_drops: std::collections::HashMap::new(),
            ge: config.gilbert_elliott.map(GeChannel::new),
            next_id: 0,
            varies: !variation.is_fixed(),
            variation,
            origin: None,
            jitter_rng: XorShiftRng::seed_from_u64(config.seed ^ 0x6a09_e667_f3bc_c908),
            last_delivery: std::collections::HashMap::new(),
            trace_pos: (0, 0),
        }
    }

    /// Sets the link's start, from which its changes and aggregation count
    /// (else its first datagram's arrival); only the first call counts.
    pub fn start_at(&mut self, t0: Instant) {
        self.origin.get_or_insert(t0);
    }

    /// The changes in force at `t`, in order.
    fn changes_by(&self, t: Instant) -> impl Iterator<Item = &crate::variation::LinkChange> {
        let origin = self.origin.unwrap_or(t);
        self.variation
            .changes
            .iter()
            .take_while(move |c| origin + c.at <= t)
    }

    /// The line rate for a serialisation starting at `t`.
    fn rate_at(&self, t: Instant) -> u64 {
        let base = self.rate_bps.unwrap_or(1);
        self.changes_by(t)
            .filter_map(|c| c.rate_bps)
            .last()
            .unwrap_or(base)
            .max(1)
    }

    /// The loss probability for an arrival at `t`.
    fn loss_at(&self, t: Instant) -> f64 {
        self.changes_by(t)
            .filter_map(|c| c.loss)
            .last()
            .unwrap_or(self.loss)
            .clamp(0.0, 1.0)
    }

    /// `t`, or the end of the outage it falls in.
    fn out_of_outage(&self, t: Instant) -> Instant {
        let Some(origin) = self.origin else {
            return t;
        };
        let mut t = t;
        for c in &self.variation.changes {
            if let Some(d) = c.outage {
                let start = origin + c.at;
                if start <= t && t < start + d {
                    t = start + d;
                }
            }
        }
        t
    }

    /// When a datagram of `flow` that leaves the bottleneck at `departure`
    /// with a one-way delay `delay` is delivered.
    fn deliver_at(&mut self, flow: u64, departure: Instant, delay: Duration) -> Instant {
        if !self.varies {
            return departure + delay;
        }
        let origin = *self.origin.get_or_insert(departure);
        let mut d = departure + delay;
        if let Some(shift) = self
            .changes_by(departure)
            .filter_map(|c| c.delay_shift_ns)
            .last()
        {
            let by = Duration::from_nanos(shift.unsigned_abs());
            d = if shift >= 0 {
                d + by
            } else {
                d.checked_sub(by).unwrap_or(departure).max(departure)
            };
        }
        let jitter = self
            .changes_by(departure)
            .filter_map(|c| c.jitter)
            .last()
            .unwrap_or(self.variation.jitter);
        if !jitter.is_zero() {
            let u1 = uniform(&mut self.jitter_rng);
            let u2 = uniform(&mut self.jitter_rng);
            d += Duration::from_nanos(self.variation.jitter_model.draw_ns(jitter, u1, u2));
        }
        d = self.out_of_outage(d);
        if !self.variation.reorder {
            let last = self.last_delivery.entry(flow).or_insert(d);
            d = d.max(*last);
            *last = d;
        }
        if let Some(agg) = self.variation.aggregate.filter(|a| !a.is_zero()) {
            let rel = d.saturating_duration_since(origin).as_nanos();
            let a = agg.as_nanos();
            d = origin + Duration::from_nanos((rel.div_ceil(a) * a) as u64);
        }
        d
    }

    /// On a traced link: the departure of `wire` bytes offered at `at`,
    /// served by the trace's opportunities in order.
    fn trace_departure(&mut self, at: Instant, wire: u64) -> Instant {
        let Some(trace) = self.variation.trace.clone() else {
            return at;
        };
        let origin = *self.origin.get_or_insert(at);
        let rel = |t: Instant| t.saturating_duration_since(origin).as_nanos() as u64;
        let time = |k: u64| origin + Duration::from_nanos(trace.opportunity_ns(k));
        let (mut k, mut used) = self.trace_pos;
        let first = trace.first_at_or_after(rel(at));
        if k < first {
            (k, used) = (first, 0);
        }
        if used >= TRACE_OPPORTUNITY_BYTES {
            (k, used) = (k + 1, 0);
        }
        let mut left = wire;
        loop {
            loop {
                let t = time(k);
                let free = self.out_of_outage(t);
                if free == t {
                    break;
                }
                (k, used) = (trace.first_at_or_after(rel(free)), 0);
            }
            let avail = TRACE_OPPORTUNITY_BYTES - used;
            if left <= avail {
                used += left;
                break;
            }
            left -= avail;
            (k, used) = (k + 1, 0);
        }
        self.trace_pos = (k, used);
        let departure = time(k);
        self.busy_until = Some(departure);
        self.busy_rem = 0;
        departure
    }

    /// The line rate, if any.
    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    /// The buffer capacity in wire bytes, if limited.
    pub fn capacity_bytes(&self) -> Option<u64> {
        self.capacity
    }

    /// The wire size of a datagram with `payload` bytes of UDP payload.
    pub fn wire_size(&self, payload: usize) -> u64 {
        payload as u64 + self.overhead
    }

    /// Serialisation time of `wire` bytes at the line rate (rounded down to
    /// the nanosecond; the link itself keeps the remainder).
    pub fn serialisation_time(&self, wire: u64) -> Duration {
        match self.rate_bps {
            Some(rate) => {
                Duration::from_nanos((u128::from(wire) * 8_000_000_000 / u128::from(rate)) as u64)
            }
            None => Duration::ZERO,
        }
    }

    /// Brings the buffer and the statistics forward to `now`: datagrams whose
    /// serialisation has ended leave the buffer.
    fn advance(&mut self, now: Instant) {
        let start = *self.accounted_to.get_or_insert(now);
        self.interval_start.get_or_insert(now);
        if now <= start {
            return;
        }
        if self.aqm.is_some() {
            self.advance_aqm(start, now);
            return;
        }
        let mut t = start;
        while let Some(&(departure, wire)) = self.queue.front() {
            if departure > now {
                break;
            }
            let dt = departure.saturating_duration_since(t).as_nanos();
            self.accum.queue_integral += u128::from(self.queue_bytes) * dt;
            t = t.max(departure);
            self.queue_bytes -= wire;
            self.accum.stats.departed_bytes += wire;
            self.queue.pop_front();
        }
        let dt = now.saturating_duration_since(t).as_nanos();
        self.accum.queue_integral += u128::from(self.queue_bytes) * dt;
        self.accounted_to = Some(now);
    }

    /// Under an AQM: runs the events from `start` to `now` in time order
    /// (the end of each serialisation, which dequeues the next datagram,
    /// and the discipline's timer), integrating the occupancy between them.
    fn advance_aqm(&mut self, start: Instant, now: Instant) {
        let mut t = start;
        loop {
            let departure = self.serving.map(|(d, _)| d);
            let timer = self.aqm.as_ref().and_then(|a| a.next_timer());
            let next = match (departure, timer) {
                (Some(d), Some(tm)) => d.min(tm),
                (Some(d), None) => d,
                (None, Some(tm)) => tm,
                (None, None) => break,
            };
            if next > now {
                break;
            }
            let dt = next.saturating_duration_since(t).as_nanos();
            self.accum.queue_integral += u128::from(self.queue_bytes) * dt;
            t = t.max(next);
            if departure == Some(next) {
                let (_, wire) = self.serving.take().unwrap_or((next, 0));
                self.queue_bytes -= wire;
                self.accum.stats.departed_bytes += wire;
                self.start_service(next);
            } else if let Some(a) = self.aqm.as_mut() {
                a.on_timer(next);
            }
        }
        let dt = now.saturating_duration_since(t).as_nanos();
        self.accum.queue_integral += u128::from(self.queue_bytes) * dt;
        self.accounted_to = Some(now);
    }

    /// Under an AQM, with the line free at `at`: dequeues the next datagram
    /// and starts its serialisation.
    fn start_service(&mut self, at: Instant) {
        let Some(aqm) = self.aqm.as_mut() else {
            return;
        };
        let mut drops = std::mem::take(&mut self.drops);
        let pkt = aqm.dequeue(at, &mut drops);
        for (d, why) in drops.drain(..) {
            self.queue_bytes -= d.wire;
            self.count_drop(d.flow, d.wire, why);
        }
        self.drops = drops;
        let Some(pkt) = pkt else {
            return;
        };
        let rate = self.rate_bps.unwrap_or(1);
        // Back to back: the remainder carries from the previous datagram.
        let (start, rem) = match self.busy_until {
            Some(b) if b >= at => (b, self.busy_rem),
            _ => (at, 0),
        };
        let (start, rem, rate) = if self.varies {
            let free = self.out_of_outage(start);
            let rem = if free == start { rem } else { 0 };
            (free, rem, self.rate_at(free))
        } else {
            (start, rem, rate)
        };
        let end = self.serialise(start, rem, pkt.wire, rate);
        self.serving = Some((end, pkt.wire));
        self.seq += 1;
        let delivery = self.deliver_at(pkt.flow, end, pkt.delay);
        self.delay_line.push(InFlight {
            delivery,
            seq: self.seq,
            payload: pkt.payload,
            item: pkt.item,
        });
    }

    /// Serialises `wire` bytes at `rate_bps` from `start`, with `rem` the
    /// sub-nanosecond remainder carried in (units of 1/rate ns): the end of
    /// the serialisation, which becomes `busy_until`, its remainder
    /// `busy_rem`.
    fn serialise(&mut self, start: Instant, rem: u64, wire: u64, rate_bps: u64) -> Instant {
        let rate = u128::from(rate_bps);
        let num = u128::from(wire) * 8_000_000_000;
        let mut ns = (num / rate) as u64;
        let mut rem = rem + (num % rate) as u64;
        if u128::from(rem) >= rate {
            ns += 1;
            rem -= rate as u64;
        }
        let end = start + Duration::from_nanos(ns);
        self.busy_until = Some(end);
        self.busy_rem = rem;
        end
    }

    fn count_drop(&mut self, flow: u64, wire: u64, why: DropReason) {
        let st = &mut self.accum.stats;
        let f = self.flow_drops.entry(flow).or_default();
        match why {
            DropReason::Buffer => {
                st.drops_buffer += 1;
                st.drops_buffer_bytes += wire;
                self.totals.drops_buffer += 1;
                f.buffer += 1;
            }
            DropReason::Aqm => {
                st.drops_aqm += 1;
                st.drops_aqm_bytes += wire;
                self.totals.drops_aqm += 1;
                f.aqm += 1;
            }
        }
    }

    /// Offers a datagram of `payload` bytes arriving at `now`, to be
    /// delivered `delay` after it leaves the bottleneck; its flow key is 0
    /// ([`Link::enqueue_flow`]).
    pub fn enqueue(&mut self, now: Instant, payload: usize, delay: Duration, item: T) -> Verdict {
        self.enqueue_flow(now, 0, payload, delay, item)
    }

    /// Offers a datagram of flow `flow` (any stable key: `lbe-netem` hashes
    /// the 5-tuple, the simulator passes the flow's index) of `payload`
    /// bytes arriving at `now`, to be delivered `delay` after it leaves the
    /// bottleneck. FQ-CoDel hashes the key into one of its queues; every
    /// discipline counts drops by key ([`Link::flow_drops`]).
    pub fn enqueue_flow(
        &mut self,
        now: Instant,
        flow: u64,
        payload: usize,
        delay: Duration,
        item: T,
    ) -> Verdict {
        // Arrivals are never accounted before what was already accounted.
        let now = self.accounted_to.map_or(now, |a| now.max(a));
        if self.varies {
            self.origin.get_or_insert(now);
        }
        self.advance(now);
        let wire = self.wire_size(payload);
        let loss = if self.varies {
            self.loss_at(now)
        } else {
            self.loss
        };
        let st = &mut self.accum.stats;
        st.arrived_packets += 1;
        st.arrived_bytes += wire;
        self.totals.arrived_packets += 1;

        let lost = match self.ge.as_mut() {
            Some(ge) => {
                let u_loss = uniform(&mut self.rng);
                let u_move = uniform(&mut self.rng);
                ge.step(u_loss, u_move)
            }
            None => loss > 0.0 && uniform(&mut self.rng) < loss,
        };
        if lost {
            st.drops_loss += 1;
            st.drops_loss_bytes += wire;
            self.totals.drops_loss += 1;
            return Verdict::DroppedLoss;
        }

        if let Some(aqm) = self.aqm.as_mut() {
            self.next_id += 1;
            let pkt = Packet {
                enqueued: now,
                wire,
                flow,
                id: self.next_id,
                payload,
                delay,
                item,
            };
            let in_service = self.serving.map_or(0, |(_, w)| w);
            let mut drops = std::mem::take(&mut self.drops);
            let rng = &mut self.rng;
            let admit = aqm.enqueue(pkt, in_service, self.capacity, || uniform(rng), &mut drops);
            // Accepted bytes first, then the datagrams pushed out for them.
            if admit == Admit::Queued {
                self.queue_bytes += wire;
            }
            for (d, why) in drops.drain(..) {
                self.queue_bytes -= d.wire;
                self.count_drop(d.flow, d.wire, why);
            }
            self.drops = drops;
            let st = &mut self.accum.stats;
            st.queue_bytes_max = st.queue_bytes_max.max(self.queue_bytes);
            let verdict = match admit {
                Admit::Queued => Verdict::Enqueued,
                Admit::Dropped(why) => {
                    self.count_drop(flow, wire, why);
                    match why {
                        DropReason::Buffer => Verdict::DroppedBuffer,
                        DropReason::Aqm => Verdict::DroppedAqm,
                    }
                }
            };
            if self.serving.is_none() {
                self.start_service(now);
            }
            return verdict;
        }
        let st = &mut self.accum.stats;

        let departure = match self.rate_bps {
            None => now,
            Some(rate) => {
                if let Some(cap) = self.capacity {
                    if self.queue_bytes + wire > cap {
                        st.drops_buffer += 1;
                        st.drops_buffer_bytes += wire;
                        self.totals.drops_buffer += 1;
                        self.flow_drops.entry(flow).or_default().buffer += 1;
                        return Verdict::DroppedBuffer;
                    }
                }
                let (start, rem) = match self.busy_until {
                    Some(b) if b > now => (b, self.busy_rem),
                    _ => (now, 0),
                };
                let departure = if !self.varies {
                    self.serialise(start, rem, wire, rate)
                } else if self.variation.trace.is_some() {
                    self.trace_departure(now, wire)
                } else {
                    let free = self.out_of_outage(start);
                    let rem = if free == start { rem } else { 0 };
                    let rate = self.rate_at(free);
                    self.serialise(free, rem, wire, rate)
                };
                self.queue.push_back((departure, wire));
                self.queue_bytes += wire;
                let st = &mut self.accum.stats;
                st.queue_bytes_max = st.queue_bytes_max.max(self.queue_bytes);
                departure
            }
        };
        let delivery = self.deliver_at(flow, departure, delay);
        self.seq += 1;
        self.delay_line.push(InFlight {
            delivery,
            seq: self.seq,
            payload,
            item,
        });
        if self.rate_bps.is_none() {
            self.accum.stats.departed_bytes += wire;
        }
        Verdict::Queued {
            departure,
            delivery,
        }
    }

    /// When [`Link::poll`] next has something to do: the next datagram due
    /// for delivery or, under an AQM with datagrams waiting, the end of the
    /// current serialisation (when the next one is dequeued; poll then, and
    /// ask again).
    pub fn next_delivery(&self) -> Option<Instant> {
        let due = self.delay_line.peek().map(|f| f.delivery);
        let dequeue = match (&self.aqm, self.serving) {
            (Some(a), Some((d, _))) if a.len() > 0 => Some(d),
            _ => None,
        };
        match (due, dequeue) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next datagram due at or before `now`.
    pub fn poll(&mut self, now: Instant) -> Option<Delivery<T>> {
        if self.aqm.is_some() {
            let now = self.accounted_to.map_or(now, |a| now.max(a));
            self.advance(now);
        }
        if self.delay_line.peek()?.delivery > now {
            return None;
        }
        let f = self.delay_line.pop()?;
        let wire = self.wire_size(f.payload);
        let st = &mut self.accum.stats;
        st.delivered_packets += 1;
        st.delivered_bytes += wire;
        st.delivered_payload_bytes += f.payload as u64;
        self.totals.delivered_packets += 1;
        self.totals.delivered_bytes += wire;
        self.totals.delivered_payload_bytes += f.payload as u64;
        Some(Delivery {
            item: f.item,
            payload: f.payload,
            due: f.delivery,
        })
    }

    /// Datagrams in the buffer or in the delay line.
    pub fn in_flight(&self) -> usize {
        self.delay_line.len() + self.aqm.as_ref().map_or(0, |a| a.len())
    }

    /// Drops by flow key since the link was created (buffer and AQM; the
    /// random loss is not counted here).
    pub fn flow_drops(&self, flow: u64) -> FlowDrops {
        self.flow_drops.get(&flow).copied().unwrap_or_default()
    }

    /// Every flow key that had a drop, with its drops, by key.
    pub fn all_flow_drops(&self) -> Vec<(u64, FlowDrops)> {
        let mut v: Vec<(u64, FlowDrops)> = self.flow_drops.iter().map(|(&k, &d)| (k, d)).collect();
        v.sort_by_key(|&(k, _)| k);
        v
    }

    /// The queue discipline.
    pub fn aqm_name(&self) -> &'static str {
        match &self.aqm {
            None => "fifo",
            Some(Discipline::Codel(_)) => "codel",
            Some(Discipline::FqCodel(_)) => "fq_codel",
            Some(Discipline::Pie(_)) => "pie",
        }
    }

    /// PIE's current drop probability; `None` under another discipline.
    pub fn pie_drop_probability(&mut self, now: Instant) -> Option<f64> {
        let now = self.accounted_to.map_or(now, |a| now.max(a));
        self.advance(now);
        self.aqm.as_ref().and_then(|a| a.drop_probability())
    }

    /// Bytes in the buffer at `now` (the one being serialised included).
    pub fn queue_bytes(&mut self, now: Instant) -> u64 {
        let now = self.accounted_to.map_or(now, |a| now.max(a));
        self.advance(now);
        self.queue_bytes
    }

    /// `bytes` as time at the line rate, in milliseconds.
    pub fn bytes_to_ms(&self, bytes: f64) -> Option<f64> {
        self.rate_bps.map(|r| bytes * 8e3 / r as f64)
    }

    /// Totals since the link was created.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The statistics of the interval since the previous call (or since the
    /// first event), ending at `now`; starts the next interval.
    pub fn take_interval(&mut self, now: Instant) -> IntervalStats {
        let now = self.accounted_to.map_or(now, |a| now.max(a));
        self.advance(now);
        let start = self.interval_start.replace(now).unwrap_or(now);
        let dur = now.saturating_duration_since(start);
        let accum = std::mem::take(&mut self.accum);
        let mut st = accum.stats;
        let secs = dur.as_secs_f64();
        st.interval_s = secs;
        st.queue_bytes_end = self.queue_bytes;
        // The occupancy at the start of the next interval is its first max.
        self.accum.stats.queue_bytes_max = self.queue_bytes;
        st.queue_bytes_mean = if dur.is_zero() {
            self.queue_bytes as f64
        } else {
            accum.queue_integral as f64 / dur.as_nanos() as f64
        };
        if secs > 0.0 {
            st.delivered_bps = st.delivered_bytes as f64 * 8.0 / secs;
        }
        st.utilization = self
            .rate_bps
            .filter(|_| secs > 0.0)
            .map(|r| st.departed_bytes as f64 * 8.0 / (r as f64 * secs));
        st.queue_ms_max = self.bytes_to_ms(st.queue_bytes_max as f64);
        st.queue_ms_mean = self.bytes_to_ms(st.queue_bytes_mean);
        st.queue_ms_end = self.bytes_to_ms(st.queue_bytes_end as f64);
        st
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{CodelParams, FqCodelParams, PieParams};
    use std::collections::BTreeSet;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }
    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    fn link(rate: u64, buffer: Option<Buffer>) -> Link<u32> {
        Link::new(&LinkConfig {
            rate_bps: Some(rate),
            buffer,
            overhead: 0,
            ..LinkConfig::default()
        })
    }

    /// Drains everything due by `now`.
    fn drain(l: &mut Link<u32>, now: Instant) -> Vec<u32> {
        std::iter::from_fn(|| l.poll(now).map(|d| d.item)).collect()
    }

    #[test]
    fn serialisation_timing_is_exact() {
        // 8 Mbit/s: 1000 bytes take exactly 1 ms.
        let t0 = Instant::now();
        let mut l = link(8_000_000, None);
        for i in 0..5 {
            let v = l.enqueue(t0, 1000, ms(10), i);
            assert_eq!(
                v,
                Verdict::Queued {
                    departure: t0 + ms(1 + u64::from(i)),
                    delivery: t0 + ms(11 + u64::from(i)),
                }
            );
        }
        assert_eq!(l.next_delivery(), Some(t0 + ms(11)));
        assert!(l.poll(t0 + ms(11) - Duration::from_nanos(1)).is_none());
        assert_eq!(drain(&mut l, t0 + ms(11)), vec![0]);
        assert_eq!(drain(&mut l, t0 + ms(13)), vec![1, 2]);
        assert_eq!(drain(&mut l, t0 + ms(100)), vec![3, 4]);
        assert_eq!(l.in_flight(), 0);
    }

    #[test]
    fn idle_link_restarts_at_arrival() {
        let t0 = Instant::now();
        let mut l = link(8_000_000, None);
        l.enqueue(t0, 1000, Duration::ZERO, 0);
        // Arrives after the first one left: served at once.
        let v = l.enqueue(t0 + ms(5), 500, Duration::ZERO, 1);
        assert_eq!(
            v,
            Verdict::Queued {
                departure: t0 + ms(5) + us(500),
                delivery: t0 + ms(5) + us(500),
            }
        );
        // Arrives while the second is being serialised: waits for it.
        let v = l.enqueue(t0 + ms(5) + us(100), 1000, Duration::ZERO, 2);
        assert!(
            matches!(v, Verdict::Queued { departure, .. } if departure == t0 + ms(6) + us(500))
        );
    }

    #[test]
    fn remainders_carry_so_the_rate_is_exact() {
        // An awkward rate: at 7 Mbit/s a 1001-byte datagram takes
        // 1144.000571... us. After 100 000 back to back, no drift at all.
        let t0 = Instant::now();
        let mut l = link(7_000_000, None);
        let n: u64 = 100_000;
        let mut last = t0;
        for i in 0..n {
            if let Verdict::Queued { departure, .. } = l.enqueue(t0, 1001, Duration::ZERO, 0) {
                last = departure;
            } else {
                panic!("dropped {i}");
            }
        }
        let exact_ns = u128::from(n) * 1001 * 8 * 1_000_000_000 / 7_000_000;
        assert_eq!(last.duration_since(t0).as_nanos(), exact_ns);
    }

    #[test]
    fn fifo_order_across_flows_with_equal_delay() {
        let t0 = Instant::now();
        let mut l = link(1_000_000, None);
        for i in 0..20 {
            l.enqueue(t0 + us(u64::from(i)), 100 + i as usize * 37, ms(25), i);
        }
        assert_eq!(drain(&mut l, t0 + ms(1000)), (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn per_flow_delay_after_shared_queue() {
        // Flow A (10 ms) and flow B (50 ms) share the queue: their departures
        // interleave by arrival, deliveries are offset by their own delay.
        let t0 = Instant::now();
        let mut l = link(8_000_000, None);
        let a = l.enqueue(t0, 1000, ms(10), 1);
        let b = l.enqueue(t0, 1000, ms(50), 2);
        let a2 = l.enqueue(t0, 1000, ms(10), 3);
        assert_eq!(
            a,
            Verdict::Queued {
                departure: t0 + ms(1),
                delivery: t0 + ms(11)
            }
        );
        assert_eq!(
            b,
            Verdict::Queued {
                departure: t0 + ms(2),
                delivery: t0 + ms(52)
            }
        );
        assert_eq!(
            a2,
            Verdict::Queued {
                departure: t0 + ms(3),
                delivery: t0 + ms(13)
            }
        );
        assert_eq!(drain(&mut l, t0 + ms(100)), vec![1, 3, 2]);
    }

    #[test]
    fn drop_tail_at_byte_capacity() {
        // 3000-byte buffer: three 1000-byte datagrams fit, the fourth is
        // dropped, and once one has left, one more fits again.
        let t0 = Instant::now();
        let mut l = link(8_000_000, Some(Buffer::Bytes(3000)));
        for i in 0..3 {
            assert!(matches!(
                l.enqueue(t0, 1000, Duration::ZERO, i),
                Verdict::Queued { .. }
            ));
        }
        assert_eq!(
            l.enqueue(t0, 1000, Duration::ZERO, 3),
            Verdict::DroppedBuffer
        );
        // A smaller one does not fit either (3000 + 1 > 3000).
        assert_eq!(l.enqueue(t0, 1, Duration::ZERO, 4), Verdict::DroppedBuffer);
        assert_eq!(l.queue_bytes(t0 + us(999)), 3000);
        assert_eq!(l.queue_bytes(t0 + ms(1)), 2000);
        assert!(matches!(
            l.enqueue(t0 + ms(1), 1000, Duration::ZERO, 5),
            Verdict::Queued { departure, .. } if departure == t0 + ms(4)
        ));
        assert_eq!(drain(&mut l, t0 + ms(10)), vec![0, 1, 2, 5]);
        assert_eq!(l.totals().drops_buffer, 2);
    }

    #[test]
    fn buffer_in_time_equals_bytes_at_line_rate() {
        // 8 Mbit/s x 5 ms = 5000 bytes.
        let t0 = Instant::now();
        let mut by_time = link(8_000_000, Some(Buffer::Time(ms(5))));
        let mut by_bytes = link(8_000_000, Some(Buffer::Bytes(5000)));
        assert_eq!(by_time.capacity_bytes(), Some(5000));
        for i in 0..50u32 {
            let now = t0 + us(u64::from(i) * 150);
            let size = 300 + (i as usize * 97) % 900;
            assert_eq!(
                by_time.enqueue(now, size, ms(1), i),
                by_bytes.enqueue(now, size, ms(1), i)
            );
        }
        assert!(by_time.totals().drops_buffer > 0);
        // The longest wait is bounded by the buffer time.
        let mut l = link(8_000_000, Some(Buffer::Time(ms(5))));
        for i in 0..100 {
            if let Verdict::Queued { departure, .. } = l.enqueue(t0, 500, Duration::ZERO, i) {
                assert!(departure.duration_since(t0) <= ms(5));
            }
        }
    }

    #[test]
    fn overhead_counts_towards_rate_and_buffer() {
        let t0 = Instant::now();
        let mut l: Link<u32> = Link::new(&LinkConfig {
            rate_bps: Some(8_000_000),
            buffer: Some(Buffer::Bytes(2056)),
            ..LinkConfig::default()
        });
        // 972 + 28 = 1000 wire bytes = 1 ms.
        assert!(matches!(
            l.enqueue(t0, 972, Duration::ZERO, 0),
            Verdict::Queued { departure, .. } if departure == t0 + ms(1)
        ));
        assert!(matches!(
            l.enqueue(t0, 1000, Duration::ZERO, 1),
            Verdict::Queued { .. }
        ));
        // 2028 in the buffer; 1 payload byte is 29 wire bytes: 2057 > 2056.
        assert_eq!(l.enqueue(t0, 1, Duration::ZERO, 2), Verdict::DroppedBuffer);
        assert!(matches!(
            l.enqueue(t0, 0, Duration::ZERO, 3),
            Verdict::Queued { .. }
        ));
    }

    #[test]
    fn no_rate_is_a_pure_delay_line() {
        let t0 = Instant::now();
        let mut l: Link<u32> = Link::new(&LinkConfig {
            buffer: Some(Buffer::Time(ms(1))),
            ..LinkConfig::default()
        });
        for i in 0..1000 {
            assert_eq!(
                l.enqueue(t0, 1400, ms(25), i),
                Verdict::Queued {
                    departure: t0,
                    delivery: t0 + ms(25)
                }
            );
        }
        assert_eq!(drain(&mut l, t0 + ms(25)).len(), 1000);
        let st = l.take_interval(t0 + ms(25));
        assert_eq!(st.queue_bytes_max, 0);
        assert_eq!(st.queue_ms_max, None);
        assert_eq!(st.delivered_packets, 1000);
    }

    #[test]
    fn loss_is_seeded_and_close_to_the_probability() {
        let run = |seed| {
            let t0 = Instant::now();
            let mut l: Link<u32> = Link::new(&LinkConfig {
                loss: 0.1,
                seed,
                ..LinkConfig::default()
            });
            (0..20_000)
                .map(|i| l.enqueue(t0, 100, Duration::ZERO, i) == Verdict::DroppedLoss)
                .collect::<Vec<_>>()
        };
        let a = run(7);
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
        let lost = a.iter().filter(|&&x| x).count();
        assert!((1700..2300).contains(&lost), "{lost}");
    }

    #[test]
    fn loss_happens_before_the_buffer_and_uses_no_capacity() {
        let t0 = Instant::now();
        let mut l: Link<u32> = Link::new(&LinkConfig {
            rate_bps: Some(8_000_000),
            loss: 1.0,
            overhead: 0,
            ..LinkConfig::default()
        });
        assert_eq!(l.enqueue(t0, 1000, Duration::ZERO, 0), Verdict::DroppedLoss);
        let mut l: Link<u32> = Link::new(&LinkConfig {
            rate_bps: Some(8_000_000),
            loss: 0.5,
            overhead: 0,
            seed: 3,
            ..LinkConfig::default()
        });
        let mut expect = t0;
        for i in 0..100 {
            match l.enqueue(t0, 1000, Duration::ZERO, i) {
                Verdict::Queued { departure, .. } => {
                    expect += ms(1);
                    assert_eq!(departure, expect);
                }
                Verdict::DroppedLoss => {}
                v => panic!("no buffer limit, no AQM: {v:?}"),
            }
        }
        let st = l.take_interval(t0);
        assert_eq!(st.drops_loss + st.queue_bytes_end / 1000, 100);
    }

    #[test]
    fn interval_stats_integrate_the_queue() {
        let t0 = Instant::now();
        let mut l = link(8_000_000, Some(Buffer::Bytes(10_000)));
        // Start the interval at t0 with an empty queue.
        assert_eq!(l.queue_bytes(t0), 0);
        // At 2 ms, 4 x 1000 bytes arrive: the queue holds 4000 bytes, then
        // 3000, 2000, 1000 for a millisecond each, then is empty.
        for i in 0..4 {
            l.enqueue(t0 + ms(2), 1000, Duration::ZERO, i);
        }
        let st = l.take_interval(t0 + ms(10));
        assert_eq!(st.queue_bytes_max, 4000);
        assert_eq!(st.queue_bytes_end, 0);
        // Integral: (4+3+2+1) kB x 1 ms = 10 kB.ms over 10 ms = 1000 B.
        assert!((st.queue_bytes_mean - 1000.0).abs() < 1e-9, "{st:?}");
        assert_eq!(st.queue_ms_max, Some(4.0));
        assert_eq!(st.queue_ms_mean, Some(1.0));
        assert_eq!(st.departed_bytes, 4000);
        assert_eq!(st.utilization, Some(0.4));
        assert_eq!(st.arrived_packets, 4);
        // Nothing delivered until polled.
        assert_eq!(st.delivered_packets, 0);
        assert_eq!(drain(&mut l, t0 + ms(10)).len(), 4);
        let st2 = l.take_interval(t0 + ms(20));
        assert_eq!(st2.delivered_packets, 4);
        assert_eq!(st2.delivered_bytes, 4000);
        assert!((st2.delivered_bps - 3.2e6).abs() < 1e-6);
        assert_eq!(st2.queue_bytes_max, 0);
        assert_eq!(st2.queue_bytes_mean, 0.0);
    }

    #[test]
    fn interval_max_carries_a_standing_queue() {
        let t0 = Instant::now();
        let mut l = link(8_000, None);
        l.queue_bytes(t0);
        l.enqueue(t0, 1000, Duration::ZERO, 0); // 1 s of serialisation
        let st = l.take_interval(t0 + ms(500));
        assert_eq!(st.queue_bytes_max, 1000);
        let st = l.take_interval(t0 + ms(900));
        assert_eq!(st.queue_bytes_max, 1000);
        assert_eq!(st.queue_bytes_mean, 1000.0);
        let st = l.take_interval(t0 + ms(1500));
        assert_eq!(st.queue_bytes_max, 1000);
        assert!((st.queue_bytes_mean - 1000.0 / 6.0).abs() < 1e-6);
        let st = l.take_interval(t0 + ms(2000));
        assert_eq!(st.queue_bytes_max, 0);
    }

    proptest::proptest! {
        /// Whatever the arrivals, the buffer never exceeds its capacity,
        /// departures are spaced by at least the serialisation time, and
        /// everything accepted is delivered, in order for equal delays.
        #[test]
        fn invariants(
            rate in 10_000u64..1_000_000_000,
            cap in 1u64..200_000,
            arrivals in proptest::collection::vec((0u64..5_000, 0usize..2000), 1..200),
        ) {
            let t0 = Instant::now();
            let mut l: Link<usize> = Link::new(&LinkConfig {
                rate_bps: Some(rate),
                buffer: Some(Buffer::Bytes(cap)),
                ..LinkConfig::default()
            });
            let mut now = t0;
            let mut prev_departure = t0;
            let mut accepted = vec![];
            for (i, &(gap_us, size)) in arrivals.iter().enumerate() {
                now += us(gap_us);
                match l.enqueue(now, size, ms(3), i) {
                    Verdict::Queued { departure, delivery } => {
                        let wire = size as u64 + 28;
                        let st = l.serialisation_time(wire);
                        proptest::prop_assert!(departure >= now + st);
                        proptest::prop_assert!(departure >= prev_departure + st);
                        proptest::prop_assert_eq!(delivery, departure + ms(3));
                        prev_departure = departure;
                        accepted.push(i);
                    }
                    Verdict::DroppedBuffer => {}
                    v => proptest::prop_assert!(false, "no loss, no AQM: {v:?}"),
                }
                proptest::prop_assert!(l.queue_bytes(now) <= cap);
            }
            let delivered: Vec<usize> =
                std::iter::from_fn(|| l.poll(now + Duration::from_secs(3600)).map(|d| d.item)).collect();
            proptest::prop_assert_eq!(delivered, accepted);
        }
    }

    /// 8 Mbit/s, no overhead: a 1000-byte datagram takes exactly 1 ms.
    fn aqm_link(aqm: Aqm, buffer: Option<Buffer>) -> Link<u32> {
        Link::new(&LinkConfig {
            rate_bps: Some(8_000_000),
            buffer,
            overhead: 0,
            aqm,
            ..LinkConfig::default()
        })
    }

    /// Offers 1000-byte datagrams at `t0` with no extra delay, each
    /// `(flow, item)` in turn: their verdicts, in that order.
    fn enqueue_1000_bytes_each(
        l: &mut Link<u32>,
        t0: Instant,
        offered: &[(u64, u32)],
    ) -> Vec<Verdict> {
        offered
            .iter()
            .map(|&(flow, item)| l.enqueue_flow(t0, flow, 1000, Duration::ZERO, item))
            .collect()
    }

    /// Every delivery by `until`: (item, delivery time in ms since `t0`).
    fn drain_timed(l: &mut Link<u32>, t0: Instant, until: Instant) -> Vec<(u32, f64)> {
        let mut out = vec![];
        while let Some(due) = l.next_delivery().filter(|&d| d <= until) {
            while let Some(d) = l.poll(due) {
                out.push((d.item, d.due.duration_since(t0).as_secs_f64() * 1e3));
            }
        }
        out
    }

    #[test]
    fn codel_first_drop_after_an_interval_above_target_then_interval_over_sqrt_count() {
        // 500 datagrams of 1000 B arrive at once; the link serves one per
        // ms, so datagram k is dequeued at k ms with a sojourn time of k ms
        // (until the first drop). RFC 8289's pseudo-code, by hand:
        // - k = 5: sojourn 5 ms is not below TARGET (5 ms):
        //   first_above_time = 5 + 100 = 105 ms;
        // - 105 ms: now >= first_above_time: drop #105, enter the dropping
        //   state with count = 1, drop_next = 105 + 100/sqrt(1) = 205 ms;
        //   #106 is sent in its place (105 -> 106 ms);
        // - 205 ms: drop (#206, one dropped before), count = 2, drop_next =
        //   205 + 100/sqrt(2) = 275.710678 ms;
        // - 276 ms (first dequeue at or after): drop #278, count = 3,
        //   drop_next = 275.710678 + 100/sqrt(3) = 333.445704 ms;
        // - 334 ms: drop #337, count = 4, drop_next = 383.445704 ms;
        // - 384 ms: drop #388, count = 5, drop_next = 428.167064 ms;
        // - 429 ms: drop #434, count = 6, drop_next = 428.167064 +
        //   100/sqrt(6) = 468.991893 ms;
        // - 469 ms: drop #475.
        let t0 = Instant::now();
        let mut l = aqm_link(Aqm::Codel(CodelParams::default()), None);
        for i in 0..500 {
            assert_eq!(l.enqueue(t0, 1000, Duration::ZERO, i), Verdict::Enqueued);
        }
        let got = drain_timed(&mut l, t0, t0 + ms(1000));
        let sent: Vec<u32> = got.iter().map(|&(i, _)| i).collect();
        let dropped: Vec<u32> = (0..500).filter(|i| !sent.contains(i)).collect();
        assert_eq!(dropped, vec![105, 206, 278, 337, 388, 434, 475]);
        // Sent back to back, one per ms, in order: the k-th sent leaves at
        // k + 1 ms.
        for (k, &(_, at)) in got.iter().enumerate() {
            assert!((at - (k + 1) as f64).abs() < 1e-9, "#{k} at {at}");
        }
        assert_eq!(l.totals().drops_aqm, 7);
        assert_eq!(l.flow_drops(0), FlowDrops { buffer: 0, aqm: 7 });
        assert_eq!(l.in_flight(), 0);
    }

    #[test]
    fn codel_reenters_with_the_previous_count() {
        // RFC 8289: "if ((delta > 1) && (now - drop_next_ < 16*INTERVAL))
        // count_ = delta;". Target 5 ms, interval 20 ms (codel_interval).
        // A burst of 100 at 0 ms: first_above at 5 + 20 = 25 ms; drops at
        // 25 (count 1, next 45), 45 (count 2, next 59.142136), 60 (count 3,
        // next 70.689), 71 (count 4, next 80.689), 81 (count 5, next
        // 89.633), 90 (count 6, next 97.798); the 94 datagrams left are
        // sent by 94 ms: the queue empties, the dropping state ends with
        // count = 6, lastcount = 1.
        // A second burst of 100 at 200 ms: first_above at 205 + 20 = 225
        // ms; there, delta = count - lastcount = 5 > 1 and now - drop_next
        // < 16 x 20 ms, so count = 5 and drop_next = 225 + 20/sqrt(5) =
        // 233.944272 ms: the second drop comes 8.94 ms after the first,
        // not a whole interval.
        let t0 = Instant::now();
        let params = CodelParams {
            interval: ms(20),
            ..CodelParams::default()
        };
        let mut l = aqm_link(Aqm::Codel(params), None);
        for i in 0..100 {
            l.enqueue(t0, 1000, Duration::ZERO, i);
        }
        let first = drain_timed(&mut l, t0, t0 + ms(199));
        let sent: Vec<u32> = first.iter().map(|&(i, _)| i).collect();
        let dropped: Vec<u32> = (0..100).filter(|i| !sent.contains(i)).collect();
        // Datagram dequeued at t ms is #(t + drops so far).
        assert_eq!(dropped, vec![25, 46, 62, 74, 85, 95]);
        for i in 100..200 {
            l.enqueue(t0 + ms(200), 1000, Duration::ZERO, i);
        }
        let second = drain_timed(&mut l, t0, t0 + ms(400));
        let sent: Vec<u32> = second.iter().map(|&(i, _)| i).collect();
        let dropped: Vec<u32> = (100..200).filter(|i| !sent.contains(i)).collect();
        // 225 ms: #125 (the 25th of the burst); next drop at 233.94 ->
        // dequeue at 234 ms: #(100 + 34 + 1) = #135; count 6, next =
        // 233.944272 + 20/sqrt(6) = 242.109 -> 243 ms: #(100 + 43 + 2).
        // (Starting over at count 1 would put the second at 245 ms: #146.)
        assert_eq!(&dropped[..3], &[125, 135, 145]);
    }

    #[test]
    fn fq_codel_deficit_round_robin_across_three_flows() {
        // Quantum 1514 B, 1000-byte datagrams, four per flow, flows A, B, C
        // arriving in that order at 0 ms (A's first is served at once).
        // RFC 8290 §4.2 by hand: A is on the new list with 1514 credits:
        // A0 (514 left), A1 (-486); A's credits are not positive: +1514 =
        // 1028, A goes to the old list; B0, B1 likewise, then C0, C1; the
        // old list A, B, C: A2 (28), A3 (-972); A +1514 = 542 to the tail;
        // B2, B3; C2, C3; then every queue is empty.
        let t0 = Instant::now();
        let mut l = aqm_link(Aqm::FqCodel(FqCodelParams::default()), None);
        let (a, b, c) = (11u64, 22u64, 33u64);
        let buckets: BTreeSet<usize> = [a, b, c]
            .iter()
            .map(|&k| l.aqm.as_ref().unwrap().bucket(k).unwrap())
            .collect();
        assert_eq!(buckets.len(), 3, "three distinct queues");
        let offered: Vec<(u64, u32)> = [(a, 0), (b, 10), (c, 20)]
            .into_iter()
            .flat_map(|(flow, base)| (0..4).map(move |j| (flow, base + j)))
            .collect();
        assert_eq!(
            enqueue_1000_bytes_each(&mut l, t0, &offered),
            vec![Verdict::Enqueued; 12]
        );
        assert_eq!(l.aqm.as_ref().unwrap().bytes(), 11_000, "A0 is in service");
        let got = drain_timed(&mut l, t0, t0 + ms(100));
        let order: Vec<u32> = got.iter().map(|&(i, _)| i).collect();
        assert_eq!(order, vec![0, 1, 10, 11, 20, 21, 2, 3, 12, 13, 22, 23]);
        let times: Vec<f64> = got.iter().map(|&(_, t)| t).collect();
        assert_eq!(times, (1..=12).map(f64::from).collect::<Vec<_>>());
    }

    #[test]
    fn fq_codel_a_new_flow_goes_before_the_old_ones() {
        // A and B have been backlogged long enough to be on the old list;
        // a datagram of a new flow D arriving then is served next.
        let t0 = Instant::now();
        let mut l = aqm_link(Aqm::FqCodel(FqCodelParams::default()), None);
        for j in 0..6 {
            l.enqueue_flow(t0, 1, 1000, Duration::ZERO, j);
            l.enqueue_flow(t0, 2, 1000, Duration::ZERO, 10 + j);
        }
        // By 4.5 ms A0 A1 B0 B1 A2 are sent or in service (both old).
        l.enqueue_flow(t0 + us(4500), 4, 1000, Duration::ZERO, 99);
        let order: Vec<u32> = drain_timed(&mut l, t0, t0 + ms(100))
            .iter()
            .map(|&(i, _)| i)
            .collect();
        assert_eq!(&order[..7], &[0, 1, 10, 11, 2, 99, 3]);
    }

    #[test]
    fn fq_codel_overflow_drops_from_the_head_of_the_fattest_queue() {
        // Memory limit 5000 B. A: 4 x 1000 (A0 in service, 3000 queued),
        // B: 1000 -> 5000 in all. B's second: 6000 > 5000, the fattest is
        // A (3000 vs 2000): its head A1 goes, B's datagram stays.
        let t0 = Instant::now();
        let mut l = aqm_link(
            Aqm::FqCodel(FqCodelParams::default()),
            Some(Buffer::Bytes(5000)),
        );
        let offered: Vec<(u64, u32)> = (0..4).map(|j| (1, j)).chain([(2, 10), (2, 11)]).collect();
        assert_eq!(
            enqueue_1000_bytes_each(&mut l, t0, &offered),
            vec![Verdict::Enqueued; 6]
        );
        assert_eq!(l.queue_bytes(t0), 5000);
        assert_eq!(l.flow_drops(1), FlowDrops { buffer: 1, aqm: 0 });
        assert_eq!(l.flow_drops(2), FlowDrops::default());
        // A lone big flow over the limit loses its own arrival's head.
        let mut sent: Vec<u32> = drain_timed(&mut l, t0, t0 + ms(100))
            .iter()
            .map(|&(i, _)| i)
            .collect();
        sent.sort_unstable();
        assert_eq!(sent, vec![0, 2, 3, 10, 11]);
        assert_eq!(l.totals().drops_buffer, 1);
        let mut l = aqm_link(
            Aqm::FqCodel(FqCodelParams::default()),
            Some(Buffer::Bytes(1500)),
        );
        assert_eq!(
            enqueue_1000_bytes_each(&mut l, t0, &[(1, 0), (1, 1)]),
            vec![Verdict::Enqueued, Verdict::DroppedBuffer]
        );
    }

    #[test]
    fn pie_drop_probability_after_five_updates() {
        // 100 datagrams of 1000 B at 0 ms; dequeued at k ms with a sojourn
        // of k ms; PIE's updates every 15 ms from the first arrival read
        // the last sojourn time (15, 30, 45, 60, 75 ms). RFC 8033 Appendix
        // A by hand (alpha 0.125, beta 1.25, QDELAY_REF 15 ms):
        // 1: p = 0.125 (0.015 - 0.015) + 1.25 (0.015 - 0) = 0.01875,
        //    drop_prob 0 < 1e-6: p / 2048 -> 9.1552734375e-6
        // 2: p = 0.125 x 0.015 + 1.25 x 0.015 = 0.020625, / 512
        //    -> 9.1552734375e-6 + 4.0283203125e-5 = 4.94384765625e-5
        // 3: p = 0.125 x 0.030 + 0.01875 = 0.0225, / 128 = 1.7578125e-4
        //    -> 2.252197265625e-4
        // 4: p = 0.125 x 0.045 + 0.01875 = 0.024375, / 32 = 7.6171875e-4
        //    -> 9.869384765625e-4
        // 5: p = 0.125 x 0.060 + 0.01875 = 0.02625, / 32 = 8.203125e-4
        //    -> 1.8072509765625e-3
        let t0 = Instant::now();
        let mut l = aqm_link(Aqm::Pie(PieParams::default()), None);
        for i in 0..100 {
            l.enqueue(t0, 1000, Duration::ZERO, i);
        }
        let expect = [
            9.1552734375e-6,
            4.94384765625e-5,
            2.252197265625e-4,
            9.869384765625e-4,
            1.8072509765625e-3,
        ];
        assert_eq!(
            l.pie_drop_probability(t0 + ms(15) - Duration::from_nanos(1)),
            Some(0.0)
        );
        for (n, want) in expect.iter().enumerate() {
            let got = l
                .pie_drop_probability(t0 + ms(15 * (n as u64 + 1)))
                .unwrap();
            assert!(
                (got - want).abs() < 1e-12 * want.max(1e-9) + 1e-15,
                "update {}: {got} != {want}",
                n + 1
            );
        }
        // Nothing was dropped: the queue was not fed (no arrival, no
        // early drop) and CoDel-style dequeue drops do not exist in PIE.
        assert_eq!(drain_timed(&mut l, t0, t0 + ms(1000)).len(), 100);
        assert_eq!(l.totals().drops_aqm, 0);
    }

    #[test]
    fn pie_drops_early_once_the_burst_allowance_is_spent() {
        // A sender at 1.5 x the line rate: the queue and its delay grow,
        // drop_prob rises; PIE drops nothing for MAX_BURST (150 ms), then
        // drops early, well before a 1 MB buffer fills. The draws come from
        // the link's seed: the same seed, the same drops.
        let run = |seed| {
            let t0 = Instant::now();
            let mut l: Link<u32> = Link::new(&LinkConfig {
                rate_bps: Some(8_000_000),
                buffer: Some(Buffer::Bytes(1_000_000)),
                overhead: 0,
                seed,
                aqm: Aqm::Pie(PieParams::default()),
                ..LinkConfig::default()
            });
            let mut drops = vec![];
            for i in 0..3000u32 {
                let at = t0 + Duration::from_micros(u64::from(i) * 2000 / 3);
                match l.enqueue(at, 1000, Duration::ZERO, i) {
                    Verdict::Enqueued => {}
                    Verdict::DroppedAqm => drops.push(at.duration_since(t0)),
                    v => panic!("{v:?}"),
                }
                while l.poll(at).is_some() {}
            }
            drops
        };
        let drops = run(1);
        assert!(drops[0] > ms(150), "first drop at {:?}", drops[0]);
        assert!(drops.len() > 100, "{} drops", drops.len());
        assert_eq!(drops, run(1));
        assert_ne!(drops, run(2));
    }

    #[test]
    fn gilbert_elliott_long_run_loss_rate_and_burst_length() {
        // p = 0.01, r = 0.3, h = 0, k = 1: every datagram in Bad is lost;
        // loss rate p / (p + r) = 0.032258, mean burst 1 / r = 3.33. From a
        // fixed seed, 1 000 000 datagrams: deterministic, not flaky.
        let t0 = Instant::now();
        let mut l: Link<u32> = Link::new(&LinkConfig {
            loss: 0.5, // ignored: the channel decides
            seed: 42,
            gilbert_elliott: Some(GilbertElliott::new(0.01, 0.3, 0.0, 1.0).unwrap()),
            ..LinkConfig::default()
        });
        let n = 1_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for i in 0..n {
            let gone = l.enqueue(t0, 100, Duration::ZERO, i) == Verdict::DroppedLoss;
            lost += u64::from(gone);
            bursts += u64::from(gone && !prev);
            prev = gone;
            while l.poll(t0).is_some() {}
        }
        let rate = lost as f64 / f64::from(n);
        assert!((rate - 0.01 / 0.31).abs() < 0.002, "loss rate {rate}");
        let burst = lost as f64 / bursts as f64;
        assert!((burst - 1.0 / 0.3).abs() < 0.1, "mean burst {burst}");
        assert_eq!(l.totals().drops_loss, lost);
    }

    proptest::proptest! {
        /// Under every AQM: the buffer never holds more than its capacity,
        /// each datagram is delivered or counted as dropped exactly once,
        /// and a flow's datagrams keep their order.
        #[test]
        fn aqm_conservation(
            which in 0usize..3,
            cap in 2_000u64..50_000,
            arrivals in proptest::collection::vec((0u64..3_000, 0usize..1400, 0u64..4), 1..300),
        ) {
            let aqm = [
                Aqm::Codel(CodelParams::default()),
                Aqm::FqCodel(FqCodelParams::default()),
                Aqm::Pie(PieParams::default()),
            ][which];
            let t0 = Instant::now();
            let mut l: Link<(u64, usize)> = Link::new(&LinkConfig {
                rate_bps: Some(2_000_000),
                buffer: Some(Buffer::Bytes(cap)),
                aqm,
                ..LinkConfig::default()
            });
            let mut now = t0;
            let mut delivered = vec![];
            for (i, &(gap_us, size, flow)) in arrivals.iter().enumerate() {
                now += us(gap_us);
                l.enqueue_flow(now, flow, size, ms(2), (flow, i));
                proptest::prop_assert!(l.queue_bytes(now) <= cap);
                while let Some(d) = l.poll(now) {
                    delivered.push(d.item);
                }
            }
            let end = now + Duration::from_secs(3600);
            while let Some(due) = l.next_delivery() {
                proptest::prop_assert!(due <= end);
                while let Some(d) = l.poll(due) {
                    delivered.push(d.item);
                }
            }
            let t = l.totals();
            proptest::prop_assert_eq!(
                delivered.len() as u64 + t.drops_buffer + t.drops_aqm,
                arrivals.len() as u64
            );
            let by_flow: u64 = (0..4).map(|f| { let d = l.flow_drops(f); d.buffer + d.aqm }).sum();
            proptest::prop_assert_eq!(by_flow, t.drops_buffer + t.drops_aqm);
            for f in 0..4 {
                let seq: Vec<usize> = delivered.iter().filter(|d| d.0 == f).map(|d| d.1).collect();
                proptest::prop_assert!(seq.windows(2).all(|w| w[0] < w[1]));
            }
            proptest::prop_assert_eq!(l.in_flight(), 0);
        }
    }
}
