//! The bars for deadline-aware LBE, in the simulator (deterministic:
//! every figure below is the same on every run). The scenarios are the
//! shipped `scenarios/deadline-*.toml`: 20 Mbit/s, base RTT 50 ms, 500 ms
//! buffer, a CUBIC download from 0 s, the 100 MB transfer from 10 s. The
//! docs/deadline-aware.md has the table.

use std::path::Path;

use lbe_lab::sim::SimFlowSummary;
use lbe_lab::sim::SimSummary;

fn simulate(name: &str, seed: u64) -> SimSummary {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = lbe_lab::scenario::parse(&path, &format!("seed = {seed}\n{text}")).unwrap();
    lbe_lab::sim::simulate(&scenario).unwrap().0
}

/// `simulate` for each controller of [`CCS`] and each seed, in that order.
fn simulate_each(bar: &str, seeds: &[u64]) -> Vec<(&'static str, u64, SimSummary)> {
    let mut runs = Vec::new();
    for cc in CCS {
        for &seed in seeds {
            runs.push((cc, seed, simulate(&format!("deadline-{bar}-{cc}"), seed)));
        }
    }
    runs
}

fn flow<'a>(s: &'a SimSummary, name: &str) -> &'a SimFlowSummary {
    s.flows.iter().find(|f| f.name == name).unwrap()
}

/// Seconds from the flow's start to its last byte acknowledged.
fn took_s(f: &SimFlowSummary) -> f64 {
    f.transfer.finished_s.expect("finished") - f.start_s
}

const BYTES: f64 = 100e6;

/// Both steered controllers (`scenarios/deadline-*-ledbatpp.toml` run
/// `ledbatpp:profile=full`); the bars are the same for each.
const CCS: [&str; 2] = ["cdg", "ledbatpp"];

#[test]
fn tight_deadline_is_met_within_5_percent_taking_at_most_10_percent_more_than_needed() {
    for (cc, seed, s) in simulate_each("tight", &[1, 2, 3]) {
        let bulk = flow(&s, "bulk");
        let took = took_s(bulk);
        // Met within 5 %: done by 126 s; no more than 10 % above the
        // needed rate (100 MB / 120 s): not done before 109.1 s
        // (measured 111.8-115.2 s).
        assert!(took <= 120.0 * 1.05, "{cc} seed {seed}: {took} s");
        assert!(
            BYTES / took <= 1.10 * BYTES / 120.0,
            "{cc} seed {seed}: {took} s"
        );
        let levels = bulk.transfer.time_in_levels_s.as_ref().unwrap();
        assert_eq!(levels.len(), 7);
        // Against CUBIC in a 500 ms buffer it takes the top level: more
        // time there than at any other, over half of the transfer. Measured
        // 0.56-0.79 of the time (cdg seed 1: 90.1 s of 114.6; ledbatpp
        // seed 3: 63.1 s of 113.1, with 23.7 s at level 5). On the
        // re-stated engine (cdg seed 1: 95.8 s of 114.2) the bar was
        // "over 0.75"; on quiche's recovery the levels below the top meet
        // the need for longer (docs/lbe-sim.md, "Where it differed from the re-stated engine").
        let top = levels[6];
        assert!(
            levels[..6].iter().all(|l| *l < top) && top > 0.5 * took,
            "{cc} seed {seed}: {levels:?}"
        );
    }
}

#[test]
fn plain_ledbatpp_misses_the_tight_deadline_by_more_than_ten_times() {
    let s = simulate("deadline-tight-plain-ledbatpp", 1);
    let took = took_s(flow(&s, "bulk"));
    assert!(took > 10.0 * 120.0, "{took} s");
}

#[test]
fn loose_deadline_is_met_and_cubic_keeps_85_percent_of_the_link() {
    for (cc, seed, s) in simulate_each("loose", &[1, 2, 3]) {
        let bulk = flow(&s, "bulk");
        let took = took_s(bulk);
        assert_eq!(bulk.met, Some(true), "{cc} seed {seed}");
        assert!(
            took <= 400.0 && BYTES / took <= 1.10 * BYTES / 400.0,
            "{cc} seed {seed}: {took} s"
        );
        // Over the transfer (the analysis window, 10-390 s): CUBIC's
        // goodput against the most goodput the link carries (its rate
        // less the headers the emulator charges); measured 0.887-0.891.
        let cubic = flow(&s, "cubic").figures.goodput_bps;
        let max = s.max_goodput_bps.unwrap();
        assert!(cubic / max >= 0.85, "{cc} seed {seed}: {cubic} of {max}");
    }
}

#[test]
fn impossible_deadline_reports_the_miss_and_takes_no_more_than_cubic() {
    let share_of = |s: &SimSummary| {
        let ours = flow(s, "bulk").figures.goodput_bps;
        ours / (ours + flow(s, "cubic").figures.goodput_bps)
    };
    // The yardstick, once per seed: a normal flow (a second CUBIC download
    // from 10 s) in the same scenario.
    let newcomer: Vec<f64> = (1..=3)
        .map(|seed| share_of(&simulate("deadline-impossible-plain-cubic", seed)))
        .collect();
    for (cc, seed, s) in simulate_each("impossible", &[1, 2, 3]) {
        let bulk = flow(&s, "bulk");
        assert_eq!(bulk.met, Some(false), "{cc} seed {seed}");
        assert_eq!(bulk.deadline_s, Some(20.0));
        // Given up, the flow is CUBIC (cc/src/cubic.rs). Never more
        // aggressive than CUBIC: at most half of the two flows' goodput
        // over 10-90 s; and no less than a normal flow, a second CUBIC
        // download started at 10 s instead (the yardstick scenario, same
        // seed). Measured: cdg 0.25 / 0.39 / 0.17, ledbatpp 0.34 / 0.30 /
        // 0.33; the CUBIC newcomer 0.048 / 0.053 / 0.031. It finishes (by
        // 218 s measured; CUBIC runs until 200 s).
        let share = share_of(&s);
        let newcomer = newcomer[seed as usize - 1];
        assert!(
            newcomer <= share && share <= 0.5,
            "{cc} seed {seed}: {share} (a CUBIC newcomer {newcomer})"
        );
        assert!(took_s(bulk) < 240.0, "{cc} seed {seed}");
    }
}

#[test]
fn without_a_competitor_it_fills_the_link_and_finishes_early_as_full_lbe() {
    // Measured: cdg 51.5 s (15.4 Mbit/s, 0.82 of the 18.7 Mbit/s the link
    // carries), ledbatpp (profile=full) 43.9 s (18.2 Mbit/s, 0.97).
    for (cc, most_s, least_goodput) in [("cdg", 52.0, 0.8), ("ledbatpp", 44.5, 0.95)] {
        let s = simulate(&format!("deadline-solo-{cc}"), 1);
        let bulk = flow(&s, "bulk");
        assert_eq!(bulk.met, Some(true), "{cc}");
        assert!(took_s(bulk) < most_s, "{cc}: {}", took_s(bulk));
        let goodput = bulk.figures.goodput_bps / s.max_goodput_bps.unwrap();
        assert!(goodput > least_goodput, "{cc}: {goodput}");
        let levels = bulk.transfer.time_in_levels_s.as_ref().unwrap();
        assert!(levels[1..].iter().all(|t| *t == 0.0), "{cc}: {levels:?}");
    }
}
