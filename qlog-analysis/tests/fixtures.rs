//! Hand-written qlog fixtures whose figures are known exactly.
//!
//! `flow-a-server-ledbatpp.sqlog` (times in ms on the trace's clock):
//!
//! | t     | event                                                             |
//! |-------|-------------------------------------------------------------------|
//! | 0     | state slow_start; send pn0 [0,1000), pn1 [1000,2000) of stream 0  |
//! | 100   | ACK 0-1 → 2000 B delivered; RTT 100                               |
//! | 1000  | send pn2 [2000,3000), pn3 [3000,4000); state congestion_avoidance |
//! | 1100  | ACK 3 → 1000 B; RTT 150                                           |
//! | 1200  | pn2 lost; send pn4 [2000,3000) (retransmission), pn5 [3000,5000)  |
//! | 1300  | ACK 0-1,3-5 → 2000 B new (2000..3000, 4000..5000); RTT 100        |
//! | 2000  | slowdown, 2200 ramp_up, 2400 congestion_avoidance                 |
//! | 3000  | slowdown, 3100 ramp_up, 3500 congestion_avoidance                 |
//! | 4000  | send pn6 [5000,8000); 4200 ACK 6 → 3000 B; RTT 200                |
//! | 5000  | last event (cwnd update)                                          |
//!
//! Delivered: 8000 B, of which 6000 B in [1 s, 5 s). Sent 10000 stream
//! bytes, 2000 of them twice.

use std::path::PathBuf;

use qlog_analysis::{analyze, FlowInput, GoodputMethod, Options, Role};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {
        assert_close!($a, $b, 1e-9)
    };
    ($a:expr, $b:expr, $tol:expr) => {{
        let (a, b) = ($a, $b);
        assert!(
            close(a, b, $tol),
            "{} = {a}, expected {b} (±{})",
            stringify!($a),
            $tol
        );
    }};
}

fn window(from: f64, to: f64) -> Options {
    Options {
        from_s: Some(from),
        to_s: Some(to),
        ..Options::default()
    }
}

#[test]
fn flow_a_goodput_in_window() {
    let a = analyze([fixture("flow-a-server-ledbatpp.sqlog")], &window(1.0, 5.0)).unwrap();
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    let f = &a.flows[0];
    assert_eq!(f.goodput_method, GoodputMethod::AckedSent);
    assert_eq!(f.summary.bytes, 6000);
    assert_close!(f.summary.goodput_bps, 6000.0 * 8.0 / 4.0);
    assert_eq!(f.total_bytes, 8000);
    assert_eq!(f.stream_bytes_sent, 10_000);
    assert_eq!(f.retransmitted_bytes, 2000);
    assert_eq!(f.role, Role::Server);
    assert_eq!(f.cc.as_deref(), Some("ledbatpp"));
    assert_eq!(f.flow.as_deref(), Some("flow-a"));
    assert_eq!(f.label, "ledbatpp");
    assert_eq!(f.target_ms, Some(60.0));
}

#[test]
fn flow_a_whole_trace_by_default() {
    let a = analyze(
        [fixture("flow-a-server-ledbatpp.sqlog")],
        &Options::default(),
    )
    .unwrap();
    let f = &a.flows[0];
    // Window: first event (0 s) to last delivery (4.2 s).
    assert_close!(a.window.from_s, 0.0);
    assert_close!(a.window.to_s, 4.2);
    assert_eq!(f.summary.bytes, 8000);
    assert_close!(f.summary.goodput_bps, 8000.0 * 8.0 / 4.2, 1e-6);
    assert_close!(f.start_s, 0.0);
    assert_close!(f.end_s, 4.2);
    assert_close!(f.last_event_s, 5.0);
    assert_eq!(f.rtt_samples, 4);
    assert_eq!(f.lost_packets_total, 1);
    assert_eq!(f.summary.lost_packets, 1);
}

#[test]
fn flow_a_rtt_and_queuing_delay() {
    let a = analyze([fixture("flow-a-server-ledbatpp.sqlog")], &window(1.0, 5.0)).unwrap();
    let f = &a.flows[0];
    // Samples in [1, 5): 150, 100, 200 ms; base RTT over the trace: 100 ms.
    let r = f.summary.rtt_ms;
    assert_close!(r.min.unwrap(), 100.0);
    assert_close!(r.mean.unwrap(), 150.0);
    // Percentiles from an HDR histogram with 3 significant digits.
    assert_close!(r.p50.unwrap(), 150.0, 0.15);
    assert_close!(r.p95.unwrap(), 200.0, 0.2);
    assert_close!(r.p99.unwrap(), 200.0, 0.2);
    assert_eq!(f.base_rtt_ms, Some(100.0));
    let q = f.summary.queuing_delay_ms;
    assert_close!(q.mean.unwrap(), 50.0);
    assert_close!(q.p95.unwrap(), 100.0, 0.2);
    assert_eq!(f.summary.lost_packets, 1);
    // Series: one point per sample, RTT above base = RTT - 100.
    let qd: Vec<f64> = f.series.rtt_above_base_ms.iter().map(|p| p.1).collect();
    assert_eq!(qd, vec![0.0, 50.0, 0.0, 100.0]);
    assert_eq!(
        f.series.cwnd_bytes,
        vec![(0.1, 20000.0), (1.3, 10000.0), (5.0, 12000.0)]
    );
    assert_eq!(f.series.bytes_in_flight.len(), 4);
}

#[test]
fn profile_full_phases_are_states_of_their_own() {
    // flow-a's trace with its three spells of congestion avoidance named
    // as profile=full names them: filling from 1 s, yielded from 2.4 s,
    // quiet from 3.5 s.
    let a = analyze(
        [fixture("flow-full-server-ledbatpp.sqlog")],
        &window(0.0, 5.0),
    )
    .unwrap();
    let f = &a.flows[0];
    let t = |s: &str| f.state_time_s.get(s).copied().unwrap_or(0.0);
    assert_close!(t("slow_start"), 1.0, 1e-9);
    assert_close!(t("filling"), 1.0, 1e-9);
    assert_close!(t("yielded"), 0.6, 1e-9);
    assert_close!(t("quiet"), 1.5, 1e-9);
    assert_close!(t("congestion_avoidance"), 0.0, 1e-9);
    assert_close!(f.state_time_s.values().sum::<f64>(), 5.0, 1e-9);
    assert_eq!(f.slowdowns, 2);
    for s in ["filling", "yielded", "quiet"] {
        assert_eq!(f.state_entries.get(s), Some(&1), "{s}");
    }
}

#[test]
fn flow_a_state_durations_and_slowdowns() {
    // The whole trace: states run until the last event (5 s).
    let a = analyze([fixture("flow-a-server-ledbatpp.sqlog")], &window(0.0, 5.0)).unwrap();
    let f = &a.flows[0];
    let t = |s: &str| f.state_time_s.get(s).copied().unwrap_or(0.0);
    assert_close!(t("slow_start"), 1.0, 1e-9);
    assert_close!(t("congestion_avoidance"), 1.0 + 0.6 + 1.5, 1e-9);
    assert_close!(t("slowdown"), 0.2 + 0.1, 1e-9);
    assert_close!(t("ramp_up"), 0.2 + 0.4, 1e-9);
    assert_close!(f.state_time_s.values().sum::<f64>(), 5.0, 1e-9);
    assert_eq!(f.slowdowns, 2);
    assert_eq!(f.state_entries.get("ramp_up"), Some(&2));
    assert_eq!(f.series.states.len(), 8);

    // A window that cuts intervals: [2.1, 3.05).
    let a = analyze(
        [fixture("flow-a-server-ledbatpp.sqlog")],
        &window(2.1, 3.05),
    )
    .unwrap();
    let f = &a.flows[0];
    let t = |s: &str| f.state_time_s.get(s).copied().unwrap_or(0.0);
    assert_close!(t("slowdown"), 0.1 + 0.05, 1e-9);
    assert_close!(t("ramp_up"), 0.2, 1e-9);
    assert_close!(t("congestion_avoidance"), 0.6, 1e-9);
    // Only the slowdown that starts inside the window is an entry.
    assert_eq!(f.slowdowns, 1);
}

#[test]
fn plain_json_gives_the_same_figures() {
    let seq = analyze([fixture("flow-a-server-ledbatpp.sqlog")], &window(1.0, 5.0)).unwrap();
    let json = analyze([fixture("flow-a-server-ledbatpp.qlog")], &window(1.0, 5.0)).unwrap();
    let (s, j) = (&seq.flows[0], &json.flows[0]);
    assert_eq!(s.summary, j.summary);
    assert_eq!(s.state_time_s, j.state_time_s);
    assert_eq!(s.slowdowns, j.slowdowns);
    assert_eq!(j.role, Role::Server);
}

fn jain_inputs() -> Vec<PathBuf> {
    [
        "jain-1-server-cubic.sqlog",
        "jain-2-server-ledbatpp.sqlog",
        "jain-3-server-cubic.sqlog",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect()
}

#[test]
fn jain_of_known_shares() {
    let opts = Options {
        link_rate_bps: Some(64_000.0),
        ..window(0.0, 10.0)
    };
    let a = analyze(jain_inputs(), &opts).unwrap();
    let g: Vec<f64> = a.flows.iter().map(|f| f.summary.goodput_bps).collect();
    assert_eq!(g, vec![24_000.0, 8_000.0, 3_200.0]);
    // Flow 3 starts 5 s late (wall clock), so only 1 and 2 are in Jain's index:
    // (24000 + 8000)² / (2 · (24000² + 8000²)) = 0.8.
    assert_close!(a.flows[2].start_s, 5.0);
    assert_close!(a.flows[2].end_s, 9.5);
    assert_eq!(a.jain_flows, vec![0, 1]);
    assert_close!(a.jain_index.unwrap(), 0.8, 1e-12);
    assert_close!(a.total_goodput_bps, 35_200.0);
    assert_close!(a.utilization.unwrap(), 35_200.0 / 64_000.0, 1e-12);
    assert_close!(a.flows[0].share.unwrap(), 24_000.0 / 35_200.0, 1e-12);
    assert_close!(a.flows[2].share.unwrap(), 3_200.0 / 35_200.0, 1e-12);
    assert!(!a.flows[2].active_whole_window);
    // Labels: controller names, made unique with the flow id.
    let labels: Vec<&str> = a.flows.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(labels, vec!["cubic [jain-1]", "ledbatpp", "cubic [jain-3]"]);
}

#[test]
fn jain_helper() {
    assert_eq!(qlog_analysis::jain_index(&[]), None);
    assert_eq!(qlog_analysis::jain_index(&[0.0, 0.0]), None);
    assert_close!(qlog_analysis::jain_index(&[5.0, 5.0, 5.0]).unwrap(), 1.0);
    assert_close!(
        qlog_analysis::jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap(),
        0.25
    );
}

#[test]
fn time_base_options() {
    use qlog_analysis::TimeBase;
    // Each trace on its own clock: flow 3 then starts at 0.
    let opts = Options {
        time_base: TimeBase::TraceStart,
        ..window(0.0, 10.0)
    };
    let a = analyze(jain_inputs(), &opts).unwrap();
    assert_close!(a.flows[2].start_s, 0.0);
    // An explicit wall-clock zero 1 s before the first trace.
    let zero = qlog_analysis::reader::parse_wall_clock("2025-12-31T23:59:59Z").unwrap();
    let opts = Options {
        time_base: TimeBase::WallClock(zero),
        ..window(0.0, 11.0)
    };
    let a = analyze(jain_inputs(), &opts).unwrap();
    assert_close!(a.flows[0].start_s, 1.0, 1e-9);
    assert_close!(a.flows[2].start_s, 6.0, 1e-9);
    // A per-file offset overrides the time base.
    let inputs = vec![FlowInput::new(fixture("jain-2-server-ledbatpp.sqlog"))
        .offset_s(2.5)
        .label("late")];
    let a = analyze(inputs, &Options::default()).unwrap();
    assert_close!(a.flows[0].start_s, 2.5);
    assert_eq!(a.flows[0].label, "late");
}

#[test]
fn receiver_side_trace() {
    let a = analyze([fixture("jain-1-client-cubic.sqlog")], &window(0.0, 10.0)).unwrap();
    let f = &a.flows[0];
    assert_eq!(f.role, Role::Client);
    assert_eq!(f.goodput_method, GoodputMethod::Received);
    // 15000 + 15000 unique bytes; the repeated frame adds nothing.
    assert_eq!(f.summary.bytes, 30_000);
    // Next to the sender's trace, only the sender is kept for plots.
    let a = analyze(
        [
            fixture("jain-1-client-cubic.sqlog"),
            fixture("jain-1-server-cubic.sqlog"),
        ],
        &window(0.0, 10.0),
    )
    .unwrap();
    assert_eq!(a.sender_indices(), vec![1]);
    let mut a = a;
    a.retain_flows(&[1]);
    assert_eq!(a.flows.len(), 1);
    assert_eq!(a.flows[0].role, Role::Server);
    assert_close!(a.flows[0].share.unwrap(), 1.0);
}

#[test]
fn header_only_file_is_an_idle_flow() {
    let a = analyze([fixture("header-only.sqlog")], &Options::default()).unwrap();
    let f = &a.flows[0];
    assert_eq!(f.summary.bytes, 0);
    assert_eq!(f.summary.rtt_ms.mean, None);
    assert_eq!(f.goodput_method, GoodputMethod::None);
    assert_eq!(a.jain_index, None);
}

#[test]
fn summary_json_parts_have_the_schema_keys() {
    let a = analyze([fixture("flow-a-server-ledbatpp.sqlog")], &window(1.0, 5.0)).unwrap();
    let v = serde_json::to_value(&a.flows[0].summary).unwrap();
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        [
            "bytes",
            "goodput_bps",
            "lost_packets",
            "queuing_delay_ms",
            "rtt_ms"
        ]
    );
    assert_eq!(keys(&v["rtt_ms"]), ["mean", "min", "p50", "p95", "p99"]);
    assert_eq!(keys(&v["queuing_delay_ms"]), ["mean", "p95"]);
    // The whole analysis serialises with the aggregate keys too.
    let all = serde_json::to_value(&a).unwrap();
    assert!(all.get("utilization").is_some() && all.get("jain_index").is_some());
    assert_eq!(all["flows"][0]["bytes"], 6000);
}

#[test]
fn summary_parts_for_lbe_lab() {
    let opts = Options {
        link_rate_bps: Some(64_000.0),
        ..window(0.0, 10.0)
    };
    let p = qlog_analysis::summary_parts(jain_inputs(), &opts).unwrap();
    assert_eq!(p.flows.len(), 3);
    assert_eq!(p.flows[1].bytes, 10_000);
    assert_close!(p.jain_index.unwrap(), 0.8, 1e-12);
    assert_close!(p.utilization.unwrap(), 0.55, 1e-12);
    assert_eq!(
        p.window,
        qlog_analysis::Window {
            from_s: 0.0,
            to_s: 10.0
        }
    );
}

#[test]
fn max_goodput_from_the_runs_own_datagrams() {
    let opts = Options {
        link_rate_bps: Some(64_000.0),
        ..window(1.0, 5.0)
    };
    let a = analyze([fixture("flow-a-server-ledbatpp.sqlog")], &opts).unwrap();
    // Seven 1-RTT packets carried stream data: 7 × 1252 bytes of UDP
    // payload, 5 × 1000 + 2000 + 3000 stream bytes (a hand-written trace:
    // more stream bytes than packet bytes, which only makes the figure
    // easy to check).
    let d = a.flows[0].data_datagrams;
    assert_eq!(
        (d.count, d.udp_payload_bytes, d.stream_bytes),
        (7, 8_764, 10_000)
    );
    // Default overhead: IPv4 + UDP, 28 bytes a datagram.
    let max = 64_000.0 * 10_000.0 / (8_764.0 + 7.0 * 28.0);
    assert_close!(a.max_goodput_bps.unwrap(), max, 1e-9);
    assert_close!(
        a.utilization_of_max.unwrap(),
        a.total_goodput_bps / max,
        1e-12
    );
    let v6 = analyze(
        [fixture("flow-a-server-ledbatpp.sqlog")],
        &Options {
            datagram_overhead_bytes: 48,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_close!(
        v6.max_goodput_bps.unwrap(),
        64_000.0 * 10_000.0 / (8_764.0 + 7.0 * 48.0),
        1e-9
    );
    // Without a link rate there is no maximum.
    let none = analyze([fixture("flow-a-server-ledbatpp.sqlog")], &window(1.0, 5.0)).unwrap();
    assert_eq!(
        (none.max_goodput_bps, none.utilization_of_max),
        (None, None)
    );
}
