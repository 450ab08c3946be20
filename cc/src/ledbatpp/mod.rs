//! LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-01), on QUIC RTT samples.
//!
//! <https://datatracker.ietf.org/doc/html/draft-irtf-iccrg-ledbat-plus-plus-01>.
//! The -01 revision is what seed `ledbatpp-experimental-evaluation`
//! measured (its §3 and appendix summarise it); with `profile=draft` (the
//! default) this controller is -01 and nothing else. No change from later
//! revisions is adopted. The draft's sentences are quoted, from the -01
//! text, beside the code that implements them. Where -01 says nothing (its
//! loss reaction), the seed's summary (its §3) is quoted as the seed's.
//!
//! Per ACK, in this order:
//!
//! 1. the delay sample ([`crate::delay`]) updates current and base delay,
//!    and GAIN = 1 / min(16, CEIL(2·T / base)) (§4.2), CEIL(X) being "the
//!    smallest integer larger than X";
//! 2. round bookkeeping (a round ends with the first ACK for a packet sent
//!    at or after its start): the countdown to the initial slowdown and the
//!    ramp-up's round bound advance when the ACK ends a round;
//! 3. time-driven transitions: a freeze whose 2 RTTs have passed ends, a
//!    periodic slowdown that is due starts;
//! 4. the window rule of the phase:
//!    * initial slow start (§4.1): `cwnd += GAIN · bytes_acked`, left when
//!      queuing delay > 3/4·T, on loss;
//!    * congestion avoidance (§4.3), a per-round rule spread over the
//!      round's ACKs, each ACK applying its share `bytes_acked / W` with W
//!      the window when the round began:
//!      `q ≤ T: W += GAIN·MSS`, `q > T: W += max(GAIN·MSS − C·W·(q/T − 1), −W/2)`;
//!    * slowdown (§4.4): window held at 2 packets for 2 RTTs of time;
//!    * ramp-up (§4.4): slow start back to ssthresh (the pre-slowdown
//!      window), not left on delay (§4.1).
//!
//! An ACK whose processing changes the phase (slow start exit, slowdown
//! start, end of a freeze) does not also grow the window.
//!
//! Loss: -01 has no loss rule of its own; of the LEDBAT it extends, its §1
//! says "LEDBAT reacts to packet losses and other congestion signals in the
//! same way as standard TCP", and the seed's summary reads "LEDBAT++ reacts
//! by reducing the CW to half of its value when a loss is detected" (seed
//! §3). So: halve, at most once per
//! recovery period — a loss of a packet sent no later than the start of the
//! current recovery period does not reduce again ([RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)); the
//! window never increases during recovery. Minimum window 2 packets.
//!
//! The window does not grow while less than half of it is in flight (the
//! sender is application-limited; [RFC 9002 §7.8](https://www.rfc-editor.org/rfc/rfc9002#section-7.8) and Linux's slow-start
//! cwnd-limited rule); decreases always apply.
//!
//! # Where things are
//!
//! Each file of this module holds one concern, with the draft sections it
//! implements:
//!
//! * `config.rs`: [`LedbatPlusPlusConfig`], its spec keys and ranges, and
//!   the draft's constants (§4, §4.1 to §4.4);
//! * `slow_start.rs`: the initial slow start and its exit on delay, the slow
//!   start after persistent congestion, the deadline catch-up (§4.1);
//! * `congestion_avoidance.rs`: GAIN (§4.2) and the per-round increase and
//!   decrease around TARGET (§4.3);
//! * `loss.rs`: the reaction to a loss and to persistent congestion (seed
//!   §3; RFC 9002 §7.3.2, §7.6);
//! * `slowdown.rs`: the initial and periodic slowdowns, their freeze,
//!   ramp-up and schedule (§4.4);
//! * `flow_queue.rs`: `fq_yield`, yielding by rate behind a flow-queuing
//!   router (not the draft's; `profile=full`);
//! * `profiles.rs`: `profile=seed` and `profile=full`, each option with
//!   what it does and what it was measured to do;
//! * this file: the controller's state, the per-ACK order above, pacing,
//!   and the deadline steering below.
//!
//! # Deadline steering
//!
//! [`crate::deadline`] steers TARGET and GAIN and, above its level 0, how
//! much the controller defers ([`Deference`]: slowdowns held, and at its
//! top level no decrease above T) and when it slow-starts
//! ([`LedbatPlusPlus::slow_start_to`], one byte per byte acknowledged).
//! Unsteered ([`Deference::Full`], no catch-up) it is the configured
//! profile (`profiles.rs`).

mod config;
mod congestion_avoidance;
mod flow_queue;
mod loss;
mod profiles;
mod slow_start;
mod slowdown;
#[cfg(test)]
mod test_support;

use std::time::Duration;
use std::time::Instant;

use crate::delay;
use crate::delay::CurrentFilter;
use crate::delay::DelayEstimator;
use crate::delay::DelayMode;
use crate::delay::DelaySource;
use crate::delay::RoundSpread;
use crate::flight::FlightSize;
use crate::pacing;
use crate::recovery::RecoveryPeriod;
use crate::round;
use crate::round::Rounds;
use crate::window::checkpoint_hooks;
use crate::window::Checkpoint;
use crate::window::HasWindow;
use crate::window::WindowBounds;
use crate::AckEvent;
use crate::CongestionController;
use crate::LossEvent;
use crate::PathInfo;
use crate::Snapshot;

pub use config::LedbatPlusPlusConfig;
pub use config::DECREASE_CONSTANT;
pub use config::FREEZE_CWND;
pub use config::GAIN_DIVISOR_MAX;
pub use config::HALVE;
pub use config::INITIAL_SLOWDOWN_RTTS;
pub use config::INIT_CWND;
pub use config::MIN_CWND;
pub use config::SLOWDOWN_INTERVAL;
pub use config::SLOWDOWN_RTTS;
pub use config::SLOW_START_EXIT;
pub use config::TARGET;
pub use config::TARGET_MIN;
use flow_queue::DeliveryRate;
use flow_queue::FlowQueue;
pub use flow_queue::FQ_SHARED_QUEUE;
pub use flow_queue::FQ_TEST_ROUNDS;
pub use flow_queue::FQ_YIELD_WINDOW;
pub use profiles::Decrease;
pub use profiles::EmptyQueueLoss;
pub use profiles::PacingRtt;
pub use profiles::Restore;
pub use profiles::EMPTY_QUEUE;
pub use profiles::FILL_QUIET;
pub use profiles::FILL_WINDOW_FULL;
pub use profiles::FULL_DECREASE_CONSTANT;
pub use profiles::FULL_FQ_YIELD;
pub use profiles::FULL_GAIN_MAX_QUEUE;
pub use profiles::FULL_GAIN_QUIET;
pub use profiles::FULL_GENTLE_FREEZE;
pub use profiles::FULL_MIN_CWND;
pub use profiles::FULL_SLOWDOWN_DUTY;
pub use profiles::FULL_SLOWDOWN_PERIOD_MAX;
pub use profiles::FULL_SLOWDOWN_PERIOD_MIN;
pub use profiles::FULL_TARGET_MARGIN;
pub use profiles::RANDOM_LOSS_MAX;
pub use profiles::RANDOM_LOSS_ROUNDS;
pub use profiles::SLOWDOWN_PERIOD_MAX;
use slowdown::Schedule;

/// Every state LEDBAT++ reports ([`CongestionController::state`], qlog's
/// `congestion_state_updated`): its phases per draft -01, `recovery`
/// while a loss's recovery period lasts, and the phases of congestion
/// avoidance that `profile=full`'s rules add (never with
/// `profile=draft`): `filling` (the last ACK grew the window by
/// `fill_empty_queue`), `yielded` (`fq_yield`: the window does not grow
/// until the next freeze) and `quiet` (`gain_quiet`: no GAIN after a
/// congestion loss; only a fill grows the window).
pub const STATE_NAMES: [&str; 8] = [
    "slow_start",
    "congestion_avoidance",
    "recovery",
    "slowdown",
    "ramp_up",
    "filling",
    "yielded",
    "quiet",
];

/// How much LEDBAT++ defers to other traffic; [`crate::deadline`] lowers it
/// above level 0 (`LedbatPlusPlus::set_deference`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deference {
    /// LEDBAT++ as configured: periodic slowdowns and the decrease above T.
    #[default]
    Full,
    /// The decrease above T, but no slowdowns (a due one waits).
    DelayOnly,
    /// Neither: additive increase and the loss decrease only (Reno-like
    /// with GAIN 1; [`crate::deadline`] also sets CUBIC's β for it,
    /// `LedbatPlusPlus::set_loss_beta`).
    None,
}

/// What the controller is doing; the data of each phase lives in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The initial slow start, the only one left on delay (§4.1).
    InitialSlowStart,
    /// Slow start back to ssthresh after persistent congestion; not left on
    /// delay (§4.1: only the initial slow start is).
    SlowStart {
        /// Round ends left before it is deemed application-limited.
        rounds_left: u64,
    },
    CongestionAvoidance,
    /// The freeze at the minimum window (§4.4), from `start` until the first
    /// ACK at or after `until` = `start + slowdown_rtts · rtt`.
    Slowdown {
        start: Instant,
        until: Instant,
        /// The smoothed RTT before the slowdown.
        rtt: Duration,
        /// The smallest queuing delay measured while frozen (`Duration::MAX`
        /// before the first sample).
        min_queue: Duration,
        /// The smallest round trip above the path's minimum while frozen
        /// (`Duration::MAX` before the first sample): `min_queue` itself on
        /// the round-trip signal; on a one-way signal what the round trip
        /// says (`follow_route`).
        min_rtt_queue: Duration,
    },
    /// Slow start back to ssthresh after a freeze (§4.4).
    RampUp {
        /// When the slowdown began (D runs from here).
        slowdown_start: Instant,
        /// Round ends left before the ramp-up is deemed application-limited.
        rounds_left: u64,
    },
}

/// Everything a spurious loss may have to restore: the window, the phase
/// and every rule's own state, `profile=full`'s guards included, so that a
/// rollback ([`CongestionController::rollback`]) leaves the controller as
/// if the loss had not been reported. Not in it: what the controller
/// measures of the path (the delay filters, the smoothed RTT, the flight)
/// and the round bookkeeping (`rounds`, `round_cwnd`), which a loss does
/// not change outside a ramp-up and a yield (these restart the round) and
/// which `profile=draft` has never restored.
#[derive(Clone, Copy, Debug, PartialEq)]
struct State {
    cwnd: f64,
    /// `f64::INFINITY` until the initial slow start ends.
    ssthresh: f64,
    phase: Phase,
    next_slowdown: Schedule,
    recovery: RecoveryPeriod,
    /// Delay samples of packets sent before this are ignored
    /// (`skip_rtt_after_restore`).
    skip_until: Option<Instant>,
    /// The last freeze measured an empty queue (`gentle_freeze`).
    last_freeze_empty: bool,
    /// The queue the last freeze read, when it may be a longer path
    /// (`follow_route`, `slowdown.rs`).
    route: Option<Duration>,
    /// The current slow start is a catch-up ([`LedbatPlusPlus::slow_start_to`]):
    /// it grows one byte per byte acknowledged, not GAIN.
    catching_up: bool,
    /// `fill_empty_queue` and its guards `fill_quiet` and
    /// `fill_window_limited`.
    fill: Fill,
    /// `gain_quiet`: no GAIN for a while after a congestion loss.
    gain_quiet: GainQuiet,
    /// The losses taken for random loss in the current period
    /// (`loss_on_empty_queue=ignore`, `random_loss_max`).
    random_loss: loss::RandomLoss,
    /// The rate of each round and the largest with a queue (`fq_yield`).
    rate: DeliveryRate,
    /// The test and the yield of `fq_yield` (`flow_queue.rs`).
    flow_queue: FlowQueue,
}

/// The state of `fill_empty_queue` and its guards (`profiles.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Fill {
    /// The last ACK in congestion avoidance grew by `fill_empty_queue`.
    active: bool,
    /// Since when every packet sent left at least 4/5 of the window in
    /// flight (`fill_window_limited`); `None` after one that did not.
    window_full_since: Option<Instant>,
    /// When the latest loss was reported (`fill_quiet`).
    last_loss: Option<Instant>,
}

/// The state of `gain_quiet` (`profiles.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct GainQuiet {
    /// When the latest loss that counted as congestion and that our own
    /// fast growth did not cause was reported.
    last_congestion_loss: Option<Instant>,
    /// The latest ACK at which the window grew faster than GAIN a round:
    /// a slow start (initial, ramp-up, after persistent congestion, a
    /// catch-up), `fill_empty_queue`, or a freeze's jump back.
    fast_growth_at: Option<Instant>,
}

impl HasWindow<f64> for State {
    fn window_mut(&mut self) -> &mut f64 {
        &mut self.cwnd
    }
}

/// The LEDBAT++ controller (see the module docs).
#[derive(Debug)]
pub struct LedbatPlusPlus {
    cfg: LedbatPlusPlusConfig,
    bounds: WindowBounds<f64>,
    /// `target · slow_start_exit`.
    exit_delay: Duration,
    /// TARGET in nanoseconds (≥ 1 ms, so never zero): the configured T, or
    /// its `target_fraction` of the base round trip when that is lower
    /// ([`LedbatPlusPlus::retarget`]).
    target_ns: f64,
    /// `target_margin` in nanoseconds, at most `target_ns`, scaled as T is.
    margin_ns: f64,
    /// `empty_queue`, scaled as T is.
    empty_queue: Duration,
    /// `empty_queue` and `target_margin` are stated for the draft's T
    /// ([`TARGET`], 60 ms): this is the factor that takes them to the T
    /// configured at the start, before [`crate::deadline`] moves it.
    scale_at_start: f64,
    /// Longest wait for the next slowdown: the base-delay history.
    max_slowdown_wait: Duration,
    s: State,
    /// The window when the current round began (W of the §4.3 rule).
    round_cwnd: f64,
    rounds: Rounds,
    delay: DelayEstimator,
    /// The spread of each round's delay samples (`jitter_allowance`).
    spread: RoundSpread,
    /// T stands on the noise (`jitter_allowance`).
    jittery: bool,
    /// Where the delay samples come from (spec key `delay`).
    source: DelaySource,
    /// The round trip's current value with a one-way signal: the minimum
    /// of the latest RTT samples (`current_rtt`). `None` while the delay
    /// signal is the round trip (`delay=rtt`, and `delay=auto` until its
    /// first one-way sample): `delay`'s current filter then takes exactly
    /// these samples, and is copied here when the signal turns one-way.
    round_trip: Option<CurrentFilter>,
    flight: FlightSize,
    /// Smoothed RTT of the latest ACK that carried a sample.
    srtt: Option<Duration>,
    /// GAIN, recomputed when the base delay changes.
    gain: f64,
    gain_base: Option<Duration>,
    saved: Checkpoint<State>,
    /// How far [`crate::deadline`] has taken the controller out of its LBE
    /// behaviour ([`Deference::Full`] unless steered).
    deference: Deference,
    /// The fraction of the window a loss leaves: [`HALVE`] ("halve", seed
    /// §3) unless [`crate::deadline`] sets CUBIC's β at its top level
    /// (`LedbatPlusPlus::set_loss_beta`).
    loss_beta: f64,
}

impl LedbatPlusPlus {
    /// The round trip now, `None` before a sample. With the round trip as
    /// the delay signal this is the current delay. A one-way delay sees
    /// only the forward path: the path's minimum RTT plus its queuing delay
    /// left out the reverse path's queue, and beside a saturating upload
    /// (20/2 Mbit/s, 40 ms, 500 ms buffers) read 45 ms for a 520 ms round
    /// trip, so `pacing_rtt=current` and `fill_empty_queue` paced the
    /// window 11 times too fast and its bursts queued on the forward link.
    /// So with a one-way signal it is the minimum of the latest RTT
    /// samples (as many as the current-delay filter's): profile=full's
    /// download beside that upload, 10.3 → 17.8 Mbit/s (the simulator,
    /// seed 1; 18.8 alone).
    fn current_rtt(&self) -> Option<Duration> {
        if self.source.signal() == Some(delay::Signal::OneWay) {
            return self.round_trip.as_ref().and_then(CurrentFilter::current);
        }
        self.delay.current()?;
        Some(self.gain_base? + self.delay.queuing())
    }

    /// A LEDBAT++ controller for `path`, in its initial slow start at
    /// `init_cwnd` packets (2, §4.1; the path's initial window is not used).
    pub fn new(cfg: LedbatPlusPlusConfig, path: PathInfo) -> Self {
        let bounds = WindowBounds::<f64>::new(path.max_datagram_size, cfg.min_cwnd);
        let cwnd = bounds.clamp(cfg.init_cwnd as f64 * bounds.mss);
        let history = cfg
            .delay
            .base_bucket
            .saturating_mul(cfg.delay.base_history as u32);
        let mut cc = Self {
            bounds,
            exit_delay: Duration::ZERO,
            target_ns: 0.0,
            margin_ns: 0.0,
            empty_queue: Duration::ZERO,
            scale_at_start: cfg.target.as_secs_f64() / TARGET.as_secs_f64(),
            max_slowdown_wait: history,
            s: State {
                cwnd,
                ssthresh: f64::INFINITY,
                phase: Phase::InitialSlowStart,
                next_slowdown: Schedule::None,
                recovery: RecoveryPeriod::default(),
                skip_until: None,
                last_freeze_empty: false,
                route: None,
                catching_up: false,
                fill: Fill::default(),
                gain_quiet: GainQuiet::default(),
                random_loss: loss::RandomLoss::default(),
                rate: DeliveryRate::default(),
                flow_queue: FlowQueue::Idle,
            },
            round_cwnd: cwnd,
            rounds: Rounds::default(),
            delay: DelayEstimator::new(&cfg.delay),
            spread: RoundSpread::default(),
            jittery: false,
            source: DelaySource::new(cfg.delay.mode),
            round_trip: (cfg.delay.mode == DelayMode::OneWay)
                .then(|| CurrentFilter::new(cfg.delay.current_filter)),
            flight: FlightSize::default(),
            srtt: None,
            gain: 1.0 / cfg.gain_divisor_max as f64,
            gain_base: None,
            saved: Checkpoint::default(),
            deference: Deference::Full,
            loss_beta: HALVE,
            cfg,
        };
        cc.retarget();
        cc
    }

    /// Sets TARGET and what is measured against it from the configured T
    /// and the base round trip (`gain_base`); GAIN too (§4.2's formula,
    /// of the configured T and the base).
    ///
    /// `target_fraction=F` (not the draft's; `profiles.rs`): T is F times
    /// the base round trip, within `target_min` and the configured T.
    /// `empty_queue` and `target_margin`, stated for the draft's 60 ms,
    /// scale with the T in force, so that they keep their place relative
    /// to T whatever the configured T. The slow start's exit stays at
    /// the configured T's (`profiles.rs` says why). Without a base round
    /// trip yet, T is the configured one; so it is while [`crate::deadline`]
    /// steers the controller above its level 0 (less than
    /// [`Deference::Full`]): the larger T it sets is its knob.
    fn retarget(&mut self) {
        let configured = self.cfg.target;
        let target = match (self.cfg.target_fraction, self.gain_base, self.deference) {
            (Some(f), Some(base), Deference::Full) if !base.is_zero() => {
                let t = base.mul_f64(f).max(self.cfg.target_min);
                // `jitter_allowance`: T is that multiple of the delay's
                // noise from when that at least doubles it until it falls
                // below it.
                let noise = self.spread.noise().mul_f64(self.cfg.jitter_allowance);
                self.jittery = match self.jittery {
                    true => noise >= t,
                    false => noise >= t.saturating_mul(2),
                };
                match self.jittery {
                    true => noise,
                    false => t,
                }
                .min(configured)
            }
            _ => configured,
        };
        // `empty_queue` and `target_margin` follow the T in force from
        // what they are at the draft's 60 ms: with `target=10ms` the empty
        // queue is 2.5 ms, not 15 ms above a T of 10 ms (it was, until
        // 2026-11-28: `profile=full,target=10ms` then filled far above its
        // T). A deadline's larger T (`set_target_and_gain_divisor_max`)
        // leaves them where the start's T put them.
        let scale = target.as_secs_f64() / configured.as_secs_f64() * self.scale_at_start;
        self.target_ns = delay::nanos(target);
        self.margin_ns = delay::nanos(self.cfg.target_margin.mul_f64(scale)).min(self.target_ns);
        self.empty_queue = self.cfg.empty_queue.mul_f64(scale);
        self.exit_delay = configured.mul_f64(self.cfg.slow_start_exit);
        self.gain = self.gain_for(self.gain_base);
    }

    /// The T in force (`target_fraction` may lower it).
    fn target(&self) -> Duration {
        Duration::from_nanos(self.target_ns as u64)
    }

    fn in_slow_start(&self) -> bool {
        matches!(
            self.s.phase,
            Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. }
        )
    }

    /// One of [`STATE_NAMES`] at `now`.
    fn state_name(&self, now: Instant) -> &'static str {
        match self.s.phase {
            Phase::Slowdown { .. } => "slowdown",
            Phase::RampUp { .. } => "ramp_up",
            _ if self.s.recovery.in_recovery() => "recovery",
            Phase::InitialSlowStart | Phase::SlowStart { .. } => "slow_start",
            Phase::CongestionAvoidance if !self.flow_queue_allows_growth() => "yielded",
            Phase::CongestionAvoidance if self.s.fill.active => "filling",
            Phase::CongestionAvoidance if !self.gain_quiet_allows_gain(now) => "quiet",
            Phase::CongestionAvoidance => "congestion_avoidance",
        }
    }

    /// Whether `gain_quiet` lets GAIN grow the window at `now`: not for
    /// `gain_quiet` after a congestion loss, unless [`crate::deadline`]
    /// steers the controller above its level 0 (an LBE rule).
    fn gain_quiet_allows_gain(&self, now: Instant) -> bool {
        self.deference != Deference::Full
            || self
                .s
                .gain_quiet
                .last_congestion_loss
                .is_none_or(|t| now.saturating_duration_since(t) >= self.cfg.gain_quiet)
    }

    /// Sets TARGET and the largest GAIN divisor ([`crate::deadline`] steers
    /// them); clamped to the spec's ranges (1 ms to 1 s, 1 to 1024). GAIN is
    /// recomputed from the current base delay (§4.2) at once.
    pub fn set_target_and_gain_divisor_max(&mut self, target: Duration, gain_divisor_max: u64) {
        let target = target.clamp(Duration::from_millis(1), Duration::from_secs(1));
        self.cfg.target = target;
        self.cfg.gain_divisor_max = gain_divisor_max.clamp(1, 1024);
        self.retarget();
    }

    /// Sets how much the controller defers ([`crate::deadline`] above level
    /// 0): without slowdowns a slowdown that falls due waits until
    /// [`Deference::Full`] is back, then starts at the next ACK (or round
    /// end, for the initial one); one under way runs its course.
    pub fn set_deference(&mut self, deference: Deference) {
        self.deference = deference;
        self.retarget();
    }

    /// How much the controller defers ([`LedbatPlusPlus::set_deference`]).
    pub fn deference(&self) -> Deference {
        self.deference
    }

    /// Sets the fraction of the window a loss leaves ([`crate::deadline`]:
    /// CUBIC's β = 0.7 at its top level, [`HALVE`] below), clamped to
    /// 0.5..=0.7: never a deeper cut than the draft's nor a shallower one
    /// than CUBIC's.
    pub fn set_loss_beta(&mut self, beta: f64) {
        self.loss_beta = beta.clamp(HALVE, crate::cubic::BETA_CUBIC);
    }
}

impl CongestionController for LedbatPlusPlus {
    fn name(&self) -> &'static str {
        "ledbatpp"
    }

    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64) {
        self.flight.on_packet_sent(bytes, bytes_in_flight);
        // `fill_window_limited`: is the window full after this packet?
        let after = bytes_in_flight.saturating_add(bytes) as f64;
        if after >= FILL_WINDOW_FULL * self.s.cwnd {
            self.s.fill.window_full_since.get_or_insert(now);
        } else {
            self.s.fill.window_full_since = None;
        }
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let now = ack.now;
        let bytes = ack.bytes_acked() as f64;
        let largest = round::largest_sent(ack.acked);

        self.s.recovery.on_ack(largest);
        if ack.rtt.new_sample {
            self.srtt = Some(ack.rtt.smoothed_rtt);
        }
        let skipping = match self.s.skip_until {
            Some(until) if largest.is_some_and(|sent| sent >= until) => {
                self.s.skip_until = None;
                false
            }
            Some(_) => true,
            None => false,
        };
        let counted = ack.rtt.new_sample && !skipping;
        let sample = counted.then(|| self.source.sample(ack)).flatten();
        if counted {
            if self.round_trip.is_none() && self.source.signal() == Some(delay::Signal::OneWay) {
                // The signal turns one-way: `delay` took the round trips
                // until now, and is about to restart.
                self.round_trip = Some(self.delay.current_filter().clone());
            }
            if let Some(round_trip) = &mut self.round_trip {
                round_trip.on_sample(now, delay::adjusted_rtt(&ack.rtt));
            }
        }
        match sample {
            Some(s) => {
                if self.cfg.jitter_allowance > 0.0 {
                    self.spread.on_sample(s.delay);
                }
                self.delay.on_delay_sample(now, s, None)
            }
            None => self.delay.advance(now),
        }
        // -01 §4.2's gain is of the base round trip.
        let base = self.source.base_rtt(self.delay.base(), &ack.rtt);
        if base != self.gain_base {
            self.gain_base = base;
            self.retarget();
        }

        // (Read only while frozen: the current RTT is not free.)
        let rtt_queue = match self.s.phase {
            Phase::Slowdown { .. } => match (self.current_rtt(), self.gain_base) {
                (Some(rtt), Some(base)) => rtt.saturating_sub(base),
                _ => Duration::ZERO,
            },
            _ => Duration::ZERO,
        };
        if let Phase::Slowdown {
            min_queue,
            min_rtt_queue,
            ..
        } = &mut self.s.phase
        {
            if ack.rtt.new_sample && !skipping {
                *min_queue = (*min_queue).min(self.delay.queuing());
                *min_rtt_queue = (*min_rtt_queue).min(rtt_queue);
            }
        }
        let round_start = self.rounds.start();
        let ended = self.rounds.on_ack(now, largest);
        if ended && self.cfg.jitter_allowance > 0.0 {
            let noise = self.spread.noise();
            self.spread.on_round_end();
            if self.spread.noise() != noise {
                self.retarget();
            }
        }
        // `fq_yield` (`flow_queue.rs`): the round's rate, and the test.
        if self.cfg.fq_yield.is_some() {
            let sample = (ack.rtt.new_sample && !skipping).then_some(largest);
            self.flow_queue_on_ack(now, bytes, round_start, ended, sample);
        }
        let mut changed = ended && self.on_round_end(now);
        match self.s.phase {
            Phase::Slowdown {
                start,
                until,
                rtt,
                min_queue,
                min_rtt_queue,
            } if now >= until => {
                self.end_freeze(now, start, rtt, min_queue, min_rtt_queue);
                changed = true;
            }
            Phase::CongestionAvoidance => {
                if let Schedule::At(due) = self.s.next_slowdown {
                    if now >= due && self.deference == Deference::Full {
                        self.start_slowdown(now, true);
                        changed = true;
                    }
                }
            }
            _ => (),
        }
        if changed {
            return;
        }

        let may_grow = !self.s.recovery.in_recovery()
            && self.flight.at_ack(ack.bytes_in_flight).saturating_mul(2) >= self.window();
        let q = self.delay.queuing();
        match self.s.phase {
            Phase::Slowdown { .. } => (),
            Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. } => {
                self.slow_start_on_ack(now, bytes, q, may_grow)
            }
            Phase::CongestionAvoidance => {
                self.congestion_avoidance_on_ack(now, bytes, q, largest, may_grow, skipping)
            }
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        self.on_loss(loss);
        // `fq_yield`: a loss during a test (`flow_queue.rs`), after the
        // loss's own decrease.
        self.flow_queue_on_loss(loss.now, loss.largest_lost_time_sent);
    }

    fn on_persistent_congestion(&mut self, _now: Instant) {
        self.on_persistent_congestion_event();
    }

    checkpoint_hooks!();

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.bounds
            .on_mtu_change(max_datagram_size, &mut self.s.cwnd);
        if let Phase::Slowdown { .. } = self.s.phase {
            // The freeze is at 2 packets of the new size.
            self.s.cwnd = self.freeze_window();
        }
    }

    fn window(&self) -> u64 {
        // The window is within `[bounds.min, MAX_WINDOW_BYTES]` (2^32), so
        // truncating through `i64` gives what `as u64` would, in fewer
        // instructions: x86-64 has no conversion of a double to an
        // unsigned 64-bit integer, and `as u64` builds one around the
        // signed one (this is called at least twice per ACK).
        self.s.cwnd as i64 as u64
    }

    /// [`pacing`]: 2 × cwnd/srtt in a slow start (initial, after persistent
    /// congestion, ramp-up) while cwnd < ssthresh/2, else 1.2 × cwnd/srtt.
    fn pacing_rate(&self) -> Option<u64> {
        if self.s.fill.active && self.s.phase == Phase::CongestionAvoidance {
            // `fill_empty_queue`: the queue is empty, so the current delay is
            // the round trip (the smoothed RTT may still hold a queue gone).
            let rtt = self.current_rtt().or(self.srtt);
            return pacing::rate(self.window(), rtt, true);
        }
        let slow_start =
            self.in_slow_start() && pacing::in_slow_start(self.s.cwnd, self.s.ssthresh);
        // `pacing_rtt=current` (`profiles.rs`).
        let rtt = match (self.cfg.pacing_rtt, self.current_rtt(), self.srtt) {
            (PacingRtt::Current, Some(current), Some(srtt)) => Some(current.min(srtt)),
            _ => self.srtt,
        };
        pacing::rate(self.window(), rtt, slow_start)
    }

    fn state(&self, now: Instant) -> &'static str {
        self.state_name(now)
    }

    fn delay_signal(&self) -> Option<crate::delay::Signal> {
        self.source.signal()
    }

    fn snapshot(&self) -> Snapshot {
        let gain = self.gain;
        self.delay.snapshot(
            self.window(),
            self.s.ssthresh,
            self.target(),
            gain,
            self.source.signal(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;

    #[test]
    fn pacing_is_twice_the_window_rate_in_slow_start_and_1_2_times_after() {
        let mut d = base_240(&[]);
        assert_eq!(d.cc.pacing_rate(), None, "no RTT sample yet");
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        // 24000 bytes per 240 ms = 100 kB/s; slow start: 2×.
        assert_eq!(d.cc.pacing_rate(), Some(200_000));
        d.round(ms(240), 24_000);
        d.round(ms(286), 48_000);
        // Congestion avoidance at 48000 bytes, srtt 286 ms: 1.2×.
        assert_eq!(
            d.cc.pacing_rate(),
            Some((1.2 * 48_000.0 / 0.286_f64).round() as u64)
        );
        d.round(ms(240), 48_000);
        d.round(ms(240), 49_200);
        // Slowdown: 1.2 × 2400 / 0.24 s.
        assert_eq!(state(&d), "slowdown");
        assert_eq!(d.cc.pacing_rate(), Some(12_000));
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        // Ramp-up below ssthresh/2: 2 × 2400 / 0.24 s.
        assert_eq!(state(&d), "ramp_up");
        assert_eq!(d.cc.pacing_rate(), Some(20_000));
        for w in [2_400, 4_800, 9_600] {
            d.round(ms(240), w);
        }
        // 19200 bytes, still below 49200/2: 2 × 19200 / 0.24 s.
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 19_200));
        assert_eq!(d.cc.pacing_rate(), Some(160_000));
        // 38400 bytes, no longer below 49200/2: 1.2 × 38400 / 0.24 s.
        d.round(ms(240), 19_200);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 38_400));
        assert_eq!(d.cc.pacing_rate(), Some(192_000));
    }

    #[test]
    fn deference_none_grows_above_target_and_delay_only_still_decreases() {
        // As one_round_at_one_and_a_half_target_halves_and_adds_gain: one
        // round at q = 1.5·T. Without deference the decrease is gone and
        // the round adds GAIN·MSS; DelayOnly keeps the draft's rule.
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.set_deference(Deference::None);
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!(d.cc.window(), 48_000 + 300);
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.set_deference(Deference::DelayOnly);
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!(d.cc.window(), 24_300);
    }

    #[test]
    fn a_slowdown_due_waits_until_full_deference_is_back() {
        // The initial slowdown is due at the second round end after the
        // initial slow start; held, it starts at the first round end once
        // the deference is Full again.
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.set_deference(Deference::DelayOnly);
        for _ in 0..4 {
            d.round(ms(35), MSS);
            assert_eq!(state(&d), "congestion_avoidance");
        }
        d.cc.set_deference(Deference::Full);
        d.round(ms(35), MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    /// A congestion loss in congestion avoidance started `gain_quiet`
    /// (10 s): the window is halved, and 5 ACKs later no GAIN is added.
    fn quiet() -> Driver<LedbatPlusPlus> {
        let mut d = base_30_at_48000(&[
            ("gain_quiet", "10s"),
            ("slowdown", "false"),
            ("fill_empty_queue", "true"),
            ("loss_on_empty_queue", "ignore"),
        ]);
        d.advance(ms(200));
        // q = 90 ms: a queue, so the loss counts.
        d.ack_old(ms(1), MSS, ms(120));
        let w = d.cc.window();
        d.advance(ms(1));
        d.loss(d.now - NS);
        assert_eq!((state(&d), d.cc.window()), ("recovery", w / 2));
        d.advance(ms(1));
        d.ack(d.now, MSS, ms(30));
        for _ in 0..5 {
            d.ack_old(ms(1), MSS, ms(60));
        }
        assert_eq!((state(&d), d.cc.window()), ("quiet", w / 2));
        d
    }

    #[test]
    fn a_spurious_loss_during_gain_quiet_is_undone_whole() {
        // The loss would halve again, restart the quiet and the fill's
        // wait; rolled back, the quiet ends 10 s after the first loss, as
        // for a twin that never saw it.
        let (mut a, mut b) = (quiet(), quiet());
        let sent = a.now - NS;
        assert_spurious_loss_undone(&mut a, &mut b, sent, |d| {
            d.ack_old(Duration::from_secs(10), MSS, ms(60));
            d.ack_old(ms(1), MSS, ms(30));
        });
        assert!(a.cc.s.gain_quiet.last_congestion_loss.is_some());
    }

    /// `profile=full`'s guards beside a freeze: through the initial
    /// slowdown into its freeze (one round of it), with `extra`.
    fn frozen(extra: &[(&str, &str)]) -> Driver<LedbatPlusPlus> {
        let mut spec = vec![
            ("gain_quiet", "10s"),
            ("restore", "guarded"),
            ("fq_yield", "0.6"),
            ("gentle_freeze", "true"),
        ];
        spec.extend_from_slice(extra);
        let mut d = base_240(&spec);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d
    }

    #[test]
    fn a_spurious_loss_during_a_freeze_is_undone_whole() {
        // Counted as congestion (the ramp-up's goal halves, the quiet
        // starts) or, on the empty queue, as random loss (its budget and
        // the fill's wait): either way, rolled back, the freeze ends as
        // the twin's, the jump back to 49 200 bytes and the rate test
        // included.
        for extra in [&[][..], &[("loss_on_empty_queue", "ignore")][..]] {
            let (mut a, mut b) = (frozen(extra), frozen(extra));
            let sent = a.now - NS;
            assert_spurious_loss_undone(&mut a, &mut b, sent, |d| {
                d.round(ms(240), 2 * MSS);
                assert_eq!((state(d), d.cc.window()), ("congestion_avoidance", 49_200));
                d.round(ms(300), 49_200);
            });
        }
    }

    #[test]
    fn full_phases_of_congestion_avoidance_are_named() {
        // `quiet` until `gain_quiet` (10 s) after the congestion loss,
        // 6 ms before `quiet()` returns.
        let d = quiet();
        let loss = d.now - ms(6);
        assert_eq!(d.cc.state(loss + Duration::from_secs(10) - NS), "quiet");
        assert_eq!(
            d.cc.state(loss + Duration::from_secs(10)),
            "congestion_avoidance"
        );
        // `filling` after an ACK that grew by `fill_empty_queue` (q = 15 ms,
        // `empty_queue`), not after one above the empty queue.
        let mut d = base_30_at_48000(&[("fill_empty_queue", "true")]);
        d.ack_old(ms(1), MSS, ms(45));
        assert_eq!((state(&d), d.cc.window()), ("filling", 49_200));
        d.ack_old(ms(1), MSS, ms(46));
        assert_eq!(state(&d), "congestion_avoidance");
        // `yielded`: `flow_queue.rs`'s tests.
    }
}
