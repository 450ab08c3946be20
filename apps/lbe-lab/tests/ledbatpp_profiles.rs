//! The bars for `ledbatpp:profile=full`, in the deterministic
//! simulator, each on several seeds; and `profile=draft` stays the draft.
//! The sweeps in sweeps/ledbatpp-profiles-*.toml measure the same for all three
//! profiles side by side (docs/ledbatpp-profiles.md).

mod common;

use common::*;
use lbe_lab::sim::SimSummary;

const SEEDS: [u64; 3] = [1, 2, 3];

fn alone(cc: &str, rtt: &str, buffer: &str, loss: f64) -> String {
    link("20mbit", rtt, buffer)
        + &format!("loss = {loss}\n")
        + &window("10s", "120s")
        + &flow(cc, "0s", "120s")
}

fn vs_cubic(cc: &str, buffer: &str, cubic_stop: &str) -> String {
    link("20mbit", "50ms", buffer)
        + &window("20s", "40s")
        + &flow(cc, "0s", "60s")
        + &flow("cubic", "10s", cubic_stop)
}

fn share(s: &SimSummary, flow: usize) -> f64 {
    let total: f64 = s.flows.iter().map(|f| f.figures.goodput_bps).sum();
    s.flows[flow].figures.goodput_bps / total
}

#[test]
fn full_alone_uses_the_link_with_the_queue_at_target() {
    for rtt in ["10ms", "50ms", "300ms"] {
        for seed in SEEDS {
            let (s, _) = simulate_seeded(&alone("ledbatpp:profile=full", rtt, "500ms", 0.0), seed);
            let u = s.utilization_of_max.unwrap();
            let q = s.flows[0].figures.queuing_delay_ms.mean.unwrap();
            assert!(u >= 0.97, "{rtt} seed {seed}: utilization_of_max {u}");
            // target_margin (4 ms) keeps the mean below TARGET (60 ms):
            // 56.5 ms at 10 ms, 59.2 ms at most at 300 ms (docs/ledbatpp-profiles.md).
            assert!(q <= 60.0, "{rtt} seed {seed}: mean queue {q} ms");
        }
    }
}

#[test]
fn full_with_one_percent_loss_at_300ms_gets_twice_the_draft() {
    for seed in SEEDS {
        let goodput = |cc: &str| {
            let (s, _) = simulate_seeded(&alone(cc, "300ms", "500ms", 0.01), seed);
            s.flows[0].figures.goodput_bps
        };
        let (draft, full) = (goodput("ledbatpp"), goodput("ledbatpp:profile=full"));
        assert!(full >= 2.0 * draft, "seed {seed}: {full} vs draft {draft}");
    }
}

#[test]
fn full_yields_to_cubic() {
    for seed in SEEDS {
        let (s, _) = simulate_seeded(&vs_cubic("ledbatpp:profile=full", "500ms", "60s"), seed);
        assert!(share(&s, 1) >= 0.95, "500ms seed {seed}: {}", share(&s, 1));
        let (s, _) = simulate_seeded(&vs_cubic("ledbatpp:profile=full", "30ms", "60s"), seed);
        let ratio = share(&s, 1) / share(&s, 0);
        assert!(ratio >= 5.0, "30ms seed {seed}: CUBIC/LEDBAT++ {ratio}");
    }
}

/// Seconds from `after_s` until the first 250 ms bin of `flow`'s delivered
/// bytes at ≥ 0.9 of the largest goodput the link carries (bin end): a
/// run's `refill_s` (`lbe_lab::summary::refill_s`), from a time measured
/// in the run rather than a scenario's `refill_after`.
fn time_back(s: &SimSummary, a: &qlog_analysis::Analysis, flow: usize, after_s: f64) -> f64 {
    let level = lbe_lab::summary::REFILL_OF_MAX * s.max_goodput_bps.unwrap();
    let series = [&a.flows[flow].series];
    let at = qlog_analysis::flow::FlowSeries::refill_at_s(&series, after_s, level)
        .expect("never back to 0.9 of the link");
    at - after_s
}

/// When `flow`'s last byte was delivered (the end of its last 10 ms bucket).
fn last_delivery_s(a: &qlog_analysis::Analysis, flow: usize) -> f64 {
    a.flows[flow]
        .series
        .delivered
        .last_s()
        .expect("delivered bytes")
}

#[test]
fn full_takes_the_link_back_seconds_after_cubic_leaves() {
    // The bar is 2 s from CUBIC's last byte. CUBIC stops writing 30 s
    // after its first write (about 40.1 s), as quic-bulk's `--duration`
    // counts, and what its window holds then still goes out: in flight,
    // and about one window more waiting to be sent
    // (`lbe_endpoint::write_budget`). Here CUBIC's data arrived until
    // 1.12-1.18 s after 40 s (seeds 1-3), and `full` was back 0.82-1.13 s
    // after CUBIC's last byte. (Before the write budget, when the stream's
    // unsent data grew with every ACK, CUBIC's data arrived until
    // 3.04-3.18 s after the stop; on the
    // re-stated engine, whose CUBIC stopped sending at once, `full` was
    // back 1.25-1.5 s from the stop; before pacing_rtt=current the pacer's
    // own wait read as a queue, held fill_empty_queue back and it took up
    // to 3.25 s.) The draft took 17.5 s. Asserted as the bar, not pinned:
    // the figure moves with any change of the model.
    let times: Vec<(f64, f64)> = SEEDS
        .iter()
        .map(|&seed| {
            let (s, a) = simulate_seeded(&vs_cubic("ledbatpp:profile=full", "500ms", "40s"), seed);
            let gone = last_delivery_s(&a, 1);
            // About a window in flight and one unsent: 1.12-1.18 s; it was
            // over 3 s while the writer took whatever quiche offered.
            assert!(
                (40.0..=41.6).contains(&gone),
                "seed {seed}: CUBIC's last byte at {gone} s"
            );
            let back = time_back(&s, &a, 0, gone);
            eprintln!("seed {seed}: CUBIC's last byte at {gone:.2} s, full back {back:.2} s later");
            (gone - 40.0, back)
        })
        .collect();
    assert!(times.iter().all(|(_, back)| *back <= 2.0), "{times:?}");
    // The draft takes far longer.
    let (s, a) = simulate_seeded(&vs_cubic("ledbatpp", "500ms", "40s"), 1);
    assert!(time_back(&s, &a, 0, last_delivery_s(&a, 1)) > 5.0);
}

#[test]
fn two_full_flows_10s_apart_share_fairly() {
    // At 20 ms it took decrease_constant=0.25 (it was 0.83-0.92 with C = 1).
    for rtt in ["20ms", "50ms", "100ms"] {
        for seed in SEEDS {
            let text = link("20mbit", rtt, "500ms")
                + &window("40s", "100s")
                + &flow("ledbatpp:profile=full", "0s", "100s")
                + &flow("ledbatpp:profile=full", "10s", "100s");
            let (s, _) = simulate_seeded(&text, seed);
            let jain = s.jain_index.unwrap();
            eprintln!("{rtt} seed {seed}: Jain {jain:.3}");
            // Every cell 0.975-1.000 since the simulator runs quic-bulk's
            // own sessions (2026-11-27). Before, 20 ms seed 2 read 0.930 and
            // was held at 0.92: the flows at 7 and 12 Mbit/s from 40 s to
            // the end, each holding its window; the late flow never saw
            // the link as empty as the first did alone (minimum RTT
            // 20.64 ms against 20.37). What in the exchange's first
            // packets (a request line for one byte, the ALPN) moved it to
            // 1.000 is not isolated: the minimum a late LEDBAT++ flow finds
            // is still a matter of when its first packets meet the queue.
            let bar = 0.95;
            assert!(jain >= bar, "{rtt} seed {seed}: Jain {jain}");
        }
    }
}

#[test]
fn four_full_flows_10s_apart_share_fairly() {
    let mut text = link("20mbit", "50ms", "500ms") + &window("90s", "150s");
    for start in [0, 10, 20, 30] {
        text += &flow("ledbatpp:profile=full", &format!("{start}s"), "150s");
    }
    for seed in SEEDS {
        let (s, _) = simulate_seeded(&text, seed);
        let jain = s.jain_index.unwrap();
        assert!(jain >= 0.9, "seed {seed}: Jain {jain}");
    }
}

#[test]
fn profile_draft_is_still_the_draft() {
    // The draft's figures alone at 300 ms, unchanged by profile=full's
    // options: the same run as plain `ledbatpp`, and its known penalty.
    let (draft, _) = simulate_seeded(&alone("ledbatpp:profile=draft", "300ms", "500ms", 0.0), 1);
    let (plain, _) = simulate_seeded(&alone("ledbatpp", "300ms", "500ms", 0.0), 1);
    assert_eq!(
        serde_json::to_value(&draft.flows[0].figures).unwrap(),
        serde_json::to_value(&plain.flows[0].figures).unwrap()
    );
    let u = draft.utilization_of_max.unwrap();
    // 0.825 on the re-stated engine the simulator had before.
    assert_eq!((u * 1000.0).round(), 826.0, "draft at 300 ms: {u}");
}
