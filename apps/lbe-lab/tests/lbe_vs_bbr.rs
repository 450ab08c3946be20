//! LEDBAT++ beside quiche's `bbr2` and beside CUBIC in the simulator:
//! the failure of the draft the LBE-vs-BBR grid measures
//! (`sweeps/lbe-vs-bbr-grid-rtt20ms.toml`, docs/lbe-vs-bbr.md), and
//! `profile=full` (with `target_fraction`) yielding, in cells of the grid,
//! seeds 1-3. LEDBAT++ first, the foreground from 10 s, 20 Mbit/s, BUFFER;
//! its share of the two over 20-60 s (the sweep's figures in
//! docs/lbe-vs-bbr.md were made when the simulator still ran the CUBIC
//! points on a re-stated engine; the bbr2 points ran quiche itself, as
//! here). About 60 s of CPU (twelve 60 s runs).

use std::path::Path;

const SEEDS: [u64; 3] = [1, 2, 3];
const BUFFER: &str = "500ms";
/// Beside bbr2 the draft kept 0.338 / 0.370 / 0.404 (seeds 1/2/3); an LBE
/// should keep at most 0.1 (the bar), so above 0.25 is the
/// failure, with 0.09 of margin.
const LOW_BBR2: f64 = 0.25;
/// Beside CUBIC it kept 0.0020 / 0.0022 / 0.0021 (the former re-stated
/// engine 0.0021 / 0.0021 / 0.0020); below 0.02 is yielding.
const HIGH_CUBIC: f64 = 0.02;
/// `profile=full` beside bbr2 at 20 ms and 100 ms: at most this (the
/// issue's contract for `make test`). Measured 0.018-0.021 at 20 ms and
/// 0.010-0.012 at 100 ms (seeds 1-3).
const FULL_BBR2: f64 = 0.15;

/// The LBE's share of the two flows' goodput, as the sweep's `flow1.share`.
fn lbe_share(lbe: &str, foreground: &str, rtt: &str, seed: u64) -> f64 {
    let text = format!(
        "seed = {seed}\n[link]\nrate = \"20mbit\"\nrtt = \"{rtt}\"\nbuffer = \"{BUFFER}\"\n\
         [analysis]\nfrom = \"20s\"\nto = \"60s\"\n\
         [[flow]]\ncc = \"{lbe}\"\nstop = \"60s\"\n\
         [[flow]]\ncc = \"{foreground}\"\nstart = \"10s\"\nstop = \"60s\"\n"
    );
    let scenario = lbe_lab::scenario::parse(Path::new("lbe-vs-bbr.toml"), &text).unwrap();
    let (summary, _) = lbe_lab::sim::simulate(&scenario).unwrap();
    let g: Vec<f64> = summary
        .flows
        .iter()
        .map(|f| f.figures.goodput_bps)
        .collect();
    g[0] / (g[0] + g[1])
}

/// Beside bbr2 the draft does not yield (LOW_BBR2): at base RTTs below
/// 60 ms bbr2's own queue stays under LEDBAT++'s 60 ms target, and the
/// grid measured the draft above the 0.1 bar in every cell at
/// 10-40 ms (docs/lbe-vs-bbr.md). The draft is the reference profile: this
/// records the failure, it is not a bar to fix in it.
#[test]
fn the_draft_does_not_yield_to_bbr2_at_20_ms() {
    for seed in SEEDS {
        let share = lbe_share("ledbatpp:profile=draft", "bbr2", "20ms", seed);
        println!("seed {seed}: the draft beside bbr2 keeps {share:.3}");
        assert!(
            share > LOW_BBR2,
            "seed {seed}: the draft's share beside bbr2 {share}"
        );
    }
}

/// Beside CUBIC, on the same link, the draft yields (HIGH_CUBIC).
#[test]
fn the_draft_yields_to_cubic_at_20_ms() {
    for seed in SEEDS {
        let share = lbe_share("ledbatpp:profile=draft", "cubic", "20ms", seed);
        println!("seed {seed}: the draft beside cubic keeps {share:.4}");
        assert!(
            share < HIGH_CUBIC,
            "seed {seed}: the draft's share beside cubic {share}"
        );
    }
}

/// `profile=full` yields to bbr2 (FULL_BBR2): its `target_fraction` puts
/// T at 0.15 of the base round trip, under the queue bbr2 keeps (about one
/// base RTT's worth), where the draft's 60 ms sits above it below 60 ms.
#[test]
fn full_yields_to_bbr2_at_20_and_100_ms() {
    for rtt in ["20ms", "100ms"] {
        for seed in SEEDS {
            let share = lbe_share("ledbatpp:profile=full", "bbr2", rtt, seed);
            println!("{rtt} seed {seed}: profile=full beside bbr2 keeps {share:.3}");
            assert!(
                share <= FULL_BBR2,
                "{rtt} seed {seed}: profile=full's share beside bbr2 {share}"
            );
        }
    }
}
