//! Loss recovery periods ([RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)), shared by the controllers.
//!
//! A loss that reduces the window starts a recovery period at the time it
//! is detected. "A recovery period ends and the sender enters congestion
//! avoidance when a packet sent during the recovery period is
//! acknowledged", and losses of packets sent no later than the start of the
//! current period do not reduce the window again: at most one reduction per
//! period. <https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2>.

use std::time::Instant;

use crate::LossEvent;

/// The latest recovery period and whether it is still under way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecoveryPeriod {
    /// When the latest period started (`None` before the first loss).
    start: Option<Instant>,
    active: bool,
}

impl RecoveryPeriod {
    /// Whether the sender is in a recovery period.
    pub(crate) fn in_recovery(&self) -> bool {
        self.active
    }

    /// Processes an ACK whose newest packet was sent at `largest_sent`:
    /// a packet sent after the period started ends it. Returns whether this
    /// ACK ended it.
    pub(crate) fn on_ack(&mut self, largest_sent: Option<Instant>) -> bool {
        let ends = self.active
            && largest_sent.is_some_and(|sent| self.start.is_none_or(|start| sent > start));
        if ends {
            self.active = false;
        }
        ends
    }

    /// Processes packets declared lost. Returns whether the loss starts a
    /// new period (the caller reduces its window once); a loss of a packet
    /// sent no later than the latest period's start returns false.
    pub(crate) fn on_loss(&mut self, loss: &LossEvent) -> bool {
        if self
            .start
            .is_some_and(|start| loss.largest_lost_time_sent <= start)
        {
            return false;
        }
        self.start = Some(loss.now);
        self.active = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn loss(now: Instant, largest_lost_time_sent: Instant) -> LossEvent {
        LossEvent {
            now,
            lost_bytes: 1200,
            largest_lost_time_sent,
            bytes_in_flight: 12_000,
        }
    }

    #[test]
    fn one_reduction_per_period_and_an_ack_of_a_later_packet_ends_it() {
        let t = Instant::now();
        let ms = Duration::from_millis;
        let mut r = RecoveryPeriod::default();
        assert!(!r.in_recovery());
        assert!(!r.on_ack(Some(t)), "not in recovery");
        assert!(
            r.on_loss(&loss(t + ms(10), t)),
            "first loss starts a period"
        );
        assert!(r.in_recovery());
        assert!(
            !r.on_loss(&loss(t + ms(11), t + ms(10))),
            "sent at the start"
        );
        assert!(
            !r.on_ack(Some(t + ms(10))),
            "sent at the start: still in it"
        );
        assert!(!r.on_ack(None));
        assert!(r.in_recovery());
        assert!(r.on_ack(Some(t + ms(10) + Duration::from_nanos(1))));
        assert!(!r.in_recovery());
        assert!(
            !r.on_loss(&loss(t + ms(20), t + ms(5))),
            "sent before the ended period's start: no new period"
        );
        assert!(!r.in_recovery());
        assert!(r.on_loss(&loss(t + ms(30), t + ms(11))));
        assert!(r.in_recovery());
    }
}
