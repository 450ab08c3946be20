//! The RTT estimator of RFC 9002 §5, as quiche 0.30's `RttStats` runs it.
//!
//! RFC 9002 §5.3: "smoothed_rtt = 7/8 * smoothed_rtt + 1/8 * adjusted_rtt",
//! "rttvar = 3/4 * rttvar + 1/4 * rttvar_sample", with the ACK delay
//! subtracted only "if latest_rtt >= min_rtt + ack_delay" and, once the
//! handshake is confirmed, capped at `max_ack_delay`. The first sample
//! sets smoothed_rtt to the sample and rttvar to half of it (§5.3).
//!
//! min_rtt: quiche keeps a windowed minimum over 300 s (`RTT_WINDOW`, a
//! three-sample min-max filter). Here it is the minimum over the current
//! 300 s window, restarted from the latest sample when the window expires;
//! the two differ only in how the minimum ages out after 300 s without a
//! lower sample, which no scenario of 300 s or less reaches.

use std::time::Duration;
use std::time::Instant;

/// quiche's `RTT_WINDOW`.
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(300);

/// RFC 9002 §6.1.2 kGranularity, as quiche's `GRANULARITY`.
pub const GRANULARITY: Duration = Duration::from_millis(1);

/// RTT state of one path.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    pub latest_rtt: Duration,
    pub latest_ack_delay: Duration,
    pub latest_sample_time: Option<Instant>,
    pub smoothed_rtt: Duration,
    pub rttvar: Duration,
    pub min_rtt: Duration,
    min_rtt_time: Option<Instant>,
    pub max_ack_delay: Duration,
    has_sample: bool,
}

impl RttEstimator {
    /// Before any sample: RFC 9002 §6.2.2's initial RTT (quiche: 333 ms).
    pub fn new(initial_rtt: Duration, max_ack_delay: Duration) -> Self {
        Self {
            latest_rtt: Duration::ZERO,
            latest_ack_delay: Duration::ZERO,
            latest_sample_time: None,
            smoothed_rtt: initial_rtt,
            rttvar: initial_rtt / 2,
            min_rtt: initial_rtt,
            min_rtt_time: None,
            max_ack_delay,
            has_sample: false,
        }
    }

    /// One RTT sample with the ACK delay the peer reported for it.
    pub fn update(&mut self, latest_rtt: Duration, ack_delay: Duration, now: Instant) {
        self.latest_rtt = latest_rtt;
        self.latest_ack_delay = ack_delay;
        self.latest_sample_time = Some(now);
        if !self.has_sample {
            self.has_sample = true;
            self.min_rtt = latest_rtt;
            self.min_rtt_time = Some(now);
            self.smoothed_rtt = latest_rtt;
            self.rttvar = latest_rtt / 2;
            return;
        }
        let expired = self
            .min_rtt_time
            .is_none_or(|t| now.saturating_duration_since(t) > MIN_RTT_WINDOW);
        if expired || latest_rtt <= self.min_rtt {
            self.min_rtt = latest_rtt;
            self.min_rtt_time = Some(now);
        }
        // The handshake is always confirmed when data flows.
        let ack_delay = ack_delay.min(self.max_ack_delay);
        let adjusted = if latest_rtt >= self.min_rtt + ack_delay {
            latest_rtt - ack_delay
        } else {
            latest_rtt
        };
        self.rttvar = self.rttvar * 3 / 4
            + Duration::from_nanos(
                (self.smoothed_rtt.as_nanos().abs_diff(adjusted.as_nanos()) / 4) as u64,
            );
        self.smoothed_rtt = self.smoothed_rtt * 7 / 8 + adjusted / 8;
    }

    /// RFC 9002 §6.1.2: "max(latest_rtt, smoothed_rtt) * kTimeThreshold",
    /// at least kGranularity.
    pub fn loss_delay(&self, time_thresh: f64) -> Duration {
        self.latest_rtt
            .max(self.smoothed_rtt)
            .mul_f64(time_thresh)
            .max(GRANULARITY)
    }

    /// RFC 9002 §6.2.1: "smoothed_rtt + max(4*rttvar, kGranularity)", plus
    /// max_ack_delay in the application data space.
    pub fn pto(&self) -> Duration {
        self.smoothed_rtt + (self.rttvar * 4).max(GRANULARITY) + self.max_ack_delay
    }

    /// What a plug-in sees of this state (quiche's `RttEstimate`).
    pub fn estimate(&self, now: Instant) -> quiche::RttEstimate {
        quiche::RttEstimate {
            latest_rtt: self.latest_rtt,
            ack_delay: self.latest_ack_delay,
            new_sample: self.latest_sample_time == Some(now),
            min_rtt: self.min_rtt,
            smoothed_rtt: self.smoothed_rtt,
            rttvar: self.rttvar,
            max_ack_delay: self.max_ack_delay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn first_sample_sets_smoothed_and_half_variance() {
        let t0 = Instant::now();
        let mut r = RttEstimator::new(ms(333), ms(25));
        r.update(ms(100), ms(10), t0);
        assert_eq!(
            (r.smoothed_rtt, r.rttvar, r.min_rtt),
            (ms(100), ms(50), ms(100))
        );
    }

    #[test]
    fn ack_delay_is_capped_and_subtracted_only_above_min_plus_delay() {
        let t0 = Instant::now();
        let mut r = RttEstimator::new(ms(333), ms(25));
        r.update(ms(100), ms(0), t0);
        // 140 ms with 30 ms reported: capped at 25, adjusted 115.
        r.update(ms(140), ms(30), t0 + ms(1));
        // srtt = 7/8*100 + 1/8*115 = 101.875; rttvar = 3/4*50 + 1/4*15 = 41.25
        assert_eq!(r.smoothed_rtt, Duration::from_micros(101_875));
        assert_eq!(r.rttvar, Duration::from_micros(41_250));
        // 110 ms with 20 ms: 110 < 100 + 20, so not adjusted.
        r.update(ms(110), ms(20), t0 + ms(2));
        let srtt = Duration::from_micros(101_875) * 7 / 8 + ms(110) / 8;
        assert_eq!(r.smoothed_rtt, srtt);
    }

    #[test]
    fn min_rtt_restarts_after_its_window() {
        let t0 = Instant::now();
        let mut r = RttEstimator::new(ms(333), ms(25));
        r.update(ms(50), ms(0), t0);
        r.update(ms(80), ms(0), t0 + ms(1000));
        assert_eq!(r.min_rtt, ms(50));
        r.update(ms(90), ms(0), t0 + MIN_RTT_WINDOW + ms(2));
        assert_eq!(r.min_rtt, ms(90));
    }

    #[test]
    fn estimate_marks_the_sample_of_this_ack_only() {
        let t0 = Instant::now();
        let mut r = RttEstimator::new(ms(333), ms(25));
        r.update(ms(50), ms(3), t0);
        assert!(r.estimate(t0).new_sample);
        assert!(!r.estimate(t0 + ms(1)).new_sample);
        assert_eq!(r.estimate(t0).ack_delay, ms(3));
    }
}
