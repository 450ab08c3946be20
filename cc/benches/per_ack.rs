//! Per-ACK cost of each controller.
//!
//! One ACK of one 1200-byte packet every 100 µs; the RTT is 50 ms plus a
//! sawtooth "queue" of 0 to 120 ms (so LEDBAT++ and LEDBAT cross their
//! targets both ways and CDG sees positive and negative gradients); the
//! packet was sent one RTT earlier, so rounds end as on a real path. Every
//! fourth ACK carries no new RTT sample. The event is built inside the timed
//! loop (a few additions), so the figure is an upper bound of `on_ack`.
//!
//! Each controller runs with its defaults (`ledbatpp` is the draft
//! profile), and LEDBAT++ also with `profile=full`.

use std::hint::black_box;
use std::time::Duration;
use std::time::Instant;

use criterion::criterion_group;
use criterion::criterion_main;
use criterion::Criterion;
use criterion::Throughput;
use lbe_cc::AckEvent;
use lbe_cc::AckedPacket;
use lbe_cc::ControllerConfig;
use lbe_cc::PathInfo;
use lbe_cc::RttInfo;

fn per_ack(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_ack");
    group.throughput(Throughput::Elements(1));
    let specs = ControllerConfig::NAMES
        .iter()
        .copied()
        .chain(["ledbatpp:profile=full"]);
    for name in specs {
        let mut cc = name
            .parse::<ControllerConfig>()
            .unwrap()
            .build(PathInfo::default());
        let mut now = Instant::now();
        let mut i: u64 = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                now += Duration::from_micros(100);
                let rtt = Duration::from_micros(50_000 + (i * 37) % 120_000);
                let acked = [AckedPacket {
                    bytes: 1200,
                    time_sent: now - rtt,
                }];
                let ack = AckEvent {
                    now,
                    acked: &acked,
                    bytes_in_flight: cc.window(),
                    rtt: RttInfo {
                        latest_rtt: rtt,
                        ack_delay: Duration::from_micros(i % 25_000),
                        new_sample: !i.is_multiple_of(4),
                        min_rtt: Duration::from_millis(50),
                        smoothed_rtt: rtt,
                        rttvar: Duration::from_millis(5),
                        max_ack_delay: Duration::from_millis(25),
                    },
                    one_way_delay: None,
                };
                cc.on_ack(black_box(&ack));
                black_box(cc.window())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, per_ack);
criterion_main!(benches);
