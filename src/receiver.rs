//! Receiver-side less-than-best-effort control for any quiche application
//! that downloads: RFC 9840's receiver-driven LEDBAT on QUIC.
//!
//! The window is [`lbe_cc::rledbat::ReceiverLedbat`] (LEDBAT++ run on what
//! a receiver observes; its module docs say how each RFC 9840 mechanism
//! maps to QUIC). This module connects it to a `quiche::Connection`:
//!
//! 1. [`ReceiverLbe::configure`] prepares the client's `quiche::Config`:
//!    an RTT tap is installed as the connection's congestion controller
//!    (it runs quiche's own CUBIC for the receiver's few packets and
//!    records the RTT sample of every ACK of them, with the peer's ACK
//!    delay, and when the receiver last sent an ack-eliciting packet), and
//!    the initial connection credit (`initial_max_data`) is the window's
//!    initial value, so that the limit holds from the first byte: credit
//!    once granted is never withdrawn.
//! 2. [`ReceiverLbe::on_progress`], called by the application after each
//!    batch of `recv()`s and stream reads (before `send()`), feeds the
//!    window the new RTT samples, the one-way delays of the data where the
//!    sender sends timestamps (every packet of the sender's that carries a
//!    TIMESTAMP frame, patch 0008's `PeerTimestamp`: with `delay=auto`, the
//!    default, the window then reads no queue of the reverse path, where an
//!    upload would delay the receiver's own packets), the bytes received once the handshake is
//!    done (`Stats::recv_bytes`) and the retransmissions seen
//!    (`Stats::late_stream_frames_recv`, patch 0004); then caps the
//!    connection's receive window at the window
//!    (`Connection::set_connection_window_limit`, patch 0004), asks for a
//!    PING when no ack-eliciting packet went out for a smoothed RTT (so
//!    that delay samples keep coming when no flow-control update is due),
//!    and writes a qlog event when the window or its state changed.
//!
//! Only the connection-level credit is capped: a stream's data counts
//! against both its stream's credit and the connection's, so the smaller
//! connection credit bounds every stream's sending together.
//!
//! Against RFC 9840 (what of it could be read, and the authors' prototype
//! it is compared with: `lbe_cc::rledbat`'s module docs):
//!
//! * the advertised limit is the smaller of the LEDBAT++ window and
//!   quiche's own flow-control window, as an rLEDBAT receiver advertises
//!   the smaller of its window and the one its buffer allows (RCV.WND =
//!   min(RLWND, fcwnd) in the ns-3 implementation's words); the window is
//!   never shrunk (§4.1.1): `set_connection_window_limit` only withholds
//!   credit, and MAX_DATA never goes down;
//! * the prototype rounds its window to TCP's window-scale unit; MAX_DATA
//!   counts single bytes, so there is nothing to round;
//! * delay samples: the prototype takes one from the first data segment
//!   that echoes each of its timestamps; here one per ACK of the
//!   receiver's own ack-eliciting packets: MAX_DATA goes out each time an
//!   eighth of the limited window has been read (patch 0004), about eight
//!   a round trip (more with MAX_STREAM_DATA), quiche's own PING after 24
//!   packets that elicited no ACK, and a PING when nothing went out for a
//!   smoothed RTT, so LEDBAT++'s minimum of the last 4 samples spans less
//!   than a round trip, not a few packets as at a sender (`rtt_samples`
//!   in `h3-fetch --json`);
//! * the samples see the queue low: a sender held at its credit sends
//!   each renewal's new credit at once and acknowledges the MAX_DATA that
//!   granted it in the burst's first packet, which enters the queue at its
//!   lowest, before the burst. The queue the download keeps is that
//!   minimum plus up to one renewal (about half of one on average). With a
//!   renewal every quarter of the window the bottleneck's mean queue was
//!   72 ms against LEDBAT++'s 60 ms target (stock quiche server, 20 Mbit/s,
//!   50 ms; the simulator: 74 ms); renewed every eighth, 63 ms (65 ms).
//! * losses: retransmitted stream data, counted by patch 0004 without
//!   telling reordering apart (§4.3 does, with timestamps; see
//!   `lbe_cc::rledbat`).

use std::fmt;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use lbe_cc::delay::Signal;
use lbe_cc::ledbatpp::LedbatPlusPlusConfig;
use lbe_cc::rledbat::ReceiverLedbat;
use lbe_cc::rledbat::ReceiverStats;
use lbe_cc::OneWayDelaySample;
use lbe_cc::PathInfo;
use lbe_cc::RttInfo;

/// The receiver window's qlog record: a `quic:recovery_metrics_updated`
/// event with these extension fields only (so that any qlog reader, and
/// `qlog-analysis`, reads it as a recovery metric of the connection):
/// the window in bytes, LEDBAT++'s state, and its queuing and base delay
/// estimates in milliseconds.
pub const QLOG_WINDOW: &str = "lbe_receiver_window";
/// See [`QLOG_WINDOW`].
pub const QLOG_STATE: &str = "lbe_receiver_state";
/// See [`QLOG_WINDOW`].
pub const QLOG_QUEUING_DELAY: &str = "lbe_queuing_delay_ms";
/// See [`QLOG_WINDOW`].
pub const QLOG_BASE_DELAY: &str = "lbe_base_delay_ms";
/// See [`QLOG_WINDOW`]: the delay signal, as a sender's plug-in writes it
/// (patch 0008's `lbe_delay_signal`).
pub const QLOG_DELAY_SIGNAL: &str = "lbe_delay_signal";

/// One delay sample the tap recorded.
#[derive(Debug)]
enum TapSample {
    /// The RTT sample of one of the receiver's ack-eliciting packets, with
    /// the time its ACK was processed.
    Rtt(Instant, RttInfo),
    /// A packet from the sender carried a TIMESTAMP frame (patch 0008;
    /// only where the sender offers the extension): its one-way delay.
    OneWay(quiche::PeerTimestamp),
}

/// What the tap recorded since the last [`ReceiverLbe::on_progress`].
#[derive(Debug, Default)]
struct TapLog {
    /// Delay samples, in the order quiche reported them.
    samples: Vec<TapSample>,
    /// When the receiver last sent a packet that counts in flight (an
    /// ack-eliciting one).
    last_ack_eliciting_sent: Option<Instant>,
}

type SharedLog = Arc<Mutex<TapLog>>;

fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, TapLog> {
    // A panic while holding the lock leaves plain data behind; keep going.
    log.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds [`Tap`]s around quiche's CUBIC.
struct TapFactory {
    log: SharedLog,
}

impl quiche::CongestionControlFactory for TapFactory {
    fn new_congestion_control(
        &self,
        max_datagram_size: usize,
        initial_window_packets: usize,
    ) -> Box<dyn quiche::CongestionControl> {
        let inner = quiche::BuiltinCongestionControl::new(
            quiche::CongestionControlAlgorithm::CUBIC,
            max_datagram_size.max(1),
            initial_window_packets.max(1),
            quiche::BuiltinCongestionControlOptions::default(),
        )
        .expect("CUBIC with a non-zero datagram size and window is accepted");
        Box::new(Tap {
            inner: Box::new(inner),
            log: Arc::clone(&self.log),
        })
    }
}

/// The receiver's own congestion controller, with its RTT samples recorded.
struct Tap {
    inner: Box<dyn quiche::CongestionControl>,
    log: SharedLog,
}

impl fmt::Debug for Tap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rtt-tap({:?})", self.inner)
    }
}

impl quiche::CongestionControl for Tap {
    fn on_packet_sent(&mut self, sent_bytes: usize, bytes_in_flight: usize, now: Instant) {
        lock(&self.log).last_ack_eliciting_sent = Some(now);
        self.inner.on_packet_sent(sent_bytes, bytes_in_flight, now);
    }

    fn on_packets_acked(
        &mut self,
        acked: &[quiche::AckedPacket],
        rtt: &quiche::RttEstimate,
        bytes_in_flight: usize,
        now: Instant,
    ) {
        if rtt.new_sample {
            lock(&self.log)
                .samples
                .push(TapSample::Rtt(now, crate::adapter::rtt_info(rtt)));
        }
        self.inner
            .on_packets_acked(acked, rtt, bytes_in_flight, now);
    }

    fn on_peer_timestamp(&mut self, sample: quiche::PeerTimestamp) {
        lock(&self.log).samples.push(TapSample::OneWay(sample));
    }

    fn congestion_event(
        &mut self,
        lost_bytes: usize,
        largest_lost_time_sent: Instant,
        bytes_in_flight: usize,
        now: Instant,
    ) {
        self.inner
            .congestion_event(lost_bytes, largest_lost_time_sent, bytes_in_flight, now);
    }

    fn checkpoint(&mut self) {
        self.inner.checkpoint();
    }

    fn rollback(&mut self) -> bool {
        self.inner.rollback()
    }

    fn on_max_datagram_size_changed(&mut self, max_datagram_size: usize) {
        self.inner.on_max_datagram_size_changed(max_datagram_size);
    }

    fn congestion_window(&self) -> usize {
        self.inner.congestion_window()
    }

    fn ssthresh(&self) -> Option<usize> {
        self.inner.ssthresh()
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.inner.pacing_rate()
    }

    fn state_str(&self, now: Instant) -> &'static str {
        self.inner.state_str(now)
    }
}

/// The receiver window at one moment (what the qlog record carries).
#[derive(Clone, Debug, PartialEq)]
pub struct WindowData {
    /// The window, bytes.
    pub window: u64,
    /// LEDBAT++'s state.
    pub state: &'static str,
    /// Queuing delay estimate, ms.
    pub queuing_delay_ms: Option<f64>,
    /// Base delay estimate, ms.
    pub base_delay_ms: Option<f64>,
    /// The delay signal the estimates come from (`owd`, `rtt`), once
    /// there is one.
    pub delay_signal: Option<&'static str>,
}

impl WindowData {
    /// The `recovery_metrics_updated` event that records it ([`QLOG_WINDOW`]).
    pub fn qlog_event(&self) -> qlog::events::EventData {
        let mut ex_data = qlog::events::ExData::new();
        ex_data.insert(QLOG_WINDOW.into(), self.window.into());
        ex_data.insert(QLOG_STATE.into(), self.state.into());
        if let Some(q) = self.queuing_delay_ms {
            ex_data.insert(QLOG_QUEUING_DELAY.into(), q.into());
        }
        if let Some(b) = self.base_delay_ms {
            ex_data.insert(QLOG_BASE_DELAY.into(), b.into());
        }
        if let Some(signal) = self.delay_signal {
            ex_data.insert(QLOG_DELAY_SIGNAL.into(), signal.into());
        }
        qlog::events::EventData::QuicMetricsUpdated(qlog::events::quic::RecoveryMetricsUpdated {
            ex_data,
            ..Default::default()
        })
    }
}

/// Receiver-side LEDBAT++ for one connection (see the module docs).
pub struct ReceiverLbe {
    window: ReceiverLedbat,
    log: SharedLog,
    recv_bytes: u64,
    late_frames: usize,
    /// The last window, state and delay signal written to qlog.
    logged: Option<(u64, &'static str, Option<Signal>)>,
    mss: u64,
    qlog_events: u64,
}

impl fmt::Debug for ReceiverLbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReceiverLbe")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl ReceiverLbe {
    /// Receiver-side control with LEDBAT++'s parameters `cfg`
    /// ([`lbe_cc::rledbat::default_config`]: `profile=full`, TARGET 60 ms,
    /// is what `h3-fetch` runs) for packets of up to `max_datagram_size`
    /// bytes, starting at `now`.
    pub fn new(cfg: LedbatPlusPlusConfig, max_datagram_size: u64, now: Instant) -> Self {
        let path = PathInfo {
            max_datagram_size,
            ..PathInfo::default()
        };
        Self {
            window: ReceiverLedbat::new(cfg, path, now),
            log: SharedLog::default(),
            recv_bytes: 0,
            late_frames: 0,
            logged: None,
            mss: max_datagram_size,
            qlog_events: 0,
        }
    }

    /// Prepares the configuration the connection will be created from:
    /// the RTT tap as its congestion controller, and the initial connection
    /// credit at the window's initial value. Call it after any other
    /// congestion-control set-up of `config`.
    pub fn configure(&self, config: &mut quiche::Config) {
        config.set_cc_algorithm(quiche::CongestionControlAlgorithm::CUBIC);
        config.set_custom_congestion_control(Some(Arc::new(TapFactory {
            log: Arc::clone(&self.log),
        })));
        config.set_initial_max_data(self.window.window());
    }

    /// Feeds what happened on `conn` since the last call and applies the
    /// window; call after each batch of `recv()`s and reads, before
    /// `send()`.
    pub fn on_progress(&mut self, conn: &mut quiche::Connection, now: Instant) {
        let (samples, last_sent) = {
            let mut log = lock(&self.log);
            (
                std::mem::take(&mut log.samples),
                log.last_ack_eliciting_sent,
            )
        };
        for sample in samples {
            match sample {
                TapSample::Rtt(at, rtt) => self.window.on_rtt_sample(at, rtt),
                TapSample::OneWay(ts) => self.window.on_one_way_delay(
                    ts.time_received,
                    OneWayDelaySample::Received {
                        peer_send_time: ts.peer_send_time,
                        time_received: ts.time_received,
                    },
                ),
            }
        }
        let stats = conn.stats();
        let new_bytes = stats.recv_bytes.saturating_sub(self.recv_bytes);
        self.recv_bytes = stats.recv_bytes;
        if conn.is_established() {
            // The handshake's packets are not the download's.
            self.window.on_data(now, new_bytes);
        }
        let late = stats
            .late_stream_frames_recv
            .saturating_sub(self.late_frames);
        self.late_frames = stats.late_stream_frames_recv;
        for _ in 0..late {
            self.window.on_retransmission(now);
        }

        conn.set_connection_window_limit(Some(self.window.window()));

        if conn.is_established() {
            if let Some(srtt) = self.window.srtt() {
                let idle = last_sent.is_none_or(|t| now.saturating_duration_since(t) >= srtt);
                if idle {
                    conn.send_ack_eliciting().ok();
                }
            }
        }
        self.write_qlog(conn, now);
    }

    /// The window now, bytes.
    pub fn window(&self) -> u64 {
        self.window.window()
    }

    /// What the window did so far.
    pub fn stats(&self) -> ReceiverStats {
        self.window.stats()
    }

    /// LEDBAT++'s state now.
    pub fn state(&self) -> &'static str {
        self.window.state()
    }

    /// qlog events written so far.
    pub fn qlog_events(&self) -> u64 {
        self.qlog_events
    }

    /// The qlog record of the window now.
    pub fn window_data(&self) -> WindowData {
        let s = self.window.snapshot();
        let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
        WindowData {
            window: self.window.window(),
            state: self.window.state(),
            queuing_delay_ms: ms(s.queuing_delay),
            base_delay_ms: ms(s.base_delay),
            delay_signal: s.delay_signal.map(lbe_cc::delay::Signal::as_str),
        }
    }

    /// Writes a [`QLOG_WINDOW`] record when the window moved by a packet or more,
    /// or the state or the delay signal changed, since the last one.
    fn write_qlog(&mut self, conn: &mut quiche::Connection, now: Instant) {
        let window = self.window.window();
        let state = self.window.state();
        let signal = self.window.delay_signal();
        let due = match self.logged {
            None => true,
            Some((w, s, sig)) => s != state || sig != signal || w.abs_diff(window) >= self.mss,
        };
        if !due {
            return;
        }
        let Some(streamer) = conn.qlog_streamer() else {
            return;
        };
        let event = self.window_data().qlog_event();
        if streamer.add_event_data_with_instant(event, now).is_ok() {
            self.logged = Some((window, state, signal));
            self.qlog_events += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qlog_record_is_a_recovery_metrics_update_with_extension_fields() {
        let d = WindowData {
            window: 2700,
            state: "slow_start",
            queuing_delay_ms: Some(1.5),
            base_delay_ms: None,
            delay_signal: Some("owd"),
        };
        let json = serde_json::to_value(d.qlog_event()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "name": "quic:recovery_metrics_updated",
                "data": {
                    "lbe_receiver_window": 2700,
                    "lbe_receiver_state": "slow_start",
                    "lbe_queuing_delay_ms": 1.5,
                    "lbe_delay_signal": "owd"
                }
            })
        );
    }

    #[test]
    fn a_new_receiver_grants_two_packets() {
        let r = ReceiverLbe::new(lbe_cc::rledbat::default_config(), 1350, Instant::now());
        assert_eq!(r.window(), 2700);
        assert_eq!(r.state(), "slow_start");
        assert_eq!(r.qlog_events(), 0);
        assert_eq!(r.stats().window_min, 2700);
    }
}
