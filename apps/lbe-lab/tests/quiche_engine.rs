//! The simulator runs quiche itself (`lbe-lab run --sim`): real quiche
//! connections in virtual time (patch 0007) on the lab's link model. It
//! must be deterministic, independent of the host's clock and of whether
//! it writes qlog files, agree with the lab, and run every controller
//! quiche has (`bbr2` too).

use std::path::Path;

use lbe_lab::sim::SimSummary;
use lbe_test_support::scenario_text::named_flow;
use lbe_test_support::scenario_text::window;

const LINK: &str = "seed = 1\n[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n";

fn simulate(text: &str) -> SimSummary {
    let scenario = lbe_lab::scenario::parse(Path::new("test.toml"), text).unwrap();
    lbe_lab::sim::simulate(&scenario).unwrap().0
}

fn solo(cc: &str) -> String {
    format!(
        "{LINK}[analysis]\nfrom = \"10s\"\nto = \"30s\"\n[[flow]]\ncc = \"{cc}\"\nstop = \"30s\"\nname = \"solo\"\n"
    )
}

fn queue_mean_ms(s: &SimSummary) -> f64 {
    s.flows[0].figures.queuing_delay_ms.mean.unwrap()
}

/// The same scenario and seed give a byte-identical summary: quiche's
/// clock and its own random choices (skipped packet numbers) are the
/// run's, and TLS's randomness never changes a datagram's size.
#[test]
fn the_same_seed_gives_the_same_summary() {
    let text = solo("ledbatpp");
    let a = serde_json::to_string(&simulate(&text)).unwrap();
    let b = serde_json::to_string(&simulate(&text)).unwrap();
    assert_eq!(a, b);
}

/// Writing the qlog files (`--qlog`) does not change the run: the figures
/// come from quiche's events handed over as values either way, and the
/// files are what quiche writes of the same events. An earlier build gave the draft 0.141 of the link beside
/// bbr2 with `--qlog` and 0.338 without (docs/lbe-vs-bbr.md); two flows of
/// two recoveries (ours through the plug-in, quiche's bbr2) check it here.
#[test]
fn writing_the_qlog_files_does_not_change_the_run() {
    let text = LINK.to_string()
        + &window("5s", "12s")
        + &named_flow("lbe", "ledbatpp", "0s", "12s")
        + &named_flow("bbr2", "bbr2", "3s", "12s");
    let scenario = lbe_lab::scenario::parse(Path::new("test.toml"), &text).unwrap();
    let scratch = lbe_test_support::Scratch::new("lbe-sim-qlog");
    let qlog_dir = scratch.join("qlog");
    let (mut with_files, _) = lbe_lab::sim::simulate_into(&scenario, Some(&qlog_dir)).unwrap();
    let (without, _) = lbe_lab::sim::simulate(&scenario).unwrap();
    for flow in &mut with_files.flows {
        let name = flow.qlog.take().expect("a qlog file per flow");
        let written = std::fs::metadata(scratch.join(&name)).unwrap().len();
        assert!(written > 100_000, "{name}: {written} bytes");
    }
    assert_eq!(
        serde_json::to_string(&with_files).unwrap(),
        serde_json::to_string(&without).unwrap()
    );
}

/// The qlog files read back by qlog-analysis give the run's own figures,
/// each trace in its place on the run's clock, and two runs write the same
/// bytes. quiche writes the header's wall-clock time from the host's clock;
/// the simulator puts the simulation's there (its start is the Unix epoch).
/// Before, a flow that started at 15 s was read back as starting at 1.17 s
/// (the host's milliseconds between creating the two connections), and
/// every file differed from run to run.
#[test]
fn the_qlog_files_read_back_to_the_runs_figures() {
    let text = LINK.to_string()
        + &window("4s", "10s")
        + &named_flow("first", "cubic", "0s", "10s")
        + &named_flow("late", "ledbatpp", "3s", "10s");
    let scenario = lbe_lab::scenario::parse(Path::new("test.toml"), &text).unwrap();
    let scratch = lbe_test_support::Scratch::new("lbe-sim-qlog-read-back");
    let run = |dir: &str| {
        let (s, _) =
            lbe_lab::sim::simulate_into(&scenario, Some(&scratch.join(dir).join("qlog"))).unwrap();
        let files: Vec<_> = s
            .flows
            .iter()
            .map(|f| scratch.join(dir).join(f.qlog.as_ref().unwrap()))
            .collect();
        (s, files)
    };
    let (s, files) = run("a");
    let (_, again) = run("b");
    for (a, b) in files.iter().zip(&again) {
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{}",
            a.display()
        );
    }
    let options = qlog_analysis::Options {
        from_s: Some(4.0),
        to_s: Some(10.0),
        link_rate_bps: Some(20e6),
        time_base: qlog_analysis::TimeBase::WallClock(std::time::UNIX_EPOCH),
        ..qlog_analysis::Options::default()
    };
    let inputs = || {
        files
            .iter()
            .map(|f| qlog_analysis::FlowInput::new(f.clone()))
    };
    let analysis = qlog_analysis::analyze(inputs(), &options).unwrap();
    assert_eq!(analysis.flows.len(), 2);
    for (i, sim) in s.flows.iter().enumerate() {
        let file = &analysis.flows[i].summary;
        assert_eq!(file.bytes, sim.figures.bytes, "{}", sim.name);
        assert_eq!(file.lost_packets, sim.figures.lost_packets, "{}", sim.name);
        // The server's trace starts when the client's first datagram
        // reaches it: half the 50 ms RTT after the flow's start.
        let start = analysis.flows[i].start_s;
        assert!(
            (start - sim.start_s - 0.025).abs() < 0.001,
            "{}: {start}",
            sim.name
        );
    }
    // Without being told the run's clock: traces line up by their headers.
    let earliest = qlog_analysis::analyze(inputs(), &qlog_analysis::Options::default()).unwrap();
    let late = earliest.flows[1].start_s - earliest.flows[0].start_s;
    assert!((late - 3.0).abs() < 0.001, "late by {late} s");
}

/// LEDBAT++ alone, 20 Mbit/s, 50 ms (seed 1): 0.877 of the link with a
/// 57.2 ms queue, reading the one-way delay (`delay=auto`: the endpoints
/// offer timestamps). The lab measured 0.880 (`ledbatpp-solo-rtt50`,
/// docs/fidelity.md, whose tolerance is ±0.03); the re-stated engine this
/// simulator had before measured 0.878 and 56.8 ms.
#[test]
fn ledbatpp_alone_fills_the_link_as_in_the_lab() {
    let s = simulate(&solo("ledbatpp"));
    let u = s.utilization.unwrap();
    assert!((u - 0.880).abs() < 0.03, "utilisation {u} (lab 0.880)");
    // The draft's 60 ms target, less the base delay's filter.
    let q = queue_mean_ms(&s);
    assert!((45.0..65.0).contains(&q), "queue {q} ms");
}

/// quiche's bbr2 (gcongestion recovery, its own pacer) runs: alone it
/// fills the link (0.940) and keeps the queue below LEDBAT++'s target
/// (45 ms measured).
#[test]
fn bbr2_runs_in_the_simulator() {
    let text = solo("bbr2");
    let s = simulate(&text);
    let u = s.utilization.unwrap();
    assert!(u > 0.9, "bbr2 alone: utilisation {u}");
    assert!(
        queue_mean_ms(&s) < 60.0,
        "bbr2 alone: queue {} ms",
        queue_mean_ms(&s)
    );
}

/// LEDBAT++ yields to a CUBIC flow started 5 s after it: its share of
/// the two was 0.0019 (seed 1), on the one-way delay too.
#[test]
fn ledbatpp_yields_to_cubic() {
    let text = format!(
        "{LINK}[analysis]\nfrom = \"15s\"\nto = \"40s\"\n\
         [[flow]]\ncc = \"ledbatpp\"\nstop = \"40s\"\nname = \"lbe\"\n\
         [[flow]]\ncc = \"cubic\"\nstart = \"5s\"\nstop = \"40s\"\nname = \"cubic\"\n"
    );
    let s = simulate(&text);
    let g: Vec<f64> = s.flows.iter().map(|f| f.figures.goodput_bps).collect();
    let share = g[0] / (g[0] + g[1]);
    assert!(share < 0.01, "LEDBAT++'s share beside CUBIC: {share}");
    assert!(s.utilization.unwrap() > 0.9);
}

/// summary.json's `transfer` counts the timeouts of loss detection:
/// quiche's own count (`PathStats::total_pto_count`, which includes the
/// time-threshold timeouts: an upper bound on its PTOs). CUBIC for 10 s at
/// 50 % random loss, 200 ms: the window stays at its minimum and whole
/// flights are lost. The count is over the whole run, the flow's data
/// after its stop included: 43 while the writer took whatever quiche
/// offered and the stream held seconds of data at the stop; 33 since it
/// keeps about one window unsent (`lbe_endpoint::write_budget`) and stops
/// its 10 s after its first write, as quic-bulk does (24 when it stopped
/// at 10 s: at 50 % loss the handshake and the request take seconds); 32
/// since both ends run quic-bulk's own sessions (`lbe_bulk`: its request
/// line instead of one byte, its FIN with a last byte, its close after
/// the report).
/// (The re-stated engine this simulator had before counted 11 probe
/// timeouts among 25 timeouts here.)
#[test]
fn the_transfer_counts_loss_detection_timeouts() {
    let text = "seed = 1\n[link]\nrate = \"20mbit\"\nrtt = \"200ms\"\nbuffer = \"500ms\"\nloss = 0.5\n\
                [analysis]\nfrom = \"0s\"\nto = \"10s\"\n[[flow]]\ncc = \"cubic\"\nstop = \"10s\"\n";
    let summary = serde_json::to_value(simulate(text)).unwrap();
    assert_eq!(summary["engine"], "quiche");
    let t = &summary["flows"][0]["transfer"];
    assert_eq!(t.get("probe_timeouts"), None, "{t}");
    assert_eq!(t["loss_detection_timeouts"], 32, "{t}");
}
