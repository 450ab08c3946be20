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

use std::time::Duration;
use std::time::Instant;

use crate::params;
use crate::ParamError;
use crate::RttInfo;
use crate::Snapshot;

/// CURRENT_FILTER: samples in the current-delay minimum filter
/// (RFC 6817 §2.4.2 and §3.4.2; LEDBAT++ draft -01 §4.5: "the minimum of
/// the 4 most recent delay samples").
pub const CURRENT_FILTER: usize = 4;
/// Largest accepted `current_filter`, samples.
pub const MAX_CURRENT_FILTER: usize = 32;
/// BASE_HISTORY: buckets in the base-delay history (RFC 6817 §2.4.2 and
/// §3.4.1: 10 one-minute buckets).
pub const BASE_HISTORY: usize = 10;
/// Largest accepted `base_history`, buckets.
pub const MAX_BASE_HISTORY: usize = 60;
/// Length of one base-history bucket: one minute (RFC 6817 §3.4.1).
pub const BASE_BUCKET: Duration = Duration::from_secs(60);

/// The per-ACK delay sample: `latest_rtt` minus the (capped) ACK delay, when
/// the result stays at or above `min_rtt` (see the module docs).
pub fn adjusted_rtt(rtt: &RttInfo) -> Duration {
    let ack_delay = rtt.ack_delay.min(rtt.max_ack_delay);
    match rtt.latest_rtt.checked_sub(ack_delay) {
        Some(adjusted) if adjusted >= rtt.min_rtt => adjusted,
        _ => rtt.latest_rtt,
    }
}

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
}

impl Default for DelayConfig {
    fn default() -> Self {
        Self {
            current_filter: CURRENT_FILTER,
            base_history: BASE_HISTORY,
            base_bucket: BASE_BUCKET,
        }
    }
}

impl DelayConfig {
    /// The spec keys this struct handles.
    pub const KEYS: [&'static str; 3] = ["current_filter", "base_history", "base_bucket"];

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
            _ => return None,
        };
        Some(result)
    }
}

/// Current-delay filter and base-delay history (see the module docs).
#[derive(Clone, Debug)]
pub struct DelayEstimator {
    /// Ring of the last samples; only the first `current_len` slots are used.
    current: [Duration; MAX_CURRENT_FILTER],
    /// When each slot of `current` was taken (`None`: never filled).
    current_at: [Option<Instant>; MAX_CURRENT_FILTER],
    current_len: usize,
    current_filled: usize,
    current_next: usize,
    /// Minimum of the filled `current` slots, kept up to date on insert.
    current_min: Option<Duration>,
    /// Ring of bucket minima, `Duration::MAX` meaning "no sample";
    /// `base[newest]` is the bucket time is in now.
    base: [Duration; MAX_BASE_HISTORY],
    base_len: usize,
    newest: usize,
    bucket_len: Duration,
    /// When the newest bucket ends; `None` before the first sample.
    bucket_end: Option<Instant>,
    base_min: Option<Duration>,
}

impl DelayEstimator {
    /// An empty estimator.
    pub fn new(config: &DelayConfig) -> Self {
        Self {
            current: [Duration::ZERO; MAX_CURRENT_FILTER],
            current_at: [None; MAX_CURRENT_FILTER],
            current_len: config.current_filter.clamp(1, MAX_CURRENT_FILTER),
            current_filled: 0,
            current_next: 0,
            current_min: None,
            base: [Duration::MAX; MAX_BASE_HISTORY],
            base_len: config.base_history.clamp(1, MAX_BASE_HISTORY),
            newest: 0,
            bucket_len: config.base_bucket.max(Duration::from_nanos(1)),
            bucket_end: None,
            base_min: None,
        }
    }

    /// Records a delay sample taken at `now`.
    pub fn on_sample(&mut self, now: Instant, delay: Duration) {
        self.advance(now);
        if self.bucket_end.is_none() {
            self.bucket_end = Some(now.checked_add(self.bucket_len).unwrap_or(now));
        }
        let slot = &mut self.base[self.newest];
        *slot = (*slot).min(delay);
        self.base_min = Some(self.base_min.map_or(delay, |b| b.min(delay)));

        let evicted = self.current[self.current_next];
        self.current[self.current_next] = delay;
        self.current_at[self.current_next] = Some(now);
        self.current_next = (self.current_next + 1) % self.current_len;
        if self.current_filled < self.current_len {
            self.current_filled += 1;
            self.current_min = Some(self.current_min.map_or(delay, |c| c.min(delay)));
        } else if self.current_min == Some(evicted) && delay > evicted {
            // The minimum may have left the window: recompute (≤ 32 slots).
            self.current_min = self.current[..self.current_len].iter().min().copied();
        } else {
            self.current_min = Some(self.current_min.map_or(delay, |c| c.min(delay)));
        }
    }

    /// Records a delay sample taken at `now` under [RFC 6817 §3.4.2](https://www.rfc-editor.org/rfc/rfc6817#section-3.4.2)'s age
    /// limit: "The value of CURRENT_FILTER will depend on the filter being
    /// employed, but CURRENT_FILTER MUST be limited such that samples in the
    /// list are not older than an RTT in the past." The current delay is then
    /// the minimum of those of the last `current_filter` samples taken at or
    /// after `now − rtt` (the sample just taken always counts). LEDBAT
    /// (RFC 6817) uses this; LEDBAT++ -01 §4.5 asks only for "the minimum of
    /// the 4 most recent delay samples" and uses [`Self::on_sample`].
    pub fn on_sample_within(&mut self, now: Instant, delay: Duration, rtt: Duration) {
        self.on_sample(now, delay);
        let Some(oldest) = now.checked_sub(rtt) else {
            return;
        };
        self.current_min = (0..self.current_filled)
            .filter(|&i| self.current_at[i].is_some_and(|at| at >= oldest))
            .map(|i| self.current[i])
            .min();
    }

    /// Lets time pass without a sample: drops buckets that left the history.
    pub fn advance(&mut self, now: Instant) {
        let Some(end) = self.bucket_end else {
            return;
        };
        if now < end {
            return;
        }
        let len = self.bucket_len.as_nanos();
        let steps = 1 + (now - end).as_nanos() / len;
        if steps >= self.base_len as u128 {
            self.base[..self.base_len].fill(Duration::MAX);
        } else {
            for _ in 0..steps {
                self.newest = (self.newest + 1) % self.base_len;
                self.base[self.newest] = Duration::MAX;
            }
        }
        // `steps * len` fits: it is at most (now - end) + len.
        let shift = Duration::from_nanos(u64::try_from(steps * len).unwrap_or(u64::MAX));
        self.bucket_end = Some(end.checked_add(shift).unwrap_or(now));
        let min = self.base[..self.base_len].iter().min().copied();
        self.base_min = min.filter(|d| *d != Duration::MAX);
    }

    /// Base delay: the minimum over the history, `None` before any sample
    /// (or after the whole history expired).
    pub fn base(&self) -> Option<Duration> {
        self.base_min
    }

    /// Current delay: the minimum of the last `current_filter` samples.
    pub fn current(&self) -> Option<Duration> {
        self.current_min
    }

    /// Queuing delay: current − base, zero when either is unknown.
    pub fn queuing(&self) -> Duration {
        match (self.current_min, self.base_min) {
            (Some(c), Some(b)) => c.saturating_sub(b),
            _ => Duration::ZERO,
        }
    }

    /// The delay fields of a LEDBAT-family [`Snapshot`] (base, current and
    /// queuing delay) filled in for the controller's window, ssthresh
    /// (`f64::INFINITY` while there is none), target and gain.
    pub fn snapshot(&self, cwnd: u64, ssthresh: f64, target: Duration, gain: f64) -> Snapshot {
        let current = self.current();
        let base = self.base();
        Snapshot {
            cwnd,
            ssthresh: ssthresh.is_finite().then_some(ssthresh as u64),
            base_delay: base,
            current_delay: current,
            queuing_delay: current.and(base).map(|_| self.queuing()),
            target: Some(target),
            gain: Some(gain),
            ..Snapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

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

    #[test]
    fn current_delay_is_min_of_last_four() {
        let t = Instant::now();
        let mut d = DelayEstimator::new(&DelayConfig::default());
        assert_eq!(d.current(), None);
        assert_eq!(d.queuing(), Duration::ZERO);
        for (i, s) in [40, 30, 50, 60, 70, 80, 90, 35].into_iter().enumerate() {
            d.on_sample(t + ms(i as u64), ms(s));
            let start = (i + 1).saturating_sub(4);
            let expect = [40, 30, 50, 60, 70, 80, 90, 35][start..=i]
                .iter()
                .min()
                .copied()
                .unwrap();
            assert_eq!(d.current(), Some(ms(expect)), "after sample {i}");
        }
        assert_eq!(d.base(), Some(ms(30)));
        // Last four: 70, 80, 90, 35.
        assert_eq!(d.queuing(), ms(5));
    }

    #[test]
    fn samples_older_than_an_rtt_leave_the_current_filter() {
        // RFC 6817 §3.4.2: samples at t, t + 10, t + 20 and t + 61 ms with a
        // 50 ms RTT. At t + 61 the samples of t and t + 10 are older than
        // t + 11: the current delay is the minimum of 45 and 70, not the
        // 20 ms of t (what `on_sample` keeps: the last four samples).
        let t = Instant::now();
        let mut within = DelayEstimator::new(&DelayConfig::default());
        let mut plain = DelayEstimator::new(&DelayConfig::default());
        let samples = [(0, 20), (10, 30), (20, 45), (61, 70)];
        let mut trace = Vec::new();
        for (at, delay) in samples {
            within.on_sample_within(t + ms(at), ms(delay), ms(50));
            plain.on_sample(t + ms(at), ms(delay));
            trace.push((within.current(), plain.current()));
        }
        let some = |n| Some(ms(n));
        assert_eq!(
            trace,
            [
                (some(20), some(20)),
                (some(20), some(20)),
                (some(20), some(20)),
                (some(45), some(20)),
            ]
        );
        // A sample exactly one RTT old still counts: t + 20 at t + 70.
        within.on_sample_within(t + ms(70), ms(80), ms(50));
        assert_eq!(within.current(), some(45));
        within.on_sample_within(t + ms(71), ms(80), ms(50));
        assert_eq!(within.current(), some(70));
        // Only the newest sample is within the RTT: it is the current delay.
        within.on_sample_within(t + ms(200), ms(90), ms(50));
        assert_eq!(within.current(), some(90));
        assert_eq!(within.base(), some(20));
        assert_eq!(within.queuing(), ms(70));
    }

    #[test]
    fn base_history_forgets_a_sample_after_ten_minutes() {
        let t0 = Instant::now();
        let mut d = DelayEstimator::new(&DelayConfig::default());
        d.on_sample(t0, ms(10));
        // One sample of 50 ms every minute after that.
        for minute in 1..10 {
            d.on_sample(t0 + Duration::from_secs(60 * minute), ms(50));
            assert_eq!(d.base(), Some(ms(10)), "minute {minute}");
        }
        d.on_sample(
            t0 + Duration::from_secs(600) - Duration::from_nanos(1),
            ms(50),
        );
        assert_eq!(d.base(), Some(ms(10)), "still inside the tenth minute");
        d.on_sample(t0 + Duration::from_secs(600), ms(50));
        assert_eq!(d.base(), Some(ms(50)), "forgotten after ten minutes");
    }

    #[test]
    fn a_late_sample_in_its_bucket_is_kept_nine_to_ten_minutes() {
        let t0 = Instant::now();
        let mut d = DelayEstimator::new(&DelayConfig::default());
        d.on_sample(t0, ms(40));
        d.on_sample(t0 + Duration::from_secs(59), ms(10));
        d.advance(t0 + Duration::from_secs(599));
        assert_eq!(d.base(), Some(ms(10)));
        d.advance(t0 + Duration::from_secs(600));
        assert_eq!(d.base(), None, "whole history expired, nothing since");
        d.on_sample(t0 + Duration::from_secs(601), ms(70));
        assert_eq!(d.base(), Some(ms(70)));
    }

    #[test]
    fn empty_minutes_count_and_huge_gaps_clear_everything() {
        let t0 = Instant::now();
        let cfg = DelayConfig {
            base_history: 3,
            ..DelayConfig::default()
        };
        let mut d = DelayEstimator::new(&cfg);
        d.on_sample(t0, ms(10));
        d.on_sample(t0 + Duration::from_secs(150), ms(20)); // bucket 2
        assert_eq!(d.base(), Some(ms(10)));
        d.on_sample(t0 + Duration::from_secs(180), ms(30)); // bucket 3: 0 dropped
        assert_eq!(d.base(), Some(ms(20)));
        d.on_sample(t0 + Duration::from_secs(1_000_000_000), ms(90));
        assert_eq!(d.base(), Some(ms(90)));
        assert_eq!(d.current(), Some(ms(10)), "current filter is by count");
    }

    #[test]
    fn time_that_does_not_advance_or_goes_back_is_harmless() {
        let t0 = Instant::now() + Duration::from_secs(1000);
        let mut d = DelayEstimator::new(&DelayConfig::default());
        d.on_sample(t0, ms(20));
        d.on_sample(t0, ms(30));
        d.on_sample(t0 - Duration::from_secs(500), ms(25));
        assert_eq!(d.base(), Some(ms(20)));
        assert_eq!(d.current(), Some(ms(20)));
    }

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
}
