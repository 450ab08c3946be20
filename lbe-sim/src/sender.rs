//! The sending end of one flow: packet numbers, bytes in flight, RFC 9002
//! loss detection and PTO, the pacer, and the congestion controller driven
//! through quiche's public `CongestionControl` trait in the order quiche's
//! legacy recovery (`src/recovery/congestion/recovery.rs`) calls its hooks.
//!
//! Per ACK, as `LegacyRecovery::on_ack_received`:
//! 1. newly acknowledged packets; a packet acknowledged after it was
//!    declared lost is a spurious loss, and `rollback()` is called;
//! 2. RFC 9002 §5.1: an RTT sample "if the largest acknowledged packet is
//!    newly acknowledged" and ack-eliciting;
//! 3. loss detection (§6.1): a packet is lost when "the packet is unacknowledged,
//!    in flight, and was sent prior to an acknowledged packet" and either
//!    kPacketThreshold (3) packets or kTimeThreshold (9/8 RTT) have passed.
//!    Before the first congestion event of a recovery period `checkpoint()`,
//!    then `congestion_event()` with bytes in flight still counting the lost
//!    packets, which are then removed;
//! 4. `on_packets_acked()` with bytes in flight still counting the acked
//!    packets, which are then removed.
//!
//! The pacer is the one patch 0001 adds to quiche (`Custom`'s `Pacer`): each
//! packet is released the previous one's transfer time at the controller's
//! rate after the previous release, or at once after idle, the rate read
//! after the controller saw the packet. Reno and CUBIC never pace.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::time::Duration;
use std::time::Instant;

use crate::rtt::RttEstimator;

/// quiche's `INITIAL_PACKET_THRESHOLD` (RFC 9002 §6.1.1 kPacketThreshold).
pub const PACKET_THRESHOLD: u64 = 3;
/// quiche's `MAX_PACKET_THRESHOLD`: reordering raises the threshold to at most this.
pub const MAX_PACKET_THRESHOLD: u64 = 20;
/// RFC 9002 §6.1.2 kTimeThreshold.
pub const TIME_THRESHOLD: f64 = 9.0 / 8.0;
/// quiche's `PACKET_REORDER_TIME_THRESHOLD`, after a spurious loss.
pub const REORDER_TIME_THRESHOLD: f64 = 5.0 / 4.0;
/// quiche's `MAX_PTO_PROBES_COUNT`.
pub const MAX_PTO_PROBES: usize = 2;

/// One stream's bytes `[offset, offset + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub offset: u64,
    pub len: u64,
}

#[derive(Clone, Copy, Debug)]
struct SentPacket {
    time_sent: Instant,
    size: usize,
    chunk: Chunk,
}

/// How much data the flow has to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataLimit {
    /// New data until this time (quic-bulk `--duration`).
    Until(Instant),
    /// This many stream bytes (quic-bulk `--bytes`).
    Bytes(u64),
}

/// Packet sizes of the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Framing {
    /// Largest UDP payload (quiche `max_send_udp_payload_size`; our apps 1350).
    pub max_datagram: usize,
    /// Bytes of each datagram that are not stream data: the short header
    /// (1 + 16-byte connection ID + up to 4-byte packet number), the
    /// 16-byte AEAD tag and the STREAM frame's header (type, stream ID,
    /// 8-byte offset, 2-byte length): 49 bytes, which matches the
    /// 1301 stream bytes per 1350-byte datagram our lab's qlogs show.
    pub overhead: usize,
}

impl Default for Framing {
    fn default() -> Self {
        Self {
            max_datagram: 1350,
            overhead: 49,
        }
    }
}

/// A datagram the sender built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Built {
    pub pn: u64,
    pub size: usize,
    pub chunk: Chunk,
    /// When the pacer releases it (`SendInfo::at`); `None` when unpaced.
    pub release: Option<Instant>,
}

/// What an ACK did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Newly acknowledged packet numbers.
    pub acked: Vec<u64>,
    /// Packets declared lost by this ACK.
    pub lost: Vec<u64>,
    /// Whether the ACK gave an RTT sample.
    pub rtt_sample: bool,
    /// Spurious losses found (packets acknowledged after being declared lost).
    pub spurious: u64,
}

/// A congestion controller as the sender drives it.
pub enum Controller {
    /// A plug-in, through quiche's `CongestionControl` as quiche drives it
    /// (patch 0001's `CUSTOM` hooks).
    Plugin(Box<dyn quiche::CongestionControl>),
    /// quiche's own Reno or CUBIC (patch 0003), driven by its calling
    /// contract: packet numbers, the loss count, the controller's own
    /// recovery period and PRR's allowance.
    Builtin(Box<quiche::BuiltinCongestionControl>),
}

impl Controller {
    fn cc(&self) -> &dyn quiche::CongestionControl {
        match self {
            Controller::Plugin(c) => c.as_ref(),
            Controller::Builtin(c) => c.as_ref(),
        }
    }

    fn cc_mut(&mut self) -> &mut dyn quiche::CongestionControl {
        match self {
            Controller::Plugin(c) => c.as_mut(),
            Controller::Builtin(c) => c.as_mut(),
        }
    }
}

/// The sending end of one flow.
pub struct Sender {
    cc: Controller,
    pub rtt: RttEstimator,
    framing: Framing,
    /// Sent, neither acknowledged nor declared lost.
    outstanding: BTreeMap<u64, SentPacket>,
    /// Declared lost, kept one RTT for spurious-loss detection (quiche
    /// drains them at `now - rtt`).
    recently_lost: BTreeMap<u64, (SentPacket, Instant)>,
    next_pn: u64,
    largest_acked: Option<u64>,
    bytes_in_flight: usize,
    loss_time: Option<Instant>,
    pkt_thresh: u64,
    time_thresh: f64,
    pto_count: u32,
    probes: usize,
    last_ack_eliciting_sent: Option<Instant>,
    recovery_start: Option<Instant>,
    limit: DataLimit,
    next_offset: u64,
    retransmit: VecDeque<Chunk>,
    pacing: bool,
    next_release: Option<Instant>,
    acked_bytes_total: u64,
    lost_packets: u64,
    sent_packets: u64,
    spurious_losses: u64,
    /// Probe timeouts that fired since the start (`pto_count` counts the
    /// consecutive ones and is reset by an ACK; this is never reset).
    probe_timeouts: u64,
    /// Times the loss-detection timer fired since the start: the probe
    /// timeouts and the time-threshold losses.
    loss_detection_timeouts: u64,
    /// A deadline-aware controller's progress handle: stream bytes newly
    /// acknowledged are added to it before the controller sees the ACK.
    progress: Option<quiche_lbe::lbe_cc::deadline::Progress>,
    /// The peer's connection flow-control credit (MAX_DATA): new stream
    /// data ends at this offset; `None` when flow control is not modelled.
    credit: Option<u64>,
}

impl Sender {
    pub fn new(
        cc: Controller,
        rtt: RttEstimator,
        framing: Framing,
        limit: DataLimit,
        pacing: bool,
    ) -> Self {
        Self {
            cc,
            rtt,
            framing,
            outstanding: BTreeMap::new(),
            recently_lost: BTreeMap::new(),
            next_pn: 0,
            largest_acked: None,
            bytes_in_flight: 0,
            loss_time: None,
            pkt_thresh: PACKET_THRESHOLD,
            time_thresh: TIME_THRESHOLD,
            pto_count: 0,
            probes: 0,
            last_ack_eliciting_sent: None,
            recovery_start: None,
            limit,
            next_offset: 0,
            retransmit: VecDeque::new(),
            pacing,
            next_release: None,
            acked_bytes_total: 0,
            lost_packets: 0,
            sent_packets: 0,
            spurious_losses: 0,
            probe_timeouts: 0,
            loss_detection_timeouts: 0,
            progress: None,
            credit: None,
        }
    }

    /// Feeds `progress` with the stream bytes acknowledged from now on.
    pub fn set_progress(&mut self, progress: quiche_lbe::lbe_cc::deadline::Progress) {
        self.progress = Some(progress);
    }

    /// The peer granted credit up to stream offset `max_data` (a MAX_DATA
    /// frame, or the initial `initial_max_data`); credit only grows, as a
    /// QUIC sender keeps the largest MAX_DATA it saw (RFC 9000 §19.9).
    pub fn grant_credit(&mut self, max_data: u64) {
        self.credit = Some(self.credit.map_or(max_data, |c| c.max(max_data)));
    }

    /// The flow-control credit, if modelled.
    pub fn credit(&self) -> Option<u64> {
        self.credit
    }

    pub fn cc(&self) -> &dyn quiche::CongestionControl {
        self.cc.cc()
    }

    pub fn bytes_in_flight(&self) -> usize {
        self.bytes_in_flight
    }

    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }

    /// Probe timeouts that fired since the start (RFC 9002 §6.2).
    pub fn probe_timeouts(&self) -> u64 {
        self.probe_timeouts
    }

    /// Times the loss-detection timer fired since the start, for a probe
    /// timeout or a time-threshold loss (RFC 9002 §6.1.2): what quiche's
    /// `PathStats::total_pto_count` counts.
    pub fn loss_detection_timeouts(&self) -> u64 {
        self.loss_detection_timeouts
    }

    pub fn sent_packets(&self) -> u64 {
        self.sent_packets
    }

    pub fn spurious_losses(&self) -> u64 {
        self.spurious_losses
    }

    /// Stream bytes handed to the sender so far (new data only).
    pub fn stream_bytes_sent(&self) -> u64 {
        self.next_offset
    }

    /// Whether every byte the flow had to send is acknowledged.
    pub fn finished(&self, now: Instant) -> bool {
        !self.has_new_data(now) && self.retransmit.is_empty() && self.outstanding.is_empty()
    }

    fn has_new_data(&self, now: Instant) -> bool {
        match self.limit {
            DataLimit::Until(t) => now < t,
            DataLimit::Bytes(total) => self.next_offset < total,
        }
    }

    /// Whether new data may go out now: the flow has some and the credit
    /// allows it (blocked by flow control, the sender is app-limited, as
    /// quiche's is: its stream is not writable).
    fn can_send_new(&self, now: Instant) -> bool {
        self.has_new_data(now) && self.credit.is_none_or(|c| self.next_offset < c)
    }

    /// Stops new data at `now` (a flow's stop time).
    pub fn stop_new_data(&mut self, now: Instant) {
        if let DataLimit::Until(t) = self.limit {
            self.limit = DataLimit::Until(t.min(now));
        }
    }

    /// quiche's `cwnd_available()`: the window's room, plus PRR's allowance
    /// during a built-in's recovery.
    fn cwnd_available(&self) -> usize {
        match &self.cc {
            Controller::Builtin(c) => c.cwnd_available(self.bytes_in_flight),
            Controller::Plugin(c) => c.congestion_window().saturating_sub(self.bytes_in_flight),
        }
    }

    /// Builds the next datagram, if the window (or a PTO probe) and the data
    /// allow one.
    pub fn build(&mut self, now: Instant) -> Option<Built> {
        let probe = self.probes > 0;
        let room = if probe {
            self.framing.max_datagram
        } else {
            self.cwnd_available().min(self.framing.max_datagram)
        };
        // quiche returns `Done` when the room left cannot hold the packet's
        // overhead plus `PAYLOAD_MIN_LEN` (4) bytes, and then marks the path
        // as not application-limited when there was data to send.
        if room < self.framing.overhead + 4 {
            let has_data = !self.retransmit.is_empty() || self.can_send_new(now);
            if let (Controller::Builtin(c), true) = (&mut self.cc, has_data) {
                c.on_window_full();
            }
            return None;
        }
        let capacity = (room - self.framing.overhead) as u64;
        let chunk = if let Some(mut c) = self.retransmit.pop_front() {
            if c.len > capacity {
                self.retransmit.push_front(Chunk {
                    offset: c.offset + capacity,
                    len: c.len - capacity,
                });
                c.len = capacity;
            }
            c
        } else if self.can_send_new(now) {
            let mut len = match self.limit {
                DataLimit::Bytes(total) => capacity.min(total - self.next_offset),
                DataLimit::Until(_) => capacity,
            };
            if let Some(credit) = self.credit {
                len = len.min(credit - self.next_offset);
            }
            let c = Chunk {
                offset: self.next_offset,
                len,
            };
            self.next_offset += len;
            c
        } else if probe {
            // A probe with nothing new to say repeats the oldest data in flight.
            let (_, p) = self.outstanding.iter().next()?;
            p.chunk
        } else {
            return None;
        };
        if probe {
            self.probes -= 1;
        }
        let size = chunk.len as usize + self.framing.overhead;
        let pn = self.next_pn;
        self.next_pn += 1;
        self.sent_packets += 1;
        match &mut self.cc {
            Controller::Builtin(c) => {
                c.on_packet_sent_numbered(pn, size, self.bytes_in_flight, now)
            }
            Controller::Plugin(c) => c.on_packet_sent(size, self.bytes_in_flight, now),
        }
        self.bytes_in_flight += size;
        self.last_ack_eliciting_sent = Some(now);
        self.outstanding.insert(
            pn,
            SentPacket {
                time_sent: now,
                size,
                chunk,
            },
        );
        let release = self.pace(size, now);
        Some(Built {
            pn,
            size,
            chunk,
            release,
        })
    }

    /// The pacer of patch 0001 (`Pacer::on_packet_sent`).
    fn pace(&mut self, size: usize, now: Instant) -> Option<Instant> {
        let rate = if self.pacing {
            self.cc.cc().pacing_rate().filter(|&r| r > 0)
        } else {
            None
        };
        let Some(rate) = rate else {
            self.next_release = None;
            return None;
        };
        let release = self.next_release.map_or(now, |t| t.max(now));
        let transfer =
            Duration::from_nanos((size as u128 * 1_000_000_000 / u128::from(rate)) as u64);
        self.next_release = Some(release + transfer);
        Some(release)
    }

    /// Whether a packet sent at `time_sent` was sent within the current
    /// recovery period (quiche's `in_congestion_recovery`). A built-in keeps
    /// its own (CUBIC moves the start); for a plug-in it is the time of the
    /// last congestion event that started one, as patch 0001's hook sets it.
    fn in_recovery(&self, time_sent: Instant) -> bool {
        match &self.cc {
            Controller::Builtin(c) => c.in_congestion_recovery(time_sent),
            Controller::Plugin(_) => self.recovery_start.is_some_and(|s| time_sent <= s),
        }
    }

    /// Processes an ACK frame: `ranges` inclusive and ascending, `ack_delay`
    /// as the peer reported it.
    pub fn on_ack(
        &mut self,
        ranges: &[(u64, u64)],
        ack_delay: Duration,
        now: Instant,
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        let mut newly: Vec<(u64, SentPacket)> = Vec::new();
        let mut spurious_in_flight = false;
        let largest_in_frame = ranges.last().map(|r| r.1);
        let largest_acked_before = self
            .largest_acked
            .unwrap_or(0)
            .max(largest_in_frame.unwrap_or(0));
        for &(lo, hi) in ranges {
            let pns: Vec<u64> = self.outstanding.range(lo..=hi).map(|(pn, _)| *pn).collect();
            for pn in pns {
                let p = self.outstanding.remove(&pn).expect("listed above");
                newly.push((pn, p));
            }
            let spurious: Vec<u64> = self
                .recently_lost
                .range(lo..=hi)
                .map(|(pn, _)| *pn)
                .collect();
            for pn in spurious {
                self.recently_lost.remove(&pn);
                self.spurious_losses += 1;
                out.spurious += 1;
                // quiche: "spurious_pkt_thresh.get_or_insert(largest_acked - pn + 1)".
                let thresh = largest_acked_before.saturating_sub(pn) + 1;
                self.pkt_thresh = self.pkt_thresh.max(thresh.min(MAX_PACKET_THRESHOLD));
                self.time_thresh = REORDER_TIME_THRESHOLD;
                spurious_in_flight = true;
            }
        }
        if spurious_in_flight {
            self.cc.cc_mut().rollback();
        }
        if newly.is_empty() {
            return out;
        }
        newly.sort_unstable_by_key(|(pn, _)| *pn);
        let (largest_newly, largest_packet) = *newly.last().expect("not empty");
        let largest_acked = self.largest_acked.unwrap_or(0).max(largest_newly);
        self.largest_acked = Some(largest_acked);
        if largest_newly == largest_acked {
            let latest_rtt = now.saturating_duration_since(largest_packet.time_sent);
            self.rtt.update(latest_rtt, ack_delay, now);
            out.rtt_sample = true;
        }

        out.lost = self.detect_lost(now);

        let acked: Vec<quiche::AckedPacket> = newly
            .iter()
            .map(|(pn, p)| quiche::AckedPacket {
                pkt_num: *pn,
                size: p.size,
                time_sent: p.time_sent,
            })
            .collect();
        if let Some(progress) = &self.progress {
            progress.add_done_bytes(newly.iter().map(|(_, p)| p.chunk.len).sum());
        }
        let rtt = self.rtt.estimate(now);
        self.cc
            .cc_mut()
            .on_packets_acked(&acked, &rtt, self.bytes_in_flight, now);
        let acked_bytes: usize = newly.iter().map(|(_, p)| p.size).sum();
        self.bytes_in_flight = self.bytes_in_flight.saturating_sub(acked_bytes);
        self.acked_bytes_total += acked_bytes as u64;
        self.pto_count = 0;
        self.probes = 0;
        out.acked = newly.into_iter().map(|(pn, _)| pn).collect();
        self.drain_lost(now);
        out
    }

    /// RFC 9002 §6.1 (quiche's `detect_lost_packets`).
    fn detect_lost(&mut self, now: Instant) -> Vec<u64> {
        self.loss_time = None;
        let Some(largest_acked) = self.largest_acked else {
            return Vec::new();
        };
        let loss_delay = self.rtt.loss_delay(self.time_thresh);
        let lost_send_time = now.checked_sub(loss_delay);
        let mut lost = Vec::new();
        let mut lost_bytes = 0;
        let mut largest_lost_time_sent = None;
        for (&pn, p) in self.outstanding.range(..=largest_acked) {
            let by_time = lost_send_time.is_some_and(|t| p.time_sent <= t);
            if by_time || largest_acked >= pn + self.pkt_thresh {
                lost.push(pn);
                lost_bytes += p.size;
                largest_lost_time_sent = Some(p.time_sent);
            } else {
                self.loss_time = Some(p.time_sent + loss_delay);
                break;
            }
        }
        if let Some(time_sent) = largest_lost_time_sent {
            let new_period = !self.in_recovery(time_sent);
            if new_period {
                self.cc.cc_mut().checkpoint();
            }
            match &mut self.cc {
                Controller::Builtin(c) => c.on_packets_lost(
                    lost.len(),
                    lost_bytes,
                    Some(time_sent),
                    self.bytes_in_flight,
                    now,
                ),
                Controller::Plugin(c) => {
                    c.congestion_event(lost_bytes, time_sent, self.bytes_in_flight, now);
                    if new_period {
                        self.recovery_start = Some(now);
                    }
                }
            }
            self.bytes_in_flight = self.bytes_in_flight.saturating_sub(lost_bytes);
        }
        for &pn in &lost {
            let p = self.outstanding.remove(&pn).expect("listed above");
            self.retransmit.push_back(p.chunk);
            self.recently_lost.insert(pn, (p, now));
        }
        self.lost_packets += lost.len() as u64;
        // Keep the retransmissions in stream order.
        if !lost.is_empty() {
            self.retransmit
                .make_contiguous()
                .sort_unstable_by_key(|c| c.offset);
        }
        lost
    }

    fn drain_lost(&mut self, now: Instant) {
        let horizon = now.checked_sub(self.rtt.smoothed_rtt);
        while let Some((&pn, &(_, lost_at))) = self.recently_lost.iter().next() {
            if horizon.is_some_and(|h| lost_at <= h) {
                self.recently_lost.remove(&pn);
            } else {
                break;
            }
        }
    }

    /// When the loss-detection timer fires (time threshold or PTO).
    pub fn loss_timer(&self) -> Option<Instant> {
        if let Some(t) = self.loss_time {
            return Some(t);
        }
        if self.bytes_in_flight == 0 {
            return None;
        }
        let pto = self.rtt.pto() * 2_u32.saturating_pow(self.pto_count);
        self.last_ack_eliciting_sent.map(|t| t + pto)
    }

    /// The loss-detection timer fired (quiche's `on_loss_detection_timeout`):
    /// packets lost by time, else a PTO, which arms probes.
    pub fn on_loss_timer(&mut self, now: Instant) -> Vec<u64> {
        self.loss_detection_timeouts += 1;
        if self.loss_time.is_some() {
            let lost = self.detect_lost(now);
            self.drain_lost(now);
            return lost;
        }
        self.pto_count += 1;
        self.probe_timeouts += 1;
        self.probes = (self.pto_count as usize).min(MAX_PTO_PROBES);
        Vec::new()
    }

    /// The controller's state for qlog.
    pub fn state(&self, now: Instant) -> &'static str {
        self.cc.cc().state_str(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// quiche's initial RTT (333 ms) before any sample; its rttvar is half
    /// of it, so RFC 9002 §6.2.1's PTO is 333 + 4 × 166.5 + 25 (max_ack_delay)
    /// = 1024 ms, doubled after each PTO without an ACK (§6.2.1 "the PTO
    /// period MUST be set to the current PTO period times 2").
    const FIRST_PTO: Duration = Duration::from_millis(1024);

    fn cubic_sender() -> Sender {
        let framing = Framing::default();
        let spec: quiche_lbe::CcSpec = "cubic".parse().unwrap();
        Sender::new(
            crate::controller(&spec, &framing).unwrap(),
            RttEstimator::new(Duration::from_millis(333), Duration::from_millis(25)),
            framing,
            DataLimit::Bytes(100_000),
            false,
        )
    }

    #[test]
    fn probe_timeouts_count_every_pto_and_an_ack_resets_only_the_backoff() {
        let mut s = cubic_sender();
        let t0 = Instant::now();
        assert_eq!(s.build(t0).map(|b| b.pn), Some(0));
        assert_eq!(s.loss_timer(), Some(t0 + FIRST_PTO));
        assert_eq!(s.on_loss_timer(t0 + FIRST_PTO), Vec::<u64>::new());
        assert_eq!(s.probe_timeouts(), 1);

        // The probe goes out whatever the window; the next PTO is twice as far.
        let t1 = t0 + FIRST_PTO;
        assert_eq!(s.build(t1).map(|b| b.pn), Some(1));
        assert_eq!(s.loss_timer(), Some(t1 + FIRST_PTO * 2));
        assert_eq!(s.on_loss_timer(t1 + FIRST_PTO * 2), Vec::<u64>::new());
        assert_eq!(s.probe_timeouts(), 2);

        // An ACK of both resets the backoff (pto_count) but not the total.
        let t2 = t1 + FIRST_PTO * 2 + Duration::from_millis(5);
        let out = s.on_ack(&[(0, 1)], Duration::ZERO, t2);
        assert_eq!(out.acked, vec![0, 1]);
        assert_eq!(s.probe_timeouts(), 2);
        assert_eq!(s.pto_count, 0);
        assert_eq!(s.lost_packets(), 0);
        assert_eq!(s.loss_detection_timeouts(), 2);
    }
}
