//! Downloads across an outage longer than the idle timeout: `lbe-netem`
//! with `--change AT:outage=LEN` delivers nothing either way for LEN (the
//! queue is kept), so the connection times out mid-download. `h3-fetch
//! --background` then connects again and resumes from its part file
//! (`--retry-for`, 10 minutes by default there) until the link is back;
//! without `--background` it gives up at the first loss, keeping the part
//! file for `--resume`.
//!
//! In `make test` the outage is 8 s against a 2 s idle timeout (the same
//! path through the code as the 60 s against the default 30 s,
//! in a fifth of the time); the 60 s case is
//! `a_background_download_survives_a_60_s_outage`, ignored by default
//! (about 100 s of real time): `cargo test --release -p h3-download --test
//! outage -- --ignored`.

mod common;

use std::time::Duration;

use common::*;
use lbe_link::PathChange;
use lbe_netem::Netem;
use lbe_netem::NetemHandle;

const MB: u64 = 1_000_000;

/// The bottleneck in front of `server`: nothing delivered either way from
/// `at` for `outage`.
fn link_with_outage(server: std::net::SocketAddr, at: Duration, outage: Duration) -> NetemHandle {
    let mut config = bottleneck_to(server);
    let change = PathChange {
        at,
        outage: Some(outage),
        ..PathChange::default()
    };
    config.down.variation.changes = change
        .on_direction(BOTTLENECK_RTT, true)
        .into_iter()
        .collect();
    config.up.variation.changes = change
        .on_direction(BOTTLENECK_RTT, false)
        .into_iter()
        .collect();
    Netem::spawn(config).unwrap()
}

/// Downloads `size` bytes with h3-fetch and these options across an
/// outage of `outage` from `at`: the run, the file (if any), the body.
fn fetch_across_outage(
    name: &str,
    size: u64,
    at: Duration,
    outage: Duration,
    options: &[&str],
) -> (Run, Option<Vec<u8>>, Vec<u8>, Scratch) {
    let s = Scratch::new(name);
    let (root, out) = (s.dir("root"), s.dir("out"));
    let body = content(size, 11);
    std::fs::write(root.join("big.bin"), &body).unwrap();
    let h3 = TestServer::start(&root, |_| {});
    let netem = link_with_outage(h3.addr, at, outage);
    let url = format!("https://{}/big.bin", netem.listen_addrs()[0]);
    let target = out.join("big.bin");
    let mut all = vec!["--json"];
    all.extend_from_slice(options);
    let run = fetch_to(h3.ca(), &url, &target, &all);
    netem.stop().unwrap();
    let file = std::fs::read(&target).ok();
    (run, file, body, s)
}

#[test]
fn a_background_download_resumes_after_an_outage_longer_than_the_idle_timeout() {
    let size = 12 * MB;
    let (run, file, body, _s) = fetch_across_outage(
        "h3-fetch-outage-background",
        size,
        Duration::from_secs(2),
        Duration::from_secs(8),
        &["--background", "--idle-timeout", "2s", "--timeout", "2s"],
    );
    assert!(run.ok, "h3-fetch failed: {}", run.stderr);
    assert!(file == Some(body), "the file differs or is missing");
    let j = run.json();
    // The first connection was lost about 2 s into the outage (at 4 s),
    // the next one (at 5 s) got no answer by 7 s, and a later one, after
    // the link's return at 10 s, finished.
    let reconnects = j["reconnects"].as_u64().unwrap();
    assert!(reconnects >= 2, "{reconnects} reconnects: {}", run.stderr);
    assert_eq!(
        run.stderr.matches("connecting again in").count() as u64,
        reconnects,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("nothing came from the server for the idle timeout")
            || run.stderr.contains("no data for"),
        "{}",
        run.stderr
    );
    // Every byte came once: the later connections asked for the rest.
    assert_eq!(j["bytes_transferred"], size);
    assert_eq!(j["resumed_from"], 0);
    assert_eq!(j["size"], size);
    figure("outage_8s_background", "reconnects", reconnects);
    figure(
        "outage_8s_background",
        "duration_s",
        j["duration_s"].as_f64().unwrap(),
    );
}

#[test]
fn a_foreground_download_gives_up_at_the_outage_and_keeps_its_part_file() {
    let (run, file, _body, s) = fetch_across_outage(
        "h3-fetch-outage-foreground",
        12 * MB,
        Duration::from_secs(2),
        Duration::from_secs(6),
        &["--idle-timeout", "2s", "--timeout", "2s"],
    );
    assert!(!run.ok);
    assert!(file.is_none(), "an incomplete file was put in place");
    assert!(!run.stderr.contains("connecting again"), "{}", run.stderr);
    assert!(run.stderr.contains("--resume"), "{}", run.stderr);
    let part = std::fs::metadata(s.path().join("out/big.bin.part")).unwrap();
    assert!(part.len() > 0 && part.len() < 12 * MB, "{}", part.len());
}

#[test]
fn a_background_download_gives_up_after_retry_for_and_keeps_its_part_file() {
    // Lost at about 4 s, one new connection at 5 s that gets no answer by
    // 6 s; the next would come 2 s later, past the 3 s allowed.
    let (run, file, _body, s) = fetch_across_outage(
        "h3-fetch-outage-gives-up",
        12 * MB,
        Duration::from_secs(2),
        Duration::from_secs(30),
        &[
            "--background",
            "--idle-timeout",
            "2s",
            "--timeout",
            "1s",
            "--retry-for",
            "3s",
        ],
    );
    assert!(!run.ok);
    assert!(file.is_none(), "an incomplete file was put in place");
    let line = run.stderr.lines().last().unwrap_or_default();
    assert!(
        line.contains("(gave up after 1 new connection in ") && line.ends_with("--retry-for 3s)"),
        "{}",
        run.stderr
    );
    assert!(line.contains("--resume"), "{line}");
    let part = std::fs::metadata(s.path().join("out/big.bin.part")).unwrap();
    assert!(part.len() > 0 && part.len() < 12 * MB, "{}", part.len());
}

#[test]
fn a_background_download_from_a_server_that_never_answers_fails_at_once() {
    // Nothing was ever connected: no reason to wait for a link to come
    // back, so `--retry-for` does not apply.
    let s = Scratch::new("h3-fetch-outage-nowhere");
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/big.bin", silent.local_addr().unwrap());
    let target = s.join("big.bin");
    let run = fetch(&[
        "--insecure",
        &url,
        "-o",
        target.to_str().unwrap(),
        "--background",
        "--timeout",
        "1s",
    ]);
    assert!(!run.ok);
    assert!(run.stderr.contains("no answer from"), "{}", run.stderr);
    assert!(!run.stderr.contains("connecting again"), "{}", run.stderr);
}

#[test]
fn a_retry_for_that_is_not_a_duration_is_refused() {
    let run = fetch_nowhere(&["--retry-for", "ten"]);
    assert!(!run.ok);
    assert!(run.stderr.contains("--retry-for"), "{}", run.stderr);
    let run = fetch_nowhere(&["--idle-timeout", "0s"]);
    assert!(!run.ok);
    assert!(
        run.stderr.contains("out of range: from 1s to 600s"),
        "{}",
        run.stderr
    );
}

#[test]
#[ignore = "about 100 s of real time: cargo test --release -p h3-download --test outage -- --ignored"]
fn a_background_download_survives_a_60_s_outage() {
    let size = 20 * MB;
    let (run, file, body, _s) = fetch_across_outage(
        "h3-fetch-outage-60s",
        size,
        Duration::from_secs(3),
        Duration::from_secs(60),
        &["--background"],
    );
    assert!(run.ok, "h3-fetch failed: {}", run.stderr);
    assert!(file == Some(body), "the file differs or is missing");
    let j = run.json();
    assert!(j["reconnects"].as_u64().unwrap() >= 1, "{}", run.stderr);
    assert_eq!(j["bytes_transferred"], size);
    eprintln!("{}", run.stderr);
    figure("outage_60s_background", "reconnects", &j["reconnects"]);
    figure(
        "outage_60s_background",
        "duration_s",
        j["duration_s"].as_f64().unwrap(),
    );
}
