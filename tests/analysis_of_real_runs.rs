//! qlog-analysis on qlogs that real quic-bulk transfers wrote, checked
//! against what quic-bulk itself measured.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use lbe_test_support::fresh_dir;
use qlog_analysis::FlowInput;
use qlog_analysis::Options;
use quic_bulk::client::ClientArgs;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use quic_bulk::server::ServerArgs;

#[test]
fn sender_qlog_goodput_matches_what_quic_bulk_measured() {
    let dir =
        fresh_dir(&std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lbe-analysis-real"));

    let server = quic_bulk::server::bind(&ServerArgs::loopback(Some(dir.clone())))
        .unwrap()
        .spawn();
    let addr = server.local_addr();

    for (cc, direction) in [
        ("ledbatpp", Direction::Download),
        ("cubic", Direction::Upload),
    ] {
        let summary = quic_bulk::client::run(
            ClientArgs {
                qlog_dir: Some(dir.clone()),
                ..ClientArgs::loopback(
                    addr,
                    server.trust(),
                    cc.parse().unwrap(),
                    Amount::Bytes(100_000_000),
                    direction,
                    &format!("real_{cc}"),
                )
            },
            &AtomicBool::new(false),
        )
        .unwrap();
        let qlog = PathBuf::from(summary.qlog.clone().unwrap());

        let analysis =
            qlog_analysis::analyze([FlowInput::new(&qlog)], &Options::default()).unwrap();
        let flow = &analysis.flows[0];
        assert_eq!(
            flow.cc.as_deref(),
            Some(cc),
            "controller read from {}",
            qlog.display()
        );

        // Every payload byte, plus at most the few hundred bytes of
        // protocol lines.
        assert!(
            flow.total_bytes >= summary.bytes,
            "{} < {}",
            flow.total_bytes,
            summary.bytes
        );
        assert!(
            flow.total_bytes <= summary.bytes + 1000,
            "{} vs {}",
            flow.total_bytes,
            summary.bytes
        );

        let ratio = flow.summary.goodput_bps / summary.goodput_bps;
        assert!(
            (0.98..=1.02).contains(&ratio),
            "{cc}: qlog goodput {:.1} Mbit/s vs quic-bulk {:.1} Mbit/s",
            flow.summary.goodput_bps / 1e6,
            summary.goodput_bps / 1e6
        );
    }

    server.stop().unwrap();
}
