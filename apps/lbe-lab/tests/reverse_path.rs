//! The simulator's client->server direction, uploads and clocks
//! (`lbe-lab run --sim`): the uplink is a second `lbe-link`
//! link (`[link] reverse_rate`, `reverse_buffer`), a flow may upload
//! (`direction = "upload"`), both ends offer timestamps as our apps do, and
//! each endpoint's quiche reads its own clock (`client_clock_offset`,
//! `client_clock_skew_ppm`, ...).
//!
//! The one-way-delay bars: an LBE download beside a saturating CUBIC upload
//! on a 20/2 Mbit/s link keeps its goodput on the one-way delay and loses
//! it on the round trip; a 100 ppm clock skew leaves LEDBAT++ alone filling
//! the link, yielding to CUBIC, taking the link back after it, and sharing
//! it with a LEDBAT++ flow whose clock is skewed the other way.

mod common;

use std::path::Path;

use common::goodput_bps;
use lbe_lab::sim::SimSummary;

/// 20 Mbit/s down, 2 Mbit/s up, 40 ms base RTT, 500 ms buffers both ways
/// (`scripts/owd-realtime-table.sh`'s link).
fn asymmetric_link(seed: u64) -> String {
    format!(
        "seed = {seed}\n[link]\nrate = \"20mbit\"\nrtt = \"40ms\"\nbuffer = \"500ms\"\nreverse_rate = \"2mbit\"\nreverse_buffer = \"500ms\"\n"
    )
}

/// A 30 s download from 3 s with `cc`, alone or beside a CUBIC upload from
/// 0 s; the figures over `from`..33 s.
fn download(seed: u64, cc: &str, beside_upload: bool, from: &str) -> String {
    let mut text = asymmetric_link(seed);
    text += &format!("[analysis]\nfrom = \"{from}\"\nto = \"33s\"\n");
    if beside_upload {
        text +=
            "[[flow]]\ncc = \"cubic\"\nname = \"upload\"\ndirection = \"upload\"\nstop = \"33s\"\n";
    }
    text +=
        &format!("[[flow]]\ncc = \"{cc}\"\nname = \"download\"\nstart = \"3s\"\nstop = \"33s\"\n");
    text
}

fn simulate(text: &str) -> SimSummary {
    let scenario = lbe_lab::scenario::parse(Path::new("test.toml"), text).unwrap();
    lbe_lab::sim::simulate(&scenario).unwrap().0
}

fn simulate_err(text: &str) -> String {
    let scenario = lbe_lab::scenario::parse(Path::new("test.toml"), text).unwrap();
    lbe_lab::sim::simulate(&scenario).unwrap_err()
}

/// What the download keeps beside the upload: its goodput beside over its
/// goodput alone, and the upload's goodput.
fn kept(seed: u64, cc: &str, from: &str) -> (f64, f64) {
    let alone = simulate(&download(seed, cc, false, from));
    let beside = simulate(&download(seed, cc, true, from));
    (
        goodput_bps(&beside, "download") / goodput_bps(&alone, "download"),
        goodput_bps(&beside, "upload"),
    )
}

/// Issue bar: LEDBAT++ (`profile=full`, `delay=auto`: one-way, since both
/// ends offer timestamps) keeps >= 0.8 of its goodput alone beside a
/// saturating upload. Measured over 13-33 s (10 s after the download
/// started, once its slow start under the uplink's 500 ms of ACK delay is
/// over): 0.814 / 0.890 / 0.850 over seeds 1-3 (0.975 / 0.939 / 0.906
/// with `sharp_decrease=off`, 0.974 / 0.960 / 0.948 before it and the
/// one-way pacing round trip: the uplink bunches the ACKs and the
/// one-way delay jumps past 3·T for a moment). Over 5-33 s it kept
/// 0.796 / 0.786 / 0.780, where CUBIC keeps 0.827 (seed 1): that part is
/// the ramp every controller makes on an ACK clock half a second late.
#[test]
fn an_owd_download_keeps_its_goodput_beside_an_upload() {
    for seed in 1..=3 {
        let (kept, upload) = kept(seed, "ledbatpp:profile=full", "13s");
        assert!(kept >= 0.8, "seed {seed}: kept {kept:.3}");
        // The upload still runs: the download's ACKs take a share of the
        // uplink, the upload most of the rest (0.96-0.99 Mbit/s).
        assert!(upload > 0.8e6, "seed {seed}: upload {upload} bit/s");
    }
}

/// Over the whole download (3-33 s, as `scripts/owd-realtime-table.sh`
/// measures in real time, where it kept 0.71-0.77) it keeps 0.640 / 0.691
/// / 0.665 (seeds 1-3; 0.760 / 0.735 / 0.716 with `sharp_decrease=off`,
/// 0.760 / 0.750 / 0.745 before it): below the 0.8 by the slow
/// start it makes on an ACK clock that waits half a second in the
/// uplink's queue (CUBIC's download keeps 0.777 over the same window),
/// and by what `sharp_decrease` takes when the bunched ACKs read as a
/// queue past 3·T (docs/networks.md). Seed 1 only, for CPU.
#[test]
fn over_the_whole_download_the_ramp_costs_about_a_third() {
    let (kept, _) = kept(1, "ledbatpp:profile=full", "3s");
    assert!(kept >= 0.6, "kept {kept:.3}");
}

/// On the round trip the uplink's queue reads as the download's own: it
/// keeps 0.034 (seed 1; the issue measured 0.030 in real time), and the
/// upload takes 1.74 Mbit/s of the 2.
#[test]
fn an_rtt_download_collapses_beside_an_upload() {
    let (rtt_kept, upload) = kept(1, "ledbatpp:profile=full,delay=rtt", "13s");
    assert!(rtt_kept < 0.1, "kept {rtt_kept:.3}");
    assert!(upload > 1.5e6, "upload {upload} bit/s");
}

/// A 5 Mbit/s, 40 ms link and LEDBAT++ alone for `secs`, the client's
/// (receiver's) clock 5 s ahead and fast by `skew_ppm`; figures from 240 s
/// (the base-delay estimator corrects a drift once it has 3 complete
/// one-minute buckets).
fn skewed(skew_ppm: f64, secs: u64) -> SimSummary {
    simulate(&format!(
        "seed = 1\n[link]\nrate = \"5mbit\"\nrtt = \"40ms\"\nbuffer = \"500ms\"\n[analysis]\nfrom = \"240s\"\nto = \"{secs}s\"\n[[flow]]\ncc = \"ledbatpp:profile=full\"\nname = \"download\"\nstop = \"{secs}s\"\nclient_clock_offset = \"5s\"\nclient_clock_skew_ppm = {skew_ppm}\n"
    ))
}

/// Issue bar: a 100 ppm skew for 30 simulated minutes: the base delay
/// follows the drifting one-way delay (the queue LEDBAT++ keeps stays at
/// its target instead of shrinking as a lagging base would make it) and
/// utilisation alone stays >= 0.95 of the most goodput the link carries
/// (`utilization_of_max`). `profile=full`'s T is 0.15 of the 40 ms base
/// round trip, 6 ms (`target_fraction`); with a 2.4 ms packet time at
/// 5 Mbit/s the queue it keeps averages 9.5 ms unskewed. Measured over
/// 4-30 min: 0.990 and a 9.2 ms queue (p95 10.4); unskewed 0.990 and
/// 9.5 ms. (Before `target_fraction`, T = 60 ms: 0.983, 60.3 ms skewed,
/// 59.7 ms unskewed.) About 30 s of CPU.
#[test]
fn ledbatpp_fills_the_link_under_a_100_ppm_clock_skew() {
    let s = skewed(100.0, 1800);
    let u = s.utilization_of_max.unwrap();
    assert!(u >= 0.95, "utilisation of max {u:.3}");
    let queue = s.flows[0].figures.queuing_delay_ms.mean.unwrap();
    assert!((7.5..11.5).contains(&queue), "queue {queue:.1} ms");
}

/// The clock model reaches quiche: at 1000 ppm, beyond the 200 ppm the
/// estimator corrects, the base lags the one-way delay by 6 ms more every
/// 10 s and LEDBAT++ starves (0.105 of the link over 4-10 min).
#[test]
fn a_skew_beyond_the_estimators_correction_starves_ledbatpp() {
    let s = skewed(1000.0, 600);
    let u = s.utilization_of_max.unwrap();
    assert!(u < 0.5, "utilisation of max {u:.3}");
    // No reverse keys: no uplink counts.
    assert!(s.tail.reverse_bottleneck.is_none());
}

/// The skew bars' set-up: [`skewed`]'s 5 Mbit/s, 40 ms link with 500 ms of
/// buffer for 30 minutes, and a CUBIC download (clocks true) from 27 to 28
/// min: 27 minutes of drift (162 ms at 100 ppm) before it arrives, and
/// two minutes after it stops. `sweeps/one-way-delay-skew*.toml` run the
/// same set-up on seeds 1-3 for docs/one-way-delay.md's clock-skew tables.
const SKEW_END_S: f64 = 1800.0;
const CUBIC_START_S: f64 = 1620.0;
const CUBIC_STOP_S: f64 = 1680.0;

/// A LEDBAT++ (`profile=full`, one-way delay) flow from `start_s`, its
/// client's clock `offset_s` ahead and fast by `skew_ppm`.
fn skewed_lbe(name: &str, start_s: u64, offset_s: u64, skew_ppm: f64) -> String {
    format!(
        "[[flow]]\ncc = \"ledbatpp:profile=full\"\nname = \"{name}\"\nstart = \"{start_s}s\"\nstop = \"{SKEW_END_S}s\"\nclient_clock_offset = \"{offset_s}s\"\nclient_clock_skew_ppm = {skew_ppm}\n"
    )
}

/// What the skew bars read from one run.
#[derive(Debug)]
struct SkewBars {
    /// The LBE flows' goodput over 4-27 min (LBE alone) over the most
    /// goodput the link carries.
    alone_of_max: f64,
    /// Jain's index of the LBE flows over 4-27 min (two flows only).
    jain: Option<f64>,
    /// CUBIC's share of the goodput from 10 s after it starts until it
    /// stops (27:10-28:00; `ledbatpp_profiles::full_yields_to_cubic`
    /// measures from 10 s after CUBIC's start too).
    cubic_share: f64,
    /// Seconds from CUBIC's stop until the first 250 ms bin in which the
    /// LBE flows together deliver ≥ 0.9 of the most goodput the link
    /// carries (bin end): the run's `refill_s` with `[analysis]
    /// refill_after` at CUBIC's stop (the LBE flows are the ones still
    /// running then).
    back_s: f64,
}

/// Runs the LBE flows `lbe` (each [`skewed_lbe`]) beside CUBIC from 27 to
/// 28 min on seed `seed`.
fn skew_bars(seed: u64, lbe: &[String]) -> SkewBars {
    let text = format!(
        "seed = {seed}\n[link]\nrate = \"5mbit\"\nrtt = \"40ms\"\nbuffer = \"500ms\"\n[analysis]\nfrom = \"240s\"\nto = \"{SKEW_END_S}s\"\nrefill_after = \"{CUBIC_STOP_S}s\"\n{}[[flow]]\ncc = \"cubic\"\nname = \"cubic\"\nstart = \"{CUBIC_START_S}s\"\nstop = \"{CUBIC_STOP_S}s\"\n",
        lbe.concat()
    );
    let scenario = lbe_lab::scenario::parse(Path::new("test.toml"), &text).unwrap();
    let (s, a) = lbe_lab::sim::simulate(&scenario).unwrap();
    let a = a.expect("bulk flows' analysis");
    let max = s.max_goodput_bps.unwrap();
    let lbe_flows: Vec<usize> = (0..lbe.len()).collect();
    let cubic = lbe.len();
    // Bits per second of `flows` together in 250 ms bins, by bin centre
    // (in ms, bins aligned to t = 0).
    let bins = |flows: &[usize]| {
        let mut sum = std::collections::BTreeMap::<i64, f64>::new();
        for &f in flows {
            for (t, bps) in a.flows[f].series.delivered.rate_bps(0.25) {
                *sum.entry((t * 1000.0).round() as i64).or_default() += bps;
            }
        }
        sum
    };
    // Mean goodput of `flows` over from_s..to_s (whole 250 ms bins).
    let mean = |flows: &[usize], from_s: f64, to_s: f64| {
        let range = (from_s * 1000.0) as i64..(to_s * 1000.0) as i64;
        bins(flows).range(range).map(|(_, bps)| bps).sum::<f64>() / ((to_s - from_s) * 4.0)
    };
    let alone = |flows: &[usize]| mean(flows, 240.0, CUBIC_START_S);
    let lbe_beside = mean(&lbe_flows, CUBIC_START_S + 10.0, CUBIC_STOP_S);
    let cubic_beside = mean(&[cubic], CUBIC_START_S + 10.0, CUBIC_STOP_S);
    SkewBars {
        alone_of_max: alone(&lbe_flows) / max,
        jain: (lbe.len() == 2).then(|| {
            let (x, y) = (alone(&[0]), alone(&[1]));
            (x + y).powi(2) / (2.0 * (x * x + y * y))
        }),
        cubic_share: cubic_beside / (cubic_beside + lbe_beside),
        back_s: s.refill_s.expect("never back to 0.9 of the link"),
    }
}

/// Issue bar, yield under skew: LEDBAT++ alone for 27 minutes with its
/// receiver's clock 5 s ahead and fast by 100 ppm, then beside CUBIC for a
/// minute. Measured (seeds 1 / 2 / 3, 2026-11-27, quic-bulk's own
/// sessions in the simulator): alone 0.991 of the link on each; CUBIC's
/// share 0.996-0.997 (the bar is ≥ 0.95, as
/// `ledbatpp_profiles::full_yields_to_cubic`); back to 0.9 of the link
/// 6.25 / 2.25 / 2.75 s after CUBIC's stop. Unskewed the same run gives
/// 0.989-0.990, 0.996 and 3.00 / 7.75 / 3.75 s, and at -100 ppm 0.991,
/// 0.996 and 2.00 / 2.00 / 2.50 s. (The long runs, one skewed and one
/// not, are not explained yet; the day before, with the simulator's own
/// request and report, the one long run was +100 ppm on seed 2, 10.75 s.)
/// Until 2026-11-27 the reclaim took
/// 8.75-10.25 s on every seed, skewed or not: CUBIC's data went on
/// arriving for about 3 s after its stop (the senders now keep about one
/// window unsent, `lbe_endpoint::write_budget`). The bound stays the
/// 11.5 s it was, above the slowest seed. Without the drift correction
/// (the estimator's slope forced to 0; measured before the write budget)
/// the run read alone 0.920, CUBIC's share 0.992, back 10.75 s: the first
/// assertion fails. Seed 1 only: about 30 s of CPU.
#[test]
fn under_a_100_ppm_skew_ledbatpp_yields_to_cubic_and_takes_the_link_back() {
    let bars = skew_bars(1, &[skewed_lbe("lbe", 0, 5, 100.0)]);
    assert!(bars.alone_of_max >= 0.95, "{bars:?}");
    assert!(bars.cubic_share >= 0.95, "{bars:?}");
    assert!(bars.back_s <= 11.5, "{bars:?}");
}

/// Issue bar, pairs under skew: two LEDBAT++ flows 10 s apart, the first's
/// receiver clock fast by 100 ppm, the second's slow by 100 ppm (offsets
/// 5 s and 3 s), then CUBIC for a minute. Measured (seeds 1 / 2 / 3):
/// Jain 0.985 / 0.984 / 0.986 over 4-27 min (the bar is ≥ 0.95, as
/// `ledbatpp_profiles::two_full_flows_10s_apart_share_fairly`; unskewed
/// 1.000 on each: the slow-clock flow takes about 55 % of the link),
/// together 0.996 of the link on each, CUBIC's share 0.991-0.992 (unskewed
/// 0.992), back 1.75 / 2.50 / 2.75 s (unskewed 2.00 / 2.25 / 2.00;
/// 8.00-9.00 on every seed before the write budget, as
/// above). Without the drift correction the fast-clock flow starved: Jain
/// 0.557 (seed 1, before the write budget). Seed 1 only: about 35 s of
/// CPU.
#[test]
fn under_opposite_100_ppm_skews_two_ledbatpp_flows_share_and_yield() {
    let bars = skew_bars(
        1,
        &[
            skewed_lbe("fast", 0, 5, 100.0),
            skewed_lbe("slow", 10, 3, -100.0),
        ],
    );
    assert!(bars.jain.unwrap() >= 0.95, "{bars:?}");
    assert!(bars.alone_of_max >= 0.95, "{bars:?}");
    assert!(bars.cubic_share >= 0.95, "{bars:?}");
    assert!(bars.back_s <= 11.5, "{bars:?}");
}

/// Reverse path, upload and clocks keep the run deterministic.
#[test]
fn the_same_seed_gives_the_same_summary_with_an_uplink() {
    let text = download(1, "ledbatpp", true, "5s")
        .replace("stop = \"33s\"", "stop = \"8s\"")
        .replace("to = \"33s\"", "to = \"8s\"")
        + "server_clock_offset = \"1s\"\nserver_clock_skew_ppm = -50\n";
    let a = serde_json::to_string(&simulate(&text)).unwrap();
    let b = serde_json::to_string(&simulate(&text)).unwrap();
    assert_eq!(a, b);
}

/// An upload's figures are its sender's, the client's: alone on a 2 Mbit/s
/// uplink CUBIC, run by the client, fills it (1.78 Mbit/s of stream
/// payload measured, seed 1; 1350-byte datagrams with their 28 bytes of
/// IPv4/UDP and QUIC's own headers carry at most about 1.92).
#[test]
fn an_upload_alone_fills_the_uplink() {
    let text = asymmetric_link(1)
        + "[analysis]\nfrom = \"5s\"\nto = \"20s\"\n[[flow]]\ncc = \"cubic\"\nname = \"upload\"\ndirection = \"upload\"\nstop = \"20s\"\n";
    let s = simulate(&text);
    let g = goodput_bps(&s, "upload");
    assert!((1.7e6..1.95e6).contains(&g), "upload goodput {g} bit/s");
    // The sender's counts are the client's: it wrote the stream.
    let t = &s.flows[0].transfer;
    assert!(t.stream_bytes > 4_000_000, "{t:?}");
    assert!(t.sent_packets > 3_000, "{t:?}");
    // The uplink's counts are in the summary: CUBIC fills its buffer and
    // loses datagrams there; the downlink carried only the server's ACKs.
    let up = s
        .tail
        .reverse_bottleneck
        .as_ref()
        .expect("the uplink's counts");
    assert!(up.drops_buffer > 0, "{up:?}");
    assert!(up.delivered_packets > 3_000, "{up:?}");
    assert_eq!(s.tail.bottleneck.drops_buffer, 0);
}

/// An upload without a client->server bottleneck is refused in one line.
#[test]
fn refusals_are_one_line_errors() {
    let no_uplink = "seed = 1\n[link]\nrate = \"20mbit\"\nrtt = \"40ms\"\nbuffer = \"500ms\"\n[[flow]]\ncc = \"cubic\"\nname = \"up\"\ndirection = \"upload\"\nstop = \"5s\"\n";
    assert_eq!(
        simulate_err(no_uplink),
        "flow up: direction = \"upload\" needs [link] reverse_rate (the client->server direction's bottleneck)"
    );
}
