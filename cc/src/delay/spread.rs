//! How much the delay samples of one round trip spread: the jitter a path
//! shows, apart from a queue (`jitter_allowance` of LEDBAT++, its
//! `profiles.rs` says what it measured).
//!
//! A round's spread is the largest of its delay samples less the smallest.
//! A queue that the flow or another one holds moves the delay slowly, by
//! the bytes that join or leave it in a round trip: in one round the
//! samples spread little (a queue of 20 ms that grows one packet per round
//! trip at 20 Mbit/s spreads 0.6 ms). A link that adds its own delay per
//! packet (Wi-Fi's retries and aggregation, a cellular scheduler) spreads
//! every round's samples by about its jitter, however loaded the link is.
//! A burst of someone else's traffic also spreads a round, but not every
//! round: the **noise** is the smallest spread of the last [`ROUNDS`]
//! rounds of at least [`MIN_SAMPLES`] samples, so that it counts what
//! each of those rounds showed.
//!
//! Sans-IO and allocation-free: a round ends when the controller says so.
//! LEDBAT++'s `jitter_allowance` (its `profiles.rs`) uses the noise only
//! when it at least doubles T: the noise of a link without jitter, its
//! packets' own spacing and a competitor's, is about 1 ms at 20 Mbit/s.

use std::time::Duration;

/// Rounds whose smallest spread is the noise: 16 round trips, the span in
/// which a competitor's burst (a web page's slow start) must come and go
/// for its spread not to count. With 8, a download beside a saturating
/// upload, whose ACKs arrive in bunches and send the download's packets in
/// bursts, read its own bursts' queue as noise (LEDBAT++'s profile=full
/// kept 0.799 of its goodput there at seed 1, 0.815 without the rule).
pub const ROUNDS: usize = 16;

/// Samples a round needs for its spread to count: the range of two or
/// three samples reads a few packets' luck, and rounds that few are those
/// of a window of a few packets (a freeze, a yield).
pub const MIN_SAMPLES: u32 = 4;

/// The samples of the round under way: the smallest, the largest, how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Round {
    lo: Duration,
    hi: Duration,
    n: u32,
}

/// The spread of the delay samples of each of the last [`ROUNDS`] rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundSpread {
    /// The smallest and largest sample of the round under way, and how
    /// many it has.
    round: Option<Round>,
    /// The spreads of the last rounds that had [`MIN_SAMPLES`] or more,
    /// oldest overwritten first.
    spreads: [Duration; ROUNDS],
    /// How many of `spreads` hold a round (at most [`ROUNDS`]).
    len: usize,
    /// Where the next round's spread goes.
    next: usize,
}

impl RoundSpread {
    /// Records a delay sample of the round under way.
    #[inline]
    pub fn on_sample(&mut self, delay: Duration) {
        self.round = Some(match self.round {
            Some(r) => Round {
                lo: r.lo.min(delay),
                hi: r.hi.max(delay),
                n: r.n + 1,
            },
            None => Round {
                lo: delay,
                hi: delay,
                n: 1,
            },
        });
    }

    /// Ends the round under way. A round with fewer than [`MIN_SAMPLES`]
    /// is not counted.
    pub fn on_round_end(&mut self) {
        if let Some(r) = self.round.take() {
            if r.n >= MIN_SAMPLES {
                self.push(r.hi - r.lo);
            }
        }
    }

    fn push(&mut self, spread: Duration) {
        self.spreads[self.next] = spread;
        self.next = (self.next + 1) % ROUNDS;
        self.len = (self.len + 1).min(ROUNDS);
    }

    /// The noise: the smallest spread of the last [`ROUNDS`] rounds, zero
    /// until that many rounds have spread.
    pub fn noise(&self) -> Duration {
        if self.len < ROUNDS {
            return Duration::ZERO;
        }
        self.spreads.iter().copied().min().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn round(s: &mut RoundSpread, samples: &[u64]) {
        for &d in samples {
            s.on_sample(ms(d));
        }
        s.on_round_end();
    }

    #[test]
    fn the_noise_is_the_smallest_spread_of_the_last_sixteen_rounds() {
        let mut s = RoundSpread::default();
        for k in 0..15 {
            round(&mut s, &[10, 14 + k, 12, 11]);
            assert_eq!(s.noise(), Duration::ZERO, "{} rounds", k + 1);
        }
        // Spreads 4, 5, …, 18, then 9: the smallest of the sixteen is 4.
        round(&mut s, &[20, 11, 12, 13]);
        assert_eq!(s.noise(), ms(4));
        // The seventeenth round pushes out the first (4): now 5.
        round(&mut s, &[10, 25, 12, 13]);
        assert_eq!(s.noise(), ms(5));
        // A quiet round counts at once.
        round(&mut s, &[30, 31, 30, 30]);
        assert_eq!(s.noise(), ms(1));
    }

    #[test]
    fn rounds_with_fewer_than_four_samples_are_not_counted() {
        let mut s = RoundSpread::default();
        for _ in 0..ROUNDS {
            round(&mut s, &[10, 13, 11, 12]);
        }
        assert_eq!(s.noise(), ms(3));
        for _ in 0..20 {
            round(&mut s, &[7]);
            round(&mut s, &[7, 30, 9]);
            round(&mut s, &[]);
        }
        assert_eq!(s.noise(), ms(3));
        // Four equal samples are a round without spread.
        round(&mut s, &[9, 9, 9, 9]);
        assert_eq!(s.noise(), Duration::ZERO);
    }
}
