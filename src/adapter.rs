//! Runs an `lbe-cc` controller behind quiche's [`quiche::CongestionControl`].

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use lbe_cc::AckEvent;
use lbe_cc::AckedPacket;
use lbe_cc::CongestionController;
use lbe_cc::ControllerConfig;
use lbe_cc::LossEvent;
use lbe_cc::OneWayDelaySample;
use lbe_cc::PathInfo;
use lbe_cc::RttInfo;

/// Builds one controller per path; installed on a `quiche::Config` or
/// `quiche::Connection`.
pub struct PluginFactory {
    build: Box<dyn Fn(PathInfo) -> Box<dyn CongestionController> + Send + Sync>,
}

impl PluginFactory {
    /// A factory for the controller `config` describes.
    pub fn new(config: ControllerConfig) -> Arc<Self> {
        Self::from_fn(move |path| config.build(path))
    }

    /// A factory that builds controllers with `build`: for controllers that
    /// are not in `lbe-cc` (tests, experiments).
    pub fn from_fn<F>(build: F) -> Arc<Self>
    where
        F: Fn(PathInfo) -> Box<dyn CongestionController> + Send + Sync + 'static,
    {
        Arc::new(Self {
            build: Box::new(build),
        })
    }
}

impl quiche::CongestionControlFactory for PluginFactory {
    fn new_congestion_control(
        &self,
        max_datagram_size: usize,
        initial_window_packets: usize,
    ) -> Box<dyn quiche::CongestionControl> {
        let controller = (self.build)(PathInfo {
            max_datagram_size: max_datagram_size as u64,
            initial_window_packets: initial_window_packets as u64,
        });
        Box::new(Adapter {
            controller,
            acked: Vec::new(),
            one_way_delay: None,
        })
    }
}

/// One path's controller, translated from quiche's hooks.
struct Adapter {
    controller: Box<dyn CongestionController>,
    /// Reused across ACKs so that the per-ACK path does not allocate.
    acked: Vec<AckedPacket>,
    /// The one-way delay quiche reported for the ACK it reports next
    /// (`on_one_way_delay` comes right before `on_packets_acked`).
    one_way_delay: Option<OneWayDelaySample>,
}

impl fmt::Debug for Adapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.controller.snapshot())
    }
}

/// quiche's RTT estimate at an ACK as the controllers see it.
pub(crate) fn rtt_info(rtt: &quiche::RttEstimate) -> RttInfo {
    RttInfo {
        latest_rtt: rtt.latest_rtt,
        ack_delay: rtt.ack_delay,
        new_sample: rtt.new_sample,
        min_rtt: rtt.min_rtt,
        smoothed_rtt: rtt.smoothed_rtt,
        rttvar: rtt.rttvar,
        max_ack_delay: rtt.max_ack_delay,
    }
}

impl quiche::CongestionControl for Adapter {
    fn on_packet_sent(&mut self, sent_bytes: usize, bytes_in_flight: usize, now: Instant) {
        self.controller
            .on_packet_sent(now, sent_bytes as u64, bytes_in_flight as u64);
    }

    fn on_packets_acked(
        &mut self,
        acked: &[quiche::AckedPacket],
        rtt: &quiche::RttEstimate,
        bytes_in_flight: usize,
        now: Instant,
    ) {
        self.acked.clear();
        self.acked.extend(acked.iter().map(|p| AckedPacket {
            bytes: p.size as u64,
            time_sent: p.time_sent,
        }));
        self.controller.on_ack(&AckEvent {
            now,
            acked: &self.acked,
            bytes_in_flight: bytes_in_flight as u64,
            rtt: rtt_info(rtt),
            one_way_delay: self.one_way_delay.take(),
        });
    }

    /// quiche's timestamps (ext patch 0008): without the `one-way-delay`
    /// feature the controller reads the round trip alone.
    #[cfg(feature = "one-way-delay")]
    fn on_one_way_delay(&mut self, sample: quiche::OneWayDelay) {
        self.one_way_delay = Some(OneWayDelaySample::Sent {
            peer_receive_time: sample.peer_receive_time,
            time_sent: sample.time_sent,
        });
    }

    #[cfg(feature = "one-way-delay")]
    fn delay_signal(&self) -> Option<&'static str> {
        self.controller
            .delay_signal()
            .map(lbe_cc::delay::Signal::as_str)
    }

    fn congestion_event(
        &mut self,
        lost_bytes: usize,
        largest_lost_time_sent: Instant,
        bytes_in_flight: usize,
        now: Instant,
    ) {
        self.controller.on_congestion_event(&LossEvent {
            now,
            lost_bytes: lost_bytes as u64,
            largest_lost_time_sent,
            bytes_in_flight: bytes_in_flight as u64,
        });
    }

    fn checkpoint(&mut self) {
        self.controller.checkpoint();
    }

    fn rollback(&mut self) -> bool {
        self.controller.rollback()
    }

    fn on_max_datagram_size_changed(&mut self, max_datagram_size: usize) {
        self.controller.on_mtu_change(max_datagram_size as u64);
    }

    fn congestion_window(&self) -> usize {
        usize::try_from(self.controller.window()).unwrap_or(usize::MAX)
    }

    fn ssthresh(&self) -> Option<usize> {
        self.controller
            .snapshot()
            .ssthresh
            .map(|s| usize::try_from(s).unwrap_or(usize::MAX))
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.controller.pacing_rate()
    }

    fn state_str(&self, now: Instant) -> &'static str {
        self.controller.state(now)
    }
}
