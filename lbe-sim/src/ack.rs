//! The receiver: which packet numbers arrived, and the ACK frames it sends.
//!
//! quiche 0.30's receiver does not delay ACKs: an ack-eliciting packet sets
//! `ack_elicited`, and the next packet the endpoint builds carries an ACK
//! frame (`send_single` in quiche's `src/lib.rs`: "if
//! pkt_space.recv_pkt_need_ack.len() > 0 && (pkt_space.ack_elicited || …)"),
//! its ACK delay the time since the largest packet was received. Our apps
//! call `send()` after every batch of received datagrams, so each data
//! datagram that arrives on its own is acknowledged at once. That is the
//! default [`AckPolicy::Immediate`]. RFC 9000 §13.2.2's policy ("an
//! ack-eliciting packet ... SHOULD [be acknowledged] after receiving at
//! least two ack-eliciting packets"; otherwise within max_ack_delay) is
//! [`AckPolicy::EverySecond`], what most other stacks do.
//!
//! quiche keeps at most 68 ranges (`MAX_ACK_RANGES`) in
//! `recv_pkt_need_ack`, dropping the oldest; so does [`Received`].

use std::collections::VecDeque;
use std::time::Duration;

/// quiche's cap on the ranges an ACK frame carries.
pub const MAX_ACK_RANGES: usize = 68;

/// When the receiver acknowledges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AckPolicy {
    /// Every ack-eliciting packet at once (quiche's receiver).
    #[default]
    Immediate,
    /// Every second ack-eliciting packet, else after `max_ack_delay`
    /// (RFC 9000 §13.2.2).
    EverySecond { max_ack_delay: Duration },
}

/// Received packet numbers as disjoint inclusive ranges, ascending, at most
/// [`MAX_ACK_RANGES`] of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Received {
    ranges: VecDeque<(u64, u64)>,
}

impl Received {
    /// Records `pn`; returns false if it was already there.
    pub fn insert(&mut self, pn: u64) -> bool {
        // Fast path: in order.
        if let Some(last) = self.ranges.back_mut() {
            if pn == last.1 + 1 {
                last.1 = pn;
                return true;
            }
            if pn > last.1 + 1 {
                self.ranges.push_back((pn, pn));
                self.trim();
                return true;
            }
        } else {
            self.ranges.push_back((pn, pn));
            return true;
        }
        // Out of order: find the place.
        let i = self.ranges.partition_point(|r| r.1 < pn);
        if i < self.ranges.len() && self.ranges[i].0 <= pn {
            return false;
        }
        let joins_prev = i > 0 && self.ranges[i - 1].1 + 1 == pn;
        let joins_next = i < self.ranges.len() && self.ranges[i].0 == pn + 1;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ranges[i - 1].1 = self.ranges[i].1;
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i - 1].1 = pn,
            (false, true) => self.ranges[i].0 = pn,
            (false, false) => {
                self.ranges.insert(i, (pn, pn));
                self.trim();
            }
        }
        true
    }

    fn trim(&mut self) {
        while self.ranges.len() > MAX_ACK_RANGES {
            self.ranges.pop_front();
        }
    }

    /// The ranges, ascending.
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        self.ranges.iter().copied().collect()
    }

    /// The largest packet number received.
    pub fn largest(&self) -> Option<u64> {
        self.ranges.back().map(|r| r.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_packets_make_one_range() {
        let mut r = Received::default();
        for pn in 0..10 {
            assert!(r.insert(pn));
        }
        assert_eq!(r.ranges(), vec![(0, 9)]);
        assert!(!r.insert(4));
    }

    #[test]
    fn gaps_and_late_arrivals_merge() {
        let mut r = Received::default();
        for pn in [0, 1, 3, 4, 7] {
            r.insert(pn);
        }
        assert_eq!(r.ranges(), vec![(0, 1), (3, 4), (7, 7)]);
        r.insert(2);
        assert_eq!(r.ranges(), vec![(0, 4), (7, 7)]);
        r.insert(6);
        assert_eq!(r.ranges(), vec![(0, 4), (6, 7)]);
        r.insert(5);
        assert_eq!(r.ranges(), vec![(0, 7)]);
        assert_eq!(r.largest(), Some(7));
    }

    #[test]
    fn keeps_only_the_newest_ranges() {
        let mut r = Received::default();
        for i in 0..(MAX_ACK_RANGES as u64 + 5) {
            r.insert(i * 2);
        }
        let ranges = r.ranges();
        assert_eq!(ranges.len(), MAX_ACK_RANGES);
        assert_eq!(ranges[0], (10, 10));
    }
}
