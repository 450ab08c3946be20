//! LEDBAT (RFC 6817) on QUIC RTT samples.
//!
//! The RFC's sender (§2.4.2) with one-way delays replaced by the per-ACK
//! delay of [`crate::delay`] (RTT minus the peer's ACK delay). Per ACK:
//!
//! ```text
//! queuing_delay = current_delay - base_delay
//! off_target    = (TARGET - queuing_delay) / TARGET
//! cwnd         += GAIN * off_target * bytes_acked * MSS / cwnd
//! cwnd          = min(cwnd, flightsize + ALLOWED_INCREASE * MSS)
//! cwnd          = max(cwnd, MIN_CWND * MSS)
//! ```
//!
//! with `flightsize` the bytes in flight when the ACK arrived, the packets
//! it acknowledges still counted (the RFC subtracts them after the cap), or
//! the bytes in flight after the latest transmission if more: see
//! `flight.rs` for why a batched event loop needs that. The current delay
//! is the minimum of the last `current_filter` samples no older than the
//! smoothed RTT: "CURRENT_FILTER MUST be limited such that samples in the
//! list are not older than an RTT in the past" ([RFC 6817 §3.4.2](https://www.rfc-editor.org/rfc/rfc6817#section-3.4.2)). The cap is the
//! RFC's: it also lowers the window of a sender that does not use it. Loss (§2.4.2): `cwnd = max(cwnd/2, MIN_CWND·MSS)`, at most once
//! per recovery period (a loss of a packet sent no later than the current
//! recovery period began does not reduce again, [RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)), and the
//! window does not increase during recovery.
//!
//! # Persistent congestion: MIN_CWND, not the RFC's 1 MSS
//!
//! RFC 6817 §2.4.2 on its congestion timeout: "if no ACKs are received
//! within a CTO: # extreme congestion, or significant RTT change. # set cwnd
//! to 1MSS and backoff the congestion timer. cwnd = 1 * MSS". This crate
//! has no timers; QUIC's counterpart of that timeout is persistent
//! congestion, for which [RFC 9002 §7.6.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.6.2) says "When persistent congestion is
//! declared, the sender's congestion window MUST be reduced to the minimum
//! congestion window". So persistent congestion sets `MIN_CWND · MSS` (2
//! packets by default), a deviation from RFC 6817's 1 MSS, for two reasons:
//! the RFC's own per-ACK rule `cwnd = max(cwnd, MIN_CWND * MSS)` lifts a
//! 1-MSS window back to MIN_CWND at the next ACK anyway, and a window of one
//! packet meets QUIC receivers that acknowledge every second ack-eliciting
//! packet ([RFC 9000 §13.2.2](https://www.rfc-editor.org/rfc/rfc9000#section-13.2.2)), whose lone packet is then acknowledged only
//! after the peer's `max_ack_delay`. Every controller of this crate keeps
//! its window at or above its minimum (the `properties` tests check it).
//! `min_cwnd=1` gives the RFC's 1 MSS.
//!
//! # [RFC 6817 §2.5](https://www.rfc-editor.org/rfc/rfc6817#section-2.5)'s limits, and `research=true`
//!
//! "TARGET MUST be 100 milliseconds or less" and "GAIN MUST be set to 1 or
//! less": `target` above 100 ms, `gain` above 1 and `dynamic_gain=true`
//! (whose gains go up to `gain_max`, 64 by default) are refused, the error
//! naming the rule, unless `research=true` comes first in the spec: then
//! `target` goes up to 1 s and `gain` up to 100, for experiments outside the
//! RFC such as the dynamic-gain seed. `decrease_gain` above 1 is within the
//! RFC ("implementations MAY use a higher GAIN for cwnd decrease than for
//! the increase", §2.5).
//!
//! Pacing ([`crate::pacing`]): 2 × cwnd/srtt in slow start
//! (`slow_start=true`) while cwnd < ssthresh/2, else 1.2 × cwnd/srtt.
//!
//! Options:
//!
//! * `flightsize=rtt_max` (a deviation, off by default): the cap compares
//!   the window with the largest flight right after a send over the last
//!   smoothed RTT, not the flight at the ACK. Paced, the flight at an ACK
//!   falls short of the window by more than ALLOWED_INCREASE (the pacer
//!   holds the rest), and the RFC's cap then takes the window down to the
//!   flight: at 100 Mbit/s, 20 ms, LEDBAT carried 0.260 of the link paced
//!   and 0.998 unpaced; with `flightsize=rtt_max` 0.984 paced (table
//!   `links-ledbat-pacing-cap`, docs/links-that-change.md). A sender that
//!   stops sending leaves the span after an RTT, so the cap still holds an
//!   application-limited sender. It reads RFC 6817 §2.5's own account of
//!   the cap, "an ALLOWED_INCREASE of 1 allows and limits the cwnd increase
//!   based on flightsize in the previous RTT", where the default reads
//!   §2.4.2's per-ACK pseudo-code; the default stays until every table with
//!   LEDBAT is measured again with it.
//! * `decrease_gain` (seed `ledbat-optimal-parameters` §II, γ_dcr): GAIN is
//!   multiplied by it when `off_target < 0`, so the window falls faster than
//!   it rises. That paper's best pair is `target=5ms,decrease_gain=10`.
//! * `slow_start=true` (seed `ledbat-ns2-bittorrent-utp` §IV-C, which uses
//!   TCP's slow start): `cwnd += bytes_acked` until the first loss, which
//!   halves the window and ends slow start (ssthresh = the halved window).
//!   The cap then allows `flightsize + max(ALLOWED_INCREASE·MSS, bytes_acked)`.
//! * `dynamic_gain=true` (seed `ledbat-dynamic-gain`, "LEDBAT with dynamic
//!   gain"): GAIN follows the paper's framework instead of being constant.
//!   The paper's gain G0 is in packets per second of queuing-delay error;
//!   the RFC's GAIN is `G0 · TARGET` (packets per round at zero queue).
//!   - start-up phase (until q ≥ T + δ): Eq. 4 solved for the gain,
//!     `G0 = (RTTb·(μ·RTTb − w0)/T + μ·(2·RTTb + T)) / t_stdy`;
//!   - steady state (until q < T − δ): Eq. 12,
//!     `G0 = (Δw_user + 2·(w_max − μ·(RTTb + T))) / (2·(2·τ_user − (RTTb + T)))`,
//!     never above the start-up gain and never above any steady-state gain
//!     computed since steady state was entered (the paper's running minimum);
//!   - RTTb is the base delay, w0 the initial window (packets), w_max the
//!     largest window of the start-up phase (packets), δ = `delta`·T;
//!   - μ, the available bandwidth (packets/s), is the delivery rate of the
//!     last complete round (bytes acknowledged in the round / its length);
//!     the paper assumes a separate estimator (Man et al.), this is the
//!     simplest one that is exact when the bottleneck is saturated;
//!   - gains are recomputed at every round end and on phase changes, and
//!     clamped to [1/16, `gain_max`]; until a round has been measured the
//!     static `gain` is used.

use std::time::Duration;
use std::time::Instant;

use crate::delay;
use crate::delay::DelayConfig;
use crate::delay::DelayEstimator;
use crate::delay::DelaySource;
use crate::flight::FlightSize;
use crate::flight::RecentMaxFlight;
use crate::pacing;
use crate::params;
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
use crate::ParamError;
use crate::PathInfo;
use crate::Snapshot;

/// TARGET: 100 ms, the largest value RFC 6817 §2.5 allows (design notes).
pub const TARGET: Duration = Duration::from_millis(100);
/// GAIN, packets per round at zero queuing delay: 1 (RFC 6817 §2.5, at most 1).
pub const GAIN: f64 = 1.0;
/// ALLOWED_INCREASE, packets: 1 (RFC 6817 §2.5).
pub const ALLOWED_INCREASE: f64 = 1.0;
/// MIN_CWND, packets: 2 (RFC 6817 §2.5).
pub const MIN_CWND: u64 = 2;
/// INIT_CWND, packets: 2 (RFC 6817 §2.5).
pub const INIT_CWND: u64 = 2;
/// Decrease gain γ_dcr, dimensionless: 1, i.e. the RFC (seed
/// `ledbat-optimal-parameters` §II).
pub const DECREASE_GAIN: f64 = 1.0;
/// Dynamic gain: time the start-up phase should take, t_stdy. The paper
/// leaves it to the application ("relatively small" for short sessions);
/// 10 s is this crate's choice.
pub const DG_T_STDY: Duration = Duration::from_secs(10);
/// Dynamic gain: tolerated window variation Δw_user, packets (the paper's
/// evaluation: 0.5).
pub const DG_DW_USER: f64 = 0.5;
/// Dynamic gain: hysteresis δ as a fraction of TARGET (the paper: δ in
/// [0, 0.2·T], 0 in its evaluation).
pub const DG_DELTA: f64 = 0.0;
/// Dynamic gain: largest GAIN, packets per round (this crate's bound; the
/// paper's G0 of 40 to 800 per second at T = 25 ms are GAINs of 1 to 20).
pub const DG_GAIN_MAX: f64 = 64.0;
/// Dynamic gain: smallest GAIN (this crate's bound, LEDBAT++'s 1/16).
pub const DG_GAIN_MIN: f64 = 1.0 / 16.0;

/// Largest TARGET with `research=true`.
pub const RESEARCH_TARGET_MAX: Duration = Duration::from_secs(1);
/// Largest static GAIN with `research=true`.
pub const RESEARCH_GAIN_MAX: f64 = 100.0;

/// Parameters of [`Ledbat`]. Defaults are RFC 6817's; fields are set only
/// through [`LedbatConfig::set`], which range-checks every value and keeps
/// them within RFC 6817 §2.5 unless `research=true` was set first.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatConfig {
    /// Whether values outside RFC 6817 §2.5 are allowed. Default false.
    /// Spec key `research`; it must come before the values it allows.
    research: bool,
    /// TARGET. Default 100 ms ([`TARGET`]). Spec key `target`, 1 ms to
    /// 100 ms (to 1 s with `research=true`).
    target: Duration,
    /// GAIN. Default 1 ([`GAIN`]). Spec key `gain`, 0.01 to 1 (to 100 with
    /// `research=true`).
    gain: f64,
    /// ALLOWED_INCREASE, packets. Default 1 ([`ALLOWED_INCREASE`]).
    /// Spec key `allowed_increase`, 0.1 to 64.
    allowed_increase: f64,
    /// MIN_CWND, packets. Default 2 ([`MIN_CWND`]). Spec key `min_cwnd`, 1 to 64.
    min_cwnd: u64,
    /// INIT_CWND, packets. Default 2 ([`INIT_CWND`]). Spec key `init_cwnd`,
    /// 1 to 1000 (never below `min_cwnd`).
    init_cwnd: u64,
    /// γ_dcr: GAIN is multiplied by this when off_target < 0. Default 1
    /// ([`DECREASE_GAIN`]). Spec key `decrease_gain`, 0.1 to 100.
    decrease_gain: f64,
    /// TCP slow start until the first loss. Default false.
    /// Spec key `slow_start`.
    slow_start: bool,
    /// The dynamic-gain framework. Default false. Spec key `dynamic_gain`;
    /// `true` needs `research=true` first (its gains exceed 1).
    dynamic_gain: bool,
    /// Dynamic gain: t_stdy. Default 10 s ([`DG_T_STDY`]).
    /// Spec key `t_stdy`, 100 ms to 1 h.
    t_stdy: Duration,
    /// Dynamic gain: Δw_user, packets. Default 0.5 ([`DG_DW_USER`]).
    /// Spec key `dw_user`, 0 to 1000.
    dw_user: f64,
    /// Dynamic gain: τ_user; `None` (spec value `auto`, the default) means
    /// base delay + 2·TARGET, the upper end of the paper's suggested range.
    /// Spec key `tau_user`, `auto` or 1 ms to 10 s.
    tau_user: Option<Duration>,
    /// Dynamic gain: δ as a fraction of TARGET. Default 0 ([`DG_DELTA`]).
    /// Spec key `delta`, 0 to 0.2.
    delta: f64,
    /// Dynamic gain: largest GAIN. Default 64 ([`DG_GAIN_MAX`]).
    /// Spec key `gain_max`, 1 to 1000.
    gain_max: f64,
    /// The flight size the cap compares with: the RFC's, at the ACK
    /// (default), or the largest flight after a send over the last smoothed
    /// RTT. Spec key `flightsize`, `at_ack` or `rtt_max`.
    flightsize_rtt_max: bool,
    /// Delay filters (spec keys `current_filter`, `base_history`,
    /// `base_bucket`).
    delay: DelayConfig,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        Self {
            research: false,
            target: TARGET,
            gain: GAIN,
            allowed_increase: ALLOWED_INCREASE,
            min_cwnd: MIN_CWND,
            init_cwnd: INIT_CWND,
            decrease_gain: DECREASE_GAIN,
            slow_start: false,
            dynamic_gain: false,
            t_stdy: DG_T_STDY,
            dw_user: DG_DW_USER,
            tau_user: None,
            delta: DG_DELTA,
            gain_max: DG_GAIN_MAX,
            flightsize_rtt_max: false,
            delay: DelayConfig::default(),
        }
    }
}

impl LedbatConfig {
    /// Every key [`Self::set`] accepts: the `key=value` parameters of a
    /// `--cc` spec for this controller ([`crate::spec`]).
    pub const KEYS: &'static [&'static str] = &[
        "research",
        "target",
        "gain",
        "allowed_increase",
        "min_cwnd",
        "init_cwnd",
        "decrease_gain",
        "slow_start",
        "dynamic_gain",
        "t_stdy",
        "dw_user",
        "tau_user",
        "delta",
        "gain_max",
        "flightsize",
        "current_filter",
        "base_history",
        "base_bucket",
        "delay",
    ];

    /// Sets one `key=value` parameter of a `--cc` spec, range-checked; the
    /// error names the key and what it allows.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        if let Some(result) = self.delay.set(key, value) {
            return result;
        }
        match key {
            "research" => {
                let research = params::bool_value(key, value)?;
                if !research && (self.target > TARGET || self.gain > GAIN || self.dynamic_gain) {
                    return Err(params::bad_value(
                        key,
                        value,
                        "true while target, gain or dynamic_gain is outside RFC 6817 §2.5",
                    ));
                }
                self.research = research;
            }
            "target" => {
                let max = if self.research {
                    RESEARCH_TARGET_MAX
                } else {
                    TARGET
                };
                self.target = params::duration_in(key, value, Duration::from_millis(1), max)
                    .map_err(|e| {
                        self.rfc_rule(e, "\"TARGET MUST be 100 milliseconds or less\"", "up to 1s")
                    })?
            }
            "gain" => {
                let max = if self.research {
                    RESEARCH_GAIN_MAX
                } else {
                    GAIN
                };
                self.gain = params::f64_in(key, value, 0.01, max).map_err(|e| {
                    self.rfc_rule(e, "\"GAIN MUST be set to 1 or less\"", "up to 100")
                })?
            }
            "allowed_increase" => self.allowed_increase = params::f64_in(key, value, 0.1, 64.0)?,
            "min_cwnd" => self.min_cwnd = params::u64_in(key, value, 1, 64)?,
            "init_cwnd" => self.init_cwnd = params::u64_in(key, value, 1, 1000)?,
            "decrease_gain" => self.decrease_gain = params::f64_in(key, value, 0.1, 100.0)?,
            "slow_start" => self.slow_start = params::bool_value(key, value)?,
            "dynamic_gain" => {
                let dynamic = params::bool_value(key, value)?;
                if dynamic && !self.research {
                    return Err(params::bad_value(
                        key,
                        value,
                        "false without research=true before it (dynamic gain uses GAINs up to \
                         gain_max; RFC 6817 §2.5: \"GAIN MUST be set to 1 or less\")",
                    ));
                }
                self.dynamic_gain = dynamic;
            }
            "t_stdy" => {
                self.t_stdy = params::duration_in(
                    key,
                    value,
                    Duration::from_millis(100),
                    Duration::from_secs(3600),
                )?
            }
            "dw_user" => self.dw_user = params::f64_in(key, value, 0.0, 1000.0)?,
            "tau_user" => {
                self.tau_user = match value.trim() {
                    "auto" => None,
                    _ => Some(params::or_word(
                        "auto",
                        params::duration_in(
                            key,
                            value,
                            Duration::from_millis(1),
                            Duration::from_secs(10),
                        ),
                    )?),
                }
            }
            "delta" => self.delta = params::f64_in(key, value, 0.0, 0.2)?,
            "gain_max" => self.gain_max = params::f64_in(key, value, 1.0, 1000.0)?,
            "flightsize" => {
                self.flightsize_rtt_max =
                    params::one_of(key, value, &["at_ack", "rtt_max"])? == "rtt_max"
            }
            _ => return Err(params::unknown_key("ledbat", key, Self::KEYS)),
        }
        Ok(())
    }

    /// Adds RFC 6817 §2.5's `rule` to a range error, and what
    /// `research=true` would allow, unless research is already on.
    fn rfc_rule(&self, e: ParamError, rule: &str, research_allows: &str) -> ParamError {
        match e {
            ParamError::BadValue {
                key,
                value,
                allowed,
            } if !self.research => ParamError::BadValue {
                key,
                value,
                allowed: format!(
                    "{allowed} (RFC 6817 §2.5: {rule}; research=true before it allows {research_allows})"
                ),
            },
            other => other,
        }
    }

    /// TARGET.
    pub fn target(&self) -> Duration {
        self.target
    }

    /// Whether values outside RFC 6817 §2.5 are allowed.
    pub fn research(&self) -> bool {
        self.research
    }
}

/// Everything a spurious loss may have to restore.
#[derive(Clone, Copy, Debug)]
struct State {
    cwnd: f64,
    /// `f64::INFINITY` while in slow start (or when slow start is off and no
    /// loss happened yet).
    ssthresh: f64,
    recovery: RecoveryPeriod,
}

impl HasWindow<f64> for State {
    fn window_mut(&mut self) -> &mut f64 {
        &mut self.cwnd
    }
}

/// State of the dynamic-gain framework.
#[derive(Clone, Debug)]
struct DynamicGain {
    rounds: Rounds,
    round_bytes: f64,
    /// Delivery rate of the last complete round, packets per second.
    rate: Option<f64>,
    steady: bool,
    /// Largest window of the start-up phase, packets.
    w_max: f64,
    /// Running minimum of the steady-state gains.
    steady_min: f64,
    gain: f64,
}

/// The LEDBAT controller (see the module docs).
#[derive(Debug)]
pub struct Ledbat {
    cfg: LedbatConfig,
    bounds: WindowBounds<f64>,
    target_ns: f64,
    s: State,
    saved: Checkpoint<State>,
    delay: DelayEstimator,
    /// Where the delay samples come from (spec key `delay`).
    source: DelaySource,
    dynamic: Option<DynamicGain>,
    flight: FlightSize,
    /// The largest flights after a send (`flightsize=rtt_max` only).
    recent_flight: Option<RecentMaxFlight>,
    /// Smoothed RTT of the latest ACK that carried a sample.
    srtt: Option<Duration>,
}

impl Ledbat {
    /// A LEDBAT controller for `path`, starting at INIT_CWND (the RFC's
    /// initial window, not the path's).
    pub fn new(cfg: LedbatConfig, path: PathInfo) -> Self {
        let bounds = WindowBounds::<f64>::new(path.max_datagram_size, cfg.min_cwnd);
        let mss = bounds.mss;
        let cwnd = bounds.clamp(cfg.init_cwnd as f64 * mss);
        let dynamic = cfg.dynamic_gain.then(|| DynamicGain {
            rounds: Rounds::default(),
            round_bytes: 0.0,
            rate: None,
            steady: false,
            w_max: cwnd / mss,
            steady_min: f64::INFINITY,
            gain: cfg.gain,
        });
        Self {
            bounds,
            target_ns: delay::nanos(cfg.target),
            s: State {
                cwnd,
                ssthresh: f64::INFINITY,
                recovery: RecoveryPeriod::default(),
            },
            saved: Checkpoint::default(),
            delay: DelayEstimator::new(&cfg.delay),
            source: DelaySource::new(cfg.delay.mode),
            flight: FlightSize::default(),
            recent_flight: cfg.flightsize_rtt_max.then(RecentMaxFlight::default),
            dynamic,
            srtt: None,
            cfg,
        }
    }

    /// Eq. 4 of the dynamic-gain paper, as an RFC GAIN.
    fn startup_gain(&self, rate: f64, base: f64) -> f64 {
        let t = self.cfg.target.as_secs_f64();
        let w0 = self.cfg.init_cwnd as f64;
        let g0 = (base * (rate * base - w0) / t + rate * (2.0 * base + t))
            / self.cfg.t_stdy.as_secs_f64();
        self.clamp_gain(g0 * t)
    }

    /// Eq. 12 of the dynamic-gain paper, as an RFC GAIN.
    fn steady_gain(&self, rate: f64, base: f64, w_max: f64) -> f64 {
        let t = self.cfg.target.as_secs_f64();
        let tau = self
            .cfg
            .tau_user
            .map_or(base + 2.0 * t, |d| d.as_secs_f64());
        let den = 2.0 * (2.0 * tau - (base + t));
        if den <= 0.0 {
            return DG_GAIN_MIN;
        }
        let g0 = (self.cfg.dw_user + 2.0 * (w_max - rate * (base + t))) / den;
        self.clamp_gain(g0 * t)
    }

    fn clamp_gain(&self, gain: f64) -> f64 {
        if gain.is_nan() {
            return DG_GAIN_MIN;
        }
        gain.clamp(DG_GAIN_MIN, self.cfg.gain_max.max(DG_GAIN_MIN))
    }

    /// Runs the dynamic-gain framework for one ACK; returns the GAIN to use.
    /// `base_rtt`: [`crate::delay::DelaySource::base_rtt`] (the estimator's
    /// base is not a round trip with a one-way signal).
    fn dynamic_gain(
        &mut self,
        now: Instant,
        largest: Option<Instant>,
        bytes: f64,
        base_rtt: Option<Duration>,
    ) -> f64 {
        let Some(mut dg) = self.dynamic.take() else {
            return self.cfg.gain;
        };
        let base = base_rtt.map(|b| b.as_secs_f64());
        let q = delay::nanos(self.delay.queuing());
        let cwnd_packets = self.s.cwnd / self.bounds.mss;

        if !dg.steady {
            dg.w_max = dg.w_max.max(cwnd_packets);
        }
        dg.round_bytes += bytes;
        let start = dg.rounds.start();
        let round_ended = dg.rounds.on_ack(now, largest);
        match start {
            None => dg.round_bytes = 0.0,
            Some(start) if round_ended => {
                let secs = now.saturating_duration_since(start).as_secs_f64();
                if secs > 0.0 {
                    dg.rate = Some(dg.round_bytes / self.bounds.mss / secs);
                }
                dg.round_bytes = 0.0;
            }
            Some(_) => (),
        }

        let delta = self.cfg.delta * self.target_ns;
        let entered_steady = !dg.steady && q >= self.target_ns + delta;
        let left_steady = dg.steady && q < self.target_ns - delta;
        if left_steady {
            dg.steady = false;
            dg.w_max = cwnd_packets;
        }
        if let (Some(rate), Some(base)) = (dg.rate, base) {
            let startup = self.startup_gain(rate, base);
            if entered_steady {
                dg.steady = true;
                dg.steady_min = startup;
            }
            if dg.steady && (entered_steady || round_ended) {
                dg.steady_min = dg.steady_min.min(self.steady_gain(rate, base, dg.w_max));
                dg.gain = dg.steady_min;
            } else if !dg.steady && (left_steady || round_ended) {
                dg.gain = startup;
            }
        } else if entered_steady {
            dg.steady = true;
            dg.steady_min = dg.gain;
        }
        let gain = dg.gain;
        self.dynamic = Some(dg);
        gain
    }

    fn state_name(&self) -> &'static str {
        if self.s.recovery.in_recovery() {
            "recovery"
        } else if self.cfg.slow_start && self.s.cwnd < self.s.ssthresh {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }
}

impl CongestionController for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64) {
        self.flight.on_packet_sent(bytes, bytes_in_flight);
        if let Some(recent) = &mut self.recent_flight {
            recent.on_packet_sent(now, bytes_in_flight.saturating_add(bytes));
        }
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let now = ack.now;
        let bytes = ack.bytes_acked() as f64;
        let largest = round::largest_sent(ack.acked);

        self.s.recovery.on_ack(largest);
        if ack.rtt.new_sample {
            self.srtt = Some(ack.rtt.smoothed_rtt);
            // RFC 6817 §3.4.2: no sample older than an RTT (the smoothed
            // RTT) in the current-delay filter.
            match self.source.sample(ack) {
                Some(s) => self
                    .delay
                    .on_delay_sample(now, s, Some(ack.rtt.smoothed_rtt)),
                None => self.delay.advance(now),
            }
        } else {
            self.delay.advance(now);
        }
        let base = self.source.base_rtt(self.delay.base(), &ack.rtt);
        let gain = self.dynamic_gain(now, largest, bytes, base);

        let cwnd = self.s.cwnd;
        let allowed = self.cfg.allowed_increase * self.bounds.mss;
        let (grown, headroom) = if self.cfg.slow_start && cwnd < self.s.ssthresh {
            (cwnd + bytes, allowed.max(bytes))
        } else {
            let q = delay::nanos(self.delay.queuing());
            let off_target = (self.target_ns - q) / self.target_ns;
            let gain = if off_target < 0.0 {
                gain * self.cfg.decrease_gain
            } else {
                gain
            };
            (
                cwnd + gain * off_target * bytes * self.bounds.mss / cwnd,
                allowed,
            )
        };
        // RFC 6817 §2.4.2: "max_allowed_cwnd = flightsize + ALLOWED_INCREASE
        // * MSS", "cwnd = min(cwnd, max_allowed_cwnd)"; §2.5: "an
        // ALLOWED_INCREASE of 1 allows and limits the cwnd increase based on
        // flightsize in the previous RTT". The flight at the ACK by default
        // (`flight.rs`); with `flightsize=rtt_max` the largest flight after a
        // send over the last smoothed RTT, §2.5's "previous RTT" (module docs).
        let mut flight = self.flight.at_ack(ack.bytes_in_flight);
        if let (Some(recent), Some(srtt)) = (&mut self.recent_flight, self.srtt) {
            flight = flight.max(recent.max_within(now, srtt));
        }
        let mut next = grown.min(flight as f64 + headroom);
        if self.s.recovery.in_recovery() {
            next = next.min(cwnd);
        }
        self.s.cwnd = self.bounds.clamp(next);
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        if !self.s.recovery.on_loss(loss) {
            return;
        }
        self.s.cwnd = (self.s.cwnd / 2.0).max(self.bounds.min);
        self.s.ssthresh = self.s.cwnd;
    }

    /// MIN_CWND, not RFC 6817's 1 MSS (module docs).
    fn on_persistent_congestion(&mut self, _now: Instant) {
        self.s.cwnd = self.bounds.min;
    }

    checkpoint_hooks!();

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.bounds
            .on_mtu_change(max_datagram_size, &mut self.s.cwnd);
    }

    fn window(&self) -> u64 {
        self.s.cwnd as u64
    }

    fn pacing_rate(&self) -> Option<u64> {
        let slow_start = self.cfg.slow_start && pacing::in_slow_start(self.s.cwnd, self.s.ssthresh);
        pacing::rate(self.window(), self.srtt, slow_start)
    }

    fn state(&self, _now: Instant) -> &'static str {
        self.state_name()
    }

    fn delay_signal(&self) -> Option<crate::delay::Signal> {
        self.source.signal()
    }

    fn snapshot(&self) -> Snapshot {
        let gain = self.dynamic.as_ref().map_or(self.cfg.gain, |d| d.gain);
        self.delay.snapshot(
            self.window(),
            self.s.ssthresh,
            self.cfg.target,
            gain,
            self.source.signal(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::ms;
    use crate::testkit::Driver;
    use crate::testkit::MSS;

    fn driver(spec: &[(&str, &str)]) -> Driver<Ledbat> {
        let cfg = crate::testkit::config(spec, LedbatConfig::set);
        Driver::new(Ledbat::new(cfg, PathInfo::default()))
    }

    /// An ACK of one packet with RTT `rtt` and `in_flight` bytes in flight.
    fn ack(d: &mut Driver<Ledbat>, rtt: u64, in_flight: u64) {
        d.advance(ms(1));
        let sent = d.epoch - ms(1);
        d.ack_full(sent, MSS, ms(rtt), Duration::ZERO, true, Some(in_flight));
    }

    #[test]
    fn the_current_delay_forgets_samples_older_than_an_rtt() {
        // RFC 6817 §3.4.2. Default filter of 4 samples: 50 ms, then 150 ms
        // later a 100 ms sample (smoothed RTT 100 ms). The 50 ms sample is
        // older than an RTT: current delay 100 ms, queuing 50 ms, off_target
        // 1/2, cwnd += 0.5·1200·1200/3000 = 240 (with the 50 ms sample still
        // counted, q = 0 and the window would grow by 480).
        let mut d = driver(&[]);
        ack(&mut d, 50, 2400);
        assert_eq!(d.cc.window(), 3000);
        d.advance(ms(150));
        ack(&mut d, 100, 3000);
        assert_eq!(d.cc.snapshot().current_delay, Some(ms(100)));
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(50)));
        assert_eq!(d.cc.window(), 3240);
    }

    #[test]
    fn per_ack_rule_of_rfc_6817() {
        let mut d = driver(&[("current_filter", "1")]);
        assert_eq!(d.cc.window(), 2 * MSS, "INIT_CWND 2");
        // q = 0, off_target = 1: cwnd += 1200·1200/2400.
        ack(&mut d, 50, 2400);
        assert_eq!(d.cc.window(), 3000);
        // q = 25 ms of a 100 ms target: off_target 0.75, += 0.75·1200·1200/3000.
        ack(&mut d, 75, 3000);
        assert_eq!(d.cc.window(), 3360);
        // q = 200 ms: off_target −1, −= 1200·1200/3360 = 428.57.
        ack(&mut d, 250, 3360);
        assert_eq!(d.cc.window(), 2931);
        assert_eq!(d.cc.state(d.now), "congestion_avoidance");
        // q = 1 s: far off target; the window stops at MIN_CWND.
        ack(&mut d, 1050, 2931);
        assert_eq!(d.cc.window(), 2 * MSS);
        let snap = d.cc.snapshot();
        assert_eq!(snap.base_delay, Some(ms(50)));
        assert_eq!(snap.current_delay, Some(ms(1050)));
        assert_eq!(snap.queuing_delay, Some(ms(1000)));
        assert_eq!(snap.target, Some(ms(100)));
        assert_eq!(snap.gain, Some(1.0));
    }

    #[test]
    fn a_batch_of_acks_does_not_ratchet_the_cap_down() {
        let mut d = driver(&[("current_filter", "1"), ("init_cwnd", "4")]);
        // The sender fills its 4800-byte window, then three ACKs are read
        // back to back: each sees 1200 bytes less in flight, but the
        // flight size is that of the last transmission (4800).
        d.cc.on_packet_sent(d.now, MSS, 3 * MSS);
        // cwnd += 1200·1200/cwnd: 4800 → 5100 → 5382.35 → 5649.89.
        ack(&mut d, 50, 4800);
        assert_eq!(d.cc.window(), 5100);
        ack(&mut d, 50, 3600);
        assert_eq!(d.cc.window(), 5382);
        ack(&mut d, 50, 2400);
        assert_eq!(d.cc.window(), 5649);
        // Were the cap applied to the flight at each ACK, the window would
        // have fallen to 2400 + 1200 at the third.
    }

    #[test]
    fn window_is_capped_at_flightsize_plus_allowed_increase() {
        let mut d = driver(&[("current_filter", "1"), ("init_cwnd", "3")]);
        ack(&mut d, 50, 3600);
        assert_eq!(d.cc.window(), 3600 + 400);
        // Only 1200 bytes in flight: cwnd = min(4000 + 360, 1200 + 1200).
        ack(&mut d, 50, 1200);
        assert_eq!(d.cc.window(), 2400);
        // Nothing in flight: the cap (1200) is below MIN_CWND, which wins.
        ack(&mut d, 50, 0);
        assert_eq!(d.cc.window(), 2400);
        // ALLOWED_INCREASE 2: cap = 1200 + 2400.
        let mut d = driver(&[
            ("current_filter", "1"),
            ("init_cwnd", "3"),
            ("allowed_increase", "2"),
        ]);
        ack(&mut d, 50, 3600);
        ack(&mut d, 50, 1200);
        assert_eq!(d.cc.window(), 3600);
    }

    #[test]
    fn flightsize_rtt_max_caps_at_the_largest_flight_of_the_last_rtt() {
        // A paced sender: its window (12,000 bytes) was full after a send
        // at 0 ms; the pacer held the next send (20 ms) to 8,400 in flight.
        let run = |flightsize: &str| {
            let mut d = driver(&[
                ("current_filter", "1"),
                ("init_cwnd", "10"),
                ("flightsize", flightsize),
            ]);
            d.cc.on_packet_sent(d.now, MSS, 9 * MSS);
            d.advance(ms(20));
            d.cc.on_packet_sent(d.now, MSS, 6 * MSS);
            // 21 ms: q = 0, cwnd += 1200·1200/12000 = 12,120; the RFC's cap
            // is 8,400 + 1,200; over the last RTT (50 ms) the flight
            // reached 12,000, whose cap lets the growth stand.
            ack(&mut d, 50, 8400);
            let after_a_paced_ack = d.cc.window();
            // 82 ms: both sends are more than an RTT old; 3,600 in flight at
            // the ACK, 8,400 after the latest send: the RFC's cap again.
            d.advance(ms(60));
            ack(&mut d, 50, 3600);
            (after_a_paced_ack, d.cc.window())
        };
        assert_eq!(run("at_ack"), (9600, 9600));
        assert_eq!(run("rtt_max"), (12_120, 9600));
        let mut cfg = LedbatConfig::default();
        assert_eq!(
            cfg.set("flightsize", "max").unwrap_err().to_string(),
            "bad value 'max' for 'flightsize': expected one of at_ack, rtt_max"
        );
    }

    #[test]
    fn decrease_gain_multiplies_gain_below_target_only() {
        let run = |decrease_gain: &str| {
            let mut d = driver(&[
                ("target", "5ms"),
                ("decrease_gain", decrease_gain),
                ("current_filter", "1"),
                ("init_cwnd", "20"),
            ]);
            ack(&mut d, 50, 24_000); // off_target 1: +1200·1200/24000
            let first = d.cc.window();
            ack(&mut d, 60, 24_060); // q = 10 ms: off_target −1
            (first, d.cc.window())
        };
        // The increase is not affected by decrease_gain...
        assert_eq!(run("1"), (24_060, 24_000)); // −1440000/24060 = −59.85
                                                // ...the decrease is ten times larger: −14400000/24060 = −598.50.
        assert_eq!(run("10"), (24_060, 23_461));
    }

    #[test]
    fn loss_halves_once_per_recovery_period() {
        let mut d = driver(&[("current_filter", "1"), ("init_cwnd", "20")]);
        ack(&mut d, 50, 24_000);
        assert_eq!(d.cc.window(), 24_060);
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        let recovery = d.now;
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("recovery", 12_030));
        d.loss(recovery);
        assert_eq!(d.cc.window(), 12_030, "sent before recovery began");
        ack(&mut d, 50, 12_030);
        assert_eq!(d.cc.window(), 12_030, "no increase during recovery");
        ack(&mut d, 250, 12_030);
        assert!(d.cc.window() < 12_030, "decreases still apply");
        d.advance(ms(1));
        d.ack(recovery + ms(1), MSS, ms(50));
        assert_eq!(d.cc.state(d.now), "congestion_avoidance");
        for _ in 0..10 {
            d.advance(ms(1));
            d.loss(d.now - Duration::from_nanos(1));
        }
        assert_eq!(d.cc.window(), 2 * MSS);
    }

    #[test]
    fn persistent_congestion_sets_min_cwnd_not_one_mss() {
        // RFC 6817's timeout sets 1 MSS; QUIC's persistent congestion sets
        // the minimum window (RFC 9002 §7.6.2; module docs): 2 packets.
        let mut d = driver(&[("current_filter", "1"), ("init_cwnd", "20")]);
        ack(&mut d, 50, 24_000);
        assert_eq!(d.cc.window(), 24_060);
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), 2 * MSS);
        // With `min_cwnd=1` the same event gives the RFC's 1 MSS.
        let mut d = driver(&[
            ("current_filter", "1"),
            ("min_cwnd", "1"),
            ("init_cwnd", "20"),
        ]);
        ack(&mut d, 50, 24_000);
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), MSS);
    }

    #[test]
    fn optional_slow_start_doubles_until_the_first_loss() {
        let mut d = driver(&[("slow_start", "true"), ("current_filter", "1")]);
        assert_eq!(d.cc.state(d.now), "slow_start");
        for expect in [4800, 9600, 19_200] {
            let w = d.cc.window();
            d.advance(ms(50));
            d.ack_full(d.last_ack, w, ms(50), Duration::ZERO, true, Some(w));
            assert_eq!(d.cc.window(), expect);
        }
        // Queuing above target does not end it: only a loss does.
        d.advance(ms(1));
        d.ack_full(d.last_ack, MSS, ms(250), Duration::ZERO, true, Some(19_200));
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("slow_start", 20_400));
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        assert_eq!(d.cc.window(), 10_200);
        assert_eq!(d.cc.snapshot().ssthresh, Some(10_200));
        d.advance(ms(1));
        d.ack_full(d.now, MSS, ms(50), Duration::ZERO, true, Some(10_200));
        assert_eq!(d.cc.state(d.now), "congestion_avoidance");
        // Congestion avoidance: q = 0, += 1200·1200/10200.
        assert_eq!(d.cc.window(), 10_341);
    }

    #[test]
    fn forgetting_the_base_delay_is_what_makes_latency_drift() {
        // The path's 50 ms is seen once; after that LEDBAT holds the queue
        // at its target, so every later sample is 150 ms.
        let mut d = driver(&[("init_cwnd", "20")]);
        ack(&mut d, 50, 24_000);
        let start = d.now;
        for _ in 0..4 {
            let w = d.cc.window();
            ack(&mut d, 150, w); // the min-of-4 filter fills with 150 ms
        }
        let held = d.cc.window();
        while d.now < start + Duration::from_secs(599) {
            d.advance(Duration::from_secs(1) - ms(1));
            ack(&mut d, 150, held);
            assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(100)));
            assert_eq!(d.cc.window(), held, "off_target 0: the window holds");
        }
        d.advance(Duration::from_secs(1) - ms(1));
        ack(&mut d, 150, held);
        // Ten minutes on, the 50 ms sample is forgotten: the standing queue
        // becomes the new base, and LEDBAT grows into another TARGET of queue.
        let snap = d.cc.snapshot();
        assert_eq!(snap.base_delay, Some(ms(150)));
        assert_eq!(snap.queuing_delay, Some(Duration::ZERO));
        assert!(d.cc.window() > held);
    }

    /// Dynamic gain at T = 25 ms over a 100 ms path: one 100 ms round
    /// delivering 100 packets measures μ = 1000 packets/s.
    fn dynamic(extra: &[(&str, &str)]) -> Driver<Ledbat> {
        let mut spec = vec![
            ("research", "true"),
            ("target", "25ms"),
            ("dynamic_gain", "true"),
            ("t_stdy", "10s"),
            ("current_filter", "1"),
            ("init_cwnd", "130"),
        ];
        spec.extend_from_slice(extra);
        let mut d = driver(&spec);
        d.ack(d.epoch - ms(100), MSS, ms(100));
        let round_start = d.now;
        assert_eq!(
            d.cc.snapshot().gain,
            Some(1.0),
            "static gain until measured"
        );
        for _ in 0..99 {
            d.ack_old(ms(1), MSS, ms(100));
        }
        d.advance(ms(1));
        d.ack(round_start, MSS, ms(100));
        d
    }

    fn gain(d: &Driver<Ledbat>) -> f64 {
        d.cc.snapshot().gain.unwrap()
    }

    #[test]
    fn dynamic_gain_uses_eq_4_in_start_up_and_eq_12_in_steady_state() {
        let mut d = dynamic(&[]);
        // Eq. 4 with RTTb = 0.1 s, μ = 1000 /s, w0 = 130, T = 0.025 s:
        // G0 = (0.1·(100 − 130)/0.025 + 1000·0.225) / 10 = 10.5 /s; GAIN = G0·T.
        let startup: f64 = (0.1 * (1000.0 * 0.1 - 130.0) / 0.025 + 1000.0 * 0.225) / 10.0 * 0.025;
        assert!((startup - 0.2625).abs() < 1e-12);
        assert!((gain(&d) - startup).abs() < 1e-9, "{}", gain(&d));

        // q reaches T: steady state, Eq. 12 with τ = base + 2T = 150 ms,
        // capped by the start-up gain.
        let w_max = d.cc.window() as f64 / MSS as f64;
        d.ack_old(ms(1), MSS, ms(125));
        let eq12 = (0.5 + 2.0 * (w_max - 1000.0 * 0.125)) / (2.0 * (0.3 - 0.125)) * 0.025;
        assert!(eq12 > startup, "{eq12}");
        assert!((gain(&d) - startup).abs() < 1e-9, "{}", gain(&d));
    }

    #[test]
    fn dynamic_gain_steady_state_gain_below_start_up() {
        // A faster start-up (t_stdy 1 s) makes Eq. 4 larger than Eq. 12.
        let mut d = dynamic(&[("t_stdy", "1s")]);
        let startup: f64 = 10.5 * 10.0 * 0.025;
        assert!((gain(&d) - startup).abs() < 1e-9, "{}", gain(&d));
        let w_max = d.cc.window() as f64 / MSS as f64;
        d.ack_old(ms(1), MSS, ms(125));
        let eq12 = (0.5 + 2.0 * (w_max - 125.0)) / 0.35 * 0.025;
        assert!(eq12 < startup && eq12 > DG_GAIN_MIN, "{eq12}");
        // window() floors the byte count: w_max is known to 1/1200 packet.
        assert!((gain(&d) - eq12).abs() < 2e-4, "{} vs {eq12}", gain(&d));
        // q falls below T: back to start-up, Eq. 4 again.
        d.ack_old(ms(1), MSS, ms(110));
        assert!((gain(&d) - startup).abs() < 1e-9, "{}", gain(&d));
    }

    #[test]
    fn dynamic_gain_delta_is_a_hysteresis_band() {
        let mut d = dynamic(&[("t_stdy", "1s"), ("delta", "0.2")]);
        let startup = gain(&d);
        d.ack_old(ms(1), MSS, ms(125)); // q = T < T + δ: still start-up
        assert_eq!(gain(&d), startup);
        d.ack_old(ms(1), MSS, ms(130)); // q = T + δ: steady state
        let steady = gain(&d);
        assert!(steady < startup);
        d.ack_old(ms(1), MSS, ms(121)); // q = T − 4 ms > T − δ: stays
        assert_eq!(gain(&d), steady);
        d.ack_old(ms(1), MSS, ms(119)); // q < T − δ: start-up again
        assert_eq!(gain(&d), startup);
    }

    #[test]
    fn rfc_6817_limits_need_research_first() {
        let set = |spec: &[(&str, &str)]| {
            let mut cfg = LedbatConfig::default();
            for (k, v) in spec {
                cfg.set(k, v).map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(cfg)
        };
        assert_eq!(
            set(&[("target", "101ms")]).unwrap_err(),
            "bad value '101ms' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms \
             to 100ms (RFC 6817 §2.5: \"TARGET MUST be 100 milliseconds or less\"; research=true \
             before it allows up to 1s)"
        );
        assert_eq!(
            set(&[("gain", "1.5")]).unwrap_err(),
            "bad value '1.5' for 'gain': expected a number from 0.01 to 1 (RFC 6817 §2.5: \"GAIN \
             MUST be set to 1 or less\"; research=true before it allows up to 100)"
        );
        assert_eq!(
            set(&[("dynamic_gain", "true")]).unwrap_err(),
            "bad value 'true' for 'dynamic_gain': expected false without research=true before it \
             (dynamic gain uses GAINs up to gain_max; RFC 6817 §2.5: \"GAIN MUST be set to 1 or \
             less\")"
        );
        // The limits themselves are allowed.
        let cfg = set(&[("target", "100ms"), ("gain", "1")]).unwrap();
        assert_eq!((cfg.target(), cfg.research()), (ms(100), false));
        // research=true first allows them; after, it is too late.
        let cfg = set(&[("research", "true"), ("target", "250ms"), ("gain", "4")]).unwrap();
        assert_eq!((cfg.target(), cfg.gain), (ms(250), 4.0));
        assert!(set(&[("research", "true"), ("dynamic_gain", "true")]).is_ok());
        assert!(set(&[("target", "250ms"), ("research", "true")]).is_err());
        // research=false is refused while a value needs it.
        assert_eq!(
            set(&[("research", "true"), ("gain", "2"), ("research", "false")]).unwrap_err(),
            "bad value 'false' for 'research': expected true while target, gain or dynamic_gain \
             is outside RFC 6817 §2.5"
        );
        // With research on, the wider range's error has no RFC note.
        assert_eq!(
            set(&[("research", "true"), ("target", "2s")]).unwrap_err(),
            "bad value '2s' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms to 1s"
        );
    }

    #[test]
    fn pacing_follows_the_window_and_slow_start() {
        let mut d = driver(&[("current_filter", "1")]);
        assert_eq!(d.cc.pacing_rate(), None, "no RTT sample yet");
        ack(&mut d, 50, 2400); // cwnd 3000, srtt 50 ms, no slow start: 1.2×
        assert_eq!(d.cc.pacing_rate(), Some(72_000));
        let mut d = driver(&[("current_filter", "1"), ("slow_start", "true")]);
        ack(&mut d, 50, 2400); // slow start: 2400 + 1200 = 3600 bytes, 2×
        assert_eq!(d.cc.window(), 3600);
        assert_eq!(d.cc.pacing_rate(), Some(144_000));
    }

    #[test]
    fn spec_keys_are_checked() {
        let mut cfg = LedbatConfig::default();
        cfg.set("target", "5ms").unwrap();
        cfg.set("decrease_gain", "10").unwrap();
        assert_eq!((cfg.target, cfg.decrease_gain), (ms(5), 10.0));
        assert_eq!(cfg.target(), ms(5));
        assert_eq!(
            cfg.set("decrease_gain", "0").unwrap_err().to_string(),
            "bad value '0' for 'decrease_gain': expected a number from 0.1 to 100"
        );
        assert_eq!(
            cfg.set("slow_start", "sometimes").unwrap_err().to_string(),
            "bad value 'sometimes' for 'slow_start': expected true or false"
        );
        cfg.set("tau_user", "170ms").unwrap();
        assert_eq!(cfg.tau_user, Some(ms(170)));
        cfg.set("tau_user", "auto").unwrap();
        assert_eq!(cfg.tau_user, None);
        assert_eq!(
            cfg.set("tau_user", "soon").unwrap_err().to_string(),
            "bad value 'soon' for 'tau_user': expected auto or a duration with a unit (e.g. 60ms) from 1ms to 10s"
        );
        assert!(cfg.set("delta", "0.3").is_err());
        assert!(cfg.set("gain", "0").is_err());
        assert!(cfg.set("target", "2s").is_err());
        cfg.set("research", "true").unwrap();
        assert!(cfg.set("target", "2s").is_err());
        assert!(cfg.set("gain", "101").is_err());
        let e = cfg.set("gain_divisor_max", "4").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown parameter 'gain_divisor_max' for 'ledbat'"),
            "{e}"
        );
    }
}
