//! Event scripts for the controllers' unit tests.

use std::time::Duration;
use std::time::Instant;

use crate::AckEvent;
use crate::AckedPacket;
use crate::CongestionController;
use crate::LossEvent;
use crate::OneWayDelaySample;
use crate::ParamError;
use crate::RttInfo;

/// Maximum datagram size used by the scripts, bytes.
pub(crate) const MSS: u64 = 1200;

pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A controller's config: its defaults, then each `(key, value)` of `spec`
/// set in turn through `set` (the config's own `set`); panics on a pair
/// `set` refuses.
pub(crate) fn config<C: Default>(
    spec: &[(&str, &str)],
    set: fn(&mut C, &str, &str) -> Result<(), ParamError>,
) -> C {
    let mut cfg = C::default();
    for (k, v) in spec {
        set(&mut cfg, k, v).unwrap();
    }
    cfg
}

/// Drives one controller with explicit times.
pub(crate) struct Driver<C> {
    pub cc: C,
    /// The current time; starts one hour after an arbitrary `Instant` so
    /// that "sent long ago" is representable.
    pub now: Instant,
    /// When the script started.
    pub epoch: Instant,
    /// Time of the previous ACK (a packet sent then belongs to the round
    /// that ACK started).
    pub last_ack: Instant,
    pub min_rtt: Duration,
    pub max_ack_delay: Duration,
    /// The one-way delay sample the next ACK carries, if any.
    pub one_way: Option<OneWayDelaySample>,
}

impl<C: CongestionController> Driver<C> {
    pub fn new(cc: C) -> Self {
        // One epoch for every driver of the process, so that two drivers
        // through the same script (twins) see the same instants.
        static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        let epoch = *EPOCH.get_or_init(|| Instant::now() + Duration::from_secs(3600));
        Self {
            cc,
            now: epoch,
            epoch,
            last_ack: epoch,
            min_rtt: Duration::MAX,
            max_ack_delay: ms(25),
            one_way: None,
        }
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
    }

    /// A full ACK event; `in_flight` defaults to the window (a full window).
    pub fn ack_full(
        &mut self,
        sent: Instant,
        bytes: u64,
        latest_rtt: Duration,
        ack_delay: Duration,
        new_sample: bool,
        in_flight: Option<u64>,
    ) {
        if new_sample {
            self.min_rtt = self.min_rtt.min(latest_rtt);
        }
        let acked = [AckedPacket {
            bytes,
            time_sent: sent,
        }];
        let ack = AckEvent {
            now: self.now,
            acked: &acked,
            bytes_in_flight: in_flight.unwrap_or_else(|| self.cc.window()),
            rtt: RttInfo {
                latest_rtt,
                ack_delay,
                new_sample,
                min_rtt: if self.min_rtt == Duration::MAX {
                    latest_rtt
                } else {
                    self.min_rtt
                },
                smoothed_rtt: latest_rtt,
                rttvar: Duration::ZERO,
                max_ack_delay: self.max_ack_delay,
            },
            one_way_delay: self.one_way.take(),
        };
        self.cc.on_ack(&ack);
        self.last_ack = self.now;
    }

    /// An ACK at the current time for `bytes` sent at `sent`, with an RTT
    /// sample `rtt` and no ACK delay, a full window in flight.
    pub fn ack(&mut self, sent: Instant, bytes: u64, rtt: Duration) {
        self.ack_full(sent, bytes, rtt, Duration::ZERO, true, None);
    }

    /// One round trip: `rtt` later, one ACK for `bytes` sent when the
    /// previous ACK arrived, so it ends the controller's current round.
    pub fn round(&mut self, rtt: Duration, bytes: u64) {
        let sent = self.last_ack;
        self.advance(rtt);
        self.ack(sent, bytes, rtt);
    }

    /// An ACK `gap` after the previous event for a packet sent before the
    /// script started, so it never ends a round.
    pub fn ack_old(&mut self, gap: Duration, bytes: u64, rtt: Duration) {
        self.advance(gap);
        let sent = self.epoch - ms(1);
        self.ack(sent, bytes, rtt);
    }

    /// Packets sent at `sent` are declared lost now.
    pub fn loss(&mut self, sent: Instant) {
        let loss = LossEvent {
            now: self.now,
            lost_bytes: MSS,
            largest_lost_time_sent: sent,
            bytes_in_flight: self.cc.window(),
        };
        self.cc.on_congestion_event(&loss);
    }
}
