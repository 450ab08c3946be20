//! Scenarios short enough for CI (each at most 40 s of emulated time) that
//! check the qualitative results the seeds report, end to end: lbe-netem,
//! quic-bulk, the controllers inside quiche, and qlog-analysis's figures.
//!
//! The runs share two cores with everything else, so they run one at a
//! time, and the assertions are about who gets what (shares, ratios, a
//! delay bound with room), not about timings.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::sync::Mutex;

use lbe_lab::run::Summary;

/// One scenario at a time: they measure a shared link and need the CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(name: &str, toml: &str) -> Summary {
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = lbe_lab::scenario::parse(Path::new(name), toml).unwrap();
    let out = std::env::temp_dir().join(format!("lbe-lab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let summary = lbe_lab::run::run(
        &scenario,
        &out,
        &Arc::new(AtomicBool::new(false)),
        &|line| eprintln!("[{name}] {line}"),
    )
    .unwrap();
    for f in &summary.flows {
        eprintln!(
            "[{name}] {} {}: {:.2} Mbit/s, RTT min {:?} ms, queue mean {:?} ms",
            f.name,
            f.cc,
            f.figures.goodput_bps / 1e6,
            f.figures.rtt_ms.min,
            f.figures.queuing_delay_ms.mean
        );
    }
    eprintln!(
        "[{name}] utilization {:?}, jain {:?}",
        summary.utilization, summary.jain_index
    );
    summary
}

/// Prints the figure an assertion checks, in the form
/// `scripts/flake-check.sh` collects over repeated runs.
fn figure(test: &str, key: &str, value: f64) -> f64 {
    eprintln!("flake-figure: {test}: {key} = {value}");
    value
}

fn goodput(s: &Summary, name: &str) -> f64 {
    s.flows
        .iter()
        .find(|f| f.name == name)
        .unwrap()
        .figures
        .goodput_bps
}

/// Real time, 20 s. `scripts/flake-check.sh -n 10` (2026-11-23, 2 cores):
/// utilization min 0.925 / median 0.936 / max 0.945, minimum RTT
/// 40.82 / 40.91 / 41.22 ms. Bars: utilization in [0.85, 1.0], minimum RTT
/// in [37, 43] ms, both several times the observed spread away.
#[test]
fn cubic_through_the_emulator_fills_the_link_at_its_base_rtt() {
    let s = run(
        "cubic",
        r#"
[link]
rate = "20mbit"
rtt = "40ms"
buffer = "100ms"
[analysis]
from = "5s"
to = "20s"
[[flow]]
cc = "cubic"
stop = "20s"
name = "cubic"
"#,
    );
    let test = "cubic_through_the_emulator_fills_the_link_at_its_base_rtt";
    let utilization = figure(test, "utilization", s.utilization.unwrap());
    assert!(
        (0.85..=1.0).contains(&utilization),
        "utilization {utilization}"
    );
    // Over the whole connection (inside the window CUBIC keeps the buffer
    // full): the sender's minimum RTT is the emulated base RTT.
    let min_rtt = figure(test, "min_rtt_ms", s.flows[0].transfer.rtt_ms.min);
    assert!(
        (37.0..=43.0).contains(&min_rtt),
        "min RTT {min_rtt} ms on a 40 ms link"
    );
}

/// Real time, 35 s. `scripts/flake-check.sh -n 10` (2026-11-23): utilization
/// min 0.880 / median 0.888 / max 0.890, mean queuing delay
/// 53.3 / 56.6 / 57.5 ms. Bars: utilization ≥ 0.75, queue ≤ 75 ms.
#[test]
fn ledbatpp_alone_uses_most_of_the_link_and_keeps_the_queue_near_target() {
    let s = run(
        "solo",
        r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[analysis]
from = "10s"
to = "35s"
[[flow]]
cc = "ledbatpp"
stop = "35s"
name = "lbe"
"#,
    );
    let test = "ledbatpp_alone_uses_most_of_the_link_and_keeps_the_queue_near_target";
    // Seed: ~0.9 of capacity (the periodic slowdowns cost ~10 %).
    let utilization = figure(test, "utilization", s.utilization.unwrap());
    assert!(utilization >= 0.75, "utilization {utilization}");
    // A 500 ms buffer, yet the queue stays near the 60 ms target.
    let queue = figure(
        test,
        "mean_queuing_delay_ms",
        s.flows[0].figures.queuing_delay_ms.mean.unwrap(),
    );
    assert!(queue <= 75.0, "mean queuing delay {queue} ms, target 60 ms");
}

/// Real time, 40 s. `scripts/flake-check.sh -n 10` (2026-11-23): LEDBAT++'s
/// share min 0.0018 / median 0.0019 / max 0.0020, utilization
/// 0.924 / 0.929 / 0.938. Bars: share ≤ 0.2, utilization ≥ 0.8.
#[test]
fn ledbatpp_yields_to_cubic_with_a_large_buffer() {
    let s = run(
        "vs-cubic",
        r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[analysis]
from = "15s"
to = "40s"
[[flow]]
cc = "ledbatpp"
stop = "40s"
name = "lbe"
[[flow]]
cc = "cubic"
start = "5s"
stop = "40s"
name = "cubic"
"#,
    );
    // Seed §6.1: CUBIC takes most of the link.
    let test = "ledbatpp_yields_to_cubic_with_a_large_buffer";
    let (lbe, cubic) = (goodput(&s, "lbe"), goodput(&s, "cubic"));
    let share = figure(test, "ledbatpp_share", lbe / (lbe + cubic));
    assert!(share <= 0.2, "LEDBAT++ {lbe} vs CUBIC {cubic}");
    let utilization = figure(test, "utilization", s.utilization.unwrap());
    assert!(utilization >= 0.8, "utilization {utilization}");
}

/// Real time, 40 s. `scripts/flake-check.sh -n 10` (2026-11-23): Jain's index
/// min 0.963 / median 0.993 / max 1.000; three earlier runs gave 0.894,
/// 0.921, 0.999, and issue 10's clean clone 0.896, which failed the old
/// 0.9 bar. Bar: `JAIN_LATE`.
#[test]
fn two_ledbatpp_flows_split_the_link_even_when_one_starts_late() {
    let s = run(
        "pair",
        r#"
[link]
rate = "2mbit"
rtt = "50ms"
buffer = "500ms"
[analysis]
from = "25s"
to = "40s"
[[flow]]
cc = "ledbatpp"
stop = "40s"
name = "first"
[[flow]]
cc = "ledbatpp"
start = "5s"
stop = "40s"
name = "second"
"#,
    );
    let test = "two_ledbatpp_flows_split_the_link_even_when_one_starts_late";
    let jain = figure(test, "jain", s.jain_index.unwrap());
    assert!(jain >= JAIN_LATE, "Jain's index {jain}");
}

/// Two LEDBAT++ flows 5 s apart, last 15 s of a 40 s run on 2 Mbit/s.
/// Thirteen runs gave 0.894 to 1.000 (see the test); 0.75 is about a 23/77
/// split, while plain LEDBAT's late-comer takes nearly everything (its
/// second flow gets 10 to 96 times the first's goodput, Jain ≈ 0.5). The
/// old bar, 0.9, sat inside the observed range and failed on a clean
/// clone. A small link, because the flows converge by additive increase of
/// GAIN MSS per RTT: the seed's Jain ≥ 0.94 at 20 Mbit/s comes from runs
/// minutes long (scenarios/ledbatpp-pair-10s-apart.toml).
const JAIN_LATE: f64 = 0.75;

/// Real time, 40 s. `scripts/flake-check.sh -n 10` (2026-11-23): the second
/// flow's goodput over the first's min 10.3 / median 61.6 / max 96.5.
/// Bar: > 2.
#[test]
fn plain_ledbat_shows_the_late_comer_advantage() {
    let s = run(
        "latecomer",
        r#"
[link]
rate = "5mbit"
rtt = "20ms"
buffer = "500ms"
[analysis]
from = "30s"
to = "40s"
[[flow]]
cc = "ledbat"
stop = "40s"
name = "first"
[[flow]]
cc = "ledbat"
start = "10s"
stop = "40s"
name = "second"
"#,
    );
    // The second flow takes the first one's queue for base delay and
    // pushes it out (the problem LEDBAT++'s slowdowns fix).
    let test = "plain_ledbat_shows_the_late_comer_advantage";
    let (first, second) = (goodput(&s, "first"), goodput(&s, "second"));
    let ratio = figure(test, "second_over_first", second / first);
    assert!(ratio > 2.0, "first {first}, second {second}");
}
