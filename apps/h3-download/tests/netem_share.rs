//! A measurement, not a pass/fail test (ignored by default; about a
//! minute): a background download (`h3-fetch --background` from
//! `h3-serve`, sent with LEDBAT++) and a normal `quic-bulk --cc cubic`
//! download share one emulated 20 Mbit/s link (`lbe-netem`: 50 ms base RTT,
//! 500 ms drop-tail buffer). The CUBIC flow should get most of the link.
//!
//!     cargo test --release -p h3-download --test netem_share -- --ignored --nocapture
//!
//! `H3_SHARE_BUFFER=30ms` (any duration) runs it with another buffer;
//! `H3_SHARE_LBE=receiver|sender|both` is h3-fetch's `--lbe` (default
//! `both`); `H3_SHARE_SERVER_CC=cubic` makes h3-serve a server that does
//! no LBE (its `--background-cc`).
//!
//! Timeline: the background download starts at 0 s and runs alone until
//! 15 s; the CUBIC flow runs from 15 s for 30 s. Figures come from the
//! servers' qlogs through `qlog-analysis` (goodput = acknowledged stream
//! data, on the wall clock): LEDBAT++ alone over 5–15 s, both over 20–45 s
//! (CUBIC's slow start left out).
//!
//! The two flows come from two servers through the one bottleneck:
//! `lbe-netem` relays its main address to h3-serve and a route
//! (`--route`) to the quic-bulk server.

mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;

use common::*;
use lbe_netem::Buffer;
use lbe_netem::Netem;
use quic_bulk::client::ClientArgs;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use quic_bulk::server::ServerArgs;

const RATE_BPS: u64 = 20_000_000;
const SOLO: Duration = Duration::from_secs(15);
const CUBIC_FOR: Duration = Duration::from_secs(30);

#[test]
#[ignore = "a one-minute measurement through lbe-netem; run with --ignored --nocapture"]
fn background_download_yields_to_cubic_on_a_20mbit_link() {
    let buffer = std::env::var("H3_SHARE_BUFFER")
        .map(|b| lbe_units::parse_duration(&b).expect("H3_SHARE_BUFFER: a duration"))
        .unwrap_or(Duration::from_millis(500));
    let s = Scratch::new("h3-download-netem-share");
    let (root, qlogs, out) = (s.dir("root"), s.dir("qlog"), s.dir("out"));
    // More than the background flow can fetch in the run.
    std::fs::File::create(root.join("big.bin"))
        .unwrap()
        .set_len(400 * MB)
        .unwrap();

    let lbe = std::env::var("H3_SHARE_LBE").unwrap_or_else(|_| "both".into());
    let server_cc = std::env::var("H3_SHARE_SERVER_CC").ok();
    let mut h3 = TestServer::start(&root, |a| {
        a.qlog_dir = Some(qlogs.clone());
        if let Some(cc) = &server_cc {
            a.background_cc = cc.parse().expect("H3_SHARE_SERVER_CC: a --background-cc");
        }
    });
    let bulk = quic_bulk::server::bind(&ServerArgs::loopback(Some(qlogs.clone())))
        .unwrap()
        .spawn();
    let bulk_addr = bulk.local_addr();
    let bulk_trust = bulk.trust();

    let mut config = lbe_netem::Config::new(
        "127.0.0.1:0".parse().unwrap(),
        h3.addr,
        RATE_BPS,
        Duration::from_millis(50),
        Buffer::Time(buffer),
    );
    config.routes.push(lbe_netem::Route {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: bulk_addr,
        rtt: Duration::from_millis(50),
    });
    let netem = Netem::spawn(config).unwrap();
    let (link, bulk_link) = (netem.listen_addrs()[0], netem.listen_addrs()[1]);

    let started_at = SystemTime::now();
    let t0 = Instant::now();
    let target = out.join("big.bin");
    let url = format!("https://{link}/big.bin");
    let mut fetch = ChildGuard(
        h3_fetch()
            .args(fetch_args(
                h3.ca(),
                &url,
                &target,
                &["--background", "--lbe", &lbe, "--json"],
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    thread::sleep(SOLO.saturating_sub(t0.elapsed()));

    let cubic = quic_bulk::client::run(
        ClientArgs::loopback(
            bulk_link,
            bulk_trust,
            "cubic".parse().unwrap(),
            Amount::DurationMs(CUBIC_FOR.as_millis() as u64),
            Direction::Download,
            "normal",
        ),
        &AtomicBool::new(false),
    )
    .unwrap();
    let end_s = t0.elapsed().as_secs_f64();
    let part = std::fs::metadata(out.join("big.bin.part"))
        .map(|m| m.len())
        .unwrap_or(0);
    fetch.0.kill().unwrap();
    fetch.0.wait().unwrap();
    let netem_summary = netem.stop().unwrap();
    h3.stop();
    bulk.stop().unwrap();

    let background_qlog = qlogs_named(&qlogs, "h3-server-");
    assert_eq!(background_qlog.len(), 1, "{background_qlog:?}");
    let cubic_qlog = PathBuf::from(cubic.qlog.clone().expect("quic-bulk server qlog"));
    let figures = |from_s: f64, to_s: f64| {
        qlog_analysis::summary_parts(
            [
                qlog_analysis::FlowInput::new(&background_qlog[0])
                    .cc("ledbatpp")
                    .flow("background".to_string()),
                qlog_analysis::FlowInput::new(&cubic_qlog)
                    .cc("cubic")
                    .flow("normal".to_string()),
            ],
            &qlog_analysis::Options {
                from_s: Some(from_s),
                to_s: Some(to_s),
                link_rate_bps: Some(RATE_BPS as f64),
                time_base: qlog_analysis::TimeBase::WallClock(started_at),
                ..qlog_analysis::Options::default()
            },
        )
        .unwrap()
    };
    let solo = figures(5.0, SOLO.as_secs_f64());
    let shared_from = SOLO.as_secs_f64() + 5.0;
    let shared_to = end_s.min(SOLO.as_secs_f64() + CUBIC_FOR.as_secs_f64());
    let shared = figures(shared_from, shared_to);
    let mbit = |bps: f64| bps / 1e6;
    let (bg, cu) = (&shared.flows[0], &shared.flows[1]);
    let total = bg.goodput_bps + cu.goodput_bps;
    let states = cc_states(&background_qlog[0]);
    println!(
        "link 20 Mbit/s, 50 ms, {} ms buffer; h3-fetch --lbe {lbe}, server background cc {}\n\
         background alone (5-{:.0} s): {:.2} Mbit/s (utilisation {:.2})\n\
         shared ({shared_from:.0}-{shared_to:.0} s): background {:.2} Mbit/s, cubic {:.2} Mbit/s; \
         cubic share {:.3}, utilisation {:.2}\n\
         quic-bulk's own figure: {:.2} Mbit/s over {:.1} s\n\
         background part file at the end: {} bytes; LEDBAT++ states seen: {:?}\n\
         netem: {} flows, {} buffer drops",
        buffer.as_millis(),
        server_cc.as_deref().unwrap_or("ledbatpp"),
        SOLO.as_secs_f64(),
        mbit(solo.flows[0].goodput_bps),
        solo.utilization.unwrap_or(0.0),
        mbit(bg.goodput_bps),
        mbit(cu.goodput_bps),
        cu.goodput_bps / total,
        shared.utilization.unwrap_or(0.0),
        mbit(cubic.goodput_bps),
        cubic.duration_s,
        part,
        {
            let mut seen: Vec<&String> = states.iter().collect();
            seen.sort();
            seen.dedup();
            seen
        },
        netem_summary.flows,
        netem_summary.down.drops_buffer,
    );
    assert!(
        cu.goodput_bps > bg.goodput_bps,
        "the background download did not yield: background {:.2} Mbit/s, cubic {:.2} Mbit/s",
        mbit(bg.goodput_bps),
        mbit(cu.goodput_bps)
    );
}
