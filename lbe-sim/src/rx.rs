//! Receiver-driven LBE: the downloading end of a flow runs
//! [`ReceiverLedbat`] (with the real client's parameters,
//! [`rledbat::default_config`]) and enforces its window through
//! connection-level flow control, as `quiche_lbe::receiver` does with patch
//! 0004 in `h3-fetch --lbe receiver`.
//!
//! What is modelled, after the real client:
//!
//! - **Flow control** is quiche's connection-level `FlowControl` with patch
//!   0004's limit: the credit (MAX_DATA) is the data consumed (the stream
//!   read in order: the application reads at once) plus the window, the
//!   window being quiche's autotuned one (starting at `initial_max_data`,
//!   doubled when an update follows the previous one within two smoothed
//!   RTTs, at most 24 MiB) capped by the limit; an update is due once a
//!   eighth of the capped window was consumed, and credit once granted is
//!   never withdrawn. The initial credit is the window's initial value
//!   (`ReceiverLbe::configure`). Only the connection's credit is modelled
//!   (a stream's own credit never binds in our apps).
//! - **The receiver's packets**: each of its ACKs may carry a MAX_DATA
//!   update, and a PING when no ack-eliciting packet went out for a
//!   smoothed RTT; a packet with either is ack-eliciting. The sender
//!   acknowledges it in the data direction (on its next data packet, or in
//!   an ACK-only datagram when it has nothing to send), through the
//!   bottleneck queue; the receiver's RTT sample follows RFC 9002 §5.1 (the
//!   largest acknowledged newly acknowledged, an ack-eliciting packet among
//!   those newly acknowledged) with the ACK delay the sender reports, and
//!   feeds [`ReceiverLedbat::on_rtt_sample`].
//! - **Arrivals**: each data packet's bytes on the wire feed
//!   [`ReceiverLedbat::on_data`]; one whose stream data starts below the
//!   highest offset received and ends above the data already read (patch
//!   0004's `late_stream_frames_recv`) feeds
//!   [`ReceiverLedbat::on_retransmission`].
//! - The handshake gives the receiver one RTT sample of the base RTT when
//!   the data starts, as it gives the sender one.

use std::collections::BTreeMap;
use std::time::Duration;
use std::time::Instant;

use quiche_lbe::lbe_cc::rledbat;
use quiche_lbe::lbe_cc::rledbat::ReceiverLedbat;
use quiche_lbe::lbe_cc::PathInfo;
use quiche_lbe::lbe_cc::RttInfo;
use serde::Serialize;

use crate::rtt::RttEstimator;
use crate::sender::Chunk;

/// quiche's `MAX_CONNECTION_WINDOW`: the autotuned window's ceiling.
pub const MAX_CONNECTION_WINDOW: u64 = 24 * 1024 * 1024;

/// What the receiver's control did over a flow.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReceiverWindowStats {
    /// The window's figures and counts (`final_bytes`, `min_bytes`,
    /// `max_bytes`, `mean_bytes` time-weighted, `rtt_samples`,
    /// `retransmissions`, `loss_reductions`, `slowdowns`): `lbe-cc`'s own
    /// serialisation, shared with h3-fetch's view.
    #[serde(flatten)]
    pub window: rledbat::ReceiverStats,
    /// MAX_DATA updates sent (the re-stated engine; quiche does not count
    /// them: `null` on the quiche engine).
    pub max_data_updates: Option<u64>,
    /// PINGs sent (ack-eliciting packets without an update; the re-stated
    /// engine only, as `max_data_updates`).
    pub pings: Option<u64>,
}

/// What one of the receiver's packets carries beside its ACK frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frames {
    /// A MAX_DATA update.
    pub max_data: Option<u64>,
    /// Whether the packet is ack-eliciting (an update or a PING).
    pub ack_eliciting: bool,
}

/// The receiving end's control of one flow.
pub struct ReceiverControl {
    window: ReceiverLedbat,
    rtt: RttEstimator,
    /// Stream bytes read in order.
    consumed: u64,
    /// Stream bytes received beyond `consumed`: start → end.
    out_of_order: BTreeMap<u64, u64>,
    /// The highest stream offset received (end of data).
    highest_end: u64,
    /// Credit granted: MAX_DATA.
    max_data: u64,
    /// quiche's autotuned connection window.
    fc_window: u64,
    last_update: Option<Instant>,
    /// The receiver's packets not yet acknowledged: pn → (sent, ack-eliciting).
    unacked: BTreeMap<u64, (Instant, bool)>,
    last_ack_eliciting_sent: Option<Instant>,
    max_data_updates: u64,
    pings: u64,
}

impl ReceiverControl {
    /// The control of a flow whose datagrams are at most `max_datagram`
    /// bytes, created at `now` (the connection's start).
    pub fn new(max_datagram: usize, max_ack_delay: Duration, now: Instant) -> Self {
        let path = PathInfo {
            max_datagram_size: max_datagram as u64,
            ..PathInfo::default()
        };
        let window = ReceiverLedbat::new(rledbat::default_config(), path, now);
        let initial = window.window();
        Self {
            window,
            rtt: RttEstimator::new(Duration::from_millis(333), max_ack_delay),
            consumed: 0,
            out_of_order: BTreeMap::new(),
            highest_end: 0,
            max_data: initial,
            fc_window: initial,
            last_update: None,
            unacked: BTreeMap::new(),
            last_ack_eliciting_sent: None,
            max_data_updates: 0,
            pings: 0,
        }
    }

    /// The credit granted so far (the sender's at the start:
    /// `initial_max_data`).
    pub fn max_data(&self) -> u64 {
        self.max_data
    }

    /// The window now, bytes.
    pub fn window(&self) -> u64 {
        self.window.window()
    }

    /// The handshake's RTT sample, at the data's start.
    pub fn on_handshake_rtt(&mut self, rtt: Duration, now: Instant) {
        self.rtt.update(rtt, Duration::ZERO, now);
        self.window.on_rtt_sample(now, self.rtt_info());
    }

    fn rtt_info(&self) -> RttInfo {
        RttInfo {
            latest_rtt: self.rtt.latest_rtt,
            ack_delay: self.rtt.latest_ack_delay,
            new_sample: true,
            min_rtt: self.rtt.min_rtt,
            smoothed_rtt: self.rtt.smoothed_rtt,
            rttvar: self.rtt.rttvar,
            max_ack_delay: self.rtt.max_ack_delay,
        }
    }

    /// A data packet of `size` bytes on the wire carrying `chunk` arrived.
    pub fn on_data(&mut self, chunk: Chunk, size: usize, now: Instant) {
        // Patch 0004's count: below the highest offset, and not a copy of
        // data already read (a spurious retransmission).
        let late = chunk.offset < self.highest_end && chunk.offset + chunk.len > self.consumed;
        let end = chunk.offset + chunk.len;
        self.highest_end = self.highest_end.max(end);
        self.window.on_data(now, size as u64);
        if late {
            self.window.on_retransmission(now);
        }
        if end > self.consumed {
            let start = chunk.offset.max(self.consumed);
            let e = self.out_of_order.entry(start).or_insert(end);
            *e = (*e).max(end);
            while let Some((&s, &e)) = self.out_of_order.first_key_value() {
                if s > self.consumed {
                    break;
                }
                self.out_of_order.pop_first();
                self.consumed = self.consumed.max(e);
            }
        }
    }

    /// The sender's ACK of the receiver's packets up to `largest`, with the
    /// ACK delay it reported, arrived.
    pub fn on_ack(&mut self, largest: u64, ack_delay: Duration, now: Instant) {
        let rest = self.unacked.split_off(&(largest + 1));
        let newly = std::mem::replace(&mut self.unacked, rest);
        let Some((&pn, &(sent, _))) = newly.last_key_value() else {
            return;
        };
        if pn == largest && newly.values().any(|&(_, eliciting)| eliciting) {
            self.rtt
                .update(now.saturating_duration_since(sent), ack_delay, now);
            self.window.on_rtt_sample(now, self.rtt_info());
        }
    }

    /// The receiver sends its packet `pn` at `now`: the MAX_DATA update if
    /// one is due (patch 0004's rules) and a PING if none went out for a
    /// smoothed RTT.
    pub fn on_send(&mut self, pn: u64, now: Instant) -> Frames {
        let limit = self.window.window();
        let capped = |w: u64| w.min(limit);
        let mut frames = Frames::default();
        let available = self.max_data.saturating_sub(self.consumed);
        let window = capped(self.fc_window);
        if available < window - window / 8 && self.max_data < self.consumed + window {
            // quiche's autotune_window (with path.recovery.rtt(): the
            // smoothed RTT), then update_max_data.
            if let Some(last) = self.last_update {
                if now.saturating_duration_since(last) < self.rtt.smoothed_rtt * 2 {
                    self.fc_window = (self.fc_window * 2).min(MAX_CONNECTION_WINDOW);
                }
            }
            self.max_data = self.max_data.max(self.consumed + capped(self.fc_window));
            self.last_update = Some(now);
            self.max_data_updates += 1;
            frames.max_data = Some(self.max_data);
            frames.ack_eliciting = true;
        }
        if !frames.ack_eliciting {
            if let Some(srtt) = self.window.srtt() {
                let idle = self
                    .last_ack_eliciting_sent
                    .is_none_or(|t| now.saturating_duration_since(t) >= srtt);
                if idle {
                    self.pings += 1;
                    frames.ack_eliciting = true;
                }
            }
        }
        if frames.ack_eliciting {
            self.last_ack_eliciting_sent = Some(now);
        }
        self.unacked.insert(pn, (now, frames.ack_eliciting));
        frames
    }

    pub fn stats(&self) -> ReceiverWindowStats {
        ReceiverWindowStats {
            window: self.window.stats(),
            max_data_updates: Some(self.max_data_updates),
            pings: Some(self.pings),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn chunk(offset: u64, len: u64) -> Chunk {
        Chunk { offset, len }
    }

    #[test]
    fn credit_starts_at_the_window_and_is_renewed_after_an_eighth_is_consumed() {
        let t0 = Instant::now();
        let mut rx = ReceiverControl::new(1350, ms(25), t0);
        let w = rx.window();
        assert_eq!(rx.max_data(), w);
        rx.on_handshake_rtt(ms(50), t0);
        // Less than an eighth read: no update, and no PING (one went out
        // never, so the first packet is a PING).
        rx.on_data(chunk(0, w / 8 - 1), 1350, t0 + ms(1));
        let first = rx.on_send(0, t0 + ms(1));
        assert_eq!(first.max_data, None);
        assert!(first.ack_eliciting, "the first packet is a PING");
        let second = rx.on_send(1, t0 + ms(2));
        assert_eq!(second, Frames::default());
        // More than an eighth read: the credit runs the window (the smaller
        // of quiche's window, not yet autotuned, and the limit) ahead of it.
        rx.on_data(chunk(w / 8 - 1, 2), 1350, t0 + ms(3));
        let update = rx.on_send(2, t0 + ms(3));
        assert_eq!(update.max_data, Some(w / 8 + 1 + w.min(rx.window())));
        assert!(update.ack_eliciting);
        assert_eq!(rx.stats().max_data_updates, Some(1));
        assert_eq!(rx.stats().pings, Some(1));
    }

    #[test]
    fn out_of_order_data_is_not_consumed_and_late_data_is_a_retransmission() {
        let t0 = Instant::now();
        let mut rx = ReceiverControl::new(1350, ms(25), t0);
        rx.on_handshake_rtt(ms(50), t0);
        let w = rx.window();
        // A gap at the start: nothing is consumed, no update is due.
        rx.on_data(chunk(1000, w), 1350, t0 + ms(1));
        assert_eq!(rx.stats().window.retransmissions, 0);
        assert_eq!(rx.on_send(0, t0 + ms(1)).max_data, None);
        // The gap filled by data below the highest offset: a retransmission,
        // and everything is consumed.
        rx.on_data(chunk(0, 1000), 1350, t0 + ms(2));
        assert_eq!(rx.stats().window.retransmissions, 1);
        let limit = rx.window();
        assert_eq!(
            rx.on_send(1, t0 + ms(2)).max_data,
            Some(1000 + w + w.min(limit))
        );
        // A copy of data already read: a spurious retransmission, not a
        // loss (patch 0004); one that ends above it still is.
        rx.on_data(chunk(500, 500), 1350, t0 + ms(3));
        assert_eq!(rx.stats().window.retransmissions, 1);
        rx.on_data(chunk(1000 + w - 10, 20), 1350, t0 + ms(4));
        assert_eq!(rx.stats().window.retransmissions, 2);
    }

    #[test]
    fn an_ack_of_an_ack_eliciting_packet_is_an_rtt_sample() {
        let t0 = Instant::now();
        let mut rx = ReceiverControl::new(1350, ms(25), t0);
        rx.on_handshake_rtt(ms(50), t0);
        assert_eq!(rx.stats().window.rtt_samples, 1);
        let ping = rx.on_send(0, t0);
        assert!(ping.ack_eliciting);
        let ack_only = rx.on_send(1, t0 + ms(1));
        assert!(!ack_only.ack_eliciting);
        // Acknowledging only the ACK-only packet: the largest is newly
        // acknowledged but nothing ack-eliciting is: no sample.
        let mut only = ReceiverControl::new(1350, ms(25), t0);
        only.on_handshake_rtt(ms(50), t0);
        only.last_ack_eliciting_sent = Some(t0);
        assert!(!only.on_send(0, t0 + ms(1)).ack_eliciting);
        only.on_ack(0, ms(0), t0 + ms(60));
        assert_eq!(only.stats().window.rtt_samples, 1);
        // Both at once: a sample of the largest (the ACK-only one, 80 ms,
        // 5 ms of it the sender's ACK delay).
        rx.on_ack(1, ms(5), t0 + ms(81));
        assert_eq!(rx.stats().window.rtt_samples, 2);
        assert_eq!(rx.rtt.latest_rtt, ms(80));
        assert_eq!(rx.rtt.latest_ack_delay, ms(5));
        // Acknowledged once: the same ACK again is no sample.
        rx.on_ack(1, ms(5), t0 + ms(90));
        assert_eq!(rx.stats().window.rtt_samples, 2);
    }
}
