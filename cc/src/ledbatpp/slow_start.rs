//! The slow starts of LEDBAT++ (draft -01 §4.1): the initial one, which
//! adds GAIN per acknowledged byte and is the only one left on delay (at a
//! queuing delay above 3/4 of TARGET); the slow start after persistent
//! congestion and the ramp-up after a freeze (§4.4), which use the same
//! growth; and the deadline catch-up ([`LedbatPlusPlus::slow_start_to`]).

use std::time::Duration;
use std::time::Instant;

use super::LedbatPlusPlus;
use super::Phase;
use super::Schedule;
use crate::MAX_WINDOW_BYTES;

impl LedbatPlusPlus {
    /// Leaves the initial slow start and schedules the initial slowdown
    /// (§4.4: "2 RTT after the initial slow start completes").
    pub(super) fn leave_initial_slow_start(&mut self, now: Instant) {
        self.s.ssthresh = self.s.cwnd;
        self.s.phase = Phase::CongestionAvoidance;
        if self.cfg.slowdown {
            self.s.next_slowdown = Schedule::AfterRounds(self.cfg.initial_slowdown_rtts);
        }
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
    }

    /// The window rule of a slow start (initial, after persistent
    /// congestion, ramp-up) for one ACK of `bytes` at queuing delay `q`.
    pub(super) fn slow_start_on_ack(
        &mut self,
        now: Instant,
        bytes: f64,
        q: Duration,
        may_grow: bool,
    ) {
        match self.s.phase {
            // §4.1: "If the queuing delay is larger than 3/4ths of the
            // target delay, exit slow start and immediately move to the
            // congestion avoidance phase." and "Exit slow start in on
            // excessive delay SHOULD be applied only during the initial slow
            // start." (sic).
            Phase::InitialSlowStart if q > self.exit_delay => self.leave_initial_slow_start(now),
            _ => {
                if may_grow {
                    // §4.1: slow start adds GAIN per acknowledged byte (a
                    // catch-up one byte: `slow_start_to`).
                    let gain = match self.s.phase {
                        Phase::SlowStart { .. } if self.s.catching_up => 1.0,
                        _ => self.gain,
                    };
                    self.s.cwnd = (self.s.cwnd + gain * bytes).min(MAX_WINDOW_BYTES as f64);
                    self.s.gain_quiet.fast_growth_at = Some(now);
                    if self.s.cwnd >= self.s.ssthresh {
                        // ssthresh may predate an MTU increase.
                        self.s.cwnd = self.s.ssthresh.max(self.bounds.min);
                        match self.s.phase {
                            Phase::RampUp { slowdown_start, .. } => {
                                let duration = now.saturating_duration_since(slowdown_start);
                                self.finish_slowdown(now, slowdown_start, duration, true);
                            }
                            _ => self.s.phase = Phase::CongestionAvoidance,
                        }
                    }
                }
            }
        }
    }

    /// Lets the window slow-start up to `bytes` ([`crate::deadline`]'s
    /// catch-up, as `Cdg::slow_start_to`): in congestion avoidance or a
    /// catch-up, out of recovery and below `bytes`, ssthresh becomes `bytes`
    /// (and the round bound starts anew) and the window
    /// grows one byte per byte acknowledged (not GAIN) until it gets there,
    /// not left on delay; a loss ends it as usual, and it has the round
    /// bound of any slow start after the initial one (`slowdown.rs`). Returns
    /// whether it did.
    pub fn slow_start_to(&mut self, bytes: u64) -> bool {
        let catching_up = matches!(self.s.phase, Phase::SlowStart { .. }) && self.s.catching_up;
        if !(self.s.phase == Phase::CongestionAvoidance || catching_up)
            || self.s.recovery.in_recovery()
            || self.s.cwnd >= bytes as f64
        {
            return false;
        }
        self.s.ssthresh = (bytes as f64).min(MAX_WINDOW_BYTES as f64);
        // Doubling each round: log2 of the way up, twice, as the bound.
        let rounds = (self.s.ssthresh / self.s.cwnd.max(1.0)).log2().ceil() as u64;
        self.s.phase = Phase::SlowStart {
            rounds_left: rounds.saturating_mul(2).saturating_add(1),
        };
        self.s.catching_up = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;

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
    fn slow_start_to_grows_one_byte_per_byte_from_congestion_avoidance_only() {
        // Not in the initial slow start (it is growing already).
        let mut d = driver(config(&[]));
        assert!(!d.cc.slow_start_to(100_000));
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        assert!(!d.cc.slow_start_to(48_000), "not below the window");
        assert!(d.cc.slow_start_to(60_000));
        assert_eq!(
            (state(&d), d.cc.snapshot().ssthresh),
            ("slow_start", Some(60_000))
        );
        // One byte per byte acknowledged (GAIN is 1/4), not left on the
        // queue of 1.5·T; at ssthresh, back to congestion avoidance.
        d.ack_old(ms(1), MSS, ms(125));
        assert_eq!(d.cc.window(), 49_200);
        for _ in 0..9 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 60_000));
        // Again from congestion avoidance; not during a recovery.
        assert!(d.cc.slow_start_to(70_000));
        d.loss(d.now);
        assert_eq!((state(&d), d.cc.window()), ("recovery", 30_000));
        assert!(!d.cc.slow_start_to(70_000));
    }
}
