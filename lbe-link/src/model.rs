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

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use serde::Serialize;

use crate::units::Buffer;

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
    /// bottleneck, bits per second at the IP level (see [`CrossTraffic`]);
    /// `None` for none.
    pub cross_traffic_bps: Option<u64>,
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
    /// Dropped because the buffer was full.
    DroppedBuffer,
    /// Dropped by the random loss.
    DroppedLoss,
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

/// Counters and queue statistics over one interval, as reported per second
/// in the stats file. Byte counts are wire bytes (payload + overhead) unless
/// the name says payload.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IntervalStats {
    /// Length of the interval in seconds.
    pub interval_s: f64,
    /// Datagrams that arrived at the link.
    pub arrived_packets: u64,
    /// Wire bytes that arrived.
    pub arrived_bytes: u64,
    /// Datagrams dropped because the buffer was full.
    pub drops_buffer: u64,
    /// Wire bytes dropped because the buffer was full.
    pub drops_buffer_bytes: u64,
    /// Datagrams dropped by the random loss.
    pub drops_loss: u64,
    /// Wire bytes dropped by the random loss.
    pub drops_loss_bytes: u64,
    /// Wire bytes whose serialisation ended in the interval.
    pub departed_bytes: u64,
    /// `departed_bytes * 8 / (rate * interval)`: the link's utilisation
    /// (null without a rate).
    pub utilization: Option<f64>,
    /// Datagrams handed to the receiver (after the propagation delay).
    pub delivered_packets: u64,
    /// Wire bytes handed to the receiver.
    pub delivered_bytes: u64,
    /// UDP payload bytes handed to the receiver.
    pub delivered_payload_bytes: u64,
    /// `delivered_bytes * 8 / interval`, in bits per second.
    pub delivered_bps: f64,
    /// Largest buffer occupancy in the interval, in bytes.
    pub queue_bytes_max: u64,
    /// Time-weighted mean buffer occupancy in the interval, in bytes.
    pub queue_bytes_mean: f64,
    /// Buffer occupancy at the end of the interval, in bytes.
    pub queue_bytes_end: u64,
    /// `queue_bytes_max` as time at line rate, in ms (null without a rate).
    pub queue_ms_max: Option<f64>,
    /// `queue_bytes_mean` as time at line rate, in ms.
    pub queue_ms_mean: Option<f64>,
    /// `queue_bytes_end` as time at line rate, in ms.
    pub queue_ms_end: Option<f64>,
}

/// Running totals since the link was created.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Datagrams that arrived.
    pub arrived_packets: u64,
    /// Datagrams dropped because the buffer was full.
    pub drops_buffer: u64,
    /// Datagrams dropped by the random loss.
    pub drops_loss: u64,
    /// Datagrams handed to the receiver.
    pub delivered_packets: u64,
    /// Wire bytes handed to the receiver.
    pub delivered_bytes: u64,
    /// Payload bytes handed to the receiver.
    pub delivered_payload_bytes: u64,
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
}

impl<T> Link<T> {
    /// A link that behaves as `config` says.
    pub fn new(config: &LinkConfig) -> Self {
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
        }
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

    /// Offers a datagram of `payload` bytes arriving at `now`, to be
    /// delivered `delay` after it leaves the bottleneck.
    pub fn enqueue(&mut self, now: Instant, payload: usize, delay: Duration, item: T) -> Verdict {
        // Arrivals are never accounted before what was already accounted.
        let now = self.accounted_to.map_or(now, |a| now.max(a));
        self.advance(now);
        let wire = self.wire_size(payload);
        let st = &mut self.accum.stats;
        st.arrived_packets += 1;
        st.arrived_bytes += wire;
        self.totals.arrived_packets += 1;

        if self.loss > 0.0 {
            let draw = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            if draw < self.loss {
                st.drops_loss += 1;
                st.drops_loss_bytes += wire;
                self.totals.drops_loss += 1;
                return Verdict::DroppedLoss;
            }
        }

        let departure = match self.rate_bps {
            None => now,
            Some(rate) => {
                if let Some(cap) = self.capacity {
                    if self.queue_bytes + wire > cap {
                        st.drops_buffer += 1;
                        st.drops_buffer_bytes += wire;
                        self.totals.drops_buffer += 1;
                        return Verdict::DroppedBuffer;
                    }
                }
                let (mut start, mut rem) = match self.busy_until {
                    Some(b) if b > now => (b, self.busy_rem),
                    _ => (now, 0),
                };
                let num = u128::from(wire) * 8_000_000_000;
                let rate = u128::from(rate);
                let mut ns = (num / rate) as u64;
                rem += (num % rate) as u64;
                if u128::from(rem) >= rate {
                    ns += 1;
                    rem -= rate as u64;
                }
                start += Duration::from_nanos(ns);
                self.busy_until = Some(start);
                self.busy_rem = rem;
                self.queue.push_back((start, wire));
                self.queue_bytes += wire;
                st.queue_bytes_max = st.queue_bytes_max.max(self.queue_bytes);
                start
            }
        };
        let delivery = departure + delay;
        self.seq += 1;
        self.delay_line.push(InFlight {
            delivery,
            seq: self.seq,
            payload,
            item,
        });
        if self.rate_bps.is_none() {
            st.departed_bytes += wire;
        }
        Verdict::Queued {
            departure,
            delivery,
        }
    }

    /// When the next datagram is due for delivery.
    pub fn next_delivery(&self) -> Option<Instant> {
        self.delay_line.peek().map(|f| f.delivery)
    }

    /// The next datagram due at or before `now`.
    pub fn poll(&mut self, now: Instant) -> Option<Delivery<T>> {
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
        self.delay_line.len()
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

/// Size of one cross-traffic datagram at the IP level: 1450 bytes, as in
/// seed cdg-deadline-aware-lbe §III-A ("1450-byte packets are sent with an
/// exponentially distributed inter-departure time of 23.2ms from each
/// sender, producing on average about 1 Mbps at the bottleneck").
pub const CROSS_TRAFFIC_PACKET_BYTES: u64 = 1450;

/// Unresponsive cross traffic: datagrams of [`CROSS_TRAFFIC_PACKET_BYTES`]
/// whose arrivals at the bottleneck form a Poisson process of mean rate
/// [`LinkConfig::cross_traffic_bps`] (exponential gaps). They take their place
/// in the drop-tail FIFO like any datagram and are discarded on delivery.
///
/// Why: with drop-tail and a few long flows, losses synchronise with the
/// flows' sending phases, and which flow loses at an overflow can depend on
/// the phase rather than on the controllers (Floyd & Jacobson, "On Traffic
/// Phase Effects in Packet-Switched Gateways", 1992). Seed 002 adds this
/// traffic "to prevent emulation artifacts, such as synchronization,
/// corrupting the results" (§III-A).
///
/// Sans-IO and deterministic: gaps are drawn from a generator seeded by
/// [`LinkConfig::seed`] (a stream of its own, not the random loss's).
pub struct CrossTraffic {
    rng: XorShiftRng,
    /// Mean gap between arrivals, nanoseconds.
    mean_gap_ns: f64,
    payload: usize,
    next: Option<Instant>,
}

impl CrossTraffic {
    /// The cross traffic `config` asks for, or `None` (none, or no rate).
    pub fn new(config: &LinkConfig) -> Option<Self> {
        let rate = config.cross_traffic_bps.filter(|&r| r > 0)?;
        let wire = CROSS_TRAFFIC_PACKET_BYTES.max(u64::from(config.overhead) + 1);
        Some(Self {
            rng: XorShiftRng::seed_from_u64(config.seed ^ 0xc2b2_ae3d_27d4_eb4f),
            mean_gap_ns: wire as f64 * 8e9 / rate as f64,
            payload: (wire - u64::from(config.overhead)) as usize,
            next: None,
        })
    }

    /// UDP payload of each datagram (its wire size less the link's overhead).
    pub fn payload(&self) -> usize {
        self.payload
    }

    /// When the next datagram arrives; the first one is one gap after the
    /// first call's `now`.
    pub fn next_arrival(&mut self, now: Instant) -> Instant {
        match self.next {
            Some(t) => t,
            None => {
                let t = now + self.gap();
                self.next = Some(t);
                t
            }
        }
    }

    /// The arrival time of the next datagram if it is due by `now` (then the
    /// one after it is scheduled), else `None`. Call until `None`.
    pub fn take_due(&mut self, now: Instant) -> Option<Instant> {
        let t = self.next_arrival(now);
        if t > now {
            return None;
        }
        self.next = Some(t + self.gap());
        Some(t)
    }

    /// One exponentially distributed gap: `-ln(1 - u) × mean`, u uniform in
    /// [0, 1) with 53 bits.
    fn gap(&mut self) -> Duration {
        let u = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        Duration::from_nanos((-(1.0 - u).ln() * self.mean_gap_ns) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                Verdict::DroppedBuffer => panic!("no buffer limit"),
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
                    Verdict::DroppedLoss => proptest::prop_assert!(false, "no loss configured"),
                }
                proptest::prop_assert!(l.queue_bytes(now) <= cap);
            }
            let delivered: Vec<usize> =
                std::iter::from_fn(|| l.poll(now + Duration::from_secs(3600)).map(|d| d.item)).collect();
            proptest::prop_assert_eq!(delivered, accepted);
        }
    }

    #[test]
    fn cross_traffic_is_poisson_at_the_mean_rate() {
        let config = LinkConfig {
            rate_bps: Some(10_000_000),
            cross_traffic_bps: Some(1_000_000),
            seed: 7,
            ..LinkConfig::default()
        };
        let mut cross = CrossTraffic::new(&config).unwrap();
        // 1450 bytes on the wire, 28 of them IPv4 and UDP headers.
        assert_eq!(cross.payload(), 1422);
        let t0 = Instant::now();
        let first = cross.next_arrival(t0);
        assert!(first > t0);
        assert_eq!(cross.take_due(first - Duration::from_nanos(1)), None);
        // 1000 s of arrivals: 1 Mbit/s of 1450-byte datagrams is 86.2/s.
        let end = t0 + Duration::from_secs(1000);
        let mut gaps = Vec::new();
        let mut last = t0;
        while let Some(t) = cross.take_due(end) {
            gaps.push(t.duration_since(last).as_secs_f64());
            last = t;
        }
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
        // Mean gap 11.6 ms; an exponential's standard deviation equals its mean.
        assert!(
            (n - 86_207.0).abs() < 3.0 * 86_207f64.sqrt(),
            "{n} arrivals"
        );
        assert!((mean * 1e3 - 11.6).abs() < 0.1, "mean gap {mean}");
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.02,
            "cv {}",
            var.sqrt() / mean
        );
        // The same seed, the same arrivals; another seed, others.
        let mut again = CrossTraffic::new(&config).unwrap();
        assert_eq!(again.next_arrival(t0), first);
        let mut other = CrossTraffic::new(&LinkConfig { seed: 8, ..config }).unwrap();
        assert_ne!(other.next_arrival(t0), first);
    }

    #[test]
    fn no_cross_traffic_without_a_rate() {
        assert!(CrossTraffic::new(&LinkConfig::default()).is_none());
        let zero = LinkConfig {
            cross_traffic_bps: Some(0),
            ..LinkConfig::default()
        };
        assert!(CrossTraffic::new(&zero).is_none());
    }
}
