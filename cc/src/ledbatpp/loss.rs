//! LEDBAT++ on loss. Draft -01 has no loss rule of its own (its §1: "LEDBAT
//! reacts to packet losses and other congestion signals in the same way as
//! standard TCP"); the seed's summary: "LEDBAT++ reacts by reducing the CW
//! to half of its value when a loss is detected" (seed §3). Once per recovery
//! period ([RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)),
//! with what a loss does in each phase; and persistent congestion ([RFC 9002
//! §7.6](https://www.rfc-editor.org/rfc/rfc9002#section-7.6)): the minimum
//! window, then a slow start back to ssthresh, not left on delay (§4.1).
//!
//! `loss_on_empty_queue=ignore` (not the draft's; `profiles.rs`) takes a
//! loss on an empty queue for random loss, within `random_loss_max` of the
//! window per period of [`RANDOM_LOSS_ROUNDS`] smoothed RTTs: random loss
//! takes about its rate's share of every window whatever its size, while a
//! buffer too small to show a queue (below `empty_queue`), overflowed by a
//! window that no loss reduces, loses more every round; past the budget
//! those losses count.

use std::time::Instant;

use super::EmptyQueueLoss;
use super::LedbatPlusPlus;
use super::Phase;
use super::RANDOM_LOSS_ROUNDS;
use crate::LossEvent;

/// The losses on an empty queue taken for random loss in the current
/// period (`random_loss_max`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct RandomLoss {
    /// When the period began: at the first such loss after the last one
    /// ended ([`RANDOM_LOSS_ROUNDS`] smoothed RTTs long).
    since: Option<Instant>,
    /// Bytes lost on an empty queue since then.
    lost_bytes: u64,
    /// The largest window or flight at those losses, bytes.
    window: f64,
}

impl LedbatPlusPlus {
    /// The loss decrease: halving unless steered (`loss_beta`).
    pub(super) fn decrease_on_loss(&mut self) {
        self.s.cwnd = (self.s.cwnd * self.loss_beta).max(self.bounds.min);
    }

    /// A congestion event ([`crate::CongestionController::on_congestion_event`]).
    pub(super) fn on_loss(&mut self, loss: &LossEvent) {
        self.s.fill.last_loss = Some(loss.now);
        self.s.fill.active = false;
        if self.cfg.loss_on_empty_queue == EmptyQueueLoss::Ignore
            && self.delay.current().is_some()
            && self.delay.queuing() <= self.empty_queue
            && self.within_random_loss(loss)
        {
            // Not congestion for an LBE flow (`loss_on_empty_queue`, `profiles.rs`).
            return;
        }
        // `gain_quiet`: only a loss our own fast growth did not cause, of a
        // packet sent more than a round trip after the last of it (a slow
        // start's or `fill_empty_queue`'s overshoot is lost within one).
        let srtt = self.srtt.unwrap_or_default();
        if self
            .s
            .gain_quiet
            .fast_growth_at
            .is_none_or(|t| loss.largest_lost_time_sent > t.checked_add(srtt).unwrap_or(t))
        {
            self.s.gain_quiet.last_congestion_loss = Some(loss.now);
        }
        if !self.s.recovery.on_loss(loss) {
            return;
        }
        match self.s.phase {
            Phase::Slowdown { .. } => {
                // The window is already at the minimum: lower the ramp-up's goal.
                self.s.ssthresh = (self.s.ssthresh / 2.0).max(self.bounds.min);
            }
            Phase::InitialSlowStart => {
                self.decrease_on_loss();
                self.leave_initial_slow_start(loss.now);
            }
            Phase::RampUp { slowdown_start, .. } => {
                // A loss ends the ramp-up (RFC 5681's halving applies).
                self.decrease_on_loss();
                self.s.ssthresh = self.s.cwnd;
                let duration = loss.now.saturating_duration_since(slowdown_start);
                self.finish_slowdown(loss.now, slowdown_start, duration, false);
            }
            Phase::SlowStart { .. } | Phase::CongestionAvoidance => {
                self.decrease_on_loss();
                self.s.ssthresh = self.s.cwnd;
                self.s.phase = Phase::CongestionAvoidance;
            }
        }
    }

    /// Counts a loss on an empty queue into the current period of
    /// [`RANDOM_LOSS_ROUNDS`] smoothed RTTs (a new one starts at the first
    /// such loss after the last one ended); whether the period's losses
    /// are still within `random_loss_max` of its windows' bytes (the
    /// largest window or flight at its losses, one per RTT; one packet if
    /// more).
    fn within_random_loss(&mut self, loss: &LossEvent) -> bool {
        let period = self
            .srtt
            .unwrap_or_default()
            .saturating_mul(RANDOM_LOSS_ROUNDS);
        let r = &mut self.s.random_loss;
        if r.since
            .is_none_or(|since| loss.now.saturating_duration_since(since) >= period)
        {
            *r = RandomLoss {
                since: Some(loss.now),
                lost_bytes: 0,
                window: 0.0,
            };
        }
        r.lost_bytes = r.lost_bytes.saturating_add(loss.lost_bytes);
        // The flight, not only the window: the losses a freeze (2 packets)
        // or a halving learns of are of the larger window sent before.
        r.window = r.window.max(self.s.cwnd).max(loss.bytes_in_flight as f64);
        let windows = r.window * f64::from(RANDOM_LOSS_ROUNDS);
        let budget = (self.cfg.random_loss_max * windows).max(self.bounds.mss);
        r.lost_bytes as f64 <= budget
    }

    /// Persistent congestion
    /// ([`crate::CongestionController::on_persistent_congestion`]).
    pub(super) fn on_persistent_congestion_event(&mut self) {
        self.s.cwnd = self.bounds.min;
        self.s.catching_up = false;
        if self.s.phase == Phase::CongestionAvoidance && self.s.ssthresh > self.bounds.min {
            // Slow start back towards ssthresh, not left on delay (§4.1).
            let full = self.rounds_to_restore(self.bounds.min);
            self.s.phase = Phase::SlowStart {
                rounds_left: full.saturating_mul(2).saturating_add(1),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;

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

    /// Base 35 ms (GAIN 1/4), slow start ended at 48000 bytes, then one
    /// ACK at q = 15 ms (+7 bytes; an empty queue, srtt 50 ms), as
    /// `profiles.rs`'s `loss_on_empty_queue` test; `extra` after the rest.
    fn ignoring_at_48007(extra: &[(&str, &str)]) -> Driver<LedbatPlusPlus> {
        let mut spec = vec![
            ("current_filter", "1"),
            ("init_cwnd", "39"),
            ("loss_on_empty_queue", "ignore"),
        ];
        spec.extend_from_slice(extra);
        let mut d = driver(config(&spec));
        d.ack_old(ms(1), 4 * MSS, ms(35));
        d.ack_old(ms(1), MSS, ms(125));
        d.ack_old(ms(1), MSS, ms(50));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_007));
        d
    }

    /// A packet sent just before now is lost, `gap` after the previous event.
    fn lose_one(d: &mut Driver<LedbatPlusPlus>, gap: Duration) {
        d.advance(gap);
        let sent = d.now - NS;
        d.loss(sent);
    }

    /// `n` lost packets, each sent just before it was lost, 1 ms apart.
    fn lose(d: &mut Driver<LedbatPlusPlus>, n: usize) {
        for _ in 0..n {
            lose_one(d, ms(1));
        }
    }

    #[test]
    fn losses_on_an_empty_queue_within_random_loss_max_per_period_are_ignored() {
        // The budget: 5 % of 16 windows of 48007 bytes = 38405.6 bytes, 32
        // packets per period of 16 srtt (800 ms).
        let mut d = ignoring_at_48007(&[]);
        lose(&mut d, 1);
        let first = d.now;
        lose(&mut d, 30);
        let gap = first + ms(800) - NS - d.now;
        lose_one(&mut d, gap);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_007));
        // 800 ms after the first a new period begins: 32 more ignored.
        lose_one(&mut d, NS);
        assert_eq!(d.now - first, ms(800));
        lose(&mut d, 31);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_007));
        // A 33rd in that period is congestion: halve.
        lose(&mut d, 1);
        let recovery = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_003));
        // Once per recovery period: a packet sent before it began.
        d.advance(ms(1));
        d.loss(recovery - NS);
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_003));
        // One sent after it began, still past the budget: halve again.
        lose(&mut d, 1);
        assert_eq!((state(&d), d.cc.window()), ("recovery", 12_001));
    }

    #[test]
    fn random_loss_max_counts_bytes_of_the_larger_of_window_and_flight() {
        let event = |d: &mut Driver<LedbatPlusPlus>, packets: u64, flight: u64| {
            d.advance(ms(1));
            let loss = LossEvent {
                now: d.now,
                lost_bytes: packets * MSS,
                largest_lost_time_sent: d.now - NS,
                bytes_in_flight: flight,
            };
            d.cc.on_congestion_event(&loss);
            (state(d), d.cc.window())
        };
        // One event of 33 packets (39600 > 38405.6 bytes): halve.
        let mut d = ignoring_at_48007(&[]);
        assert_eq!(event(&mut d, 33, 48_007), ("recovery", 24_003));
        // With twice the window in flight (a freeze or a halving learns of
        // the losses of the window before): 76811.2 bytes, ignored.
        let mut d = ignoring_at_48007(&[]);
        assert_eq!(event(&mut d, 33, 96_014), ("congestion_avoidance", 48_007));
        assert_eq!(event(&mut d, 31, 0), ("congestion_avoidance", 48_007));
        assert_eq!(event(&mut d, 1, 0), ("recovery", 24_003));
        // random_loss_max=0.1: 76811.2 bytes, 64 packets.
        let mut d = ignoring_at_48007(&[("random_loss_max", "0.1")]);
        lose(&mut d, 64);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_007));
        lose(&mut d, 1);
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_003));
        // random_loss_max=0: one packet per period is still taken for
        // random loss, the second halves.
        let mut d = ignoring_at_48007(&[("random_loss_max", "0")]);
        lose(&mut d, 1);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_007));
        lose(&mut d, 1);
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_003));
    }

    #[test]
    fn losses_with_a_queue_halve_and_do_not_use_the_budget() {
        // q = 16 ms: not an empty queue, the draft's halving.
        let mut d = ignoring_at_48007(&[]);
        d.ack_old(ms(1), MSS, ms(51));
        assert_eq!(d.cc.window(), 48_015);
        lose(&mut d, 1);
        let recovery = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_007));
        // Recovery ends; back at q = 15 ms, the budget (0.8 windows of
        // about 24010 bytes, 16 packets) is whole: 16 losses are ignored,
        // the 17th halves.
        d.advance(ms(1));
        d.ack(recovery + NS, MSS, ms(50));
        assert_eq!(state(&d), "congestion_avoidance");
        let w = d.cc.window();
        lose(&mut d, 16);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", w));
        lose(&mut d, 1);
        assert_eq!((state(&d), d.cc.window()), ("recovery", w / 2));
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
}
