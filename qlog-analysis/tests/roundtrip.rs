//! Traces written with the `qlog` crate's own streamer (the code quiche
//! writes with) read back with the figures the writer knows to be true.

use qlog_analysis::synth::{epoch_plus, write_sender, write_sender_file, SynthFlow};
use qlog_analysis::{analyze, Options, Role};

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("qa-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn streamer_roundtrip_matches_truth() {
    let dir = tmpdir("roundtrip");
    let path = dir.join("7-server-ledbatpp.sqlog");
    let flow = SynthFlow {
        rate_bps: 4e6,
        duration_s: 12.0,
        loss_every: 97,
        slowdown_every_s: 4.0,
        wall_clock: Some(epoch_plus(0.0)),
        ..Default::default()
    };
    let truth = write_sender_file(&flow, &path).unwrap();
    assert!(truth.packets_lost > 0 && truth.slowdowns == 2, "{truth:?}");

    // Whole trace.
    let a = analyze(
        [&path],
        &Options {
            series_resolution_s: 0.0,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    let f = &a.flows[0];
    assert_eq!(f.role, Role::Server);
    assert_eq!(f.total_bytes, truth.bytes_acked);
    assert_eq!(f.lost_packets_total, truth.packets_lost);
    assert_eq!(f.rtt_samples, truth.rtt_samples);
    assert_eq!(f.slowdowns, truth.slowdowns);
    assert!(
        (f.base_rtt_ms.unwrap() - truth.min_rtt_ms).abs() < 1e-3,
        "{:?} vs {}",
        f.base_rtt_ms,
        truth.min_rtt_ms
    );
    // Retransmitted bytes are sent twice but count once.
    assert_eq!(f.retransmitted_bytes, truth.packets_lost * flow.payload);

    // Windows of whole seconds agree with the writer's per-second counts.
    for (from, to) in [(2usize, 5usize), (5, 11), (0, 12)] {
        let opts = Options {
            from_s: Some(from as f64),
            to_s: Some(to as f64),
            ..Options::default()
        };
        let a = analyze([&path], &opts).unwrap();
        let expect: u64 = truth.bytes_acked_per_s[from..to.min(truth.bytes_acked_per_s.len())]
            .iter()
            .sum();
        let f = &a.flows[0];
        assert_eq!(f.summary.bytes, expect, "window {from}..{to}");
        let gp = expect as f64 * 8.0 / (to - from) as f64;
        assert!((f.summary.goodput_bps - gp).abs() < 1e-6);
        // The sender is paced at 4 Mbit/s of payload, minus lost packets.
        if from >= 2 && to <= 11 {
            let ratio = f.summary.goodput_bps / flow.rate_bps;
            assert!(ratio > 0.97 && ratio < 1.03, "ratio {ratio}");
        }
        // RTT: the sawtooth spans base..base+queue.
        let r = f.summary.rtt_ms;
        assert!(
            r.min.unwrap() >= 40.0 - 1e-3 && r.p99.unwrap() <= 60.0 + 0.1,
            "{r:?}"
        );
        // Over whole sawtooth periods (2 s) the mean queuing delay is half the peak.
        let q = f.summary.queuing_delay_ms;
        if (to - from) % 2 == 0 {
            assert!((q.mean.unwrap() - 10.0).abs() < 1.0, "{q:?}");
        }
        assert!(q.p95.unwrap() > 15.0 && q.p95.unwrap() <= 20.1, "{q:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn streamer_in_memory_and_plain_json() {
    // Write into memory, then wrap the same events as plain JSON traces[].
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let flow = SynthFlow {
        duration_s: 3.0,
        loss_every: 50,
        server: false,
        ..Default::default()
    };
    let truth = write_sender(&flow, Box::new(Shared(buf.clone()))).unwrap();
    let bytes = buf.lock().unwrap().clone();

    let dir = tmpdir("inmem");
    let seq = dir.join("a.sqlog");
    std::fs::write(&seq, &bytes).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let mut records = text.split('\u{1e}').filter(|r| !r.trim().is_empty());
    let header: serde_json::Value = serde_json::from_str(records.next().unwrap()).unwrap();
    let events: Vec<serde_json::Value> =
        records.map(|r| serde_json::from_str(r).unwrap()).collect();
    let mut trace = header["trace"].clone();
    trace["events"] = serde_json::Value::Array(events);
    let doc = serde_json::json!({"file_schema": "urn:ietf:params:qlog:file:contained", "traces": [trace]});
    let json = dir.join("a.qlog");
    std::fs::write(&json, serde_json::to_string_pretty(&doc).unwrap()).unwrap();

    let a = analyze([&seq], &Options::default()).unwrap();
    let b = analyze([&json], &Options::default()).unwrap();
    assert_eq!(a.flows[0].total_bytes, truth.bytes_acked);
    assert_eq!(a.flows[0].role, Role::Client);
    assert_eq!(a.flows[0].summary, b.flows[0].summary);
    assert_eq!(b.flows[0].lost_packets_total, truth.packets_lost);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_flows_lined_up_by_wall_clock() {
    let dir = tmpdir("twoflows");
    let a_path = dir.join("1-server-ledbatpp.sqlog");
    let b_path = dir.join("2-server-cubic.sqlog");
    let ta = write_sender_file(
        &SynthFlow {
            rate_bps: 2e6,
            duration_s: 8.0,
            wall_clock: Some(epoch_plus(0.0)),
            ..Default::default()
        },
        &a_path,
    )
    .unwrap();
    write_sender_file(
        &SynthFlow {
            rate_bps: 6e6,
            duration_s: 4.0,
            wall_clock: Some(epoch_plus(3.0)),
            ..Default::default()
        },
        &b_path,
    )
    .unwrap();
    let opts = Options {
        from_s: Some(3.5),
        to_s: Some(6.5),
        link_rate_bps: Some(10e6),
        ..Options::default()
    };
    let a = analyze([&a_path, &b_path], &opts).unwrap();
    assert!((a.flows[1].start_s - 3.0).abs() < 1e-9);
    let expect_a: u64 = ta.bytes_acked_per_s[3..7].iter().sum::<u64>();
    // Flow a delivers at 2 Mbit/s, flow b at 6: shares 1/4, 3/4, utilisation 0.8.
    let ga = a.flows[0].summary.goodput_bps;
    let gb = a.flows[1].summary.goodput_bps;
    assert!(
        (ga / 2e6 - 1.0).abs() < 0.03 && (gb / 6e6 - 1.0).abs() < 0.03,
        "{ga} {gb}"
    );
    assert!((a.utilization.unwrap() - 0.8).abs() < 0.03);
    assert!(a.flows[0].summary.bytes < expect_a);
    let j = a.jain_index.unwrap();
    let expect_j = 64.0 / (2.0 * (4.0 + 36.0));
    assert!((j - expect_j).abs() < 0.02, "{j} vs {expect_j}");
    std::fs::remove_dir_all(&dir).ok();
}
