//! Flight size for the "is the sender using its window?" checks.
//!
//! LEDBAT caps the window at `flightsize + ALLOWED_INCREASE·MSS` (RFC 6817
//! §2.4.2), and LEDBAT++ and CDG do not grow a window that is less than half
//! used. With TCP's ACK clock every ACK is followed by new transmissions, so
//! the bytes in flight when an ACK arrives are what the sender keeps out. A
//! QUIC stack that reads a batch of datagrams before it sends again (quiche's
//! apps do) shows each later ACK of the batch less in flight, although the
//! sender is not application-limited: applied per ACK, the cap would
//! ratchet the window down to what the batch left in flight.
//!
//! The flight size used is therefore the larger of the bytes in flight at
//! the ACK and the bytes in flight right after the sender's latest
//! transmission. A sender that stopped sending still gets no growth: no new
//! transmissions, no new ACKs beyond those of data it did send.

use std::collections::VecDeque;
use std::time::Duration;
use std::time::Instant;

/// Tracks the bytes in flight after the latest transmission.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FlightSize {
    after_last_send: u64,
}

impl FlightSize {
    /// A packet of `bytes` was sent with `in_flight_before` already out.
    pub(crate) fn on_packet_sent(&mut self, bytes: u64, in_flight_before: u64) {
        self.after_last_send = in_flight_before.saturating_add(bytes);
    }

    /// The flight size for an ACK that arrived with `in_flight_at_ack` bytes
    /// in flight.
    pub(crate) fn at_ack(&self, in_flight_at_ack: u64) -> u64 {
        in_flight_at_ack.max(self.after_last_send)
    }
}

/// The largest flight right after a transmission over the last span of
/// time (an RTT): RFC 6817 LEDBAT's `flightsize=rtt_max`.
///
/// A paced sender meets an ACK with its pacer, not its application, holding
/// the flight below the window: quiche paces LEDBAT at 1.2 × cwnd/srtt, and
/// at 100 Mbit/s the flight after the latest send stayed more than
/// ALLOWED_INCREASE below the window, so the cap took the window down to the
/// flight, the pacing rate followed it, and LEDBAT carried 0.26 of the link
/// (docs/links-that-change.md, the `links-ledbat-pacing-cap` table). Within a
/// round trip a paced sender that has data does fill its window; one that
/// stopped sending leaves the span after an RTT.
#[derive(Clone, Debug, Default)]
pub(crate) struct RecentMaxFlight {
    /// (when, flight after the send), the flights strictly decreasing from
    /// front to back: a later, larger flight removes the smaller ones.
    peaks: VecDeque<(Instant, u64)>,
}

impl RecentMaxFlight {
    /// A packet was sent at `now`, leaving `flight_after` bytes in flight.
    pub(crate) fn on_packet_sent(&mut self, now: Instant, flight_after: u64) {
        while self.peaks.back().is_some_and(|&(_, f)| f <= flight_after) {
            self.peaks.pop_back();
        }
        self.peaks.push_back((now, flight_after));
    }

    /// The largest flight right after a send no earlier than `span` before
    /// `now`; 0 if there was none.
    pub(crate) fn max_within(&mut self, now: Instant, span: Duration) -> u64 {
        if let Some(from) = now.checked_sub(span) {
            while self.peaks.front().is_some_and(|&(t, _)| t < from) {
                self.peaks.pop_front();
            }
        }
        self.peaks.front().map_or(0, |&(_, f)| f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recent_max_flight_keeps_the_peak_of_the_span() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut f = RecentMaxFlight::default();
        assert_eq!(f.max_within(t0, ms(100)), 0, "nothing sent");
        f.on_packet_sent(t0, 12_000);
        f.on_packet_sent(t0 + ms(10), 9_600);
        f.on_packet_sent(t0 + ms(20), 10_800);
        // The peak at 0 ms is within 100 ms of 50 ms.
        assert_eq!(f.max_within(t0 + ms(50), ms(100)), 12_000);
        // At 105 ms it has left; 10,800 (20 ms) removed 9,600 (10 ms).
        assert_eq!(f.max_within(t0 + ms(105), ms(100)), 10_800);
        assert_eq!(f.peaks.len(), 1);
        // At 121 ms nothing was sent within the span.
        assert_eq!(f.max_within(t0 + ms(121), ms(100)), 0);
    }

    #[test]
    fn a_batch_of_acks_keeps_the_flight_of_the_last_send() {
        let mut f = FlightSize::default();
        assert_eq!(f.at_ack(5000), 5000);
        f.on_packet_sent(1200, 10_800);
        // Three ACKs read back to back, nothing sent in between.
        assert_eq!(f.at_ack(12_000), 12_000);
        assert_eq!(f.at_ack(9_600), 12_000);
        assert_eq!(f.at_ack(7_200), 12_000);
        // The sender sends again, with less out: that is the flight now.
        f.on_packet_sent(1200, 2_400);
        assert_eq!(f.at_ack(3_600), 3_600);
        assert_eq!(f.at_ack(1_200), 3_600);
    }
}
