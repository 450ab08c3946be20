//! The parameters of LEDBAT++ ([`LedbatPlusPlusConfig`]): draft -01's
//! constants (§4 TARGET, §4.1 the initial window and the slow-start exit,
//! §4.2 GAIN's bound, §4.3 the decrease constant and minimum window, §4.4
//! the slowdown's lengths), every spec key with its range, and the
//! defaults. The `profile` key and the options it sets are in
//! `profiles.rs`.
//!
//! # Few knobs
//!
//! A user chooses a profile, T, the delay signal and the window's floor
//! and start ([`LedbatPlusPlusConfig::KEYS`]; the deadline is the spec's
//! `deadline` key, [`crate::spec`]). Every other key tunes a rule of a
//! profile ([`LedbatPlusPlusConfig::RESEARCH_KEYS`]) and needs
//! `research=true` before it in the spec, as LEDBAT's values beyond RFC
//! 6817's limits do (`ledbat.rs`): `ledbatpp:research=true,profile=full,fq_yield=off`.

use std::time::Duration;

use super::Decrease;
use super::EmptyQueueLoss;
use super::PacingRtt;
use super::Restore;
use super::EMPTY_QUEUE;
use super::FILL_QUIET;
use super::RANDOM_LOSS_MAX;
use super::SLOWDOWN_PERIOD_MAX;
use crate::delay::DelayConfig;
use crate::params;
use crate::ParamError;

/// TARGET queuing delay T: 60 ms (draft -01 §4.5: "LEDBAT++ default delay
/// target of 60ms is different from the 100ms value recommended in
/// \[RFC6817\]."; seed §3).
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
/// The window a slowdown freezes at, packets (draft -01 §4.4: "Keep CWND
/// frozen at 2 packets for 2 RTT"), or the minimum window if larger.
pub const FREEZE_CWND: u64 = 2;
/// The fraction of the window a loss leaves, dimensionless: "LEDBAT++ reacts
/// by reducing the CW to half of its value when a loss is detected" (seed
/// §3). [`crate::deadline`]'s top level uses CUBIC's β instead.
pub const HALVE: f64 = 0.5;
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

/// The lowest T `target_fraction` sets (`profiles.rs`): alone at 10 ms
/// base RTT, 20 Mbit/s, a T of 1.5 ms (4 packets' worth at most) kept 0.920
/// of the link's goodput, 2.5 ms 0.990.
pub const TARGET_MIN: Duration = Duration::from_micros(2500);

/// Parameters of [`LedbatPlusPlus`](super::LedbatPlusPlus). Defaults are draft -01's; fields are
/// set only through [`LedbatPlusPlusConfig::set`], which range-checks every
/// value, so every config is one the per-ACK code can run.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatPlusPlusConfig {
    /// Whether the tuning keys ([`Self::RESEARCH_KEYS`]) are open. Default
    /// false. Key `research`; it must come before them.
    pub(super) research: bool,
    /// TARGET queuing delay T. Default 60 ms. Key `target`, 1 ms to 1 s.
    pub(super) target: Duration,
    /// Largest GAIN divisor. Default 16. Key `gain_divisor_max`, 1 to 1024.
    pub(super) gain_divisor_max: u64,
    /// Constant C of the decrease rule. Default 1. Key `decrease_constant`,
    /// 0.01 to 100.
    pub(super) decrease_constant: f64,
    /// Slow start ends when q > this · T. Default 0.75. Key `ss_exit`,
    /// 0.01 to 1.
    pub(super) slow_start_exit: f64,
    /// Minimum window, packets. Default 2. Key `min_cwnd`, 1 to 64.
    pub(super) min_cwnd: u64,
    /// Initial window, packets (never below `min_cwnd`). Default 2.
    /// Key `init_cwnd`, 1 to 1000.
    pub(super) init_cwnd: u64,
    /// Whether periodic slowdowns happen at all. Default true. Key `slowdown`.
    pub(super) slowdown: bool,
    /// Freeze length, RTTs of time. Default 2. Key `slowdown_rtts`, 1 to 16.
    pub(super) slowdown_rtts: u32,
    /// Rounds from the end of the initial slow start to the initial
    /// slowdown. Default 2. Key `initial_slowdown_rtts`, 1 to 1000.
    pub(super) initial_slowdown_rtts: u64,
    /// Next slowdown due this many slowdown durations after the last ended.
    /// Default 9. Key `slowdown_interval`, 1 to 1000.
    pub(super) slowdown_interval: u32,
    /// How the window returns after a freeze. Default slow start.
    /// Key `restore`, `slow_start` or `jump`.
    pub(super) restore: Restore,
    /// Ignore delay samples for one round trip after the window is restored.
    /// Default false. Key `skip_rtt_after_restore`.
    pub(super) skip_rtt_after_restore: bool,
    /// A queuing delay at most this is an empty queue (`restore=guarded`,
    /// `gentle_freeze`, `loss_on_empty_queue`). Default 15 ms (T/4). Stated
    /// for the draft's T of 60 ms: it scales with the T in force (`target`,
    /// `target_fraction`). Key `empty_queue`, 0 to 1 s. In congestion
    /// avoidance (`fill_empty_queue`) a queue above T − `target_margin` is
    /// near T even when it is at most this (`QueueBand`).
    pub(super) empty_queue: Duration,
    /// Fraction of time a periodic slowdown may take: when set, the next
    /// slowdown starts `D / duty` after the last one started (clamped to
    /// the period bounds) instead of 9·D after it ended. Default unset.
    /// Key `slowdown_duty`, 0.001 to 0.5.
    pub(super) slowdown_duty: Option<f64>,
    /// Shortest period between slowdown starts with `slowdown_duty`.
    /// Default 0. Key `slowdown_period_min`, 0 to 10 min.
    pub(super) slowdown_period_min: Duration,
    /// Longest period between slowdown starts with `slowdown_duty` (the
    /// minimum wins if larger). Default 10 min. Key `slowdown_period_max`,
    /// 1 s to 10 min.
    pub(super) slowdown_period_max: Duration,
    /// A periodic freeze holds half the window, not 2 packets, when the
    /// previous freeze measured an empty queue. Default false.
    /// Key `gentle_freeze`.
    pub(super) gentle_freeze: bool,
    /// Two freezes in a row that read the same queue, above T (its round
    /// trip above 2·T) and at most the base delay, read a longer path: the
    /// base delay is raised to it. A deliberate departure from the base
    /// history of RFC 6817 §2.4.2 and §3.4.1 (the minimum over ten
    /// one-minute buckets, [`crate::delay::BASE_HISTORY`]), which takes a
    /// longer path for a queue until its old minima age out, ten minutes
    /// later. Default false. Key `follow_route`.
    pub(super) follow_route: bool,
    /// With `target_fraction`, T is this multiple of the delay's noise,
    /// the smallest spread of a round's delay samples over the last 16
    /// rounds of at least 4 samples ([`crate::delay::RoundSpread`]), from
    /// when that is at least twice the fraction's T until it falls below
    /// it, and at most the configured T. A deliberate departure from -01
    /// §4.5's fixed target (quoted at [`TARGET`]): T follows the path's
    /// delay noise as `target_fraction` follows its base delay. Default 0
    /// (off). Key `jitter_allowance`, 0 to 10.
    pub(super) jitter_allowance: f64,
    /// In congestion avoidance with an empty queue, grow by one byte per
    /// acknowledged byte instead of GAIN·MSS per round, paced as a slow start.
    /// Default false. Key `fill_empty_queue`.
    pub(super) fill_empty_queue: bool,
    /// `fill_empty_queue` waits this long after any loss: an empty queue
    /// with losses is a shallow buffer shared with a loss-based flow, not an
    /// idle link. Default 2 s. Key `fill_quiet`, 0 to 10 min.
    pub(super) fill_quiet: Duration,
    /// The decrease rule above T. Default draft. Key `decrease`, `draft` or
    /// `excess_queue`.
    pub(super) decrease: Decrease,
    /// What a loss with an empty queue does. Default halve.
    /// Key `loss_on_empty_queue`, `halve` or `ignore`.
    pub(super) loss_on_empty_queue: EmptyQueueLoss,
    /// With `loss_on_empty_queue=ignore`, the losses on an empty queue
    /// taken for random loss in a period of 16 smoothed RTTs: at most this
    /// share of the period's 16 windows (at least one packet); past it they
    /// count as congestion. Default 0.05. Key `random_loss_max`, 0 to 1.
    pub(super) random_loss_max: f64,
    /// `fill_empty_queue` counts an empty queue only on packets sent while
    /// at least 4/5 of the window was in flight. Default false.
    /// Key `fill_window_limited`.
    pub(super) fill_window_limited: bool,
    /// The decrease applies above T minus this (at most T). Default 0.
    /// Stated for the draft's T of 60 ms, as `empty_queue`. Key
    /// `target_margin`, 0 to 1 s.
    pub(super) target_margin: Duration,
    /// The round trip the pacing rate spreads the window over. Default
    /// the smoothed RTT. Key `pacing_rtt`, `smoothed` or `current`.
    pub(super) pacing_rtt: PacingRtt,
    /// TARGET is at most this fraction of the base round trip (but not
    /// below `target_min`), and the delays measured against it
    /// (`empty_queue`, `target_margin`) scale with it. Default unset (T as given). Key `target_fraction`, 0.05 to 10.
    pub(super) target_fraction: Option<f64>,
    /// The lowest T `target_fraction` sets. Default 2.5 ms
    /// ([`TARGET_MIN`]). Key `target_min`, 1 ms to 1 s.
    pub(super) target_min: Duration,
    /// Congestion avoidance adds GAIN only while the queuing delay is at
    /// most this multiple of T; above it the decrease alone applies.
    /// Default unset (GAIN at any queue, as the draft). Key
    /// `gain_max_queue`, 1 to 100 or `off`.
    pub(super) gain_max_queue: Option<f64>,
    /// Above this multiple of T the decrease is the draft's, (q − T)/T of
    /// the window a round (at most half of it), whatever `decrease` says:
    /// a queue that far above T is another flow's burst, not the balance
    /// of LBE flows. Not in a recovery period (its loss already halved
    /// the window). Default unset. Key `sharp_decrease`, 1 to 100 or
    /// `off`.
    pub(super) sharp_decrease: Option<f64>,
    /// Congestion avoidance adds no GAIN for this long after a loss that
    /// counted as congestion. Default 0 (the draft). Key `gain_quiet`, 0 to
    /// 10 min.
    pub(super) gain_quiet: Duration,
    /// Yield by rate behind a flow queue: after a freeze that read an
    /// empty queue, a round with a queue delivering less than this fraction
    /// of the largest such round, together with a loss of a packet sent
    /// since, cuts the window to a quarter of what that round carried
    /// until the next freeze (`flow_queue.rs`). Default unset (the draft).
    /// Key `fq_yield`, 0.05 to 1 or `off`.
    pub(super) fq_yield: Option<f64>,
    /// Delay filters (keys `current_filter`, `base_history`, `base_bucket`).
    pub(super) delay: DelayConfig,
}

impl Default for LedbatPlusPlusConfig {
    fn default() -> Self {
        Self {
            research: false,
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
            empty_queue: EMPTY_QUEUE,
            slowdown_duty: None,
            slowdown_period_min: Duration::ZERO,
            slowdown_period_max: SLOWDOWN_PERIOD_MAX,
            gentle_freeze: false,
            follow_route: false,
            jitter_allowance: 0.0,
            loss_on_empty_queue: EmptyQueueLoss::Halve,
            random_loss_max: RANDOM_LOSS_MAX,
            decrease: Decrease::Draft,
            fill_empty_queue: false,
            fill_quiet: FILL_QUIET,
            target_margin: Duration::ZERO,
            fill_window_limited: false,
            pacing_rtt: PacingRtt::Smoothed,
            target_fraction: None,
            target_min: TARGET_MIN,
            gain_max_queue: None,
            sharp_decrease: None,
            gain_quiet: Duration::ZERO,
            fq_yield: None,
            delay: DelayConfig::default(),
        }
    }
}

impl LedbatPlusPlusConfig {
    /// The keys a user chooses: [`Self::set`] takes them in any spec.
    pub const KEYS: &'static [&'static str] = &[
        "research",
        "profile",
        "target",
        "delay",
        "min_cwnd",
        "init_cwnd",
    ];

    /// The keys that tune a rule: [`Self::set`] takes them after
    /// `research=true` only.
    pub const RESEARCH_KEYS: &'static [&'static str] = &[
        "gain_divisor_max",
        "decrease_constant",
        "ss_exit",
        "slowdown",
        "slowdown_rtts",
        "initial_slowdown_rtts",
        "slowdown_interval",
        "restore",
        "skip_rtt_after_restore",
        "empty_queue",
        "slowdown_duty",
        "slowdown_period_min",
        "slowdown_period_max",
        "gentle_freeze",
        "follow_route",
        "jitter_allowance",
        "loss_on_empty_queue",
        "random_loss_max",
        "decrease",
        "fill_empty_queue",
        "fill_quiet",
        "target_margin",
        "pacing_rtt",
        "fill_window_limited",
        "target_fraction",
        "target_min",
        "gain_max_queue",
        "sharp_decrease",
        "gain_quiet",
        "fq_yield",
        "current_filter",
        "base_history",
        "base_bucket",
    ];

    /// Sets one `key=value` parameter of a `--cc` spec, range-checked; the
    /// error names the key and what it allows.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        if key == "research" {
            self.research = params::bool_value(key, value)?;
            return Ok(());
        }
        if !self.research && Self::RESEARCH_KEYS.contains(&key) {
            return Err(params::needs_research("ledbatpp", key));
        }
        if let Some(result) = self.delay.set(key, value) {
            return result;
        }
        match key {
            "profile" => self.set_profile(key, value)?,
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
                self.restore = match params::one_of(key, value, &["slow_start", "jump", "guarded"])?
                {
                    "jump" => Restore::Jump,
                    "guarded" => Restore::Guarded,
                    _ => Restore::SlowStart,
                }
            }
            "skip_rtt_after_restore" => {
                self.skip_rtt_after_restore = params::bool_value(key, value)?
            }
            "empty_queue" => {
                self.empty_queue =
                    params::duration_in(key, value, Duration::ZERO, Duration::from_secs(1))?
            }
            "slowdown_duty" => self.slowdown_duty = Some(params::f64_in(key, value, 0.001, 0.5)?),
            "slowdown_period_min" => {
                self.slowdown_period_min =
                    params::duration_in(key, value, Duration::ZERO, SLOWDOWN_PERIOD_MAX)?
            }
            "slowdown_period_max" => {
                self.slowdown_period_max =
                    params::duration_in(key, value, Duration::from_secs(1), SLOWDOWN_PERIOD_MAX)?
            }
            "gentle_freeze" => self.gentle_freeze = params::bool_value(key, value)?,
            "follow_route" => self.follow_route = params::bool_value(key, value)?,
            "jitter_allowance" => self.jitter_allowance = params::f64_in(key, value, 0.0, 10.0)?,
            "random_loss_max" => self.random_loss_max = params::f64_in(key, value, 0.0, 1.0)?,
            "fill_empty_queue" => self.fill_empty_queue = params::bool_value(key, value)?,
            "fill_quiet" => {
                self.fill_quiet =
                    params::duration_in(key, value, Duration::ZERO, SLOWDOWN_PERIOD_MAX)?
            }
            "target_margin" => {
                self.target_margin =
                    params::duration_in(key, value, Duration::ZERO, Duration::from_secs(1))?
            }
            "fill_window_limited" => self.fill_window_limited = params::bool_value(key, value)?,
            "target_min" => {
                self.target_min = params::duration_in(
                    key,
                    value,
                    Duration::from_millis(1),
                    Duration::from_secs(1),
                )?
            }
            "target_fraction" => {
                self.target_fraction = params::off_or_f64_in(key, value, 0.05, 10.0)?
            }
            "gain_quiet" => {
                self.gain_quiet =
                    params::duration_in(key, value, Duration::ZERO, SLOWDOWN_PERIOD_MAX)?
            }
            "fq_yield" => self.fq_yield = params::off_or_f64_in(key, value, 0.05, 1.0)?,
            "sharp_decrease" => {
                self.sharp_decrease = params::off_or_f64_in(key, value, 1.0, 100.0)?
            }
            "gain_max_queue" => {
                self.gain_max_queue = params::off_or_f64_in(key, value, 1.0, 100.0)?
            }
            "pacing_rtt" => {
                self.pacing_rtt = match params::one_of(key, value, &["smoothed", "current"])? {
                    "current" => PacingRtt::Current,
                    _ => PacingRtt::Smoothed,
                }
            }
            "decrease" => {
                self.decrease = match params::one_of(key, value, &["draft", "excess_queue"])? {
                    "excess_queue" => Decrease::ExcessQueue,
                    _ => Decrease::Draft,
                }
            }
            "loss_on_empty_queue" => {
                self.loss_on_empty_queue = match params::one_of(key, value, &["halve", "ignore"])? {
                    "ignore" => EmptyQueueLoss::Ignore,
                    _ => EmptyQueueLoss::Halve,
                }
            }
            _ => {
                return Err(params::unknown_key_with_research(
                    "ledbatpp",
                    key,
                    Self::KEYS,
                    Self::RESEARCH_KEYS,
                ))
            }
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;

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
    fn spec_keys_are_checked() {
        let mut cfg = LedbatPlusPlusConfig::default();
        cfg.set("research", "true").unwrap();
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
            "bad value 'teleport' for 'restore': expected one of slow_start, jump, guarded"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_duty", "0.6"),
            "bad value '0.6' for 'slowdown_duty': expected a number from 0.001 to 0.5"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_period_max", "0s"),
            "bad value '0s' for 'slowdown_period_max': expected a duration with a unit (e.g. 60ms) from 1s to 600s"
        );
        assert_eq!(
            err(&mut cfg, "loss_on_empty_queue", "retry"),
            "bad value 'retry' for 'loss_on_empty_queue': expected one of halve, ignore"
        );
        assert!(cfg.set("empty_queue", "2s").is_err());
        assert_eq!(
            err(&mut cfg, "target_fraction", "0.01"),
            "bad value '0.01' for 'target_fraction': expected off or a number from 0.05 to 10"
        );
        assert_eq!(
            err(&mut cfg, "gain_max_queue", "0.5"),
            "bad value '0.5' for 'gain_max_queue': expected off or a number from 1 to 100"
        );
        assert_eq!(
            err(&mut cfg, "sharp_decrease", "0"),
            "bad value '0' for 'sharp_decrease': expected off or a number from 1 to 100"
        );
        assert_eq!(
            err(&mut cfg, "gain_quiet", "1h"),
            "bad value '1h' for 'gain_quiet': expected a duration with a unit (e.g. 60ms) from 0ms to 600s"
        );
        assert_eq!(
            err(&mut cfg, "fq_yield", "1.5"),
            "bad value '1.5' for 'fq_yield': expected off or a number from 0.05 to 1"
        );
        cfg.set("target_fraction", "0.15").unwrap();
        assert_eq!(cfg.target_fraction, Some(0.15));
        cfg.set("target_fraction", "off").unwrap();
        assert_eq!(cfg.target_fraction, None);
        assert_eq!(
            err(&mut cfg, "random_loss_max", "1.5"),
            "bad value '1.5' for 'random_loss_max': expected a number from 0 to 1"
        );
        assert!(cfg.set("gentle_freeze", "half").is_err());
        assert_eq!(
            err(&mut cfg, "profile", "rfc"),
            "bad value 'rfc' for 'profile': expected one of draft, seed, full"
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
        assert_eq!(
            err(&mut cfg, "gain", "1"),
            "unknown parameter 'gain' for 'ledbatpp' (allowed: research, profile, target, \
             delay, min_cwnd, init_cwnd; research=true also takes: gain_divisor_max, \
             decrease_constant, ss_exit, slowdown, slowdown_rtts, initial_slowdown_rtts, \
             slowdown_interval, restore, skip_rtt_after_restore, empty_queue, slowdown_duty, \
             slowdown_period_min, slowdown_period_max, gentle_freeze, follow_route, \
             jitter_allowance, \
             loss_on_empty_queue, random_loss_max, decrease, fill_empty_queue, fill_quiet, target_margin, \
             pacing_rtt, fill_window_limited, target_fraction, target_min, gain_max_queue, \
             sharp_decrease, gain_quiet, fq_yield, current_filter, base_history, base_bucket)"
        );
    }

    #[test]
    fn tuning_keys_need_research_first() {
        let set = |spec: &[(&str, &str)]| {
            let mut cfg = LedbatPlusPlusConfig::default();
            for (k, v) in spec {
                cfg.set(k, v).map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(cfg)
        };
        // At most 10 keys without research=true.
        assert!(LedbatPlusPlusConfig::KEYS.len() <= 10);
        for key in LedbatPlusPlusConfig::RESEARCH_KEYS {
            assert!(!LedbatPlusPlusConfig::KEYS.contains(key), "{key}");
        }
        // The user's keys need nothing first.
        let cfg = set(&[
            ("profile", "full"),
            ("target", "25ms"),
            ("delay", "rtt"),
            ("min_cwnd", "4"),
            ("init_cwnd", "10"),
        ])
        .unwrap();
        assert_eq!((cfg.target(), cfg.min_cwnd, cfg.init_cwnd), (ms(25), 4, 10));
        // A tuning key without research=true: a one-line error that says so.
        assert_eq!(
            set(&[("profile", "full"), ("target_fraction", "off")]).unwrap_err(),
            "parameter 'target_fraction' for 'ledbatpp' tunes a rule: it needs research=true \
             before it (e.g. ledbatpp:research=true,target_fraction=...)"
        );
        assert_eq!(
            set(&[("current_filter", "1")]).unwrap_err(),
            "parameter 'current_filter' for 'ledbatpp' tunes a rule: it needs research=true \
             before it (e.g. ledbatpp:research=true,current_filter=...)"
        );
        // After it, too late; with research=false, closed again.
        assert!(set(&[("fq_yield", "off"), ("research", "true")]).is_err());
        assert!(set(&[("research", "false"), ("fq_yield", "off")]).is_err());
        // research=true first: every tuning key works as before.
        let cfg = set(&[
            ("research", "true"),
            ("profile", "full"),
            ("target_fraction", "off"),
            ("fq_yield", "off"),
            ("current_filter", "1"),
        ])
        .unwrap();
        assert_eq!((cfg.target_fraction, cfg.fq_yield), (None, None));
        assert_eq!(cfg.delay.current_filter, 1);
        assert_eq!(
            set(&[("research", "maybe")]).unwrap_err(),
            "bad value 'maybe' for 'research': expected true or false"
        );
    }
}
