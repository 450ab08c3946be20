//! Downloads across a NAT rebinding: `lbe-netem` with `rebind_at`
//! (`--rebind-at`) gives the client's flow a new source port mid-transfer,
//! and what the server sent to the old port is lost, including the
//! bottleneck's queue (20 Mbit/s, 50 ms, 500 ms of buffer: up to 1.25 MB).
//! The server must follow the client to its new address (RFC 9000 §9.3)
//! and resend what the old path lost; both downloads must finish intact,
//! and the client must get data again soon.
//!
//! The stall is measured from the client's qlog: the longest gap between
//! two packets carrying stream data. Both tests print it as a figure line
//! (`scripts/flake-check.sh`). Measured over 6 runs of the pair on this
//! 2-core machine, loopback, the two tests side by side:
//! - HTTP/3 background (`--background`, 20 MB, rebind at 3 s): 0.050-0.051
//!   s (LEDBAT++ keeps the queue short: a few datagrams are lost);
//! - quic-bulk CUBIC (10 s download, rebind at 3 s): 0.372-0.378 s (the
//!   queue CUBIC built, about 0.35 s of it, is lost and resent).
//!
//! By hand, with the binaries and `lbe-netem --rebind-at 5s`: a 60 MB
//! `h3-fetch --background` 0.05 s (27.8 s in all, byte-identical), a 60 MB
//! `h3-fetch` 0.52 s, a 30 s `quic-bulk` CUBIC download 0.52 s; restarting
//! lbe-netem instead: 0.14 s (`h3-fetch --background`) and 0.64 s
//! (`quic-bulk`).
//!
//! The limit, 1 s, is the one the design asks for; the worst measured
//! stall in these tests is 0.38 s.
//!
//! Without quiche patch core/0011 (nat-rebinding) both fail: the old
//! path's lost packets are never resent, the clients print "no data for
//! 10.0 s; waiting for the path" and give up at the idle timeout (the
//! background download with 4.9 MB of 20).

mod common;

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::*;
use lbe_netem::Netem;
use lbe_netem::NetemHandle;
use quic_bulk::client::ClientArgs;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use quic_bulk::server::ServerArgs;

const REBIND_AT: Duration = Duration::from_secs(3);
/// The longest a client may go without stream data across the rebind.
const STALL_LIMIT: Duration = Duration::from_secs(1);

/// The bottleneck in front of `server`, rebinding every flow at
/// [`REBIND_AT`].
fn rebinding_link(server: std::net::SocketAddr) -> NetemHandle {
    let mut config = bottleneck_to(server);
    config.rebind_at = Some(REBIND_AT);
    Netem::spawn(config).unwrap()
}

/// The longest gap between two packets carrying stream data in a
/// client's qlog, and how many such packets it shows.
fn longest_data_gap(qlog: &Path) -> (Duration, usize) {
    let text = std::fs::read_to_string(qlog).unwrap();
    let times: Vec<f64> = text
        .split('\u{1e}')
        .filter_map(|r| serde_json::from_str::<serde_json::Value>(r).ok())
        .filter(|v| {
            v["name"]
                .as_str()
                .is_some_and(|n| n.ends_with("packet_received"))
                && v["data"]["frames"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f["frame_type"] == "stream"))
        })
        .filter_map(|v| v["time"].as_f64())
        .collect();
    let gap_ms = times.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    (Duration::from_secs_f64(gap_ms / 1e3), times.len())
}

/// The one qlog in `dir` whose name holds `part`.
fn only_qlog(dir: &Path, part: &str) -> std::path::PathBuf {
    let found = qlogs_named(dir, part);
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap()
}

#[test]
fn a_background_download_survives_a_nat_rebinding() {
    let s = Scratch::new("h3-download-rebind");
    let (root, qlogs, out) = (s.dir("root"), s.dir("qlog"), s.dir("out"));
    let body = content(20 * MB, 7);
    std::fs::write(root.join("big.bin"), &body).unwrap();
    let h3 = TestServer::start(&root, |_| {});
    let netem = rebinding_link(h3.addr);
    let link = netem.listen_addrs()[0];

    let target = out.join("big.bin");
    let url = format!("https://{link}/big.bin");
    let run: Run = h3_fetch()
        .args(fetch_args(
            h3.ca(),
            &url,
            &target,
            &["--background", "--qlog-dir", qlogs.to_str().unwrap()],
        ))
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .into();
    let summary = netem.stop().unwrap();
    assert!(run.ok, "h3-fetch failed: {}", run.stderr);
    assert!(
        !run.stderr.contains("no data for"),
        "a stall was reported: {}",
        run.stderr
    );
    assert!(std::fs::read(&target).unwrap() == body, "the file differs");
    assert_eq!(summary.flows, 1, "one flow, rebound");

    let (gap, packets) = longest_data_gap(&only_qlog(&qlogs, "client"));
    assert!(packets > 10_000, "{packets} packets with data");
    let gap = figure("background_rebind", "stall_s", gap.as_secs_f64());
    assert!(
        gap <= STALL_LIMIT.as_secs_f64(),
        "the client got no data for {gap:.3} s"
    );
}

#[test]
fn a_cubic_download_survives_a_nat_rebinding() {
    let s = Scratch::new("quic-bulk-rebind");
    let qlogs = s.dir("qlog");
    let server = quic_bulk::server::bind(&ServerArgs::loopback(None))
        .unwrap()
        .spawn();
    let netem = rebinding_link(server.local_addr());
    let link = netem.listen_addrs()[0];

    let mut args = ClientArgs::loopback(
        link,
        server.trust(),
        "cubic".parse().unwrap(),
        Amount::DurationMs(10_000),
        Direction::Download,
        "rebind",
    );
    args.qlog_dir = Some(qlogs.clone());
    // The client checks every payload byte it receives.
    let result = quic_bulk::client::run(args, &AtomicBool::new(false));
    let summary = netem.stop().unwrap();
    let outcome = result.unwrap();
    assert!(outcome.bytes > 10 * MB, "{} bytes", outcome.bytes);
    assert_eq!(summary.flows, 1, "one flow, rebound");

    let (gap, packets) = longest_data_gap(&only_qlog(&qlogs, "client"));
    assert!(packets > 10_000, "{packets} packets with data");
    let gap = figure("cubic_rebind", "stall_s", gap.as_secs_f64());
    assert!(
        gap <= STALL_LIMIT.as_secs_f64(),
        "the client got no data for {gap:.3} s"
    );
}
