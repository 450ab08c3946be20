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

#[cfg(test)]
mod tests {
    use super::*;

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
