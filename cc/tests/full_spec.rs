//! `profile=full` of LEDBAT++ written a second time, plainly, from its
//! page (docs/ledbatpp-full.md) alone, and driven side by side with the
//! crate's `ledbatpp:profile=full` through random event sequences: after
//! every event the window, the state name and the pacing rate must be
//! equal (a differential property test).
//!
//! What the model takes from the crate: nothing but the event types
//! (`AckEvent`, `LossEvent`, …) it is fed through. The page specifies the
//! delay quantities (its "Delay estimator" section: the adjusted RTT
//! sample, the current-delay filter, the bucketed base history), so the
//! model computes them itself instead of using `lbe_cc::delay`. The page
//! covers the round-trip delay signal only: the events here never carry a
//! one-way delay sample, and with `delay=auto` (full's) the signal then
//! stays the round trip. Deadline steering (`deadline=`, `crate::deadline`)
//! is outside the page and never used here.
//!
//! Floats: the model does the page's arithmetic in the page's order, so
//! every `f64` is bit-for-bit the crate's, and the comparisons are exact
//! (no tolerance).

use std::collections::VecDeque;
use std::time::Duration;
use std::time::Instant;

use lbe_cc::AckEvent;
use lbe_cc::AckedPacket;
use lbe_cc::CongestionController;
use lbe_cc::ControllerConfig;
use lbe_cc::LossEvent;
use lbe_cc::PathInfo;
use lbe_cc::RttInfo;
use proptest::prelude::*;
use proptest::test_runner::Config;
use proptest::test_runner::TestRunner;

mod common;

/// The page's pseudo-code, in Rust: names and order as on the page.
mod model {
    use super::*;

    // Constants of `profile=full` (the page's "Scope and notation").
    pub const MAX_WINDOW: f64 = 4_294_967_296.0; // 2^32 bytes
    const T_CONF: Duration = Duration::from_millis(60);
    const GAIN_DIVISOR_MAX: u128 = 16;
    const SS_EXIT: f64 = 0.75;
    const INIT_CWND: f64 = 2.0; // packets
    const MIN_CWND: f64 = 1.0; // packets
    const FREEZE_CWND: f64 = 2.0; // packets
    const SLOWDOWN_RTTS: u32 = 2;
    const INITIAL_SLOWDOWN_ROUNDS: u64 = 2;
    const DUTY: f64 = 0.02;
    const PERIOD_MIN: Duration = Duration::from_secs(10);
    const PERIOD_MAX: Duration = Duration::from_secs(60);
    const EMPTY_CONF: Duration = Duration::from_millis(15);
    const MARGIN_CONF: Duration = Duration::from_millis(4);
    const C: f64 = 0.25;
    const TARGET_FRACTION: f64 = 0.15;
    const TARGET_MIN: Duration = Duration::from_micros(2500);
    const JITTER_ALLOWANCE: f64 = 3.25;
    const NOISE_ROUNDS: usize = 16;
    const GAIN_MAX_QUEUE: f64 = 4.0;
    const SHARP_DECREASE: f64 = 3.0;
    const GAIN_QUIET: Duration = Duration::from_secs(10);
    const FILL_QUIET: Duration = Duration::from_secs(2);
    const FILL_WINDOW_FULL: f64 = 0.8;
    const RANDOM_LOSS_MAX: f64 = 0.05;
    const RANDOM_LOSS_ROUNDS: u32 = 16;
    const FQ_YIELD: f64 = 0.6;
    const FQ_TEST_ROUNDS: u32 = 4;
    const FQ_TEST_MIN: Duration = Duration::from_millis(300);
    const FQ_SHARED_QUEUE: f64 = 2.0;
    const FQ_YIELD_WINDOW: f64 = 0.25;
    const CURRENT_FILTER: usize = 4;
    const BASE_HISTORY: usize = 10;
    const BASE_BUCKET: Duration = Duration::from_secs(60);
    /// The base history's length: 10 minutes (the rate's memory).
    const HISTORY: Duration = Duration::from_secs(600);

    fn ns(d: Duration) -> f64 {
        d.as_secs() as f64 * 1e9 + d.subsec_nanos() as f64
    }

    fn since(now: Instant, t: Instant) -> Duration {
        now.saturating_duration_since(t)
    }

    /// SplitMix64's first draw in [0, 1) for `seed`.
    fn splitmix64_draw(seed: u64) -> f64 {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The delay estimator (the page's "Delay estimator").
    #[derive(Clone, Debug, Default)]
    struct Delay {
        /// The last CURRENT_FILTER samples.
        recent: VecDeque<Duration>,
        /// Bucket minima, oldest first, the newest last (`None`: no sample).
        buckets: VecDeque<Option<Duration>>,
        /// When the newest bucket ends; `None` before the first sample.
        bucket_end: Option<Instant>,
    }

    impl Delay {
        fn advance(&mut self, now: Instant) {
            let Some(end) = self.bucket_end else { return };
            if now < end {
                return;
            }
            let steps = 1 + (now - end).as_nanos() / BASE_BUCKET.as_nanos();
            for _ in 0..steps.min(BASE_HISTORY as u128) {
                self.buckets.push_back(None);
            }
            while self.buckets.len() > BASE_HISTORY {
                self.buckets.pop_front();
            }
            let shift = Duration::from_nanos(
                u64::try_from(steps * BASE_BUCKET.as_nanos()).unwrap_or(u64::MAX),
            );
            self.bucket_end = Some(end.checked_add(shift).unwrap_or(now));
        }

        fn sample(&mut self, now: Instant, d: Duration) {
            self.advance(now);
            if self.bucket_end.is_none() {
                self.bucket_end = Some(now.checked_add(BASE_BUCKET).unwrap_or(now));
                self.buckets.push_back(None);
            }
            let newest = self.buckets.back_mut().unwrap();
            if d < newest.unwrap_or(Duration::MAX) {
                *newest = Some(d);
            }
            self.recent.push_back(d);
            if self.recent.len() > CURRENT_FILTER {
                self.recent.pop_front();
            }
        }

        fn current(&self) -> Option<Duration> {
            self.recent.iter().min().copied()
        }

        /// follow_route: every bucket's minimum up by `d`.
        fn raise_base(&mut self, d: Duration) {
            for b in self.buckets.iter_mut().flatten() {
                *b = b.saturating_add(d);
            }
        }

        fn base(&self) -> Option<Duration> {
            self.buckets.iter().flatten().min().copied()
        }

        fn queuing(&self) -> Duration {
            match (self.current(), self.base()) {
                (Some(c), Some(b)) => c.saturating_sub(b),
                _ => Duration::ZERO,
            }
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Phase {
        InitialSlowStart,
        SlowStart {
            rounds_left: u64,
        },
        CongestionAvoidance,
        Freeze {
            start: Instant,
            until: Instant,
            min_queue: Duration,
        },
        RampUp {
            slowdown_start: Instant,
            rounds_left: u64,
        },
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum NextSlowdown {
        None,
        AfterRounds(u64),
        At(Instant),
    }

    /// `fq`: `Idle` / `Testing{...}` / `Yielded{at, window_before}`.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Fq {
        Idle,
        Testing(Test),
        Yielded { at: Instant, window_before: f64 },
    }

    /// `Testing{since, window, rounds_left, slow, lost}`: a slow round
    /// (`slow`, its rate) and a loss since `since` (`lost`) yield.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Test {
        since: Instant,
        window: f64,
        rounds_left: u32,
        slow: Option<f64>,
        lost: bool,
    }

    /// Everything the checkpoint saves (the page's state table, "in the
    /// checkpoint: yes").
    #[derive(Clone, Copy, Debug)]
    struct Saved {
        cwnd: f64,
        ssthresh: f64,
        phase: Phase,
        next_slowdown: NextSlowdown,
        recovery_start: Option<Instant>,
        in_recovery: bool,
        skip_until: Option<Instant>,
        filling: bool,
        window_full_since: Option<Instant>,
        last_loss: Option<Instant>,
        last_congestion_loss: Option<Instant>,
        fast_growth_at: Option<Instant>,
        rl_since: Option<Instant>,
        rl_bytes: u64,
        rl_window: f64,
        rate_round: Option<Instant>,
        rate_bytes: f64,
        rate_spoiled: bool,
        largest_rate: Option<(f64, Instant)>,
        fq: Fq,
        /// follow_route: the queue the last freeze read, when it may be a
        /// longer path.
        route: Option<Duration>,
    }

    /// The ACK as `on_ack` reads it: its time, `bytes` (the acknowledged
    /// packets' sizes added up) and `largest` (when the latest of them was
    /// sent; `None` for an ACK of none).
    struct Acked {
        now: Instant,
        bytes: f64,
        largest: Option<Instant>,
    }

    /// The queue's band (the table's rows).
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Band {
        /// q ≤ EMPTY.
        Empty,
        /// EMPTY < q ≤ T − MARGIN.
        BelowT,
        /// T − MARGIN < q ≤ 3·T.
        NearT,
        /// q > 3·T.
        FarAbove,
    }

    /// What may grow the window on an ACK (the table's columns).
    enum Permit {
        Fill,
        Gain,
        None,
    }

    /// `sample` (RFC 9002 §5.3's plausibility rule): the latest RTT less
    /// the ACK delay (at most `max_ack_delay`) if that is at least
    /// `min_rtt`, else the latest RTT.
    fn adjusted(rtt: &RttInfo) -> Duration {
        let ack_delay = rtt.ack_delay.min(rtt.max_ack_delay);
        match rtt.latest_rtt.checked_sub(ack_delay) {
            Some(sample) if sample >= rtt.min_rtt => sample,
            _ => rtt.latest_rtt,
        }
    }

    /// `profile=full`, per the page.
    #[derive(Debug)]
    pub struct Full {
        s: Saved,
        checkpoint: Option<Saved>,
        mss: f64,
        min_window: f64,
        round_start: Option<Instant>,
        round_cwnd: f64,
        delay: Delay,
        /// The smallest and largest delay sample of the round under way,
        /// and how many (the page's "noise").
        round_samples: Option<(Duration, Duration, u32)>,
        /// The spreads of the last NOISE_ROUNDS rounds, oldest first.
        spreads: VecDeque<Duration>,
        /// T stands on the noise.
        jittery: bool,
        base: Option<Duration>,
        srtt: Option<Duration>,
        flight_after_send: u64,
        target_ns: f64,
        margin_ns: f64,
        empty: Duration,
        exit: Duration,
        gain: f64,
    }

    impl Full {
        pub fn new(max_datagram_size: u64) -> Self {
            let mss = max_datagram_size.max(1) as f64;
            let min_window = (MIN_CWND * mss).min(MAX_WINDOW);
            let cwnd = (INIT_CWND * mss).clamp(min_window, MAX_WINDOW);
            let mut full = Full {
                s: Saved {
                    cwnd,
                    ssthresh: f64::INFINITY,
                    phase: Phase::InitialSlowStart,
                    next_slowdown: NextSlowdown::None,
                    recovery_start: None,
                    in_recovery: false,
                    skip_until: None,
                    filling: false,
                    window_full_since: None,
                    last_loss: None,
                    last_congestion_loss: None,
                    fast_growth_at: None,
                    rl_since: None,
                    rl_bytes: 0,
                    rl_window: 0.0,
                    rate_round: None,
                    rate_bytes: 0.0,
                    rate_spoiled: false,
                    largest_rate: None,
                    fq: Fq::Idle,
                    route: None,
                },
                checkpoint: None,
                mss,
                min_window,
                round_start: None,
                round_cwnd: cwnd,
                delay: Delay::default(),
                round_samples: None,
                spreads: VecDeque::new(),
                jittery: false,
                base: None,
                srtt: None,
                flight_after_send: 0,
                target_ns: 0.0,
                margin_ns: 0.0,
                empty: Duration::ZERO,
                exit: Duration::ZERO,
                gain: 0.0,
            };
            full.set_target();
            full
        }

        fn clamp(&self, w: f64) -> f64 {
            if w < self.min_window {
                self.min_window
            } else if w > MAX_WINDOW {
                MAX_WINDOW
            } else {
                w
            }
        }

        pub fn window(&self) -> u64 {
            self.s.cwnd as u64
        }

        fn freeze_window(&self) -> f64 {
            self.min_window.max(FREEZE_CWND * self.mss)
        }

        /// The noise: the smallest spread of the last NOISE_ROUNDS rounds,
        /// zero until there are that many.
        fn noise(&self) -> Duration {
            match self.spreads.len() {
                NOISE_ROUNDS => self.spreads.iter().min().copied().unwrap_or_default(),
                _ => Duration::ZERO,
            }
        }

        /// T, the margin, the empty queue and GAIN from the base delay
        /// (and T from the noise).
        fn set_target(&mut self) {
            let t = match self.base {
                Some(b) if !b.is_zero() => {
                    let t = b.mul_f64(TARGET_FRACTION).max(TARGET_MIN);
                    let allowance = self.noise().mul_f64(JITTER_ALLOWANCE);
                    // On from 2·T, off below T.
                    self.jittery = allowance >= if self.jittery { t } else { t * 2 };
                    if self.jittery { allowance } else { t }.min(T_CONF)
                }
                _ => T_CONF,
            };
            let scale = t.as_secs_f64() / T_CONF.as_secs_f64();
            self.target_ns = ns(t);
            self.margin_ns = ns(MARGIN_CONF.mul_f64(scale)).min(self.target_ns);
            self.empty = EMPTY_CONF.mul_f64(scale);
            self.exit = T_CONF.mul_f64(SS_EXIT);
            let divisor = match self.base {
                Some(b) if !b.is_zero() => {
                    (2 * T_CONF.as_nanos() / b.as_nanos() + 1).min(GAIN_DIVISOR_MAX)
                }
                _ => GAIN_DIVISOR_MAX,
            };
            self.gain = 1.0 / divisor as f64;
        }

        fn quiet(&self, now: Instant) -> bool {
            self.s
                .last_congestion_loss
                .is_some_and(|t| since(now, t) < GAIN_QUIET)
        }

        fn yielded(&self) -> bool {
            matches!(self.s.fq, Fq::Yielded { .. })
        }

        pub fn state_name(&self, now: Instant) -> &'static str {
            if let Phase::Freeze { .. } = self.s.phase {
                "slowdown"
            } else if let Phase::RampUp { .. } = self.s.phase {
                "ramp_up"
            } else if self.s.in_recovery {
                "recovery"
            } else if let Phase::InitialSlowStart | Phase::SlowStart { .. } = self.s.phase {
                "slow_start"
            } else if self.yielded() {
                "yielded"
            } else if self.s.filling {
                "filling"
            } else if self.quiet(now) {
                "quiet"
            } else {
                "congestion_avoidance"
            }
        }

        /// `srtt or 0`.
        fn srtt_or_0(&self) -> Duration {
            self.srtt.unwrap_or_default()
        }

        fn current_rtt(&self) -> Option<Duration> {
            self.delay.current()?;
            Some(self.base? + self.delay.queuing())
        }

        pub fn pacing_rate(&self) -> Option<u64> {
            let (rtt, ratio) = if self.s.filling && self.s.phase == Phase::CongestionAvoidance {
                (self.current_rtt().or(self.srtt), 2.0)
            } else {
                let slow_start = matches!(
                    self.s.phase,
                    Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. }
                ) && self.s.cwnd < self.s.ssthresh / 2.0;
                let rtt = match (self.current_rtt(), self.srtt) {
                    (Some(current), Some(srtt)) => Some(current.min(srtt)),
                    _ => self.srtt,
                };
                (rtt, if slow_start { 2.0 } else { 1.2 })
            };
            let rtt = rtt.filter(|r| !r.is_zero())?;
            Some((ratio * self.window() as f64 / rtt.as_secs_f64()).round() as u64)
        }

        pub fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight: u64) {
            self.flight_after_send = in_flight.saturating_add(bytes);
            if self.flight_after_send as f64 >= FILL_WINDOW_FULL * self.s.cwnd {
                self.s.window_full_since.get_or_insert(now);
            } else {
                self.s.window_full_since = None;
            }
        }

        fn restart_round(&mut self, now: Instant) {
            self.round_start = Some(now);
            self.round_cwnd = self.s.cwnd;
        }

        pub fn on_ack(&mut self, event: &AckEvent<'_>) {
            let ack = Acked {
                now: event.now,
                bytes: event.acked.iter().map(|p| p.bytes).sum::<u64>() as f64,
                largest: event.acked.iter().map(|p| p.time_sent).max(),
            };
            let (now, largest, rtt) = (ack.now, ack.largest, event.rtt);
            // Recovery ends (RFC 9002 §7.3.2).
            let sent_after_recovery_start =
                |sent: Instant| self.s.recovery_start.is_none_or(|start| sent > start);
            if self.s.in_recovery && largest.is_some_and(sent_after_recovery_start) {
                self.s.in_recovery = false;
            }
            if rtt.new_sample {
                self.srtt = Some(rtt.smoothed_rtt);
            }
            let skipping = self
                .s
                .skip_until
                .is_some_and(|until| largest.is_none_or(|sent| sent < until));
            if !skipping {
                self.s.skip_until = None;
            }
            let sampled = rtt.new_sample && !skipping;
            if sampled {
                let d = adjusted(&rtt);
                self.round_samples = Some(match self.round_samples {
                    None => (d, d, 1),
                    Some((lo, hi, n)) => (lo.min(d), hi.max(d), n + 1),
                });
                self.delay.sample(now, d);
            } else {
                self.delay.advance(now);
            }
            if self.delay.base() != self.base {
                self.base = self.delay.base();
                self.set_target();
            }
            let q = self.delay.queuing();
            if sampled {
                if let Phase::Freeze { min_queue, .. } = &mut self.s.phase {
                    *min_queue = (*min_queue).min(q);
                }
            }
            // Rounds: a round ends at the first ACK of a packet sent at or
            // after its start.
            let started = self.round_start;
            let ended = started.is_some_and(|start| largest.is_some_and(|sent| sent >= start));
            if started.is_none() || ended {
                self.round_start = Some(now);
            }
            if ended {
                // The round's spread, if it had four samples or more.
                if let Some((lo, hi, n)) = self.round_samples.take() {
                    if n >= 4 {
                        self.spreads.push_back(hi - lo);
                        if self.spreads.len() > NOISE_ROUNDS {
                            self.spreads.pop_front();
                        }
                    }
                }
                self.set_target();
            }
            self.fq_on_ack(&ack, started, ended, sampled.then_some(largest), q);
            let mut changed = ended && self.on_round_end(now);
            let slowdown_due = matches!(self.s.next_slowdown, NextSlowdown::At(due) if now >= due);
            match self.s.phase {
                Phase::Freeze { until, .. } if now >= until => {
                    self.end_freeze(now);
                    changed = true;
                }
                Phase::CongestionAvoidance if slowdown_due => {
                    self.start_slowdown(now);
                    changed = true;
                }
                _ => (),
            }
            if changed {
                return; // a phase change does not also grow
            }
            let flight = event.bytes_in_flight.max(self.flight_after_send);
            let may_grow = !self.s.in_recovery && flight.saturating_mul(2) >= self.window();
            let in_a_slow_start = matches!(
                self.s.phase,
                Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. }
            );
            if self.s.phase == Phase::InitialSlowStart && q > self.exit {
                self.leave_initial_slow_start(now); // -01 §4.1
            } else if in_a_slow_start {
                if may_grow {
                    self.slow_start(&ack);
                }
            } else if self.s.phase == Phase::CongestionAvoidance && !skipping {
                self.congestion_avoidance(&ack, q, may_grow);
            }
        }

        fn slow_start(&mut self, ack: &Acked) {
            self.s.cwnd = (self.s.cwnd + self.gain * ack.bytes).min(MAX_WINDOW);
            self.s.fast_growth_at = Some(ack.now);
            if self.s.cwnd < self.s.ssthresh {
                return;
            }
            self.s.cwnd = self.s.ssthresh.max(self.min_window);
            if let Phase::RampUp { slowdown_start, .. } = self.s.phase {
                self.finish_slowdown(ack.now, slowdown_start, true);
            } else {
                self.s.phase = Phase::CongestionAvoidance;
            }
        }

        fn leave_initial_slow_start(&mut self, now: Instant) {
            self.s.ssthresh = self.s.cwnd;
            self.s.phase = Phase::CongestionAvoidance;
            self.s.next_slowdown = NextSlowdown::AfterRounds(INITIAL_SLOWDOWN_ROUNDS);
            self.restart_round(now);
        }

        /// Band + permit + table (the page's `congestion_avoidance` and
        /// "Per-ACK congestion avoidance as a table").
        fn congestion_avoidance(&mut self, ack: &Acked, q: Duration, may_grow: bool) {
            let (now, bytes) = (ack.now, ack.bytes);
            let w = self.round_cwnd.max(self.min_window);
            let yielded = self.yielded();
            let q = ns(q);
            let from = self.target_ns - self.margin_ns;
            // From the top: the page's bands.
            let band = if q > SHARP_DECREASE * self.target_ns {
                Band::FarAbove
            } else if q > from {
                Band::NearT
            } else if q <= ns(self.empty) {
                Band::Empty
            } else {
                Band::BelowT
            };
            let sent_while_full = match (self.s.window_full_since, ack.largest) {
                (Some(full), Some(sent)) => sent >= full,
                _ => false,
            };
            self.s.filling = band == Band::Empty
                && !yielded
                && may_grow
                && self.s.last_loss.is_none_or(|t| since(now, t) >= FILL_QUIET)
                && sent_while_full;
            let gain_ok = !self.quiet(now) && q <= GAIN_MAX_QUEUE * self.target_ns;
            let permit = if self.s.filling {
                Permit::Fill
            } else if gain_ok {
                Permit::Gain
            } else {
                Permit::None
            };
            let mut change = match permit {
                Permit::Fill => bytes,
                Permit::Gain => self.gain * self.mss * bytes / w,
                Permit::None => 0.0,
            };
            if let Band::NearT | Band::FarAbove = band {
                // The decrease, from T − MARGIN.
                let far = band == Band::FarAbove && !self.s.in_recovery;
                let per = match self.srtt {
                    Some(srtt) if !far && !srtt.is_zero() => ns(srtt),
                    _ => self.target_ns,
                };
                change = (change - C * ((q - from) / per) * bytes).max(-bytes / 2.0);
            }
            if !may_grow || yielded {
                change = change.min(0.0); // growth caps
            }
            if self.s.filling && change > 0.0 {
                self.s.fast_growth_at = Some(now);
            }
            self.s.cwnd = self.clamp(self.s.cwnd + change);
        }

        /// Returns whether the phase changed.
        fn on_round_end(&mut self, now: Instant) -> bool {
            let mut changed = false;
            let phase = self.s.phase;
            if phase == Phase::CongestionAvoidance {
                if let NextSlowdown::AfterRounds(n) = self.s.next_slowdown {
                    if n > 1 {
                        self.s.next_slowdown = NextSlowdown::AfterRounds(n - 1);
                    } else {
                        self.start_slowdown(now); // the initial slowdown, -01 §4.4
                        changed = true;
                    }
                }
            } else if let Phase::RampUp { rounds_left, .. } | Phase::SlowStart { rounds_left } =
                &mut self.s.phase
            {
                // Bound for an application-limited one.
                if *rounds_left > 1 {
                    *rounds_left -= 1;
                } else {
                    if let Phase::RampUp { slowdown_start, .. } = phase {
                        self.finish_slowdown(now, slowdown_start, false);
                    } else {
                        self.s.phase = Phase::CongestionAvoidance;
                    }
                    changed = true;
                }
            }
            self.round_cwnd = self.s.cwnd;
            changed
        }

        /// ceil(log_{1+GAIN}(ssthresh / frm)).
        fn rounds_to_restore(&self, frm: f64) -> u64 {
            let r = self.s.ssthresh / frm.max(1.0);
            if r > 1.0 {
                (r.ln() / self.gain.ln_1p()).ceil().min(1e6) as u64
            } else {
                0
            }
        }

        /// The freeze, -01 §4.4.
        fn start_slowdown(&mut self, now: Instant) {
            let freeze = self.srtt_or_0().saturating_mul(SLOWDOWN_RTTS);
            self.s.ssthresh = self.s.cwnd;
            self.s.cwnd = self.freeze_window();
            self.s.filling = false;
            self.s.phase = Phase::Freeze {
                start: now,
                until: now.checked_add(freeze).unwrap_or(now),
                min_queue: Duration::MAX,
            };
            self.s.next_slowdown = NextSlowdown::None;
            self.restart_round(now);
        }

        fn end_freeze(&mut self, now: Instant) {
            let Phase::Freeze {
                start, min_queue, ..
            } = self.s.phase
            else {
                unreachable!("end_freeze outside a freeze")
            };
            let min_queue = self.follow_route(min_queue);
            let before = match self.s.fq {
                Fq::Yielded { window_before, .. } => Some(window_before),
                _ => None,
            };
            if min_queue <= self.empty {
                // restore=guarded: jump back, and test.
                let carried = match (self.s.largest_rate, self.base) {
                    (Some((rate, _)), Some(base)) => rate * base.as_secs_f64(),
                    _ => 0.0,
                };
                self.s.ssthresh = self.clamp(before.unwrap_or(self.s.ssthresh).max(carried));
                self.s.fq = Fq::Testing(Test {
                    since: now,
                    window: self.s.ssthresh,
                    rounds_left: FQ_TEST_ROUNDS,
                    slow: None,
                    lost: false,
                });
                self.s.cwnd = self.s.ssthresh.max(self.min_window);
                self.s.fast_growth_at = Some(now);
                self.finish_slowdown(now, start, true);
            } else {
                // A queue: ramp up as -01 §4.4.
                self.s.fq = Fq::Idle;
                let n = self.rounds_to_restore(self.freeze_window());
                let rounds_left = n.saturating_mul(2).saturating_add(1);
                self.s.phase = Phase::RampUp {
                    slowdown_start: start,
                    rounds_left,
                };
                self.restart_round(now);
            }
        }

        /// follow_route: a freeze's queue above T, at most the base, read
        /// alike (within T) by two freezes in a row, is a longer path.
        fn follow_route(&mut self, min_queue: Duration) -> Duration {
            let t = Duration::from_nanos(self.target_ns as u64);
            // (On the round-trip signal the freeze's round-trip reading is
            // its queue: above T, and above 2·T.)
            let candidate = min_queue > t * 2 && self.base.is_some_and(|b| min_queue <= b);
            let previous = self.s.route.take();
            if !candidate {
                return min_queue;
            }
            match previous {
                Some(p) if p.abs_diff(min_queue) <= t => {
                    self.delay.raise_base(min_queue);
                    Duration::ZERO
                }
                _ => {
                    self.s.route = Some(min_queue);
                    min_queue
                }
            }
        }

        /// slowdown_duty: the schedule (follow_route: the shortest period
        /// after a freeze read what may be a longer path).
        fn finish_slowdown(&mut self, now: Instant, start: Instant, restored: bool) {
            let period = match self.s.route {
                Some(_) => PERIOD_MIN,
                None => since(now, start)
                    .div_f64(DUTY)
                    .min(PERIOD_MAX)
                    .max(PERIOD_MIN),
            };
            let due = start.checked_add(period).unwrap_or(now).max(now);
            self.s.next_slowdown = NextSlowdown::At(due);
            self.s.phase = Phase::CongestionAvoidance;
            self.restart_round(now);
            if restored {
                // skip_rtt_after_restore.
                let srtt = self.srtt_or_0();
                self.s.skip_until = Some(now.checked_add(srtt).unwrap_or(now));
            }
        }

        /// fq_yield: rate, test, yield's end. `sample` is `None` for the
        /// page's NO_SAMPLE, else the sampled ACK's `largest`.
        fn fq_on_ack(
            &mut self,
            ack: &Acked,
            started: Option<Instant>,
            ended: bool,
            sample: Option<Option<Instant>>,
            q: Duration,
        ) {
            let now = ack.now;
            let ca = self.s.phase == Phase::CongestionAvoidance && !self.s.in_recovery;
            if self.s.rate_round != started {
                self.s.rate_round = started;
                self.s.rate_bytes = 0.0;
                self.s.rate_spoiled = false;
            }
            self.s.rate_bytes += ack.bytes;
            self.s.rate_spoiled |= !ca;
            if !ca {
                return;
            }
            if let (Fq::Yielded { at, .. }, Some(sample)) = (self.s.fq, sample) {
                let shared = q.as_nanos() as f64 > FQ_SHARED_QUEUE * self.target_ns;
                if shared && sample.is_some_and(|sent| sent >= at) {
                    self.s.fq = Fq::Idle; // someone else's queue: yield over
                }
            }
            if !ended {
                return;
            }
            // The round's rate, if it counts.
            let mut rate = None;
            if let Some(round) = self.s.rate_round.take() {
                let length = since(now, round);
                let longer_than_empty = self
                    .base
                    .is_some_and(|base| length > base.saturating_add(self.empty));
                if !self.s.rate_spoiled
                    && longer_than_empty
                    && self.s.rate_bytes >= FILL_WINDOW_FULL * self.round_cwnd
                {
                    let r = self.s.rate_bytes / length.as_secs_f64();
                    let new_largest = self
                        .s
                        .largest_rate
                        .is_none_or(|(largest, at)| r >= largest || since(now, at) > HISTORY);
                    if new_largest {
                        self.s.largest_rate = Some((r, now));
                    }
                    rate = Some(r);
                }
            }
            let Fq::Testing(mut test) = self.s.fq else {
                return;
            };
            if let Some(r) = rate {
                if self
                    .s
                    .largest_rate
                    .is_some_and(|(largest, _)| r < FQ_YIELD * largest)
                {
                    test.slow = Some(r);
                } else if test.slow.is_none() {
                    self.s.fq = Fq::Idle; // the full rate: no flow queue
                    return;
                }
            }
            test.rounds_left = test.rounds_left.saturating_sub(1);
            self.s.fq = Fq::Testing(test);
            self.conclude_test(now);
            if let Fq::Testing(test) = self.s.fq {
                if test.rounds_left == 0 && since(now, test.since) >= FQ_TEST_MIN {
                    self.s.fq = Fq::Idle;
                }
            }
        }

        /// A slow round and a loss: yield.
        fn conclude_test(&mut self, now: Instant) {
            let Fq::Testing(Test {
                window,
                slow: Some(slow),
                lost: true,
                ..
            }) = self.s.fq
            else {
                return;
            };
            let base = self.base.unwrap_or_default().as_secs_f64();
            self.s.cwnd = self.clamp(self.s.cwnd.min(slow * base * FQ_YIELD_WINDOW));
            self.round_cwnd = self.s.cwnd;
            self.s.fq = Fq::Yielded {
                at: now,
                window_before: window,
            };
            if let NextSlowdown::At(due) = self.s.next_slowdown {
                // The probe, put off at random.
                let seed = window.to_bits() ^ self.srtt_or_0().as_nanos() as u64;
                let put_off = due
                    .saturating_duration_since(now)
                    .mul_f64(splitmix64_draw(seed));
                self.s.next_slowdown = NextSlowdown::At(due.checked_add(put_off).unwrap_or(due));
            }
        }

        pub fn on_congestion_event(&mut self, loss: &LossEvent) {
            self.on_loss(loss);
            if let Fq::Testing(test) = &mut self.s.fq {
                if loss.largest_lost_time_sent >= test.since {
                    test.lost = true;
                    self.conclude_test(loss.now);
                }
            }
        }

        fn on_loss(&mut self, loss: &LossEvent) {
            let now = loss.now;
            self.s.last_loss = Some(now);
            self.s.filling = false;
            if self.delay.current().is_some()
                && self.delay.queuing() <= self.empty
                && self.within_random_loss(loss)
            {
                return; // loss_on_empty_queue=ignore
            }
            let srtt = self.srtt_or_0();
            let fast_growth_end = self
                .s
                .fast_growth_at
                .map(|t| t.checked_add(srtt).unwrap_or(t));
            if fast_growth_end.is_none_or(|end| loss.largest_lost_time_sent > end) {
                self.s.last_congestion_loss = Some(now); // gain_quiet starts
            }
            if let Some(start) = self.s.recovery_start {
                if loss.largest_lost_time_sent <= start {
                    return;
                }
            }
            // Once per recovery period.
            self.s.recovery_start = Some(now);
            self.s.in_recovery = true;
            if let Phase::Freeze { .. } = self.s.phase {
                self.s.ssthresh = (self.s.ssthresh / 2.0).max(self.min_window);
                return;
            }
            self.s.cwnd = (self.s.cwnd / 2.0).max(self.min_window);
            match self.s.phase {
                Phase::InitialSlowStart => self.leave_initial_slow_start(now),
                Phase::RampUp { slowdown_start, .. } => {
                    self.s.ssthresh = self.s.cwnd;
                    self.finish_slowdown(now, slowdown_start, false);
                }
                _ => {
                    self.s.ssthresh = self.s.cwnd;
                    self.s.phase = Phase::CongestionAvoidance;
                }
            }
        }

        fn within_random_loss(&mut self, loss: &LossEvent) -> bool {
            let period = self.srtt_or_0().saturating_mul(RANDOM_LOSS_ROUNDS);
            if self.s.rl_since.is_none_or(|t| since(loss.now, t) >= period) {
                self.s.rl_since = Some(loss.now);
                self.s.rl_bytes = 0;
                self.s.rl_window = 0.0;
            }
            self.s.rl_bytes = self.s.rl_bytes.saturating_add(loss.lost_bytes);
            let flight = loss.bytes_in_flight as f64;
            self.s.rl_window = self.s.rl_window.max(self.s.cwnd).max(flight);
            let budget = RANDOM_LOSS_MAX * (self.s.rl_window * f64::from(RANDOM_LOSS_ROUNDS));
            self.s.rl_bytes as f64 <= budget.max(self.mss)
        }

        pub fn on_persistent_congestion(&mut self) {
            self.s.cwnd = self.min_window;
            if self.s.phase == Phase::CongestionAvoidance && self.s.ssthresh > self.min_window {
                let rounds = self.rounds_to_restore(self.min_window);
                self.s.phase = Phase::SlowStart {
                    rounds_left: rounds.saturating_mul(2).saturating_add(1),
                };
            }
        }

        pub fn checkpoint(&mut self) {
            self.checkpoint = Some(self.s);
        }

        pub fn rollback(&mut self) -> bool {
            match self.checkpoint.take() {
                Some(saved) => {
                    self.s = saved;
                    self.s.cwnd = self.clamp(self.s.cwnd);
                    true
                }
                None => false,
            }
        }

        pub fn on_mtu_change(&mut self, max_datagram_size: u64) {
            self.mss = max_datagram_size.max(1) as f64;
            self.min_window = (MIN_CWND * self.mss).min(MAX_WINDOW);
            self.s.cwnd = self.clamp(self.s.cwnd);
            if let Phase::Freeze { .. } = self.s.phase {
                self.s.cwnd = self.freeze_window();
            }
        }
    }
}

/// What a random case does, one step at a time; [`Driver::apply`] turns
/// each into the calls both controllers receive.
#[derive(Clone, Debug)]
enum Event {
    /// One round trip of ACKs: `acks` ACKs spread over an RTT of the base
    /// RTT plus `queue` times it (each ACK's RTT later by its share of the
    /// case's jitter), acknowledging `acked` of the window; the
    /// last one acknowledges a packet sent when the round began (it ends
    /// the controller's round), the others older packets. Before each ACK
    /// a packet is sent with `sent_in_flight` of the window already out;
    /// each ACK reports `in_flight` of the window in flight (below 1/2:
    /// application-limited).
    Round {
        queue: f64,
        acks: u32,
        acked: f64,
        sent_in_flight: f64,
        in_flight: f64,
        /// Every ACK carries an RTT sample (else only the last).
        every_sample: bool,
        /// The ACK delay each reports (capped at 25 ms by the model).
        ack_delay: Duration,
    },
    /// Nothing sent or acknowledged for this long (slowdowns fall due).
    Idle(Duration),
    /// A loss of `packets` packets, the largest sent `sent`.
    Loss {
        sent: LossSent,
        packets: u64,
    },
    PersistentCongestion,
    Checkpoint,
    Rollback,
    Mtu(u64),
    /// The previous ACK again.
    DuplicateAck,
    /// An ACK with values as random as `properties.rs`'s.
    Wild(common::Ack),
}

#[derive(Clone, Copy, Debug)]
enum LossSent {
    /// This fraction of the base RTT ago.
    Ago(f64),
    /// Before the case began.
    LongAgo,
}

fn event() -> impl Strategy<Value = Event> {
    let queue = prop_oneof![
        3 => Just(0.0),
        1 => Just(0.01),
        1 => 0.0..0.2,
        2 => 0.1..0.4,
        1 => 0.4..1.0,
        1 => 1.0..4.0,
    ];
    let fraction = prop_oneof![3 => Just(1.0), 1 => 0.0..1.3];
    prop_oneof![
        30 => (
            queue,
            1u32..12,
            fraction.clone(),
            fraction.clone(),
            fraction,
            prop::bool::weighted(0.8),
            prop_oneof![3 => Just(Duration::ZERO), 1 => (0u64..40_000).prop_map(Duration::from_micros)],
        )
            .prop_map(|(queue, acks, acked, sent_in_flight, in_flight, every_sample, ack_delay)| {
                Event::Round { queue, acks, acked, sent_in_flight, in_flight, every_sample, ack_delay }
            }),
        2 => prop_oneof![
            (1u64..20_000).prop_map(Duration::from_millis),
            (20u64..700).prop_map(Duration::from_secs),
        ].prop_map(Event::Idle),
        4 => (
            prop_oneof![3 => (0.0..3.0).prop_map(LossSent::Ago), 1 => Just(LossSent::LongAgo)],
            1u64..5,
        )
            .prop_map(|(sent, packets)| Event::Loss { sent, packets }),
        1 => Just(Event::PersistentCongestion),
        1 => Just(Event::Checkpoint),
        1 => Just(Event::Rollback),
        1 => prop_oneof![3 => Just(1200u64), 1 => Just(1500u64), 1 => 1u64..70_000].prop_map(Event::Mtu),
        1 => Just(Event::DuplicateAck),
        1 => common::ack(
            prop_oneof![3 => (0u64..200_000).prop_map(Duration::from_micros), 1 => (0u64..100_000).prop_map(Duration::from_secs)],
            0..4,
            (0u64..2_000_000).prop_map(Duration::from_micros),
            (0u64..50_000).prop_map(Duration::from_micros),
        )
            .prop_map(Event::Wild),
    ]
}

/// Both controllers and the clock.
struct Driver {
    cc: Box<dyn CongestionController>,
    page: model::Full,
    now: Instant,
    start: Instant,
    base_rtt: Duration,
    /// Each round's ACKs are late by up to this fraction of `base_rtt`.
    jitter: f64,
    mss: u64,
    min_rtt: common::MinRtt,
    srtt: Option<Duration>,
    last: Option<(Vec<AckedPacket>, u64, RttInfo)>,
    /// Every state name either controller reported.
    seen: std::collections::BTreeSet<&'static str>,
    /// Calls made so far (for the failure message).
    calls: usize,
}

impl Driver {
    fn new(base_rtt: Duration, mss: u64, jitter: f64) -> Self {
        let path = PathInfo {
            max_datagram_size: mss,
            initial_window_packets: 10,
        };
        let cc = "ledbatpp:profile=full"
            .parse::<ControllerConfig>()
            .unwrap()
            .build(path);
        let start = Instant::now() + Duration::from_secs(100_000);
        Driver {
            cc,
            page: model::Full::new(mss),
            now: start,
            start,
            base_rtt,
            mss,
            jitter,
            min_rtt: common::MinRtt::default(),
            srtt: None,
            last: None,
            seen: Default::default(),
            calls: 0,
        }
    }

    /// Window, state name and pacing rate of both, which must be equal.
    fn compare(&mut self, what: &str) -> Result<(), TestCaseError> {
        self.calls += 1;
        let cc = (
            self.cc.window(),
            self.cc.state(self.now),
            self.cc.pacing_rate(),
        );
        let page = (
            self.page.window(),
            self.page.state_name(self.now),
            self.page.pacing_rate(),
        );
        self.seen.insert(cc.1);
        prop_assert_eq!(
            cc,
            page,
            "(window, state, pacing rate) of cc/ vs the page after call {} ({}) at t = {:?}",
            self.calls,
            what,
            self.now - self.start
        );
        Ok(())
    }

    fn ack(
        &mut self,
        acked: Vec<AckedPacket>,
        in_flight: u64,
        rtt: RttInfo,
    ) -> Result<(), TestCaseError> {
        let event = common::ack_event(self.now, &acked, in_flight, rtt);
        self.cc.on_ack(&event);
        self.page.on_ack(&event);
        self.last = Some((acked, in_flight, rtt));
        self.compare("ack")
    }

    /// The RTT state of an ACK, the smoothed RTT as RFC 9002 §5.3 smooths
    /// it (a plausible one).
    fn rtt_info(&mut self, latest_rtt: Duration, ack_delay: Duration, new_sample: bool) -> RttInfo {
        if new_sample {
            self.srtt = Some(self.srtt.map_or(latest_rtt, |s| (s * 7 + latest_rtt) / 8));
        }
        let smoothed_rtt = self.srtt.unwrap_or(latest_rtt);
        self.min_rtt
            .rtt_info(latest_rtt, ack_delay, new_sample, smoothed_rtt)
    }

    fn of_window(&self, fraction: f64) -> u64 {
        (self.cc.window() as f64 * fraction) as u64
    }

    fn apply(&mut self, event: &Event) -> Result<(), TestCaseError> {
        match event {
            Event::Round {
                queue,
                acks,
                acked,
                sent_in_flight,
                in_flight,
                every_sample,
                ack_delay,
            } => {
                let began = self.now;
                let rtt = self.base_rtt + self.base_rtt.mul_f64(*queue);
                let bytes = ((self.cc.window() as f64 * acked) as u64 / u64::from(*acks)).max(1);
                for i in 0..*acks {
                    let before = self.of_window(*sent_in_flight);
                    self.cc.on_packet_sent(self.now, self.mss, before);
                    self.page.on_packet_sent(self.now, self.mss, before);
                    self.compare("sent")?;
                    self.now += rtt / *acks;
                    let last = i + 1 == *acks;
                    let sent = if last { began } else { began - rtt };
                    let acked = vec![AckedPacket {
                        bytes,
                        time_sent: sent,
                    }];
                    // A fixed scatter over the round: 0, 3/7, 6/7, 2/7, …
                    let scatter = f64::from(i * 3 % 7) / 7.0;
                    let late = self.base_rtt.mul_f64(self.jitter * scatter);
                    let info =
                        self.rtt_info(rtt + late + *ack_delay, *ack_delay, *every_sample || last);
                    let flight = self.of_window(*in_flight);
                    self.ack(acked, flight, info)?;
                }
                Ok(())
            }
            Event::Idle(d) => {
                self.now += *d;
                Ok(())
            }
            Event::Loss { sent, packets } => {
                let sent = match sent {
                    LossSent::Ago(f) => self.now - self.base_rtt.mul_f64(*f),
                    LossSent::LongAgo => self.start - Duration::from_secs(1),
                };
                let loss = LossEvent {
                    now: self.now,
                    lost_bytes: packets * self.mss,
                    largest_lost_time_sent: sent,
                    bytes_in_flight: self.cc.window(),
                };
                self.cc.on_congestion_event(&loss);
                self.page.on_congestion_event(&loss);
                self.compare("loss")
            }
            Event::PersistentCongestion => {
                self.cc.on_persistent_congestion(self.now);
                self.page.on_persistent_congestion();
                self.compare("persistent congestion")
            }
            Event::Checkpoint => {
                self.cc.checkpoint();
                self.page.checkpoint();
                self.compare("checkpoint")
            }
            Event::Rollback => {
                prop_assert_eq!(
                    self.cc.rollback(),
                    self.page.rollback(),
                    "rollback's result"
                );
                self.compare("rollback")
            }
            Event::Mtu(size) => {
                self.mss = *size;
                self.cc.on_mtu_change(*size);
                self.page.on_mtu_change(*size);
                self.compare("mtu change")
            }
            Event::DuplicateAck => match self.last.clone() {
                Some((acked, in_flight, rtt)) => self.ack(acked, in_flight, rtt),
                None => Ok(()),
            },
            Event::Wild(ack) => {
                self.now += ack.dt;
                let acked = ack.acked_at(self.now, self.start - Duration::from_secs(1));
                let info = self.rtt_info(ack.latest_rtt, ack.ack_delay, ack.new_sample);
                self.ack(acked, ack.in_flight, info)
            }
        }
    }
}

/// Base RTTs from 2 ms to 400 ms (T from its 2.5 ms floor to the
/// configured 60 ms), mostly MSS 1200.
fn case() -> impl Strategy<Value = (Duration, u64, f64, Vec<Event>)> {
    (
        prop_oneof![
            (2_000u64..400_000).prop_map(Duration::from_micros),
            Just(Duration::from_millis(50)),
        ],
        prop_oneof![4 => Just(1200u64), 1 => 1u64..9_000],
        // The link's own jitter: each round's ACKs are late by up to this
        // fraction of the base RTT (`Event::Round`).
        prop_oneof![1 => Just(0.0), 1 => 0.0..0.6],
        prop::collection::vec(event(), 1..400),
    )
}

/// The differential test: `cases` random sequences from a fixed seed;
/// after every call, the crate and the page agree. Across the cases, every
/// state name is reached (else the sequences would not test the rules).
#[test]
fn the_page_and_the_crate_agree_after_every_event() {
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let seen = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let calls = std::cell::Cell::new(0usize);
    let result = runner.run(&case(), |(base_rtt, mss, jitter, events)| {
        let mut d = Driver::new(base_rtt, mss, jitter);
        d.compare("new")?;
        for event in &events {
            d.apply(event)?;
        }
        seen.borrow_mut().extend(d.seen.iter().copied());
        calls.set(calls.get() + d.calls);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let seen = seen.into_inner();
    let all: std::collections::BTreeSet<_> = lbe_cc::ledbatpp::STATE_NAMES.into_iter().collect();
    eprintln!("{} calls compared, states {seen:?}", calls.get());
    assert_eq!(
        seen,
        all,
        "every state reached ({} calls compared)",
        calls.get()
    );
}

/// The keys the page's "Scope and notation" says `profile=full` sets.
const PAGE_KEYS: &str = "restore=guarded,skip_rtt_after_restore=true,slowdown_duty=0.02,\
    slowdown_period_min=10s,slowdown_period_max=60s,loss_on_empty_queue=ignore,\
    random_loss_max=0.05,decrease=excess_queue,fill_empty_queue=true,fill_quiet=2s,\
    decrease_constant=0.25,target_margin=4ms,pacing_rtt=current,fill_window_limited=true,\
    target_fraction=0.15,target_min=2.5ms,gain_max_queue=4,sharp_decrease=3,gain_quiet=10s,\
    min_cwnd=1,fq_yield=0.6,jitter_allowance=3.25,follow_route=true";

/// `profile=full` is the page's list of keys and nothing else: a rule
/// added to the profile fails here first, by name, before the differential
/// test finds where the page and the crate part.
#[test]
fn profile_full_is_the_pages_list_of_keys() {
    let parse = |spec: &str| spec.parse::<ControllerConfig>().unwrap();
    assert_eq!(
        parse("ledbatpp:research=true,profile=full"),
        parse(&format!("ledbatpp:research=true,{PAGE_KEYS}")),
        "profile=full sets options docs/ledbatpp-full.md does not describe: \
         update the page and this file's model"
    );
}
