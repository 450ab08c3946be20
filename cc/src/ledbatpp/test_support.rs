//! Test helpers shared by the LEDBAT++ tests of every file of this module:
//! a [`Driver`] on a 1200-byte path and the event sequences several tests
//! start from (into congestion avoidance, through the initial slowdown).

pub(super) use super::*;
pub(super) use crate::testkit::ms;
pub(super) use crate::testkit::Driver;
pub(super) use crate::testkit::MSS;

pub(super) const NS: Duration = Duration::from_nanos(1);

/// The pacing rate `ratio` × `cwnd` bytes over `rtt_s` seconds, rounded,
/// as the tests expect it.
pub(super) fn paced(ratio: f64, cwnd: u64, rtt_s: f64) -> Option<u64> {
    Some((ratio * cwnd as f64 / rtt_s).round() as u64)
}

/// A controller on a path whose own initial window (10) LEDBAT++ ignores.
pub(super) fn driver(cfg: LedbatPlusPlusConfig) -> Driver<LedbatPlusPlus> {
    let path = PathInfo {
        max_datagram_size: MSS,
        initial_window_packets: 10,
    };
    Driver::new(LedbatPlusPlus::new(cfg, path))
}

/// A config of `spec`, with `research=true` before it so that it may tune
/// any rule.
pub(super) fn config(spec: &[(&str, &str)]) -> LedbatPlusPlusConfig {
    let mut research = vec![("research", "true")];
    research.extend_from_slice(spec);
    crate::testkit::config(&research, LedbatPlusPlusConfig::set)
}

pub(super) fn state(d: &Driver<LedbatPlusPlus>) -> &'static str {
    d.cc.state(d.now)
}

/// Current filter of one sample; 39 packets and base 35 ms (GAIN 1/4),
/// one ACK of 4 packets (+1200), then q = 90 ms = 1.5·T ends slow start
/// at exactly 48000 bytes.
pub(super) fn in_congestion_avoidance_at_48000(q_sample: Duration) -> Driver<LedbatPlusPlus> {
    let mut d = driver(config(&[("current_filter", "1"), ("init_cwnd", "39")]));
    d.ack_old(ms(1), 4 * MSS, ms(35));
    d.ack_old(ms(1), MSS, q_sample);
    assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
    d
}

/// Base 240 ms (GAIN 1), current filter of one, 10 packets, one ACK per
/// round acknowledging the window: slow start doubles per round, then a
/// 286 ms sample (q = 46 ms > 45 ms) ends it at 48000 bytes. Two rounds
/// later (+1 MSS in the first) the initial slowdown starts. Returns when.
pub(super) fn to_the_initial_slowdown(d: &mut Driver<LedbatPlusPlus>) -> Instant {
    d.ack(d.epoch - ms(240), 12_000, ms(240));
    assert_eq!(d.cc.window(), 24_000);
    d.round(ms(240), 24_000);
    assert_eq!(d.cc.window(), 48_000);
    d.round(ms(286), 48_000);
    assert_eq!((state(d), d.cc.window()), ("congestion_avoidance", 48_000));
    let exit = d.now;
    d.round(ms(240), 48_000);
    assert_eq!((state(d), d.cc.window()), ("congestion_avoidance", 49_200));
    d.round(ms(240), 49_200);
    assert_eq!((state(d), d.cc.window()), ("slowdown", 2 * MSS));
    assert_eq!(d.cc.snapshot().ssthresh, Some(49_200));
    assert_eq!(d.now - exit, ms(480), "2 RTTs after slow start");
    d.now
}

pub(super) fn base_240(extra: &[(&str, &str)]) -> Driver<LedbatPlusPlus> {
    let mut spec = vec![("current_filter", "1"), ("init_cwnd", "10")];
    spec.extend_from_slice(extra);
    driver(config(&spec))
}

/// A jump restore at `r` with srtt 240 ms, then ACKs with q = 180 ms:
/// for packets sent before `r`, for one sent at `r + 240 ms − 1 ns`, then
/// for one sent at `r + 240 ms`. Returns the window and current delay
/// after each group.
pub(super) fn samples_after_restore(spec: &[(&str, &str)]) -> [(u64, Option<Duration>); 3] {
    let mut d = base_240(spec);
    to_the_initial_slowdown(&mut d);
    d.round(ms(240), 2 * MSS);
    d.round(ms(240), 2 * MSS);
    let restored = d.now;
    assert_eq!(d.cc.window(), 49_200);
    let snap = |d: &Driver<LedbatPlusPlus>| (d.cc.window(), d.cc.snapshot().current_delay);
    for _ in 0..10 {
        d.ack_old(ms(1), MSS, ms(420));
    }
    let before = snap(&d);
    d.advance(ms(250));
    d.ack(restored + ms(240) - NS, MSS, ms(420));
    let inside = snap(&d);
    d.advance(ms(1));
    d.ack(restored + ms(240), MSS, ms(420));
    [before, inside, snap(&d)]
}

/// The initial slowdown of [`base_240`] with `extra`, its freeze's two
/// rounds at `freeze_rtt` (base 240 ms). Returns the slowdown's start.
pub(super) fn through_the_initial_freeze(
    extra: &[(&str, &str)],
    freeze_rtt: Duration,
) -> (Driver<LedbatPlusPlus>, Instant) {
    let mut d = base_240(extra);
    let start = to_the_initial_slowdown(&mut d);
    d.round(freeze_rtt, 2 * MSS);
    assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    d.round(freeze_rtt, 2 * MSS);
    (d, start)
}

/// Base 30 ms (GAIN 1/5), current filter of one: 39 packets, one ACK
/// of 5 packets (+1200), then q = 90 ms ends slow start at 48000 bytes.
pub(super) fn base_30_at_48000(extra: &[(&str, &str)]) -> Driver<LedbatPlusPlus> {
    let mut spec = vec![("current_filter", "1"), ("init_cwnd", "39")];
    spec.extend_from_slice(extra);
    let mut d = driver(config(&spec));
    d.ack_old(ms(1), 5 * MSS, ms(30));
    d.ack_old(ms(1), MSS, ms(120));
    assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
    d
}

/// Window, state, pacing rate and every internal of `a` and `b` are the
/// same (the whole controller's `Debug`, which holds every field).
pub(super) fn assert_twins(a: &Driver<LedbatPlusPlus>, b: &Driver<LedbatPlusPlus>) {
    assert_eq!(a.now, b.now);
    assert_eq!(
        (a.cc.window(), state(a), a.cc.pacing_rate()),
        (b.cc.window(), state(b), b.cc.pacing_rate())
    );
    assert_eq!(format!("{:?}", a.cc), format!("{:?}", b.cc));
}

/// A spurious loss: `a` checkpoints, loses a packet sent at `sent` (which
/// must change its state) and rolls back; its twin `b`, through the same
/// events until now, sees none of it. Then both are the same, and still
/// after `then` runs on each.
pub(super) fn assert_spurious_loss_undone(
    a: &mut Driver<LedbatPlusPlus>,
    b: &mut Driver<LedbatPlusPlus>,
    sent: Instant,
    then: impl Fn(&mut Driver<LedbatPlusPlus>),
) {
    assert_twins(a, b);
    a.cc.checkpoint();
    a.loss(sent);
    assert_ne!(a.cc.s, b.cc.s, "the loss changed nothing");
    assert!(a.cc.rollback());
    assert_twins(a, b);
    then(a);
    then(b);
    assert_twins(a, b);
}
