//! CDG, the CAIA delay-gradient controller (Hayes and Armitage, 2011), with
//! Linux `tcp_cdg` semantics, as seed `cdg-deadline-aware-lbe` §II describes.
//!
//! Per round n (a round ends with the first ACK for a packet sent at or
//! after its start, TCP's `snd_nxt` marker on send times; it closes only once it
//! holds at least one RTT sample, as Linux's does):
//!
//! ```text
//! g_min,n = RTTmin,n − RTTmin,n−1        g_max,n = RTTmax,n − RTTmax,n−1   (§II-A, Eq. 1, 2)
//! ḡ       = moving average of the last `window` gradients, each kind     (Eq. 3)
//! g       = ḡ_min if ḡ_min > 0, else ḡ_max
//! back off with probability P = 1 − exp(−g/G) when g > 0                 (Eq. 4)
//! ```
//!
//! While fewer than `window` gradients exist, the average is over those
//! present (Linux scales the partial sum by window/filled, the same thing).
//! A backoff sets `cwnd = max(β·cwnd, 2 packets)` and ssthresh to it (so it
//! also ends slow start) and starts a window reduction, as Linux's
//! `tcp_enter_cwr` does. Otherwise the window grows like Reno (Eq. 5): slow
//! start `cwnd = min(cwnd + bytes_acked, ssthresh)` below ssthresh (Linux
//! `tcp_slow_start`; the bytes beyond ssthresh count towards congestion
//! avoidance), then +1 MSS per window of acknowledged bytes; no growth while less than half the window is in
//! flight (application-limited). Loss: Reno halving, once per recovery
//! period ([RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)), which also starts a window reduction.
//!
//! # Window reductions (Linux CWR and Recovery)
//!
//! Linux calls `tcp_cdg_cong_avoid`, where rounds close, gradients are
//! computed and the window grows, only outside the CWR and Recovery states
//! ("Not called in CWR or Recovery state"), while `tcp_cdg_acked` records
//! RTT samples in every state; when the reduction completes
//! (`CA_EVENT_COMPLETE_CWR`) it starts a new round with `rtt_prev` = the
//! samples taken during the reduction ("We keep sums to ignore gradients
//! during cwnd reductions"). Here likewise: a reduction lasts from a backoff
//! (CWR) or a loss (Recovery) until an ACK for a packet sent after it
//! began (at or after, for a backoff, which happens while an ACK is
//! processed; strictly after, for a loss, [RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)); during it the
//! round's samples accumulate but no round closes, no gradient enters the
//! moving average, no backoff is drawn and the window does not grow. The
//! ACK that completes it makes its samples the previous round, starts a new
//! round and grows the window as usual. So the gradient straddling a
//! backoff (typically negative, as the backoff drains the queue) is never
//! averaged, and backoffs are at least two rounds apart (§II-A: "CDG only
//! backs-off at most every second RTT").
//!
//! RTT samples are the per-ACK delay of [`crate::delay::adjusted_rtt`]
//! (RTT minus the peer's ACK delay), so that delayed ACKs do not read as
//! gradients; only ACKs with a new sample count.
//!
//! G is in milliseconds: Linux's `backoff_factor` 42 with its window of 8 and
//! gradient sums in µs gives exp(−8·ḡ·42·10⁻⁶), i.e. G ≈ 2.98 ms, hence the
//! default 3 (seed §II-A).
//!
//! LBE mode (the default, as in the seed) turns Linux's coexistence
//! heuristics off. They are options:
//!
//! * `shadow_window=true`: a shadow window remembers the window delay
//!   backoffs took away (the initial window at first, as Linux's
//!   `tcp_cdg_init`; set to max(shadow, cwnd) at a backoff, grown with
//!   the window, trimmed to cwnd while application-limited); on loss,
//!   `shadow = min(shadow/2, cwnd)` and the window becomes
//!   `max(2 packets, shadow, cwnd/2)`, so a loss-based competitor cannot
//!   push CDG below what Reno would hold.
//! * `ineffective_backoff=true`: after 5 backoffs in a row without either
//!   gradient sum over the window falling to −32 µs or below, delay backoffs
//!   are deemed ineffective (a loss-based flow fills the queue anyway) and
//!   stop until the delay falls again.
//!
//! Randomness: [`SplitMix64`] seeded with `seed`. With the default `auto`,
//! the seed is [`DEFAULT_SEED`] mixed with the first RTT sample, so flows on
//! the same bottleneck do not back off in lock-step while a given event
//! sequence still always gives the same result; `seed=N` fixes it.
//!
//! Pacing ([`crate::pacing`]): 2 × cwnd/srtt while cwnd < ssthresh/2, else
//! 1.2 × cwnd/srtt, as Linux paces a Reno-like TCP.
//!
//! # Deviations from Linux `tcp_cdg.c` (net/ipv4/tcp_cdg.c)
//!
//! * β = 0.7 by default, seed `cdg-deadline-aware-lbe`'s value ("a factor β (0.7 by default)",
//!   §II-A); Linux's `backoff_beta` is 0.7071·1024 = 724 ("sqrt 0.5").
//!   `beta=0.7071` gives Linux's.
//! * The backoff sets cwnd to β·cwnd at once; Linux's CWR state lowers it
//!   to that ssthresh gradually over the reduction round (PRR).
//! * No HyStart in slow start (Linux: `hystart_detect` 3); slow start ends
//!   on a backoff or a loss.
//! * Delayed ACKs: the peer's reported ACK delay is subtracted
//!   ([`crate::delay::adjusted_rtt`]) instead of Linux's heuristic that
//!   feeds single-packet ACKs after stretch ACKs only to the minimum.
//! * `shadow_window` and `ineffective_backoff` (Linux's `use_shadow` and
//!   `use_ineff`, on in Linux) are off by default: seed `cdg-deadline-aware-lbe`'s LBE mode.
//!   Linux's `use_tolerance` (off there) is not implemented.
//! * A loss during a backoff's reduction halves the window; Linux's
//!   ssthresh hook would apply β again, its CDG state being still BACKOFF.
//! * Rounds are delimited by send times (`round.rs`) rather than
//!   sequence numbers; RTTs are in nanoseconds rather than microseconds; the
//!   backoff draw uses [`SplitMix64`] and `exp` rather than `prandom_u32`
//!   and `nexp_u32`.
//! * Application-limited: no growth while less than half the window is in
//!   flight (`flight.rs`) instead of `tcp_is_cwnd_limited`.
//! * No restart after idle. Linux's `CA_EVENT_CWND_RESTART` (sent when a
//!   sender idle for longer than its RTO sends again, with
//!   `tcp_slow_start_after_idle`) clears the gradients and CDG's state and
//!   sets the shadow window to the restarted window. QUIC has no such
//!   restart ([RFC 9002 §7.8](https://www.rfc-editor.org/rfc/rfc9002#section-7.8) only holds back growth while the window is not
//!   used), quiche signals none and [`crate::CongestionController`] has no
//!   idle event, so nothing is cleared: the first round after an idle
//!   period takes its gradient against the last round before it.
//! * Persistent congestion ([RFC 9002 §7.6](https://www.rfc-editor.org/rfc/rfc9002#section-7.6)) collapses to 2 packets; Linux's
//!   RTO goes to 1 packet, its Loss state then calling `cong_avoid`.

use std::time::Duration;
use std::time::Instant;

use crate::delay::DelayMode;
use crate::delay::DelaySource;
use crate::delay::Rebase;
use crate::flight::FlightSize;
use crate::pacing;
use crate::params;
use crate::recovery::RecoveryPeriod;
use crate::rng::SplitMix64;
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
use crate::MAX_WINDOW_BYTES;

/// Backoff scale G, milliseconds (seed §II-A: 3; Linux `backoff_factor` 42).
pub const G: f64 = 3.0;
/// Multiplicative backoff β, dimensionless: 0.7, seed `cdg-deadline-aware-lbe`'s default (§II-A
/// "0.7 by default"). Linux's `backoff_beta` is 0.7071·1024 = 724/1024,
/// "sqrt 0.5" (see the deviations in the module docs).
pub const BETA: f64 = 0.7;
/// Gradient moving-average window, rounds (seed §II-A; Linux `window` 8).
pub const WINDOW: usize = 8;
/// Largest accepted `window`, rounds.
pub const MAX_WINDOW: usize = 64;
/// The fraction of the window a loss leaves, dimensionless: Reno's halving
/// (Linux `tcp_cdg_ssthresh`: `cwnd/2`, or the shadow window's half if
/// larger). [`crate::deadline`]'s top level uses CUBIC's β instead.
pub const LOSS_BETA: f64 = 0.5;
/// Minimum window, packets (Linux: 2).
pub const MIN_CWND: u64 = 2;
/// Ineffective-backoff detection: backoffs in a row tolerated (Linux
/// `use_ineff` 5).
pub const INEFFECTIVE_BACKOFFS: u32 = 5;
/// Ineffective-backoff detection: a gradient sum at or below this shows a
/// backoff worked, nanoseconds (Linux: −32 µs).
pub const INEFFECTIVE_RESET_NS: i64 = -32_000;
/// Seed mixed with the first RTT sample when `seed=auto` ("cdg_lbe!").
pub const DEFAULT_SEED: u64 = 0x6364_675f_6c62_6521;
/// Gradients are clamped to ±1000 s so that sums cannot overflow, ns.
const GRADIENT_CLAMP_NS: i64 = 1_000_000_000_000;

/// Parameters of [`Cdg`]. Defaults are seed `cdg-deadline-aware-lbe`'s (Linux's but β = 0.7),
/// coexistence heuristics off; fields are set only through
/// [`CdgConfig::set`], which range-checks every value.
#[derive(Clone, Debug, PartialEq)]
pub struct CdgConfig {
    /// Backoff scale G, milliseconds. Default 3 ([`G`]). Spec key `g`,
    /// 0.001 to 100000.
    g: f64,
    /// Backoff factor β. Default 0.7 ([`BETA`]). Spec key `beta`, 0.1 to 0.99.
    beta: f64,
    /// Moving-average window, rounds. Default 8 ([`WINDOW`]).
    /// Spec key `window`, 1 to 64.
    window: usize,
    /// Minimum window, packets. Default 2 ([`MIN_CWND`]). Spec key `min_cwnd`,
    /// 1 to 64.
    min_cwnd: u64,
    /// Linux's shadow window. Default false. Spec key `shadow_window`.
    shadow_window: bool,
    /// Linux's ineffective-backoff detection. Default false.
    /// Spec key `ineffective_backoff`.
    ineffective_backoff: bool,
    /// Generator seed; `None` (spec value `auto`, the default) mixes
    /// [`DEFAULT_SEED`] with the first RTT sample. Spec key `seed`, `auto` or
    /// 0 to 18446744073709551615.
    seed: Option<u64>,
    /// Which delay signal the gradients are of. Default `auto`. Spec key
    /// `delay`, `auto`, `owd` or `rtt` ([`crate::delay`]).
    delay: DelayMode,
}

impl Default for CdgConfig {
    fn default() -> Self {
        Self {
            g: G,
            beta: BETA,
            window: WINDOW,
            min_cwnd: MIN_CWND,
            shadow_window: false,
            ineffective_backoff: false,
            seed: None,
            delay: DelayMode::Auto,
        }
    }
}

impl CdgConfig {
    /// Every key [`Self::set`] accepts: the `key=value` parameters of a
    /// `--cc` spec for this controller ([`crate::spec`]).
    pub const KEYS: &'static [&'static str] = &[
        "g",
        "beta",
        "window",
        "min_cwnd",
        "shadow_window",
        "ineffective_backoff",
        "seed",
        "delay",
    ];

    /// Sets one `key=value` parameter of a `--cc` spec, range-checked; the
    /// error names the key and what it allows.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        match key {
            "g" => self.g = params::f64_in(key, value, 0.001, 100_000.0)?,
            "beta" => self.beta = params::f64_in(key, value, 0.1, 0.99)?,
            "window" => self.window = params::u64_in(key, value, 1, MAX_WINDOW as u64)? as usize,
            "min_cwnd" => self.min_cwnd = params::u64_in(key, value, 1, 64)?,
            "shadow_window" => self.shadow_window = params::bool_value(key, value)?,
            "ineffective_backoff" => self.ineffective_backoff = params::bool_value(key, value)?,
            "seed" => {
                self.seed = match value.trim() {
                    "auto" => None,
                    _ => Some(params::u64_in(key, value, 0, u64::MAX).map_err(|_| {
                        params::bad_value(
                            key,
                            value,
                            format!("auto or a whole number from 0 to {}", u64::MAX),
                        )
                    })?),
                }
            }
            "delay" => self.delay = DelayMode::parse(key, value)?,
            _ => return Err(params::unknown_key("cdg", key, Self::KEYS)),
        }
        Ok(())
    }

    /// Backoff scale G, milliseconds.
    pub fn g(&self) -> f64 {
        self.g
    }

    /// The generator seed; `None` for `auto`.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }
}

/// Everything a spurious loss may have to restore.
#[derive(Clone, Copy, Debug)]
struct State {
    cwnd: u64,
    /// `u64::MAX` until the first backoff or loss.
    ssthresh: u64,
    /// Bytes acknowledged towards the next +1 MSS in congestion avoidance.
    acked: u64,
    /// Loss recovery (Linux's Recovery state).
    recovery: RecoveryPeriod,
    /// Linux's CWR after a delay backoff at this time; it ends with an ACK
    /// of a packet sent at or after it.
    backoff_start: Option<Instant>,
    /// Linux's shadow window, bytes (`shadow_window`); starts at the
    /// initial window.
    shadow: u64,
}

impl HasWindow<u64> for State {
    fn window_mut(&mut self) -> &mut u64 {
        &mut self.cwnd
    }
}

/// The CDG controller (see the module docs).
#[derive(Debug)]
pub struct Cdg {
    cfg: CdgConfig,
    bounds: WindowBounds<u64>,
    /// G in nanoseconds.
    g_ns: f64,
    s: State,
    saved: Checkpoint<State>,
    rounds: Rounds,
    flight: FlightSize,
    /// Smallest and largest sample of the current round (`MAX`/`ZERO` when
    /// it has none yet).
    round_min: Duration,
    round_max: Duration,
    prev: Option<(Duration, Duration)>,
    /// Where the delay samples come from (spec key `delay`).
    source: DelaySource,
    /// The last `window` (g_min, g_max) pairs, ns.
    gradients: [(i64, i64); MAX_WINDOW],
    next: usize,
    filled: usize,
    sum_min: i64,
    sum_max: i64,
    last_gradient_ns: Option<f64>,
    backoffs_in_a_row: u32,
    rng: Option<SplitMix64>,
    /// Smoothed RTT of the latest ACK that carried a sample.
    srtt: Option<Duration>,
    /// Backoff draws made and backoffs taken, for tests and logs.
    draws: u64,
    backoffs: u64,
    /// The fraction of the window a loss leaves: [`LOSS_BETA`] unless
    /// [`crate::deadline`] sets CUBIC's β at its top level
    /// (`Cdg::set_loss_beta`).
    loss_beta: f64,
}

impl Cdg {
    /// A CDG controller for `path`, in slow start at the path's initial window.
    pub fn new(cfg: CdgConfig, path: PathInfo) -> Self {
        let bounds = WindowBounds::<u64>::new(path.max_datagram_size, cfg.min_cwnd);
        let cwnd = bounds.clamp(path.initial_window_packets.saturating_mul(bounds.mss));
        Self {
            bounds,
            g_ns: cfg.g * 1e6,
            s: State {
                cwnd,
                ssthresh: u64::MAX,
                acked: 0,
                recovery: RecoveryPeriod::default(),
                backoff_start: None,
                // Linux `tcp_cdg_init`: `ca->shadow_wnd = tcp_snd_cwnd(tp)`.
                shadow: cwnd,
            },
            saved: Checkpoint::default(),
            rounds: Rounds::default(),
            flight: FlightSize::default(),
            round_min: Duration::MAX,
            round_max: Duration::ZERO,
            prev: None,
            source: DelaySource::new(cfg.delay),
            gradients: [(0, 0); MAX_WINDOW],
            next: 0,
            filled: 0,
            sum_min: 0,
            sum_max: 0,
            last_gradient_ns: None,
            backoffs_in_a_row: 0,
            rng: cfg.seed.map(SplitMix64::new),
            srtt: None,
            draws: 0,
            backoffs: 0,
            loss_beta: LOSS_BETA,
            cfg,
        }
    }

    /// The samples of the current round, which starts afresh: `None` when
    /// it had none.
    fn take_round(&mut self) -> Option<(Duration, Duration)> {
        let current = (self.round_min, self.round_max);
        self.round_min = Duration::MAX;
        self.round_max = Duration::ZERO;
        (current.0 != Duration::MAX).then_some(current)
    }

    /// Closes the current round (outside reductions only): gradients, and
    /// perhaps a backoff (returned).
    fn end_round(&mut self, now: Instant) -> bool {
        let Some(current) = self.take_round() else {
            return false;
        };
        let Some(prev) = self.prev.replace(current) else {
            return false;
        };

        let gmin = gradient_ns(prev.0, current.0);
        let gmax = gradient_ns(prev.1, current.1);
        let window = self.cfg.window.clamp(1, MAX_WINDOW);
        let slot = self.next;
        if self.filled == window {
            self.sum_min -= self.gradients[slot].0;
            self.sum_max -= self.gradients[slot].1;
        } else {
            self.filled += 1;
        }
        self.gradients[slot] = (gmin, gmax);
        self.sum_min += gmin;
        self.sum_max += gmax;
        self.next = (slot + 1) % window;

        let mean_min = self.sum_min as f64 / self.filled as f64;
        let mean_max = self.sum_max as f64 / self.filled as f64;
        let g = if mean_min > 0.0 { mean_min } else { mean_max };
        self.last_gradient_ns = Some(g);

        if self.cfg.ineffective_backoff
            && (self.sum_min <= INEFFECTIVE_RESET_NS || self.sum_max <= INEFFECTIVE_RESET_NS)
        {
            self.backoffs_in_a_row = 0;
        }
        if g <= 0.0 {
            return false;
        }
        self.draws += 1;
        let p = 1.0 - (-g / self.g_ns).exp();
        let draw = self
            .rng
            .get_or_insert_with(|| SplitMix64::new(DEFAULT_SEED))
            .next_f64();
        if draw >= p {
            return false;
        }
        if self.cfg.ineffective_backoff {
            self.backoffs_in_a_row += 1;
            if self.backoffs_in_a_row > INEFFECTIVE_BACKOFFS {
                return false;
            }
        }
        if self.cfg.shadow_window {
            self.s.shadow = self.s.shadow.max(self.s.cwnd);
        }
        self.s.cwnd = ((self.s.cwnd as f64 * self.cfg.beta) as u64).max(self.bounds.min);
        self.s.ssthresh = self.s.cwnd;
        self.s.acked = 0;
        // Linux: tcp_enter_cwr.
        self.s.backoff_start = Some(now);
        self.backoffs += 1;
        true
    }

    fn state_name(&self) -> &'static str {
        if self.s.recovery.in_recovery() {
            "recovery"
        } else if self.s.backoff_start.is_some() {
            "backoff"
        } else if self.s.cwnd < self.s.ssthresh {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }

    /// Sets the backoff scale G, milliseconds, from the next round's draw
    /// on ([`crate::deadline`] steers it); clamped to the spec's range,
    /// 0.001 to 100000.
    pub fn set_backoff_scale_ms(&mut self, g_ms: f64) {
        let g = g_ms.clamp(0.001, 100_000.0);
        self.cfg.g = g;
        self.g_ns = g * 1e6;
    }

    /// Sets the fraction of the window a loss leaves ([`crate::deadline`]:
    /// CUBIC's β = 0.7 at its top level, [`LOSS_BETA`] below), clamped to
    /// 0.5..=0.7: never a deeper cut than Reno's nor a shallower one than
    /// CUBIC's. The shadow window is halved either way.
    pub fn set_loss_beta(&mut self, beta: f64) {
        self.loss_beta = beta.clamp(LOSS_BETA, crate::cubic::BETA_CUBIC);
    }

    /// Lets the window slow-start up to `bytes` ([`crate::deadline`]'s
    /// catch-up): when it is below and no reduction is under way, ssthresh
    /// becomes `bytes`. A backoff or a loss ends the slow start as usual.
    /// Returns whether it did.
    pub fn slow_start_to(&mut self, bytes: u64) -> bool {
        if self.s.recovery.in_recovery() || self.s.backoff_start.is_some() {
            return false;
        }
        if self.s.cwnd >= bytes {
            return false;
        }
        self.s.ssthresh = bytes.min(MAX_WINDOW_BYTES);
        self.s.acked = 0;
        true
    }
}

/// `to − from` in nanoseconds, clamped to ±[`GRADIENT_CLAMP_NS`].
fn gradient_ns(from: Duration, to: Duration) -> i64 {
    let clamp = |d: Duration| d.as_nanos().min(GRADIENT_CLAMP_NS as u128) as i64;
    (clamp(to) - clamp(from)).clamp(-GRADIENT_CLAMP_NS, GRADIENT_CLAMP_NS)
}

impl CongestionController for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    fn on_packet_sent(&mut self, _now: Instant, bytes: u64, bytes_in_flight: u64) {
        self.flight.on_packet_sent(bytes, bytes_in_flight);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let now = ack.now;
        let bytes = ack.bytes_acked();
        let largest = round::largest_sent(ack.acked);

        if ack.rtt.new_sample {
            self.srtt = Some(ack.rtt.smoothed_rtt);
            // Linux's tcp_cdg_acked: samples count in every state.
            if let Some(s) = self.source.sample(ack) {
                match s.rebase {
                    Rebase::None => (),
                    // A new signal: the gradient restarts from this round.
                    Rebase::Restart => {
                        self.round_min = Duration::MAX;
                        self.round_max = Duration::ZERO;
                        self.prev = None;
                    }
                    // Gradients are differences: shift what they subtract.
                    Rebase::Shift(d) => {
                        if self.round_min != Duration::MAX {
                            self.round_min += d;
                        }
                        if self.round_max != Duration::ZERO {
                            self.round_max += d;
                        }
                        self.prev = self.prev.map(|(lo, hi)| (lo + d, hi + d));
                    }
                }
                let sample = s.delay;
                if self.rng.is_none() {
                    // The seed mixes the first sample as before: the RTT
                    // sample, or the one-way delay as mapped by the source.
                    let ns = sample.as_nanos() as u64;
                    self.rng = Some(SplitMix64::new(DEFAULT_SEED ^ ns.rotate_left(29)));
                }
                self.round_min = self.round_min.min(sample);
                self.round_max = self.round_max.max(sample);
            }
        }
        // Whether this ACK completes the reduction under way, if any.
        let reduction_completed = if self.s.recovery.in_recovery() {
            Some(self.s.recovery.on_ack(largest))
        } else {
            self.s
                .backoff_start
                .map(|start| largest.is_some_and(|sent| sent >= start))
        };
        match reduction_completed {
            // "Not called in CWR or Recovery state": no round end, no
            // gradient, no growth.
            Some(false) => return,
            Some(true) => {
                // CA_EVENT_COMPLETE_CWR: rtt_prev = rtt, a new round starts.
                self.s.backoff_start = None;
                self.prev = self.take_round();
                self.rounds.restart(now);
            }
            None => (),
        }
        let has_sample = self.round_min != Duration::MAX;
        if has_sample && self.rounds.on_ack(now, largest) && self.end_round(now) {
            return;
        }

        if self.flight.at_ack(ack.bytes_in_flight).saturating_mul(2) < self.s.cwnd {
            self.s.shadow = self.s.shadow.min(self.s.cwnd);
            return;
        }
        let before = self.s.cwnd;
        let mut bytes = bytes;
        let slow_start = self.s.cwnd < self.s.ssthresh;
        if slow_start {
            // Linux `tcp_slow_start`: `cwnd = min(cwnd + acked, ssthresh)`;
            // the bytes beyond ssthresh go on to congestion avoidance
            // (`tcp_reno_cong_avoid`).
            let grown = self.s.cwnd.saturating_add(bytes).min(self.s.ssthresh);
            bytes -= grown - self.s.cwnd;
            self.s.cwnd = grown;
        }
        if !slow_start || bytes > 0 {
            self.s.acked = self.s.acked.saturating_add(bytes);
            let steps = self.s.acked / self.s.cwnd;
            self.s.acked -= steps * self.s.cwnd;
            self.s.cwnd = self
                .s
                .cwnd
                .saturating_add(steps.saturating_mul(self.bounds.mss));
        }
        self.s.cwnd = self.s.cwnd.min(MAX_WINDOW_BYTES);
        if self.cfg.shadow_window {
            self.s.shadow = self.s.shadow.saturating_add(self.s.cwnd - before);
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        if !self.s.recovery.on_loss(loss) {
            return;
        }
        // A loss during a backoff's CWR turns it into Recovery.
        self.s.backoff_start = None;
        let reduced = (self.s.cwnd as f64 * self.loss_beta) as u64;
        let cwnd = if self.cfg.shadow_window {
            self.s.shadow = (self.s.shadow / 2).min(self.s.cwnd);
            reduced.max(self.s.shadow)
        } else {
            reduced
        };
        self.s.cwnd = cwnd.max(self.bounds.min);
        self.s.ssthresh = self.s.cwnd;
        self.s.acked = 0;
    }

    fn on_persistent_congestion(&mut self, _now: Instant) {
        self.s.cwnd = self.bounds.min;
        self.s.acked = 0;
    }

    checkpoint_hooks!();

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.bounds
            .on_mtu_change(max_datagram_size, &mut self.s.cwnd);
    }

    fn window(&self) -> u64 {
        self.s.cwnd
    }

    fn pacing_rate(&self) -> Option<u64> {
        let slow_start = pacing::in_slow_start(self.s.cwnd as f64, self.s.ssthresh as f64);
        pacing::rate(self.s.cwnd, self.srtt, slow_start)
    }

    fn state(&self, _now: Instant) -> &'static str {
        self.state_name()
    }

    fn delay_signal(&self) -> Option<crate::delay::Signal> {
        self.source.signal()
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd: self.s.cwnd,
            ssthresh: (self.s.ssthresh != u64::MAX).then_some(self.s.ssthresh),
            backoff_scale: Some(Duration::from_secs_f64(self.cfg.g / 1e3)),
            gradient_us: self.last_gradient_ns.map(|g| (g / 1e3).round() as i64),
            delay_signal: self.source.signal(),
            ..Snapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::ms;
    use crate::testkit::Driver;
    use crate::testkit::MSS;

    fn driver(spec: &[(&str, &str)]) -> Driver<Cdg> {
        let cfg = crate::testkit::config(&[&[("seed", "1")], spec].concat(), CdgConfig::set);
        Driver::new(Cdg::new(cfg, PathInfo::default()))
    }

    /// One round: a single ACK for the whole window, RTT sample `rtt`.
    fn round(d: &mut Driver<Cdg>, rtt: Duration) {
        let w = d.cc.window();
        d.round(rtt, w);
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Rounds whose RTT grows by `step` each: a constant gradient.
    /// Returns (draws, backoffs) after a 10-round warm-up, and the indices
    /// of the rounds that backed off.
    fn constant_gradient(
        spec: &[(&str, &str)],
        step: Duration,
        rounds: u32,
    ) -> (u64, u64, Vec<u32>) {
        let mut d = driver(spec);
        let mut rtt = ms(50);
        d.ack(d.epoch - rtt, MSS, rtt);
        let mut warm = (0, 0);
        let mut backed_off = Vec::new();
        for i in 0..rounds {
            if i == 10 {
                warm = (d.cc.draws, d.cc.backoffs);
            }
            rtt += step;
            let before = d.cc.backoffs;
            round(&mut d, rtt);
            if d.cc.backoffs > before {
                backed_off.push(i);
            }
            assert!(d.cc.window() >= 2 * MSS);
        }
        (d.cc.draws - warm.0, d.cc.backoffs - warm.1, backed_off)
    }

    #[test]
    fn backoff_frequency_is_one_minus_exp_of_minus_g_over_big_g() {
        // (gradient per round, G): P = 1 − exp(−g/G).
        for (g_us, big_g) in [(1000, "3"), (500, "0.5"), (100, "3"), (3000, "3")] {
            let (draws, backoffs, _) = constant_gradient(&[("g", big_g)], us(g_us), 6000);
            let g_ms = g_us as f64 / 1000.0;
            let p = 1.0 - (-g_ms / big_g.parse::<f64>().unwrap()).exp();
            let freq = backoffs as f64 / draws as f64;
            // Six binomial standard deviations; the seed is fixed, so the
            // outcome is too — the bound says the law is right, not lucky.
            let sigma = (p * (1.0 - p) / draws as f64).sqrt();
            assert!(draws > 3000, "{draws}");
            assert!(
                (freq - p).abs() < 6.0 * sigma,
                "g {g_ms} ms, G {big_g} ms: {backoffs}/{draws} = {freq}, P = {p}, σ = {sigma}"
            );
        }
    }

    #[test]
    fn never_two_backoffs_in_consecutive_rounds() {
        // G tiny: P ≈ 1, so it backs off exactly every other round.
        let (draws, backoffs, rounds) = constant_gradient(&[("g", "0.001")], ms(1), 200);
        assert_eq!(draws, backoffs);
        assert!(rounds.len() > 90);
        assert!(rounds.windows(2).all(|w| w[1] - w[0] == 2), "{rounds:?}");
        // Random ones too.
        let (_, _, rounds) = constant_gradient(&[], ms(1), 3000);
        assert!(rounds.windows(2).all(|w| w[1] - w[0] >= 2));
        assert!(rounds.windows(2).any(|w| w[1] - w[0] == 2));
    }

    /// Slow start, a loss, then 200 rounds of congestion avoidance with a
    /// growing RTT; returns the window.
    fn reno_run(big_g: &str) -> (u64, u64) {
        let mut d = driver(&[("g", big_g)]);
        d.ack(d.epoch - ms(50), MSS, ms(50));
        round(&mut d, ms(50));
        round(&mut d, ms(50));
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        let after_loss = d.cc.window();
        let mut rtt = ms(50);
        for _ in 0..200 {
            rtt += ms(1);
            round(&mut d, rtt);
        }
        (after_loss, d.cc.window())
    }

    #[test]
    fn large_g_approaches_reno() {
        let (after_loss, end) = reno_run("100000");
        // Slow start 13200 → 26400 → 52800, halved. The first round after
        // the loss acknowledges a packet sent before it (still recovery);
        // each of the other 199 adds one MSS: Reno exactly, with
        // P = 1 − e^(−1/100000) per round.
        assert_eq!(after_loss, 26_400);
        assert_eq!(end, after_loss + 199 * MSS);
        // The default G = 3 ms backs off on that gradient.
        let (_, end) = reno_run("3");
        assert!(end < after_loss, "{end}");
    }

    #[test]
    fn gradients_are_smoothed_and_g_min_preferred_when_positive() {
        let mut d = driver(&[("g", "100000")]);
        // Each round: samples at its min and max (ACKs that end no round),
        // then the round-ending ACK with a sample in between.
        let r = |d: &mut Driver<Cdg>, min: u64, max: u64| {
            d.ack_old(ms(1), MSS, ms(min));
            d.ack_old(ms(1), MSS, ms(max));
            let sent = d.last_ack;
            d.advance(ms(1));
            d.ack(sent, MSS, ms(min));
        };
        d.ack(d.epoch - ms(100), MSS, ms(100));
        r(&mut d, 100, 110);
        assert_eq!(d.cc.snapshot().gradient_us, None, "one round: no gradient");
        r(&mut d, 102, 120); // g_min +2, g_max +10
        assert_eq!(d.cc.snapshot().gradient_us, Some(2000));
        r(&mut d, 101, 150); // sums: min +1, max +40, over 2 rounds
        assert_eq!(d.cc.snapshot().gradient_us, Some(500));
        r(&mut d, 97, 130); // min −3: not positive, so ḡ_max = 20/3
        assert_eq!(d.cc.snapshot().gradient_us, Some(6667));
        assert_eq!(d.cc.snapshot().backoff_scale, Some(ms(100_000)));

        // A window of 2 forgets the oldest gradient.
        let mut d = driver(&[("g", "100000"), ("window", "2")]);
        d.ack(d.epoch - ms(100), MSS, ms(100));
        r(&mut d, 100, 110);
        r(&mut d, 102, 120); // (+2, +10)
        r(&mut d, 101, 150); // (−1, +30): mean min 0.5
        assert_eq!(d.cc.snapshot().gradient_us, Some(500));
        r(&mut d, 97, 130); // (−4, −20) replaces (+2, +10): min −2.5, max +5
        assert_eq!(d.cc.snapshot().gradient_us, Some(5000));
    }

    #[test]
    fn backoff_multiplies_by_beta_and_ends_slow_start() {
        let mut d = driver(&[("g", "0.001")]);
        d.ack(d.epoch - ms(50), MSS, ms(50));
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("slow_start", 13_200));
        round(&mut d, ms(50)); // first round: no gradient yet, doubles
        assert_eq!(d.cc.window(), 26_400);
        round(&mut d, ms(51)); // gradient +1 ms: back off
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("backoff", 18_480));
        assert_eq!(d.cc.snapshot().ssthresh, Some(18_480));
        // The round after: no backoff possible, Reno +1 MSS at its end.
        round(&mut d, ms(52));
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 19_680)
        );
        round(&mut d, ms(52)); // gradient still positive (averaged): again
        assert_eq!(d.cc.window(), 19_680 * 7 / 10);
        // β = 0.5 halves.
        let mut d = driver(&[("g", "0.001"), ("beta", "0.5")]);
        d.ack(d.epoch - ms(50), MSS, ms(50));
        round(&mut d, ms(50));
        round(&mut d, ms(51));
        assert_eq!(d.cc.window(), 13_200);
    }

    #[test]
    fn window_floor_is_two_packets() {
        let mut d = driver(&[("g", "0.001"), ("beta", "0.1")]);
        d.ack(d.epoch - ms(50), MSS, ms(50));
        round(&mut d, ms(50)); // 26400
        round(&mut d, ms(51)); // backoff: 2640
        assert_eq!(d.cc.window(), 2640);
        round(&mut d, ms(52)); // +1 MSS: 3840
        round(&mut d, ms(53)); // backoff: 384, floored
        assert_eq!(d.cc.window(), 2 * MSS);
    }

    #[test]
    fn delayed_acks_do_not_make_a_gradient() {
        let run = |reported: Duration| {
            let mut d = driver(&[("g", "0.001")]);
            d.ack(d.epoch - ms(50), MSS, ms(50));
            round(&mut d, ms(50));
            // This round also has an ACK the peer held 25 ms.
            d.advance(ms(1));
            d.ack_full(d.epoch - ms(1), MSS, ms(75), reported, true, None);
            round(&mut d, ms(50));
            round(&mut d, ms(50));
            d.cc.backoffs
        };
        assert_eq!(run(ms(25)), 0);
        assert_eq!(run(Duration::ZERO), 1, "the same RTTs read raw: g_max > 0");
    }

    #[test]
    fn loss_halves_once_per_recovery_period() {
        let mut d = driver(&[("g", "100000")]);
        d.ack(d.epoch - ms(50), MSS, ms(50));
        round(&mut d, ms(50));
        assert_eq!(d.cc.window(), 26_400);
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        let recovery = d.now;
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("recovery", 13_200));
        d.loss(recovery);
        assert_eq!(d.cc.window(), 13_200);
        d.ack_old(ms(1), MSS, ms(50));
        assert_eq!(d.cc.window(), 13_200, "no growth in recovery");
        d.advance(ms(1));
        d.ack(recovery + ms(1), 13_200, ms(50));
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 14_400)
        );
        d.cc.checkpoint();
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        assert_eq!(d.cc.window(), 7_200);
        assert!(d.cc.rollback());
        assert_eq!(d.cc.window(), 14_400);
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), 2 * MSS);
    }

    #[test]
    fn shadow_window_keeps_what_delay_backoffs_gave_away() {
        let run = |shadow: &str| {
            let mut d = driver(&[("g", "0.001"), ("shadow_window", shadow)]);
            d.ack(d.epoch - ms(50), MSS, ms(50));
            round(&mut d, ms(50)); // 26400
            round(&mut d, ms(51)); // backoff: 18480, shadow 26400
            round(&mut d, ms(52)); // +1 MSS for both: 19680, shadow 27600
            d.advance(ms(1));
            d.loss(d.now - ms(1));
            d.cc.window()
        };
        assert_eq!(run("false"), 19_680 / 2);
        // shadow = min(27600/2, 19680) = 13800 > 19680/2.
        assert_eq!(run("true"), 13_800);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_goes_to_congestion_avoidance() {
        // Linux `tcp_slow_start`. A loss at 12_000 bytes: 6000 and ssthresh
        // 6000; persistent congestion: 2400. An ACK of 4 packets then grows
        // the window to ssthresh (6000, not 2400 + 4800 = 7200); the 1200
        // bytes beyond count towards congestion avoidance's +1 MSS per
        // window: 1200 + 4800 more make 6000, one MSS.
        let mut d = driver(&[]);
        assert_eq!(d.cc.window(), 12_000);
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        assert_eq!(d.cc.window(), 6000);
        let lost_at = d.now;
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), 2 * MSS);
        d.advance(ms(50));
        let in_flight = Some(4 * MSS);
        d.ack_full(
            lost_at + ms(1),
            4 * MSS,
            ms(49),
            Duration::ZERO,
            true,
            in_flight,
        );
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 6000)
        );
        d.advance(ms(1));
        d.ack_full(
            lost_at + ms(2),
            4 * MSS,
            ms(49),
            Duration::ZERO,
            true,
            in_flight,
        );
        assert_eq!(d.cc.window(), 6000 + MSS);
    }

    #[test]
    fn an_idle_period_clears_nothing() {
        // No restart after idle (module docs): 10 minutes without events,
        // then a round whose RTT is 10 ms above the last one before the
        // pause. Its gradient is taken against that round: with G = 1 µs a
        // positive gradient backs off (P ≈ 1). Linux would have cleared the
        // previous round and drawn nothing.
        let mut d = driver(&[("g", "0.001")]);
        d.ack(d.epoch - ms(50), MSS, ms(50));
        for _ in 0..3 {
            round(&mut d, ms(50));
        }
        assert_eq!(d.cc.backoffs, 0);
        let before = d.cc.window();
        d.advance(Duration::from_secs(600));
        d.last_ack = d.now;
        round(&mut d, ms(60));
        assert_eq!(d.cc.backoffs, 1);
        assert_eq!(d.cc.state(d.now), "backoff");
        // Slow start to 105_600 bytes, then β = 0.7 of it.
        assert_eq!((before, d.cc.window()), (105_600, 73_920));
    }

    #[test]
    fn the_shadow_window_starts_at_the_initial_window() {
        // Linux `tcp_cdg_init` sets the shadow window to the initial window
        // (12_000 bytes here). No growth, persistent congestion (2 packets,
        // the shadow stays), two ACKs of slow start (+2400 for window and
        // shadow: 4800 and 14_400), then a loss: shadow = min(14_400/2,
        // 4800) = 4800, window max(4800/2, 4800) = 4800. A shadow that
        // started at 0 would be 2400 by then, and the window 2400.
        let mut d = driver(&[("shadow_window", "true")]);
        assert_eq!(d.cc.window(), 12_000);
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), 2 * MSS);
        for _ in 0..2 {
            d.advance(ms(1));
            d.ack_full(
                d.now - ms(50),
                MSS,
                ms(50),
                Duration::ZERO,
                true,
                Some(2 * MSS),
            );
        }
        assert_eq!(d.cc.window(), 4800);
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        assert_eq!(d.cc.window(), 4800);
    }

    #[test]
    fn ineffective_backoffs_stop_after_five_until_delay_falls() {
        let mut d = driver(&[("g", "0.001"), ("ineffective_backoff", "true")]);
        let mut rtt = ms(50);
        d.ack(d.epoch - rtt, MSS, rtt);
        for _ in 0..30 {
            rtt += ms(1);
            round(&mut d, rtt);
        }
        assert_eq!(d.cc.backoffs, 5, "then deemed ineffective");
        // The queue drains: gradients sum far below −32 µs, backoffs work.
        rtt -= ms(20);
        round(&mut d, rtt);
        for _ in 0..30 {
            rtt += ms(1);
            round(&mut d, rtt);
        }
        assert_eq!(d.cc.backoffs, 10);
        // Off (the default): it never stops.
        let (_, backoffs, _) = constant_gradient(&[("g", "0.001")], ms(1), 60);
        assert_eq!(backoffs, 25);
    }

    #[test]
    fn the_seed_fixes_the_sequence() {
        let (_, _, a) = constant_gradient(&[("seed", "7")], ms(1), 300);
        let (_, _, b) = constant_gradient(&[("seed", "7")], ms(1), 300);
        let (_, _, c) = constant_gradient(&[("seed", "8")], ms(1), 300);
        assert_eq!(a, b);
        assert_ne!(a, c);
        // auto: mixed with the first RTT sample.
        let auto = |first: u64| {
            let mut d = Driver::new(Cdg::new(CdgConfig::default(), PathInfo::default()));
            let mut rtt = ms(first);
            d.ack(d.epoch - rtt, MSS, rtt);
            let mut seq = Vec::new();
            for i in 0..300 {
                rtt += ms(1);
                let before = d.cc.backoffs;
                round(&mut d, rtt);
                if d.cc.backoffs > before {
                    seq.push(i);
                }
            }
            seq
        };
        assert_eq!(auto(50), auto(50));
        assert_ne!(auto(50), auto(51));
    }

    /// Each round: samples at its min and max (ACKs that end no round),
    /// then the round-ending ACK with a sample at the min.
    fn min_max_round(d: &mut Driver<Cdg>, min: u64, max: u64) {
        d.ack_old(ms(1), MSS, ms(min));
        d.ack_old(ms(1), MSS, ms(max));
        let sent = d.last_ack;
        d.advance(ms(1));
        d.ack(sent, MSS, ms(min));
    }

    #[test]
    fn gradients_measured_during_recovery_are_not_averaged() {
        // G huge: no backoff, only the gradients matter.
        let mut d = driver(&[("g", "100000")]);
        d.ack(d.epoch - ms(100), MSS, ms(100));
        min_max_round(&mut d, 100, 110);
        min_max_round(&mut d, 102, 120); // (+2, +10)
        assert_eq!(d.cc.snapshot().gradient_us, Some(2000));
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        let recovery = d.now;
        assert_eq!(d.cc.state(d.now), "recovery");
        // Samples during recovery, and an ACK that would end the round (its
        // packet was sent after the round began, but not after recovery
        // did): no gradient. Averaged, (90 − 102, 150 − 120) would have made
        // ḡ_min = −5 and ḡ = ḡ_max = 20 ms.
        d.ack_old(ms(1), MSS, ms(150));
        d.ack_old(ms(1), MSS, ms(90));
        d.advance(ms(1));
        d.ack(recovery, MSS, ms(95));
        assert_eq!(d.cc.state(d.now), "recovery");
        assert_eq!(d.cc.snapshot().gradient_us, Some(2000));
        // Recovery completes: the samples taken during it (90 to 150 ms)
        // become the previous round, and a new round starts.
        d.advance(ms(1));
        d.ack(recovery + ms(1), MSS, ms(97));
        assert_eq!(d.cc.state(d.now), "congestion_avoidance");
        assert_eq!(d.cc.snapshot().gradient_us, Some(2000));
        // The next round: (96 − 90, 140 − 150) = (+6, −10); with the +2 from
        // before recovery ḡ_min = (2 + 6) / 2 = 4 ms.
        min_max_round(&mut d, 96, 140);
        assert_eq!(d.cc.snapshot().gradient_us, Some(4000));
    }

    #[test]
    fn a_backoff_is_a_window_reduction_whose_gradients_are_ignored() {
        // G tiny: every positive gradient backs off.
        let mut d = driver(&[("g", "0.001")]);
        d.ack(d.epoch - ms(50), MSS, ms(50));
        round(&mut d, ms(50));
        round(&mut d, ms(51)); // +1 ms: backoff, 26400 → 18480
        let backoff = d.now;
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("backoff", 18_480));
        assert_eq!(d.cc.snapshot().gradient_us, Some(1000));
        // The queue drains: samples of 45 ms for packets sent before the
        // backoff. Linux is in CWR: no gradient (−6 ms would be averaged
        // otherwise), no growth.
        d.ack_old(ms(1), MSS, ms(45));
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("backoff", 18_480));
        // A packet sent at the backoff is acknowledged: the reduction ends
        // (the CWR samples, 45 and 46 ms, are the previous round) and the
        // window grows as usual on that ACK (1200 of 18480 acknowledged).
        d.advance(ms(1));
        d.ack(backoff, MSS, ms(46));
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 18_480)
        );
        assert_eq!(d.cc.snapshot().gradient_us, Some(1000));
        // Next round at 47 ms: (+2, +1); ḡ_min = (1 + 2) / 2 = 1.5 ms > 0.
        round(&mut d, ms(47));
        assert_eq!(d.cc.snapshot().gradient_us, Some(1500));
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("backoff", 12_936));
        assert_eq!(d.cc.backoffs, 2);
    }

    #[test]
    fn pacing_is_twice_the_window_rate_below_half_ssthresh_and_1_2_times_above() {
        let mut d = driver(&[("g", "0.001")]);
        assert_eq!(d.cc.pacing_rate(), None, "no RTT sample yet");
        d.ack(d.epoch - ms(50), MSS, ms(50));
        // Slow start, no ssthresh: 2 × 13200 bytes / 50 ms.
        assert_eq!(d.cc.pacing_rate(), Some(528_000));
        round(&mut d, ms(50));
        round(&mut d, ms(51)); // backoff: ssthresh = cwnd = 18480
        assert_eq!(
            d.cc.pacing_rate(),
            Some((1.2 * 18_480.0 / 0.051_f64).round() as u64)
        );
    }

    #[test]
    fn spec_keys_are_checked() {
        let mut cfg = CdgConfig::default();
        cfg.set("g", "0.5").unwrap();
        assert_eq!(cfg.g(), 0.5);
        assert_eq!(
            cfg.set("g", "0").unwrap_err().to_string(),
            "bad value '0' for 'g': expected a number from 0.001 to 100000"
        );
        assert!(cfg.set("beta", "1").is_err());
        assert!(cfg.set("window", "0").is_err());
        assert!(cfg.set("window", "65").is_err());
        cfg.set("seed", "42").unwrap();
        assert_eq!(cfg.seed(), Some(42));
        cfg.set("seed", "auto").unwrap();
        assert_eq!(cfg.seed(), None);
        assert_eq!(
            cfg.set("seed", "-1").unwrap_err().to_string(),
            "bad value '-1' for 'seed': expected auto or a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            cfg.set("G", "3").unwrap_err().to_string(),
            "unknown parameter 'G' for 'cdg' (allowed: g, beta, window, min_cwnd, shadow_window, ineffective_backoff, seed, delay)"
        );
        cfg.set("delay", "owd").unwrap();
        assert_eq!(cfg.delay, DelayMode::OneWay);
        assert_eq!(
            cfg.set("delay", "1way").unwrap_err().to_string(),
            "bad value '1way' for 'delay': expected auto, owd or rtt"
        );
    }
}
