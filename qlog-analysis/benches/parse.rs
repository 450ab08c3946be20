//! Parse throughput (MB/s) on a large generated qlog (written with the qlog
//! crate's streamer, like quiche's): the reader alone, and the full analysis.
//!
//! `CARGO_TARGET_DIR=/tmp/target-qa cargo bench --bench parse`; the size of
//! the generated trace is set by `QA_BENCH_SECONDS` (default 60 s of a
//! 20 Mbit/s flow, about 60 MB).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use qlog_analysis::reader::{read_qlog, Event};
use qlog_analysis::synth::{write_sender_file, SynthFlow};
use qlog_analysis::{analyze, Options};

fn parse(c: &mut Criterion) {
    let seconds: f64 = std::env::var("QA_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60.0);
    let dir = std::env::temp_dir().join(format!("qa-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench-server-ledbatpp.sqlog");
    let flow = SynthFlow {
        rate_bps: 20e6,
        duration_s: seconds,
        loss_every: 200,
        slowdown_every_s: 5.0,
        ..Default::default()
    };
    write_sender_file(&flow, &path).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    eprintln!("generated {} ({:.1} MB)", path.display(), size as f64 / 1e6);

    let mut g = c.benchmark_group("qlog");
    g.throughput(Throughput::Bytes(size));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("read", |b| {
        b.iter(|| {
            let mut n = 0u64;
            read_qlog(&path, &mut |_: Event| n += 1).unwrap();
            n
        })
    });
    g.bench_function("analyze", |b| {
        b.iter(|| analyze([&path], &Options::default()).unwrap().flows[0].total_bytes)
    });
    g.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, parse);
criterion_main!(benches);
