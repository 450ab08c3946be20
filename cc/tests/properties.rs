//! Random but valid event streams fed to every controller: no panic, no
//! overflow, the window stays within [its floor, MAX_WINDOW_BYTES] (the
//! floor is the spec's minimum window: 2 packets unless it sets another),
//! the snapshot has no NaN, state names are known ones, the same stream
//! gives the same trajectory twice, a checkpoint and a rollback with
//! nothing between them change nothing, and `profile=full`'s window does
//! not grow on an ACK while it is yielded or quiet.

use std::time::Duration;
use std::time::Instant;

use lbe_cc::cubic::Cubic;
use lbe_cc::AckedPacket;
use lbe_cc::CongestionController;
use lbe_cc::ControllerConfig;
use lbe_cc::LossEvent;
use lbe_cc::PathInfo;
use lbe_cc::RttInfo;
use lbe_cc::MAX_WINDOW_BYTES;
use proptest::prelude::*;

mod common;

/// Every controller, with its defaults and with the options that change
/// its code paths most; beside each, its window's floor in packets
/// (`min_cwnd`).
const SPECS: &[(&str, u64)] = &[
    ("ledbatpp", 2),
    ("ledbatpp:profile=seed", 2),
    ("ledbatpp:profile=full", 1),
    (
        "ledbatpp:research=true,init_cwnd=1000,min_cwnd=64,gain_divisor_max=1",
        64,
    ),
    (
        "ledbatpp:research=true,current_filter=1,base_bucket=1s,base_history=1,target=1ms",
        2,
    ),
    (
        "ledbatpp:research=true,slowdown_interval=1,initial_slowdown_rtts=1,slowdown_rtts=1",
        2,
    ),
    ("ledbat", 2),
    ("ledbat:slow_start=true,target=5ms,decrease_gain=10", 2),
    ("ledbat:flightsize=rtt_max", 2),
    (
        "ledbat:research=true,dynamic_gain=true,t_stdy=100ms,gain_max=1000,delta=0.2",
        2,
    ),
    (
        "ledbat:research=true,dynamic_gain=true,tau_user=1ms,dw_user=1000",
        2,
    ),
    ("ledbat:research=true,target=1s,gain=100", 2),
    ("cdg", 2),
    (
        "cdg:g=0.001,shadow_window=true,ineffective_backoff=true,window=1",
        2,
    ),
    ("cdg:g=100000,beta=0.99,seed=0", 2),
    ("fixed", 2),
    // Not specs: lbe_cc::cubic::Cubic, built fresh and taken over (`build`).
    ("cubic::new", 2),
    ("cubic::take_over", 2),
];

/// Every state name: LEDBAT++'s (`filling`, `yielded` and `quiet` are
/// `profile=full`'s), then CDG's `backoff` and `fixed`'s own, in that
/// order.
fn state_names() -> impl Iterator<Item = &'static str> {
    lbe_cc::ledbatpp::STATE_NAMES
        .into_iter()
        .chain(["backoff", "fixed"])
}

/// States in which an ACK does not grow the window (`profile=full`'s
/// `fq_yield` and `gain_quiet`), as long as the state lasts.
const NO_GROWTH: &[&str] = &["yielded", "quiet"];

fn build(spec: &str, mss: u64, iw: u64) -> Box<dyn CongestionController> {
    let path = PathInfo {
        max_datagram_size: mss,
        initial_window_packets: iw,
    };
    match spec {
        "cubic::new" => Box::new(Cubic::new(path)),
        // A window of `iw` packets in congestion avoidance.
        "cubic::take_over" => {
            let cwnd = iw.saturating_mul(mss);
            Box::new(Cubic::take_over(path, cwnd, Some(cwnd)))
        }
        _ => spec.parse::<ControllerConfig>().unwrap().build(path),
    }
}

#[derive(Clone, Debug)]
enum Event {
    Ack(common::Ack),
    /// The previous ACK again, at the same time.
    DuplicateAck,
    Sent {
        dt: Duration,
        bytes: u64,
    },
    Loss {
        dt: Duration,
        sent_ago: Duration,
    },
    PersistentCongestion,
    Checkpoint,
    Rollback,
    /// A checkpoint at once rolled back.
    CheckpointRollback,
    Mtu(u64),
}

fn duration() -> impl Strategy<Value = Duration> + Clone {
    prop_oneof![
        3 => (0u64..200_000).prop_map(Duration::from_micros),
        1 => Just(Duration::ZERO),
        1 => (0u64..1_000_000_000).prop_map(Duration::from_micros),
        1 => (0u64..400_000).prop_map(Duration::from_secs),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        12 => common::ack(duration(), 0..6, duration(), duration()).prop_map(Event::Ack),
        2 => Just(Event::DuplicateAck),
        2 => (duration(), 1u64..70_000).prop_map(|(dt, bytes)| Event::Sent { dt, bytes }),
        2 => (duration(), duration()).prop_map(|(dt, sent_ago)| Event::Loss { dt, sent_ago }),
        1 => Just(Event::PersistentCongestion),
        1 => Just(Event::Checkpoint),
        1 => Just(Event::Rollback),
        1 => (1u64..70_000).prop_map(Event::Mtu),
    ]
}

/// Runs `events` through `spec`'s controller, whose window's floor is
/// `floor` packets; returns the window, pacing rate and state after each
/// one. Checks the invariants as it goes.
fn run(spec: &str, floor: u64, mss: u64, iw: u64, events: &[Event]) -> Vec<u64> {
    let mut cc = build(spec, mss, iw);
    let mut mss = mss;
    let start = Instant::now() + Duration::from_secs(4_000_000);
    let long_ago = start - Duration::from_secs(1_000_000);
    let mut now = start;
    let mut min_rtt = common::MinRtt::default();
    let mut last: Option<(Vec<AckedPacket>, u64, RttInfo)> = None;
    let mut windows = Vec::with_capacity(events.len());
    for event in events {
        let window_before = cc.window();
        let ack_time = match event {
            Event::Ack(ack) => Some(now + ack.dt),
            Event::DuplicateAck => Some(now),
            _ => None,
        };
        let state_before = ack_time.map(|t| cc.state(t));
        match event {
            Event::Ack(ack) => {
                now += ack.dt;
                let acked = ack.acked_at(now, long_ago);
                let rtt = min_rtt.rtt_info(
                    ack.latest_rtt,
                    ack.ack_delay,
                    ack.new_sample,
                    ack.latest_rtt,
                );
                cc.on_ack(&common::ack_event(now, &acked, ack.in_flight, rtt));
                last = Some((acked, ack.in_flight, rtt));
            }
            Event::DuplicateAck => {
                if let Some((acked, in_flight, rtt)) = &last {
                    cc.on_ack(&common::ack_event(now, acked, *in_flight, *rtt));
                }
            }
            Event::Sent { dt, bytes } => {
                now += *dt;
                cc.on_packet_sent(now, *bytes, cc.window());
            }
            Event::Loss { dt, sent_ago } => {
                now += *dt;
                cc.on_congestion_event(&LossEvent {
                    now,
                    lost_bytes: mss,
                    largest_lost_time_sent: now.checked_sub(*sent_ago).unwrap_or(now),
                    bytes_in_flight: cc.window(),
                });
            }
            Event::PersistentCongestion => cc.on_persistent_congestion(now),
            Event::Checkpoint => cc.checkpoint(),
            Event::Rollback => {
                cc.rollback();
            }
            Event::CheckpointRollback => {
                // `fixed` and CUBIC keep no checkpoint: nothing to roll back.
                cc.checkpoint();
                let kept = cc.rollback();
                assert!(
                    kept || spec == "fixed" || spec.starts_with("cubic::"),
                    "{spec}: no checkpoint to roll back"
                );
            }
            Event::Mtu(size) => {
                mss = *size;
                cc.on_mtu_change(mss);
            }
        }
        let w = cc.window();
        let min = floor.saturating_mul(mss).min(MAX_WINDOW_BYTES);
        assert!(
            w >= min,
            "{spec}: window {w} < {floor} × {mss} after {event:?}"
        );
        assert!(w <= MAX_WINDOW_BYTES, "{spec}: window {w} after {event:?}");
        let snap = cc.snapshot();
        assert_eq!(snap.cwnd, w);
        if let Some(gain) = snap.gain {
            assert!(gain.is_finite() && gain > 0.0, "{spec}: gain {gain}");
        }
        if let Some(ssthresh) = snap.ssthresh {
            assert!(ssthresh <= MAX_WINDOW_BYTES, "{spec}: ssthresh {ssthresh}");
        }
        let state = cc.state(now);
        assert!(state_names().any(|s| s == state), "{spec}: state {state}");
        if let Some(before) = state_before {
            if NO_GROWTH.contains(&before) && state == before {
                assert!(
                    w <= window_before,
                    "{spec}: {before}, the window grew {window_before} → {w} after {event:?}"
                );
            }
        }
        windows.push(w);
        windows.push(state_names().position(|s| s == state).unwrap() as u64);
        // The pacing rate is part of the trajectory compared for determinism.
        windows.push(cc.pacing_rate().unwrap_or(0));
    }
    windows
}

proptest! {
    #[test]
    fn every_controller_survives_random_event_streams(
        (spec, floor) in prop::sample::select(SPECS),
        mss in prop_oneof![Just(1200u64), 1u64..70_000],
        iw in 1u64..100,
        events in prop::collection::vec(event(), 1..300),
    ) {
        let first = run(spec, floor, mss, iw, &events);
        let second = run(spec, floor, mss, iw, &events);
        prop_assert_eq!(first, second, "{} is not deterministic", spec);
    }

    #[test]
    fn a_checkpoint_rolled_back_at_once_changes_nothing(
        (spec, floor) in prop::sample::select(SPECS),
        mss in prop_oneof![Just(1200u64), 1u64..70_000],
        iw in 1u64..100,
        events in prop::collection::vec(event(), 1..300),
        every in 1usize..5,
    ) {
        // Without the stream's own checkpoints and rollbacks (a pair in
        // between would take the stream's checkpoint), then with a pair
        // after every `every` events.
        let plain: Vec<Event> = events
            .into_iter()
            .filter(|e| !matches!(e, Event::Checkpoint | Event::Rollback))
            .collect();
        let mut paired = Vec::new();
        let mut expected = Vec::new();
        let without = run(spec, floor, mss, iw, &plain);
        for (i, e) in plain.iter().enumerate() {
            paired.push(e.clone());
            expected.extend_from_slice(&without[3 * i..3 * i + 3]);
            if i % every == 0 {
                paired.push(Event::CheckpointRollback);
                expected.extend_from_slice(&without[3 * i..3 * i + 3]);
            }
        }
        prop_assert_eq!(run(spec, floor, mss, iw, &paired), expected, "{}", spec);
    }
}

/// A long, well-behaved run: one ACK per 100 µs for simulated minutes, RTTs
/// swinging through and far beyond every target, with losses. Exercises
/// slowdowns, base-history expiry and thousands of CDG rounds.
#[test]
fn long_runs_stay_in_bounds() {
    for &(spec, floor) in SPECS {
        let mut events = Vec::new();
        for i in 0u64..200_000 {
            let q = (i * 7919) % 400_000; // 0 to 400 ms of "queue"
            events.push(Event::Ack(common::Ack {
                dt: Duration::from_micros(100),
                packets: vec![1200],
                sent_ago: Some(Duration::from_micros(50_000 + q)),
                latest_rtt: Duration::from_micros(50_000 + q),
                ack_delay: Duration::from_micros(q % 25_000),
                new_sample: !i.is_multiple_of(3),
                in_flight: 1 << 20,
            }));
            if i % 10_007 == 0 {
                events.push(Event::Loss {
                    dt: Duration::ZERO,
                    sent_ago: Duration::from_millis(10),
                });
            }
            if i % 50_000 == 49_999 {
                // Six idle minutes: the base history starts expiring.
                events.push(Event::Sent {
                    dt: Duration::from_secs(360),
                    bytes: 1200,
                });
            }
        }
        run(spec, floor, 1200, 10, &events);
    }
}
