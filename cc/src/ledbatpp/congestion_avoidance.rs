//! Congestion avoidance of LEDBAT++: GAIN from the base delay (draft -01
//! §4.2) and the per-round rule around TARGET (§4.3), with the options of
//! `profile=full` that change it (`fill_empty_queue`, `decrease`,
//! `decrease_constant`, `target_margin`, `gain_max_queue`, `gain_quiet`,
//! `sharp_decrease`; `profiles.rs`).
//!
//! # A choice the draft leaves open
//!
//! * **CEIL.** The draft defines CEIL(X) as "the smallest integer larger
//!   than X" and this controller follows it: when 2T/base is a whole number
//!   GAIN is one step smaller than with the usual ceiling (base 60 ms: 1/3
//!   instead of 1/2; 120 ms: 1/2 instead of 1; 30 ms: 1/5; 20 ms: 1/7;
//!   40 ms: 1/4). Any other base gets the same GAIN either way. The seed's
//!   prose ("equal to 0.5 for base RTTs of 60 ms") reads as the usual
//!   ceiling, its footnote as the draft's.

use std::time::Duration;
use std::time::Instant;

use super::Decrease;
use super::Deference;
use super::LedbatPlusPlus;
use crate::delay;

impl LedbatPlusPlus {
    /// GAIN for a base delay; the smallest GAIN while the base is unknown
    /// or zero.
    pub(super) fn gain_for(&self, base: Option<Duration>) -> f64 {
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

    /// The §4.3 rule for one ACK of `bytes` at queuing delay `q` in
    /// congestion avoidance; `largest` is the newest packet it acknowledges
    /// and `skipping` says its sample is ignored (`skip_rtt_after_restore`).
    ///
    /// Three steps, as docs/ledbatpp-full.md's "Per-ACK congestion
    /// avoidance as a table" states them: the queue's [`QueueBand`], the
    /// [`Permit`] (the first growth whose guards all hold), then the change
    /// the table gives for the pair.
    pub(super) fn congestion_avoidance_on_ack(
        &mut self,
        now: Instant,
        bytes: f64,
        q: Duration,
        largest: Option<Instant>,
        may_grow: bool,
        skipping: bool,
    ) {
        if skipping {
            return;
        }
        // §4.3, seed Eqs. (3) and (4): per RTT, CW += GAIN if q < T,
        // CW += max(−CW/2, GAIN − C·CW·(q/T − 1)) if q > T (in MSS),
        // spread over the round's ACKs.
        // (Comparisons rather than `f64::max`/`min`, which also handle NaN:
        // none of these is NaN, so the results are the same in fewer
        // instructions on the per-ACK path.)
        let w = if self.round_cwnd < self.bounds.min {
            self.bounds.min
        } else {
            self.round_cwnd
        };
        // `fq_yield`: a yielded window does not grow (`flow_queue.rs`).
        let yielded = !self.flow_queue_allows_growth();
        let q_ns = delay::nanos(q);
        let band = self.queue_band(q, q_ns);
        let permit = self.permit(now, band, q_ns, largest, may_grow, yielded);
        self.s.fill.active = permit == Permit::Fill;
        let growth = match permit {
            // `fill_empty_queue`: one byte per byte acknowledged.
            Permit::Fill => bytes,
            Permit::Gain => self.gain * self.bounds.mss * bytes / w,
            Permit::None => 0.0,
        };
        let mut change = match band {
            QueueBand::Empty | QueueBand::BelowTarget => growth,
            // The decrease, unless [`crate::deadline`] steers the
            // controller at its top level (no delay response at all).
            QueueBand::NearTarget | QueueBand::FarAbove if self.deference == Deference::None => {
                growth
            }
            QueueBand::NearTarget | QueueBand::FarAbove => {
                // `sharp_decrease`: far above T the excess is measured
                // against T, as §4.3's `C·CW·(q/T − 1)` quoted above,
                // bounded by its −CW/2 (a deviation from `excess_queue`,
                // ours, not the draft's; profiles.rs has what it measured).
                // An LBE rule, as the GAIN rules; not in a recovery period,
                // whose loss already halved the window this round trip.
                let sharp = band == QueueBand::FarAbove
                    && self.deference == Deference::Full
                    && !self.s.recovery.in_recovery();
                // `decrease=excess_queue`: the excess over one RTT,
                // (q − T)/srtt of the window, instead of (q − T)/T.
                let per = match (self.cfg.decrease, self.srtt) {
                    (Decrease::ExcessQueue, Some(srtt)) if !srtt.is_zero() && !sharp => {
                        delay::nanos(srtt)
                    }
                    _ => self.target_ns,
                };
                // `target_margin`: the decrease starts that much below T.
                let from = self.target_ns - self.margin_ns;
                let decreased = growth - self.cfg.decrease_constant * ((q_ns - from) / per) * bytes;
                let floor = -bytes / 2.0;
                if decreased < floor {
                    floor
                } else {
                    decreased
                }
            }
        };
        // Growth caps: in recovery, application-limited, yielded.
        if (!may_grow || yielded) && change > 0.0 {
            change = 0.0;
        }
        if permit == Permit::Fill && change > 0.0 {
            self.s.gain_quiet.fast_growth_at = Some(now);
        }
        self.s.cwnd = self.bounds.clamp(self.s.cwnd + change);
    }

    /// The band the queuing delay `q` (`q_ns` in nanoseconds) is in. The
    /// decrease's bands come first: with research keys that put
    /// `empty_queue` above T − `target_margin` (never so in a profile),
    /// the overlap is near T, so the window does not fill while it
    /// decreases (until 2026-11-28 it did both there).
    fn queue_band(&self, q: Duration, q_ns: f64) -> QueueBand {
        if q_ns > self.target_ns - self.margin_ns {
            // `sharp_decrease`: above that multiple of T.
            match self.cfg.sharp_decrease {
                Some(above) if q_ns > above * self.target_ns => QueueBand::FarAbove,
                _ => QueueBand::NearTarget,
            }
        } else if q <= self.empty_queue {
            QueueBand::Empty
        } else {
            QueueBand::BelowTarget
        }
    }

    /// The growth this ACK may bring: the first of fill, GAIN and none
    /// whose guards all hold. The cheap tests first: most ACKs fail them.
    fn permit(
        &self,
        now: Instant,
        band: QueueBand,
        q_ns: f64,
        largest: Option<Instant>,
        may_grow: bool,
        yielded: bool,
    ) -> Permit {
        // `fill_empty_queue`, on an empty queue, unless yielded or the
        // window may not grow (recovery, application-limited: the fill's
        // pacing would then speed up a window that stays), after
        // `fill_quiet` without a loss, and (`fill_window_limited`) when the
        // ACKed packets went out with the window full (an empty queue
        // behind a sender that did not send is no sign of room).
        let fill = self.cfg.fill_empty_queue
            && band == QueueBand::Empty
            && !yielded
            && may_grow
            && self
                .s
                .fill
                .last_loss
                .is_none_or(|t| now.saturating_duration_since(t) >= self.cfg.fill_quiet)
            && (!self.cfg.fill_window_limited
                || matches!(
                    (self.s.fill.window_full_since, largest),
                    (Some(since), Some(sent)) if sent >= since
                ));
        if fill {
            return Permit::Fill;
        }
        // `gain_max_queue` (no GAIN above that multiple of T) and
        // `gain_quiet` (none for a while after a congestion loss) are LBE
        // rules: not while [`crate::deadline`] steers the controller above
        // its level 0.
        let gain = self.gain_quiet_allows_gain(now)
            && (self.deference != Deference::Full
                || self
                    .cfg
                    .gain_max_queue
                    .is_none_or(|limit| q_ns <= limit * self.target_ns));
        if gain {
            Permit::Gain
        } else {
            Permit::None
        }
    }
}

/// Where the queuing delay sits against T (docs/ledbatpp-full.md's table;
/// -01 §4.3 has two: below T and above it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum QueueBand {
    /// At most `empty_queue`: the room `fill_empty_queue` may take.
    Empty,
    /// Above `empty_queue`, at most T − `target_margin`: GAIN alone.
    BelowTarget,
    /// Above T − `target_margin`, at most `sharp_decrease`·T (or above it
    /// without that rule): the decrease, from T − `target_margin`, over
    /// srtt with `decrease=excess_queue`, else over T.
    NearTarget,
    /// Above `sharp_decrease`·T: the decrease over T, as -01 §4.3 states it.
    FarAbove,
}

/// The growth an ACK of congestion avoidance may bring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Permit {
    /// `fill_empty_queue`: one byte per byte acknowledged.
    Fill,
    /// -01 §4.3's GAIN·MSS per window acknowledged.
    Gain,
    /// No growth: the decrease alone, if any.
    None,
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;

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
}
