//! What makes a link change: per-datagram jitter, Wi-Fi-like aggregation, a
//! trace-driven rate and changes at given times (rate, round trip, jitter,
//! loss, outages). [`LinkVariation::default`] is a link that never changes,
//! and a link with it runs exactly as before these existed.
//!
//! Semantics (docs/links-that-change.md says the same, beside netem's):
//! - jitter: each datagram leaving the bottleneck gets an extra delay drawn
//!   from [`JitterModel`] with scale `amount`, from its own generator
//!   (seeded from the link's seed, apart from the loss draws). The extra
//!   delay is never negative: the base delay stays the path's minimum.
//!   Unless `reorder`, a datagram is never delivered before one of the same
//!   flow that left the bottleneck before it (it waits for it);
//! - aggregation: deliveries are held and released together at the next
//!   multiple of the interval after the link's start (a delivery exactly on
//!   a multiple goes at once);
//! - a trace replaces the fixed rate (see [`crate::trace`]);
//! - changes take effect at `start + at`: a rate for the serialisations
//!   that start from then on; a round trip (as a shift of each direction's
//!   one-way delay), a jitter amount and reordering for the datagrams that
//!   leave the bottleneck from then on; a loss for the arrivals from then
//!   on; an outage delivers nothing in `[at, at + outage)`: no
//!   serialisation starts in it, and what would be delivered in it is held
//!   and delivered, in order, when it ends. The queue is kept: arrivals
//!   during an outage queue up to the buffer's capacity (beyond it they are
//!   dropped, as ever).

use std::sync::Arc;
use std::time::Duration;

use crate::trace::DeliveryTrace;

/// The distribution of the extra delay per datagram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JitterModel {
    /// Uniform on [0, amount).
    #[default]
    Uniform,
    /// Half-normal: |N(0, σ)| with σ = amount / 2 (95 % below `amount`).
    Normal,
    /// Pareto (Lomax) with shape 3 and scale `amount`: mean amount / 2,
    /// a heavy tail.
    Pareto,
}

/// The names `jitter_model` takes, in the order of [`JitterModel`].
pub const JITTER_MODEL_NAMES: [&str; 3] = ["uniform", "normal", "pareto"];

impl JitterModel {
    /// Parses `uniform`, `normal` or `pareto`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "uniform" => Ok(Self::Uniform),
            "normal" => Ok(Self::Normal),
            "pareto" => Ok(Self::Pareto),
            other => Err(format!(
                "bad jitter model '{other}'; expected one of {}",
                JITTER_MODEL_NAMES.join(", ")
            )),
        }
    }

    /// Its name, as [`JitterModel::parse`] reads it.
    pub fn name(&self) -> &'static str {
        JITTER_MODEL_NAMES[*self as usize]
    }

    /// The extra delay for two uniform draws in [0, 1), nanoseconds.
    pub(crate) fn draw_ns(&self, amount: Duration, u1: f64, u2: f64) -> u64 {
        let a = amount.as_nanos() as f64;
        let x = match self {
            Self::Uniform => a * u1,
            Self::Normal => {
                // Box–Muller; 1 - u1 is in (0, 1].
                let r = (-2.0 * (1.0 - u1).ln()).sqrt();
                (a / 2.0) * (r * (std::f64::consts::TAU * u2).cos()).abs()
            }
            Self::Pareto => a * ((1.0 - u1).powf(-1.0 / 3.0) - 1.0),
        };
        x as u64
    }
}

/// A change of the link at `at` after its start; `None` leaves a quantity
/// as it was.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkChange {
    /// When, from the link's start.
    pub at: Duration,
    /// The new line rate (ignored on a traced link).
    pub rate_bps: Option<u64>,
    /// Added to every datagram's one-way delay from then on, nanoseconds
    /// (negative shortens it, never below zero): half the change of the
    /// round trip, in each direction.
    pub delay_shift_ns: Option<i64>,
    /// The new jitter amount (the model stays).
    pub jitter: Option<Duration>,
    /// The new random loss probability.
    pub loss: Option<f64>,
    /// Nothing is delivered for this long from `at`.
    pub outage: Option<Duration>,
}

/// One change of the path at `at`, as a scenario's `[[link.change]]` and
/// `lbe-netem --change` state it: the whole path's, before it is split into
/// its two directions ([`PathChange::on_direction`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathChange {
    pub at: Duration,
    /// The server->client rate from then on.
    pub rate_bps: Option<u64>,
    /// The path's base round trip from then on (each direction's one-way
    /// delay shifts by half the difference).
    pub rtt: Option<Duration>,
    /// The jitter amount from then on.
    pub jitter: Option<Duration>,
    /// The server->client random loss from then on.
    pub loss: Option<f64>,
    /// Nothing delivered, either way, for this long (the queue is kept).
    pub outage: Option<Duration>,
    /// From then on the server sees the client from a new source port
    /// (the relay's or the simulator's business, not a direction's).
    pub rebind: bool,
}

impl PathChange {
    /// What this change does to one direction of a path whose base round
    /// trip is `base_rtt`: the round trip and outages reach both
    /// directions, the rest only the server->client bottleneck
    /// (`bottleneck`). `None` when nothing changes there.
    pub fn on_direction(&self, base_rtt: Duration, bottleneck: bool) -> Option<LinkChange> {
        let change = LinkChange {
            at: self.at,
            rate_bps: self.rate_bps.filter(|_| bottleneck),
            delay_shift_ns: self
                .rtt
                .map(|rtt| (rtt.as_nanos() as i64 - base_rtt.as_nanos() as i64) / 2),
            jitter: self.jitter.filter(|_| bottleneck),
            loss: self.loss.filter(|_| bottleneck),
            outage: self.outage,
        };
        let nothing = LinkChange {
            at: self.at,
            ..LinkChange::default()
        };
        (change != nothing).then_some(change)
    }
}

/// How the link changes; the default never does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkVariation {
    /// The jitter amount from the start (zero for none).
    pub jitter: Duration,
    pub jitter_model: JitterModel,
    /// Whether jitter may reorder datagrams of one flow.
    pub reorder: bool,
    /// Aggregation interval: deliveries are released at its multiples.
    pub aggregate: Option<Duration>,
    /// A trace-driven rate replacing `rate_bps` (the mean rate of the trace
    /// then sizes a buffer given in time and reads the queue as time).
    pub trace: Option<Arc<DeliveryTrace>>,
    /// Changes, in order of `at`.
    pub changes: Vec<LinkChange>,
}

impl LinkVariation {
    /// Whether the link never changes (the fast path of the model).
    pub fn is_fixed(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Buffer, Link, LinkConfig, Verdict};
    use std::time::Instant;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn link(rate_bps: Option<u64>, variation: LinkVariation) -> Link<u32> {
        Link::new(&LinkConfig {
            rate_bps,
            overhead: 0,
            seed: 7,
            variation,
            ..LinkConfig::default()
        })
    }

    /// Every datagram's (item, delivery time from `t0` in ns), in the
    /// order the link hands them over.
    fn deliveries(l: &mut Link<u32>, t0: Instant) -> Vec<(u32, u64)> {
        let end = t0 + Duration::from_secs(3600);
        std::iter::from_fn(|| l.poll(end))
            .map(|d| (d.item, (d.due - t0).as_nanos() as u64))
            .collect()
    }

    #[test]
    fn uniform_jitter_is_seeded_and_keeps_order_unless_reorder() {
        let t0 = Instant::now();
        let run = |reorder| {
            let mut l = link(
                None,
                LinkVariation {
                    jitter: ms(5),
                    reorder,
                    ..LinkVariation::default()
                },
            );
            for i in 0..6 {
                l.enqueue(t0 + ms(u64::from(i)), 100, ms(10), i);
            }
            deliveries(&mut l, t0)
        };
        let reordered = run(true);
        assert_eq!(reordered, JITTERED_US.to_vec());
        // In order: each waits for the one before it.
        let mut latest = 0;
        let in_order: Vec<(u32, u64)> = (0..6)
            .map(|i| {
                let due = JITTERED_BY_ITEM_US[i as usize];
                latest = latest.max(due);
                (i, latest)
            })
            .collect();
        assert_eq!(run(false), in_order);
    }

    /// Seed 7's uniform draws on [0, 5 ms) added to 10 ms after each
    /// arrival (at 0, 1, .. 5 ms), in delivery order: 5 overtakes 3 and 4.
    const JITTERED_US: [(u32, u64); 6] = [
        (0, 11_507_816),
        (1, 13_271_275),
        (2, 15_809_370),
        (5, 15_925_176),
        (3, 15_977_892),
        (4, 16_653_318),
    ];
    const JITTERED_BY_ITEM_US: [u64; 6] = [
        11_507_816, 13_271_275, 15_809_370, 15_977_892, 16_653_318, 15_925_176,
    ];

    #[test]
    fn jitter_models_draw_within_their_shapes() {
        let a = ms(4);
        assert_eq!(JitterModel::Uniform.draw_ns(a, 0.5, 0.9), 2_000_000);
        // Half-normal, σ = 2 ms: u1 = 1 - e^-2 gives r = 2; cos(0) = 1.
        let u1 = 1.0 - (-2.0f64).exp();
        assert_eq!(JitterModel::Normal.draw_ns(a, u1, 0.0), 4_000_000);
        // Lomax shape 3: u1 = 7/8 gives 8^(1/3) - 1 = 1 scale.
        assert_eq!(JitterModel::Pareto.draw_ns(a, 0.875, 0.3), 4_000_000);
        assert_eq!(JitterModel::parse("pareto"), Ok(JitterModel::Pareto));
        assert_eq!(JitterModel::Normal.name(), "normal");
        assert_eq!(
            JitterModel::parse("gamma"),
            Err("bad jitter model 'gamma'; expected one of uniform, normal, pareto".into())
        );
    }

    #[test]
    fn aggregation_releases_what_gathered_at_each_interval() {
        let t0 = Instant::now();
        let mut l = link(
            None,
            LinkVariation {
                aggregate: Some(ms(4)),
                ..LinkVariation::default()
            },
        );
        for (i, at) in [0, 1, 2, 3, 5, 9].into_iter().enumerate() {
            l.enqueue(t0 + ms(at), 100, ms(10), i as u32);
        }
        // Due at 10, 11, 12, 13, 15, 19 ms; released at multiples of 4 ms.
        let ms_ns = |v: u64| v * 1_000_000;
        assert_eq!(
            deliveries(&mut l, t0),
            vec![
                (0, ms_ns(12)),
                (1, ms_ns(12)),
                (2, ms_ns(12)),
                (3, ms_ns(16)),
                (4, ms_ns(16)),
                (5, ms_ns(20)),
            ]
        );
    }

    #[test]
    fn a_three_line_trace_serves_its_opportunities_looped() {
        let t0 = Instant::now();
        let trace = DeliveryTrace::parse("t.down", "1\n1\n3\n").unwrap();
        let mut l = link(
            Some(1),
            LinkVariation {
                trace: Some(Arc::new(trace)),
                ..LinkVariation::default()
            },
        );
        l.start_at(t0);
        // Seven full opportunities, then two datagrams sharing one.
        for i in 0..7 {
            l.enqueue(t0, 1500, Duration::ZERO, i);
        }
        l.enqueue(t0, 750, Duration::ZERO, 7);
        l.enqueue(t0, 750, Duration::ZERO, 8);
        // A datagram larger than an opportunity takes two.
        l.enqueue(t0, 2000, Duration::ZERO, 9);
        // After the link idles, the next opportunity at or after arrival.
        let v = l.enqueue(t0 + ms(20), 100, ms(1), 10);
        assert_eq!(
            v,
            Verdict::Queued {
                departure: t0 + ms(21),
                delivery: t0 + ms(22),
            }
        );
        let got: Vec<u64> = deliveries(&mut l, t0)
            .into_iter()
            .map(|(_, ns)| ns / 1_000_000)
            .collect();
        // Opportunities at 1, 1, 3, then 4, 4, 6, 7, 7, 9, 10, .. (period 3).
        assert_eq!(got, vec![1, 1, 3, 4, 4, 6, 7, 7, 7, 10, 22]);
        // 1500 B per 3 ms opportunity triple: the mean rate is 12 Mbit/s.
        assert_eq!(l.rate_bps(), Some(12_000_000));
    }

    #[test]
    fn a_change_switches_rate_and_round_trip_exactly_at_its_time() {
        let t0 = Instant::now();
        let mut l = link(
            Some(8_000_000),
            LinkVariation {
                changes: vec![
                    LinkChange {
                        at: ms(2),
                        rate_bps: Some(4_000_000),
                        ..LinkChange::default()
                    },
                    LinkChange {
                        at: ms(3),
                        delay_shift_ns: Some(5_000_000),
                        ..LinkChange::default()
                    },
                    LinkChange {
                        at: ms(5),
                        delay_shift_ns: Some(-4_000_000),
                        ..LinkChange::default()
                    },
                ],
                ..LinkVariation::default()
            },
        );
        l.start_at(t0);
        // 1000 B: 1 ms at 8 Mbit/s, 2 ms at 4 Mbit/s from 2 ms on.
        let departures: Vec<Duration> = (0..4)
            .map(|i| match l.enqueue(t0, 1000, ms(10), i) {
                Verdict::Queued { departure, .. } => departure - t0,
                v => panic!("{v:?}"),
            })
            .collect();
        assert_eq!(departures, vec![ms(1), ms(2), ms(4), ms(6)]);
        // Once the link is idle again, at 4 Mbit/s and 10 - 4 ms.
        l.enqueue(t0 + ms(30), 1000, ms(10), 4);
        let got: Vec<u64> = deliveries(&mut l, t0)
            .into_iter()
            .map(|(_, ns)| ns / 1_000_000)
            .collect();
        // +5 ms from 3 ms; -4 ms (from the base) from 5 ms, but the fourth
        // (due at 12 ms) does not overtake the third of its flow (19 ms).
        assert_eq!(got, vec![11, 12, 19, 19, 38]);
    }

    #[test]
    fn an_outage_delivers_nothing_and_keeps_the_queue() {
        let t0 = Instant::now();
        let outage = LinkVariation {
            changes: vec![LinkChange {
                at: ms(15),
                outage: Some(ms(10)),
                ..LinkChange::default()
            }],
            ..LinkVariation::default()
        };
        // A delay line: what falls due in [15, 25) ms goes at 25 ms.
        let mut l = link(None, outage.clone());
        l.start_at(t0);
        for (i, at) in [0, 4, 6, 14, 16].into_iter().enumerate() {
            l.enqueue(t0 + ms(at), 100, ms(10), i as u32);
        }
        let ms_ns = |v: u64| v * 1_000_000;
        assert_eq!(
            deliveries(&mut l, t0),
            vec![
                (0, ms_ns(10)),
                (1, ms_ns(14)),
                (2, ms_ns(25)),
                (3, ms_ns(25)),
                (4, ms_ns(26)),
            ]
        );
        // At a rate: no serialisation starts in the outage; the queue stays.
        let mut l = link(Some(8_000_000), outage);
        l.start_at(t0);
        let deps: Vec<u64> = (0..17)
            .map(|i| match l.enqueue(t0, 1000, Duration::ZERO, i) {
                Verdict::Queued { departure, .. } => (departure - t0).as_millis() as u64,
                v => panic!("{v:?}"),
            })
            .collect();
        let mut want: Vec<u64> = (1..=15).collect();
        want.extend([26, 27]);
        assert_eq!(deps, want);
        assert_eq!(l.queue_bytes(t0 + ms(20)), 2000);
    }

    #[test]
    fn a_loss_change_applies_to_arrivals_from_its_time() {
        let t0 = Instant::now();
        let mut l = link(
            None,
            LinkVariation {
                changes: vec![LinkChange {
                    at: ms(5),
                    loss: Some(1.0),
                    ..LinkChange::default()
                }],
                ..LinkVariation::default()
            },
        );
        l.start_at(t0);
        let verdicts: Vec<bool> = [0, 4, 5, 9]
            .into_iter()
            .map(|at| l.enqueue(t0 + ms(at), 100, ms(1), 0) == Verdict::DroppedLoss)
            .collect();
        assert_eq!(verdicts, vec![false, false, true, true]);
    }

    #[test]
    fn a_fixed_variation_leaves_the_link_as_it_was() {
        let t0 = Instant::now();
        let fixed = |variation| {
            let mut l = Link::new(&LinkConfig {
                rate_bps: Some(10_000_000),
                buffer: Some(Buffer::Bytes(20_000)),
                loss: 0.1,
                seed: 3,
                variation,
                ..LinkConfig::default()
            });
            let verdicts: Vec<Verdict> = (0..40)
                .map(|i| l.enqueue(t0 + Duration::from_micros(i * 300), 1200, ms(20), 0))
                .collect();
            verdicts
        };
        assert!(LinkVariation::default().is_fixed());
        // An empty change list and zero jitter are the fixed link.
        let no_op = LinkVariation {
            jitter_model: JitterModel::Uniform,
            changes: Vec::new(),
            ..LinkVariation::default()
        };
        assert_eq!(fixed(no_op), fixed(LinkVariation::default()));
    }
}
