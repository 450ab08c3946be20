//! A deterministic single-bottleneck simulation of `lbe-cc` controllers,
//! for comparing controller versions side by side (no clock, no sockets).
//!
//! ```text
//! cargo run --release -p lbe-cc --example bottleneck -- \
//!     RATE_MBIT BASE_RTT_MS BUFFER_MS SECONDS PACED(0|1) SPEC[@START_S] ...
//! ```
//!
//! Model, and what it leaves out:
//! * one FIFO bottleneck of `RATE_MBIT` with a drop-tail buffer of
//!   `BUFFER_MS` of queuing delay; every flow has the same base RTT, all of
//!   it after the queue; packets are 1350 bytes;
//! * the receiver acknowledges every packet at once (no ACK delay, no ACK
//!   loss), so the RTT sample of each ACK is its packet's queue wait plus
//!   the base RTT; smoothed RTT as RFC 9002 §5.3;
//! * a dropped packet is declared lost when a later packet of its flow is
//!   acknowledged, or 3 base RTTs plus the buffer after it was sent if none
//!   is (a stand-in for the PTO); no persistent congestion, no spurious
//!   losses;
//! * greedy senders: a flow sends whenever its window allows, paced at the
//!   controller's `pacing_rate()` when PACED is 1 and the controller has
//!   one, back to back otherwise.
//!
//! Prints, per flow, goodput over the last half of the run as a fraction of
//! the link rate, and the mean and 95th percentile queuing delay its
//! packets met over that half; then the total.

use std::collections::VecDeque;
use std::time::Duration;
use std::time::Instant;

use lbe_cc::AckEvent;
use lbe_cc::AckedPacket;
use lbe_cc::CongestionController;
use lbe_cc::ControllerConfig;
use lbe_cc::LossEvent;
use lbe_cc::PathInfo;
use lbe_cc::RttInfo;

const MSS: u64 = 1350;

struct Sent {
    bytes: u64,
    sent: Instant,
    /// When its ACK arrives, or `None` if the bottleneck dropped it.
    ack_at: Option<Instant>,
    queue_wait: Duration,
}

struct Flow {
    spec: String,
    cc: Box<dyn CongestionController>,
    start: Instant,
    next_send: Instant,
    in_flight: u64,
    /// Packets not yet acknowledged or declared lost, in send order.
    outstanding: VecDeque<Sent>,
    srtt: Option<Duration>,
    rttvar: Duration,
    min_rtt: Duration,
    acked_in_window: u64,
    lost: u64,
    waits: Vec<Duration>,
}

fn usage() -> ! {
    eprintln!(
        "usage: bottleneck RATE_MBIT BASE_RTT_MS BUFFER_MS SECONDS PACED(0|1) SPEC[@START_S] ..."
    );
    std::process::exit(2);
}

fn build(spec: &str) -> Box<dyn CongestionController> {
    let cfg: ControllerConfig = spec.parse().unwrap_or_else(|e| {
        eprintln!("bottleneck: {e}");
        std::process::exit(2)
    });
    cfg.build(PathInfo {
        max_datagram_size: MSS,
        initial_window_packets: 10,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 6 {
        usage();
    }
    let num = |i: usize| -> f64 { args[i].parse().unwrap_or_else(|_| usage()) };
    let rate_bytes = num(0) * 1e6 / 8.0;
    let base = Duration::from_secs_f64(num(1) / 1e3);
    let buffer = Duration::from_secs_f64(num(2) / 1e3);
    let seconds = num(3);
    let paced = args[4] == "1";
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(seconds);
    let window_start = t0 + Duration::from_secs_f64(seconds / 2.0);
    let serialise = Duration::from_secs_f64(MSS as f64 / rate_bytes);

    let mut flows: Vec<Flow> = args[5..]
        .iter()
        .map(|a| {
            let (spec, start) = match a.split_once('@') {
                Some((s, t)) => (s, t.parse::<f64>().unwrap_or_else(|_| usage())),
                None => (a.as_str(), 0.0),
            };
            let start = t0 + Duration::from_secs_f64(start);
            Flow {
                spec: spec.to_string(),
                cc: build(spec),
                start,
                next_send: start,
                in_flight: 0,
                outstanding: VecDeque::new(),
                srtt: None,
                rttvar: Duration::ZERO,
                min_rtt: Duration::MAX,
                acked_in_window: 0,
                lost: 0,
                waits: Vec::new(),
            }
        })
        .collect();

    let mut busy_until = t0;
    let mut clock = t0;
    // BOTTLENECK_TRACE=1: each flow's window, state and the queue every 250 ms.
    let trace = std::env::var_os("BOTTLENECK_TRACE").is_some();
    let mut next_trace = t0;
    let lost_after = base * 3 + buffer;
    loop {
        // The next event of each flow: an ACK, a loss timeout, or a send.
        let mut next: Option<(Instant, usize, u8)> = None;
        for (i, f) in flows.iter().enumerate() {
            let mut consider = |t: Instant, kind: u8| {
                if next.is_none_or(|(n, _, _)| t < n) {
                    next = Some((t, i, kind));
                }
            };
            if let Some(ack) = f.outstanding.iter().find_map(|p| p.ack_at) {
                consider(ack, 0);
            }
            if let Some(p) = f.outstanding.front().filter(|p| p.ack_at.is_none()) {
                consider(p.sent + lost_after, 1);
            }
            if f.in_flight + MSS <= f.cc.window() {
                consider(f.next_send.max(f.start), 2);
            }
        }
        let Some((at, i, kind)) = next else { break };
        // A send that became possible in the past happens now.
        let now = at.max(clock);
        clock = now;
        if now >= end {
            break;
        }
        if trace && now >= next_trace {
            next_trace = now + Duration::from_millis(250);
            for f in &flows {
                eprintln!(
                    "t {:8.3} s  {:<30} cwnd {:8}  ssthresh {:?}  {:<22} queue {:6.1} ms",
                    (now - t0).as_secs_f64(),
                    f.spec,
                    f.cc.window(),
                    f.cc.snapshot().ssthresh,
                    f.cc.state(now),
                    busy_until.saturating_duration_since(now).as_secs_f64() * 1e3
                );
            }
        }
        let f = &mut flows[i];
        match kind {
            0 => {
                // Losses: dropped packets sent before the acknowledged one.
                let pos = f
                    .outstanding
                    .iter()
                    .position(|p| p.ack_at.is_some())
                    .unwrap();
                let p = f.outstanding.remove(pos).unwrap();
                let latest = now - p.sent;
                f.min_rtt = f.min_rtt.min(latest);
                match f.srtt {
                    None => {
                        f.srtt = Some(latest);
                        f.rttvar = latest / 2;
                    }
                    Some(s) => {
                        let diff = s.abs_diff(latest);
                        f.rttvar = (f.rttvar * 3 + diff) / 4;
                        f.srtt = Some((s * 7 + latest) / 8);
                    }
                }
                let acked = [AckedPacket {
                    bytes: p.bytes,
                    time_sent: p.sent,
                }];
                f.cc.on_ack(&AckEvent {
                    now,
                    acked: &acked,
                    bytes_in_flight: f.in_flight,
                    rtt: RttInfo {
                        latest_rtt: latest,
                        ack_delay: Duration::ZERO,
                        new_sample: true,
                        min_rtt: f.min_rtt,
                        smoothed_rtt: f.srtt.unwrap(),
                        rttvar: f.rttvar,
                        max_ack_delay: Duration::from_millis(25),
                    },
                    one_way_delay: None,
                });
                f.in_flight -= p.bytes;
                if now >= window_start {
                    f.acked_in_window += p.bytes;
                    f.waits.push(p.queue_wait);
                }
                let lost: Vec<Sent> = f.outstanding.drain(..pos).collect();
                if !lost.is_empty() {
                    declare_lost(f, now, lost);
                }
            }
            1 => {
                let p = f.outstanding.pop_front().unwrap();
                declare_lost(f, now, vec![p]);
            }
            _ => {
                let wait = busy_until.saturating_duration_since(now);
                let ack_at = if wait > buffer {
                    None
                } else {
                    busy_until = busy_until.max(now) + serialise;
                    Some(busy_until + base)
                };
                f.cc.on_packet_sent(now, MSS, f.in_flight);
                f.in_flight += MSS;
                f.outstanding.push_back(Sent {
                    bytes: MSS,
                    sent: now,
                    ack_at,
                    queue_wait: wait,
                });
                f.next_send = match f.cc.pacing_rate().filter(|_| paced) {
                    Some(rate) if rate > 0 => {
                        now + Duration::from_secs_f64(MSS as f64 / rate as f64)
                    }
                    _ => now,
                };
            }
        }
    }

    let window = end.saturating_duration_since(window_start).as_secs_f64();
    let mut total = 0.0;
    for f in &mut flows {
        let share = f.acked_in_window as f64 / window / rate_bytes;
        total += share;
        f.waits.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mean = f.waits.iter().map(|d| ms(*d)).sum::<f64>() / f.waits.len().max(1) as f64;
        let p95 = f
            .waits
            .get(f.waits.len() * 95 / 100)
            .map_or(0.0, |d| ms(*d));
        println!(
            "{:<40} utilisation {:.3}  queue mean {:6.1} ms  p95 {:6.1} ms  lost {}",
            f.spec, share, mean, p95, f.lost
        );
    }
    println!("{:<40} utilisation {:.3}", "total", total);
}

fn declare_lost(f: &mut Flow, now: Instant, lost: Vec<Sent>) {
    let bytes: u64 = lost.iter().map(|p| p.bytes).sum();
    let largest = lost.iter().map(|p| p.sent).max().unwrap();
    f.cc.on_congestion_event(&LossEvent {
        now,
        lost_bytes: bytes,
        largest_lost_time_sent: largest,
        bytes_in_flight: f.in_flight,
    });
    f.in_flight -= bytes;
    f.lost += lost.len() as u64;
}
