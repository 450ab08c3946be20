//! The delay signal shared by the LEDBAT family, built from QUIC RTT samples.
//!
//! # Per-ACK delay
//!
//! QUIC gives round-trip samples, not one-way delays, and the peer may hold
//! an ACK back for up to its `max_ack_delay` (25 ms by default, RFC 9000
//! §18.2), which against a 60 ms target would read as queuing. Each ACK that
//! produced a new RTT sample (`RttInfo::new_sample`) therefore contributes
//!
//! ```text
//! ack_delay = min(reported ack_delay, max_ack_delay)
//! delay     = latest_rtt - ack_delay   if latest_rtt - ack_delay >= min_rtt
//!           = latest_rtt               otherwise
//! ```
//!
//! the plausibility rule [RFC 9002 §5.3](https://www.rfc-editor.org/rfc/rfc9002#section-5.3) (and quiche) use for smoothed RTT: an
//! ACK delay that would take the sample below the path's minimum RTT is not
//! believed. The cap is always applied; a caller that wants the RFC 9002
//! "before handshake confirmation" behaviour (no cap) passes
//! `max_ack_delay = Duration::MAX` until then. ACKs that repeat an older
//! sample (`new_sample == false`) are not fed to the estimator.
//!
//! # Current and base delay ([RFC 6817 §2.4.2](https://www.rfc-editor.org/rfc/rfc6817#section-2.4.2), adapted to RTT as LEDBAT++
//! [draft -01 §4.5](https://datatracker.ietf.org/doc/html/draft-irtf-iccrg-ledbat-plus-plus-01#section-4.5) does)
//!
//! * current delay: the minimum of the last `current_filter` samples
//!   (CURRENT_FILTER, default 4). LEDBAT++ -01 §4.5: "A LEDBAT++ sender
//!   SHOULD filter the round trip measurements by using the minimum of the
//!   4 most recent delay samples, as suggested in the LEDBAT
//!   specification." [RFC 6817 §3.4.2](https://www.rfc-editor.org/rfc/rfc6817#section-3.4.2) also bounds the samples' age ("not
//!   older than an RTT in the past"), which -01 does not repeat: LEDBAT
//!   applies it ([`DelayEstimator::on_sample_within`]), LEDBAT++ keeps
//!   the 4 most recent samples whatever their age.
//! * base delay: the minimum over `base_history` buckets of `base_bucket`
//!   each (BASE_HISTORY, 10 one-minute buckets, [RFC 6817 §2.4.2](https://www.rfc-editor.org/rfc/rfc6817#section-2.4.2) and §3.4.1;
//!   the LEDBAT++ draft's minimum over the last 10 minutes).
//!
//! Buckets are aligned on the first sample, not on wall-clock minutes (this
//! crate has no wall clock): bucket *k* covers `[t0 + k·len, t0 + (k+1)·len)`.
//! When time enters a new bucket, buckets older than `base_history` are
//! dropped, and buckets that elapsed without a sample count as empty. A
//! sample taken at the very start of its bucket is therefore forgotten
//! exactly `base_history · base_bucket` (10 min) later, one taken at the end
//! of its bucket `(base_history − 1) · base_bucket` (9 min) later. Forgetting
//! is what lets a route change raise the base, and also what makes plain
//! LEDBAT's latency drift (seed `ledbatpp-experimental-evaluation` §2).
//!
//! queuing delay = current − base (never negative).
//!
//! # One-way delay (spec key `delay=auto|owd|rtt`)
//!
//! Where the peer sends timestamps (QUIC's TIMESTAMP frame,
//! draft-huitema-quic-ts-08, negotiated by quiche's patch 0008), each ACK
//! that gives a new RTT sample can also carry the forward one-way delay of
//! its largest acknowledged packet ([`crate::OneWayDelaySample`]), the
//! signal LEDBAT (RFC 6817) was designed on: its receiver timestamps data
//! packets and the sender reads the one-way delay. A round trip also counts the queue of
//! the reverse path, so an upload on the same line reads as the LBE's own
//! queue. [`DelaySource`] picks the signal per ACK:
//!
//! * `rtt`: the per-ACK RTT sample above, always;
//! * `owd`: the one-way delay only; ACKs without one give no sample;
//! * `auto` (default): the round trip until the first one-way sample, then
//!   the one-way delay only (the history restarts once, at the switch: the
//!   two signals do not share a base).
//!
//! The two clocks differ by an unknown offset. As RFC 6817 explains for
//! its own one-way measurements, the base delay, a minimum over the
//! history, absorbs it, and only current − base is used. [`DelaySource`] maps the first one-way
//! sample to [`OWD_HEADROOM`] (1 s) and later ones by the same offset, so
//! the base and current delays of a one-way signal are 1 s plus what the
//! path added since the first sample; the queuing delay is exact. A sample
//! that would fall below zero (a receiver clock running slow for hours)
//! shifts the whole history up instead ([`DelayEstimator::shift`]).
//!
//! The offset also drifts with the clocks' skew (RFC 6817 discusses clock
//! skew among its measurement errors): with the receiver's clock fast by 100 ppm the one-way
//! delay grows by 6 ms a minute, and a ten-minute minimum lags the true
//! base by up to 60 ms, the whole target. With a one-way signal the
//! estimator therefore fits a line through its complete buckets' minima
//! less each bucket's least round trip (each [`DelaySample`] carries its
//! ACK's round trip): a queue on the forward path raises a bucket's least
//! one-way delay and its least round trip alike, a clock skew the one-way
//! delay only. (A line through the one-way minima alone read a queue that
//! the flow never empties as drift: RFC 6817 LEDBAT, whose first bucket
//! holds the empty path and every later one its queue at the target, saw a
//! slope, projected the base up to the queue, and filled the queue again
//! above it; in the simulator, 100.3 ms of queue for a 25 ms target over
//! the last 5 minutes of 10, 25.5 ms on the round trip; docs/one-way-delay.md.)
//! The fit is
//! least squares over the times of the minima, at least
//! [`DRIFT_MIN_BUCKETS`] buckets; the bucket under way is left out, so that
//! a queue of the last seconds does not tilt it; when the slope is
//! positive, each bucket's minimum is projected to now along it before
//! taking the minimum; the slope is capped at [`MAX_CLOCK_DRIFT`] (200 ppm,
//! two ±100 ppm crystals). A slow receiver clock needs nothing: new minima
//! follow it. A queue on the reverse path (an upload) raises the round
//! trips only, which makes the fit fall, and a falling fit is not applied
//! (a fast receiver clock under a growing reverse queue is then corrected
//! less, or not at all). Round-trip samples use one clock and never
//! drift.
//!
//! [`DelaySource`] (`source.rs`) picks the signal and maps its samples;
//! [`DelayEstimator`] (`estimator.rs`) keeps the current and base delays.

mod estimator;
mod source;
mod spread;

use std::time::Duration;

pub use estimator::CurrentFilter;
pub use estimator::DelayEstimator;
pub use estimator::BASE_BUCKET;
pub use estimator::BASE_HISTORY;
pub use estimator::CURRENT_FILTER;
pub use estimator::DRIFT_MIN_BUCKETS;
pub use estimator::MAX_BASE_HISTORY;
pub use estimator::MAX_CLOCK_DRIFT;
pub use estimator::MAX_CURRENT_FILTER;
pub use source::adjusted_rtt;
pub use source::DelayMode;
pub use source::DelaySample;
pub use source::DelaySource;
pub use source::Rebase;
pub use source::Signal;
pub use source::OWD_HEADROOM;
pub use spread::RoundSpread;
pub use spread::MIN_SAMPLES as NOISE_SAMPLES;
pub use spread::ROUNDS as NOISE_ROUNDS;

use crate::params;
use crate::ParamError;

/// `d` in nanoseconds as an `f64`, exact below 2^53 ns (104 days), without
/// the slow `u128` to `f64` conversion of `d.as_nanos() as f64`.
pub(crate) fn nanos(d: Duration) -> f64 {
    d.as_secs() as f64 * 1e9 + d.subsec_nanos() as f64
}

/// Parameters of the delay filters, shared by `ledbat` and `ledbatpp`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayConfig {
    /// Samples in the current-delay minimum filter. Default 4
    /// ([`CURRENT_FILTER`]). Spec key `current_filter`, 1 to 32.
    pub(crate) current_filter: usize,
    /// Buckets in the base-delay history. Default 10 ([`BASE_HISTORY`]).
    /// Spec key `base_history`, 1 to 60.
    pub(crate) base_history: usize,
    /// Length of one base-history bucket. Default 60 s ([`BASE_BUCKET`]).
    /// Spec key `base_bucket`, 1 s to 1 h.
    pub(crate) base_bucket: Duration,
    /// Which signal to read. Default [`DelayMode::Auto`]. Spec key
    /// `delay`, `auto`, `owd` or `rtt`.
    pub(crate) mode: DelayMode,
}

impl Default for DelayConfig {
    fn default() -> Self {
        Self {
            current_filter: CURRENT_FILTER,
            base_history: BASE_HISTORY,
            base_bucket: BASE_BUCKET,
            mode: DelayMode::Auto,
        }
    }
}

impl DelayConfig {
    /// The spec keys this struct handles.
    pub const KEYS: [&'static str; 4] = ["current_filter", "base_history", "base_bucket", "delay"];

    /// Sets one of [`Self::KEYS`]; `None` when `key` is not one of them.
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), ParamError>> {
        let result = match key {
            "current_filter" => params::u64_in(key, value, 1, MAX_CURRENT_FILTER as u64)
                .map(|n| self.current_filter = n as usize),
            "base_history" => params::u64_in(key, value, 1, MAX_BASE_HISTORY as u64)
                .map(|n| self.base_history = n as usize),
            "base_bucket" => params::duration_in(
                key,
                value,
                Duration::from_secs(1),
                Duration::from_secs(3600),
            )
            .map(|d| self.base_bucket = d),
            "delay" => DelayMode::parse(key, value).map(|m| self.mode = m),
            _ => return None,
        };
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::source::tests::ack_at;
    use super::*;
    use crate::testkit::ms;
    use crate::Snapshot;

    #[test]
    fn config_keys_are_range_checked() {
        let mut c = DelayConfig::default();
        assert_eq!(c.set("nope", "1"), None);
        assert_eq!(c.set("current_filter", "8"), Some(Ok(())));
        assert_eq!(c.current_filter, 8);
        assert_eq!(
            c.set("current_filter", "0")
                .unwrap()
                .unwrap_err()
                .to_string(),
            "bad value '0' for 'current_filter': expected a whole number from 1 to 32"
        );
        assert!(c.set("base_history", "61").unwrap().is_err());
        assert_eq!(c.set("base_bucket", "30s"), Some(Ok(())));
        assert_eq!(c.base_bucket, Duration::from_secs(30));
        assert!(c.set("base_bucket", "10ms").unwrap().is_err());
    }

    #[test]
    fn delay_mode_values_and_the_error_for_others() {
        let mut c = DelayConfig::default();
        assert_eq!(c.mode, DelayMode::Auto);
        assert_eq!(c.set("delay", "owd"), Some(Ok(())));
        assert_eq!(c.mode, DelayMode::OneWay);
        assert_eq!(c.set("delay", "rtt"), Some(Ok(())));
        assert_eq!(c.mode, DelayMode::RoundTrip);
        assert_eq!(c.set("delay", "auto"), Some(Ok(())));
        assert_eq!(c.mode, DelayMode::Auto);
        assert_eq!(
            c.set("delay", "oneway").unwrap().unwrap_err().to_string(),
            "bad value 'oneway' for 'delay': expected auto, owd or rtt"
        );
        assert_eq!(Signal::OneWay.as_str(), "owd");
        assert_eq!(Signal::RoundTrip.as_str(), "rtt");
    }

    #[test]
    fn a_one_way_sample_below_zero_shifts_the_history_up() {
        let t = Instant::now();
        let mut src = DelaySource::new(DelayMode::OneWay);
        let mut d = DelayEstimator::new(&DelayConfig::default());
        let first = src
            .sample(&ack_at(t, ms(50), true, Some((ms(5000), t))))
            .unwrap();
        d.on_delay_sample(t, first, None);
        assert_eq!(d.base(), Some(ms(1000)));
        // 1.5 s less on the peer's clock for the same send time: a sample
        // of -0.5 s, shifted to 0 and the history 0.5 s up with it.
        let low = src
            .sample(&ack_at(t + ms(10), ms(50), true, Some((ms(3500), t))))
            .unwrap();
        assert_eq!(
            low,
            DelaySample {
                delay: Duration::ZERO,
                signal: Signal::OneWay,
                rebase: Rebase::Shift(ms(500)),
                round_trip: ms(50),
            }
        );
        let mut shifted = d.clone();
        shifted.shift(ms(500));
        assert_eq!(
            (shifted.base(), shifted.current()),
            (Some(ms(1500)), Some(ms(1500)))
        );
        d.on_delay_sample(t + ms(10), low, None);
        assert_eq!((d.base(), d.current()), (Some(ms(0)), Some(ms(0))));
        // Later samples keep the new offset: 5000 ms now reads 1.5 s.
        let again = src
            .sample(&ack_at(t + ms(20), ms(50), true, Some((ms(5000), t))))
            .unwrap();
        assert_eq!(again.delay, ms(1500));
        assert_eq!(again.rebase, Rebase::None);
    }

    /// 5 round trips on an empty path (40 ms RTT, 20 ms forward one-way
    /// delay), then 30 with 200 ms queued on the reverse path only (an
    /// upload on the same line): the RTT is 240 ms, the forward one-way
    /// delay still 20 ms. The peer's clock reads 2 hours more than ours.
    fn reverse_queue<C: crate::CongestionController>(cc: C) -> (u64, Snapshot) {
        let mut d = crate::testkit::Driver::new(cc);
        let offset = Duration::from_secs(7200);
        for round in 0..35 {
            let rtt = if round < 5 { ms(40) } else { ms(240) };
            let sent = d.last_ack;
            d.one_way = Some(crate::OneWayDelaySample::Sent {
                peer_receive_time: offset + (sent - d.epoch) + ms(20),
                time_sent: sent,
            });
            d.round(rtt, 12_000);
        }
        let snapshot = d.cc.snapshot();
        assert_eq!(d.cc.delay_signal(), snapshot.delay_signal);
        (d.cc.window(), snapshot)
    }

    fn config(spec: &str) -> crate::ControllerConfig {
        spec.parse().unwrap()
    }

    fn path() -> crate::PathInfo {
        crate::PathInfo {
            max_datagram_size: 1200,
            initial_window_packets: 10,
        }
    }

    /// LEDBAT's dynamic gain (seed `ledbat-dynamic-gain`) computes its gain
    /// from the base round trip: on a path with no queue either way both
    /// signals give the same gains and windows (a one-way base is
    /// `OWD_HEADROOM`, 1 s, not a round trip).
    #[test]
    fn ledbats_dynamic_gain_reads_the_base_round_trip_on_either_signal() {
        use crate::ControllerConfig as C;
        let run = |delay: &str| {
            let spec = format!("ledbat:research=true,dynamic_gain=true,delay={delay}");
            let C::Ledbat(c) = config(&spec) else {
                unreachable!()
            };
            let mut d = crate::testkit::Driver::new(crate::ledbat::Ledbat::new(c, path()));
            let offset = Duration::from_secs(7200);
            let mut seen = Vec::new();
            for _ in 0..40 {
                let sent = d.last_ack;
                d.one_way = Some(crate::OneWayDelaySample::Sent {
                    peer_receive_time: offset + (sent - d.epoch) + ms(20),
                    time_sent: sent,
                });
                d.round(ms(40), 12_000);
                seen.push((
                    crate::CongestionController::window(&d.cc),
                    crate::CongestionController::snapshot(&d.cc).gain,
                ));
            }
            seen
        };
        let rtt = run("rtt");
        assert_eq!(run("owd"), rtt);
        // The gain moved off its start: the framework ran.
        assert_ne!(rtt.first().unwrap().1, rtt.last().unwrap().1, "{rtt:?}");
    }

    #[test]
    fn a_reverse_path_queue_stops_the_rtt_signal_but_not_the_one_way_delay() {
        use crate::ControllerConfig as C;
        let ledbatpp = |spec: &str| match config(spec) {
            C::LedbatPlusPlus(c) => reverse_queue(crate::ledbatpp::LedbatPlusPlus::new(c, path())),
            _ => unreachable!(),
        };
        let ledbat = |spec: &str| match config(spec) {
            C::Ledbat(c) => reverse_queue(crate::ledbat::Ledbat::new(c, path())),
            _ => unreachable!(),
        };
        for (name, run) in [
            ("ledbatpp", &ledbatpp as &dyn Fn(&str) -> (u64, Snapshot)),
            ("ledbat", &ledbat),
        ] {
            let (w_owd, owd) = run(&format!("{name}:delay=owd"));
            let (w_auto, auto) = run(&format!("{name}:delay=auto"));
            let (w_rtt, rtt) = run(&format!("{name}:delay=rtt"));
            assert_eq!(
                (w_auto, auto),
                (w_owd, owd),
                "{name}: auto reads the one-way delay"
            );
            assert_eq!(owd.delay_signal, Some(Signal::OneWay), "{name}");
            assert_eq!(owd.queuing_delay, Some(Duration::ZERO), "{name}");
            // The one-way base: OWD_HEADROOM, whatever the clocks' offset.
            assert_eq!(owd.base_delay, Some(OWD_HEADROOM), "{name}");
            assert_eq!(rtt.delay_signal, Some(Signal::RoundTrip), "{name}");
            assert_eq!(rtt.queuing_delay, Some(ms(200)), "{name}");
            assert_eq!(rtt.base_delay, Some(ms(40)), "{name}");
            assert!(w_owd > 4 * w_rtt, "{name}: {w_owd} vs {w_rtt}");
        }

        let cdg = |spec: &str| match config(spec) {
            C::Cdg(c) => reverse_queue(crate::cdg::Cdg::new(c, path())),
            _ => unreachable!(),
        };
        let (_, owd) = cdg("cdg:delay=owd");
        assert_eq!(owd.delay_signal, Some(Signal::OneWay));
        assert_eq!(owd.gradient_us, Some(0), "a constant one-way delay");
        let (_, rtt) = cdg("cdg:delay=rtt");
        assert_eq!(rtt.delay_signal, Some(Signal::RoundTrip));
    }
}
