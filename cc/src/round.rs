//! Round-trip rounds, delimited by send times.
//!
//! A round starts at some instant `s` (an ACK, or an event such as a
//! slowdown) and ends with the first ACK that acknowledges a packet sent at
//! or after `s`: by then every packet of the round has had one round trip.
//! This is TCP's `snd_nxt` marker (Linux `tcp_cdg` closes its RTT round when
//! the ACK passes the sequence number that was next to send when the round
//! began) expressed with the send times QUIC's ACK events carry. The next
//! round starts at that ACK.

use std::time::Instant;

use crate::AckedPacket;

/// Counts rounds; see the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rounds {
    start: Option<Instant>,
}

impl Rounds {
    /// Processes an ACK whose newest packet was sent at `largest_sent`.
    /// Returns whether it ended the current round (a new one starts at `now`).
    /// The very first ACK only starts the first round.
    pub(crate) fn on_ack(&mut self, now: Instant, largest_sent: Option<Instant>) -> bool {
        match self.start {
            None => {
                self.start = Some(now);
                false
            }
            Some(start) => {
                let ended = largest_sent.is_some_and(|sent| sent >= start);
                if ended {
                    self.start = Some(now);
                }
                ended
            }
        }
    }

    /// Starts a new round at `now`, abandoning the current one.
    pub(crate) fn restart(&mut self, now: Instant) {
        self.start = Some(now);
    }

    /// When the current round started.
    pub(crate) fn start(&self) -> Option<Instant> {
        self.start
    }
}

/// The latest send time among `acked`.
pub(crate) fn largest_sent(acked: &[AckedPacket]) -> Option<Instant> {
    acked.iter().map(|p| p.time_sent).max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_round_ends_when_a_packet_sent_inside_it_is_acked() {
        let t = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Rounds::default();
        assert!(!r.on_ack(t, Some(t)), "first ACK starts round 0");
        assert!(
            !r.on_ack(t + ms(5), Some(t - ms(1))),
            "sent before the round"
        );
        assert!(!r.on_ack(t + ms(6), None));
        assert!(r.on_ack(t + ms(100), Some(t)), "sent at the round start");
        assert_eq!(r.start(), Some(t + ms(100)));
        assert!(!r.on_ack(t + ms(150), Some(t + ms(99))));
        r.restart(t + ms(160));
        assert!(!r.on_ack(t + ms(170), Some(t + ms(150))));
        assert!(r.on_ack(t + ms(260), Some(t + ms(160))));
    }
}
