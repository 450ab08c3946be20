//! Accuracy benchmark for lbe-netem: delivered rate against the configured
//! rate on a saturated link, and added delay on an empty queue.
//!
//!     cd apps/lbe-netem && CARGO_TARGET_DIR=/tmp/target-netem \
//!         cargo bench --bench accuracy -- [--rates 20mbit,100mbit] [--rtt 50ms] \
//!         [--seconds 10] [--probes 2000] [--load 2] [--realtime] [--spin 0ms]
//!
//! Everything runs over 127.0.0.1 in this process: the emulator (through its
//! library API), a "server" thread and a "client" thread on blocking sockets.
//!
//! Rate: the server sends 1200-byte datagrams paced at 1.2x the rate; the
//! client counts what arrives over the middle of the run (after 1 s of
//! warm-up, so the buffer is full and drops are steady) and compares wire
//! bytes (payload + 28) per second to the configured rate.
//!
//! Delay: the client sends small probes (100 bytes) one at a time through
//! the idle emulator to an echo server and measures each round trip. The
//! expected value is rtt + the probe's serialisation time on the bottleneck;
//! the excess over it is reported as percentiles, first on an otherwise idle
//! machine, then with `--load` threads burning CPU (all cores busy, as when
//! the two endpoints of a transfer run on the same machine). The direct
//! loopback round trip (no emulator) is shown for reference: it is part of
//! the excess.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use lbe_netem::units::{parse_duration, parse_rate};
use lbe_netem::{Buffer, Config, Netem};

#[derive(Parser, Debug)]
struct Args {
    /// Rates to saturate, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_rate, default_value = "20mbit,100mbit")]
    rates: Vec<u64>,
    /// Base RTT of the emulated path.
    #[arg(long, value_parser = parse_duration, default_value = "50ms")]
    rtt: Duration,
    /// Seconds of each saturation run.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Probes per delay run.
    #[arg(long, default_value_t = 2000)]
    probes: usize,
    /// CPU-burning threads during the loaded delay run.
    #[arg(long, default_value_t = 2)]
    load: usize,
    /// Run the emulator's thread under SCHED_FIFO.
    #[arg(long)]
    realtime: bool,
    /// The emulator's busy-wait before each deadline.
    #[arg(long, value_parser = parse_duration, default_value = "0ms")]
    spin: Duration,
    /// Rate of the link in the delay runs.
    #[arg(long, value_parser = parse_rate, default_value = "20mbit")]
    delay_rate: u64,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

const OVERHEAD: u64 = 28;
const BULK_SIZE: usize = 1200;
const PROBE_SIZE: usize = 100;

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn netem(args: &Args, upstream: SocketAddr, rate: u64, buffer: Buffer) -> lbe_netem::NetemHandle {
    let mut c = Config::new(localhost(), upstream, rate, args.rtt, buffer);
    c.realtime = args.realtime;
    c.spin = args.spin;
    Netem::spawn(c).expect("start lbe-netem")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

/// Delivered rate on a saturated link: (measured wire bit/s, drops seen).
fn saturate(args: &Args, rate: u64) -> (f64, u64, f64) {
    let server = UdpSocket::bind(localhost()).unwrap();
    let upstream = server.local_addr().unwrap();
    let n = netem(
        args,
        upstream,
        rate,
        Buffer::Time(Duration::from_millis(100)),
    );
    let total = Duration::from_secs(args.seconds);
    let epoch = Instant::now();

    let sender = std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        server
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let (_, peer) = server.recv_from(&mut buf).expect("start datagram");
        let pps = rate as f64 * 1.2 / ((BULK_SIZE as u64 + OVERHEAD) * 8) as f64;
        let start = Instant::now();
        let mut sent = 0u64;
        let mut data = vec![0u8; BULK_SIZE];
        while start.elapsed() < total {
            let due = (start.elapsed().as_secs_f64() * pps) as u64;
            while sent < due {
                let ns = epoch.elapsed().as_nanos() as u64;
                data[..8].copy_from_slice(&ns.to_le_bytes());
                let _ = server.send_to(&data, peer);
                sent += 1;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    });

    let client = UdpSocket::bind(localhost()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    client.send_to(b"start", n.listen_addr()).unwrap();
    let mut buf = vec![0u8; 2048];
    let from = Duration::from_secs(1) + args.rtt;
    let to = total.saturating_sub(Duration::from_millis(500));
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    let mut bytes = 0u64;
    let mut owd = Vec::new();
    let t0 = Instant::now();
    while let Ok(len) = client.recv(&mut buf) {
        let now = Instant::now();
        let el = now.duration_since(t0);
        if el < from {
            continue;
        }
        if el > to {
            break;
        }
        let sent_ns = u64::from_le_bytes(buf[..8].try_into().unwrap());
        owd.push((epoch.elapsed().as_nanos() as u64 - sent_ns) as f64 / 1e6);
        // Count the bytes between the first and the last arrival.
        if first.is_none() {
            first = Some(now);
        } else {
            bytes += len as u64 + OVERHEAD;
        }
        last = now;
    }
    sender.join().unwrap();
    let summary = n.stop().unwrap();
    let secs = last.duration_since(first.unwrap_or(last)).as_secs_f64();
    owd.sort_by(f64::total_cmp);
    (
        bytes as f64 * 8.0 / secs,
        summary.down.drops_buffer,
        percentile(&owd, 0.5),
    )
}

/// Round trips of `count` probes to `target`, in ms.
fn probe(target: SocketAddr, count: usize) -> Vec<f64> {
    let s = UdpSocket::bind(localhost()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0u8; 2048];
    let mut out = Vec::with_capacity(count);
    let mut data = [0u8; PROBE_SIZE];
    for i in 0..count as u64 {
        data[..8].copy_from_slice(&i.to_le_bytes());
        let t = Instant::now();
        s.send_to(&data, target).unwrap();
        loop {
            match s.recv(&mut buf) {
                Ok(_) if buf[..8] == data[..8] => break,
                Ok(_) => continue,
                Err(e) => panic!("probe {i} lost: {e}"),
            }
        }
        out.push(t.elapsed().as_secs_f64() * 1e3);
        std::thread::sleep(Duration::from_micros(1500));
    }
    out.sort_by(f64::total_cmp);
    out
}

fn echo_server() -> (SocketAddr, Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let s = UdpSocket::bind(localhost()).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let addr = s.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let h = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !stop2.load(Ordering::Relaxed) {
            if let Ok((n, from)) = s.recv_from(&mut buf) {
                let _ = s.send_to(&buf[..n], from);
            }
        }
    });
    (addr, stop, h)
}

fn burn(threads: usize) -> (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let hs = (0..threads)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for i in 0..10_000u64 {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
                    }
                    std::hint::black_box(x);
                }
            })
        })
        .collect();
    (stop, hs)
}

fn report(label: &str, rtts: &[f64], expected_ms: f64) {
    let ex = |p| (percentile(rtts, p) - expected_ms) * 1e3;
    println!(
        "{label:<28} n={:<5} p50 {:>7.1} us  p90 {:>7.1} us  p99 {:>7.1} us  max {:>8.1} us",
        rtts.len(),
        ex(0.5),
        ex(0.9),
        ex(0.99),
        (rtts.last().copied().unwrap_or(f64::NAN) - expected_ms) * 1e3,
    );
}

fn main() {
    let args = Args::parse();
    println!(
        "lbe-netem accuracy (realtime: {}, spin: {:?}, rtt {:?})",
        args.realtime, args.spin, args.rtt
    );

    println!(
        "\n== delivered rate, saturated (1200-byte datagrams offered at 1.2x, buffer 100ms) =="
    );
    for &rate in &args.rates {
        let (measured, drops, owd_p50) = saturate(&args, rate);
        println!(
            "rate {:>8.3} Mbit/s: delivered {:>8.3} Mbit/s  ratio {:.5}  ({} buffer drops, one-way delay p50 {:.1} ms)",
            rate as f64 / 1e6,
            measured / 1e6,
            measured / rate as f64,
            drops,
            owd_p50,
        );
    }

    println!(
        "\n== added delay, empty queue ({PROBE_SIZE}-byte probes, excess over rtt + serialisation) =="
    );
    let (echo, stop_echo, echo_thread) = echo_server();
    let direct = probe(echo, args.probes.min(500));
    report("direct loopback (no netem)", &direct, 0.0);
    let ser_ms = 2.0 * (PROBE_SIZE as u64 + OVERHEAD) as f64 * 8e3 / args.delay_rate as f64;
    // Serialisation applies to the bottleneck direction only.
    let expected = args.rtt.as_secs_f64() * 1e3 + ser_ms / 2.0;
    let n = netem(
        &args,
        echo,
        args.delay_rate,
        Buffer::Time(Duration::from_millis(500)),
    );
    let idle = probe(n.listen_addr(), args.probes);
    report("through netem, idle", &idle, expected);
    let (stop_burn, burners) = burn(args.load);
    let loaded = probe(n.listen_addr(), args.probes);
    stop_burn.store(true, Ordering::Relaxed);
    for b in burners {
        b.join().unwrap();
    }
    report(
        &format!("through netem, {} busy thr", args.load),
        &loaded,
        expected,
    );
    n.stop().unwrap();
    stop_echo.store(true, Ordering::Relaxed);
    echo_thread.join().unwrap();
}
