//! One headline claim per seed (the papers in `../shared/seeds/`), asserted
//! in the deterministic simulator against the seed's
//! number. Each seed's page in `docs/seeds/` has the full comparison, made
//! by `sweeps/seed00*.toml`; the runs here are those sweeps' set-ups,
//! shortened where the claim holds at the shorter length (each test says
//! what it measured at both lengths). Every value quoted below is from
//! seeds 1, 2 and 3 in that order; the simulator is deterministic, so a
//! seed always gives the same value and the tolerances cover the spread
//! over seeds and the shortening, not chance.
//!
//! The whole file: 19.3 s of CPU in the simulator (`/usr/bin/time` on
//! the test binary, 2026-11-25, 24 s of wall time on the shared 2-core
//! machine; the same runs at the sweeps' full lengths would take about
//! 47 s, from the sweeps' per-run times).
//!
//! Each test fails against a broken controller (checked 2026-11-25 by
//! breaking them on purpose, not committed): LEDBAT++ without slowdowns
//! (alone 0.994), CDG with G fixed at 6 ms (G = 0.1: flows at 16 % and
//! 14 %), LEDBAT's gain capped at 1 (G0 = 400 steady at 28.3 s, as
//! G0 = 40), LEDBAT's decrease gain ignored ((5 ms; 10) and (5 ms; 1)
//! identical), LEDBAT never decreasing on delay (F against Reno 0.787).

mod common;

use common::*;
use lbe_lab::sim::SimSummary;

const SEEDS: [u64; 3] = [1, 2, 3];

/// Flow `flow`'s share of the flows' summed goodput.
fn share(s: &SimSummary, flow: usize) -> f64 {
    let total: f64 = s.flows.iter().map(|f| f.figures.goodput_bps).sum();
    s.flows[flow].figures.goodput_bps / total
}

/// Flow `flow`'s goodput over the most goodput the link carries: the
/// seeds' η ("% of C" at the application layer) of one flow.
fn eta(s: &SimSummary, flow: usize) -> f64 {
    share(s, flow) * s.utilization_of_max.unwrap()
}

/// Seed `ledbatpp-experimental-evaluation` (docs/seeds/ledbatpp-experimental-evaluation.md).
///
/// Fig. 2, §5.1.1: alone with a 500 ms buffer LEDBAT++ reaches "0.9 of the
/// maximum application layer rate" for base RTTs of 20-300 ms. At 20 Mbit/s
/// and 20 ms, 60 s (figures over 0-60 s): 0.9496, 0.9504, 0.9495 of the
/// most the link carries (300 s, the sweep's: 0.9539, 0.9542, 0.9541). Not
/// all of it: the periodic slowdowns (draft -01 §4.4) cost the rest; with
/// `slowdown=false` the same run gives 0.994, so the bar is 0.90-0.97.
///
/// Fig. 17, §6.1: "LEDBAT++ yields to Cubic ... irrespectively of the base
/// RTT" (500 ms buffer, both from 0 s). At 100 ms, 60 s (figures over
/// 20-60 s): LEDBAT++'s share 0.0018 on every seed (300 s over 20-300 s:
/// 0.0018), its 2-packet floor per ~0.6 s round trip; the bar is 0.01.
#[test]
fn ledbatpp_uses_nine_tenths_of_the_link_alone_and_yields_to_cubic() {
    for seed in SEEDS {
        let alone =
            link("20mbit", "20ms", "500ms") + &window("0s", "60s") + &flow("ledbatpp", "0s", "60s");
        let (s, _) = simulate_seeded(&alone, seed);
        let u = s.utilization_of_max.unwrap();
        assert!((0.90..=0.97).contains(&u), "seed {seed}: alone {u}");

        let against_cubic = link("20mbit", "100ms", "500ms")
            + &window("20s", "60s")
            + &flow("ledbatpp", "0s", "60s")
            + &flow("cubic", "0s", "60s");
        let (s, _) = simulate_seeded(&against_cubic, seed);
        let lbe = share(&s, 0);
        assert!(
            lbe < 0.01,
            "seed {seed}: LEDBAT++'s share against CUBIC {lbe}"
        );
    }
}

/// Seed `ledbat-ns2-bittorrent-utp` Fig. 2 (docs/seeds/ledbat-ns2-bittorrent-utp.md):
/// the seed's draft LEDBAT (25 ms target, minimum window 1 packet, no slow
/// start) on 10 Mbit/s, 50 ms, B = 40 packets (48 ms), both flows from 0 s.
///
/// (b) LEDBAT against LEDBAT: "F > 0.99". Over 10-60 s of 60 s: 0.9999,
/// 0.9997, 0.9998 (120 s, the sweep's, over 10-120 s: 0.9997, 0.9987,
/// 0.9994); asserted as the seed states it.
///
/// (a) LEDBAT against TCP: the seed's F = 0.65 does not hold here: ours is
/// 0.5660, 0.5657, 0.5660 (120 s: 0.5647, 0.5661, 0.5649), LEDBAT keeping
/// 6.2 % of the two flows' goodput where the seed's keeps about 1/7. The
/// documented deviation (quiche's Reno has a slow start, the seed's TCP
/// does not, so the early phase where both grow alike is absent) is what is
/// asserted: F at most the seed's 0.65 (our LEDBAT yields at least as much
/// as the seed's) and at least 0.53, i.e. LEDBAT keeps 3 % or more, half
/// its measured share and twice its 1-packet floor (1.5 %): a LEDBAT that
/// stops yielding goes above 0.65, one starved to its floor below 0.53.
#[test]
fn ledbat_yields_to_tcp_and_splits_evenly_with_ledbat() {
    let ledbat = "ledbat:target=25ms,min_cwnd=1";
    let pair = |second: &str| {
        link("10mbit", "50ms", "48ms")
            + &window("10s", "60s")
            + &flow(ledbat, "0s", "60s")
            + &flow(second, "0s", "60s")
    };
    for seed in SEEDS {
        let (s, _) = simulate_seeded(&pair("reno"), seed);
        let f = s.jain_index.unwrap();
        assert!(
            (0.53..=0.65).contains(&f),
            "seed {seed}: F against Reno {f} (LEDBAT's share {})",
            share(&s, 0)
        );
        let (s, _) = simulate_seeded(&pair(ledbat), seed);
        let f = s.jain_index.unwrap();
        assert!(f > 0.99, "seed {seed}: F of two LEDBAT flows {f}");
    }
}

/// Seed `cdg-deadline-aware-lbe` Table I and Fig. 2 at 50 ms
/// (docs/seeds/cdg-deadline-aware-lbe.md), the seed's groups: two CDG flows
/// from 0 s, two CUBIC flows (rollback off, the seed's Linux CUBIC) from
/// 30 s, 10 Mbit/s, a 1-BDP buffer of 50 ms.
///
/// Seed: at G = 0.1 ms "~5 %" per CDG flow (Fig. 2a; Table I's lower bound
/// 6.7 % for one CDG flow); at G = 120 ms 49 % for the CDG flows (Table
/// I's upper bound, "an almost even relative share", Fig. 2d). Ours, 120 s
/// with shares over 60-120 s: G = 0.1 each CDG flow 4.1-5.5 %, the two
/// 9.73, 9.60, 9.38 %; G = 120 the two 43.1, 46.0, 42.9 % (300 s over
/// 150-300 s, the sweep's: 8.94, 9.39, 9.26 % and 46.2, 48.1, 45.0 %).
/// Bars: each flow 2-8 % and the two at most 12 % at G = 0.1; the two
/// 40-55 % at G = 120, the seed's 49 % less our 3 points of spread over
/// seeds and the 3 points the shorter run costs, and not clearly above
/// an even share. A CDG whose G does nothing fails one end or the other.
///
/// (The seed's other claim, "CDG fills the link alone once G >= 2", does
/// not hold for one flow at G = 2 here, 0.72-0.81 of the link: the page's
/// documented difference, not asserted.)
#[test]
fn cdg_share_against_two_cubics_goes_from_5_percent_per_flow_to_even_with_g() {
    let two_vs_two = |g: &str| {
        let cdg = format!("cdg:g={g}");
        link("10mbit", "50ms", "50ms")
            + &window("60s", "120s")
            + &flow(&cdg, "0s", "120s")
            + &flow(&cdg, "0s", "120s")
            + &flow("cubic:rollback=off", "30s", "120s")
            + &flow("cubic:rollback=off", "30s", "120s")
    };
    for seed in SEEDS {
        let (s, _) = simulate_seeded(&two_vs_two("0.1"), seed);
        let (a, b) = (share(&s, 0), share(&s, 1));
        assert!(
            (0.02..=0.08).contains(&a) && (0.02..=0.08).contains(&b) && a + b <= 0.12,
            "seed {seed}: G = 0.1 ms: CDG flows {a} and {b}"
        );
        let (s, _) = simulate_seeded(&two_vs_two("120"), seed);
        let both = share(&s, 0) + share(&s, 1);
        assert!(
            (0.40..=0.55).contains(&both),
            "seed {seed}: G = 120 ms: CDG flows {both}"
        );
    }
}

/// Eq. 4 of seed `ledbat-dynamic-gain`: the time to steady state (the queue
/// reaching T) of LEDBAT started with window `w0` packets and gain `g0`
/// per second of target, at `mu` packets per second and base RTT `rtt_s`.
fn eq4_time_to_steady_state_s(mu: f64, rtt_s: f64, target_s: f64, w0: f64, g0: f64) -> f64 {
    (rtt_s * (mu * rtt_s - w0) / target_s + mu * (2.0 * rtt_s + target_s)) / g0
}

/// Seed `ledbat-dynamic-gain` Eq. 4 and Figs. 3-4 (docs/seeds/ledbat-dynamic-gain.md):
/// without high gain LEDBAT takes long to reach steady state. The seed's
/// link: C = 15 Mbit/s, base RTT 120 ms, B = 1.6 s, T = 25 ms, LEDBAT
/// alone; G0 = 40 and 400 per second of target are RFC GAINs of 1 and 10.
///
/// Steady state is taken as the mean queuing delay over 1 s first reaching
/// 0.8 T (20 ms): `[analysis] steady_queue = "20ms"`, the flow's
/// `steady_s` (qlog-analysis' `FlowSeries::steady_at_s`), which
/// `sweeps/seed003-fig3-start-up.toml` reports as `flow1.steady_s` for the
/// same runs. LEDBAT's growth slows as the queue nears T (off_target), so
/// the last fifth takes another 9-17 s (T itself at 37.8, 45.4, 40.6 s for
/// G0 = 40), the slow final approach the seed names as the reason its
/// simulation lags Eq. 4 at G0 = 40. Eq. 4 with μ in our datagrams (1350
/// bytes + 28 of IPv4/UDP on the link: 1361 per second): 28.4 s at G0 = 40,
/// 2.84 s at 400. Measured (45 s runs, the shipped engine at 55330bc):
/// G0 = 40 28.4, 28.3, 29.2 s; G0 = 400 4.0, 4.0, 4.1 s. Bars: G0 = 40
/// within 10 % of Eq. 4; G0 = 400 in under a quarter of G0 = 40's time
/// (Eq. 4: a tenth; ours 0.14). Fig. 4, the same runs over a 30 s session:
/// G0 = 40 0.6484, 0.6475, 0.6411 of the link (a window growing one packet
/// per round fills the 163-packet BDP at 19.6 s, which predicts 0.67),
/// G0 = 400 0.9424, 0.9423, 0.9423; bars 0.60-0.70 and 0.90 or more.
///
/// The dynamic gain (`dynamic_gain=true`, t_stdy = 10 s) does NOT reach
/// steady state in t_stdy here, nor faster than G0 = 40: 0.8 T at 36.0,
/// 36.2, 36.2 s (seed 1 with t_stdy = 2 s: 9.3 s; 5 s: 20.1 s), 30 s
/// utilisation 0.166-0.168.
/// Eq. 4 needs μ, the available bandwidth; our μ is the delivery rate of
/// the last round, which during start-up is the window's own rate, so
/// the start-up gain begins at its 1/16 floor and grows with the window
/// (an exponential start of time constant about t_stdy instead of the
/// linear one Eq. 4 plans). That documented deviation is asserted (later
/// than G0 = 40, within 45 s); a μ estimator of the available bandwidth
/// fails it, and the page and this test should then assert the seed's claim.
#[test]
fn ledbat_start_up_takes_the_time_eq4_gives_and_ten_times_the_gain_cuts_it() {
    let packet_bytes =
        (lbe_endpoint::MAX_DATAGRAM_SIZE + lbe_link::IPV4_UDP_OVERHEAD as usize) as f64;
    let mu = 15e6 / 8.0 / packet_bytes;
    let eq4_g40 = eq4_time_to_steady_state_s(mu, 0.120, 0.025, 2.0, 40.0);
    assert!(
        (eq4_g40 - 28.4).abs() < 0.05,
        "Eq. 4 at G0 = 40: {eq4_g40} s"
    );
    let run = |cc: &str, seed: u64| {
        let text = link("15mbit", "120ms", "1600ms")
            + &window("0s", "30s")
            + "steady_queue = \"20ms\"\n"
            + &flow(
                &format!("ledbat:research=true,target=25ms,{cc}"),
                "0s",
                "45s",
            );
        let (s, _) = simulate_seeded(&text, seed);
        let steady = s.flows[0].steady_s.unwrap_or(f64::INFINITY);
        (steady, s.utilization_of_max.unwrap())
    };
    for seed in SEEDS {
        let (t40, u40) = run("gain=1", seed);
        let (t400, u400) = run("gain=10", seed);
        assert!(
            (t40 - eq4_g40).abs() <= 0.1 * eq4_g40,
            "seed {seed}: G0 = 40 steady at {t40} s, Eq. 4 {eq4_g40} s"
        );
        assert!(
            t400 < 0.25 * t40,
            "seed {seed}: G0 = 400 steady at {t400} s, G0 = 40 at {t40} s"
        );
        assert!(
            (0.60..=0.70).contains(&u40) && u400 >= 0.90,
            "seed {seed}: 30 s utilisation G0 = 40 {u40}, G0 = 400 {u400}"
        );
        let (t_dynamic, _) = run("dynamic_gain=true", seed);
        assert!(
            t40 < t_dynamic && t_dynamic < 45.0,
            "seed {seed}: dynamic gain steady at {t_dynamic} s, G0 = 40 at {t40} s"
        );
    }
}

/// Seed `ledbat-optimal-parameters` Table I (docs/seeds/ledbat-optimal-parameters.md):
/// the optimal couple (target 5 ms; decrease gain 10) against TCP New Reno
/// on 10 Mbit/s, base RTT 100 ms, buffer BDP/2 (42 packets, 50 ms), both
/// flows from 0 s. Seed η (% of C) Reno / LEDBAT: (25 ms; 1) 88.77 / 8.82,
/// (5 ms; 1) 93.93 / 3.35, (5 ms; 10) 94.21 / 3.53.
///
/// Ours, 100 s with figures over 25-100 s: (25 ms; 1) Reno 87.45, 87.38,
/// 87.41 / LEDBAT 10.01, 10.05, 10.07; (5 ms; 1) 93.30, 93.30, 93.33 /
/// 3.44, 3.50, 3.48; (5 ms; 10) 93.63, 93.60, 93.64 / 2.97, 3.05, 2.94
/// (200 s over 50-200 s, the sweep's, the page's means of seeds 1-2:
/// 87.45 / 10.14, 93.28 / 3.54, 93.69 / 2.98). Bars: with (5 ms; 10) Reno's and LEDBAT's η each within
/// 1.5 points of the seed's (ours are 0.6 points below it: our Reno alone
/// is 95.42 where the seed's is 96.04); Reno keeps at least 4 points more
/// than with (25 ms; 1) (seed 5.4, ours 6.2: a target that is not applied
/// fails it) and more than with (5 ms; 1) by at least 0.1 point (seed 0.28,
/// ours 0.30-0.33: a decrease gain that is not applied gives 0 exactly).
#[test]
fn ledbat_5ms_target_and_decrease_gain_10_leave_reno_its_share() {
    let against_reno = |couple: &str| {
        link("10mbit", "100ms", "50ms")
            + &window("25s", "100s")
            + &flow(&format!("ledbat:{couple}"), "0s", "100s")
            + &flow("reno", "0s", "100s")
    };
    for seed in SEEDS {
        let (s, _) = simulate_seeded(&against_reno("target=5ms,decrease_gain=10"), seed);
        let (reno, lbe) = (eta(&s, 1), eta(&s, 0));
        assert!(
            (reno - 0.9421).abs() <= 0.015 && (lbe - 0.0353).abs() <= 0.015,
            "seed {seed}: (5 ms; 10): Reno {reno}, LEDBAT {lbe}"
        );
        let (s, _) = simulate_seeded(&against_reno("target=25ms,decrease_gain=1"), seed);
        let reno_25_1 = eta(&s, 1);
        assert!(
            reno - reno_25_1 >= 0.04,
            "seed {seed}: Reno {reno} with (5 ms; 10), {reno_25_1} with (25 ms; 1)"
        );
        let (s, _) = simulate_seeded(&against_reno("target=5ms,decrease_gain=1"), seed);
        let reno_5_1 = eta(&s, 1);
        assert!(
            reno - reno_5_1 >= 0.001,
            "seed {seed}: Reno {reno} with (5 ms; 10), {reno_5_1} with (5 ms; 1)"
        );
    }
}
