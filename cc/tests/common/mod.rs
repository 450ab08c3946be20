//! What `properties.rs` and `full_spec.rs` both feed a controller: ACKs
//! with random values, and the RTT state a QUIC stack reports beside them.

use std::ops::Range;
use std::time::Duration;
use std::time::Instant;

use lbe_cc::AckEvent;
use lbe_cc::AckedPacket;
use lbe_cc::RttInfo;
use proptest::prelude::*;

/// One ACK with random values.
#[derive(Clone, Debug)]
pub struct Ack {
    /// Time since the previous event.
    pub dt: Duration,
    /// Sizes of the acknowledged packets (may be empty).
    pub packets: Vec<u64>,
    /// How long before the ACK they were sent; `None`: before the start.
    pub sent_ago: Option<Duration>,
    pub latest_rtt: Duration,
    pub ack_delay: Duration,
    pub new_sample: bool,
    pub in_flight: u64,
}

/// ACKs `dt` after the previous event, of `packets` (a count) packets of
/// 1 to 70 000 bytes sent `rtt` ago (or before the start), with a latest
/// RTT drawn from `rtt`, an ACK delay from `ack_delay`, a new sample or
/// not, and any number of bytes in flight (mostly below 10 MB).
pub fn ack(
    dt: impl Strategy<Value = Duration>,
    packets: Range<usize>,
    rtt: impl Strategy<Value = Duration> + Clone,
    ack_delay: impl Strategy<Value = Duration>,
) -> impl Strategy<Value = Ack> {
    (
        dt,
        prop::collection::vec(1u64..70_000, packets),
        prop::option::of(rtt.clone()),
        rtt,
        ack_delay,
        any::<bool>(),
        prop_oneof![any::<u64>(), 0u64..10_000_000],
    )
        .prop_map(
            |(dt, packets, sent_ago, latest_rtt, ack_delay, new_sample, in_flight)| Ack {
                dt,
                packets,
                sent_ago,
                latest_rtt,
                ack_delay,
                new_sample,
                in_flight,
            },
        )
}

impl Ack {
    /// Its packets as acknowledged at `now`: sent `sent_ago` before it (at
    /// `now` if that is before the clock's origin), or at `long_ago`.
    pub fn acked_at(&self, now: Instant, long_ago: Instant) -> Vec<AckedPacket> {
        let time_sent = self
            .sent_ago
            .map_or(long_ago, |ago| now.checked_sub(ago).unwrap_or(now));
        let packet = |&bytes: &u64| AckedPacket { bytes, time_sent };
        self.packets.iter().map(packet).collect()
    }
}

/// The minimum RTT over the samples so far, as the stack reports it.
#[derive(Debug, Default)]
pub struct MinRtt(Option<Duration>);

impl MinRtt {
    /// The RTT state of an ACK with `latest_rtt` (a new sample or a repeated
    /// one) and `ack_delay`, the smoothed RTT being `smoothed_rtt`; the
    /// variation is half the latest RTT, the peer's `max_ack_delay` 25 ms.
    pub fn rtt_info(
        &mut self,
        latest_rtt: Duration,
        ack_delay: Duration,
        new_sample: bool,
        smoothed_rtt: Duration,
    ) -> RttInfo {
        if new_sample {
            self.0 = Some(self.0.map_or(latest_rtt, |m| m.min(latest_rtt)));
        }
        RttInfo {
            max_ack_delay: Duration::from_millis(25),
            rttvar: latest_rtt / 2,
            smoothed_rtt,
            min_rtt: self.0.unwrap_or(latest_rtt),
            new_sample,
            ack_delay,
            latest_rtt,
        }
    }
}

/// The event of an ACK at `now` of `acked`, `bytes_in_flight` in flight,
/// carrying `rtt` and no one-way delay sample.
pub fn ack_event(
    now: Instant,
    acked: &[AckedPacket],
    in_flight: u64,
    rtt: RttInfo,
) -> AckEvent<'_> {
    AckEvent {
        now,
        acked,
        bytes_in_flight: in_flight,
        rtt,
        one_way_delay: None,
    }
}
