//! `h3-fetch --background --lbe receiver`: the client makes the download
//! less-than-best-effort itself (receiver-side LEDBAT++ through flow
//! control, `quiche_lbe::receiver`), from a server that does no LBE
//! (h3-serve with background switching off: `--background-cc cubic`).

mod common;

use std::time::Duration;

use common::*;
use h3_download::client::request;
use lbe_netem::Buffer;
use lbe_netem::Netem;

/// 2 packets of lbe-app-kit's 1350-byte datagrams: LEDBAT++'s initial and
/// minimum window.
const TWO_PACKETS: u64 = 2 * 1350;

/// A server that sends every response with CUBIC, `u=7` or not.
fn stock_server(root: &std::path::Path) -> TestServer {
    TestServer::start(root, |a| {
        a.background_cc = "cubic".parse().unwrap();
    })
}

/// The MAX_DATA limits the client sent, in its qlog's order.
fn max_data_sent(qlog: &std::path::Path) -> Vec<u64> {
    qlog_events(qlog)
        .into_iter()
        .filter(|(n, _)| n == "quic:packet_sent")
        .flat_map(|(_, d)| d["frames"].as_array().cloned().unwrap_or_default())
        .filter(|f| f["frame_type"] == "max_data")
        .map(|f| f["maximum"].as_u64().expect("max_data maximum"))
        .collect()
}

/// `h3-fetch --ca CA URL -o TARGET --background --lbe receiver --json EXTRA...`:
/// its JSON report.
fn fetch_with_receiver_lbe(
    ca: &str,
    url: &str,
    target: &std::path::Path,
    extra: &[&str],
) -> serde_json::Value {
    let mut args = fetch_args(
        ca,
        url,
        target,
        &["--background", "--lbe", "receiver", "--json"],
    );
    args.extend_from_slice(extra);
    fetch(&args).json()
}

#[test]
fn a_receiver_limited_download_through_a_bottleneck_completes_verified() {
    let s = Scratch::new("h3-download-rx-lbe");
    let (root, out, qlogs) = (s.dir("root"), s.dir("out"), s.dir("qlog"));
    let size = 3 * MB;
    let data = content(size, 21);
    std::fs::write(root.join("f"), &data).unwrap();
    let server = stock_server(&root);
    let netem = Netem::spawn(lbe_netem::Config::new(
        "127.0.0.1:0".parse().unwrap(),
        server.addr,
        20_000_000,
        Duration::from_millis(20),
        Buffer::Time(Duration::from_millis(200)),
    ))
    .unwrap();
    let url = format!("https://{}/f", netem.listen_addr());
    let target = out.join("f");
    let j = fetch_with_receiver_lbe(
        server.ca(),
        &url,
        &target,
        &["--qlog-dir", qlogs.to_str().unwrap()],
    );
    netem.stop().unwrap();
    assert_eq!(j["status"], 200);
    assert_eq!(j["digest_verified"], true);
    assert_eq!(j["sha256"], sha256_hex(&data).as_str());
    assert!(std::fs::read(&target).unwrap() == data);
    assert_eq!(j["background"], true);
    assert_eq!(j["lbe"], "receiver");

    let w = &j["receiver_window"];
    let (min, max) = (
        w["min_bytes"].as_u64().unwrap(),
        w["max_bytes"].as_u64().unwrap(),
    );
    let mean = w["mean_bytes"].as_f64().unwrap();
    assert_eq!(min, TWO_PACKETS, "{w}");
    assert!(max > min, "the window never grew: {w}");
    assert!((min as f64) <= mean && mean <= max as f64, "{w}");
    // 20 Mbit/s × 20 ms is 50 kB; LEDBAT++ leaves slow start at 45 ms of
    // queue, so its window stays far below the file (the client's
    // connection window without the limit is 64 MiB).
    assert!(max < size / 2, "{w}");
    assert!(w["rtt_samples"].as_u64().unwrap() > 0, "{w}");
    // h3-serve sends QUIC timestamps: the window read the one-way delay of
    // the data (`--lbe-delay auto`, the default).
    assert_eq!(w["delay_signal"], "owd", "{w}");
    assert!(w["owd_samples"].as_u64().unwrap() > 0, "{w}");

    // The credit really was held back: the client renewed it in small
    // steps from the 2-packet initial credit, never beyond the data it had
    // received plus the largest window.
    let qlog = std::path::PathBuf::from(j["qlog"].as_str().unwrap());
    let limits = max_data_sent(&qlog);
    assert!(limits.len() > 10, "{limits:?}");
    assert!(limits[0] < 64_000, "{limits:?}");
    let headers = 64 * 1024;
    assert!(
        limits.iter().all(|&l| l <= size + headers + max),
        "{limits:?}"
    );
    // The window's changes are in the qlog, one event each.
    let events: Vec<_> = qlog_events(&qlog)
        .into_iter()
        .filter(|(n, d)| n == "quic:recovery_metrics_updated" && d["lbe_receiver_window"].is_u64())
        .collect();
    assert_eq!(events.len() as u64, w["qlog_events"].as_u64().unwrap());
    assert!(!events.is_empty());
    assert_eq!(events[0].1["lbe_receiver_state"], "slow_start");
    let windows: Vec<u64> = events
        .iter()
        .map(|(_, d)| d["lbe_receiver_window"].as_u64().unwrap())
        .collect();
    assert!(
        windows.iter().all(|&w| (TWO_PACKETS..=max).contains(&w)),
        "{windows:?}"
    );
    // The records say which signal the delays came from: the round trip
    // until the first timestamp, the one-way delay from then on.
    let mut signals: Vec<&str> = events
        .iter()
        .filter_map(|(_, d)| d["lbe_delay_signal"].as_str())
        .collect();
    signals.dedup();
    assert!(
        signals == ["owd"] || signals == ["rtt", "owd"],
        "{signals:?}"
    );
}

#[test]
fn lbe_delay_rtt_reads_the_round_trip_though_the_server_sends_timestamps() {
    let s = Scratch::new("h3-download-rx-delay-rtt");
    let (root, out) = (s.dir("root"), s.dir("out"));
    let data = content(MB, 24);
    std::fs::write(root.join("f"), &data).unwrap();
    let server = stock_server(&root);
    let target = out.join("f");
    let j = fetch_with_receiver_lbe(
        server.ca(),
        &server.url("/f"),
        &target,
        &["--lbe-delay", "rtt"],
    );
    assert!(std::fs::read(&target).unwrap() == data);
    let w = &j["receiver_window"];
    assert_eq!(w["delay_signal"], "rtt", "{w}");
    // The timestamps still came (they are counted) but were not read.
    assert!(w["owd_samples"].as_u64().unwrap() > 0, "{w}");
}

#[test]
fn receiver_mode_resumes_a_part_file() {
    let s = Scratch::new("h3-download-rx-resume");
    let (root, out) = (s.dir("root"), s.dir("out"));
    let data = content(2 * MB, 22);
    std::fs::write(root.join("f"), &data).unwrap();
    let server = stock_server(&root);
    let url = server.url("/f");
    let etag = request(
        server.addr,
        &server.trust,
        "GET",
        "/f",
        &[("range", "bytes=0-0")],
    )
    .unwrap()
    .field("etag")
    .unwrap()
    .to_string();
    let kept = MB as usize / 2;
    std::fs::write(out.join("f.part"), &data[..kept]).unwrap();
    std::fs::write(
        out.join("f.part.meta"),
        serde_json::json!({"url": url, "etag": etag, "size": null, "repr_digest": null})
            .to_string(),
    )
    .unwrap();
    let target = out.join("f");
    let j = fetch_with_receiver_lbe(server.ca(), &url, &target, &["--resume"]);
    assert_eq!(j["status"], 206);
    assert_eq!(j["resumed_from"], kept);
    assert_eq!(j["bytes_transferred"], 2 * MB - kept as u64);
    assert_eq!(j["lbe"], "receiver");
    assert!(j["receiver_window"]["rtt_samples"].as_u64().unwrap() > 0);
    assert!(std::fs::read(&target).unwrap() == data);
}

#[test]
fn lbe_modes_in_the_summary() {
    let s = Scratch::new("h3-download-rx-modes");
    let (root, out) = (s.dir("root"), s.dir("out"));
    let data = content(MB / 4, 23);
    std::fs::write(root.join("f"), &data).unwrap();
    let server = stock_server(&root);
    let url = server.url("/f");
    let target = out.join("f");
    let run = |extra: &[&str]| {
        let mut args = fetch_args(server.ca(), &url, &target, &["--json"]);
        args.extend_from_slice(extra);
        let j = fetch(&args).json();
        assert!(std::fs::read(&target).unwrap() == data);
        std::fs::remove_file(&target).unwrap();
        j
    };
    let j = run(&[]);
    assert_eq!(
        (&j["lbe"], &j["receiver_window"]),
        (&serde_json::Value::Null, &serde_json::Value::Null)
    );
    let j = run(&["--background", "--lbe", "sender"]);
    assert_eq!(j["lbe"], "sender");
    assert_eq!(j["receiver_window"], serde_json::Value::Null);
    let j = run(&["--background"]);
    assert_eq!(j["lbe"], "both", "the default");
    assert_eq!(j["receiver_window"]["min_bytes"], TWO_PACKETS);
}

#[test]
fn lbe_command_line_errors() {
    let r = fetch_nowhere(&["--background", "--lbe", "fast"]);
    let line = r.error_line("h3-fetch");
    assert!(
        line.contains("invalid value 'fast' for '--lbe <MODE>'")
            && line.contains("receiver, sender, both"),
        "{line}"
    );
    assert_eq!(r.code, Some(2));
    let r = fetch_nowhere(&["--lbe", "receiver"]);
    let line = r.error_line("h3-fetch");
    assert!(line.contains("--background"), "{line}");
    assert_eq!(r.code, Some(2));
    let r = fetch_nowhere(&["--background", "--lbe-delay", "fast"]);
    assert_eq!(
        r.error_line("h3-fetch"),
        "h3-fetch: error: invalid value 'fast' for '--lbe-delay <SIGNAL>': expected auto, owd or rtt (see --help)"
    );
    assert_eq!(r.code, Some(2));
}
