//! The simulator through lbe-lab: same inputs and outputs as a real run,
//! deterministic, sweeps that shard and merge; and the dynamics claims
//! (fairness, yield, late-comer) asserted where they are deterministic.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use common::*;
use lbe_lab::scenario::Scenario;
use lbe_lab::sim::SimSummary;

fn scenario(text: &str) -> Scenario {
    lbe_lab::scenario::parse(Path::new("test.toml"), text).unwrap()
}

fn simulate(text: &str) -> SimSummary {
    lbe_lab::sim::simulate(&scenario(text)).unwrap().0
}

fn goodputs(s: &SimSummary) -> Vec<f64> {
    s.flows.iter().map(|f| f.figures.goodput_bps).collect()
}

fn share(s: &SimSummary, flow: usize) -> f64 {
    let g = goodputs(s);
    g[flow] / g.iter().sum::<f64>()
}

/// A scratch directory `dir` holding `name` with `text`; returns (the
/// directory, removed when dropped, and the file).
fn temp_file(dir: &str, name: &str, text: &str) -> (Scratch, std::path::PathBuf) {
    let dir = Scratch::new(dir);
    let file = dir.file(name, text);
    (dir, file)
}

fn with_seed(text: &str, seed: u64) -> String {
    format!("seed = {seed}\n{text}")
}

/// Two LEDBAT++ flows for 60 s on 20 Mbit/s, 50 ms, 500 ms; figures over
/// 20-60 s.
fn pair() -> String {
    link("20mbit", "50ms", "500ms")
        + &window("20s", "60s")
        + &flow("ledbatpp", "0s", "60s")
        + &flow("ledbatpp", "0s", "60s")
}

fn options(report: bool, qlog: bool) -> lbe_lab::sim::RunOptions {
    lbe_lab::sim::RunOptions {
        report,
        qlog,
        baseline: false,
    }
}

#[test]
fn same_scenario_and_seed_give_byte_identical_summaries_and_seeds_differ() {
    let (dir, file) = temp_file("lbe-sim-det", "pair.toml", &with_seed(&pair(), 7));
    let read = |out: &str| {
        lbe_lab::sim::run_file(&file, &dir.join(out), &options(true, false), &|_| {}).unwrap();
        std::fs::read(dir.join(out).join("summary.json")).unwrap()
    };
    let a = read("a");
    let b = read("b");
    assert_eq!(a, b);
    let json: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(json["mode"], "sim");
    assert_eq!(json["seed"], 7);
    assert_eq!(json["engine"], "quiche", "what ran it");
    assert!(json["utilization"].as_f64().unwrap() > 0.8);
    let report = std::fs::read_to_string(dir.join("a/report.html")).unwrap();
    assert!(report.contains("the simulator (lbe-lab run --sim)"));
    std::fs::write(&file, with_seed(&pair(), 8)).unwrap();
    assert_ne!(read("c"), a, "another seed, another run");
    // With qlog files, the same figures; and qlog-analysis reads the files
    // back to the same summary (one source of truth for every metric).
    std::fs::write(&file, with_seed(&pair(), 7)).unwrap();
    let s = lbe_lab::sim::run_file(&file, &dir.join("q"), &options(false, true), &|_| {}).unwrap();
    let with_qlog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("q/summary.json")).unwrap()).unwrap();
    let mut without = json.clone();
    let qlogs: Vec<String> = s.flows.iter().map(|f| f.qlog.clone().unwrap()).collect();
    for (i, q) in qlogs.iter().enumerate() {
        assert!(q.starts_with("qlog/flow") && q.ends_with(".sqlog"), "{q}");
        without["flows"][i]["qlog"] = serde_json::Value::String(q.clone());
    }
    assert_eq!(with_qlog, without);
    let options = qlog_analysis::Options {
        from_s: Some(20.0),
        to_s: Some(60.0),
        link_rate_bps: Some(20e6),
        // A simulated qlog's header puts its trace on the run's clock,
        // counted from the Unix epoch (`lbe_sim::qlog_file`).
        time_base: qlog_analysis::TimeBase::WallClock(std::time::UNIX_EPOCH),
        ..qlog_analysis::Options::default()
    };
    let read_back = qlog_analysis::summary_parts(
        qlogs
            .iter()
            .map(|q| qlog_analysis::FlowInput::new(dir.join("q").join(q))),
        &options,
    )
    .unwrap();
    for (i, f) in read_back.flows.iter().enumerate() {
        let sim = &s.flows[i].figures;
        assert_eq!(f.bytes, sim.bytes, "flow {i}");
        assert_eq!(f.lost_packets, sim.lost_packets, "flow {i}");
        let rtt_diff = (f.rtt_ms.mean.unwrap() - sim.rtt_ms.mean.unwrap()).abs();
        assert!(rtt_diff < 0.01, "flow {i}: mean RTT {rtt_diff} ms apart");
    }
    std::fs::remove_dir_all(dir.path()).unwrap();
}

#[test]
fn a_summary_has_the_keys_of_a_real_run() {
    let s = simulate(&pair());
    let json = serde_json::to_value(&s).unwrap();
    for key in [
        "link",
        "window",
        "flows",
        "utilization",
        "max_goodput_bps",
        "utilization_of_max",
        "jain_index",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    let flow = &json["flows"][0];
    for key in [
        "id",
        "name",
        "cc",
        "start_s",
        "stop_s",
        "bytes",
        "goodput_bps",
        "rtt_ms",
        "queuing_delay_ms",
        "lost_packets",
        "qlog",
    ] {
        assert!(flow.get(key).is_some(), "missing flows[].{key}");
    }
    assert_eq!(json["window"]["from_s"], 20.0);
    assert_eq!(json["window"]["to_s"], 60.0);
}

/// (`bbr2` is not refused: the simulator runs quiche's own, as
/// `quiche_engine.rs` shows.)
#[test]
fn what_the_simulator_cannot_run_is_refused_with_the_reason() {
    let cross = pair().replace(
        "buffer = \"500ms\"",
        "buffer = \"500ms\"\ncross_traffic = \"1mbit\"",
    );
    let e = lbe_lab::sim::simulate(&scenario(&cross)).err().unwrap();
    assert!(e.contains("cross_traffic is not simulated"), "{e}");
}

/// Seed 000 §6: two LEDBAT++ flows starting together split the link, Jain's
/// index above 0.96.
#[test]
fn two_ledbatpp_flows_starting_together_split_the_link() {
    for seed in 1..=3 {
        let s = simulate(&with_seed(&pair(), seed));
        let jain = s.jain_index.unwrap();
        assert!(jain > 0.96, "seed {seed}: Jain {jain}, {:?}", goodputs(&s));
    }
}

/// Seed 000 §6: no late-comer advantage. The flow that started first keeps
/// well over a third of the link (plain LEDBAT's keeps about 1 %, below).
#[test]
fn a_late_ledbatpp_flow_does_not_take_the_link() {
    let text = link("20mbit", "50ms", "500ms")
        + &window("30s", "90s")
        + &flow("ledbatpp", "0s", "90s")
        + &flow("ledbatpp", "10s", "90s");
    for seed in 1..=3 {
        let s = simulate(&with_seed(&text, seed));
        assert_eq!(s.flows[1].start_s, 10.0);
        let first = share(&s, 0);
        assert!(first > 0.33, "seed {seed}: first flow's share {first}");
        assert!(
            s.jain_index.unwrap() > 0.9,
            "seed {seed}: {:?}",
            s.jain_index
        );
    }
}

/// Seed 001 / seed 000 §2: plain LEDBAT's late-comer takes the link.
#[test]
fn plain_ledbat_shows_the_late_comer_advantage() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ledbat-latecomer.toml");
    let s = lbe_lab::sim::simulate(&lbe_lab::scenario::load(&path).unwrap())
        .unwrap()
        .0;
    let g = goodputs(&s);
    assert!(g[1] > 20.0 * g[0], "second / first = {:?}", g);
}

/// LEDBAT++ for 50 s, and CUBIC from 10 s, on 20 Mbit/s, 50 ms and
/// `buffer`; figures over 20-50 s.
fn vs_cubic(buffer: &str) -> String {
    link("20mbit", "50ms", buffer)
        + &window("20s", "50s")
        + &flow("ledbatpp", "0s", "50s")
        + &flow("cubic", "10s", "50s")
}

/// Seed 000 §6: with a 500 ms buffer CUBIC takes most of the link; with a
/// 30 ms buffer (LEDBAT++ on losses alone) CUBIC still gets at least 2.5
/// times what LEDBAT++ gets.
#[test]
fn ledbatpp_yields_to_cubic() {
    for seed in 1..=3 {
        let big = simulate(&with_seed(&vs_cubic("500ms"), seed));
        assert!(
            share(&big, 0) < 0.05,
            "seed {seed}: 500 ms: {:?}",
            goodputs(&big)
        );
        let small = simulate(&with_seed(&vs_cubic("30ms"), seed));
        let g = goodputs(&small);
        assert!(g[1] > 2.5 * g[0], "seed {seed}: 30 ms: {g:?}");
    }
}

/// Seed 002 Table I: CDG's share against CUBIC moves with G (mean of three
/// seeds; quiche's CUBIC with its rollback off, as Linux's).
#[test]
fn cdg_share_against_cubic_rises_with_g() {
    let text = link("10mbit", "50ms", "50ms")
        + &window("45s", "100s")
        + &flow("cdg:g=G", "0s", "100s")
        + &flow("cubic:rollback=off", "30s", "100s");
    let mut shares = Vec::new();
    for g in ["0.1", "2", "6", "120"] {
        let mean = (1..=3)
            .map(|seed| share(&simulate(&with_seed(&text.replace("G", g), seed)), 0))
            .sum::<f64>()
            / 3.0;
        shares.push(mean);
    }
    assert!(shares.windows(2).all(|w| w[0] < w[1]), "{shares:?}");
    assert!(shares[0] < 0.1 && shares[3] > 0.2, "{shares:?}");
}

const SWEEP: &str = r#"
name = "tiny"
seeds = 2
[link]
rate = "10mbit"
rtt = ["20ms", "80ms"]
buffer = "100ms"
[analysis]
from = "2s"
to = "8s"
[[flow]]
cc = ["ledbatpp", "cubic"]
stop = "8s"
[[figure]]
name = "util"
x = "link.rtt"
y = "utilization"
"#;

#[test]
fn a_sharded_sweep_merges_into_the_unsharded_results() {
    let (dir, file) = temp_file("lbe-sweep", "tiny.toml", SWEEP);
    let sweep = lbe_lab::sweep::load(&file).unwrap();
    assert_eq!(sweep.len(), 8);
    let stop = Arc::new(AtomicBool::new(false));
    let run = |out: &str, shard: Option<&str>| {
        let options = lbe_lab::sweep::Options {
            jobs: 2,
            shard: shard.map(|s| s.parse().unwrap()),
            real: false,
            baseline: false,
        };
        lbe_lab::sweep::run(&sweep, &dir.join(out), &options, &stop, &|_| {}).unwrap()
    };
    let whole = run("whole", None);
    assert_eq!(whole.runs.len(), 8);
    // Each point is what `lbe-lab run --sim` gives for it.
    let (alone, _) = lbe_lab::sim::simulate(&sweep.scenario(4).unwrap()).unwrap();
    assert_eq!(whole.runs[4].utilization, alone.utilization);
    assert_eq!(whole.engine.as_deref(), Some("quiche"));
    assert_eq!(whole.runs[3].params["link.rtt"], "20ms");
    assert_eq!(whole.runs[3].params["flow1.cc"], "cubic");
    assert_eq!(whole.runs[3].params["seed"], "2");
    assert!(dir.join("whole/figures/util.svg").exists());
    let csv = std::fs::read_to_string(dir.join("whole/results.csv")).unwrap();
    assert!(
        csv.starts_with("index,link.rtt,flow1.cc,seed,utilization,"),
        "{csv}"
    );
    for (i, s) in ["0/3", "1/3", "2/3"].iter().enumerate() {
        let part = run(&format!("s{i}"), Some(s));
        assert!(part.runs.iter().all(|r| r.index % 3 == i));
    }
    let merged = dir.join("merged");
    lbe_lab::sweep::merge(&[dir.join("s0"), dir.join("s1"), dir.join("s2")], &merged).unwrap();
    for f in [
        "results.json",
        "results.csv",
        "figures/util.svg",
        "figures/util.csv",
    ] {
        let (a, b) = (
            std::fs::read_to_string(dir.join("whole").join(f)).unwrap(),
            std::fs::read_to_string(merged.join(f)).unwrap(),
        );
        assert!(a == b, "{f} differs:\n{a}\n---\n{b}");
    }
    let e = lbe_lab::sweep::merge(&[dir.join("s0"), dir.join("s2")], &dir.join("m2")).unwrap_err();
    assert!(e.starts_with("3 of 8 runs missing (first: 1, 4, 7)"), "{e}");
    let e = lbe_lab::sweep::merge(&[dir.join("s0"), dir.join("s0")], &dir.join("m3")).unwrap_err();
    assert_eq!(e, "run 0 appears in more than one shard");
    // Shards of one sweep run on different engines are not one sweep: a
    // shard from before the re-stated engine was removed says so.
    let old = dir.join("old-s0");
    std::fs::create_dir_all(&old).unwrap();
    let s0 = std::fs::read_to_string(dir.join("s0/results.json")).unwrap();
    assert!(s0.contains("\"engine\": \"quiche\""), "{s0}");
    std::fs::write(
        old.join("results.json"),
        s0.replace("\"engine\": \"quiche\"", "\"engine\": \"restated\""),
    )
    .unwrap();
    let e =
        lbe_lab::sweep::merge(&[dir.join("s1"), dir.join("s2"), old], &dir.join("m4")).unwrap_err();
    assert_eq!(
        e,
        format!(
            "{}: run on engine restated where the first shard ran on quiche",
            dir.join("old-s0/results.json").display()
        )
    );
    std::fs::remove_dir_all(dir.path()).unwrap();
}

/// `text` as the sweep file `name` in a scratch directory `dir`, run in the
/// simulator (one job) into `out/` there; returns the directory (removed
/// when dropped), the sweep and its results.
fn run_sweep_into_out(
    dir: &str,
    name: &str,
    text: &str,
) -> (Scratch, lbe_lab::sweep::Sweep, lbe_lab::sweep::Results) {
    let (dir, file) = temp_file(dir, name, text);
    let sweep = lbe_lab::sweep::load(&file).unwrap();
    let options = lbe_lab::sweep::Options {
        jobs: 1,
        shard: None,
        real: false,
        baseline: false,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let results = lbe_lab::sweep::run(&sweep, &dir.join("out"), &options, &stop, &|_| {}).unwrap();
    (dir, sweep, results)
}

/// A sweep's flow of `bytes` that finishes has `took_s`, the seconds from
/// its start to its last byte acknowledged, as the simulated run's
/// transfer gives it (in results.json, results.csv and as the metric
/// `flowN.took_s`); a flow of a duration (here one that stops before the
/// other starts) has none.
#[test]
fn a_sweep_records_when_a_flow_of_bytes_finished() {
    let text = r#"
name = "took"
seeds = 1
[link]
rate = "10mbit"
rtt = "20ms"
buffer = "50ms"
[analysis]
from = "1s"
to = "6s"
[[flow]]
cc = ["cubic", "ledbatpp"]
start = "1s"
bytes = "2MB"
[[flow]]
cc = "cubic"
stop = "1s"
"#;
    let (dir, sweep, results) = run_sweep_into_out("lbe-sweep-took", "took.toml", text);
    for (i, r) in results.runs.iter().enumerate() {
        let (alone, _) = lbe_lab::sim::simulate(&sweep.scenario(i).unwrap()).unwrap();
        let finished = alone.flows[0]
            .transfer
            .finished_s
            .expect("2 MB finish in 6 s");
        let took = finished - alone.flows[0].start_s;
        assert_eq!(r.flows[0].took_s, Some(took), "run {i}");
        assert!(took > 1.6 && took < 5.0, "run {i}: took {took} s");
        assert_eq!(lbe_lab::sweep::metric(r, "flow1.took_s"), Some(took));
        assert_eq!(r.flows[1].took_s, None, "run {i}: a flow of a duration");
        assert_eq!(lbe_lab::sweep::metric(r, "flow2.took_s"), None);
    }
    let csv = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "flow1.took_s").unwrap();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(
        first[col].parse::<f64>().ok(),
        results.runs[0].flows[0].took_s
    );
    let json = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    assert!(json.contains("\"took_s\""), "results.json keeps it");
}

/// With `[analysis] steady_queue`, a sweep's bulk flow has `steady_s`:
/// the seconds from its start to the end of the first 1 s over which its
/// mean RTT above base reached the queue, as `qlog-analysis` reads it off
/// the flow's whole series (here CUBIC filling a 100 ms buffer reaches
/// 20 ms, and never 1 s); in `summary.json`, results.json, results.csv and
/// as the metric `flowN.steady_s`. Without the key the summary has no
/// `steady_s` at all.
#[test]
fn a_sweep_records_when_a_flow_reached_its_steady_queue() {
    let text = r#"
name = "steady"
seeds = 1
[link]
rate = "10mbit"
rtt = "20ms"
buffer = "100ms"
[analysis]
from = "1s"
to = "7s"
steady_queue = ["20ms", "1s"]
[[flow]]
cc = "cubic"
start = "1s"
stop = "7s"
"#;
    let (dir, sweep, results) = run_sweep_into_out("lbe-sweep-steady", "steady.toml", text);
    let mut steady = Vec::new();
    for (i, r) in results.runs.iter().enumerate() {
        let scenario = sweep.scenario(i).unwrap();
        let (s, a) = lbe_lab::sim::simulate(&scenario).unwrap();
        let queue_ms = scenario.steady_queue.unwrap().as_secs_f64() * 1e3;
        let at = a.unwrap().flows[0].series.steady_at_s(1.0, queue_ms);
        assert_eq!(s.flows[0].steady_s, at.map(|t| t - 1.0), "run {i}");
        assert_eq!(r.flows[0].steady_s, s.flows[0].steady_s, "run {i}");
        assert_eq!(
            lbe_lab::sweep::metric(r, "flow1.steady_s"),
            r.flows[0].steady_s
        );
        steady.push(r.flows[0].steady_s);
    }
    let reached = steady[0].expect("CUBIC queues 20 ms in a 100 ms buffer");
    assert!((2.0..=5.0).contains(&reached), "steady at {reached} s");
    assert_eq!(steady[1], None, "a queue of 1 s in a 100 ms buffer");
    let csv = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "flow1.steady_s").unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows[0][col].parse::<f64>().ok(), Some(reached));
    assert_eq!(rows[1][col], "");
    let json = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    assert_eq!(json.matches("\"steady_s\"").count(), 1, "{json}");
    let without = scenario(
        &text
            .replace("name = \"steady\"\nseeds = 1\n", "")
            .replace("steady_queue = [\"20ms\", \"1s\"]\n", ""),
    );
    assert_eq!(without.steady_queue, None);
    let (s, _) = lbe_lab::sim::simulate(&without).unwrap();
    assert_eq!(s.flows[0].steady_s, None);
    let summary = serde_json::to_string(&s).unwrap();
    assert!(!summary.contains("steady_s"), "{summary}");
}

/// With `[analysis] refill_after`, a sweep's run has `refill_s`: the
/// seconds from then to the end of the first 250 ms bin in which the bulk
/// flows still running (here the first CUBIC, once the second stopped at
/// 4 s) deliver 0.9 of the most goodput the link carries, as
/// `qlog-analysis` reads it off their whole series; in `summary.json`,
/// results.json, results.csv and as the metric `refill_s`. A flow that
/// stops at that time is not running after it: at 6 s none is, so none.
/// Without the key the summary has no `refill_s` at all.
#[test]
fn a_sweep_records_when_the_flows_left_took_the_link_back() {
    let text = r#"
name = "refill"
seeds = 1
[link]
rate = "10mbit"
rtt = "20ms"
buffer = "100ms"
[analysis]
from = "1s"
to = "6s"
refill_after = ["4s", "6s"]
[[flow]]
cc = "cubic"
stop = "6s"
[[flow]]
cc = "cubic"
start = "1s"
stop = "4s"
"#;
    let (dir, sweep, results) = run_sweep_into_out("lbe-sweep-refill", "refill.toml", text);
    let mut refill = Vec::new();
    for (i, r) in results.runs.iter().enumerate() {
        let scenario = sweep.scenario(i).unwrap();
        let (s, a) = lbe_lab::sim::simulate(&scenario).unwrap();
        let after = scenario.refill_after.unwrap().as_secs_f64();
        let level = 0.9 * s.max_goodput_bps.unwrap();
        let first = &a.unwrap().flows[0].series;
        let at = qlog_analysis::flow::FlowSeries::refill_at_s(&[first], after, level);
        let expected = (after < 6.0).then(|| at.unwrap() - after);
        assert_eq!(s.refill_s, expected, "run {i}");
        assert_eq!(r.refill_s, s.refill_s, "run {i}");
        assert_eq!(lbe_lab::sweep::metric(r, "refill_s"), r.refill_s);
        refill.push(r.refill_s);
    }
    let back = refill[0].expect("CUBIC alone fills the link after 4 s");
    assert!((0.25..=2.0).contains(&back), "back {back} s after 4 s");
    assert_eq!(refill[1], None, "no flow runs past 6 s");
    let csv = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "refill_s").unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows[0][col].parse::<f64>().ok(), Some(back));
    assert_eq!(rows[1][col], "");
    let json = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    assert_eq!(json.matches("\"refill_s\"").count(), 1, "{json}");
    let without = scenario(
        &text
            .replace("name = \"refill\"\nseeds = 1\n", "")
            .replace("refill_after = [\"4s\", \"6s\"]\n", ""),
    );
    assert_eq!(without.refill_after, None);
    let (s, _) = lbe_lab::sim::simulate(&without).unwrap();
    assert_eq!(s.refill_s, None);
    let summary = serde_json::to_string(&s).unwrap();
    assert!(!summary.contains("refill_s"), "{summary}");
}

#[test]
fn sweep_files_with_mistakes_are_refused_naming_the_run() {
    let bad = |text: &str| lbe_lab::sweep::parse(Path::new("s.toml"), text).unwrap_err();
    let e = bad(&SWEEP.replace("[\"20ms\", \"80ms\"]", "[\"20ms\", \"0ms\"]"));
    assert!(
        e.starts_with(
            "s.toml: run 4 (flow1.cc=ledbatpp, link.rtt=0ms, seed=1): link rtt must be above zero"
        ),
        "{e}"
    );
    let e = bad(&SWEEP.replace("y = \"utilization\"", "y = \"speed\""));
    assert!(
        e.contains("unknown metric 'speed' (allowed: utilization"),
        "{e}"
    );
    let e = bad(&SWEEP.replace("x = \"link.rtt\"", "x = \"link.rate\""));
    assert!(
        e.contains("x 'link.rate' is not an axis of the sweep (axes: link.rtt, flow1.cc, seed)"),
        "{e}"
    );
    let e = bad(&SWEEP.replace("seeds = 2", "seeds = 0"));
    assert!(e.contains("'seeds' must be a count from 1 to 10000"), "{e}");
    for s in ["3/3", "1", "a/b", "0/0"] {
        let e = s.parse::<lbe_lab::sweep::Shard>().unwrap_err();
        assert!(e.contains("expected I/N with 0 <= I < N"), "{e}");
    }
}
