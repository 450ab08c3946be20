//! The figures of the foreground workloads in `summary.json`, and the
//! harm a bulk flow does to them (the same workload with and without the
//! bulk flows: `lbe-lab run --baseline`).
//!
//! Percentiles are nearest-rank: the p-th percentile of n sorted values is
//! the ⌈p·n⌉-th smallest (the 1st for p·n ≤ 1), an observed value, exact
//! for any n (no histogram buckets: a workload has tens to thousands of
//! samples).

use serde::Serialize;

/// The nearest-rank `p` percentile (0 < p ≤ 1) of `sorted` (ascending);
/// `None` if it is empty.
pub fn nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// A web flow's `fct_s`: completion times of its downloads, seconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fct {
    pub n: usize,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub mean: Option<f64>,
}

impl Fct {
    pub fn of(values: &[f64]) -> Self {
        let v = sorted(values);
        Fct {
            n: v.len(),
            p50: nearest_rank(&v, 0.50),
            p95: nearest_rank(&v, 0.95),
            p99: nearest_rank(&v, 0.99),
            mean: (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64),
        }
    }
}

/// A ping flow's `rtt_ms` or `added_delay_ms`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delay {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

impl Delay {
    pub fn of(values: &[f64]) -> Self {
        let v = sorted(values);
        Delay {
            p50: nearest_rank(&v, 0.50),
            p95: nearest_rank(&v, 0.95),
            p99: nearest_rank(&v, 0.99),
            max: v.last().copied(),
        }
    }
}

/// What the bulk flows did to a workload flow: its figure beside them
/// against the same flow's without them. Only the kind's own figure is
/// set (and written).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Harm {
    /// Web: p95 completion time with the bulk flows over without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_p95_ratio: Option<f64>,
    /// Ping: p95 added delay with minus without, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added_delay_p95_ms: Option<f64>,
    /// Video: stalled seconds with minus without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_s_added: Option<f64>,
}

impl Harm {
    /// A web flow's harm: `None` inside when either p95 is missing or the
    /// baseline's is zero.
    pub fn web(with: &Fct, without: &Fct) -> Self {
        Harm {
            fct_p95_ratio: match (with.p95, without.p95) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            },
            ..Harm::default()
        }
    }

    /// A ping flow's harm, from the two `added_delay_ms`.
    pub fn ping(with: &Delay, without: &Delay) -> Self {
        Harm {
            added_delay_p95_ms: with.p95.zip(without.p95).map(|(a, b)| a - b),
            ..Harm::default()
        }
    }

    /// A video flow's harm, from the two `stall_s`.
    pub fn video(with_stall_s: f64, without_stall_s: f64) -> Self {
        Harm {
            stall_s_added: Some(with_stall_s - without_stall_s),
            ..Harm::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_an_observed_value() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        // ⌈0.5·20⌉ = 10, ⌈0.95·20⌉ = 19, ⌈0.99·20⌉ = 20.
        assert_eq!(nearest_rank(&v, 0.5), Some(10.0));
        assert_eq!(nearest_rank(&v, 0.95), Some(19.0));
        assert_eq!(nearest_rank(&v, 0.99), Some(20.0));
        assert_eq!(nearest_rank(&[7.0], 0.5), Some(7.0));
        assert_eq!(nearest_rank(&[], 0.5), None);
        assert_eq!(nearest_rank(&v, 0.0), Some(1.0));
    }

    #[test]
    fn fct_figures_sort_first() {
        let f = Fct::of(&[3.0, 1.0, 2.0, 10.0]);
        // n = 4: p50 the 2nd, p95 and p99 the 4th.
        assert_eq!(
            f,
            Fct {
                n: 4,
                p50: Some(2.0),
                p95: Some(10.0),
                p99: Some(10.0),
                mean: Some(4.0),
            }
        );
        assert_eq!(
            Fct::of(&[]),
            Fct {
                n: 0,
                p50: None,
                p95: None,
                p99: None,
                mean: None
            }
        );
    }

    #[test]
    fn delay_figures_of_a_hundred_samples() {
        let v: Vec<f64> = (0..100).rev().map(|i| f64::from(i) * 0.5).collect();
        assert_eq!(
            Delay::of(&v),
            Delay {
                p50: Some(24.5),
                p95: Some(47.0),
                p99: Some(49.0),
                max: Some(49.5),
            }
        );
    }

    #[test]
    fn harm_is_with_against_without() {
        let without = Fct::of(&[1.0, 2.0]);
        let with = Fct::of(&[3.0, 5.0]);
        assert_eq!(Harm::web(&with, &without).fct_p95_ratio, Some(2.5));
        assert_eq!(Harm::web(&with, &Fct::of(&[])).fct_p95_ratio, None);
        let harm = Harm::ping(&Delay::of(&[40.0, 60.0]), &Delay::of(&[1.0, 2.5]));
        assert_eq!(harm.added_delay_p95_ms, Some(57.5));
        assert_eq!(
            serde_json::to_string(&harm).unwrap(),
            r#"{"added_delay_p95_ms":57.5}"#
        );
        assert_eq!(Harm::video(3.5, 0.5).stall_s_added, Some(3.0));
    }
}
