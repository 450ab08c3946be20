//! The controllers as the bridge sees them: names, specs (`FromStr`),
//! `build`, initial windows, states and snapshots.

use std::time::Duration;
use std::time::Instant;

use lbe_cc::ControllerConfig;
use lbe_cc::PathInfo;

fn config(spec: &str) -> Result<ControllerConfig, String> {
    spec.parse().map_err(|e: lbe_cc::SpecError| e.to_string())
}

#[test]
fn every_name_builds_a_controller_of_that_name() {
    assert_eq!(
        ControllerConfig::NAMES,
        ["ledbatpp", "ledbat", "cdg", "fixed"]
    );
    for name in ControllerConfig::NAMES {
        let cfg = ControllerConfig::default_for(name).unwrap();
        assert_eq!(cfg.name(), *name);
        assert_eq!(cfg.build(PathInfo::default()).name(), *name);
    }
    assert!(ControllerConfig::default_for("cubic").is_none());
    assert!(ControllerConfig::default_for("LEDBAT").is_none());
}

#[test]
fn initial_windows_states_and_snapshots() {
    let now = Instant::now();
    let path = PathInfo {
        max_datagram_size: 1350,
        initial_window_packets: 10,
    };
    let cases = [
        ("ledbatpp", 2700, "slow_start"),
        ("ledbatpp:init_cwnd=10", 13_500, "slow_start"),
        ("ledbat", 2700, "congestion_avoidance"),
        ("ledbat:slow_start=true", 2700, "slow_start"),
        ("cdg", 13_500, "slow_start"),
        ("fixed", 8 * 1350, "fixed"),
    ];
    for (spec, window, state) in cases {
        let cc = config(spec).unwrap().build(path);
        assert_eq!(cc.window(), window, "{spec}");
        assert_eq!(cc.state(now), state, "{spec}");
        assert_eq!(cc.snapshot().cwnd, window, "{spec}");
        assert_eq!(
            cc.pacing_rate(),
            None,
            "{spec}: quiche paces from the window"
        );
    }
    let snap = config("ledbatpp").unwrap().build(path).snapshot();
    assert_eq!(snap.target, Some(Duration::from_millis(60)));
    assert_eq!(snap.gain, Some(1.0 / 16.0));
    assert_eq!(snap.base_delay, None);
    let snap = config("ledbat").unwrap().build(path).snapshot();
    assert_eq!(snap.target, Some(Duration::from_millis(100)));
    for (spec, target) in [
        ("ledbatpp", Some(60)),
        ("ledbatpp:target=25ms", Some(25)),
        ("ledbat", Some(100)),
        ("cdg", None),
        ("fixed", None),
    ] {
        assert_eq!(
            config(spec).unwrap().target(),
            target.map(Duration::from_millis),
            "{spec}"
        );
    }
    let snap = config("cdg:g=0.5").unwrap().build(path).snapshot();
    assert_eq!(snap.backoff_scale, Some(Duration::from_micros(500)));
    assert_eq!(snap.gradient_us, None);
}

#[test]
fn spec_strings_of_the_design_notes_are_accepted() {
    for spec in [
        "ledbatpp",
        "ledbatpp:target=60ms",
        "ledbatpp:target=25ms",
        "ledbatpp:research=true,restore=jump",
        "ledbatpp:research=true,skip_rtt_after_restore=true",
        "ledbatpp:profile=draft",
        "ledbatpp:profile=seed",
        "ledbatpp:research=true,profile=seed,restore=slow_start",
        "ledbatpp:research=true,profile=full,pacing_rtt=smoothed,target_margin=0ms",
        "ledbat:target=5ms,decrease_gain=10",
        "ledbat:slow_start=true",
        "ledbat:research=true,dynamic_gain=true",
        "ledbat:research=true,target=250ms,gain=4",
        "cdg:g=3",
        "cdg:g=0.5",
        "cdg:shadow_window=true,ineffective_backoff=true",
        "cdg:seed=42",
    ] {
        config(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    }
    assert_eq!(
        config("ledbatpp:target=25ms").unwrap(),
        config("ledbatpp:target=0.025s").unwrap()
    );
    assert_ne!(config("cdg:g=0.5").unwrap(), config("cdg").unwrap());
}

#[test]
fn bad_values_say_what_is_allowed() {
    let cases = [
        (
            "ledbatpp:target=60",
            "bad value '60' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms to 1s",
        ),
        (
            "ledbatpp:research=true,restore=never",
            "bad value 'never' for 'restore': expected one of slow_start, jump, guarded",
        ),
        (
            "ledbat:decrease_gain=1000",
            "bad value '1000' for 'decrease_gain': expected a number from 0.1 to 100",
        ),
        (
            "ledbat:min_cwnd=0",
            "bad value '0' for 'min_cwnd': expected a whole number from 1 to 64",
        ),
        (
            "ledbat:target=200ms",
            "bad value '200ms' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms to 100ms (RFC 6817 §2.5: \"TARGET MUST be 100 milliseconds or less\"; research=true before it allows up to 1s)",
        ),
        (
            "ledbat:gain=2",
            "bad value '2' for 'gain': expected a number from 0.01 to 1 (RFC 6817 §2.5: \"GAIN MUST be set to 1 or less\"; research=true before it allows up to 100)",
        ),
        (
            "ledbatpp:research=true,pacing_rtt=latest",
            "bad value 'latest' for 'pacing_rtt': expected one of smoothed, current",
        ),
        (
            "ledbatpp:research=true,target_margin=2s",
            "bad value '2s' for 'target_margin': expected a duration with a unit (e.g. 60ms) from 0ms to 1s",
        ),
        (
            "ledbatpp:profile=fast",
            "bad value 'fast' for 'profile': expected one of draft, seed, full",
        ),
        (
            "ledbatpp:profile=full,target_fraction=off",
            "parameter 'target_fraction' for 'ledbatpp' tunes a rule: it needs research=true before it (e.g. ledbatpp:research=true,target_fraction=...)",
        ),
        (
            "ledbatpp:profile=full,fq_yield=off,research=true",
            "parameter 'fq_yield' for 'ledbatpp' tunes a rule: it needs research=true before it (e.g. ledbatpp:research=true,fq_yield=...)",
        ),
        (
            "ledbatpp:speed=fast",
            "unknown parameter 'speed' for 'ledbatpp' (allowed: research, profile, target, delay, min_cwnd, init_cwnd; research=true also takes: gain_divisor_max, decrease_constant, ss_exit, slowdown, slowdown_rtts, initial_slowdown_rtts, slowdown_interval, restore, skip_rtt_after_restore, empty_queue, slowdown_duty, slowdown_period_min, slowdown_period_max, gentle_freeze, follow_route, jitter_allowance, loss_on_empty_queue, random_loss_max, decrease, fill_empty_queue, fill_quiet, target_margin, pacing_rtt, fill_window_limited, target_fraction, target_min, gain_max_queue, sharp_decrease, gain_quiet, fq_yield, current_filter, base_history, base_bucket)",
        ),
        (
            "cdg:g=-3",
            "bad value '-3' for 'g': expected a number from 0.001 to 100000",
        ),
        (
            "cdg:beta=0.05",
            "bad value '0.05' for 'beta': expected a number from 0.1 to 0.99",
        ),
        (
            "cdg:window=100",
            "bad value '100' for 'window': expected a whole number from 1 to 64",
        ),
        (
            "cdg:shadow_window=maybe",
            "bad value 'maybe' for 'shadow_window': expected true or false",
        ),
    ];
    for (spec, message) in cases {
        assert_eq!(
            config(spec).unwrap_err(),
            format!("--cc '{spec}': {message}"),
            "{spec}"
        );
    }
    let e = config("ledbat:restore=jump").unwrap_err();
    assert!(
        e.starts_with(
            "--cc 'ledbat:restore=jump': unknown parameter 'restore' for 'ledbat' (allowed: "
        ),
        "{e}"
    );
}
