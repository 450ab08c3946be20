//! Fixtures from real QUIC implementations (tests/fixtures/stacks/, written
//! by scripts/qlog-fixtures.sh): each figure against the implementation's
//! own count in the `counts.json` beside the traces.
//!
//! | stack   | dialect                                              | controller from   |
//! |---------|------------------------------------------------------|-------------------|
//! | quic-go | JSON-SEQ, quic-14 header, 0.3 event names            | producer (cubic)  |
//! | aioquic | JSON `traces[]`, 0.3, absolute epoch times, `cwnd`   | unknown           |
//! | quiche  | JSON-SEQ, -13 `quic:` names (our quic-bulk)          | file name         |
//! | quiche 0.17 | JSON-SEQ, qlog 0.3 (`transport:`, `recovery:`), no `packet_lost` | file name |

use std::collections::BTreeMap;
use std::path::PathBuf;

use qlog_analysis::flow::GoodputMethod;
use qlog_analysis::plot::{self, PlotOptions};
use qlog_analysis::{analyze, report, FlowAnalysis, Options, Role};
use serde_json::Value;

fn stack_dir(stack: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/stacks")
        .join(stack)
}

fn counts(stack: &str) -> Value {
    let text = std::fs::read_to_string(stack_dir(stack).join("counts.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn trace(stack: &str, role: &str) -> PathBuf {
    stack_dir(stack).join(counts(stack)[role]["qlog"].as_str().unwrap())
}

fn count(c: &Value, role: &str, key: &str) -> u64 {
    c[role][key]
        .as_u64()
        .unwrap_or_else(|| panic!("counts.json: {role}.{key}"))
}

/// One trace alone, its whole length.
fn flow(stack: &str, role: &str) -> FlowAnalysis {
    let a = analyze([trace(stack, role)], &Options::default()).unwrap();
    assert_eq!(a.flows.len(), 1);
    // Nothing in these files is skipped: every warning would be a reader bug.
    assert!(a.warnings.is_empty(), "{stack} {role}: {:?}", a.warnings);
    a.flows.into_iter().next().unwrap()
}

fn payload(c: &Value) -> BTreeMap<u64, u64> {
    BTreeMap::from([(0, c["stream_bytes"].as_u64().unwrap())])
}

#[test]
fn quic_go_sender_and_receiver_match_quic_go_counts() {
    let c = counts("quic-go");
    let s = flow("quic-go", "server");
    assert_eq!(s.role, Role::Server);
    assert_eq!(s.producer.as_deref(), Some("quic-go"));
    assert_eq!(s.cc.as_deref(), Some("cubic"));
    assert_eq!(s.goodput_method, GoodputMethod::AckedSent);
    assert_eq!(s.stream_bytes, payload(&c));
    assert_eq!(s.packets_sent, count(&c, "server", "packets_sent"));
    assert_eq!(s.lost_packets_total, count(&c, "server", "packets_lost"));

    let r = flow("quic-go", "client");
    assert_eq!(r.role, Role::Client);
    // The receiver's view of the download shows the download.
    assert_eq!(r.goodput_method, GoodputMethod::Received);
    assert_eq!(r.stream_bytes, payload(&c));
    assert_eq!(r.total_bytes, count(&c, "client", "stream_bytes"));
    // quic-go counts the packets its sent-packet handler tracks
    // (internal/ackhandler/sent_packet_handler.go); the client's last packet,
    // its CONNECTION_CLOSE, is sent outside it and logged all the same.
    assert_eq!(r.packets_sent, count(&c, "client", "packets_sent") + 1);
    assert_eq!(r.lost_packets_total, count(&c, "client", "packets_lost"));
}

#[test]
fn aioquic_sender_and_receiver_match_aioquic_counts() {
    let c = counts("aioquic");
    let s = flow("aioquic", "server");
    // The vantage point comes after the events in aioquic's JSON.
    assert_eq!(s.role, Role::Server);
    assert_eq!(s.producer.as_deref(), Some("aioquic"));
    assert_eq!(s.cc, None);
    assert_eq!(s.label, "aioquic (cc unknown)");
    assert_eq!(s.goodput_method, GoodputMethod::AckedSent);
    assert_eq!(s.stream_bytes, payload(&c));
    assert_eq!(s.packets_sent, count(&c, "server", "packets_sent"));
    assert_eq!(s.lost_packets_total, count(&c, "server", "packets_lost"));
    // `cwnd` is aioquic's name for the congestion window.
    assert!(!s.series.cwnd_bytes.is_empty());
    // Absolute epoch times become times since the trace's first event.
    assert!(
        s.start_s >= 0.0 && s.last_event_s < 10.0,
        "{} {}",
        s.start_s,
        s.last_event_s
    );

    let r = flow("aioquic", "client");
    assert_eq!(r.role, Role::Client);
    assert_eq!(r.goodput_method, GoodputMethod::Received);
    assert_eq!(r.stream_bytes, payload(&c));
    assert_eq!(r.total_bytes, count(&c, "client", "stream_bytes"));
    assert_eq!(r.packets_sent, count(&c, "client", "packets_sent"));
    assert_eq!(r.lost_packets_total, count(&c, "client", "packets_lost"));
}

#[test]
fn quiche_sender_and_receiver_match_quic_bulk_counts() {
    let c = counts("quiche");
    let s = flow("quiche", "server");
    assert_eq!(s.role, Role::Server);
    assert_eq!(s.cc.as_deref(), Some("ledbatpp"));
    assert_eq!(s.goodput_method, GoodputMethod::AckedSent);
    assert_eq!(s.stream_bytes.get(&0), payload(&c).get(&0));
    assert_eq!(s.lost_packets_total, count(&c, "server", "packets_lost"));

    let r = flow("quiche", "client");
    assert_eq!(r.role, Role::Client);
    assert_eq!(r.goodput_method, GoodputMethod::Received);
    // Stream 0 is the payload quic-bulk counts; stream 4 carries its
    // figures line.
    assert_eq!(r.stream_bytes.get(&0), payload(&c).get(&0));
    assert_eq!(
        r.stream_bytes.keys().copied().collect::<Vec<_>>(),
        vec![0, 4]
    );
    // The receiver's datagrams that brought stream data are its framing
    // figure (for the largest goodput a link carries): here, with no loss,
    // the very datagrams the sender sent with stream data.
    let d = r.data_datagrams;
    assert_eq!(
        (d.count, d.udp_payload_bytes, d.stream_bytes),
        (91, 104_372, 100_168)
    );
    assert_eq!(s.data_datagrams, r.data_datagrams);
}

#[test]
fn quiche_0_17_sender_and_receiver_match_its_counts() {
    let c = counts("quiche-0.17");
    let s = flow("quiche-0.17", "server");
    assert_eq!(s.role, Role::Server);
    assert_eq!(s.cc.as_deref(), Some("cubic"));
    assert_eq!(s.goodput_method, GoodputMethod::AckedSent);
    assert_eq!(s.stream_bytes, payload(&c));
    assert_eq!(s.packets_sent, count(&c, "server", "packets_sent"));
    // quiche 0.17 logs no packet_lost events: its losses show only as the
    // stream bytes it sent again, which match its own count.
    assert_eq!(s.lost_packets_total, 0);
    assert!(count(&c, "server", "packets_lost") > 0);
    assert_eq!(
        s.retransmitted_bytes,
        count(&c, "server", "stream_retrans_bytes")
    );

    let r = flow("quiche-0.17", "client");
    assert_eq!(r.role, Role::Client);
    assert_eq!(r.goodput_method, GoodputMethod::Received);
    assert_eq!(r.stream_bytes, payload(&c));
    assert_eq!(r.total_bytes, count(&c, "client", "stream_bytes"));
    assert_eq!(r.packets_sent, count(&c, "client", "packets_sent"));
}

/// quic-go's CUBIC, aioquic's and our LEDBAT++ senders in one analysis,
/// one set of plots and one report.
#[test]
fn cross_stack_summary_plot_and_report() {
    let senders = [
        trace("quic-go", "server"),
        trace("aioquic", "server"),
        trace("quiche", "server"),
    ];
    let a = analyze(&senders, &Options::default()).unwrap();
    let labels: Vec<&str> = a.flows.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(labels, vec!["cubic", "aioquic (cc unknown)", "ledbatpp"]);
    for f in &a.flows {
        assert_eq!(f.stream_bytes.get(&0), Some(&100_000), "{}", f.label);
    }

    let out = std::env::temp_dir().join(format!("qa-stacks-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let written = plot::write_figures(&a, None, &out, &PlotOptions::default()).unwrap();
    let goodput = written.iter().find(|p| p.ends_with("goodput.svg")).unwrap();
    let svg = std::fs::read_to_string(goodput).unwrap();
    for l in &labels {
        assert!(svg.contains(l), "{l} missing from goodput.svg");
    }

    // `report` over the stacks directory: the senders only.
    let (html, _warnings) = report::build(
        &stack_dir(""),
        &Options::default(),
        &PlotOptions::default(),
        &[],
    )
    .unwrap();
    for l in &labels {
        assert!(html.contains(l), "{l} missing from the report");
    }
    std::fs::remove_dir_all(&out).ok();
}
