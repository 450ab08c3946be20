//! Accuracy benchmark for lbe-netem: delivered rate against the configured
//! rate on a saturated link, and added delay on an empty queue.
//!
//!     cd apps/lbe-netem && CARGO_TARGET_DIR=/tmp/target-netem \
//!         cargo bench --bench accuracy -- [--rates 20mbit,100mbit,300mbit] [--rtt 50ms] \
//!         [--seconds 10] [--probes 2000] [--load 2] [--no-realtime] [--spin 0ms]
//!         [--no-rx-timestamps]
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
//! the two endpoints of a transfer run on the same machine). Under load the
//! probe client and echo server are themselves delayed by the burners, so
//! the loaded run is repeated with them under SCHED_FIFO (a "measuring
//! instrument" that the load cannot delay), which isolates what the
//! emulator adds. The direct loopback round trip (no emulator) is shown for
//! reference: it is part of the excess. After each run the emulator's own
//! figures follow: how late it sent datagrams against their due time, and
//! how long they waited in its sockets (compensated through kernel
//! timestamps), plus its CPU use.

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
    #[arg(long, value_delimiter = ',', value_parser = parse_rate, default_value = "20mbit,100mbit,300mbit")]
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
    /// Run the emulator's thread at normal priority, not SCHED_FIFO.
    #[arg(long)]
    no_realtime: bool,
    /// The emulator's busy-wait before each deadline.
    #[arg(long, value_parser = parse_duration, default_value = "0ms")]
    spin: Duration,
    /// Rate of the link in the delay runs.
    #[arg(long, value_parser = parse_rate, default_value = "20mbit")]
    delay_rate: u64,
    /// Take arrival times from when datagrams are read, not from the
    /// kernel's receive timestamps.
    #[arg(long)]
    no_rx_timestamps: bool,
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
    c.realtime = !args.no_realtime;
    c.spin = args.spin;
    c.rx_timestamps = !args.no_rx_timestamps;
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
fn saturate(args: &Args, rate: u64) -> (f64, u64, f64, lbe_netem::Summary) {
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
    big_rcvbuf(&client);
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
        summary,
    )
}

/// Round trips of `count` probes sent to `target` every `gap`, in ms.
/// Probes are pipelined (the next leaves before the previous returns); at
/// 100 bytes every 2 ms they use under 0.5 Mbit/s, so the queue stays empty.
fn probe(target: SocketAddr, count: usize, gap: Duration, rt: bool) -> Vec<f64> {
    if rt {
        realtime(20);
    }
    let s = UdpSocket::bind(localhost()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let tx = s.try_clone().unwrap();
    let epoch = Instant::now();
    let sender = std::thread::spawn(move || {
        if rt {
            realtime(20);
        }
        let mut data = [0u8; PROBE_SIZE];
        for i in 0..count as u32 {
            let due = epoch + gap * i;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let ns = epoch.elapsed().as_nanos() as u64;
            data[..8].copy_from_slice(&ns.to_le_bytes());
            tx.send_to(&data, target).unwrap();
        }
    });
    let mut buf = [0u8; 2048];
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        match s.recv(&mut buf) {
            Ok(_) => {
                let sent = u64::from_le_bytes(buf[..8].try_into().unwrap());
                let rtt_ns = epoch.elapsed().as_nanos() as u64 - sent;
                out.push(rtt_ns as f64 / 1e6);
            }
            Err(e) => panic!("probe lost after {} of {count}: {e}", out.len()),
        }
    }
    sender.join().unwrap();
    if rt {
        normal_priority();
    }
    out.sort_by(f64::total_cmp);
    out
}

/// 4 MiB of receive buffer, so the measuring client does not drop.
fn big_rcvbuf(s: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let v: libc::c_int = 4 << 20;
    // SAFETY: valid fd and a pointer to a live c_int of the size given.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

fn realtime(prio: i32) {
    lbe_netem::timer::set_realtime(prio).expect("SCHED_FIFO for the probes (run as root)");
}

fn normal_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: 0 is the calling thread; `param` is valid.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
}

fn echo_server(rt: bool) -> (SocketAddr, Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let s = UdpSocket::bind(localhost()).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let addr = s.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let h = std::thread::spawn(move || {
        if rt {
            realtime(20);
        }
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

fn print_lateness(label: &str, l: &lbe_netem::Lateness) {
    println!(
        "{label:<28} n={:<5} p50 {:>7.1} us  p99 {:>7.1} us  p99.9 {:>7.1} us  max {:>8.1} us",
        l.count, l.p50, l.p99, l.p999, l.max
    );
}

fn print_summary(s: &lbe_netem::Summary) {
    print_lateness("  netem: send lateness", &s.lateness_us);
    print_lateness("  netem: socket wait (comp.)", &s.rx_wait_us);
    println!(
        "  netem: CPU {:.3} s over {:.1} s ({:.1}% of a core)",
        s.cpu_s,
        s.duration_s,
        100.0 * s.cpu_s / s.duration_s
    );
}

fn main() {
    let args = Args::parse();
    println!(
        "lbe-netem accuracy (realtime: {}, spin: {:?}, rx timestamps: {}, rtt {:?})",
        !args.no_realtime, args.spin, !args.no_rx_timestamps, args.rtt
    );

    println!(
        "\n== delivered rate, saturated (1200-byte datagrams offered at 1.2x, buffer 100ms) =="
    );
    for &rate in &args.rates {
        let (measured, drops, owd_p50, summary) = saturate(&args, rate);
        println!(
            "rate {:>8.3} Mbit/s: delivered {:>8.3} Mbit/s  ratio {:.5}  ({} buffer drops, one-way delay p50 {:.1} ms)",
            rate as f64 / 1e6,
            measured / 1e6,
            measured / rate as f64,
            drops,
            owd_p50,
        );
        println!(
            "  netem: delivered {:.3} Mbit/s on average over its whole run",
            summary.down.delivered_bytes as f64 * 8.0 / summary.duration_s / 1e6
        );
        print_summary(&summary);
    }

    println!(
        "\n== added delay, empty queue ({PROBE_SIZE}-byte probes, excess over rtt + serialisation) =="
    );
    let (echo, stop_echo, echo_thread) = echo_server(false);
    let (echo_rt, stop_echo_rt, echo_rt_thread) = echo_server(true);
    let gap = Duration::from_millis(2);
    let direct = probe(echo, args.probes, gap, false);
    report("direct loopback (no netem)", &direct, 0.0);
    let ser_ms = (PROBE_SIZE as u64 + OVERHEAD) as f64 * 8e3 / args.delay_rate as f64;
    // Serialisation applies to the bottleneck direction only.
    let expected = args.rtt.as_secs_f64() * 1e3 + ser_ms;
    let buffer = Buffer::Time(Duration::from_millis(500));

    let n = netem(&args, echo, args.delay_rate, buffer);
    let idle = probe(n.listen_addr(), args.probes, gap, false);
    report("through netem, idle", &idle, expected);
    print_summary(&n.stop().unwrap());

    for rt in [false, true] {
        let target = if rt { echo_rt } else { echo };
        let n = netem(&args, target, args.delay_rate, buffer);
        let (stop_burn, burners) = burn(args.load);
        let loaded = probe(n.listen_addr(), args.probes, gap, rt);
        stop_burn.store(true, Ordering::Relaxed);
        for b in burners {
            b.join().unwrap();
        }
        let label = format!(
            "netem, {} busy thr{}",
            args.load,
            if rt { ", RT probes" } else { "" }
        );
        report(&label, &loaded, expected);
        print_summary(&n.stop().unwrap());
    }
    stop_echo_rt.store(true, Ordering::Relaxed);
    echo_rt_thread.join().unwrap();
    stop_echo.store(true, Ordering::Relaxed);
    echo_thread.join().unwrap();
}
