//! LEDBAT++ on loss. Draft -01 has no loss rule of its own (its §1: "LEDBAT
//! reacts to packet losses and other congestion signals in the same way as
//! standard TCP"); the seed's summary: "LEDBAT++ reacts by reducing the CW
//! to half of its value when a loss is detected" (seed §3). Once per recovery
//! period ([RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)),
//! with what a loss does in each phase; and persistent congestion ([RFC 9002
//! §7.6](https://www.rfc-editor.org/rfc/rfc9002#section-7.6)): the minimum
//! window, then a slow start back to ssthresh, not left on delay (§4.1).

use super::EmptyQueueLoss;
use super::LedbatPlusPlus;
use super::Phase;
use crate::LossEvent;

impl LedbatPlusPlus {
    /// The loss decrease: halving unless steered (`loss_beta`).
    pub(super) fn decrease_on_loss(&mut self) {
        self.s.cwnd = (self.s.cwnd * self.loss_beta).max(self.bounds.min);
    }

    /// A congestion event ([`crate::CongestionController::on_congestion_event`]).
    pub(super) fn on_loss(&mut self, loss: &LossEvent) {
        self.last_loss = Some(loss.now);
        self.filling = false;
        if self.cfg.loss_on_empty_queue == EmptyQueueLoss::Ignore
            && self.delay.current().is_some()
            && self.delay.queuing() <= self.cfg.empty_queue
        {
            // Not congestion for an LBE flow (`loss_on_empty_queue`, `profiles.rs`).
            return;
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

    /// Persistent congestion
    /// ([`crate::CongestionController::on_persistent_congestion`]).
    pub(super) fn on_persistent_congestion_event(&mut self) {
        self.s.cwnd = self.bounds.min;
        self.s.catching_up = false;
        if self.s.phase == Phase::CongestionAvoidance && self.s.ssthresh > self.bounds.min {
            // Slow start back towards ssthresh, not left on delay (§4.1).
            let full = self.rounds_to_restore();
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
