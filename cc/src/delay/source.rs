//! Which delay signal a controller reads, per ACK: the round trip less
//! the peer's ACK delay, or the forward one-way delay mapped to a duration
//! (see the [module docs](super)).

use std::time::Duration;
use std::time::Instant;

use super::params;
use crate::AckEvent;
use crate::ParamError;
use crate::RttInfo;

/// What the first one-way sample is mapped to (see the module docs).
pub const OWD_HEADROOM: Duration = Duration::from_secs(1);

/// Which delay signal a controller reads (spec key `delay`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DelayMode {
    /// One-way delay where the peer sends timestamps, else the round trip.
    #[default]
    Auto,
    /// One-way delay only.
    OneWay,
    /// Round trip only (what the controllers did before timestamps).
    RoundTrip,
}

impl DelayMode {
    /// The `delay=` value: `auto`, `owd` or `rtt`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::OneWay => "owd",
            Self::RoundTrip => "rtt",
        }
    }

    /// Parses a `delay=` value.
    pub fn parse(key: &str, value: &str) -> Result<Self, ParamError> {
        match value {
            "auto" => Ok(Self::Auto),
            "owd" => Ok(Self::OneWay),
            "rtt" => Ok(Self::RoundTrip),
            _ => Err(params::bad_value(key, value, "auto, owd or rtt")),
        }
    }
}

/// The signal a delay sample came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Forward one-way delay, from the peer's timestamps.
    OneWay,
    /// Round-trip time less the peer's ACK delay.
    RoundTrip,
}

impl Signal {
    /// `owd` or `rtt`, as in the `delay=` key and in qlog.
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::OneWay => "owd",
            Signal::RoundTrip => "rtt",
        }
    }
}

/// What a controller must do to its stored delays before taking a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rebase {
    /// Nothing.
    None,
    /// The signal changed: forget every stored delay.
    Restart,
    /// Every stored delay moves up by this much (a one-way sample would
    /// have fallen below zero).
    Shift(Duration),
}

/// One ACK's delay sample (see [`DelaySource::sample`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelaySample {
    /// The delay.
    pub delay: Duration,
    /// Where it came from.
    pub signal: Signal,
    /// What to do to the stored delays first.
    pub rebase: Rebase,
    /// The same ACK's round trip ([`adjusted_rtt`]): a one-way history fits
    /// its clock drift against it (see the module docs).
    pub round_trip: Duration,
}

/// Picks each ACK's delay signal and maps one-way samples to durations
/// (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DelaySource {
    mode: DelayMode,
    signal: Option<Signal>,
    /// This endpoint's time one-way samples are measured from.
    epoch: Option<Instant>,
    /// Added to the raw one-way delay ([`crate::OneWayDelaySample::raw_ns`]
    /// from `epoch`), nanoseconds.
    bias_ns: i128,
}

impl DelaySource {
    /// A source for `mode`.
    pub fn new(mode: DelayMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// The signal of the last sample, `None` before any.
    pub fn signal(&self) -> Option<Signal> {
        self.signal
    }

    /// The path's base round trip, for rules that need one (LEDBAT++'s
    /// GAIN, -01 §4.2; LEDBAT's dynamic gain; a pacing round trip): the
    /// estimator's base `delay_base` when the signal is the round trip; with
    /// a one-way signal that base carries the clocks' offset (and
    /// [`OWD_HEADROOM`]), so the path's minimum RTT (`rtt.min_rtt`, quiche's)
    /// stands in for it.
    pub fn base_rtt(&self, delay_base: Option<Duration>, rtt: &RttInfo) -> Option<Duration> {
        match self.signal {
            Some(Signal::OneWay) => Some(rtt.min_rtt),
            _ => delay_base,
        }
    }

    /// The delay sample of `ack`, `None` when it has none (no new RTT
    /// sample, or no one-way delay once the source is one-way).
    #[inline]
    pub fn sample(&mut self, ack: &AckEvent<'_>) -> Option<DelaySample> {
        if !ack.rtt.new_sample {
            return None;
        }
        let one_way = match self.mode {
            DelayMode::RoundTrip => None,
            DelayMode::Auto | DelayMode::OneWay => ack.one_way_delay,
        };
        let Some(s) = one_way else {
            if self.mode == DelayMode::OneWay || self.signal == Some(Signal::OneWay) {
                return None;
            }
            self.signal = Some(Signal::RoundTrip);
            let round_trip = adjusted_rtt(&ack.rtt);
            return Some(DelaySample {
                delay: round_trip,
                signal: Signal::RoundTrip,
                rebase: Rebase::None,
                round_trip,
            });
        };
        let epoch = *self.epoch.get_or_insert(s.local_time());
        let raw = s.raw_ns(epoch);
        let mut rebase = Rebase::None;
        if self.signal != Some(Signal::OneWay) {
            self.bias_ns = OWD_HEADROOM.as_nanos() as i128 - raw;
            if self.signal.is_some() {
                rebase = Rebase::Restart;
            }
            self.signal = Some(Signal::OneWay);
        }
        let mut value = raw + self.bias_ns;
        if value < 0 {
            self.bias_ns -= value;
            rebase = Rebase::Shift(Duration::from_nanos(
                u64::try_from(-value).unwrap_or(u64::MAX),
            ));
            value = 0;
        }
        Some(DelaySample {
            delay: Duration::from_nanos(u64::try_from(value).unwrap_or(u64::MAX)),
            signal: Signal::OneWay,
            rebase,
            round_trip: adjusted_rtt(&ack.rtt),
        })
    }
}

/// The per-ACK delay sample: `latest_rtt` minus the (capped) ACK delay, when
/// the result stays at or above `min_rtt` (see the module docs).
#[inline]
pub fn adjusted_rtt(rtt: &RttInfo) -> Duration {
    let ack_delay = rtt.ack_delay.min(rtt.max_ack_delay);
    match rtt.latest_rtt.checked_sub(ack_delay) {
        Some(adjusted) if adjusted >= rtt.min_rtt => adjusted,
        _ => rtt.latest_rtt,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::testkit::ms;

    fn rtt(latest: u64, ack_delay: u64, min: u64) -> RttInfo {
        RttInfo {
            latest_rtt: ms(latest),
            ack_delay: ms(ack_delay),
            new_sample: true,
            min_rtt: ms(min),
            smoothed_rtt: ms(latest),
            rttvar: ms(0),
            max_ack_delay: ms(25),
        }
    }

    #[test]
    fn ack_delay_is_subtracted_capped_and_plausibility_checked() {
        // 50 ms path, peer held the ACK 25 ms: the sample is the path's 50 ms.
        assert_eq!(adjusted_rtt(&rtt(75, 25, 50)), ms(50));
        // Reported 40 ms but max_ack_delay is 25 ms: only 25 ms come off.
        assert_eq!(adjusted_rtt(&rtt(90, 40, 50)), ms(65));
        // 60 − 25 = 35 < min_rtt 50: the ACK delay is not believed.
        assert_eq!(adjusted_rtt(&rtt(60, 25, 50)), ms(60));
        // Exactly min_rtt is still plausible.
        assert_eq!(adjusted_rtt(&rtt(75, 25, 50)), ms(50));
        // Degenerate inputs do not underflow.
        assert_eq!(adjusted_rtt(&rtt(0, 25, 0)), ms(0));
    }

    /// An ACK at `now` with an RTT sample `latest_rtt` (when `new_sample`)
    /// and a sender's one-way sample `(peer_receive_time, time_sent)`.
    pub(in crate::delay) fn ack_at<'a>(
        now: Instant,
        latest_rtt: Duration,
        new_sample: bool,
        one_way: Option<(Duration, Instant)>,
    ) -> AckEvent<'a> {
        AckEvent {
            now,
            acked: &[],
            bytes_in_flight: 0,
            rtt: RttInfo {
                latest_rtt,
                ack_delay: Duration::ZERO,
                new_sample,
                min_rtt: ms(50),
                smoothed_rtt: latest_rtt,
                rttvar: Duration::ZERO,
                max_ack_delay: ms(25),
            },
            one_way_delay: one_way.map(|(peer_receive_time, time_sent)| {
                crate::OneWayDelaySample::Sent {
                    peer_receive_time,
                    time_sent,
                }
            }),
        }
    }

    /// The sample of an ACK whose round trip is `round_trip`.
    fn sample(
        delay: Duration,
        signal: Signal,
        rebase: Rebase,
        round_trip: Duration,
    ) -> Option<DelaySample> {
        Some(DelaySample {
            delay,
            signal,
            rebase,
            round_trip,
        })
    }

    #[test]
    fn auto_reads_the_round_trip_until_the_first_one_way_sample() {
        let t = Instant::now();
        let mut src = DelaySource::new(DelayMode::Auto);
        assert_eq!(src.signal(), None);
        // No timestamps yet: the round trip.
        let a = ack_at(t, ms(50), true, None);
        assert_eq!(
            src.sample(&a),
            sample(ms(50), Signal::RoundTrip, Rebase::None, ms(50))
        );
        // The first one-way sample maps to OWD_HEADROOM and restarts the
        // history.
        let a = ack_at(t + ms(150), ms(50), true, Some((ms(5000), t + ms(100))));
        assert_eq!(
            src.sample(&a),
            sample(ms(1000), Signal::OneWay, Rebase::Restart, ms(50))
        );
        // 130 ms more on the peer's clock, 100 ms more on ours: 30 ms more
        // one-way delay.
        let a = ack_at(t + ms(250), ms(80), true, Some((ms(5130), t + ms(200))));
        assert_eq!(
            src.sample(&a),
            sample(ms(1030), Signal::OneWay, Rebase::None, ms(80))
        );
        // Once one-way, an ACK without a timestamp gives no sample, nor does
        // an ACK without a new RTT sample.
        assert_eq!(src.sample(&ack_at(t + ms(300), ms(50), true, None)), None);
        let a = ack_at(t + ms(350), ms(50), false, Some((ms(5200), t + ms(300))));
        assert_eq!(src.sample(&a), None);
        assert_eq!(src.signal(), Some(Signal::OneWay));
    }

    #[test]
    fn raw_one_way_delays_in_both_directions() {
        use crate::OneWayDelaySample as S;
        let t = Instant::now() + Duration::from_secs(10);
        // Sent here 5 ms after the epoch, received at 7 s on the peer's clock.
        let sent = S::Sent {
            time_sent: t + ms(5),
            peer_receive_time: ms(7000),
        };
        assert_eq!(sent.local_time(), t + ms(5));
        assert_eq!(sent.raw_ns(t), 6_995_000_000);
        // Sent by the peer at 7 s on its clock, received here 5 ms before
        // the epoch.
        let received = S::Received {
            peer_send_time: ms(7000),
            time_received: t - ms(5),
        };
        assert_eq!(received.local_time(), t - ms(5));
        assert_eq!(received.raw_ns(t), -7_005_000_000);
    }

    /// A receiver's samples: the peer's send times and ours of arrival. The
    /// data queues 30 ms more: the delay grows by 30 ms.
    #[test]
    fn a_receiver_reads_the_delay_of_the_data_coming_to_it() {
        let t = Instant::now();
        let mut src = DelaySource::new(DelayMode::Auto);
        let ack = |now: Instant, peer_send_time: Duration| AckEvent {
            one_way_delay: Some(crate::OneWayDelaySample::Received {
                peer_send_time,
                time_received: now,
            }),
            ..ack_at(now, ms(50), true, None)
        };
        assert_eq!(
            src.sample(&ack(t + ms(20), ms(3000))),
            sample(ms(1000), Signal::OneWay, Rebase::None, ms(50))
        );
        // Sent 100 ms later by the peer's clock, arrived 130 ms later.
        assert_eq!(
            src.sample(&ack(t + ms(150), ms(3100))),
            sample(ms(1030), Signal::OneWay, Rebase::None, ms(50))
        );
        // 50 ms less than the first one's delay.
        assert_eq!(
            src.sample(&ack(t + ms(170), ms(3200))),
            sample(ms(950), Signal::OneWay, Rebase::None, ms(50))
        );
        // 1050 ms less (the peer's clock jumped): below zero, so the
        // history moves up by 50 ms, as for a sender's samples.
        assert_eq!(
            src.sample(&ack(t + ms(190), ms(4220))),
            sample(
                Duration::ZERO,
                Signal::OneWay,
                Rebase::Shift(ms(50)),
                ms(50)
            )
        );
    }

    #[test]
    fn owd_and_rtt_modes_read_one_signal_only() {
        let t = Instant::now();
        let with_ts = ack_at(t, ms(50), true, Some((ms(7), t)));
        let without = ack_at(t, ms(60), true, None);
        let mut owd = DelaySource::new(DelayMode::OneWay);
        assert_eq!(owd.sample(&without), None);
        assert_eq!(
            owd.sample(&with_ts),
            sample(ms(1000), Signal::OneWay, Rebase::None, ms(50))
        );
        let mut rtt = DelaySource::new(DelayMode::RoundTrip);
        assert_eq!(
            rtt.sample(&with_ts),
            sample(ms(50), Signal::RoundTrip, Rebase::None, ms(50))
        );
        assert_eq!(
            rtt.sample(&without),
            sample(ms(60), Signal::RoundTrip, Rebase::None, ms(60))
        );
    }

    #[test]
    fn the_clock_offset_does_not_change_the_samples() {
        // The same path seen by a peer whose clock reads 3 hours more.
        let t = Instant::now();
        let offset = Duration::from_secs(3 * 3600);
        let mut a = DelaySource::new(DelayMode::Auto);
        let mut b = DelaySource::new(DelayMode::Auto);
        for (i, owd) in [40u64, 45, 38, 90, 41].into_iter().enumerate() {
            let sent = t + ms(10 * i as u64);
            let recv = ms(20 + 10 * i as u64 + owd);
            let sa = a.sample(&ack_at(sent + ms(60), ms(80), true, Some((recv, sent))));
            let sb = b.sample(&ack_at(
                sent + ms(60),
                ms(80),
                true,
                Some((recv + offset, sent)),
            ));
            assert_eq!(sa, sb, "sample {i}");
            assert_eq!(sa.unwrap().delay, ms(1000 + owd - 40), "sample {i}");
        }
    }
}
