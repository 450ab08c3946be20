//! The checks, through `parse`: what a file gives and each error's line.

use std::path::Path;
use std::time::Duration;

use crate::*;

#[test]
fn a_stop_h3_flows_file_is_more_than_the_link_carries_by_then() {
    let text = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                [[flow]]\nkind = \"h3\"\nstart = \"5s\"\nstop = \"35s\"\n\
                [[flow]]\nkind = \"h3\"\nbytes = \"3MB\"\n";
    let s = parse(Path::new("s.toml"), text).unwrap();
    // 20 Mbit/s for 30 s is 75 MB; 1 MB more.
    assert_eq!(s.flows[0].h3_file_bytes(&s.link), 76_000_000);
    assert_eq!(s.flows[1].h3_file_bytes(&s.link), 3_000_000);
}

const GOOD: &str = r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[analysis]
from = "10s"
to = "40s"
[[flow]]
cc = "ledbatpp"
start = "0s"
stop = "40s"
[[flow]]
cc = "cubic"
start = "10s"
bytes = "10MB"
rtt = "100ms"
name = "fg"
"#;

fn err(text: &str) -> String {
    parse(Path::new("s.toml"), text).unwrap_err()
}

/// A scenario whose [link] has `extra` lines after rate, rtt, buffer
/// (lines 2-4): `extra` starts on line 5.
fn with_link(extra: &str) -> String {
    format!(
        "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n{extra}\n[[flow]]\ncc = \"cubic\"\nstop = \"10s\"\n"
    )
}

#[test]
fn count_expands_to_staggered_identical_flows() {
    let text = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                [[flow]]\ncc = \"cubic\"\nstop = \"30s\"\n\
                [[flow]]\ncc = \"ledbatpp\"\nname = \"bg\"\ncount = 3\nstagger = \"1s\"\nstart = \"5s\"\nstop = \"30s\"\n";
    let s = parse(Path::new("s.toml"), text).unwrap();
    let got: Vec<(usize, &str, Duration)> = s
        .flows
        .iter()
        .map(|f| (f.id, f.name.as_str(), f.start))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "flow1", Duration::ZERO),
            (2, "bg-1", Duration::from_secs(5)),
            (3, "bg-2", Duration::from_secs(6)),
            (4, "bg-3", Duration::from_secs(7)),
        ]
    );
    assert!(s.flows[1..]
        .iter()
        .all(|f| f.end == FlowEnd::Stop(Duration::from_secs(30))
            && f.cc.to_string() == s.flows[1].cc.to_string()));
    // Without a name: flowN-1.., N the position in the file.
    let text = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                [[flow]]\ncc = \"cubic\"\nstop = \"30s\"\ncount = 2\n";
    let s = parse(Path::new("s.toml"), text).unwrap();
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["flow1-1", "flow1-2"]);
    assert!(s.flows.iter().all(|f| f.start.is_zero()));
}

#[test]
fn count_errors_name_the_line() {
    let flow = |extra: &str| {
        format!("[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n[[flow]]\ncc = \"cubic\"\nstop = \"10s\"\n{extra}\n")
    };
    for (extra, want) in [
        ("count = 0", "s.toml:8: flow count = 0: must be from 1 to 10000"),
        ("count = -2", "s.toml:8: flow count = -2: must be from 1 to 10000"),
        ("stagger = \"1s\"", "s.toml:8: flow stagger needs count"),
        ("count = 11\nstagger = \"1s\"", "s.toml:9: flow stagger: the last of the 11 flows would start at 10s, not before its stop 10s"),
        ("count = 2\nstagger = \"soon\"", "s.toml:9: flow stagger: bad duration"),
    ] {
        let e = err(&flow(extra));
        assert!(e.starts_with(want), "{extra}: {e}");
    }
}

#[test]
fn aqm_keys_build_the_rfcs_disciplines() {
    let s = parse(Path::new("s.toml"), &with_link("")).unwrap();
    assert_eq!(s.link.aqm, lbe_link::Aqm::Fifo);
    assert_eq!(s.link.gilbert_elliott, None);
    assert!(!s.link.has_reverse());
    let s = parse(
        Path::new("s.toml"),
        &with_link("aqm = \"fq_codel\"\ncodel_target = \"10ms\"\nfq_flows = 64\nfq_quantum = 300"),
    )
    .unwrap();
    let lbe_link::Aqm::FqCodel(q) = s.link.aqm else {
        panic!("{:?}", s.link.aqm)
    };
    assert_eq!(
        (q.codel.target, q.codel.interval),
        (Duration::from_millis(10), Duration::from_millis(100))
    );
    assert_eq!((q.flows, q.quantum), (64, 300));
    let s = parse(
        Path::new("s.toml"),
        &with_link("aqm = \"pie\"\npie_alpha = 0.25\npie_tupdate = \"30ms\""),
    )
    .unwrap();
    let lbe_link::Aqm::Pie(p) = s.link.aqm else {
        panic!()
    };
    assert_eq!(
        (p.alpha, p.t_update, p.beta),
        (0.25, Duration::from_millis(30), 1.25)
    );
    assert_eq!(s.link.bottleneck(7).aqm, s.link.aqm);
    assert_eq!(s.link.bottleneck(7).seed, 7);
}

#[test]
fn aqm_errors_name_the_file_and_line() {
    for (extra, want) in [
        (
            "aqm = \"red\"",
            "s.toml:5: link unknown aqm 'red': expected one of fifo, codel, fq_codel, pie",
        ),
        (
            "codel_target = \"5ms\"",
            "s.toml:5: link codel_target applies to aqm codel or fq_codel only, not to aqm fifo",
        ),
        (
            "aqm = \"codel\"\nfq_flows = 8",
            "s.toml:6: link fq_flows applies to aqm fq_codel only, not to aqm codel",
        ),
        (
            "aqm = \"pie\"\npie_target = \"0ms\"",
            "s.toml:6: link bad pie_target '0ms': must be greater than zero",
        ),
        (
            "aqm = \"fq_codel\"\nfq_flows = 0",
            "s.toml:6: link bad fq_flows '0': expected a whole number from 1 to 65536",
        ),
        (
            "aqm = \"fq_codel\"\nfq_quantum = \"x\"",
            "s.toml:6: link bad fq_quantum 'x': expected a whole number from 1 to 1048576",
        ),
        (
            "aqm_target = \"5ms\"",
            "s.toml:5: unknown field `aqm_target`",
        ),
    ] {
        let e = err(&with_link(extra));
        assert!(e.starts_with(want), "{extra}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn gilbert_elliott_and_reverse_keys() {
    let s = parse(
        Path::new("s.toml"),
        &with_link("loss_model = \"ge\"\nge_p = 0.01\nge_r = 0.3\nge_h = 0.1"),
    )
    .unwrap();
    assert_eq!(
        s.link.gilbert_elliott,
        Some(lbe_link::GilbertElliott {
            p: 0.01,
            r: 0.3,
            h: 0.1,
            k: 1.0
        })
    );
    assert_eq!(s.link.bottleneck(1).gilbert_elliott, s.link.gilbert_elliott);
    let s = parse(
        Path::new("s.toml"),
        &with_link("reverse_rate = \"2mbit\"\nreverse_buffer = \"100ms\"\nreverse_loss = 0.01"),
    )
    .unwrap();
    assert_eq!(s.link.reverse_rate_bps, Some(2_000_000));
    assert_eq!(
        s.link.reverse_buffer,
        Some(lbe_link::Buffer::Time(Duration::from_millis(100)))
    );
    assert_eq!(s.link.reverse_loss, 0.01);
    assert!(s.link.has_reverse());
    for (extra, want) in [
        (
            "ge_p = 0.1",
            "s.toml:5: link ge_p needs loss_model = \"ge\"",
        ),
        (
            "loss_model = \"ge\"\nge_p = 1.5\nge_r = 0.1",
            "s.toml:6: link ge_p must be a probability from 0 to 1",
        ),
        (
            "loss_model = \"ge\"\nge_p = 0.1\nge_r = -0.1",
            "s.toml:7: link ge_r must be a probability from 0 to 1",
        ),
        (
            "loss_model = \"ge\"\nge_p = 0.1",
            "s.toml:5: loss_model = \"ge\" needs ge_p (P(Good->Bad)) and ge_r (P(Bad->Good))",
        ),
        (
            "loss = 0.01\nloss_model = \"ge\"\nge_p = 0.1\nge_r = 0.5",
            "s.toml:5: link loss and loss_model = \"ge\" exclude each other",
        ),
        (
            "loss_model = \"markov\"",
            "s.toml:5: link loss_model 'markov': expected \"bernoulli\"",
        ),
        (
            "reverse_buffer = \"1s\"",
            "s.toml:5: link reverse_buffer needs reverse_rate",
        ),
        (
            "reverse_rate = \"0mbit\"",
            "s.toml:5: link reverse_rate: bad rate '0mbit': must be above zero",
        ),
        (
            "reverse_loss = 1.0",
            "s.toml:5: link reverse_loss must be from 0 to below 1",
        ),
    ] {
        let e = err(&with_link(extra));
        assert!(e.starts_with(want), "{extra}: {e}");
    }
}

#[test]
fn the_reverse_path_is_lbe_links_uplink() {
    let s = parse(
        Path::new("s.toml"),
        &with_link("reverse_rate = \"2mbit\"\nreverse_loss = 0.01"),
    )
    .unwrap();
    assert_eq!(
        s.link.reverse_path(7),
        lbe_link::LinkConfig {
            rate_bps: Some(2_000_000),
            // The link's buffer when reverse_buffer is not given.
            buffer: Some(lbe_link::Buffer::Time(Duration::from_millis(500))),
            loss: 0.01,
            seed: 7 ^ 0x9e37_79b9_7f4a_7c15,
            ..lbe_link::LinkConfig::default()
        }
    );
    let s = parse(Path::new("s.toml"), &with_link("")).unwrap();
    assert!(!s.link.has_reverse());
    assert_eq!(
        s.link.reverse_path(7),
        lbe_link::LinkConfig {
            seed: 7 ^ 0x9e37_79b9_7f4a_7c15,
            ..lbe_link::LinkConfig::default()
        }
    );
}

/// `with_link("")` with `extra` lines in its flow (line 9 onwards).
fn with_flow(extra: &str) -> String {
    format!("{}{extra}\n", with_link(""))
}

#[test]
fn direction_and_clock_keys() {
    let s = parse(Path::new("s.toml"), &with_flow("")).unwrap();
    assert_eq!(s.flows[0].direction, Direction::Download);
    assert_eq!(s.flows[0].client_clock, Clock::default());
    assert!(s.flows[0].server_clock.is_exact());
    let s = parse(
        Path::new("s.toml"),
        &with_flow(
            "direction = \"upload\"\nclient_clock_offset = \"2s\"\nclient_clock_skew_ppm = -100\nserver_clock_skew_ppm = 100.5",
        ),
    )
    .unwrap();
    let f = &s.flows[0];
    assert_eq!(f.direction, Direction::Upload);
    assert_eq!(
        f.client_clock,
        Clock {
            offset: Duration::from_secs(2),
            skew_ppm: -100.0
        }
    );
    assert_eq!(
        f.server_clock,
        Clock {
            offset: Duration::ZERO,
            skew_ppm: 100.5
        }
    );
    for (extra, want) in [
        (
            "direction = \"sideways\"",
            "s.toml:9: flow direction: 'sideways' (allowed: download, upload)",
        ),
        (
            "direction = \"upload\"\nreceiver_lbe = true",
            "s.toml:10: flow receiver_lbe: a receiver-driven flow is a download, not direction = \"upload\"",
        ),
        (
            "server_clock_skew_ppm = 1000.5",
            "s.toml:9: flow server_clock_skew_ppm = 1000.5: must be from -1000 to 1000",
        ),
        (
            "client_clock_skew_ppm = nan",
            "s.toml:9: flow client_clock_skew_ppm = NaN: must be from -1000 to 1000",
        ),
        (
            "client_clock_offset = \"-1s\"",
            "s.toml:9: flow client_clock_offset: bad duration '-1s'",
        ),
    ] {
        let e = err(&with_flow(extra));
        assert!(e.starts_with(want), "{extra}: {e}");
    }
    assert_eq!(
        err(&h3("direction = \"upload\"")),
        "s.toml:12: flow direction: only quic-bulk flows take 'direction' (an h3 flow's sender is its server)"
    );
    assert_eq!(
        err(&h3("server_clock_offset = \"1s\"")),
        "s.toml:12: flow server_clock_offset: only quic-bulk flows take 'server_clock_offset' (an h3 flow's sender is its server)"
    );
    let ping = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n[[flow]]\nkind = \"ping\"\nstop = \"10s\"\ndirection = \"upload\"\n";
    let e = err(ping);
    assert!(
        e.starts_with("s.toml:8: flow direction: a ping flow does not take 'direction'"),
        "{e}"
    );
}

/// `[analysis] steady_queue`, beside the window.
#[test]
fn the_steady_state_queue_is_a_duration() {
    let text = GOOD.replace("to = \"40s\"", "to = \"40s\"\nsteady_queue = \"20ms\"");
    let s = parse(Path::new("s.toml"), &text).unwrap();
    assert_eq!(s.steady_queue, Some(Duration::from_millis(20)));
    assert_eq!(
        s.window,
        Some((Duration::from_secs(10), Duration::from_secs(40)))
    );
}

/// `[analysis] refill_after`, beside the window (and the steady queue).
#[test]
fn the_refill_time_is_a_duration() {
    let text = GOOD.replace(
        "to = \"40s\"",
        "to = \"40s\"\nrefill_after = \"28min\"\nsteady_queue = \"20ms\"",
    );
    let s = parse(Path::new("s.toml"), &text).unwrap();
    assert_eq!(s.refill_after, Some(Duration::from_secs(1680)));
    assert_eq!(s.steady_queue, Some(Duration::from_millis(20)));
    assert_eq!(
        s.window,
        Some((Duration::from_secs(10), Duration::from_secs(40)))
    );
}

#[test]
fn parses_the_design_example() {
    let s = parse(Path::new("s.toml"), GOOD).unwrap();
    assert_eq!(s.link.rate_bps, 20_000_000);
    assert_eq!(s.link.buffer_ms(), 500.0);
    assert_eq!(
        s.window,
        Some((Duration::from_secs(10), Duration::from_secs(40)))
    );
    assert_eq!(s.steady_queue, None);
    assert_eq!(s.refill_after, None);
    assert_eq!(s.flows.len(), 2);
    assert_eq!(s.flows[0].name, "flow1");
    assert_eq!(s.flows[0].end, FlowEnd::Stop(Duration::from_secs(40)));
    assert_eq!(s.flows[1].name, "fg");
    assert_eq!(s.flows[1].end, FlowEnd::Bytes(10_000_000));
    assert_eq!(s.flows[1].rtt, Duration::from_millis(100));
    assert_eq!(
        netem_paths(&s.link, &s.flows),
        vec![
            (Upstream::QuicBulk, Duration::from_millis(50)),
            (Upstream::QuicBulk, Duration::from_millis(100))
        ]
    );
    assert!(s.flows.iter().all(|f| f.kind == FlowKind::QuicBulk));
}

#[test]
fn pacing_is_on_unless_the_flow_or_the_link_says_otherwise() {
    let s = parse(Path::new("s.toml"), GOOD).unwrap();
    assert!(s.flows.iter().all(|f| f.pacing));
    let one_flow = GOOD.replace("name = \"fg\"", "name = \"fg\"\npacing = false");
    let s = parse(Path::new("s.toml"), &one_flow).unwrap();
    assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (true, false));
    let link_wide = GOOD.replace("buffer = \"500ms\"", "buffer = \"500ms\"\npacing = false");
    let s = parse(Path::new("s.toml"), &link_wide).unwrap();
    assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (false, false));
    let flow_overrides = link_wide.replace("name = \"fg\"", "name = \"fg\"\npacing = true");
    let s = parse(Path::new("s.toml"), &flow_overrides).unwrap();
    assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (false, true));
    assert!(
        err(&GOOD.replace("name = \"fg\"", "name = \"fg\"\npacing = \"off\""))
            .starts_with("s.toml:19: invalid type: string \"off\", expected a boolean")
    );
}

#[test]
fn cross_traffic_is_a_rate_below_the_link_rate() {
    let s = parse(Path::new("s.toml"), GOOD).unwrap();
    assert_eq!(s.link.cross_traffic_bps, None);
    let with = |v: &str| {
        GOOD.replace(
            "buffer = \"500ms\"",
            &format!("buffer = \"500ms\"\ncross_traffic = \"{v}\""),
        )
    };
    let s = parse(Path::new("s.toml"), &with("1mbit")).unwrap();
    assert_eq!(s.link.cross_traffic_bps, Some(1_000_000));
    assert_eq!(
        err(&with("20mbit")),
        "s.toml:6: link cross_traffic must be above zero and below the link rate"
    );
    assert!(
        err(&with("1 mbit/s")).starts_with("s.toml:6: link cross_traffic: "),
        "{}",
        err(&with("1 mbit/s"))
    );
}

#[test]
fn a_real_run_gives_up_grace_past_the_stop_the_start_or_a_deadline() {
    let s = parse(Path::new("s.toml"), GOOD).unwrap();
    // stop = 40s: 40 + 120.
    assert_eq!(s.flows[0].give_up_at(), Duration::from_secs(160));
    // bytes from 10 s, no deadline: 10 + 120.
    assert_eq!(s.flows[1].give_up_at(), Duration::from_secs(130));
    let with = |deadline: &str| {
        let text = GOOD.replace("cc = \"cubic\"", "cc = \"cdg\"").replace(
            "bytes = \"10MB\"",
            &format!("bytes = \"10MB\"\ndeadline = \"{deadline}\""),
        );
        parse(Path::new("s.toml"), &text).unwrap().flows[1].give_up_at()
    };
    // A loose deadline may be used in full: 10 + 400 + 120.
    assert_eq!(with("400s"), Duration::from_secs(530));
    // An impossible one runs on at a fair share: 10 + 120 + 120.
    assert_eq!(with("20s"), Duration::from_secs(250));
}

#[test]
fn a_deadline_needs_bytes_and_a_steerable_controller() {
    let s = parse(Path::new("s.toml"), GOOD).unwrap();
    assert_eq!(s.flows[1].deadline, None);
    let good = GOOD
        .replace("cc = \"cubic\"", "cc = \"cdg\"")
        .replace("bytes = \"10MB\"", "bytes = \"10MB\"\ndeadline = \"2m\"");
    let s = parse(Path::new("s.toml"), &good).unwrap();
    assert_eq!(s.flows[1].deadline, Some(Duration::from_secs(120)));
    assert_eq!(s.flows[1].cc.as_str(), "cdg");
    assert_eq!(s.flows[1].sender_cc().as_str(), "cdg:deadline=120s");
    assert_eq!(
        err(&GOOD.replace("bytes = \"10MB\"", "bytes = \"10MB\"\ndeadline = \"2m\"")),
        "s.toml:17: flow deadline: 'cubic' is quiche's own controller: a deadline steers only cdg and ledbatpp"
    );
    assert_eq!(
        err(&GOOD.replace(
            "stop = \"40s\"\n[[flow]]",
            "stop = \"40s\"\ndeadline = \"9s\"\n[[flow]]"
        )),
        "s.toml:13: a flow's deadline needs 'bytes' (not 'stop')"
    );
    assert_eq!(
        err(&good.replace(
            "deadline = \"2m\"",
            "deadline = \"2m\"\ndirection = \"upload\""
        )),
        "s.toml:17: a flow's deadline needs a download (not direction = \"upload\")"
    );
    assert_eq!(
        err(&good.replace("\"2m\"", "\"2\"")),
        "s.toml:17: flow deadline: bad duration '2': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
    );
}

#[test]
fn errors_name_the_line() {
    for (text, want) in [
        (
            GOOD.replace("rate = \"20mbit\"", "rate = \"20mbit\"\nspeed = 3"),
            "s.toml:4: unknown field `speed`, expected one of `rate`, `rtt`, `buffer`, `loss`, `cross_traffic`, `pacing`, `aqm`, `codel_target`, `codel_interval`, `fq_flows`, `fq_quantum`, `pie_target`, `pie_tupdate`, `pie_alpha`, `pie_beta`, `pie_max_burst`, `loss_model`, `ge_p`, `ge_r`, `ge_h`, `ge_k`, `reverse_rate`, `reverse_buffer`, `reverse_loss`, `jitter`, `jitter_model`, `reorder`, `aggregate`, `trace`, `reverse_trace`, `change`",
        ),
        (
            GOOD.replace("\"50ms\"", "\"50\""),
            "s.toml:4: link rtt: bad duration '50': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)",
        ),
        (
            GOOD.replace("cc = \"cubic\"", "cc = \"vegas\""),
            "s.toml:14: flow cc: unknown congestion controller 'vegas' (allowed: cubic, reno, bbr2, ledbatpp, ledbat, cdg, fixed)",
        ),
        (
            GOOD.replace("stop = \"40s\"\n[[flow]]", "stop = \"0s\"\n[[flow]]"),
            "s.toml:12: flow stop must be after its start",
        ),
        (
            GOOD.replace("bytes = \"10MB\"", "bytes = \"10MB\"\nstop = \"20s\""),
            "s.toml:16: a flow has either 'stop' or 'bytes', not both",
        ),
        (
            GOOD.replace("to = \"40s\"", "to = \"5s\""),
            "s.toml:8: analysis 'to' must be after 'from'",
        ),
        (
            GOOD.replace("to = \"40s\"", "to = \"40s\"\nsteady_queue = \"20\""),
            "s.toml:9: analysis steady_queue: bad duration '20': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)",
        ),
        (
            GOOD.replace("to = \"40s\"", "to = \"40s\"\nsteady_queue = \"20mbit\""),
            "s.toml:9: analysis steady_queue: bad duration '20mbit': unknown unit 'mbit'; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)",
        ),
        (
            GOOD.replace("to = \"40s\"", "to = \"40s\"\nrefill_after = \"28\""),
            "s.toml:9: analysis refill_after: bad duration '28': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)",
        ),
        (
            GOOD.replace("name = \"fg\"", "name = \"flow1\""),
            "s.toml:18: flow name 'flow1' is used twice",
        ),
        (
            format!("{GOOD}[ports]\nserver = 5001\nnetem = 5000\n"),
            "s.toml:20: ports overlap: the server's 5001 is among lbe-netem's 5000..5001 (one per base RTT of quic-bulk flows, one per h3 or workload flow)",
        ),
        (
            "[link]\nrate = \"20mbit\"\nrtt = \"5ms\"\nbuffer = \"0.1ms\"\n".to_string(),
            "s.toml:4: link buffer must hold at least one packet (1500 bytes)",
        ),
        (
            "[link]\nrate = \"20mbit\"\nrtt = \"5ms\"\nbuffer = \"10ms\"\n".to_string(),
            "s.toml:1: the scenario has no [[flow]]",
        ),
    ] {
        assert_eq!(err(&text), want, "{text}");
    }
    assert!(err("[[flow]]\ncc = \"cubic\"\nstop = \"1s\"\n").contains("missing field `link`"));
    assert!(err("[link\n").starts_with("s.toml:1: "));
}

const WORKLOADS: &str = r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[[flow]]
cc = "ledbatpp"
stop = "30s"
[[flow]]
kind = "web"
arrivals = "2/s"
sizes = ["50kB", "500kB", "2MB"]
start = "2s"
stop = "30s"
[[flow]]
kind = "ping"
stop = "30s"
rtt = "20ms"
[[flow]]
kind = "video"
stop = "30s"
[[flow]]
kind = "cbr"
rate = "2mbit"
on = "5s"
off = "5s"
stop = "30s"
"#;

#[test]
fn workload_kinds_and_their_defaults() {
    let s = parse(Path::new("s.toml"), WORKLOADS).unwrap();
    let kinds: Vec<&str> = s.flows.iter().map(|f| f.kind.name()).collect();
    assert_eq!(kinds, ["quic-bulk", "web", "ping", "video", "cbr"]);
    assert_eq!(
        s.flows[1].kind,
        FlowKind::Web(WebFlow {
            arrivals_per_s: 2.0,
            sizes_bytes: vec![50_000, 500_000, 2_000_000],
        })
    );
    assert_eq!(s.flows[1].cc.as_str(), "cubic");
    assert_eq!(s.flows[1].start, Duration::from_secs(2));
    assert_eq!(s.flows[1].end, FlowEnd::Stop(Duration::from_secs(30)));
    assert_eq!(
        s.flows[2].kind,
        FlowKind::Ping(PingFlow {
            interval: Duration::from_millis(100)
        })
    );
    let video = VideoFlow {
        playout: lbe_workload::playout::PlayoutParams {
            chunk: Duration::from_secs(2),
            startup: Duration::from_secs(2),
            buffer: Duration::from_secs(10),
        },
        bitrate_bps: 5_000_000,
    };
    assert_eq!(s.flows[3].kind, FlowKind::Video(video));
    // 5 Mbit/s × 2 s.
    assert_eq!(video.chunk_bytes(), 1_250_000);
    assert_eq!(
        s.flows[4].kind,
        FlowKind::Cbr(CbrFlow {
            rate_bps: 2_000_000,
            on_off: Some((Duration::from_secs(5), Duration::from_secs(5))),
        })
    );
    // A route per workload flow to its server, at its RTT.
    let ms = Duration::from_millis;
    assert_eq!(
        netem_paths(&s.link, &s.flows),
        vec![
            (Upstream::QuicBulk, ms(50)),
            (Upstream::Workload(1), ms(50)),
            (Upstream::Workload(2), ms(20)),
            (Upstream::Workload(3), ms(50)),
            (Upstream::Workload(4), ms(50)),
        ]
    );
    assert_eq!(netem_path(&s.flows, 2), (Upstream::Workload(2), ms(20)));
    assert_eq!(netem_path(&s.flows, 0), (Upstream::QuicBulk, ms(50)));
    let alone = s.without_bulk().unwrap();
    let names: Vec<&str> = alone.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["flow2", "flow3", "flow4", "flow5"]);
    assert_eq!(alone.link, s.link);
    assert!(alone.without_bulk().is_none(), "nothing to remove");
}

#[test]
fn workload_settings_parse_with_their_units() {
    let text = WORKLOADS
        .replace(
            "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
            "size = \"1MB\"\ncc = \"reno\"",
        )
        .replace("kind = \"ping\"", "kind = \"ping\"\ninterval = \"20ms\"")
        .replace(
            "kind = \"video\"",
            "kind = \"video\"\nchunk = \"4s\"\nbitrate = \"2.5mbit\"\nstartup = \"4s\"\nbuffer = \"30s\"",
        )
        .replace("on = \"5s\"\noff = \"5s\"\n", "");
    let s = parse(Path::new("s.toml"), &text).unwrap();
    assert_eq!(
        s.flows[1].kind,
        FlowKind::Web(WebFlow {
            arrivals_per_s: 2.0,
            sizes_bytes: vec![1_000_000]
        })
    );
    assert_eq!(s.flows[1].cc.as_str(), "reno");
    assert_eq!(
        s.flows[2].kind,
        FlowKind::Ping(PingFlow {
            interval: Duration::from_millis(20)
        })
    );
    let FlowKind::Video(video) = s.flows[3].kind else {
        panic!("not video")
    };
    assert_eq!(
        (
            video.playout.chunk,
            video.playout.startup,
            video.playout.buffer
        ),
        (
            Duration::from_secs(4),
            Duration::from_secs(4),
            Duration::from_secs(30)
        )
    );
    assert_eq!(
        (video.bitrate_bps, video.chunk_bytes()),
        (2_500_000, 1_250_000)
    );
    assert_eq!(
        s.flows[4].kind,
        FlowKind::Cbr(CbrFlow {
            rate_bps: 2_000_000,
            on_off: None
        })
    );
}

#[test]
fn workload_errors_name_the_line_and_what_is_allowed() {
    for (from, to, expected) in [
        (
            "arrivals = \"2/s\"",
            "arrivals = \"0/s\"",
            "s.toml:11: flow arrivals: arrival rate '0/s' must be above zero",
        ),
        (
            "arrivals = \"2/s\"",
            "arrivals = \"2\"",
            "s.toml:11: flow arrivals: bad arrival rate '2': expected arrivals per unit of time, like 2/s, 30/min or 100/h",
        ),
        (
            "arrivals = \"2/s\"\n",
            "",
            "s.toml:9: a web flow needs 'arrivals' (a mean rate, like \"2/s\")",
        ),
        (
            "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
            "sizes = [\"50kB\", \"0B\"]",
            "s.toml:12: flow sizes must be above zero",
        ),
        (
            "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
            "sizes = []",
            "s.toml:12: flow sizes must list at least one size",
        ),
        (
            "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
            "size = \"0kB\"",
            "s.toml:12: flow size must be above zero",
        ),
        (
            "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
            "size = \"1MB\"\nsizes = [\"1MB\"]",
            "s.toml:13: a web flow has either 'size' or 'sizes', not both",
        ),
        (
            "sizes = [\"50kB\", \"500kB\", \"2MB\"]\n",
            "",
            "s.toml:9: a web flow needs 'size' (or 'sizes': the bytes of each download)",
        ),
        (
            "start = \"2s\"\nstop = \"30s\"",
            "start = \"2s\"\nbytes = \"1MB\"",
            "s.toml:14: flow bytes: a web flow does not take 'bytes' (it takes kind, name, start, stop, rtt, arrivals, size, sizes, cc)",
        ),
        (
            "start = \"2s\"\nstop = \"30s\"",
            "start = \"2s\"",
            "s.toml:9: a web flow needs 'stop' (when it ends)",
        ),
        (
            "kind = \"ping\"",
            "kind = \"ping\"\ninterval = \"0ms\"",
            "s.toml:17: flow interval must be above zero",
        ),
        (
            "kind = \"ping\"",
            "kind = \"ping\"\ncc = \"cubic\"",
            "s.toml:17: flow cc: a ping flow does not take 'cc' (it takes kind, name, start, stop, rtt, interval)",
        ),
        (
            "kind = \"ping\"",
            "kind = \"ping\"\nrate = \"1mbit\"",
            "s.toml:17: flow rate: a ping flow does not take 'rate' (it takes kind, name, start, stop, rtt, interval)",
        ),
        (
            "kind = \"video\"",
            "kind = \"video\"\nstartup = \"12s\"",
            "s.toml:21: flow startup must not exceed its buffer (play would never start: no chunk is requested once the buffer holds 'buffer')",
        ),
        (
            "kind = \"video\"",
            "kind = \"video\"\nbitrate = \"0mbit\"",
            "s.toml:21: flow bitrate: bad rate '0mbit': must be above zero",
        ),
        (
            "rate = \"2mbit\"",
            "rate = \"-2mbit\"",
            "s.toml:24: flow rate: bad rate '-2mbit': expected a number with a unit bit, kbit, mbit, gbit or tbit (e.g. 20mbit)",
        ),
        (
            "rate = \"2mbit\"\n",
            "",
            "s.toml:22: a cbr flow needs 'rate' (its sending rate, like \"2mbit\")",
        ),
        (
            "off = \"5s\"\n",
            "",
            "s.toml:25: a cbr flow takes 'on' and 'off' together (on for 'on', then off for 'off', in turn)",
        ),
        (
            "kind = \"cbr\"",
            "kind = \"udp\"",
            "s.toml:23: flow kind: 'udp' is not a flow kind (allowed: quic-bulk, h3, web, ping, video, cbr)",
        ),
        (
            "cc = \"ledbatpp\"",
            "cc = \"ledbatpp\"\ninterval = \"1s\"",
            "s.toml:8: flow interval: only ping flows (kind = \"ping\") take 'interval'",
        ),
    ] {
        assert_eq!(text_count(WORKLOADS, from), 1, "{from}");
        assert_eq!(err(&WORKLOADS.replacen(from, to, 1)), expected, "{to}");
    }
}

fn text_count(text: &str, part: &str) -> usize {
    text.matches(part).count()
}

const H3: &str = r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[[flow]]
cc = "cubic"
stop = "40s"
[[flow]]
kind = "h3"
bytes = "10MB"
"#;

/// `H3` with `extra` lines added to its h3 flow (line 12 onwards).
fn h3(extra: &str) -> String {
    format!("{H3}{extra}")
}

/// `H3` with `extra` lines added to its quic-bulk flow after its `cc`
/// (line 7; `extra` from line 8).
fn h3_with_bulk_flow(extra: &str) -> String {
    H3.replace("cc = \"cubic\"\n", &format!("cc = \"cubic\"\n{extra}"))
}

fn h3_flow(text: &str) -> (FlowKind, String) {
    let s = parse(Path::new("s.toml"), text).unwrap();
    (s.flows[1].kind.clone(), s.flows[1].cc.to_string())
}

#[test]
fn h3_flows_default_to_h3_serve_without_background() {
    let plain = H3Flow {
        server: H3Server::H3Serve,
        background: false,
        lbe: None,
    };
    assert_eq!(h3_flow(H3), (FlowKind::H3(plain), "cubic".to_string()));
    let s = parse(Path::new("s.toml"), H3).unwrap();
    assert_eq!(s.flows[0].kind, FlowKind::QuicBulk);
    assert_eq!(s.flows[1].end, FlowEnd::Bytes(10_000_000));
    // One listening address for the quic-bulk flows, a route for the
    // h3 flow.
    assert_eq!(
        netem_paths(&s.link, &s.flows),
        vec![
            (Upstream::QuicBulk, Duration::from_millis(50)),
            (Upstream::H3(1), Duration::from_millis(50))
        ]
    );
}

#[test]
fn an_h3_flows_controller_is_its_servers() {
    let with = |server: &str, background: bool, lbe: Option<Lbe>| H3Flow {
        server: match server {
            "aioquic" => H3Server::Aioquic,
            "quiche-stock" => H3Server::QuicheStock,
            _ => H3Server::H3Serve,
        },
        background,
        lbe,
    };
    for (extra, flow, cc) in [
        (
            "background = true",
            with("h3-serve", true, None),
            "ledbatpp",
        ),
        (
            "background = true\nlbe = \"sender\"\ncc = \"cdg:g=3\"",
            with("h3-serve", true, Some(Lbe::Sender)),
            "cdg:g=3",
        ),
        (
            "background = true\nlbe = \"both\"",
            with("h3-serve", true, Some(Lbe::Both)),
            "ledbatpp",
        ),
        (
            "server = \"quiche-stock\"\nbackground = true",
            with("quiche-stock", true, None),
            "cubic",
        ),
        (
            "server = \"aioquic\"\nbackground = true\nlbe = \"receiver\"",
            with("aioquic", true, Some(Lbe::Receiver)),
            "reno",
        ),
        ("server = \"aioquic\"", with("aioquic", false, None), "reno"),
    ] {
        assert_eq!(
            h3_flow(&h3(extra)),
            (FlowKind::H3(flow), cc.to_string()),
            "{extra}"
        );
    }
}

#[test]
fn h3_keys_are_checked_on_one_line() {
    for (text, expected) in [
        (
            h3("kind = \"h2\""),
            "s.toml:12: duplicate key `kind` in table `flow`",
        ),
        (
            H3.replace("kind = \"h3\"", "kind = \"h2\""),
            "s.toml:10: flow kind: 'h2' is not a flow kind (allowed: quic-bulk, h3, web, ping, video, cbr)",
        ),
        (
            h3("server = \"nginx\""),
            "s.toml:12: flow server: 'nginx' is not an h3 server (allowed: h3-serve, quiche-stock, aioquic)",
        ),
        (
            h3("background = true\nlbe = \"client\""),
            "s.toml:13: flow lbe: 'client' is not an lbe mode (allowed: receiver, sender, both)",
        ),
        (
            h3("lbe = \"receiver\""),
            "s.toml:12: flow lbe: needs background = true (a normal download runs no LBE)",
        ),
        (
            h3("background = false\nlbe = \"receiver\""),
            "s.toml:13: flow lbe: needs background = true (a normal download runs no LBE)",
        ),
        (
            h3("server = \"aioquic\"\nbackground = true\nlbe = \"sender\""),
            "s.toml:14: flow lbe: 'sender' needs server = \"h3-serve\" ('aioquic' does no LBE of its own; with it lbe = \"receiver\" only)",
        ),
        (
            h3("server = \"quiche-stock\"\nbackground = true\nlbe = \"both\""),
            "s.toml:14: flow lbe: 'both' needs server = \"h3-serve\" ('quiche-stock' does no LBE of its own; with it lbe = \"receiver\" only)",
        ),
        (
            h3("cc = \"ledbatpp\""),
            "s.toml:12: flow cc: an h3 flow's controller is its server's; cc (h3-serve's --background-cc) needs server = \"h3-serve\" and background = true",
        ),
        (
            h3("server = \"aioquic\"\nbackground = true\ncc = \"ledbatpp\""),
            "s.toml:14: flow cc: an h3 flow's controller is its server's; cc (h3-serve's --background-cc) needs server = \"h3-serve\" and background = true",
        ),
        (
            h3("background = true\nlbe = \"receiver\""),
            "s.toml:13: flow lbe: 'receiver' with server = \"h3-serve\" is both (h3-serve honours the priority u=7 that --background sends); for receiver-only use server = \"quiche-stock\" or \"aioquic\"",
        ),
        (
            h3("background = true\ncc = \"bbr2\""),
            "s.toml:13: flow cc: --background-cc 'bbr2': quiche cannot switch a live connection to its own 'bbr2'; use one of the plug-ins (ledbatpp, ledbat, cdg, fixed) or plain cubic",
        ),
        (
            h3("pacing = false"),
            "s.toml:12: flow pacing: only quic-bulk flows take 'pacing' (an h3 flow's sender is its server)",
        ),
        (
            h3("deadline = \"60s\""),
            "s.toml:12: flow deadline: only quic-bulk flows take 'deadline' (an h3 flow's sender is its server)",
        ),
        (
            h3("receiver_lbe = true"),
            "s.toml:12: flow receiver_lbe: only quic-bulk flows take 'receiver_lbe' (an h3 flow sets lbe = \"receiver\")",
        ),
        (
            h3("background = \"yes\""),
            "s.toml:12: invalid type: string \"yes\", expected a boolean",
        ),
        (
            h3_with_bulk_flow("server = \"aioquic\"\n"),
            "s.toml:8: flow server: only h3 flows (kind = \"h3\") take 'server'",
        ),
        (
            h3_with_bulk_flow("background = true\n"),
            "s.toml:8: flow background: only h3 flows (kind = \"h3\") take 'background'",
        ),
        (
            h3_with_bulk_flow("kind = \"quic-bulk\"\nlbe = \"both\"\n"),
            "s.toml:9: flow lbe: only h3 flows (kind = \"h3\") take 'lbe'",
        ),
        (
            H3.replace("cc = \"cubic\"\n", ""),
            "s.toml:6: a quic-bulk flow needs 'cc'",
        ),
    ] {
        assert_eq!(err(&text), expected, "{text}");
    }
}

/// A scenario file and its traces in a fresh directory of their own.
fn in_dir(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("lbe-scenario-{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

#[test]
fn links_that_change_read_their_keys() {
    let text = with_link(
        "jitter = \"5ms\"\njitter_model = \"pareto\"\nreorder = true\naggregate = \"4ms\"\n\
         [[link.change]]\nat = \"2s\"\nrate = \"5mbit\"\nrtt = \"80ms\"\n\
         [[link.change]]\nat = \"4s\"\noutage = \"1s\"\nloss = 0.5\njitter = \"1ms\"\nrebind = true",
    );
    let s = parse(Path::new("s.toml"), &text).unwrap();
    let l = &s.link;
    assert_eq!(l.jitter, Duration::from_millis(5));
    assert_eq!(l.jitter_model, lbe_link::JitterModel::Pareto);
    assert!(l.reorder);
    assert_eq!(l.aggregate, Some(Duration::from_millis(4)));
    assert_eq!(
        l.changes,
        vec![
            Change {
                at: Duration::from_secs(2),
                rate_bps: Some(5_000_000),
                rtt: Some(Duration::from_millis(80)),
                ..Change::default()
            },
            Change {
                at: Duration::from_secs(4),
                outage: Some(Duration::from_secs(1)),
                loss: Some(0.5),
                jitter: Some(Duration::from_millis(1)),
                rebind: true,
                ..Change::default()
            },
        ]
    );
    assert_eq!(l.rebinds(), vec![Duration::from_secs(4)]);
    // The path's changes on both directions, the rest on the bottleneck.
    let down = l.bottleneck(1).variation;
    assert_eq!(down.changes[0].rate_bps, Some(5_000_000));
    assert_eq!(down.changes[0].delay_shift_ns, Some(15_000_000));
    assert_eq!(down.changes[1].loss, Some(0.5));
    let up = l.reverse_path(1).variation;
    assert_eq!(
        up.changes,
        vec![
            lbe_link::LinkChange {
                at: Duration::from_secs(2),
                delay_shift_ns: Some(15_000_000),
                ..Default::default()
            },
            lbe_link::LinkChange {
                at: Duration::from_secs(4),
                outage: Some(Duration::from_secs(1)),
                ..Default::default()
            },
        ]
    );
    assert!(l.has_reverse());
    // Without the keys, the link is the fixed one.
    let fixed = parse(Path::new("s.toml"), &with_link("")).unwrap();
    assert!(fixed.link.bottleneck(1).variation.is_fixed());
    assert!(fixed.link.reverse_path(1).variation.is_fixed());
    assert!(!fixed.link.has_reverse());
}

#[test]
fn a_trace_is_read_next_to_the_scenario_and_is_the_rate() {
    let text = "[link]\ntrace = \"traces/t.down\"\nreverse_trace = \"traces/t.up\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                [[flow]]\ncc = \"cubic\"\nstop = \"10s\"\n";
    let dir = in_dir(
        "trace",
        &[
            ("s.toml", text),
            ("traces/t.down", "1\n1\n3\n"),
            ("traces/t.up", "2\n"),
        ],
    );
    let s = load(&dir.join("s.toml")).unwrap();
    assert_eq!(s.link.rate_bps, 12_000_000);
    assert_eq!(s.link.trace.as_ref().unwrap().times_ms, vec![1, 1, 3]);
    assert_eq!(s.link.reverse_trace.as_ref().unwrap().times_ms, vec![2]);
    assert!(s.link.has_reverse());
    // A bad trace: one line naming the scenario's line and the trace's.
    let bad = in_dir(
        "bad-trace",
        &[
            ("s.toml", text),
            ("traces/t.down", "1\n5\nx\n"),
            ("traces/t.up", "2\n"),
        ],
    );
    let path = bad.join("s.toml");
    assert_eq!(
        load(&path).unwrap_err(),
        format!(
            "{}:2: link trace: {}:3: 'x' is not a time in whole milliseconds (e.g. 12)",
            path.display(),
            bad.join("traces/t.down").display()
        )
    );
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(bad).unwrap();
}

#[test]
fn bad_changes_name_the_line() {
    for (extra, want) in [
        (
            "[[link.change]]\nat = \"1s\"\nspeed = \"1mbit\"",
            "s.toml:7: unknown field `speed`, expected one of `at`, `rate`, `rtt`, `jitter`, `loss`, `outage`, `rebind`",
        ),
        (
            "[[link.change]]\nat = \"2s\"\nrtt = \"60ms\"\n[[link.change]]\nat = \"1s\"\nrtt = \"70ms\"",
            "s.toml:9: link change at must be after the previous change's",
        ),
        (
            "[[link.change]]\nat = \"20s\"\nrtt = \"60ms\"",
            "s.toml:6: link change at 20s is beyond the run, which ends at 10s",
        ),
        (
            "[[link.change]]\nat = \"2s\"",
            "s.toml:5: link change changes nothing: give rate, rtt, jitter, loss, outage or rebind = true",
        ),
        (
            "[[link.change]]\nrtt = \"60ms\"",
            "s.toml:5: link change needs 'at' (when it happens)",
        ),
        (
            "[[link.change]]\nat = \"2s\"\noutage = \"0s\"",
            "s.toml:7: link change outage must be above zero",
        ),
        (
            "loss_model = \"ge\"\nge_p = 0.01\nge_r = 0.3\n[[link.change]]\nat = \"2s\"\nloss = 0.1",
            "s.toml:10: link change loss and loss_model = \"ge\" exclude each other: the Gilbert-Elliott channel decides the random loss",
        ),
        (
            "jitter_model = \"gamma\"",
            "s.toml:5: link jitter_model: bad jitter model 'gamma'; expected one of uniform, normal, pareto",
        ),
        (
            "trace = \"traces/none.down\"",
            "s.toml:5: link trace: no trace file traces/none.down",
        ),
    ] {
        assert_eq!(err(&with_link(extra)), want, "{extra}");
    }
}
