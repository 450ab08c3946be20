//! A web flow's downloads: "short downloads, each a new QUIC connection
//! with CUBIC (handshake included), arriving as a Poisson process" at a
//! mean rate (`arrivals = "2/s"`), each of a `size` or of one of `sizes`
//! "picked uniformly with the seed".

use std::time::Duration;

use lbe_cc::rng::SplitMix64;

/// What an arrival rate may be written as.
const RATE_SYNTAX: &str = "expected arrivals per unit of time, like 2/s, 30/min or 100/h";

/// Parses an arrival rate (`"2/s"`, `"30/min"`, `"100/h"`) into arrivals
/// per second. Zero, negative and non-finite rates are errors: a web flow
/// with no arrivals is not a workload.
pub fn parse_arrival_rate(text: &str) -> Result<f64, String> {
    let bad = || format!("bad arrival rate '{text}': {RATE_SYNTAX}");
    let (count, unit) = text.trim().split_once('/').ok_or_else(bad)?;
    let count: f64 = count.trim().parse().map_err(|_| bad())?;
    let per_s = match unit.trim() {
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    if !count.is_finite() {
        return Err(bad());
    }
    if count <= 0.0 {
        return Err(format!("arrival rate '{text}' must be above zero"));
    }
    Ok(count / per_s)
}

/// One download of a web flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Scenario time at which its connection starts.
    pub at: Duration,
    pub size_bytes: u64,
}

/// The seed of flow `flow_id`'s draws from the scenario's `seed`: flows of
/// one scenario draw different sequences, the same ones on every run.
pub fn flow_seed(seed: u64, flow_id: usize) -> u64 {
    SplitMix64::new(seed ^ (flow_id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)).next_u64()
}

/// The downloads of a Poisson process of `rate_per_s` from `start` until
/// before `stop`, each with a size drawn uniformly from `sizes`: for each
/// arrival the gap since the previous one (or since `start`) is drawn
/// first, exponential with mean 1/`rate_per_s` (inverse transform,
/// −ln(1−u)/rate), then the index into `sizes`, ⌊u·len⌋. The same
/// arguments give the same schedule.
///
/// # Panics
/// If `sizes` is empty or `rate_per_s` is not above zero (the scenario
/// checks both).
pub fn schedule(
    rate_per_s: f64,
    start: Duration,
    stop: Duration,
    sizes: &[u64],
    seed: u64,
) -> Vec<Arrival> {
    assert!(!sizes.is_empty() && rate_per_s > 0.0);
    let mut rng = SplitMix64::new(seed);
    let mut at = start.as_secs_f64();
    let mut out = Vec::new();
    loop {
        at += -(1.0 - rng.next_f64()).ln() / rate_per_s;
        let index = ((rng.next_f64() * sizes.len() as f64) as usize).min(sizes.len() - 1);
        // Compared as seconds first: a tiny rate's gap may be longer than
        // a Duration holds.
        if at >= stop.as_secs_f64() {
            return out;
        }
        let at = Duration::from_secs_f64(at).min(stop);
        if at >= stop {
            return out;
        }
        out.push(Arrival {
            at,
            size_bytes: sizes[index],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_per_second_minute_and_hour() {
        assert_eq!(parse_arrival_rate("2/s"), Ok(2.0));
        assert_eq!(parse_arrival_rate("0.5/s"), Ok(0.5));
        assert_eq!(parse_arrival_rate("30/min"), Ok(0.5));
        assert_eq!(parse_arrival_rate("36/h"), Ok(0.01));
    }

    #[test]
    fn bad_rates_say_what_is_allowed() {
        assert_eq!(
            parse_arrival_rate("0/s"),
            Err("arrival rate '0/s' must be above zero".to_string())
        );
        assert_eq!(
            parse_arrival_rate("-1/s"),
            Err("arrival rate '-1/s' must be above zero".to_string())
        );
        for text in ["2", "2/day", "two/s", "inf/s", "NaN/s", ""] {
            assert_eq!(
                parse_arrival_rate(text),
                Err(format!(
                    "bad arrival rate '{text}': expected arrivals per unit of time, like 2/s, 30/min or 100/h"
                )),
                "{text}"
            );
        }
    }

    #[test]
    fn the_schedule_is_the_seeds_and_stays_in_its_interval() {
        let sizes = [50_000, 500_000, 2_000_000];
        let a = schedule(
            2.0,
            Duration::from_secs(5),
            Duration::from_secs(65),
            &sizes,
            7,
        );
        assert_eq!(
            a,
            schedule(
                2.0,
                Duration::from_secs(5),
                Duration::from_secs(65),
                &sizes,
                7
            )
        );
        assert_ne!(
            a,
            schedule(
                2.0,
                Duration::from_secs(5),
                Duration::from_secs(65),
                &sizes,
                8
            )
        );
        assert!(a.windows(2).all(|w| w[0].at < w[1].at));
        assert!(a[0].at > Duration::from_secs(5));
        assert!(a.last().unwrap().at < Duration::from_secs(65));
        // 120 expected over 60 s; a Poisson count's sd is √120 ≈ 11.
        assert!((85..=155).contains(&a.len()), "{}", a.len());
        for size in sizes {
            assert!(a.iter().any(|x| x.size_bytes == size), "{size} never drawn");
        }
    }

    #[test]
    fn the_first_gap_is_the_inverse_transform_of_the_first_draw() {
        let mut rng = SplitMix64::new(3);
        let u = rng.next_f64();
        let expected = -(1.0 - u).ln() / 4.0;
        let a = schedule(4.0, Duration::ZERO, Duration::from_secs(100), &[1], 3);
        assert_eq!(a[0].at, Duration::from_secs_f64(expected));
    }

    #[test]
    fn the_mean_gap_is_one_over_the_rate() {
        let a = schedule(10.0, Duration::ZERO, Duration::from_secs(10_000), &[1], 11);
        let mean = a.last().unwrap().at.as_secs_f64() / a.len() as f64;
        // 100 000 gaps: the mean's standard error is 0.1/√1e5 ≈ 0.0003.
        assert!((mean - 0.1).abs() < 0.0015, "mean gap {mean}");
    }

    #[test]
    fn a_tiny_rate_draws_nothing_rather_than_overflowing() {
        assert_eq!(parse_arrival_rate("1e-300/h"), Ok(1e-300 / 3600.0));
        assert_eq!(
            schedule(1e-300, Duration::ZERO, Duration::from_secs(60), &[1], 1),
            []
        );
    }

    #[test]
    fn flows_get_different_seeds() {
        assert_eq!(flow_seed(1, 2), flow_seed(1, 2));
        assert_ne!(flow_seed(1, 2), flow_seed(1, 3));
        assert_ne!(flow_seed(1, 2), flow_seed(2, 2));
    }
}
