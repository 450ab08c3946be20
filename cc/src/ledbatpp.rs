//! LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-01), on QUIC RTT samples.
//!
//! The -01 revision is what seed `ledbatpp-experimental-evaluation` measured
//! (its §3 and appendix summarise it); its mechanisms are the defaults here.
//! No change from later revisions is adopted. Per ACK, in this order:
//!
//! 1. the delay sample ([`crate::delay`]) updates current and base delay,
//!    and GAIN = 1 / min(16, ceil(2·T / base)) (§4.2);
//! 2. round bookkeeping (a round ends with the first ACK for a packet sent
//!    at or after its start): a freeze, or the countdown to the initial
//!    slowdown, advances by one round when the ACK ends a round;
//! 3. a periodic slowdown that is due starts;
//! 4. the window rule of the phase:
//!    * slow start (§4.1): `cwnd += GAIN · bytes_acked` (×(1+GAIN) per
//!      round), left when queuing delay > 3/4·T, on loss, or at ssthresh;
//!    * congestion avoidance (§4.3), a per-round rule spread over the
//!      round's ACKs, each ACK applying its share `bytes_acked / W` with W
//!      the window when the round began:
//!      `q ≤ T: W += GAIN·MSS`, `q > T: W += max(GAIN·MSS − C·W·(q/T − 1), −W/2)`;
//!    * slowdown (§4.4): window held at 2 packets for 2 rounds;
//!    * ramp-up: slow start as above back to ssthresh (the pre-slowdown
//!      window).
//!
//! An ACK whose processing changes the phase (slow start exit, slowdown
//! start, end of a freeze) does not also grow the window.
//!
//! Periodic slowdowns (§4.4): the initial one starts 2 rounds after the
//! initial slow start ends (by delay or by loss); it sets ssthresh = cwnd and
//! cwnd = 2 packets, holds for 2 rounds, then ramps up. The slowdown's
//! duration D runs from its start to the end of its ramp-up (cwnd back at
//! ssthresh, or the ramp-up left early by delay or loss), and the next
//! slowdown is due 9·D after that end, so that at most about a tenth of the
//! time is spent slowed down. Later slowdowns start on the first ACK in
//! congestion avoidance at or after the due time.
//!
//! Loss (§4 of the draft keeps RFC 5681's response): halve, at most once per
//! recovery period — a loss of a packet sent no later than the start of the
//! current recovery period does not reduce again (RFC 9002 §7.3.2); the
//! window never increases during recovery. Minimum window 2 packets.
//!
//! The window does not grow while less than half of it is in flight (the
//! sender is application-limited; RFC 9002 §7.8 and Linux's slow-start
//! cwnd-limited rule); decreases always apply.
//!
//! # A ramp-up cut short
//!
//! D runs from the start of the slowdown to the end of its ramp-up (§4.4).
//! When the ramp-up ends before the window is back at ssthresh — the queuing
//! delay passed 3/4·T or a packet was lost, typically because other flows
//! keep a queue — D still counts a full ramp-up,
//! `ceil(log_{1+GAIN}(ssthresh / 2 packets))` rounds as long as a freeze
//! round. The draft does not say what D is then; taking the time actually
//! spent would schedule the next slowdown a few RTTs later, and a flow held
//! small by others' queue would collapse to 2 packets over and over and
//! never reach its share (seen with two flows 10 s apart: 1.3 vs 16.2
//! Mbit/s on 20 Mbit/s).
//!
//! # The seed's two proposed fixes (its §5.1.3), off by default
//!
//! * `restore=jump`: at the end of the freeze the window returns to ssthresh
//!   at once instead of slow-starting there. So that the slowdowns keep the
//!   strict draft's frequency (the fix is meant to shorten each penalty, not
//!   to make slowdowns more frequent), D is then the freeze plus the rounds a
//!   ramp-up would have taken, `ceil(log_{1+GAIN}(ssthresh / 2 packets))`,
//!   each as long as a freeze round (the freeze measures the unloaded RTT).
//! * `skip_rtt_after_restore=true`: once the window is restored (ramp-up
//!   reached ssthresh, or the jump), delay samples are ignored until an ACK
//!   acknowledges a packet sent after the restore — the round trip whose
//!   samples carry the queue of the ramp-up's last burst. Those ACKs neither
//!   feed the delay filters nor move the window (losses still count).

use std::time::Duration;
use std::time::Instant;

use crate::delay;
use crate::delay::DelayConfig;
use crate::delay::DelayEstimator;
use crate::flight::FlightSize;
use crate::params;
use crate::round;
use crate::round::Rounds;
use crate::AckEvent;
use crate::CongestionController;
use crate::LossEvent;
use crate::ParamError;
use crate::PathInfo;
use crate::Snapshot;
use crate::MAX_WINDOW_BYTES;

/// TARGET queuing delay T: 60 ms (draft -01 §4; seed §3).
pub const TARGET: Duration = Duration::from_millis(60);
/// Upper bound of the GAIN divisor: GAIN ≥ 1/16 (draft -01 §4.2).
pub const GAIN_DIVISOR_MAX: u64 = 16;
/// Constant C of the multiplicative decrease, dimensionless (draft -01 §4.3).
pub const DECREASE_CONSTANT: f64 = 1.0;
/// Slow start ends when queuing delay exceeds this fraction of T
/// (draft -01 §4.1: 3/4).
pub const SLOW_START_EXIT: f64 = 0.75;
/// Minimum window, packets (draft -01 §4.3 and §4.4: 2).
pub const MIN_CWND: u64 = 2;
/// Length of the slowdown freeze, rounds (draft -01 §4.4: 2 RTTs).
pub const SLOWDOWN_RTTS: u64 = 2;
/// Rounds from the end of the initial slow start to the initial slowdown
/// (draft -01 §4.4: 2 RTTs).
pub const INITIAL_SLOWDOWN_RTTS: u64 = 2;
/// The next slowdown is due this many slowdown durations after the last one
/// ended (draft -01 §4.4: 9, i.e. ≤ 10 % of the time slowed down).
pub const SLOWDOWN_INTERVAL: u32 = 9;

/// How the window returns after a slowdown's freeze.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Restore {
    /// Slow start back to the pre-slowdown window (the draft).
    #[default]
    SlowStart,
    /// Jump straight back to it (seed §5.1.3, first fix).
    Jump,
}

/// Parameters of [`LedbatPlusPlus`]. Defaults are draft -01's.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatPlusPlusConfig {
    /// TARGET queuing delay T. Default 60 ms ([`TARGET`]).
    /// Spec key `target`, 1 ms to 1 s.
    pub target: Duration,
    /// Largest GAIN divisor: GAIN = 1/min(this, ceil(2T/base)). Default 16
    /// ([`GAIN_DIVISOR_MAX`]). Spec key `gain_divisor_max`, 1 to 1024.
    pub gain_divisor_max: u64,
    /// Constant C of the decrease rule. Default 1 ([`DECREASE_CONSTANT`]).
    /// Spec key `decrease_constant`, 0.01 to 100.
    pub decrease_constant: f64,
    /// Slow start ends when q > this · T. Default 0.75 ([`SLOW_START_EXIT`]).
    /// Spec key `ss_exit`, 0.01 to 1.
    pub slow_start_exit: f64,
    /// Minimum window, packets. Default 2 ([`MIN_CWND`]).
    /// Spec key `min_cwnd`, 1 to 64.
    pub min_cwnd: u64,
    /// Whether periodic slowdowns happen at all. Default true.
    /// Spec key `slowdown`.
    pub slowdown: bool,
    /// Freeze length, rounds. Default 2 ([`SLOWDOWN_RTTS`]).
    /// Spec key `slowdown_rtts`, 1 to 16.
    pub slowdown_rtts: u64,
    /// Rounds from the end of the initial slow start to the initial
    /// slowdown. Default 2 ([`INITIAL_SLOWDOWN_RTTS`]).
    /// Spec key `initial_slowdown_rtts`, 1 to 1000.
    pub initial_slowdown_rtts: u64,
    /// Next slowdown due this many slowdown durations after the last ended.
    /// Default 9 ([`SLOWDOWN_INTERVAL`]). Spec key `slowdown_interval`, 1 to 1000.
    pub slowdown_interval: u32,
    /// How the window returns after a freeze. Default slow start.
    /// Spec key `restore`, `slow_start` or `jump`.
    pub restore: Restore,
    /// Ignore delay samples for one round trip after the window is restored.
    /// Default false. Spec key `skip_rtt_after_restore`.
    pub skip_rtt_after_restore: bool,
    /// Delay filters (spec keys `current_filter`, `base_history`,
    /// `base_bucket`).
    pub delay: DelayConfig,
}

impl Default for LedbatPlusPlusConfig {
    fn default() -> Self {
        Self {
            target: TARGET,
            gain_divisor_max: GAIN_DIVISOR_MAX,
            decrease_constant: DECREASE_CONSTANT,
            slow_start_exit: SLOW_START_EXIT,
            min_cwnd: MIN_CWND,
            slowdown: true,
            slowdown_rtts: SLOWDOWN_RTTS,
            initial_slowdown_rtts: INITIAL_SLOWDOWN_RTTS,
            slowdown_interval: SLOWDOWN_INTERVAL,
            restore: Restore::SlowStart,
            skip_rtt_after_restore: false,
            delay: DelayConfig::default(),
        }
    }
}

impl LedbatPlusPlusConfig {
    /// Every spec key.
    pub const KEYS: &'static [&'static str] = &[
        "target",
        "gain_divisor_max",
        "decrease_constant",
        "ss_exit",
        "min_cwnd",
        "slowdown",
        "slowdown_rtts",
        "initial_slowdown_rtts",
        "slowdown_interval",
        "restore",
        "skip_rtt_after_restore",
        "current_filter",
        "base_history",
        "base_bucket",
    ];

    /// Sets one spec parameter.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        if let Some(result) = self.delay.set(key, value) {
            return result;
        }
        match key {
            "target" => {
                self.target = params::duration_in(
                    key,
                    value,
                    Duration::from_millis(1),
                    Duration::from_secs(1),
                )?
            }
            "gain_divisor_max" => self.gain_divisor_max = params::u64_in(key, value, 1, 1024)?,
            "decrease_constant" => {
                self.decrease_constant = params::f64_in(key, value, 0.01, 100.0)?
            }
            "ss_exit" => self.slow_start_exit = params::f64_in(key, value, 0.01, 1.0)?,
            "min_cwnd" => self.min_cwnd = params::u64_in(key, value, 1, 64)?,
            "slowdown" => self.slowdown = params::bool_value(key, value)?,
            "slowdown_rtts" => self.slowdown_rtts = params::u64_in(key, value, 1, 16)?,
            "initial_slowdown_rtts" => {
                self.initial_slowdown_rtts = params::u64_in(key, value, 1, 1000)?
            }
            "slowdown_interval" => {
                self.slowdown_interval = params::u64_in(key, value, 1, 1000)? as u32
            }
            "restore" => {
                self.restore = match params::one_of(key, value, &["slow_start", "jump"])? {
                    "jump" => Restore::Jump,
                    _ => Restore::SlowStart,
                }
            }
            "skip_rtt_after_restore" => {
                self.skip_rtt_after_restore = params::bool_value(key, value)?
            }
            _ => return Err(params::unknown_key("ledbatpp", key, Self::KEYS)),
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    CongestionAvoidance,
    /// The freeze at the minimum window; rounds still to wait.
    Slowdown {
        rounds_left: u64,
    },
    RampUp,
}

/// Everything a spurious loss may have to restore.
#[derive(Clone, Copy, Debug)]
struct State {
    cwnd: f64,
    /// `f64::INFINITY` until the initial slow start ends.
    ssthresh: f64,
    phase: Phase,
    recovery_start: Option<Instant>,
    in_recovery: bool,
    /// Rounds until the initial slowdown, while it is pending.
    initial_countdown: Option<u64>,
    initial_scheduled: bool,
    slowdown_start: Option<Instant>,
    /// When the current ramp-up began, and the rounds a full one takes.
    ramp_start: Option<Instant>,
    ramp_rounds: u32,
    next_slowdown: Option<Instant>,
    /// Delay samples are ignored until a packet sent at or after this is
    /// acknowledged (`skip_rtt_after_restore`).
    skip_until: Option<Instant>,
}

/// The LEDBAT++ controller (see the module docs).
#[derive(Debug)]
pub struct LedbatPlusPlus {
    cfg: LedbatPlusPlusConfig,
    mss: f64,
    min_cwnd: f64,
    /// `target · slow_start_exit`.
    exit_delay: Duration,
    /// TARGET in nanoseconds.
    target_ns: f64,
    s: State,
    /// The window when the current round began (W of the §4.3 rule).
    round_cwnd: f64,
    rounds: Rounds,
    delay: DelayEstimator,
    flight: FlightSize,
    /// GAIN, recomputed when the base delay changes.
    gain: f64,
    gain_base: Option<Duration>,
    saved: Option<State>,
}

impl LedbatPlusPlus {
    /// A LEDBAT++ controller for `path`, starting in slow start at the
    /// path's initial window.
    pub fn new(cfg: LedbatPlusPlusConfig, path: PathInfo) -> Self {
        let mss = path.max_datagram_size.max(1) as f64;
        let min_cwnd = (cfg.min_cwnd as f64 * mss).min(MAX_WINDOW_BYTES as f64);
        let cwnd =
            (path.initial_window_packets as f64 * mss).clamp(min_cwnd, MAX_WINDOW_BYTES as f64);
        Self {
            mss,
            min_cwnd,
            exit_delay: cfg.target.mul_f64(cfg.slow_start_exit),
            target_ns: delay::nanos(cfg.target),
            s: State {
                cwnd,
                ssthresh: f64::INFINITY,
                phase: Phase::SlowStart,
                recovery_start: None,
                in_recovery: false,
                initial_countdown: None,
                initial_scheduled: false,
                slowdown_start: None,
                ramp_start: None,
                ramp_rounds: 0,
                next_slowdown: None,
                skip_until: None,
            },
            round_cwnd: cwnd,
            rounds: Rounds::default(),
            delay: DelayEstimator::new(&cfg.delay),
            flight: FlightSize::default(),
            gain: 1.0 / cfg.gain_divisor_max as f64,
            gain_base: None,
            saved: None,
            cfg,
        }
    }

    /// GAIN for a base delay (draft -01 §4.2); the smallest GAIN while the
    /// base is unknown or zero.
    fn gain_for(&self, base: Option<Duration>) -> f64 {
        let max = self.cfg.gain_divisor_max;
        let divisor = match base {
            Some(b) if !b.is_zero() => (2 * self.cfg.target.as_nanos())
                .div_ceil(b.as_nanos())
                .clamp(1, max as u128) as u64,
            _ => max,
        };
        1.0 / divisor as f64
    }

    fn halve(&mut self) {
        self.s.cwnd = (self.s.cwnd / 2.0).max(self.min_cwnd);
    }

    /// Leaves the initial slow start: the initial slowdown is due
    /// `initial_slowdown_rtts` rounds from now.
    fn schedule_initial_slowdown(&mut self, now: Instant) {
        if self.cfg.slowdown && !self.s.initial_scheduled {
            self.s.initial_scheduled = true;
            self.s.initial_countdown = Some(self.cfg.initial_slowdown_rtts);
            self.rounds.restart(now);
            self.round_cwnd = self.s.cwnd;
        }
    }

    fn start_slowdown(&mut self, now: Instant) {
        self.s.ssthresh = self.s.cwnd;
        self.s.cwnd = self.min_cwnd;
        self.s.phase = Phase::Slowdown {
            rounds_left: self.cfg.slowdown_rtts,
        };
        self.s.slowdown_start = Some(now);
        self.s.next_slowdown = None;
        self.s.initial_countdown = None;
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
    }

    /// The slowdown is over (window restored, or the ramp-up was cut short):
    /// schedules the next one.
    /// Rounds of slow start from the minimum window to ssthresh:
    /// `ceil(log_{1+GAIN}(ssthresh / min_cwnd))`.
    fn rounds_to_restore(&self) -> u32 {
        let ratio = self.s.ssthresh / self.min_cwnd;
        if ratio > 1.0 {
            (ratio.ln() / self.gain.ln_1p()).ceil().min(1e6) as u32
        } else {
            0
        }
    }

    fn finish_slowdown(&mut self, now: Instant, restored: bool) {
        self.s.phase = Phase::CongestionAvoidance;
        let start = self.s.slowdown_start.take().unwrap_or(now);
        let freeze_end = self.s.ramp_start.take().unwrap_or(now);
        let mut duration = now.saturating_duration_since(start);
        if !(restored && self.cfg.restore == Restore::SlowStart) {
            // No ramp-up (restore=jump), or one cut short by delay or loss:
            // D counts the full ramp-up, in rounds as long as a freeze
            // round (see the module docs).
            let rounds = match self.cfg.restore {
                Restore::Jump => self.rounds_to_restore(),
                Restore::SlowStart => self.s.ramp_rounds,
            };
            let freeze = freeze_end.saturating_duration_since(start);
            let round = freeze / self.cfg.slowdown_rtts.max(1) as u32;
            duration = duration.max(freeze + round.saturating_mul(rounds));
        }
        self.s.next_slowdown = now.checked_add(duration.saturating_mul(self.cfg.slowdown_interval));
        if restored && self.cfg.skip_rtt_after_restore {
            self.s.skip_until = Some(now);
        }
    }

    /// Round-end bookkeeping; returns whether the phase changed.
    fn on_round_end(&mut self, now: Instant) -> bool {
        let mut changed = false;
        match self.s.phase {
            Phase::Slowdown { rounds_left } if rounds_left > 1 => {
                self.s.phase = Phase::Slowdown {
                    rounds_left: rounds_left - 1,
                };
            }
            Phase::Slowdown { .. } => {
                changed = true;
                match self.cfg.restore {
                    Restore::SlowStart => {
                        self.s.phase = Phase::RampUp;
                        self.s.ramp_start = Some(now);
                        self.s.ramp_rounds = self.rounds_to_restore();
                    }
                    Restore::Jump => {
                        self.s.cwnd = self.s.ssthresh.max(self.min_cwnd);
                        self.finish_slowdown(now, true);
                    }
                }
            }
            Phase::CongestionAvoidance => match self.s.initial_countdown {
                Some(n) if n > 1 => self.s.initial_countdown = Some(n - 1),
                Some(_) => {
                    changed = true;
                    self.start_slowdown(now);
                }
                None => (),
            },
            Phase::SlowStart | Phase::RampUp => (),
        }
        self.round_cwnd = self.s.cwnd;
        changed
    }

    fn state_name(&self) -> &'static str {
        match self.s.phase {
            Phase::Slowdown { .. } => "slowdown",
            Phase::RampUp => "ramp_up",
            _ if self.s.in_recovery => "recovery",
            Phase::SlowStart => "slow_start",
            Phase::CongestionAvoidance => "congestion_avoidance",
        }
    }
}

impl CongestionController for LedbatPlusPlus {
    fn name(&self) -> &'static str {
        "ledbatpp"
    }

    fn on_packet_sent(&mut self, _now: Instant, bytes: u64, bytes_in_flight: u64) {
        self.flight.on_packet_sent(bytes, bytes_in_flight);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let now = ack.now;
        let bytes = ack.bytes_acked() as f64;
        let largest = round::largest_sent(ack.acked);

        if self.s.in_recovery
            && largest.is_some_and(|sent| self.s.recovery_start.is_none_or(|r| sent > r))
        {
            self.s.in_recovery = false;
        }
        let skipping = match self.s.skip_until {
            Some(until) if largest.is_some_and(|sent| sent >= until) => {
                self.s.skip_until = None;
                false
            }
            Some(_) => true,
            None => false,
        };
        if ack.rtt.new_sample && !skipping {
            self.delay.on_sample(now, delay::adjusted_rtt(&ack.rtt));
        } else {
            self.delay.advance(now);
        }
        let base = self.delay.base();
        if base != self.gain_base {
            self.gain_base = base;
            self.gain = self.gain_for(base);
        }

        let mut changed = self.rounds.on_ack(now, largest) && self.on_round_end(now);
        if self.s.phase == Phase::CongestionAvoidance
            && self.s.next_slowdown.is_some_and(|due| now >= due)
        {
            self.start_slowdown(now);
            changed = true;
        }
        if changed {
            return;
        }

        let may_grow = !self.s.in_recovery
            && self.flight.at_ack(ack.bytes_in_flight).saturating_mul(2) >= self.s.cwnd as u64;
        let q = self.delay.queuing();
        match self.s.phase {
            Phase::Slowdown { .. } => (),
            Phase::SlowStart | Phase::RampUp => {
                if q > self.exit_delay {
                    if self.s.phase == Phase::RampUp {
                        self.finish_slowdown(now, false);
                    } else {
                        self.s.ssthresh = self.s.cwnd;
                        self.s.phase = Phase::CongestionAvoidance;
                        self.schedule_initial_slowdown(now);
                    }
                } else if may_grow {
                    self.s.cwnd = (self.s.cwnd + self.gain * bytes).min(MAX_WINDOW_BYTES as f64);
                    if self.s.cwnd >= self.s.ssthresh {
                        // ssthresh may predate an MTU increase.
                        self.s.cwnd = self.s.ssthresh.max(self.min_cwnd);
                        if self.s.phase == Phase::RampUp {
                            self.finish_slowdown(now, true);
                        } else {
                            self.s.phase = Phase::CongestionAvoidance;
                        }
                    }
                }
            }
            Phase::CongestionAvoidance => {
                if skipping {
                    return;
                }
                let w = self.round_cwnd.max(self.min_cwnd);
                let mut change = self.gain * self.mss * bytes / w;
                let t = self.target_ns;
                let q = delay::nanos(q);
                if q > t {
                    change -= self.cfg.decrease_constant * (q / t - 1.0) * bytes;
                    change = change.max(-bytes / 2.0);
                }
                if !may_grow {
                    change = change.min(0.0);
                }
                self.s.cwnd = (self.s.cwnd + change).clamp(self.min_cwnd, MAX_WINDOW_BYTES as f64);
            }
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        if self
            .s
            .recovery_start
            .is_some_and(|start| loss.largest_lost_time_sent <= start)
        {
            return;
        }
        self.s.recovery_start = Some(loss.now);
        self.s.in_recovery = true;
        match self.s.phase {
            Phase::Slowdown { .. } => {
                // The window is already at the minimum: lower the ramp-up's goal.
                self.s.ssthresh = (self.s.ssthresh / 2.0).max(self.min_cwnd);
            }
            Phase::SlowStart => {
                self.halve();
                self.s.ssthresh = self.s.cwnd;
                self.s.phase = Phase::CongestionAvoidance;
                self.schedule_initial_slowdown(loss.now);
            }
            Phase::RampUp => {
                self.halve();
                self.s.ssthresh = self.s.cwnd;
                self.finish_slowdown(loss.now, false);
            }
            Phase::CongestionAvoidance => {
                self.halve();
                self.s.ssthresh = self.s.cwnd;
            }
        }
    }

    fn on_persistent_congestion(&mut self, _now: Instant) {
        self.s.cwnd = self.min_cwnd;
        if self.s.phase == Phase::CongestionAvoidance && self.s.ssthresh > self.min_cwnd {
            // Slow start (with the §4.1 delay exit) back towards ssthresh.
            self.s.phase = Phase::SlowStart;
        }
    }

    fn checkpoint(&mut self) {
        self.saved = Some(self.s);
    }

    fn rollback(&mut self) -> bool {
        match self.saved.take() {
            Some(saved) => {
                self.s = saved;
                // The MSS may have changed since the checkpoint.
                self.s.cwnd = self.s.cwnd.clamp(self.min_cwnd, MAX_WINDOW_BYTES as f64);
                true
            }
            None => false,
        }
    }

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.mss = max_datagram_size.max(1) as f64;
        self.min_cwnd = (self.cfg.min_cwnd as f64 * self.mss).min(MAX_WINDOW_BYTES as f64);
        self.s.cwnd = self.s.cwnd.clamp(self.min_cwnd, MAX_WINDOW_BYTES as f64);
        if let Phase::Slowdown { .. } = self.s.phase {
            // The freeze is at 2 packets of the new size.
            self.s.cwnd = self.min_cwnd;
        }
    }

    fn window(&self) -> u64 {
        self.s.cwnd as u64
    }

    fn state(&self, _now: Instant) -> &'static str {
        self.state_name()
    }

    fn snapshot(&self) -> Snapshot {
        let gain = self.gain;
        self.delay
            .snapshot(self.window(), self.s.ssthresh, self.cfg.target, gain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::ms;
    use crate::testkit::Driver;
    use crate::testkit::MSS;

    fn driver(cfg: LedbatPlusPlusConfig, iw: u64) -> Driver<LedbatPlusPlus> {
        let path = PathInfo {
            max_datagram_size: MSS,
            initial_window_packets: iw,
        };
        Driver::new(LedbatPlusPlus::new(cfg, path))
    }

    fn filter_of_one() -> LedbatPlusPlusConfig {
        let mut cfg = LedbatPlusPlusConfig::default();
        cfg.set("current_filter", "1").unwrap();
        cfg
    }

    fn state(d: &Driver<LedbatPlusPlus>) -> &'static str {
        d.cc.state(d.now)
    }

    #[test]
    fn gain_follows_the_base_delay() {
        let d = driver(LedbatPlusPlusConfig::default(), 10);
        assert_eq!(d.cc.snapshot().gain, Some(1.0 / 16.0), "no base yet");
        // GAIN = 1 / min(16, ceil(2·60 ms / base)).
        let cases = [
            (Duration::from_millis(5), 16.0), // ceil(24) capped at 16
            (Duration::from_micros(7500), 16.0),
            (Duration::from_millis(8), 15.0),
            (Duration::from_millis(30), 4.0),
            (Duration::from_millis(60), 2.0),
            (Duration::from_millis(100), 2.0), // ceil(1.2)
            (Duration::from_millis(120), 1.0),
            (Duration::from_millis(200), 1.0), // ceil(0.6)
        ];
        for (base, divisor) in cases {
            let mut d = driver(LedbatPlusPlusConfig::default(), 10);
            d.ack_old(base, MSS, base);
            assert_eq!(d.cc.snapshot().gain, Some(1.0 / divisor), "base {base:?}");
        }
    }

    #[test]
    fn slow_start_adds_gain_per_byte_and_exits_above_three_quarters_of_target() {
        // Base 30 ms: GAIN 1/4, each 1200-byte ACK adds 300 bytes.
        let mut d = driver(LedbatPlusPlusConfig::default(), 10);
        d.ack_old(ms(1), MSS, ms(30));
        assert_eq!(d.cc.window(), 12_000 + 300);
        // q = 45 ms = 3/4·T exactly: still slow start (the rule is q > 3/4·T).
        for _ in 0..4 {
            d.ack_old(ms(1), MSS, ms(75));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(45)));
        assert_eq!(state(&d), "slow_start");
        assert_eq!(d.cc.window(), 12_000 + 5 * 300);
        // 76 ms needs four samples to pass the min-of-4 filter; the fourth
        // ends slow start and does not grow the window.
        for _ in 0..3 {
            d.ack_old(ms(1), MSS, ms(76));
            assert_eq!(state(&d), "slow_start");
        }
        d.ack_old(ms(1), MSS, ms(76));
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 12_000 + 8 * 300);
        assert_eq!(d.cc.snapshot().ssthresh, Some(14_400));
    }

    /// Slow start at 39 packets with base 30 ms (GAIN 1/4), then four 120 ms
    /// samples: q = 90 ms = 1.5·T ends slow start at exactly 48000 bytes.
    fn in_congestion_avoidance_at_48000() -> Driver<LedbatPlusPlus> {
        let mut d = driver(LedbatPlusPlusConfig::default(), 39);
        d.ack_old(ms(1), MSS, ms(30));
        for _ in 0..4 {
            d.ack_old(ms(1), MSS, ms(120));
        }
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 48_000);
        d
    }

    #[test]
    fn one_round_at_one_and_a_half_target_halves_and_adds_gain() {
        let mut d = in_congestion_avoidance_at_48000();
        // One round: ACKs for W = 48000 bytes, q = 1.5·T throughout.
        // W' = W + max(GAIN·MSS − C·W·(q/T − 1), −W/2) = 48000 + 300 − 24000.
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(120));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(90)));
        assert_eq!(d.cc.window(), 24_300);

        // Next round, q = 0: W' = W + GAIN·MSS, spread over 20 ACKs.
        let sent = d.last_ack;
        d.advance(ms(1));
        d.ack(sent, 1215, ms(30)); // ends the round: W = 24300
        for _ in 0..19 {
            d.ack_old(ms(1), 1215, ms(30));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(Duration::ZERO));
        assert_eq!(d.cc.window(), 24_300 + 300);
    }

    #[test]
    fn decrease_is_capped_at_half_the_window_per_round() {
        // Current filter of one sample, so q jumps at once: base 30 ms, then
        // a 210 ms sample (q = 3·T) ends slow start at 48000 bytes.
        let mut d = driver(filter_of_one(), 39);
        d.ack_old(ms(1), 4 * MSS, ms(30));
        d.ack_old(ms(1), MSS, ms(210));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
        // GAIN·MSS − W·(3 − 1) is far below −W/2, so the round halves W.
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(210));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(180)));
        assert_eq!(d.cc.window(), 24_000);
    }

    /// Base 120 ms (GAIN 1), one ACK per round acknowledging the window:
    /// slow start doubles per round, then a 166 ms sample (q = 46 ms) ends
    /// it at 48000 bytes. Returns the time slow start ended.
    fn slow_start_then_exit(d: &mut Driver<LedbatPlusPlus>) -> Instant {
        d.ack(d.epoch - ms(120), 12_000, ms(120));
        assert_eq!(d.cc.window(), 24_000);
        d.round(ms(120), 24_000);
        assert_eq!(d.cc.window(), 48_000);
        d.round(ms(166), 48_000);
        assert_eq!(state(d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 48_000);
        d.now
    }

    #[test]
    fn periodic_slowdowns_follow_the_schedule() {
        let mut d = driver(filter_of_one(), 10);
        let exit = slow_start_then_exit(&mut d);
        d.round(ms(120), 48_000); // first round after the exit: +GAIN·MSS
        assert_eq!(d.cc.window(), 49_200);
        assert_eq!(state(&d), "congestion_avoidance");
        d.round(ms(120), 49_200); // second round ends: the slowdown starts
        let slowdown = d.now;
        assert_eq!(slowdown - exit, ms(240), "2 RTTs after slow start");
        assert_eq!(state(&d), "slowdown");
        assert_eq!(d.cc.window(), 2 * MSS);
        assert_eq!(d.cc.snapshot().ssthresh, Some(49_200));

        // Frozen at 2 packets for 2 rounds.
        d.round(ms(120), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.round(ms(120), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        assert_eq!(d.now - slowdown, ms(240), "freeze of 2 RTTs");

        // Ramp-up: slow start (GAIN 1) back to ssthresh, capped there.
        for expect in [4_800, 9_600, 19_200, 38_400] {
            let w = d.cc.window();
            d.round(ms(120), w);
            assert_eq!((state(&d), d.cc.window()), ("ramp_up", expect));
        }
        d.round(ms(120), 38_400);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        let end = d.now;
        let duration = end - slowdown;
        assert_eq!(duration, ms(840));

        // The next slowdown is due 9 × 840 ms after the end of the ramp-up.
        d.ack_old(9 * duration - Duration::from_nanos(1), MSS, ms(120));
        assert_eq!(state(&d), "congestion_avoidance");
        assert!(d.cc.window() > 49_200);
        d.ack_old(Duration::from_nanos(1), MSS, ms(120));
        assert_eq!(d.now - end, ms(7560));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn a_ramp_up_cut_short_counts_as_a_full_one() {
        let mut d = driver(filter_of_one(), 10);
        slow_start_then_exit(&mut d);
        d.round(ms(120), 48_000);
        d.round(ms(120), 49_200);
        let slowdown = d.now;
        d.round(ms(120), 2 * MSS);
        d.round(ms(120), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        // Another flow's queue: q = 50 ms > 3/4·T ends the ramp-up at once.
        d.ack_old(ms(5), MSS, ms(170));
        assert_eq!(
            (state(&d), d.cc.window()),
            ("congestion_avoidance", 2 * MSS)
        );
        let end = d.now;
        assert_eq!(end - slowdown, ms(245));
        // D = 240 ms of freeze + ceil(log2(49200/2400)) = 5 rounds of 120 ms,
        // not the 245 ms spent: the next slowdown is 9·840 ms after the end
        // of this one.
        d.ack_old(ms(7560) - Duration::from_nanos(1), MSS, ms(120));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(Duration::from_nanos(1), MSS, ms(120));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn restore_jump_returns_to_the_window_after_the_freeze() {
        let mut cfg = filter_of_one();
        cfg.set("restore", "jump").unwrap();
        let mut d = driver(cfg, 10);
        slow_start_then_exit(&mut d);
        d.round(ms(120), 48_000);
        d.round(ms(120), 49_200);
        let slowdown = d.now;
        assert_eq!(state(&d), "slowdown");
        d.round(ms(120), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.round(ms(120), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        let end = d.now;
        assert_eq!(end - slowdown, ms(240));
        // Scheduled as if the ramp-up had taken ceil(log2(49200/2400)) = 5
        // rounds of 120 ms: D = 240 + 600 ms, next slowdown 9·D later.
        d.ack_old(ms(7560) - Duration::from_nanos(1), MSS, ms(120));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(Duration::from_nanos(1), MSS, ms(120));
        assert_eq!(state(&d), "slowdown");
    }

    /// Runs a jump restore, then ACKs for packets sent before the restore
    /// carrying q = 180 ms; returns the window after them and after one ACK
    /// for a packet sent after the restore.
    fn samples_after_restore(skip: bool) -> (u64, Option<Duration>, u64) {
        let mut cfg = filter_of_one();
        cfg.set("restore", "jump").unwrap();
        cfg.set(
            "skip_rtt_after_restore",
            if skip { "true" } else { "false" },
        )
        .unwrap();
        let mut d = driver(cfg, 10);
        slow_start_then_exit(&mut d);
        d.round(ms(120), 48_000);
        d.round(ms(120), 49_200);
        d.round(ms(120), 2 * MSS);
        d.round(ms(120), 2 * MSS);
        let restored = d.now;
        assert_eq!(d.cc.window(), 49_200);
        for _ in 0..10 {
            d.ack_old(ms(1), MSS, ms(300));
        }
        let during = (d.cc.window(), d.cc.snapshot().current_delay);
        d.advance(ms(1));
        d.ack(restored, MSS, ms(300));
        (during.0, during.1, d.cc.window())
    }

    #[test]
    fn skip_rtt_after_restore_ignores_one_round_trip_of_samples() {
        // Without the option, q = 180 ms: each 1200-byte ACK removes
        // max(1200·1200/49200 − 2·1200, −600) = −600 bytes.
        let (during, current, after) = samples_after_restore(false);
        assert_eq!(during, 49_200 - 10 * 600);
        assert_eq!(current, Some(ms(300)));
        assert_eq!(after, 49_200 - 11 * 600);
        // With it, those ACKs are ignored until a packet sent after the
        // restore is acknowledged; that one counts.
        let (during, current, after) = samples_after_restore(true);
        assert_eq!(during, 49_200);
        assert_eq!(current, Some(ms(120)));
        assert_eq!(after, 49_200 - 600);
    }

    #[test]
    fn loss_halves_once_per_recovery_period() {
        let mut d = in_congestion_avoidance_at_48000();
        let before_loss = d.now - ms(1);
        d.advance(ms(1));
        d.loss(before_loss);
        let recovery = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        // A loss of a packet sent before recovery began: no second halving.
        d.advance(ms(1));
        d.loss(recovery);
        assert_eq!(d.cc.window(), 24_000);
        // No increase during recovery, even at q = 0.
        for _ in 0..4 {
            d.ack_old(ms(1), MSS, ms(30));
        }
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        // An ACK of a packet sent after recovery began ends it.
        d.advance(ms(1));
        d.ack(recovery + ms(1), MSS, ms(30));
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 24_000 + 300 * MSS / 24_000);
        // A later loss halves again, down to the 2-packet floor.
        for _ in 0..10 {
            d.advance(ms(1));
            let sent = d.now - Duration::from_nanos(1);
            d.loss(sent);
        }
        assert_eq!(d.cc.window(), 2 * MSS);
    }

    #[test]
    fn loss_in_slow_start_ends_it_and_schedules_the_initial_slowdown() {
        let mut d = driver(filter_of_one(), 10);
        d.ack(d.epoch - ms(120), 12_000, ms(120));
        d.round(ms(120), 24_000);
        assert_eq!(d.cc.window(), 48_000);
        d.advance(ms(10));
        d.loss(d.now - ms(5));
        let loss = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        assert_eq!(d.cc.snapshot().ssthresh, Some(24_000));
        d.advance(ms(110));
        // First round after the loss (the packet was sent after it began).
        d.ack(loss + Duration::from_nanos(1), 24_000, ms(120));
        assert_eq!(state(&d), "congestion_avoidance");
        d.round(ms(120), 24_000); // second: slowdown
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn a_delayed_ack_does_not_read_as_queuing_delay() {
        // 50 ms path; every ACK but the first held 25 ms by the peer.
        let run = |reported: Duration| {
            let mut cfg = LedbatPlusPlusConfig::default();
            cfg.set("target", "30ms").unwrap(); // slow start exit at 22.5 ms
            let mut d = driver(cfg, 10);
            d.ack_old(ms(1), MSS, ms(50));
            for _ in 0..20 {
                d.advance(ms(1));
                d.ack_full(d.epoch - ms(1), MSS, ms(75), reported, true, None);
            }
            (d.cc.snapshot(), state(&d))
        };
        let (snap, st) = run(ms(25));
        assert_eq!(snap.base_delay, Some(ms(50)));
        assert_eq!(snap.queuing_delay, Some(Duration::ZERO));
        assert_eq!(st, "slow_start");
        // GAIN 1/2 at base 50 ms against T = 30 ms: 21 ACKs of 600 bytes.
        assert_eq!(snap.cwnd, 12_000 + 21 * 600);
        // The same RTTs without the ACK delay: 25 ms of queue, slow start ends.
        let (snap, st) = run(Duration::ZERO);
        assert_eq!(snap.queuing_delay, Some(ms(25)));
        assert_eq!(st, "congestion_avoidance");
    }

    #[test]
    fn persistent_congestion_collapses_and_rollback_restores() {
        let mut d = in_congestion_avoidance_at_48000();
        d.cc.checkpoint();
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), 2 * MSS);
        assert!(d.cc.rollback());
        assert_eq!(d.cc.window(), 48_000);
        assert_eq!(state(&d), "congestion_avoidance");
        assert!(!d.cc.rollback(), "one checkpoint, one rollback");
    }

    #[test]
    fn slowdowns_can_be_turned_off() {
        let mut cfg = filter_of_one();
        cfg.set("slowdown", "false").unwrap();
        let mut d = driver(cfg, 10);
        slow_start_then_exit(&mut d);
        for _ in 0..10 {
            let w = d.cc.window();
            d.round(ms(120), w);
            assert_eq!(state(&d), "congestion_avoidance");
        }
    }

    #[test]
    fn spec_keys_are_checked() {
        let mut cfg = LedbatPlusPlusConfig::default();
        cfg.set("target", "25ms").unwrap();
        assert_eq!(cfg.target, ms(25));
        assert_eq!(
            cfg.set("target", "0ms").unwrap_err().to_string(),
            "bad value '0ms' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms to 1s"
        );
        assert_eq!(
            cfg.set("restore", "teleport").unwrap_err().to_string(),
            "bad value 'teleport' for 'restore': expected one of slow_start, jump"
        );
        assert!(cfg.set("gain_divisor_max", "0").is_err());
        assert!(cfg.set("ss_exit", "1.5").is_err());
        assert!(cfg.set("current_filter", "0").is_err());
        let e = cfg.set("gain", "1").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown parameter 'gain' for 'ledbatpp' (allowed: target, "),
            "{e}"
        );
        assert!(e.contains("skip_rtt_after_restore"), "{e}");
    }
}
