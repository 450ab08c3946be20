//! LEDBAT++ behind a flow-queuing router (FQ-CoDel, RFC 8290) in the
//! simulator, seeds 1-3: `profile=full` started first, CUBIC from 10 s,
//! 20 Mbit/s, 50 ms, 500 ms buffer, CUBIC's share of the two over 20-60 s
//! (`sweeps/aqm-lbe-vs-cubic.toml`, docs/networks.md). Without `fq_yield`
//! the LBE flow has its own queue, its delay never rises and it keeps an
//! equal part; with it (`profile=full`'s default) it yields by rate
//! (cc/src/ledbatpp/flow_queue.rs). About 30 s of CPU (six 60 s runs).

mod common;

use common::*;

const SEEDS: [u64; 3] = [1, 2, 3];
/// The bar: CUBIC gets at least this much of the two beside
/// `profile=full` under FQ-CoDel. Measured 0.839 / 0.964 / 0.867
/// (seeds 1/2/3; 0.971 / 0.875 / 0.969 before `sharp_decrease` and the
/// one-way pacing round trip).
const CUBIC_AT_LEAST: f64 = 0.8;
/// Without `fq_yield` CUBIC got 0.666 / 0.668 / 0.659 (0.574 / 0.622 /
/// 0.581 without `sharp_decrease` as well): below this, the instrument
/// shows the problem the rule answers.
const CUBIC_WITHOUT_BELOW: f64 = 0.7;

/// CUBIC's share of the two flows' goodput, as the sweep's `flow2.share`.
fn cubic_share(lbe: &str, aqm: &str, seed: u64) -> f64 {
    let text = format!("seed = {seed}")
        + &link("20mbit", "50ms", "500ms")
        + &format!("aqm = \"{aqm}\"\n")
        + &window("20s", "60s")
        + &flow(lbe, "0s", "60s")
        + &flow("cubic", "10s", "60s");
    let (summary, _) = lbe_lab::sim::simulate(&parse("flow-queue.toml", &text)).unwrap();
    second_flow_share(&summary)
}

#[test]
fn full_yields_to_cubic_behind_fq_codel() {
    for seed in SEEDS {
        let share = cubic_share("ledbatpp:profile=full", "fq_codel", seed);
        println!("seed {seed}: CUBIC beside profile=full under fq_codel gets {share:.3}");
        assert!(
            share >= CUBIC_AT_LEAST,
            "seed {seed}: CUBIC's share beside profile=full under fq_codel {share}"
        );
    }
}

#[test]
fn without_fq_yield_the_lbe_takes_an_equal_part_behind_fq_codel() {
    for seed in SEEDS {
        let share = cubic_share(
            "ledbatpp:research=true,profile=full,fq_yield=off",
            "fq_codel",
            seed,
        );
        println!(
            "seed {seed}: CUBIC beside profile=full,fq_yield=off under fq_codel gets {share:.3}"
        );
        assert!(
            share < CUBIC_WITHOUT_BELOW,
            "seed {seed}: CUBIC's share beside profile=full,fq_yield=off under fq_codel {share}"
        );
    }
}
