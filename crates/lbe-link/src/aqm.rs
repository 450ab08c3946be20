//! The bottleneck's queue disciplines beside the drop-tail FIFO: CoDel
//! (RFC 8289), FQ-CoDel (RFC 8290) and PIE (RFC 8033), with their
//! default parameters, each overridable.
//!
//! quiche sends no ECN (its datagrams are Not-ECT), so where an RFC would
//! mark an ECN-capable packet these AQMs drop it, as the RFCs say they do
//! for Not-ECT traffic.
//!
//! The disciplines hold the datagrams; [`crate::Link`] serves them one at a
//! time at the line rate: a datagram is dequeued (and CoDel decides on its
//! sojourn time) when the previous one's serialisation ends, and its own
//! serialisation starts then. Everything is driven by explicit times; PIE's
//! periodic update runs at its own times (every `t_update` from the first
//! arrival) interleaved in time order with the dequeues.
//!
//! Sizes are wire sizes (UDP payload plus the link's overhead). The MTU the
//! RFCs refer to (CoDel's `maxpacket`, PIE's `MEAN_PKTSIZE`, FQ-CoDel's
//! quantum) is [`MTU_BYTES`] = 1514, the Ethernet frame RFC 8290 §5.1 uses.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use lbe_units::parse_duration;

/// The MTU the AQMs use (CoDel's `maxpacket`, PIE's `MEAN_PKTSIZE`):
/// 1514 bytes. RFC 8290 §4.1: "The default quantum is 1514 bytes, which
/// is the MTU plus the hardware header length".
pub const MTU_BYTES: u64 = 1514;

/// CoDel's parameters (RFC 8289 §4.3, §4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// The acceptable standing queue delay; RFC 8289 §4.4: "TARGET ... 5
    /// ms".
    pub target: Duration,
    /// The sliding window of the minimum; RFC 8289 §4.3: "INTERVAL ... 100
    /// ms".
    pub interval: Duration,
}

impl Default for CodelParams {
    fn default() -> Self {
        Self {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
        }
    }
}

/// FQ-CoDel's parameters (RFC 8290 §5.1, §4.1); the memory limit is the
/// link's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCodelParams {
    /// Each queue's CoDel.
    pub codel: CodelParams,
    /// Number of queues; RFC 8290 §5.1: "the default number of flows is
    /// 1024".
    pub flows: u32,
    /// Bytes a queue may dequeue per round; RFC 8290 §4.1: "The default
    /// quantum is 1514 bytes".
    pub quantum: u32,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        Self {
            codel: CodelParams::default(),
            flows: 1024,
            quantum: MTU_BYTES as u32,
        }
    }
}

/// PIE's parameters (RFC 8033 §4, Appendix A).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    /// QDELAY_REF, the latency target: "default: 15 milliseconds".
    pub target: Duration,
    /// T_UPDATE, the period of the drop probability's update: "default: 15
    /// milliseconds".
    pub t_update: Duration,
    /// alpha, in 1/s: "default: 1/8".
    pub alpha: f64,
    /// beta, in 1/s: "default: 1 + 1/4".
    pub beta: f64,
    /// MAX_BURST, the burst allowance: "default: 150 milliseconds".
    pub max_burst: Duration,
}

impl Default for PieParams {
    fn default() -> Self {
        Self {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
        }
    }
}

/// The queue discipline of the bottleneck.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Aqm {
    /// Drop-tail FIFO (the default).
    #[default]
    Fifo,
    /// CoDel, RFC 8289, over one FIFO; drop-tail when the buffer is full.
    Codel(CodelParams),
    /// FQ-CoDel, RFC 8290: the buffer is its memory limit.
    FqCodel(FqCodelParams),
    /// PIE, RFC 8033; drop-tail when the buffer is full.
    Pie(PieParams),
}

impl Aqm {
    /// Its name in scenario files and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Aqm::Fifo => "fifo",
            Aqm::Codel(_) => "codel",
            Aqm::FqCodel(_) => "fq_codel",
            Aqm::Pie(_) => "pie",
        }
    }
}

impl fmt::Display for Aqm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Aqm::Fifo => write!(f, "fifo"),
            Aqm::Codel(c) => write!(f, "codel(target {:?}, interval {:?})", c.target, c.interval),
            Aqm::FqCodel(q) => write!(
                f,
                "fq_codel(target {:?}, interval {:?}, flows {}, quantum {} B)",
                q.codel.target, q.codel.interval, q.flows, q.quantum
            ),
            Aqm::Pie(p) => write!(
                f,
                "pie(target {:?}, t_update {:?}, alpha {}, beta {}, max_burst {:?})",
                p.target, p.t_update, p.alpha, p.beta, p.max_burst
            ),
        }
    }
}

/// The AQM names allowed.
pub const AQM_NAMES: &str = "fifo, codel, fq_codel, pie";

/// Every AQM parameter key, with the AQMs it applies to.
pub const AQM_PARAMS: &[(&str, &[&str])] = &[
    ("codel_target", &["codel", "fq_codel"]),
    ("codel_interval", &["codel", "fq_codel"]),
    ("fq_flows", &["fq_codel"]),
    ("fq_quantum", &["fq_codel"]),
    ("pie_target", &["pie"]),
    ("pie_tupdate", &["pie"]),
    ("pie_alpha", &["pie"]),
    ("pie_beta", &["pie"]),
    ("pie_max_burst", &["pie"]),
];

/// Builds an AQM from its name and `(key, value)` parameters (the keys of
/// [`AQM_PARAMS`], as scenario files spell them; `lbe-netem`'s flags are
/// the same with dashes). A one-line error for an unknown name, a
/// parameter of another AQM, or a bad value.
pub fn build_aqm(name: &str, params: &[(&str, &str)]) -> Result<Aqm, String> {
    let mut aqm = match name {
        "fifo" => Aqm::Fifo,
        "codel" => Aqm::Codel(CodelParams::default()),
        "fq_codel" => Aqm::FqCodel(FqCodelParams::default()),
        "pie" => Aqm::Pie(PieParams::default()),
        other => {
            return Err(format!(
                "unknown aqm '{other}': expected one of {AQM_NAMES}"
            ))
        }
    };
    for &(key, value) in params {
        let Some((_, applies)) = AQM_PARAMS.iter().find(|(k, _)| *k == key) else {
            let keys: Vec<&str> = AQM_PARAMS.iter().map(|(k, _)| *k).collect();
            return Err(format!(
                "unknown aqm parameter '{key}': expected one of {}",
                keys.join(", ")
            ));
        };
        if !applies.contains(&name) {
            return Err(format!(
                "{key} applies to aqm {} only, not to aqm {name}",
                applies.join(" or ")
            ));
        }
        let bad = |why: &str| format!("bad {key} '{value}': {why}");
        let duration = || -> Result<Duration, String> {
            let d = parse_duration(value).map_err(|e| bad(&e))?;
            if d.is_zero() {
                return Err(bad("must be greater than zero"));
            }
            Ok(d)
        };
        let positive = || -> Result<f64, String> {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| bad("expected a positive number"))
        };
        let count = |max: u64| -> Result<u64, String> {
            value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|v| (1..=max).contains(v))
                .ok_or_else(|| bad(&format!("expected a whole number from 1 to {max}")))
        };
        match (&mut aqm, key) {
            (Aqm::Codel(c), "codel_target") => c.target = duration()?,
            (Aqm::Codel(c), "codel_interval") => c.interval = duration()?,
            (Aqm::FqCodel(q), "codel_target") => q.codel.target = duration()?,
            (Aqm::FqCodel(q), "codel_interval") => q.codel.interval = duration()?,
            (Aqm::FqCodel(q), "fq_flows") => q.flows = count(65_536)? as u32,
            (Aqm::FqCodel(q), "fq_quantum") => q.quantum = count(1 << 20)? as u32,
            (Aqm::Pie(p), "pie_target") => p.target = duration()?,
            (Aqm::Pie(p), "pie_tupdate") => p.t_update = duration()?,
            (Aqm::Pie(p), "pie_alpha") => p.alpha = positive()?,
            (Aqm::Pie(p), "pie_beta") => p.beta = positive()?,
            (Aqm::Pie(p), "pie_max_burst") => {
                p.max_burst = parse_duration(value).map_err(|e| bad(&e))?
            }
            _ => unreachable!("AQM_PARAMS lists which AQM takes {key}"),
        }
    }
    Ok(aqm)
}

/// Why the link dropped a datagram that had reached the queue discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full (drop-tail, or FQ-CoDel's memory limit).
    Buffer,
    /// The AQM's control law (CoDel at dequeue, PIE's early drop).
    Aqm,
}

/// A datagram inside a queue discipline.
#[derive(Debug)]
pub(crate) struct Packet<T> {
    /// When it arrived (CoDel's and PIE's timestamp).
    pub(crate) enqueued: Instant,
    pub(crate) wire: u64,
    pub(crate) flow: u64,
    pub(crate) id: u64,
    pub(crate) payload: usize,
    pub(crate) delay: Duration,
    pub(crate) item: T,
}

/// Drops made while enqueueing or dequeueing, for the link to count.
pub(crate) type Drops<T> = Vec<(Packet<T>, DropReason)>;

/// One FIFO with its byte count.
struct SubQueue<T> {
    pkts: VecDeque<Packet<T>>,
    bytes: u64,
}

impl<T> SubQueue<T> {
    fn new() -> Self {
        Self {
            pkts: VecDeque::new(),
            bytes: 0,
        }
    }
    fn push(&mut self, p: Packet<T>) {
        self.bytes += p.wire;
        self.pkts.push_back(p);
    }
    fn pop(&mut self) -> Option<Packet<T>> {
        let p = self.pkts.pop_front()?;
        self.bytes -= p.wire;
        Some(p)
    }
}

/// CoDel's state variables (RFC 8289 §5.2), for one queue.
#[derive(Clone, Debug, Default)]
pub(crate) struct CodelState {
    /// `first_above_time_`; `None` is the RFC's 0.
    first_above_time: Option<Instant>,
    /// `drop_next_`; `None` is the RFC's 0 (never dropped).
    drop_next: Option<Instant>,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

/// RFC 8289 §5.5: "time_t codel_queue_t::control_law(time_t t, uint32_t
/// count) { return t + INTERVAL / sqrt(count); }" (in exact floating point,
/// truncated to the nanosecond; Linux approximates 1/sqrt by Newton steps).
fn control_law(t: Instant, count: u32, interval: Duration) -> Instant {
    t + Duration::from_nanos((interval.as_nanos() as f64 / f64::from(count).sqrt()) as u64)
}

impl CodelState {
    /// RFC 8289 §5.3, `dodequeue`: takes the head and says whether it is
    /// OK to drop it. `others` is the bytes queued outside `q` (the rest of
    /// FQ-CoDel's queues: Linux's fq_codel compares the whole backlog with
    /// the MTU).
    fn dodequeue<T>(
        &mut self,
        now: Instant,
        q: &mut SubQueue<T>,
        others: u64,
        p: &CodelParams,
    ) -> (Option<Packet<T>>, bool) {
        let Some(pkt) = q.pop() else {
            // "queue is empty - we can't be above target"
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_duration_since(pkt.enqueued);
        // "if (sojourn_time < TARGET || bytes() <= maxpacket_) {
        //      // went below - stay below for at least INTERVAL
        //      first_above_time_ = 0;"
        if sojourn < p.target || q.bytes + others <= MTU_BYTES {
            self.first_above_time = None;
            return (Some(pkt), false);
        }
        match self.first_above_time {
            // "just went above from below. if still above at
            //  first_above_time, will say it's ok to drop."
            None => {
                self.first_above_time = Some(now + p.interval);
                (Some(pkt), false)
            }
            Some(t) => (Some(pkt), now >= t),
        }
    }

    /// RFC 8289 §5.4, `dequeue`: the next datagram to send, dropping as the
    /// control law says.
    fn dequeue<T>(
        &mut self,
        now: Instant,
        q: &mut SubQueue<T>,
        others: u64,
        p: &CodelParams,
        drops: &mut Drops<T>,
    ) -> Option<Packet<T>> {
        let (mut pkt, mut ok_to_drop) = self.dodequeue(now, q, others, p);
        let Some(head) = pkt.take() else {
            // "an empty queue takes us out of dropping state"
            self.dropping = false;
            return None;
        };
        pkt = Some(head);
        if self.dropping {
            if !ok_to_drop {
                // "sojourn time below TARGET - leave dropping state"
                self.dropping = false;
            }
            // "Time for the next drop. Drop current packet and dequeue
            //  next. If the dequeue doesn't take us out of dropping
            //  state, schedule the next drop. A large backlog might
            //  result in drop rates so high that the next drop should
            //  happen now, hence the 'while' loop."
            while self.dropping && self.drop_next.is_some_and(|d| now >= d) {
                if let Some(x) = pkt.take() {
                    drops.push((x, DropReason::Aqm));
                }
                self.count += 1;
                (pkt, ok_to_drop) = self.dodequeue(now, q, others, p);
                if !ok_to_drop {
                    // "leave dropping state"
                    self.dropping = false;
                } else {
                    // "schedule the next drop."
                    let next = self.drop_next.unwrap_or(now);
                    self.drop_next = Some(control_law(next, self.count, p.interval));
                }
            }
        } else if ok_to_drop {
            // "The 'ok_to_drop' return from dodequeue means that the
            //  sojourn time has been above 'TARGET' for 'INTERVAL', so
            //  enter dropping state."
            if let Some(x) = pkt.take() {
                drops.push((x, DropReason::Aqm));
            }
            (pkt, _) = self.dodequeue(now, q, others, p);
            self.dropping = true;
            // "If min went above TARGET close to when it last went
            //  below, assume that the drop rate that controlled the
            //  queue on the last cycle is a good starting point to
            //  control it now."
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = 1;
            // "if ((delta > 1) && (now - drop_next_ < 16*INTERVAL))
            //      count_ = delta;"
            if delta > 1
                && self
                    .drop_next
                    .is_some_and(|d| now.saturating_duration_since(d) < p.interval * 16)
            {
                self.count = delta;
            }
            self.drop_next = Some(control_law(now, self.count, p.interval));
            self.lastcount = self.count;
        }
        pkt
    }
}

/// CoDel over one FIFO.
pub(crate) struct Codel<T> {
    params: CodelParams,
    q: SubQueue<T>,
    state: CodelState,
}

/// One of FQ-CoDel's queues (RFC 8290 §4: "each queue ... is managed by
/// the CoDel queueing discipline").
struct FqFlow<T> {
    q: SubQueue<T>,
    codel: CodelState,
    deficit: i64,
    /// Which list it is on, if any.
    list: Option<List>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    New,
    Old,
}

pub(crate) struct FqCodel<T> {
    params: FqCodelParams,
    flows: Vec<FqFlow<T>>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    bytes: u64,
    packets: usize,
    /// Perturbs the flow hash, as Linux draws one per qdisc.
    perturbation: u64,
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl<T> FqCodel<T> {
    /// RFC 8290 §4.1.1: "the packet is hashed into one of the queues" —
    /// the flow key, perturbed by the link's seed, modulo the number of
    /// queues (two flows may share a queue, as in a router).
    fn bucket(&self, flow: u64) -> usize {
        (mix64(flow ^ self.perturbation) % u64::from(self.params.flows)) as usize
    }

    fn enqueue(&mut self, pkt: Packet<T>) {
        let b = self.bucket(pkt.flow);
        self.bytes += pkt.wire;
        self.packets += 1;
        let f = &mut self.flows[b];
        f.q.push(pkt);
        // RFC 8290 §4.1.1: "If the queue is not currently active (i.e., if
        // it is not in either the list of new queues or the list of old
        // queues), it is added to the end of the list of new queues, and
        // its number of credits is set to the configured quantum."
        if f.list.is_none() {
            f.list = Some(List::New);
            f.deficit = i64::from(self.params.quantum);
            self.new_flows.push_back(b);
        }
    }

    /// RFC 8290 §4.1: "FQ-CoDel drops packets from the head of the queue
    /// with the largest current byte count when the total number of
    /// queued bytes exceeds the memory limit" (one datagram; the caller
    /// repeats while over the limit).
    fn drop_from_fattest(&mut self) -> Option<Packet<T>> {
        let (b, _) = self
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.q.bytes > 0)
            .max_by_key(|(i, f)| (f.q.bytes, std::cmp::Reverse(*i)))?;
        let pkt = self.flows[b].q.pop()?;
        self.bytes -= pkt.wire;
        self.packets -= 1;
        Some(pkt)
    }

    /// RFC 8290 §4.2, the scheduler's dequeue.
    fn dequeue(&mut self, now: Instant, drops: &mut Drops<T>) -> Option<Packet<T>> {
        loop {
            // "the scheduler first looks at the list of new queues; for the
            //  queue at the head of that list ... If the list of new queues
            //  is empty, the scheduler proceeds to the list of old queues in
            //  the same fashion"
            let (from, b) = match self.new_flows.front() {
                Some(&b) => (List::New, b),
                None => (List::Old, *self.old_flows.front()?),
            };
            let f = &mut self.flows[b];
            // "If that queue has a negative number of credits (i.e., it has
            //  already dequeued at least a quantum of bytes), it is given an
            //  additional quantum of credits, the queue is put onto the end
            //  of the list of old queues, and the routine selects the next
            //  queue and starts again." (Linux's `deficit <= 0`.)
            if f.deficit <= 0 {
                f.deficit += i64::from(self.params.quantum);
                self.pop_list(from);
                self.flows[b].list = Some(List::Old);
                self.old_flows.push_back(b);
                continue;
            }
            let others = self.bytes - f.q.bytes;
            let before = drops.len();
            let pkt = f
                .codel
                .dequeue(now, &mut f.q, others, &self.params.codel, drops);
            for (d, _) in &drops[before..] {
                self.bytes -= d.wire;
                self.packets -= 1;
            }
            match pkt {
                Some(pkt) => {
                    // "the packet is dequeued ... the size of the packet is
                    //  subtracted from the number of credits"
                    self.flows[b].deficit -= pkt.wire as i64;
                    self.bytes -= pkt.wire;
                    self.packets -= 1;
                    return Some(pkt);
                }
                None => {
                    // "If the CoDel algorithm does not return a packet, then
                    //  the queue must be empty, and the scheduler does one of
                    //  two things. If the queue selected for dequeue came
                    //  from the list of new queues, it is moved to the end of
                    //  the list of old queues. If instead it came from the
                    //  list of old queues, that queue is removed from the
                    //  list"
                    self.pop_list(from);
                    // Linux moves it to the old list only if that list is
                    // not empty (else it would be picked again at once).
                    if from == List::New && !self.old_flows.is_empty() {
                        self.flows[b].list = Some(List::Old);
                        self.old_flows.push_back(b);
                    } else {
                        self.flows[b].list = None;
                    }
                }
            }
        }
    }

    fn pop_list(&mut self, from: List) {
        match from {
            List::New => self.new_flows.pop_front(),
            List::Old => self.old_flows.pop_front(),
        };
    }
}

/// PIE's state variables (RFC 8033 Appendix A).
pub(crate) struct Pie<T> {
    params: PieParams,
    q: SubQueue<T>,
    /// `drop_prob_`.
    drop_prob: f64,
    /// `accu_prob_` (§5.4, de-randomisation).
    accu_prob: f64,
    /// `qdelay_old_`, seconds.
    qdelay_old: f64,
    /// `current_qdelay`, seconds: the sojourn time of the last dequeued
    /// datagram, 0 once the queue is empty.
    current_qdelay: f64,
    /// `burst_allowance_`, seconds.
    burst_allowance: f64,
    /// `last_timestamp_`: the last update, or the first arrival.
    last_update: Option<Instant>,
}

impl<T> Pie<T> {
    /// RFC 8033 Appendix A, `drop_early()`; `byte_length` includes the
    /// arriving datagram. `u` is a uniform draw in [0, 1), taken only when
    /// the pseudo-code calls `random()`.
    fn drop_early(&mut self, byte_length: u64, mut u: impl FnMut() -> f64) -> bool {
        let target = self.params.target.as_secs_f64();
        // "PIE is active but the queue is not congested: return ENQUE
        //  if ( (PIE->qdelay_old_ < QDELAY_REF/2 && PIE->drop_prob_ < 20%)
        //       || (queue_.byte_length() <= 2 * MEAN_PKTSIZE) )"
        if (self.qdelay_old < target / 2.0 && self.drop_prob < 0.2) || byte_length <= 2 * MTU_BYTES
        {
            return false;
        }
        // "if (PIE->drop_prob_ == 0) { PIE->accu_prob_ = 0; }"
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        // "PIE->accu_prob_ += PIE->drop_prob_;
        //  if (PIE->accu_prob_ < 0.85) return ENQUE;
        //  if (PIE->accu_prob_ >= 8.5) return DROP;"
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            return true;
        }
        // "double u = random(); if (u < PIE->drop_prob_) {
        //  PIE->accu_prob_ = 0; return DROP; }"
        if u() < self.drop_prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }

    fn next_update(&self) -> Option<Instant> {
        self.last_update.map(|t| t + self.params.t_update)
    }

    /// RFC 8033 Appendix A, `calculate_drop_prob()`, every T_UPDATE (with
    /// the timestamp method of measuring the delay, §4.2's and Appendix
    /// A's "We choose the timestamp option of obtaining latency for
    /// clarity", rather than §5.2's dequeue-rate estimation).
    fn update(&mut self, now: Instant) {
        let p_ = &self.params;
        let target = p_.target.as_secs_f64();
        let qdelay = self.current_qdelay;
        // "p = alpha * (current_qdelay - QDELAY_REF) +
        //      beta * (current_qdelay - PIE->qdelay_old_);"
        let mut p = p_.alpha * (qdelay - target) + p_.beta * (qdelay - self.qdelay_old);
        // §4.2's auto-tuning: "if (PIE->drop_prob_ < 0.000001) { p /= 2048;
        //  } else if (PIE->drop_prob_ < 0.00001) { p /= 512; } ... else if
        //  (PIE->drop_prob_ < 0.1) { p /= 2; } else { p = p; }"
        let scale = match self.drop_prob {
            d if d < 0.000001 => 2048.0,
            d if d < 0.00001 => 512.0,
            d if d < 0.0001 => 128.0,
            d if d < 0.001 => 32.0,
            d if d < 0.01 => 8.0,
            d if d < 0.1 => 2.0,
            _ => 1.0,
        };
        p /= scale;
        // "if (PIE->drop_prob_ >= 0.1 && p > 0.02) { p = 0.02; }"
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        // §4.3: "Exponentially decay drop prob when congestion goes away
        //  if (current_qdelay == 0 && PIE->qdelay_old_ == 0) {
        //      PIE->drop_prob_ *= 0.98; }"
        if qdelay == 0.0 && self.qdelay_old == 0.0 {
            self.drop_prob *= 0.98;
        }
        // "Bound drop probability"
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        // §4.4: "PIE->burst_allowance_ = max(0, PIE->burst_allowance_ -
        //  T_UPDATE);" and the reset to MAX_BURST once the queue is calm:
        //  "if ( (PIE->drop_prob_ == 0) && (current_qdelay < QDELAY_REF/2)
        //  && (PIE->qdelay_old_ < QDELAY_REF/2) )".
        self.burst_allowance = (self.burst_allowance - p_.t_update.as_secs_f64()).max(0.0);
        if self.drop_prob == 0.0 && qdelay < target / 2.0 && self.qdelay_old < target / 2.0 {
            self.burst_allowance = p_.max_burst.as_secs_f64();
        }
        // "PIE->qdelay_old_ = current_qdelay; PIE->last_timestamp_ = now;"
        self.qdelay_old = qdelay;
        self.last_update = Some(now);
    }
}

/// A queue discipline other than the FIFO, holding datagrams for the link.
pub(crate) enum Discipline<T> {
    Codel(Codel<T>),
    FqCodel(FqCodel<T>),
    Pie(Pie<T>),
}

/// What [`Discipline::enqueue`] did with the arriving datagram.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    Queued,
    Dropped(DropReason),
}

impl<T> Discipline<T> {
    /// The discipline `aqm` asks for (`None` for the FIFO, which the link
    /// runs itself); `seed` perturbs FQ-CoDel's hash.
    pub(crate) fn new(aqm: &Aqm, seed: u64) -> Option<Self> {
        Some(match *aqm {
            Aqm::Fifo => return None,
            Aqm::Codel(params) => Discipline::Codel(Codel {
                params,
                q: SubQueue::new(),
                state: CodelState::default(),
            }),
            Aqm::FqCodel(params) => Discipline::FqCodel(FqCodel {
                params,
                flows: (0..params.flows)
                    .map(|_| FqFlow {
                        q: SubQueue::new(),
                        codel: CodelState::default(),
                        deficit: 0,
                        list: None,
                    })
                    .collect(),
                new_flows: VecDeque::new(),
                old_flows: VecDeque::new(),
                bytes: 0,
                packets: 0,
                perturbation: mix64(seed ^ 0x6671_5f63_6f64_656c),
            }),
            Aqm::Pie(params) => Discipline::Pie(Pie {
                params,
                q: SubQueue::new(),
                drop_prob: 0.0,
                accu_prob: 0.0,
                qdelay_old: 0.0,
                current_qdelay: 0.0,
                burst_allowance: params.max_burst.as_secs_f64(),
                last_update: None,
            }),
        })
    }

    /// Bytes queued (not counting the datagram being serialised).
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        match self {
            Discipline::Codel(c) => c.q.bytes,
            Discipline::FqCodel(f) => f.bytes,
            Discipline::Pie(p) => p.q.bytes,
        }
    }

    /// Datagrams queued.
    pub(crate) fn len(&self) -> usize {
        match self {
            Discipline::Codel(c) => c.q.pkts.len(),
            Discipline::FqCodel(f) => f.packets,
            Discipline::Pie(p) => p.q.pkts.len(),
        }
    }

    /// Offers `pkt`, arriving at its `enqueued` time; `in_service` is the
    /// wire size of the datagram being serialised (it still holds buffer
    /// space), `capacity` the buffer. Datagrams of other flows that had to
    /// go (FQ-CoDel's overflow) are pushed on `drops`.
    pub(crate) fn enqueue(
        &mut self,
        pkt: Packet<T>,
        in_service: u64,
        capacity: Option<u64>,
        mut uniform: impl FnMut() -> f64,
        drops: &mut Drops<T>,
    ) -> Admit {
        let full =
            |queued: u64, wire: u64| capacity.is_some_and(|c| in_service + queued + wire > c);
        match self {
            Discipline::Codel(c) => {
                if full(c.q.bytes, pkt.wire) {
                    return Admit::Dropped(DropReason::Buffer);
                }
                c.q.push(pkt);
                Admit::Queued
            }
            Discipline::Pie(p) => {
                if p.last_update.is_none() {
                    p.last_update = Some(pkt.enqueued);
                }
                // "if (queue_.is_full()) { drop(packet); PIE->accu_prob_ = 0; }"
                if full(p.q.bytes, pkt.wire) {
                    p.accu_prob = 0.0;
                    return Admit::Dropped(DropReason::Buffer);
                }
                // "else if (PIE->active_ == TRUE && drop_early() == DROP &&
                //  PIE->burst_allowance_ == 0) { ... drop(packet);
                //  PIE->accu_prob_ = 0; }" (always active: §5.3's optional
                //  active/inactive states are not implemented, as in Linux)
                let byte_length = in_service + p.q.bytes + pkt.wire;
                if p.drop_early(byte_length, &mut uniform) && p.burst_allowance == 0.0 {
                    p.accu_prob = 0.0;
                    return Admit::Dropped(DropReason::Aqm);
                }
                p.q.push(pkt);
                Admit::Queued
            }
            Discipline::FqCodel(f) => {
                let id = pkt.id;
                f.enqueue(pkt);
                let mut admit = Admit::Queued;
                while full(f.bytes, 0) {
                    let Some(victim) = f.drop_from_fattest() else {
                        break;
                    };
                    if victim.id == id {
                        admit = Admit::Dropped(DropReason::Buffer);
                    } else {
                        drops.push((victim, DropReason::Buffer));
                    }
                }
                admit
            }
        }
    }

    /// The next datagram to serialise at `now`, if any; the AQM's drops go
    /// on `drops`.
    pub(crate) fn dequeue(&mut self, now: Instant, drops: &mut Drops<T>) -> Option<Packet<T>> {
        match self {
            Discipline::Codel(c) => c.state.dequeue(now, &mut c.q, 0, &c.params, drops),
            Discipline::FqCodel(f) => f.dequeue(now, drops),
            Discipline::Pie(p) => {
                let pkt = p.q.pop()?;
                // "deque(Packet packet) { current_qdelay =
                //  packet.timestamp_delay(); }"; once the queue is empty the
                //  delay reads 0, as Linux's sch_pie sets it (the
                //  pseudo-code would keep the last sojourn time, and an idle
                //  queue's drop probability would keep growing).
                p.current_qdelay = if p.q.pkts.is_empty() {
                    0.0
                } else {
                    now.saturating_duration_since(pkt.enqueued).as_secs_f64()
                };
                Some(pkt)
            }
        }
    }

    /// When the discipline's own timer (PIE's update) next fires.
    pub(crate) fn next_timer(&self) -> Option<Instant> {
        match self {
            Discipline::Pie(p) => p.next_update(),
            _ => None,
        }
    }

    /// Runs the timer due at `now`.
    pub(crate) fn on_timer(&mut self, now: Instant) {
        if let Discipline::Pie(p) = self {
            p.update(now);
        }
    }

    /// PIE's drop probability (tests and stats).
    pub(crate) fn drop_probability(&self) -> Option<f64> {
        match self {
            Discipline::Pie(p) => Some(p.drop_prob),
            _ => None,
        }
    }

    /// FQ-CoDel's queue for `flow` (tests).
    #[cfg(test)]
    pub(crate) fn bucket(&self, flow: u64) -> Option<usize> {
        match self {
            Discipline::FqCodel(f) => Some(f.bucket(flow)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_rfcs() {
        assert_eq!(build_aqm("fifo", &[]), Ok(Aqm::Fifo));
        let Ok(Aqm::Codel(c)) = build_aqm("codel", &[]) else {
            panic!()
        };
        assert_eq!(
            (c.target, c.interval),
            (Duration::from_millis(5), Duration::from_millis(100))
        );
        let Ok(Aqm::FqCodel(q)) = build_aqm("fq_codel", &[]) else {
            panic!()
        };
        assert_eq!((q.flows, q.quantum, q.codel), (1024, 1514, c));
        let Ok(Aqm::Pie(p)) = build_aqm("pie", &[]) else {
            panic!()
        };
        assert_eq!(
            p,
            PieParams {
                target: Duration::from_millis(15),
                t_update: Duration::from_millis(15),
                alpha: 0.125,
                beta: 1.25,
                max_burst: Duration::from_millis(150),
            }
        );
    }

    #[test]
    fn parameters_override_and_bad_ones_are_one_line_errors() {
        let Ok(Aqm::FqCodel(q)) = build_aqm(
            "fq_codel",
            &[
                ("codel_target", "10ms"),
                ("fq_flows", "64"),
                ("fq_quantum", "300"),
            ],
        ) else {
            panic!()
        };
        assert_eq!(
            (q.codel.target, q.flows, q.quantum),
            (Duration::from_millis(10), 64, 300)
        );
        let Ok(Aqm::Pie(p)) = build_aqm("pie", &[("pie_tupdate", "30ms"), ("pie_alpha", "0.25")])
        else {
            panic!()
        };
        assert_eq!((p.t_update, p.alpha), (Duration::from_millis(30), 0.25));
        for (name, params, want) in [
            (
                "red",
                vec![],
                "unknown aqm 'red': expected one of fifo, codel, fq_codel, pie",
            ),
            (
                "fifo",
                vec![("codel_target", "5ms")],
                "codel_target applies to aqm codel or fq_codel only, not to aqm fifo",
            ),
            (
                "codel",
                vec![("fq_flows", "8")],
                "fq_flows applies to aqm fq_codel only, not to aqm codel",
            ),
            (
                "pie",
                vec![("codel_interval", "1s")],
                "codel_interval applies to aqm codel or fq_codel only, not to aqm pie",
            ),
            (
                "fq_codel",
                vec![("fq_flows", "0")],
                "bad fq_flows '0': expected a whole number from 1 to 65536",
            ),
            (
                "codel",
                vec![("codel_target", "0ms")],
                "bad codel_target '0ms': must be greater than zero",
            ),
            (
                "pie",
                vec![("pie_beta", "-1")],
                "bad pie_beta '-1': expected a positive number",
            ),
        ] {
            assert_eq!(build_aqm(name, &params), Err(want.to_string()));
        }
        let e = build_aqm("codel", &[("target", "5ms")]).unwrap_err();
        assert!(
            e.starts_with("unknown aqm parameter 'target': expected one of codel_target"),
            "{e}"
        );
        let e = build_aqm("codel", &[("codel_target", "5")]).unwrap_err();
        assert!(e.starts_with("bad codel_target '5'"), "{e}");
    }
}
