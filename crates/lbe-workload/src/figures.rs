//! The figures of the foreground workloads in `summary.json`, and the
//! harm a bulk flow does to them (the same workload with and without the
//! bulk flows: `lbe-lab run --baseline`).
//!
//! Percentiles are nearest-rank: the p-th percentile of n sorted values is
//! the ⌈p·n⌉-th smallest (the 1st for p·n ≤ 1), an observed value, exact
//! for any n (no histogram buckets: a workload has tens to thousands of
//! samples).

use std::time::Duration;

use serde::Deserialize;
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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

/// The completion times (s) of the downloads that arrived in `window`
/// and finished, in arrival order: what `fct_s` summarises (its CDF in
/// the report).
pub fn fct_samples(downloads: &[Download], window: Window) -> Vec<f64> {
    downloads
        .iter()
        .filter(|d| inside(d.at, window))
        .filter_map(|d| match d.outcome {
            Outcome::Finished(t) => Some(t.as_secs_f64()),
            _ => None,
        })
        .collect()
}

/// The round trips (ms) of the requests sent in `window` that got a reply.
fn rtt_samples_ms(echoes: &[Echo], window: Window) -> Vec<f64> {
    echoes
        .iter()
        .filter(|e| inside(e.sent_at, window))
        .filter_map(|e| e.rtt)
        .map(|r| r.as_secs_f64() * 1e3)
        .collect()
}

/// The added delays (ms: round trip minus `base_rtt`) of the requests sent
/// in `window` that got a reply: what `added_delay_ms` summarises.
pub fn added_delay_samples_ms(echoes: &[Echo], base_rtt: Duration, window: Window) -> Vec<f64> {
    let base = base_rtt.as_secs_f64() * 1e3;
    rtt_samples_ms(echoes, window)
        .into_iter()
        .map(|r| r - base)
        .collect()
}

/// The analysis window, scenario time: samples that started in
/// `[from, to)` count.
pub type Window = (Duration, Duration);

fn inside(at: Duration, (from, to): Window) -> bool {
    at >= from && at < to
}

/// How one download of a web flow (or one chunk of a video flow) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Completed, this long after its arrival (handshake included).
    Finished(Duration),
    /// Still running when the run gave up on it.
    Unfinished,
    /// Its connection failed (counted, never dropped).
    Failed,
}

/// One download of a web flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Download {
    /// Its arrival, scenario time.
    pub at: Duration,
    pub size_bytes: u64,
    pub outcome: Outcome,
}

/// One request of a ping flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Echo {
    /// When it was sent, scenario time.
    pub sent_at: Duration,
    /// Its round trip; `None` if no reply came.
    pub rtt: Option<Duration>,
}

/// A workload flow's figures in `summary.json`, one shape per kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorkloadFigures {
    Web {
        /// Completion times of the downloads that arrived in the window
        /// and finished.
        fct_s: Fct,
        /// Downloads that arrived in the window and had not finished when
        /// the run gave up on them.
        unfinished: usize,
        /// Downloads that arrived in the window and failed.
        failed: usize,
    },
    Ping {
        rtt_ms: Delay,
        /// RTT minus the flow's base RTT (the emulated one).
        added_delay_ms: Delay,
        /// Requests sent in the window.
        sent: usize,
        /// Of those, how many got no reply.
        lost: usize,
    },
    Video {
        stalls: u32,
        stall_s: f64,
        startup_s: Option<f64>,
        chunks: u32,
        /// Chunk downloads that failed.
        failed: usize,
    },
    Cbr {
        /// Payload received in the window over its length (clipped to the
        /// flow's start and stop), bit/s.
        goodput_bps: f64,
        sent_packets: u64,
        received_packets: u64,
        lost_packets: u64,
        /// lost_packets / sent_packets.
        loss: f64,
    },
}

impl WorkloadFigures {
    /// A web flow's figures: the downloads that arrived in `window`.
    pub fn web(downloads: &[Download], window: Window) -> Self {
        let counted: Vec<&Download> = downloads.iter().filter(|d| inside(d.at, window)).collect();
        let count = |o: Outcome| counted.iter().filter(|d| d.outcome == o).count();
        WorkloadFigures::Web {
            fct_s: Fct::of(&fct_samples(downloads, window)),
            unfinished: count(Outcome::Unfinished),
            failed: count(Outcome::Failed),
        }
    }

    /// A ping flow's figures: the requests sent in `window`, with
    /// `base_rtt` the emulated RTT.
    pub fn ping(echoes: &[Echo], base_rtt: Duration, window: Window) -> Self {
        let counted: Vec<&Echo> = echoes
            .iter()
            .filter(|e| inside(e.sent_at, window))
            .collect();
        let rtt = rtt_samples_ms(echoes, window);
        let added = added_delay_samples_ms(echoes, base_rtt, window);
        WorkloadFigures::Ping {
            rtt_ms: Delay::of(&rtt),
            added_delay_ms: Delay::of(&added),
            sent: counted.len(),
            lost: counted.iter().filter(|e| e.rtt.is_none()).count(),
        }
    }

    /// A cbr flow's figures: `arrivals` the times and payload bytes of the
    /// packets received, `active` the flow's start and stop.
    pub fn cbr(
        sent_packets: u64,
        arrivals: &[(Duration, u64)],
        active: Window,
        window: Window,
    ) -> Self {
        let from = window.0.max(active.0);
        let to = window.1.min(active.1);
        let bytes: u64 = arrivals
            .iter()
            .filter(|(at, _)| inside(*at, (from, to)))
            .map(|(_, b)| b)
            .sum();
        let received = arrivals.len() as u64;
        let lost = sent_packets.saturating_sub(received);
        WorkloadFigures::Cbr {
            goodput_bps: if to > from {
                bytes as f64 * 8.0 / (to - from).as_secs_f64()
            } else {
                0.0
            },
            sent_packets,
            received_packets: received,
            lost_packets: lost,
            loss: if sent_packets == 0 {
                0.0
            } else {
                lost as f64 / sent_packets as f64
            },
        }
    }

    /// What the bulk flows did: these figures (with them) against
    /// `without`'s, for the kinds that have a harm figure (web, ping,
    /// video); `None` for cbr or mismatched kinds.
    pub fn harm(&self, without: &WorkloadFigures) -> Option<Harm> {
        match (self, without) {
            (WorkloadFigures::Web { fct_s: a, .. }, WorkloadFigures::Web { fct_s: b, .. }) => {
                Some(Harm::web(a, b))
            }
            (
                WorkloadFigures::Ping {
                    added_delay_ms: a, ..
                },
                WorkloadFigures::Ping {
                    added_delay_ms: b, ..
                },
            ) => Some(Harm::ping(a, b)),
            (
                WorkloadFigures::Video { stall_s: a, .. },
                WorkloadFigures::Video { stall_s: b, .. },
            ) => Some(Harm::video(*a, *b)),
            _ => None,
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
    fn s(v: u64) -> Duration {
        Duration::from_secs(v)
    }

    #[test]
    fn web_figures_count_what_arrived_in_the_window() {
        let d = |at: u64, outcome| Download {
            at: s(at),
            size_bytes: 1,
            outcome,
        };
        let downloads = [
            d(1, Outcome::Finished(s(9))),
            d(5, Outcome::Finished(s(2))),
            d(6, Outcome::Finished(s(4))),
            d(7, Outcome::Unfinished),
            d(8, Outcome::Failed),
            d(10, Outcome::Unfinished),
        ];
        assert_eq!(
            WorkloadFigures::web(&downloads, (s(5), s(10))),
            WorkloadFigures::Web {
                fct_s: Fct::of(&[2.0, 4.0]),
                unfinished: 1,
                failed: 1,
            }
        );
        assert_eq!(
            serde_json::to_value(WorkloadFigures::web(&downloads, (s(5), s(10)))).unwrap(),
            serde_json::json!({
                "fct_s": {"n": 2, "p50": 2.0, "p95": 4.0, "p99": 4.0, "mean": 3.0},
                "unfinished": 1,
                "failed": 1
            })
        );
    }

    #[test]
    fn ping_figures_subtract_the_base_rtt() {
        let ms = Duration::from_millis;
        let e = |at: u64, rtt: Option<u64>| Echo {
            sent_at: ms(at),
            rtt: rtt.map(ms),
        };
        let echoes = [
            e(0, Some(500)),
            e(100, Some(60)),
            e(200, None),
            e(300, Some(90)),
        ];
        let f = WorkloadFigures::ping(&echoes, ms(50), (ms(100), ms(1000)));
        assert_eq!(
            f,
            WorkloadFigures::Ping {
                rtt_ms: Delay::of(&[60.0, 90.0]),
                added_delay_ms: Delay {
                    p50: Some(10.0),
                    p95: Some(40.0),
                    p99: Some(40.0),
                    max: Some(40.0)
                },
                sent: 3,
                lost: 1,
            }
        );
        let without = WorkloadFigures::ping(&[e(100, Some(51))], ms(50), (ms(100), ms(1000)));
        assert_eq!(f.harm(&without).unwrap().added_delay_p95_ms, Some(39.0));
    }

    #[test]
    fn cbr_goodput_is_over_the_window_clipped_to_the_flow() {
        let ms = Duration::from_millis;
        // 1000 bytes every 100 ms from 0 to 9.9 s: 80 kbit/s; one of 101
        // sent lost.
        let arrivals: Vec<(Duration, u64)> = (0..100).map(|i| (ms(i * 100), 1000)).collect();
        assert_eq!(
            WorkloadFigures::cbr(101, &arrivals, (s(0), s(10)), (s(5), s(20))),
            WorkloadFigures::Cbr {
                goodput_bps: 80_000.0,
                sent_packets: 101,
                received_packets: 100,
                lost_packets: 1,
                loss: 1.0 / 101.0,
            }
        );
    }
}
