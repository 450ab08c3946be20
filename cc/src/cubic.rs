//! CUBIC ([RFC 9438](https://www.rfc-editor.org/rfc/rfc9438), "CUBIC for
//! Fast and Long-Distance Networks"), window in bytes: the "normal flow" a
//! deadline-aware LBE flow hands over to once its deadline cannot be met
//! ([`crate::deadline`]).
//!
//! Not a `--cc` controller of its own ([`crate::ControllerConfig::NAMES`]
//! does not list it): a spec's `cubic` is quiche's built-in CUBIC. This one
//! is built with [`Cubic::new`] or, to continue a flow another controller
//! ran, [`Cubic::take_over`].
//!
//! The RFC's windows are in segments; this state is in bytes (`f64`, as
//! LEDBAT++ keeps its window) and every formula converts with the current
//! maximum datagram size: "Implementations can use bytes to express window
//! sizes, which would require factoring in the maximum segment size wherever
//! necessary and replacing segments_acked with the number of bytes
//! acknowledged" ([§4.1](https://www.rfc-editor.org/rfc/rfc9438#section-4.1)).
//!
//! Quotations are from the text published as RFC 9438 as its authors kept it
//! (draft-ietf-tcpm-rfc8312bis, repository `NTAP/rfc8312bis`, commit
//! d662250, the -15 text); the copy of the RFC itself available here could
//! not be read past its front page, so the RFC editor's wording may differ in
//! detail. Section numbers are the RFC's.
//!
//! # The algorithm
//!
//! ```text
//! slow start (cwnd < ssthresh):   cwnd += bytes_acked                        (RFC 9002 §7.3.1)
//! congestion avoidance, per ACK, in segments of the current MSS:
//!   t        = now − t_epoch (application-limited time excluded)             (§4.2)
//!   W_cubic(t) = C·(t − K)³ + W_max,  K = ∛((W_max − cwnd_epoch)/C)          (§4.2 Eq. 1, 2)
//!   target   = W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd]                   (§4.2)
//!   W_est   += α·segments_acked/cwnd, α = α_cubic until W_est ≥ cwnd_prior   (§4.3 Eq. 4)
//!   cwnd     = W_est                            if W_cubic(t) < W_est         (§4.3)
//!   cwnd    += (target − cwnd)/cwnd · segments_acked   otherwise              (§4.4, §4.5)
//! congestion event, once per recovery period (RFC 9002 §7.3.2):
//!   W_max    = cwnd·(1 + β)/2 if cwnd < W_max, else cwnd                     (§4.7)
//!   cwnd_prior = cwnd;  ssthresh = cwnd = max(flight_size·β, 2 packets)        (§4.6)
//! persistent congestion: cwnd = 2 packets, slow start up to ssthresh          (§4.8, RFC 9002 §7.6)
//! ```
//!
//! The congestion-avoidance stage (the epoch) starts with the first ACK that
//! may grow the window in congestion avoidance: the one that ends the
//! recovery period after a loss, or the first after slow start, or the first
//! after [`Cubic::take_over`]. When no `W_max` is known (a fresh flow whose
//! slow start ended at ssthresh without a loss, or the first stage after
//! persistent congestion) or `W_max` lies below the window at that moment,
//! `W_max` is the window at the start of the stage and `K = 0`
//! ([§4.8](https://www.rfc-editor.org/rfc/rfc9438#section-4.8),
//! [§4.10](https://www.rfc-editor.org/rfc/rfc9438#section-4.10)).
//!
//! # Constants
//!
//! * [`C`] = 0.4 segments/s³;
//! * [`BETA_CUBIC`] = 0.7, dimensionless;
//! * [`ALPHA_CUBIC`] = 3(1 − β)/(1 + β) = 9/17 ≈ 0.529 segments per RTT;
//! * [`FAST_CONVERGENCE_FACTOR`] = (1 + β)/2 = 0.85, dimensionless;
//! * [`TARGET_CAP`] = 1.5, dimensionless (the target's bound, × cwnd);
//! * [`MIN_WINDOW_PACKETS`] = 2 packets.
//!
//! # Deviations from RFC 9438
//!
//! * Slow start is standard slow start ([RFC 9002 §7.3.1](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.1),
//!   `cwnd += bytes acknowledged`), not HyStart++ (RFC 9406), which
//!   [§4.10](https://www.rfc-editor.org/rfc/rfc9438#section-4.10) recommends
//!   ("CUBIC SHOULD use the HyStart++ slow start algorithm ..., or MAY use the
//!   Reno TCP slow start algorithm"). Deliberate: this controller takes over a
//!   flow in congestion avoidance; it slow-starts only when built fresh, when
//!   taken over below ssthresh, or after persistent congestion.
//! * "cwnd MUST be incremented by (target − cwnd)/cwnd for each received new
//!   ACK" ([§4.4](https://www.rfc-editor.org/rfc/rfc9438#section-4.4)) is
//!   applied per segment acknowledged: the increment is multiplied by
//!   `segments_acked`, as Eq. 4 does for `W_est`, because one QUIC ACK
//!   acknowledges many packets.
//! * In the Reno-friendly region the window becomes `W_est` only if that is
//!   larger: an ACK never lowers the window (right after the concave region
//!   the window can briefly exceed `W_est` while `W_cubic(t)` is below it).
//! * The elapsed time `t` excludes application-limited periods
//!   ([§4.2](https://www.rfc-editor.org/rfc/rfc9438#section-4.2)) this way:
//!   an ACK that finds the window less than half used moves `t_epoch` forward
//!   by the time since the previous ACK, and a packet sent with nothing in
//!   flight (a restart from idle) by the time since the last ACK.
//! * ECN is not handled (the crate's events carry none); no ECN-Echo
//!   reduction to 1 MSS.
//! * Fast convergence is always on (the RFC: "SHOULD be implemented", to be
//!   disabled only with "a single CUBIC flow and without any other traffic",
//!   which a sender cannot know).
//! * No RFC 7661 window validation: the flight size is taken as RFC 5681
//!   defines it, the larger of the bytes in flight at the event and after
//!   the latest send (`flight.rs`), capped at the window.
//! * Persistent congestion keeps the recovery period under way (as the other
//!   controllers of this crate do): losses of packets sent before it do not
//!   reduce ssthresh again; RFC 9002's pseudocode (Appendix B.8) clears the
//!   recovery start time instead.
//! * Spurious timeouts (§4.9.1) do not exist in QUIC; §4.9.2's undo is
//!   [`CongestionController::rollback`].
//! * When a stage starts without a usable `W_max` (see above), `cwnd_prior`
//!   becomes the larger of itself and the window: §4.10's "cwnd_prior =
//!   cwnd" for a slow start left without a loss, while after persistent
//!   congestion it stays the window before the loss (§4.1.2: "at the time of
//!   setting ssthresh most recently"), so `α_cubic` applies until `W_est`
//!   is back there.

use std::time::Duration;
use std::time::Instant;

use crate::flight::FlightSize;
use crate::pacing;
use crate::recovery::RecoveryPeriod;
use crate::round;
use crate::window::Checkpoint;
use crate::window::HasWindow;
use crate::window::WindowBounds;
use crate::AckEvent;
use crate::CongestionController;
use crate::LossEvent;
use crate::PathInfo;
use crate::Snapshot;

/// C, segments/s³: "C: constant that determines the aggressiveness of CUBIC
/// in competing with other congestion control algorithms in high-BDP
/// networks" ([§4.1.1](https://www.rfc-editor.org/rfc/rfc9438#section-4.1.1));
/// "C SHOULD be set to 0.4" ([§5.1](https://www.rfc-editor.org/rfc/rfc9438#section-5.1)).
pub const C: f64 = 0.4;

/// β_cubic, dimensionless: "The parameter β_cubic SHOULD be set to 0.7"
/// ([§4.6](https://www.rfc-editor.org/rfc/rfc9438#section-4.6)).
pub const BETA_CUBIC: f64 = 0.7;

/// α_cubic, segments per RTT: α_cubic = 3 · (1 − β_cubic)/(1 + β_cubic)
/// ([§4.3](https://www.rfc-editor.org/rfc/rfc9438#section-4.3)), 9/17 for
/// β = 0.7: the additive increase that gives Reno's average window.
pub const ALPHA_CUBIC: f64 = 3.0 * (1.0 - BETA_CUBIC) / (1.0 + BETA_CUBIC);

/// Fast convergence's factor on W_max, (1 + β_cubic)/2, dimensionless
/// ([§4.7](https://www.rfc-editor.org/rfc/rfc9438#section-4.7)).
pub const FAST_CONVERGENCE_FACTOR: f64 = (1.0 + BETA_CUBIC) / 2.0;

/// The target's upper bound, × cwnd, dimensionless
/// ([§4.2](https://www.rfc-editor.org/rfc/rfc9438#section-4.2)).
pub const TARGET_CAP: f64 = 1.5;

/// Minimum window, packets: "cwnd is at least 2 MSS" on a loss, and
/// "ssthresh is at least 2 MSS" ([§4.6](https://www.rfc-editor.org/rfc/rfc9438#section-4.6)).
pub const MIN_WINDOW_PACKETS: u64 = 2;

/// The current congestion-avoidance stage.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    /// t_epoch, moved forward by application-limited time.
    start: Instant,
    /// K, seconds.
    k_seconds: f64,
    /// W_est, bytes.
    w_est: f64,
}

/// Everything a spurious loss may have to restore (§4.9.2's undo_ variables).
#[derive(Clone, Copy, Debug, PartialEq)]
struct State {
    /// cwnd, bytes.
    cwnd: f64,
    /// ssthresh, bytes; infinite while unset.
    ssthresh: f64,
    /// cwnd_prior, bytes; 0 while unknown.
    cwnd_prior: f64,
    /// W_max, bytes; 0 while unknown.
    w_max: f64,
    /// The current congestion-avoidance stage, once it started.
    epoch: Option<Epoch>,
    recovery: RecoveryPeriod,
}

impl HasWindow<f64> for State {
    fn window_mut(&mut self) -> &mut f64 {
        &mut self.cwnd
    }
}

/// RFC 9438 CUBIC, window in bytes (see the module docs).
#[derive(Debug)]
pub struct Cubic {
    bounds: WindowBounds<f64>,
    s: State,
    saved: Checkpoint<State>,
    flight: FlightSize,
    /// Smoothed RTT of the latest ACK that carried a sample.
    srtt: Option<Duration>,
    /// The latest ACK, or a restart from idle: application-limited time is
    /// measured from it.
    last_activity: Option<Instant>,
}

impl Cubic {
    /// Fresh: slow start at `path.initial_window_packets` × mss, floor
    /// [`MIN_WINDOW_PACKETS`].
    pub fn new(path: PathInfo) -> Self {
        let bounds = WindowBounds::<f64>::new(path.max_datagram_size, MIN_WINDOW_PACKETS);
        let cwnd = bounds.clamp(path.initial_window_packets as f64 * bounds.mss);
        Self::with_state(
            bounds,
            State {
                cwnd,
                ssthresh: f64::INFINITY,
                cwnd_prior: 0.0,
                w_max: 0.0,
                epoch: None,
                recovery: RecoveryPeriod::default(),
            },
        )
    }

    /// Takes over a flow another controller ran: congestion avoidance (or
    /// slow start if cwnd < ssthresh) at `cwnd_bytes` with `ssthresh_bytes`
    /// (`None` = unset, `u64::MAX` semantics), W_max = cwnd (as if the last
    /// congestion event happened at this window), no epoch yet (it starts at
    /// the next ACK in congestion avoidance). The window is clamped to
    /// [`MIN_WINDOW_PACKETS`] and [`crate::MAX_WINDOW_BYTES`].
    pub fn take_over(path: PathInfo, cwnd_bytes: u64, ssthresh_bytes: Option<u64>) -> Self {
        let bounds = WindowBounds::<f64>::new(path.max_datagram_size, MIN_WINDOW_PACKETS);
        let cwnd = bounds.clamp(cwnd_bytes as f64);
        let ssthresh = match ssthresh_bytes {
            None | Some(u64::MAX) => f64::INFINITY,
            Some(b) => b as f64,
        };
        Self::with_state(
            bounds,
            State {
                cwnd,
                ssthresh,
                cwnd_prior: cwnd,
                w_max: cwnd,
                epoch: None,
                recovery: RecoveryPeriod::default(),
            },
        )
    }

    fn with_state(bounds: WindowBounds<f64>, s: State) -> Self {
        Self {
            bounds,
            s,
            saved: Checkpoint::default(),
            flight: FlightSize::default(),
            srtt: None,
            last_activity: None,
        }
    }

    /// Starts a congestion-avoidance stage at `now` with the current window
    /// as cwnd_epoch.
    fn start_epoch(&mut self, now: Instant) -> Epoch {
        let cwnd_epoch = self.s.cwnd;
        let k_seconds = if self.s.w_max <= cwnd_epoch {
            // §4.8 (after a timeout) and §4.10 (slow start left without a
            // loss): "K is set to 0, and W_max is set to the congestion
            // window size at the beginning of the current congestion
            // avoidance stage"; §4.10: "CUBIC sets cwnd_prior = cwnd".
            self.s.w_max = cwnd_epoch;
            self.s.cwnd_prior = self.s.cwnd_prior.max(cwnd_epoch);
            0.0
        } else {
            // §4.2 Eq. 2: K = ∛((W_max − cwnd_epoch)/C), in segments.
            ((self.s.w_max - cwnd_epoch) / self.bounds.mss / C).cbrt()
        };
        Epoch {
            start: now,
            k_seconds,
            // §4.3: "W_est is set equal to cwnd_epoch at the start of the
            // congestion avoidance stage."
            w_est: cwnd_epoch,
        }
    }

    /// One ACK of `bytes_acked` in congestion avoidance, smoothed RTT `rtt`.
    fn congestion_avoidance(&mut self, now: Instant, bytes_acked: f64, rtt: Duration) {
        let mut epoch = match self.s.epoch {
            Some(e) => e,
            None => self.start_epoch(now),
        };
        let mss = self.bounds.mss;
        let cwnd = self.s.cwnd / mss;
        let w_max = self.s.w_max / mss;
        let segments_acked = bytes_acked / mss;
        // §4.2: "t is the elapsed time in seconds from the beginning of the
        // current congestion avoidance stage".
        let t = now.saturating_duration_since(epoch.start).as_secs_f64();
        // §4.2 Eq. 1: W_cubic(t) = C·(t − K)³ + W_max.
        let w_cubic = |t: f64| C * (t - epoch.k_seconds).powi(3) + w_max;
        // §4.2: "Upon receiving a new ACK during congestion avoidance, CUBIC
        // computes the target congestion window size after the next RTT ...
        // where RTT is the smoothed round-trip time": W_cubic(t + RTT),
        // bounded below by cwnd and above by 1.5·cwnd.
        let target = w_cubic(t + rtt.as_secs_f64())
            .max(cwnd)
            .min(TARGET_CAP * cwnd);

        // §4.3: "Once W_est has grown to reach the cwnd at the time of most
        // recently setting ssthresh, that is, W_est >= cwnd_prior, the
        // sender SHOULD set α_cubic to 1".
        let alpha = if epoch.w_est >= self.s.cwnd_prior {
            1.0
        } else {
            ALPHA_CUBIC
        };
        // §4.3 Eq. 4: W_est = W_est + α_cubic · segments_acked/cwnd.
        epoch.w_est += alpha * segments_acked / cwnd * mss;

        let grown = if w_cubic(t) < epoch.w_est / mss {
            // §4.3: "CUBIC checks whether W_cubic(t) is less than W_est. If
            // so, CUBIC is in the Reno-friendly region and cwnd SHOULD be set
            // to W_est at each reception of a new ACK." (Never lower: see
            // the deviations.)
            self.s.cwnd.max(epoch.w_est)
        } else {
            // §4.4 (cwnd < W_max, concave) and §4.5 (cwnd ≥ W_max, convex):
            // "cwnd MUST be incremented by (target − cwnd)/cwnd for each
            // received new ACK", here per segment acknowledged.
            self.s.cwnd + (target - cwnd) / cwnd * segments_acked * mss
        };
        self.s.cwnd = self.bounds.clamp(grown);
        self.s.epoch = Some(epoch);
    }

    fn state_name(&self) -> &'static str {
        if self.s.recovery.in_recovery() {
            "recovery"
        } else if self.s.cwnd < self.s.ssthresh {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }
}

impl CongestionController for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64) {
        self.flight.on_packet_sent(bytes, bytes_in_flight);
        if bytes_in_flight == 0 {
            // A restart from idle: §5.8, "t in Eq. 1 does not include
            // application-limited periods, such as idle periods".
            if let (Some(epoch), Some(last)) = (self.s.epoch.as_mut(), self.last_activity) {
                epoch.start += now.saturating_duration_since(last);
            }
            self.last_activity = Some(now);
        }
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let now = ack.now;
        if ack.rtt.new_sample {
            self.srtt = Some(ack.rtt.smoothed_rtt);
        }
        let previous = self.last_activity.replace(now);
        // RFC 9002 §7.3.2: "A recovery period ends and the sender enters
        // congestion avoidance when a packet sent during the recovery period
        // is acknowledged"; no growth before.
        if self.s.recovery.in_recovery() && !self.s.recovery.on_ack(round::largest_sent(ack.acked))
        {
            return;
        }
        // §5.8: "CUBIC does not increase its congestion window if a flow is
        // application-limited"; here, like the crate's other controllers,
        // it does not grow a window that is less than half used.
        let flight = self.flight.at_ack(ack.bytes_in_flight);
        if (flight as f64) * 2.0 < self.s.cwnd {
            // §4.2: "The elapsed time t in Eq. 1 MUST NOT include periods
            // during which cwnd has not been updated due to
            // application-limited behavior".
            if let (Some(epoch), Some(previous)) = (self.s.epoch.as_mut(), previous) {
                epoch.start += now.saturating_duration_since(previous);
            }
            return;
        }
        let bytes_acked = ack.bytes_acked() as f64;
        if self.s.cwnd < self.s.ssthresh {
            // §4.10 with RFC 9002 §7.3.1: "the congestion window increases
            // by the number of bytes acknowledged when each acknowledgment
            // is processed".
            self.s.cwnd = self.bounds.clamp(self.s.cwnd + bytes_acked);
            return;
        }
        let rtt = self.srtt.unwrap_or(ack.rtt.smoothed_rtt);
        self.congestion_avoidance(now, bytes_acked, rtt);
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        // RFC 9002 §7.3.2: one reduction per recovery period.
        if !self.s.recovery.on_loss(loss) {
            return;
        }
        let cwnd = self.s.cwnd;
        // §4.7's equation: W_max = cwnd · (1 + β_cubic)/2 if cwnd < W_max
        // ("further reduce W_max"), otherwise cwnd ("remember cwnd before
        // reduction").
        self.s.w_max = if cwnd < self.s.w_max {
            cwnd * FAST_CONVERGENCE_FACTOR
        } else {
            cwnd
        };
        // §4.6's equations: ssthresh = flight_size · β_cubic, cwnd_prior =
        // cwnd, cwnd = max(ssthresh, 2) on a loss, ssthresh = max(ssthresh,
        // 2), in segments. flight_size is the RFC's choice; of
        // implementations that use cwnd it says "Implementations that use
        // cwnd MUST use other measures to prevent cwnd from growing when
        // the volume of bytes in flight is smaller than cwnd", which the
        // half-used rule does not do. Capped at the window.
        let flight_size = (self.flight.at_ack(loss.bytes_in_flight) as f64).min(cwnd);
        let reduced = self.bounds.clamp(flight_size * BETA_CUBIC);
        self.s.cwnd_prior = cwnd;
        self.s.ssthresh = reduced;
        self.s.cwnd = reduced;
        // The next congestion-avoidance ACK starts a new stage.
        self.s.epoch = None;
    }

    fn on_persistent_congestion(&mut self, _now: Instant) {
        // §4.8: "In case of a timeout, CUBIC follows Reno to reduce cwnd
        // [RFC 5681], but sets ssthresh using β_cubic (same as in
        // Section 4.6) ...": the window goes to the minimum (RFC 9002 §7.6.2);
        // ssthresh was set by the congestion event that reported the
        // losses. "During the first congestion avoidance stage after a
        // timeout, ... K is set to 0, and W_max is set to the congestion
        // window size at the beginning of the current congestion avoidance
        // stage": W_max is forgotten, so start_epoch does that.
        self.s.cwnd = self.bounds.min;
        self.s.w_max = 0.0;
        self.s.epoch = None;
    }

    fn checkpoint(&mut self) {
        // §4.9.2: "a CUBIC implementation MAY save the current value of the
        // following variables before the congestion window is reduced".
        self.saved.save(&self.s);
    }

    fn rollback(&mut self) -> bool {
        // §4.9.2: "CUBIC MAY restore the original values of the
        // above-mentioned variables as follows if the current cwnd is lower
        // than cwnd_prior"; otherwise it "SHOULD continue to use the current
        // and the most recent values of these variables". The checkpoint is
        // used up either way.
        let mut restored = self.s;
        if !self.saved.rollback(&mut restored, &self.bounds) || self.s.cwnd >= self.s.cwnd_prior {
            return false;
        }
        self.s = restored;
        true
    }

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.bounds
            .on_mtu_change(max_datagram_size, &mut self.s.cwnd);
    }

    /// The window rounded to a whole byte (β·cwnd in binary floating
    /// point, e.g. 0.7 × 84000 = 58799.99999999999, would lose one).
    fn window(&self) -> u64 {
        self.s.cwnd.round() as u64
    }

    fn pacing_rate(&self) -> Option<u64> {
        let slow_start = pacing::in_slow_start(self.s.cwnd, self.s.ssthresh);
        pacing::rate(self.window(), self.srtt, slow_start)
    }

    fn state(&self, _now: Instant) -> &'static str {
        self.state_name()
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd: self.window(),
            ssthresh: self
                .s
                .ssthresh
                .is_finite()
                .then_some(self.s.ssthresh.round() as u64),
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

    fn fresh() -> Driver<Cubic> {
        Driver::new(Cubic::new(PathInfo::default()))
    }

    fn taken_over(cwnd: u64, ssthresh: Option<u64>) -> Driver<Cubic> {
        Driver::new(Cubic::take_over(PathInfo::default(), cwnd, ssthresh))
    }

    /// One round trip of `rtt` whose single ACK acknowledges the whole
    /// window (a packet sent at the previous ACK).
    fn round(d: &mut Driver<Cubic>, rtt: Duration) {
        let w = d.cc.window();
        d.round(rtt, w);
    }

    /// A loss 1 ms from now of a packet sent now; returns when it was
    /// detected (the recovery period's start).
    fn lose(d: &mut Driver<Cubic>) -> Instant {
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        d.now
    }

    /// Ends the recovery period that started at `recovery`: `rtt` after
    /// it, an ACK of `bytes` for a packet sent 1 ms after it.
    fn end_recovery(d: &mut Driver<Cubic>, recovery: Instant, bytes: u64, rtt: Duration) {
        d.now = recovery + rtt;
        d.ack(recovery + ms(1), bytes, rtt);
    }

    fn w_max(d: &Driver<Cubic>) -> f64 {
        d.cc.s.w_max
    }

    fn k_seconds(d: &Driver<Cubic>) -> f64 {
        d.cc.s.epoch.map(|e| e.k_seconds).unwrap_or(f64::NAN)
    }

    #[test]
    fn constants() {
        // 3 · 0.3/1.7 = 9/17, to within f64 rounding.
        assert!((ALPHA_CUBIC - 9.0 / 17.0).abs() < 1e-15);
        assert_eq!(FAST_CONVERGENCE_FACTOR, 0.85);
    }

    #[test]
    fn slow_start_doubles_per_round_and_a_loss_multiplies_by_beta_once_per_period() {
        let mut d = fresh();
        assert_eq!(d.cc.name(), "cubic");
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("slow_start", 12_000));
        assert_eq!(d.cc.snapshot().ssthresh, None);
        round(&mut d, ms(100));
        assert_eq!(d.cc.window(), 24_000);
        round(&mut d, ms(100));
        round(&mut d, ms(100));
        assert_eq!(d.cc.window(), 96_000);
        let recovery = lose(&mut d);
        // ssthresh = flight_size · β = 96000 · 0.7; cwnd = ssthresh.
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("recovery", 67_200));
        assert_eq!(d.cc.snapshot().ssthresh, Some(67_200));
        assert_eq!(w_max(&d), 96_000.0);
        // A loss of a packet sent at the period's start: no second reduction.
        d.advance(ms(1));
        d.loss(recovery);
        assert_eq!(d.cc.window(), 67_200);
        // No growth in recovery: an ACK of a packet sent before it.
        d.ack_old(ms(1), MSS, ms(100));
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("recovery", 67_200));
        // The ACK of a packet sent after the period began ends it and, in
        // congestion avoidance, starts the epoch: K = ∛((80 − 56)/0.4) =
        // ∛60 s; t = 0, so W_cubic(0) = 56 segments < W_est = 56 + (9/17) ·
        // 1/56: the Reno-friendly region, cwnd = W_est = 67211.34 bytes.
        end_recovery(&mut d, recovery, MSS, ms(100));
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 67_211)
        );
        assert_eq!(k_seconds(&d), 60f64.cbrt());
        // A loss after the period: a new reduction, from the flight of
        // 67211 bytes: 0.7 × 67211 = 47047.7. The window, 67211.34 bytes, is
        // below W_max = 80 segments: fast convergence, W_max = 0.85 ×
        // 67211.34 = 57129.64 bytes.
        lose(&mut d);
        assert_eq!(d.cc.window(), 47_048);
        assert_eq!(w_max(&d).round(), 57_130.0);
    }

    /// Loss at W_max = 100 segments (120000 bytes), then 100 ms rounds each
    /// acknowledging the whole window; returns the window after the ACK
    /// that ends recovery (index 0) and after each of `rounds` rounds.
    fn after_loss_at_100_segments(rounds: usize) -> Vec<u64> {
        let mut d = taken_over(120_000, Some(120_000));
        let recovery = lose(&mut d);
        assert_eq!(d.cc.window(), 84_000);
        assert_eq!(w_max(&d), 120_000.0);
        end_recovery(&mut d, recovery, 84_000, ms(100));
        let mut windows = vec![d.cc.window()];
        for _ in 0..rounds {
            round(&mut d, ms(100));
            windows.push(d.cc.window());
        }
        windows
    }

    #[test]
    fn after_a_loss_the_window_follows_the_cubic_function() {
        // W_max = 100 segments, cwnd_epoch = 70, K = ∛(30/0.4) = ∛75 =
        // 4.2172 s. The ACK ending recovery starts the epoch (t = 0) in
        // the Reno-friendly region (W_cubic(0) = 70 < W_est = 70 + 9/17):
        // 70.529 segments = 84635.29 bytes. From then on each round's ACK,
        // at t = 0.1·i s, acknowledges the window and sets it to
        // target = W_cubic(t + RTT) = 0.4·(t + 0.1 − K)³ + 100 segments
        // (to within 0.01 byte: a window of whole bytes is acknowledged).
        let w = after_loss_at_100_segments(50);
        assert_eq!(w[0], 84_635);
        // t = 0.1: W_cubic(0.2) = 0.4·(0.2 − 4.2172)³ + 100 = 74.069 seg.
        assert_eq!(w[1], 88_883);
        // Concave: W_cubic(1.1) = 87.885, (2.1) = 96.204, (3.1) = 99.442,
        // (4.1) = 99.99936 segments; each second adds less.
        assert_eq!(
            [w[10], w[20], w[30], w[40]],
            [105_461, 115_445, 119_331, 119_999]
        );
        // At K: W_cubic(4.2) = 100 − 0.4·0.0172³ = 99.999998 segments,
        // 119999.998 bytes: W_max to the byte.
        assert_eq!(w[41], 120_000);
        // Convex: W_cubic(4.3) = 100.000227, (4.4) = 100.00245, (5.1) =
        // 100.275 segments; each round adds more.
        assert_eq!([w[42], w[43], w[50]], [120_000, 120_003, 120_330]);
        let steps: Vec<u64> = w[44..=50].windows(2).map(|p| p[1] - p[0]).collect();
        assert_eq!(steps, [16, 27, 41, 58, 77, 100]);
    }

    #[test]
    fn the_reno_friendly_region_overtakes_the_cubic_function_later() {
        // Same run: W_est grows α_cubic = 9/17 segment per round until it
        // reaches cwnd_prior = 100 segments (after round 56), then 1 per
        // round; at t = 5.8 s W_est = 102.18 > W_cubic(5.8) = 101.59, and
        // the window is W_est from then on: +1200 bytes a round.
        let w = after_loss_at_100_segments(60);
        assert_eq!([w[56], w[57]], [121_565, 121_903]);
        assert_eq!([w[58], w[59], w[60]], [122_612, 123_812, 125_012]);
    }

    #[test]
    fn reno_friendly_region_on_a_short_rtt_grows_w_est_by_alpha_then_by_one() {
        // W_max = 10 segments (12000 bytes), RTT 10 ms: the Reno estimate
        // outruns W_cubic (K = ∛(3/0.4) = ∛7.5 = 1.957 s).
        let mut d = taken_over(12_000, Some(12_000));
        let recovery = lose(&mut d);
        assert_eq!(d.cc.window(), 8_400);
        // ACKs of one packet each, 1 ms apart; the first ends recovery and
        // starts the epoch with W_est = cwnd_epoch = 7 segments.
        d.now = recovery + ms(10);
        let mut windows = Vec::new();
        for _ in 0..50 {
            d.ack(recovery + ms(1), MSS, ms(10));
            windows.push(d.cc.window());
            d.advance(ms(1));
        }
        assert_eq!(k_seconds(&d), 7.5f64.cbrt());
        // W_est += α_cubic · 1/cwnd per ACK (Eq. 4) and cwnd = W_est:
        // 7 + (9/17)/7 = 7.07563 segments = 8490.76 bytes, then
        // 7.07563 + (9/17)/7.07563 = 7.15045 segments = 8580.54 bytes...
        assert_eq!(windows[..3], [8_491, 8_581, 8_669]);
        // ...W_cubic(t) stays below (at t = 50 ms: 7.2 segments).
        // After 48 ACKs W_est = 12000.79 bytes ≥ cwnd_prior = 12000: α is 1
        // from then on. Steps: 1200·(9/17)/9.947 = 63.9 bytes before,
        // 1200/10.0007 = 119.99 after.
        assert_eq!(windows[46..50], [11_937, 12_001, 12_121, 12_240]);
        assert_eq!(d.cc.s.epoch.map(|e| e.w_est.round()), Some(12_240.0));
    }

    #[test]
    fn fast_convergence_lowers_w_max_on_a_loss_below_it() {
        let mut d = taken_over(120_000, Some(120_000));
        let recovery = lose(&mut d);
        assert_eq!((d.cc.window(), w_max(&d)), (84_000, 120_000.0));
        // An application-limited ACK (nothing in flight) ends recovery
        // without growth.
        d.now = recovery + ms(100);
        d.ack_full(recovery + ms(1), MSS, ms(100), ms(0), true, Some(0));
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 84_000)
        );
        // The second loss finds cwnd = 70 < W_max = 100 segments:
        // W_max = 84000 · (1 + 0.7)/2 = 71400 bytes; cwnd = 0.7 · 84000.
        let recovery = lose(&mut d);
        assert_eq!(w_max(&d), 71_400.0);
        assert_eq!(d.cc.window(), 58_800);
        assert_eq!(d.cc.snapshot().ssthresh, Some(58_800));
        // The next stage's K = ∛((59.5 − 49)/0.4) = ∛26.25 = 2.972 s.
        end_recovery(&mut d, recovery, MSS, ms(100));
        assert!((k_seconds(&d) - 26.25f64.cbrt()).abs() < 1e-12);
        // A loss at or above W_max remembers the window itself.
        let mut d = taken_over(120_000, Some(120_000));
        d.cc.s.w_max = 100_000.0;
        lose(&mut d);
        assert_eq!(w_max(&d), 120_000.0);
    }

    #[test]
    fn the_target_is_at_most_one_and_a_half_windows() {
        // W_max = cwnd_epoch = 10 segments, K = 0, RTT 1 s.
        let mut d = taken_over(12_000, Some(12_000));
        d.advance(ms(1000));
        d.ack(d.now - ms(1000), MSS, ms(1000));
        // t = 0: W_cubic(0) = 10 < W_est = 10 + 1/10 (α = 1, W_est ≥
        // cwnd_prior): 10.1 segments.
        assert_eq!(d.cc.window(), 12_120);
        // t = 3 s: W_cubic(3) = 10 + 0.4·27 = 20.8 > W_est = 11.1, and
        // W_cubic(t + RTT) = 10 + 0.4·64 = 35.6 segments (42720 bytes) is
        // capped at 1.5 · 10.1 = 15.15 segments: the whole window
        // acknowledged adds (15.15 − 10.1)/10.1 per segment, 5.05 segments.
        d.advance(ms(3000));
        let w = d.cc.window();
        d.ack(d.now - ms(1000), w, ms(1000));
        assert_eq!(d.cc.window(), 18_180);
    }

    #[test]
    fn no_growth_while_less_than_half_the_window_is_used() {
        let mut d = taken_over(120_000, Some(120_000));
        d.advance(ms(100));
        d.ack_full(d.now - ms(100), MSS, ms(100), ms(0), true, Some(59_999));
        assert_eq!(d.cc.window(), 120_000);
        assert!(d.cc.s.epoch.is_none(), "no stage starts either");
        // The flight after the latest send counts (flight.rs).
        d.cc.on_packet_sent(d.now, MSS, 58_800);
        d.advance(ms(1));
        d.ack_full(d.now - ms(100), MSS, ms(100), ms(0), true, Some(1_200));
        // Half used: 60000 · 2 = 120000 is not less than the window. The
        // stage starts: W_est = 100 + 1/100 segments.
        assert_eq!(d.cc.window(), 120_012);
    }

    /// A taken-over flow at 100 segments: an ACK starts the stage, then
    /// `app_limited` ACKs 1 s apart with nothing in flight, an idle period
    /// of `idle` ended by a send with nothing in flight, and 3 s later an
    /// ACK of the whole window; returns the window.
    fn after_three_seconds_of_growth(app_limited: u32, idle: Duration) -> u64 {
        let mut d = taken_over(120_000, Some(120_000));
        d.advance(ms(100));
        d.ack(d.now - ms(100), MSS, ms(100));
        assert_eq!(d.cc.window(), 120_012);
        for _ in 0..app_limited {
            d.advance(ms(1000));
            d.ack_full(d.now - ms(100), MSS, ms(100), ms(0), true, Some(0));
        }
        d.advance(idle);
        d.cc.on_packet_sent(d.now, MSS, 0);
        d.advance(ms(3000));
        let w = d.cc.window();
        d.ack(d.now - ms(100), w, ms(100));
        d.cc.window()
    }

    #[test]
    fn application_limited_and_idle_time_is_not_elapsed_time() {
        // K = 0, W_max = 100 segments; at t = 3 s, W_cubic(3) = 110.8 >
        // W_est = 101.01, and target = W_cubic(3.1) = 100 + 0.4·29.791 =
        // 111.9164 segments = 134299.68 bytes.
        assert_eq!(after_three_seconds_of_growth(0, Duration::ZERO), 134_300);
        // Ten application-limited seconds, or ten idle ones, do not count;
        // counted, t = 13 s would hit the 1.5 × cap: 150.015 segments.
        assert_eq!(after_three_seconds_of_growth(10, Duration::ZERO), 134_300);
        assert_eq!(after_three_seconds_of_growth(0, ms(10_000)), 134_300);
    }

    #[test]
    fn take_over_starts_in_congestion_avoidance_at_w_max() {
        let mut d = taken_over(120_000, Some(120_000));
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 120_000)
        );
        assert_eq!(d.cc.snapshot().ssthresh, Some(120_000));
        assert_eq!(w_max(&d), 120_000.0);
        assert!(d.cc.s.epoch.is_none());
        // 100 ms rounds, each ACK acknowledging the window. The first
        // starts the stage: K = 0, W_est = 100 segments = cwnd_prior, so
        // α = 1: Reno's one segment per round while W_est = 101 + t/0.1 is
        // above W_cubic(t) = 100 + 0.4·t³, that is up to t = 5 s.
        let mut w = Vec::new();
        for _ in 0..=56 {
            round(&mut d, ms(100));
            w.push(d.cc.window());
        }
        assert_eq!(k_seconds(&d), 0.0);
        assert_eq!([w[0], w[10], w[50]], [121_200, 133_200, 181_200]);
        // t = 5.1 s: W_cubic(5.1) = 153.06 > W_est = 152, convex from then
        // on: target W_cubic(5.2) = 156.24 segments, W_cubic(5.3) = 159.55...
        let steps: Vec<u64> = w[50..=56].windows(2).map(|p| p[1] - p[0]).collect();
        assert_eq!(steps, [6_292, 3_969, 4_122, 4_277, 4_436, 4_597]);
        // Below ssthresh (or with none) it slow-starts first.
        let d = taken_over(120_000, None);
        assert_eq!(d.cc.state(d.now), "slow_start");
        assert_eq!(d.cc.snapshot().ssthresh, None);
    }

    #[test]
    fn take_over_below_ssthresh_slow_starts_and_then_w_max_is_the_window() {
        let mut d = taken_over(24_000, Some(40_000));
        assert_eq!(d.cc.state(d.now), "slow_start");
        round(&mut d, ms(100));
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 48_000)
        );
        // The first congestion-avoidance ACK: W_max (20 segments) is below
        // the window, so W_max = cwnd_epoch = 40 segments, K = 0 (§4.10).
        d.advance(ms(1));
        d.ack(d.now - ms(100), MSS, ms(100));
        assert_eq!((w_max(&d), k_seconds(&d)), (48_000.0, 0.0));
        assert_eq!(d.cc.s.cwnd_prior, 48_000.0);
    }

    #[test]
    fn persistent_congestion_collapses_to_two_packets_and_slow_starts_again() {
        let mut d = fresh();
        round(&mut d, ms(100));
        let recovery = lose(&mut d);
        assert_eq!(d.cc.window(), 16_800);
        d.cc.on_persistent_congestion(d.now);
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("recovery", 2 * MSS));
        assert_eq!(d.cc.snapshot().ssthresh, Some(16_800));
        // The recovery period ends with the ACK of a packet sent after it;
        // slow start up to ssthresh: 2400 → 4800 → 9600 → 19200.
        end_recovery(&mut d, recovery, 2 * MSS, ms(100));
        assert_eq!((d.cc.state(d.now), d.cc.window()), ("slow_start", 4_800));
        for _ in 0..2 {
            round(&mut d, ms(100));
        }
        assert_eq!(
            (d.cc.state(d.now), d.cc.window()),
            ("congestion_avoidance", 19_200)
        );
        // The first stage after it: W_max = cwnd_epoch = 16 segments, K = 0
        // (§4.8); cwnd_prior stays 24000 (20 segments, before the loss), so
        // α = α_cubic: W_est = 16 + (9/17)/16 segments = 19239.71 bytes.
        d.advance(ms(1));
        d.ack(d.now - ms(1), MSS, ms(100));
        assert_eq!((w_max(&d), k_seconds(&d)), (19_200.0, 0.0));
        assert_eq!(d.cc.window(), 19_240);
    }

    #[test]
    fn rollback_restores_the_state_before_a_spurious_loss() {
        let mut d = taken_over(120_000, Some(120_000));
        for _ in 0..3 {
            round(&mut d, ms(100));
        }
        let before = d.cc.s;
        assert_eq!(d.cc.window(), 123_600);
        assert!(!d.cc.rollback(), "no checkpoint");
        d.cc.checkpoint();
        lose(&mut d);
        assert_eq!(d.cc.window(), 86_520);
        assert!(d.cc.rollback());
        // cwnd, ssthresh, cwnd_prior, W_max, K, t_epoch, W_est.
        assert_eq!(d.cc.s, before);
        assert!(!d.cc.rollback(), "used up");
        // §4.9.2: no restore once the window is back above cwnd_prior
        // (103 segments, reached at K = ∛((103 − 72.1)/0.4) = 4.26 s; at
        // t = 5 s, W_cubic(5.1) = 103.24 segments).
        d.cc.checkpoint();
        let recovery = lose(&mut d);
        end_recovery(&mut d, recovery, 86_520, ms(100));
        for _ in 0..50 {
            round(&mut d, ms(100));
        }
        assert_eq!(d.cc.window(), 123_886);
        let grown = d.cc.s;
        assert!(!d.cc.rollback());
        assert_eq!(d.cc.s, grown);
        assert!(!d.cc.rollback(), "the checkpoint was used up anyway");
    }

    #[test]
    fn mtu_changes_move_the_floor_and_clamp_the_window() {
        let d = Driver::new(Cubic::new(PathInfo {
            max_datagram_size: 1200,
            initial_window_packets: 1,
        }));
        assert_eq!(d.cc.window(), 2_400, "floor of two packets");
        let mut d = taken_over(2_400, Some(2_400));
        d.cc.on_mtu_change(1500);
        assert_eq!(d.cc.window(), 3_000);
        d.cc.on_mtu_change(1200);
        assert_eq!(d.cc.window(), 3_000, "a lower floor does not shrink it");
        // Formulas in segments of the new size: W_est = 2 + 1/2 segments
        // of 1500 bytes (α = 1).
        d.cc.on_mtu_change(1500);
        d.advance(ms(100));
        d.ack(d.now - ms(100), 1500, ms(100));
        assert_eq!(d.cc.window(), 3_750);
    }

    #[test]
    fn pacing_is_twice_the_window_rate_in_slow_start_and_1_2_times_after() {
        let mut d = fresh();
        assert_eq!(d.cc.pacing_rate(), None, "no RTT sample yet");
        d.advance(ms(50));
        d.ack(d.now - ms(50), MSS, ms(50));
        // 13200 bytes per 50 ms, × 2.
        assert_eq!(d.cc.pacing_rate(), Some(528_000));
        let d = taken_over(12_000, Some(12_000));
        let mut d = d;
        d.advance(ms(100));
        d.ack(d.now - ms(100), MSS, ms(100));
        // 12120 bytes per 100 ms, × 1.2.
        assert_eq!(d.cc.pacing_rate(), Some(145_440));
    }
}
