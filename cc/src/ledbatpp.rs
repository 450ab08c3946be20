//! LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-01), on QUIC RTT samples.
//!
//! <https://datatracker.ietf.org/doc/html/draft-irtf-iccrg-ledbat-plus-plus-01>.
//! The -01 revision is what seed `ledbatpp-experimental-evaluation`
//! measured (its §3 and appendix summarise it); with `profile=draft` (the
//! default) this controller is -01 and nothing else. No change from later
//! revisions is adopted. The draft's sentences are quoted beside the code
//! that implements them: those that the issue tracker and the seed quote
//! from it (the -01 text itself was not at hand when this was written);
//! where only the seed's summary (its §3) was available, it is quoted as
//! the seed's.
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
//! Loss ("LEDBAT++ reacts by reducing the CW to half of its value when a
//! loss is detected", seed §3): halve, at most once per
//! recovery period — a loss of a packet sent no later than the start of the
//! current recovery period does not reduce again ([RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)); the
//! window never increases during recovery. Minimum window 2 packets.
//!
//! The window does not grow while less than half of it is in flight (the
//! sender is application-limited; [RFC 9002 §7.8](https://www.rfc-editor.org/rfc/rfc9002#section-7.8) and Linux's slow-start
//! cwnd-limited rule); decreases always apply.
//!
//! # Choices the draft leaves open
//!
//! * **Which RTT the freeze lasts.** §4.4 "Keep CWND frozen at 2 packets
//!   for 2 RTT". The RTT is the smoothed RTT ([RFC 9002 §5.3](https://www.rfc-editor.org/rfc/rfc9002#section-5.3)) of the last ACK
//!   before the slowdown, so it includes the queue the flow had built. The
//!   freeze is there to drain that queue and measure the base delay; with
//!   the min RTT instead, a queue longer than 2 base RTTs (20 ms base and
//!   the 45 ms that ends slow start) would still be draining when the freeze
//!   ends. The freeze ends at the first ACK at or after `start + 2·RTT`
//!   (this crate has no timers), so it lasts at most one ACK gap longer.
//! * **D, the slowdown's duration.** §4.4 schedules the next slowdown 9
//!   slowdown durations later, so that at most a tenth of the time is spent
//!   slowed down; D runs from the start of the slowdown to the end of the
//!   ramp-up, and is that time as measured. (The seed's summary says
//!   "after a period equal to 9·T_ss", T_ss being "the time that it takes
//!   for the slow-start to ramp back up"; counting the freeze too, as here,
//!   puts each slowdown 9 freezes, about 18 RTTs, later than T_ss alone.)
//! * **CEIL.** The draft defines CEIL(X) as "the smallest integer larger
//!   than X" and this controller follows it: when 2T/base is a whole number
//!   GAIN is one step smaller than with the usual ceiling (base 60 ms: 1/3
//!   instead of 1/2; 120 ms: 1/2 instead of 1; 30 ms: 1/5; 20 ms: 1/7;
//!   40 ms: 1/4). Any other base gets the same GAIN either way. The seed's
//!   prose ("equal to 0.5 for base RTTs of 60 ms") reads as the usual
//!   ceiling, its footnote as the draft's.
//! * **An application-limited ramp-up.** A sender that does not fill its
//!   window never reaches ssthresh, and a ramp-up that never ends never
//!   schedules the next slowdown and never reacts to delay (the ramp-up
//!   does not leave on delay, §4.1). The ramp-up therefore also ends after
//!   `2·R + 1` rounds, R = `ceil(log_{1+GAIN}(ssthresh / 2 packets))` being
//!   the rounds a window-limited ramp-up takes; the window stays where it
//!   is (restoring an unused window would allow a burst) and D is the time
//!   spent. The slow start after persistent congestion (not left on delay
//!   either) has the same bound.
//! * **A schedule that would overflow.** The wait `9·D` is capped at the
//!   base-delay history (`base_history · base_bucket`, 10 minutes): a
//!   slowdown is how LEDBAT++ re-measures the base delay, and the history
//!   forgets a minimum after that long. Should `now + wait` still not be
//!   representable, the slowdown is due at once rather than never.
//! * **The initial slowdown** (seed §3: "An initial slow-down is performed
//!   2 RTTs after exiting the initial slow-start") counts rounds of
//!   congestion avoidance, i.e. RTTs at the queue the flow holds then.
//!
//! # Profiles
//!
//! `profile=draft` (default) is -01 as above. `profile=seed` adds the two
//! fixes seed `ledbatpp-experimental-evaluation` proposes (§5.1.3), each
//! also a key of its own; keys given after the profile override it:
//!
//! * `restore=jump`: "LEDBAT++ could restore the rate it was using before
//!   the periodic slow down without using the exponential increase. This
//!   would effectively limit the penalty to 2 RTTs". At the end of the
//!   freeze the window returns to ssthresh at once. So that the slowdowns
//!   keep the draft's frequency (the fix shortens each penalty, it is not
//!   meant to make slowdowns more frequent), D is then the freeze plus the
//!   time a ramp-up would have taken, `R` rounds of the freeze's RTT.
//! * `skip_rtt_after_restore=true`: "not considering the RTTs measured in
//!   the RTT after the exit of the exponential growth". Once the window is
//!   restored (ramp-up reached ssthresh, or the jump) at time `r`, the
//!   samples of packets sent before `r + srtt` are ignored: those sent
//!   before `r` carry the ramp-up's queue, those sent in `[r, r + srtt)` the
//!   queue of the restored window's first burst. Those ACKs neither feed the
//!   delay filters nor move the window (losses still count).

use std::time::Duration;
use std::time::Instant;

use crate::delay;
use crate::delay::DelayConfig;
use crate::delay::DelayEstimator;
use crate::flight::FlightSize;
use crate::pacing;
use crate::params;
use crate::recovery::RecoveryPeriod;
use crate::round;
use crate::round::Rounds;
use crate::window::Checkpoint;
use crate::window::HasWindow;
use crate::window::WindowBounds;
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
/// Initial window, packets (draft -01 §4.1: "LEDBAT++ sender limits the
/// initial window to 2 packets").
pub const INIT_CWND: u64 = 2;
/// Length of the slowdown freeze, in RTTs of time (draft -01 §4.4: 2).
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

/// Parameters of [`LedbatPlusPlus`]. Defaults are draft -01's; fields are
/// set only through [`LedbatPlusPlusConfig::set`], which range-checks every
/// value, so every config is one the per-ACK code can run.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatPlusPlusConfig {
    /// TARGET queuing delay T. Default 60 ms. Key `target`, 1 ms to 1 s.
    target: Duration,
    /// Largest GAIN divisor. Default 16. Key `gain_divisor_max`, 1 to 1024.
    gain_divisor_max: u64,
    /// Constant C of the decrease rule. Default 1. Key `decrease_constant`,
    /// 0.01 to 100.
    decrease_constant: f64,
    /// Slow start ends when q > this · T. Default 0.75. Key `ss_exit`,
    /// 0.01 to 1.
    slow_start_exit: f64,
    /// Minimum window, packets. Default 2. Key `min_cwnd`, 1 to 64.
    min_cwnd: u64,
    /// Initial window, packets (never below `min_cwnd`). Default 2.
    /// Key `init_cwnd`, 1 to 1000.
    init_cwnd: u64,
    /// Whether periodic slowdowns happen at all. Default true. Key `slowdown`.
    slowdown: bool,
    /// Freeze length, RTTs of time. Default 2. Key `slowdown_rtts`, 1 to 16.
    slowdown_rtts: u32,
    /// Rounds from the end of the initial slow start to the initial
    /// slowdown. Default 2. Key `initial_slowdown_rtts`, 1 to 1000.
    initial_slowdown_rtts: u64,
    /// Next slowdown due this many slowdown durations after the last ended.
    /// Default 9. Key `slowdown_interval`, 1 to 1000.
    slowdown_interval: u32,
    /// How the window returns after a freeze. Default slow start.
    /// Key `restore`, `slow_start` or `jump`.
    restore: Restore,
    /// Ignore delay samples for one round trip after the window is restored.
    /// Default false. Key `skip_rtt_after_restore`.
    skip_rtt_after_restore: bool,
    /// Delay filters (keys `current_filter`, `base_history`, `base_bucket`).
    delay: DelayConfig,
}

impl Default for LedbatPlusPlusConfig {
    fn default() -> Self {
        Self {
            target: TARGET,
            gain_divisor_max: GAIN_DIVISOR_MAX,
            decrease_constant: DECREASE_CONSTANT,
            slow_start_exit: SLOW_START_EXIT,
            min_cwnd: MIN_CWND,
            init_cwnd: INIT_CWND,
            slowdown: true,
            slowdown_rtts: SLOWDOWN_RTTS as u32,
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
        "profile",
        "target",
        "gain_divisor_max",
        "decrease_constant",
        "ss_exit",
        "min_cwnd",
        "init_cwnd",
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
            "profile" => match params::one_of(key, value, &["draft", "seed"])? {
                "seed" => {
                    self.restore = Restore::Jump;
                    self.skip_rtt_after_restore = true;
                }
                _ => {
                    self.restore = Restore::SlowStart;
                    self.skip_rtt_after_restore = false;
                }
            },
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
            "init_cwnd" => self.init_cwnd = params::u64_in(key, value, 1, 1000)?,
            "slowdown" => self.slowdown = params::bool_value(key, value)?,
            "slowdown_rtts" => self.slowdown_rtts = params::u64_in(key, value, 1, 16)? as u32,
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

    /// TARGET queuing delay T.
    pub fn target(&self) -> Duration {
        self.target
    }

    /// How the window returns after a freeze.
    pub fn restore(&self) -> Restore {
        self.restore
    }

    /// Whether delay samples are ignored for one round trip after a restore.
    pub fn skip_rtt_after_restore(&self) -> bool {
        self.skip_rtt_after_restore
    }

    /// The largest GAIN divisor.
    pub fn gain_divisor_max(&self) -> u64 {
        self.gain_divisor_max
    }
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
    },
    /// Slow start back to ssthresh after a freeze (§4.4).
    RampUp {
        /// When the slowdown began (D runs from here).
        slowdown_start: Instant,
        /// Round ends left before the ramp-up is deemed application-limited.
        rounds_left: u64,
    },
}

/// When the next periodic slowdown is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Schedule {
    /// None planned: before the initial slow start ends, during a slowdown,
    /// or with `slowdown=false`.
    None,
    /// The initial slowdown, after this many more round ends (§4.4).
    AfterRounds(u64),
    /// A periodic slowdown, at the first ACK in congestion avoidance at or
    /// after this time.
    At(Instant),
}

/// Everything a spurious loss may have to restore.
#[derive(Clone, Copy, Debug)]
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
    /// TARGET in nanoseconds (≥ 1 ms, so never zero).
    target_ns: f64,
    /// Longest wait for the next slowdown: the base-delay history.
    max_slowdown_wait: Duration,
    s: State,
    /// The window when the current round began (W of the §4.3 rule).
    round_cwnd: f64,
    rounds: Rounds,
    delay: DelayEstimator,
    flight: FlightSize,
    /// Smoothed RTT of the latest ACK that carried a sample.
    srtt: Option<Duration>,
    /// GAIN, recomputed when the base delay changes.
    gain: f64,
    gain_base: Option<Duration>,
    saved: Checkpoint<State>,
}

impl LedbatPlusPlus {
    /// A LEDBAT++ controller for `path`, in its initial slow start at
    /// `init_cwnd` packets (2, §4.1; the path's initial window is not used).
    pub fn new(cfg: LedbatPlusPlusConfig, path: PathInfo) -> Self {
        let bounds = WindowBounds::<f64>::new(path.max_datagram_size, cfg.min_cwnd);
        let cwnd = bounds.clamp(cfg.init_cwnd as f64 * bounds.mss);
        let history = cfg
            .delay
            .base_bucket
            .saturating_mul(cfg.delay.base_history as u32);
        Self {
            bounds,
            exit_delay: cfg.target.mul_f64(cfg.slow_start_exit),
            target_ns: delay::nanos(cfg.target),
            max_slowdown_wait: history,
            s: State {
                cwnd,
                ssthresh: f64::INFINITY,
                phase: Phase::InitialSlowStart,
                next_slowdown: Schedule::None,
                recovery: RecoveryPeriod::default(),
                skip_until: None,
            },
            round_cwnd: cwnd,
            rounds: Rounds::default(),
            delay: DelayEstimator::new(&cfg.delay),
            flight: FlightSize::default(),
            srtt: None,
            gain: 1.0 / cfg.gain_divisor_max as f64,
            gain_base: None,
            saved: Checkpoint::default(),
            cfg,
        }
    }

    /// GAIN for a base delay; the smallest GAIN while the base is unknown
    /// or zero.
    fn gain_for(&self, base: Option<Duration>) -> f64 {
        let max = self.cfg.gain_divisor_max;
        let divisor = match base {
            // §4.2, seed Eq. (2): GAIN = 1 / min(16, CEIL(2·T / RTT_b)), and
            // "CEIL(X) is defined as the smallest integer larger than X":
            // floor(X) + 1, so 2T/base = 2 gives 3 (not ceil's 2; module docs).
            Some(b) if !b.is_zero() => {
                ((2 * self.cfg.target.as_nanos()) / b.as_nanos() + 1).min(max as u128) as u64
            }
            _ => max,
        };
        1.0 / divisor as f64
    }

    fn halve(&mut self) {
        self.s.cwnd = (self.s.cwnd / 2.0).max(self.bounds.min);
    }

    /// Leaves the initial slow start: "An initial slow-down is performed 2
    /// RTTs after exiting the initial slow-start" (seed §3, of §4.4).
    fn leave_initial_slow_start(&mut self, now: Instant) {
        self.s.ssthresh = self.s.cwnd;
        self.s.phase = Phase::CongestionAvoidance;
        if self.cfg.slowdown {
            self.s.next_slowdown = Schedule::AfterRounds(self.cfg.initial_slowdown_rtts);
        }
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
    }

    /// Rounds of slow start from the minimum window to ssthresh:
    /// `ceil(log_{1+GAIN}(ssthresh / min_cwnd))` (GAIN ≥ 1/1024, so the
    /// logarithm's base is above 1).
    fn rounds_to_restore(&self) -> u64 {
        let ratio = self.s.ssthresh / self.bounds.min;
        if ratio > 1.0 {
            (ratio.ln() / self.gain.ln_1p()).ceil().min(1e6) as u64
        } else {
            0
        }
    }

    fn start_slowdown(&mut self, now: Instant) {
        // §4.4: ssthresh keeps the window to return to, then "Keep CWND
        // frozen at 2 packets for 2 RTT" (RTT: module docs).
        let rtt = self.srtt.unwrap_or(Duration::ZERO);
        let freeze = rtt.saturating_mul(self.cfg.slowdown_rtts);
        self.s.ssthresh = self.s.cwnd;
        self.s.cwnd = self.bounds.min;
        self.s.phase = Phase::Slowdown {
            start: now,
            until: now.checked_add(freeze).unwrap_or(now),
            rtt,
        };
        self.s.next_slowdown = Schedule::None;
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
    }

    /// The freeze is over: ramp up (§4.4; seed §3: "then performs a
    /// slow-start increase back to the CW value that it was using before the
    /// periodic decrease"), or jump back (`restore=jump`).
    fn end_freeze(&mut self, now: Instant, start: Instant, rtt: Duration) {
        match self.cfg.restore {
            Restore::SlowStart => {
                let full = self.rounds_to_restore();
                self.s.phase = Phase::RampUp {
                    slowdown_start: start,
                    rounds_left: full.saturating_mul(2).saturating_add(1),
                };
                self.rounds.restart(now);
                self.round_cwnd = self.s.cwnd;
            }
            Restore::Jump => {
                self.s.cwnd = self.s.ssthresh.max(self.bounds.min);
                // The time a ramp-up would have taken, in RTTs of the freeze.
                let ramp = rtt.saturating_mul(self.rounds_to_restore().min(u32::MAX as u64) as u32);
                let duration = now.saturating_duration_since(start).saturating_add(ramp);
                self.finish_slowdown(now, duration, true);
            }
        }
    }

    /// The slowdown (freeze and ramp-up) took `duration`: schedules the next
    /// one and returns to congestion avoidance.
    fn finish_slowdown(&mut self, now: Instant, duration: Duration, restored: bool) {
        // §4.4: the next slowdown is 9 slowdown durations later, capped at
        // the base-delay history (module docs).
        let wait = duration
            .saturating_mul(self.cfg.slowdown_interval)
            .min(self.max_slowdown_wait);
        self.s.next_slowdown = Schedule::At(now.checked_add(wait).unwrap_or(now));
        self.s.phase = Phase::CongestionAvoidance;
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
        if restored && self.cfg.skip_rtt_after_restore {
            let rtt = self.srtt.unwrap_or(Duration::ZERO);
            self.s.skip_until = Some(now.checked_add(rtt).unwrap_or(now));
        }
    }

    /// Round-end bookkeeping; returns whether the phase changed.
    fn on_round_end(&mut self, now: Instant) -> bool {
        let mut changed = false;
        match self.s.phase {
            Phase::CongestionAvoidance => match self.s.next_slowdown {
                Schedule::AfterRounds(n) if n > 1 => {
                    self.s.next_slowdown = Schedule::AfterRounds(n - 1)
                }
                Schedule::AfterRounds(_) => {
                    self.start_slowdown(now);
                    changed = true;
                }
                Schedule::At(_) | Schedule::None => (),
            },
            Phase::RampUp {
                slowdown_start,
                rounds_left,
            } => {
                if rounds_left <= 1 {
                    // Application-limited: the window stays (module docs).
                    let duration = now.saturating_duration_since(slowdown_start);
                    self.finish_slowdown(now, duration, false);
                    changed = true;
                } else {
                    self.s.phase = Phase::RampUp {
                        slowdown_start,
                        rounds_left: rounds_left - 1,
                    };
                }
            }
            Phase::SlowStart { rounds_left } => {
                if rounds_left <= 1 {
                    // Application-limited: the window stays (module docs).
                    self.s.phase = Phase::CongestionAvoidance;
                    changed = true;
                } else {
                    self.s.phase = Phase::SlowStart {
                        rounds_left: rounds_left - 1,
                    };
                }
            }
            Phase::InitialSlowStart | Phase::Slowdown { .. } => (),
        }
        self.round_cwnd = self.s.cwnd;
        changed
    }

    fn in_slow_start(&self) -> bool {
        matches!(
            self.s.phase,
            Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. }
        )
    }

    fn state_name(&self) -> &'static str {
        match self.s.phase {
            Phase::Slowdown { .. } => "slowdown",
            Phase::RampUp { .. } => "ramp_up",
            _ if self.s.recovery.in_recovery() => "recovery",
            Phase::InitialSlowStart | Phase::SlowStart { .. } => "slow_start",
            Phase::CongestionAvoidance => "congestion_avoidance",
        }
    }

    /// Sets TARGET and the largest GAIN divisor ([`crate::deadline`] steers
    /// them); clamped to the spec's ranges (1 ms to 1 s, 1 to 1024). GAIN is
    /// recomputed from the current base delay (§4.2) at once.
    pub fn set_target_and_gain_divisor_max(&mut self, target: Duration, gain_divisor_max: u64) {
        let target = target.clamp(Duration::from_millis(1), Duration::from_secs(1));
        self.cfg.target = target;
        self.cfg.gain_divisor_max = gain_divisor_max.clamp(1, 1024);
        self.target_ns = delay::nanos(target);
        self.exit_delay = target.mul_f64(self.cfg.slow_start_exit);
        self.gain = self.gain_for(self.gain_base);
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
        match self.s.phase {
            Phase::Slowdown { start, until, rtt } if now >= until => {
                self.end_freeze(now, start, rtt);
                changed = true;
            }
            Phase::CongestionAvoidance => {
                if let Schedule::At(due) = self.s.next_slowdown {
                    if now >= due {
                        self.start_slowdown(now);
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
            && self.flight.at_ack(ack.bytes_in_flight).saturating_mul(2) >= self.s.cwnd as u64;
        let q = self.delay.queuing();
        match self.s.phase {
            Phase::Slowdown { .. } => (),
            // §4.1: "Exit slow start on excessive delay SHOULD be applied
            // only during the initial slow start", the exit being at a
            // queuing delay above 3/4 of TARGET.
            Phase::InitialSlowStart if q > self.exit_delay => self.leave_initial_slow_start(now),
            Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. } => {
                if may_grow {
                    // §4.1: slow start adds GAIN per acknowledged byte.
                    self.s.cwnd = (self.s.cwnd + self.gain * bytes).min(MAX_WINDOW_BYTES as f64);
                    if self.s.cwnd >= self.s.ssthresh {
                        // ssthresh may predate an MTU increase.
                        self.s.cwnd = self.s.ssthresh.max(self.bounds.min);
                        match self.s.phase {
                            Phase::RampUp { slowdown_start, .. } => {
                                let duration = now.saturating_duration_since(slowdown_start);
                                self.finish_slowdown(now, duration, true);
                            }
                            _ => self.s.phase = Phase::CongestionAvoidance,
                        }
                    }
                }
            }
            Phase::CongestionAvoidance => {
                if skipping {
                    return;
                }
                // §4.3, seed Eqs. (3) and (4): per RTT, CW += GAIN if q < T,
                // CW += max(−CW/2, GAIN − C·CW·(q/T − 1)) if q > T (in MSS),
                // spread over the round's ACKs.
                let w = self.round_cwnd.max(self.bounds.min);
                let mut change = self.gain * self.bounds.mss * bytes / w;
                let t = self.target_ns;
                let q = delay::nanos(q);
                if q > t {
                    change -= self.cfg.decrease_constant * (q / t - 1.0) * bytes;
                    change = change.max(-bytes / 2.0);
                }
                if !may_grow {
                    change = change.min(0.0);
                }
                self.s.cwnd = self.bounds.clamp(self.s.cwnd + change);
            }
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        if !self.s.recovery.on_loss(loss) {
            return;
        }
        match self.s.phase {
            Phase::Slowdown { .. } => {
                // The window is already at the minimum: lower the ramp-up's goal.
                self.s.ssthresh = (self.s.ssthresh / 2.0).max(self.bounds.min);
            }
            Phase::InitialSlowStart => {
                self.halve();
                self.leave_initial_slow_start(loss.now);
            }
            Phase::RampUp { slowdown_start, .. } => {
                // A loss ends the ramp-up (RFC 5681's halving applies).
                self.halve();
                self.s.ssthresh = self.s.cwnd;
                let duration = loss.now.saturating_duration_since(slowdown_start);
                self.finish_slowdown(loss.now, duration, false);
            }
            Phase::SlowStart { .. } | Phase::CongestionAvoidance => {
                self.halve();
                self.s.ssthresh = self.s.cwnd;
                self.s.phase = Phase::CongestionAvoidance;
            }
        }
    }

    fn on_persistent_congestion(&mut self, _now: Instant) {
        self.s.cwnd = self.bounds.min;
        if self.s.phase == Phase::CongestionAvoidance && self.s.ssthresh > self.bounds.min {
            // Slow start back towards ssthresh, not left on delay (§4.1).
            let full = self.rounds_to_restore();
            self.s.phase = Phase::SlowStart {
                rounds_left: full.saturating_mul(2).saturating_add(1),
            };
        }
    }

    fn checkpoint(&mut self) {
        self.saved.save(&self.s);
    }

    fn rollback(&mut self) -> bool {
        self.saved.rollback(&mut self.s, &self.bounds)
    }

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.bounds
            .on_mtu_change(max_datagram_size, &mut self.s.cwnd);
        if let Phase::Slowdown { .. } = self.s.phase {
            // The freeze is at 2 packets of the new size.
            self.s.cwnd = self.bounds.min;
        }
    }

    fn window(&self) -> u64 {
        self.s.cwnd as u64
    }

    /// [`pacing`]: 2 × cwnd/srtt in a slow start (initial, after persistent
    /// congestion, ramp-up) while cwnd < ssthresh/2, else 1.2 × cwnd/srtt.
    fn pacing_rate(&self) -> Option<u64> {
        let slow_start =
            self.in_slow_start() && pacing::in_slow_start(self.s.cwnd, self.s.ssthresh);
        pacing::rate(self.window(), self.srtt, slow_start)
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

    const NS: Duration = Duration::from_nanos(1);

    /// A controller on a path whose own initial window (10) LEDBAT++ ignores.
    fn driver(cfg: LedbatPlusPlusConfig) -> Driver<LedbatPlusPlus> {
        let path = PathInfo {
            max_datagram_size: MSS,
            initial_window_packets: 10,
        };
        Driver::new(LedbatPlusPlus::new(cfg, path))
    }

    fn config(spec: &[(&str, &str)]) -> LedbatPlusPlusConfig {
        let mut cfg = LedbatPlusPlusConfig::default();
        for (k, v) in spec {
            cfg.set(k, v).unwrap();
        }
        cfg
    }

    fn state(d: &Driver<LedbatPlusPlus>) -> &'static str {
        d.cc.state(d.now)
    }

    #[test]
    fn the_initial_window_is_two_packets() {
        let d = driver(config(&[]));
        assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS));
        assert_eq!(driver(config(&[("init_cwnd", "10")])).cc.window(), 12_000);
        // Never below the minimum window.
        let d = driver(config(&[("min_cwnd", "4")]));
        assert_eq!(d.cc.window(), 4 * MSS);
    }

    #[test]
    fn gain_uses_the_smallest_integer_larger_than_2t_over_base() {
        let d = driver(config(&[]));
        assert_eq!(d.cc.snapshot().gain, Some(1.0 / 16.0), "no base yet");
        // GAIN = 1 / min(16, CEIL(2·60 ms / base)), CEIL(X) > X.
        let cases = [
            (ms(5), 16.0),                       // CEIL(24) = 25, capped
            (Duration::from_micros(7500), 16.0), // CEIL(16) = 17, capped
            (ms(8), 16.0),                       // CEIL(15) = 16
            (Duration::from_micros(8500), 15.0), // CEIL(14.1) = 15
            (ms(30), 5.0),                       // CEIL(4) = 5
            (ms(35), 4.0),                       // CEIL(3.43) = 4
            (ms(40), 4.0),                       // CEIL(3) = 4
            (ms(60), 3.0),                       // CEIL(2) = 3
            (ms(100), 2.0),                      // CEIL(1.2) = 2
            (ms(120), 2.0),                      // CEIL(1) = 2
            (ms(200), 1.0),                      // CEIL(0.6) = 1
        ];
        for (base, divisor) in cases {
            let mut d = driver(config(&[]));
            d.ack_old(base, MSS, base);
            assert_eq!(d.cc.snapshot().gain, Some(1.0 / divisor), "base {base:?}");
        }
    }

    #[test]
    fn initial_slow_start_adds_gain_per_byte_and_exits_above_three_quarters_of_target() {
        // Base 35 ms: GAIN 1/4, each 1200-byte ACK adds 300 bytes.
        let mut d = driver(config(&[("init_cwnd", "10")]));
        d.ack_old(ms(1), MSS, ms(35));
        assert_eq!(d.cc.window(), 12_000 + 300);
        // q = 45 ms = 3/4·T exactly: still slow start (the rule is q > 3/4·T).
        for _ in 0..4 {
            d.ack_old(ms(1), MSS, ms(80));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(45)));
        assert_eq!(state(&d), "slow_start");
        assert_eq!(d.cc.window(), 12_000 + 5 * 300);
        // 81 ms needs four samples to pass the min-of-4 filter; the fourth
        // ends slow start and does not grow the window.
        for _ in 0..3 {
            d.ack_old(ms(1), MSS, ms(81));
            assert_eq!(state(&d), "slow_start");
        }
        d.ack_old(ms(1), MSS, ms(81));
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 12_000 + 8 * 300);
        assert_eq!(d.cc.snapshot().ssthresh, Some(14_400));
    }

    /// Current filter of one sample; 39 packets and base 35 ms (GAIN 1/4),
    /// one ACK of 4 packets (+1200), then q = 90 ms = 1.5·T ends slow start
    /// at exactly 48000 bytes.
    fn in_congestion_avoidance_at_48000(q_sample: Duration) -> Driver<LedbatPlusPlus> {
        let mut d = driver(config(&[("current_filter", "1"), ("init_cwnd", "39")]));
        d.ack_old(ms(1), 4 * MSS, ms(35));
        d.ack_old(ms(1), MSS, q_sample);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
        d
    }

    #[test]
    fn one_round_at_one_and_a_half_target_halves_and_adds_gain() {
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        // One round: ACKs for W = 48000 bytes, q = 1.5·T throughout.
        // W' = W + max(GAIN·MSS − C·W·(q/T − 1), −W/2) = 48000 + 300 − 24000.
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(90)));
        assert_eq!(d.cc.window(), 24_300);

        // Next round, q = 0: W' = W + GAIN·MSS, spread over 20 ACKs.
        let sent = d.last_ack;
        d.advance(ms(1));
        d.ack(sent, 1215, ms(35)); // ends the round: W = 24300
        for _ in 0..19 {
            d.ack_old(ms(1), 1215, ms(35));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(Duration::ZERO));
        assert_eq!(d.cc.window(), 24_300 + 300);
    }

    #[test]
    fn decrease_is_capped_at_half_the_window_per_round() {
        // q = 180 ms = 3·T: GAIN·MSS − W·(3 − 1) is far below −W/2.
        let mut d = in_congestion_avoidance_at_48000(ms(215));
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(215));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(180)));
        assert_eq!(d.cc.window(), 24_000);
    }

    /// Base 240 ms (GAIN 1), current filter of one, 10 packets, one ACK per
    /// round acknowledging the window: slow start doubles per round, then a
    /// 286 ms sample (q = 46 ms > 45 ms) ends it at 48000 bytes. Two rounds
    /// later (+1 MSS in the first) the initial slowdown starts. Returns when.
    fn to_the_initial_slowdown(d: &mut Driver<LedbatPlusPlus>) -> Instant {
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        assert_eq!(d.cc.window(), 24_000);
        d.round(ms(240), 24_000);
        assert_eq!(d.cc.window(), 48_000);
        d.round(ms(286), 48_000);
        assert_eq!((state(d), d.cc.window()), ("congestion_avoidance", 48_000));
        let exit = d.now;
        d.round(ms(240), 48_000);
        assert_eq!((state(d), d.cc.window()), ("congestion_avoidance", 49_200));
        d.round(ms(240), 49_200);
        assert_eq!((state(d), d.cc.window()), ("slowdown", 2 * MSS));
        assert_eq!(d.cc.snapshot().ssthresh, Some(49_200));
        assert_eq!(d.now - exit, ms(480), "2 RTTs after slow start");
        d.now
    }

    fn base_240(extra: &[(&str, &str)]) -> Driver<LedbatPlusPlus> {
        let mut spec = vec![("current_filter", "1"), ("init_cwnd", "10")];
        spec.extend_from_slice(extra);
        driver(config(&spec))
    }

    #[test]
    fn the_freeze_lasts_two_rtts_of_time_not_two_rounds() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        // The smoothed RTT before the slowdown was 240 ms: frozen until
        // slowdown + 480 ms, however many rounds end meanwhile (four here).
        for _ in 0..4 {
            d.advance(ms(100));
            d.ack(d.last_ack, 2 * MSS, ms(240));
            assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        }
        d.advance(ms(80) - NS);
        d.ack(d.last_ack, 2 * MSS, ms(240));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.advance(NS);
        d.ack(d.last_ack, 2 * MSS, ms(240));
        assert_eq!(d.now - slowdown, ms(480));
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
    }

    #[test]
    fn the_ramp_up_is_not_left_on_delay_and_schedules_nine_durations_later() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        // q = 100 ms, above T and far above 3/4·T: slow start (GAIN 1) goes
        // on to ssthresh all the same, and stops there.
        for expect in [4_800, 9_600, 19_200, 38_400] {
            let w = d.cc.window();
            d.round(ms(340), w);
            assert_eq!((state(&d), d.cc.window()), ("ramp_up", expect));
            assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(100)));
        }
        d.round(ms(340), 38_400);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        let end = d.now;
        // D, measured: 480 ms of freeze and 5 rounds of 340 ms.
        let duration = end - slowdown;
        assert_eq!(duration, ms(2180));

        // The next slowdown is due 9 × D after the end of the ramp-up.
        d.ack_old(9 * duration - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        assert!(d.cc.window() > 49_200);
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(d.now - end, ms(19_620));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn a_loss_ends_the_ramp_up_and_d_is_the_time_spent() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 4_800));
        d.advance(ms(20));
        d.loss(d.now - ms(10));
        let end = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 2_400));
        assert_eq!(d.cc.snapshot().ssthresh, Some(2_400));
        assert_eq!(end - slowdown, ms(740));
        // Recovery ends with an ACK of a packet sent after it began.
        d.advance(ms(240));
        d.ack(end + NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(9 * ms(740) - ms(240) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn an_application_limited_ramp_up_ends_after_twice_the_rounds_of_a_full_one() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!(state(&d), "ramp_up");
        // A full ramp-up takes R = ceil(log2(49200 / 2400)) = 5 rounds. With
        // less than half the window in flight the window cannot grow; the
        // ramp-up ends at the end of round 2·R + 1 = 11, the window as is.
        let limited = |d: &mut Driver<LedbatPlusPlus>| {
            let sent = d.last_ack;
            d.advance(ms(240));
            d.ack_full(sent, 1000, ms(240), Duration::ZERO, true, Some(1000));
        };
        for _ in 0..10 {
            limited(&mut d);
            assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        }
        limited(&mut d);
        assert_eq!(
            (state(&d), d.cc.window()),
            ("congestion_avoidance", 2 * MSS)
        );
        let end = d.now;
        assert_eq!(end - slowdown, ms(480 + 11 * 240));
        d.ack_old(9 * ms(3120) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn restore_jump_returns_to_the_window_after_the_freeze() {
        let mut d = base_240(&[("restore", "jump")]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        let end = d.now;
        assert_eq!(end - slowdown, ms(480));
        // Scheduled as if the ramp-up had taken ceil(log2(49200/2400)) = 5
        // rounds of the freeze's 240 ms: D = 480 + 1200 ms, next 9·D later.
        d.ack_old(ms(15_120) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn the_wait_for_the_next_slowdown_is_capped_at_the_base_history() {
        // History of one 1 s bucket: 9·D = 15.12 s is capped at 1 s.
        let mut d = base_240(&[
            ("restore", "jump"),
            ("base_bucket", "1s"),
            ("base_history", "1"),
        ]);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        d.ack_old(ms(1000) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    /// A jump restore at `r` with srtt 240 ms, then ACKs with q = 180 ms:
    /// for packets sent before `r`, for one sent at `r + 240 ms − 1 ns`, then
    /// for one sent at `r + 240 ms`. Returns the window and current delay
    /// after each group.
    fn samples_after_restore(spec: &[(&str, &str)]) -> [(u64, Option<Duration>); 3] {
        let mut d = base_240(spec);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        let restored = d.now;
        assert_eq!(d.cc.window(), 49_200);
        let snap = |d: &Driver<LedbatPlusPlus>| (d.cc.window(), d.cc.snapshot().current_delay);
        for _ in 0..10 {
            d.ack_old(ms(1), MSS, ms(420));
        }
        let before = snap(&d);
        d.advance(ms(250));
        d.ack(restored + ms(240) - NS, MSS, ms(420));
        let inside = snap(&d);
        d.advance(ms(1));
        d.ack(restored + ms(240), MSS, ms(420));
        [before, inside, snap(&d)]
    }

    #[test]
    fn skip_rtt_after_restore_ignores_the_round_trip_after_the_restore() {
        // Without the option, q = 180 ms: each 1200-byte ACK removes
        // max(1200·1200/49200 − 2·1200, −600) = −600 bytes.
        let [before, inside, after] = samples_after_restore(&[("restore", "jump")]);
        assert_eq!(before, (49_200 - 10 * 600, Some(ms(420))));
        assert_eq!(inside.0, 49_200 - 11 * 600);
        assert_eq!(after.0, 49_200 - 12 * 600);
        // With it, the samples of packets sent before restore + srtt are
        // ignored (the window does not move either); the first packet sent
        // at restore + srtt counts.
        for spec in [
            &[("restore", "jump"), ("skip_rtt_after_restore", "true")][..],
            &[("profile", "seed")][..],
        ] {
            let [before, inside, after] = samples_after_restore(spec);
            assert_eq!(before, (49_200, Some(ms(240))), "{spec:?}");
            assert_eq!(inside, (49_200, Some(ms(240))), "{spec:?}");
            assert_eq!(after, (49_200 - 600, Some(ms(420))), "{spec:?}");
        }
    }

    #[test]
    fn loss_halves_once_per_recovery_period() {
        let mut d = in_congestion_avoidance_at_48000(ms(125));
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
            d.ack_old(ms(1), MSS, ms(35));
        }
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        // An ACK of a packet sent after recovery began ends it.
        d.advance(ms(1));
        d.ack(recovery + ms(1), MSS, ms(35));
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 24_000 + 300 * MSS / 24_000);
        // A later loss halves again, down to the 2-packet floor.
        for _ in 0..10 {
            d.advance(ms(1));
            let sent = d.now - NS;
            d.loss(sent);
        }
        assert_eq!(d.cc.window(), 2 * MSS);
    }

    #[test]
    fn loss_in_slow_start_ends_it_and_schedules_the_initial_slowdown() {
        let mut d = base_240(&[]);
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        d.round(ms(240), 24_000);
        assert_eq!(d.cc.window(), 48_000);
        d.advance(ms(10));
        d.loss(d.now - ms(5));
        let loss = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        assert_eq!(d.cc.snapshot().ssthresh, Some(24_000));
        d.advance(ms(230));
        // First round after the loss (the packet was sent after it began).
        d.ack(loss + NS, 24_000, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.round(ms(240), 24_000); // second: slowdown
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn a_delayed_ack_does_not_read_as_queuing_delay() {
        // 50 ms path; every ACK but the first held 25 ms by the peer.
        let run = |reported: Duration| {
            // Slow start exit at 22.5 ms; GAIN 1/CEIL(1.2) = 1/2.
            let mut d = driver(config(&[("target", "30ms"), ("init_cwnd", "10")]));
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
        assert_eq!(snap.cwnd, 12_000 + 21 * 600);
        // The same RTTs without the ACK delay: 25 ms of queue, slow start ends.
        let (snap, st) = run(Duration::ZERO);
        assert_eq!(snap.queuing_delay, Some(ms(25)));
        assert_eq!(st, "congestion_avoidance");
    }

    #[test]
    fn persistent_congestion_slow_starts_without_the_delay_exit_and_rollback_restores() {
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.checkpoint();
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), 2 * MSS);
        assert!(d.cc.rollback());
        assert_eq!(d.cc.window(), 48_000);
        assert_eq!(state(&d), "congestion_avoidance");
        assert!(!d.cc.rollback(), "one checkpoint, one rollback");
        // Persistent congestion in congestion avoidance: slow start back to
        // ssthresh (48000), and q = 90 ms does not end it.
        d.cc.on_persistent_congestion(d.now);
        assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS));
        d.ack_old(ms(1), MSS, ms(125));
        assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS + 300));
        // Application-limited, it does not stay there: R =
        // ceil(log_{5/4}(48000 / 2400)) = 14 rounds, so round 2·R + 1 = 29
        // ends it at the window it has.
        let limited = |d: &mut Driver<LedbatPlusPlus>| {
            let sent = d.last_ack;
            d.advance(ms(35));
            d.ack_full(sent, 100, ms(35), Duration::ZERO, true, Some(100));
        };
        for _ in 0..28 {
            limited(&mut d);
            assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS + 300));
        }
        limited(&mut d);
        assert_eq!(
            (state(&d), d.cc.window()),
            ("congestion_avoidance", 2 * MSS + 300)
        );
    }

    #[test]
    fn slowdowns_can_be_turned_off() {
        let mut d = base_240(&[("slowdown", "false")]);
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        d.round(ms(240), 24_000);
        d.round(ms(286), 48_000);
        for _ in 0..10 {
            let w = d.cc.window();
            d.round(ms(240), w);
            assert_eq!(state(&d), "congestion_avoidance");
        }
    }

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
    fn profiles_set_the_seed_fixes_and_later_keys_override() {
        let draft = config(&[]);
        assert_eq!(draft.restore(), Restore::SlowStart);
        assert!(!draft.skip_rtt_after_restore());
        assert_eq!(config(&[("profile", "draft")]), draft);
        let seed = config(&[("profile", "seed")]);
        assert_eq!(seed.restore(), Restore::Jump);
        assert!(seed.skip_rtt_after_restore());
        assert_eq!(
            seed,
            config(&[("restore", "jump"), ("skip_rtt_after_restore", "true")])
        );
        let mixed = config(&[("profile", "seed"), ("restore", "slow_start")]);
        assert_eq!(mixed.restore(), Restore::SlowStart);
        assert!(mixed.skip_rtt_after_restore());
        assert_eq!(
            config(&[("skip_rtt_after_restore", "true"), ("profile", "draft")]),
            draft,
            "a profile resets both of its keys"
        );
    }

    #[test]
    fn spec_keys_are_checked() {
        let mut cfg = LedbatPlusPlusConfig::default();
        cfg.set("target", "25ms").unwrap();
        assert_eq!(cfg.target(), ms(25));
        let err = |cfg: &mut LedbatPlusPlusConfig, k: &str, v: &str| {
            cfg.set(k, v).unwrap_err().to_string()
        };
        assert_eq!(
            err(&mut cfg, "target", "0ms"),
            "bad value '0ms' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms to 1s"
        );
        assert_eq!(
            err(&mut cfg, "restore", "teleport"),
            "bad value 'teleport' for 'restore': expected one of slow_start, jump"
        );
        assert_eq!(
            err(&mut cfg, "profile", "rfc"),
            "bad value 'rfc' for 'profile': expected one of draft, seed"
        );
        assert_eq!(
            err(&mut cfg, "init_cwnd", "0"),
            "bad value '0' for 'init_cwnd': expected a whole number from 1 to 1000"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_interval", "0"),
            "bad value '0' for 'slowdown_interval': expected a whole number from 1 to 1000"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_rtts", "17"),
            "bad value '17' for 'slowdown_rtts': expected a whole number from 1 to 16"
        );
        assert_eq!(
            err(&mut cfg, "decrease_constant", "NaN"),
            "bad value 'NaN' for 'decrease_constant': expected a number from 0.01 to 100"
        );
        assert!(cfg.set("gain_divisor_max", "0").is_err());
        assert!(cfg.set("ss_exit", "1.5").is_err());
        assert!(cfg.set("ss_exit", "inf").is_err());
        assert!(cfg.set("current_filter", "0").is_err());
        assert!(cfg.set("initial_slowdown_rtts", "0").is_err());
        assert_eq!(cfg, config(&[("target", "25ms")]), "errors change nothing");
        let e = err(&mut cfg, "gain", "1");
        assert!(
            e.starts_with("unknown parameter 'gain' for 'ledbatpp' (allowed: profile, target, "),
            "{e}"
        );
        assert!(e.contains("skip_rtt_after_restore"), "{e}");
    }
}
