//! Synthetic bulk-transfer traces written with the `qlog` crate's own
//! streamer (the code path quiche writes with), for round-trip tests, the
//! parse benchmark and demos. Deterministic: no clock, no randomness.
//!
//! The simulated sender paces fixed-size STREAM frames at a constant rate;
//! every `loss_every`-th packet is lost (reported by `packet_lost` and
//! quiche's `cf_lost_packets`) and its bytes go out again in a later packet;
//! the peer acknowledges every second packet after one RTT, each ACK
//! repeating the last few packet numbers. The RTT follows a sawtooth
//! (base + a queue that fills and drains). States cycle through
//! `slow_start`, `congestion_avoidance`, and LEDBAT++'s `slowdown` and
//! `ramp_up`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use qlog::events::quic::{
    AckRange, CongestionStateUpdated, PacketHeader, PacketLost, PacketReceived, PacketSent,
    PacketType, QuicFrame, RecoveryMetricsUpdated,
};
use qlog::events::{Event, EventData, EventImportance, RawInfo};
use qlog::streamer::{EventTimePrecision, QlogStreamer};

/// Parameters of a synthetic flow.
#[derive(Debug, Clone)]
pub struct SynthFlow {
    /// Whether the trace is the server's (the sender of the data), else the client's.
    pub server: bool,
    /// Sending rate, bit/s.
    pub rate_bps: f64,
    /// How long the flow sends, seconds.
    pub duration_s: f64,
    /// Base round-trip time, milliseconds.
    pub base_rtt_ms: f64,
    /// Peak queuing delay of the sawtooth.
    pub queue_ms: f64,
    /// Sawtooth period.
    pub queue_period_s: f64,
    /// Stream bytes per packet.
    pub payload: u64,
    /// Lose every n-th packet (0: none).
    pub loss_every: u64,
    /// Start a `slowdown` every this many seconds (0: never).
    pub slowdown_every_s: f64,
    /// The trace's wall-clock reference time (`None`: none written).
    pub wall_clock: Option<SystemTime>,
}

impl Default for SynthFlow {
    fn default() -> Self {
        SynthFlow {
            server: true,
            rate_bps: 10e6,
            duration_s: 10.0,
            base_rtt_ms: 40.0,
            queue_ms: 20.0,
            queue_period_s: 2.0,
            payload: 1200,
            loss_every: 0,
            slowdown_every_s: 0.0,
            wall_clock: None,
        }
    }
}

/// What the simulation knows happened, to check the analysis against.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SynthTruth {
    /// Unique stream bytes acknowledged.
    pub bytes_acked: u64,
    /// Unique stream bytes acknowledged, by ACK time in whole seconds.
    pub bytes_acked_per_s: Vec<u64>,
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// RTT samples taken (one per ACK).
    pub rtt_samples: u64,
    /// Smallest RTT sample, milliseconds.
    pub min_rtt_ms: f64,
    /// `slowdown` states entered.
    pub slowdowns: u64,
    /// Events written.
    pub events: u64,
}

fn hdr(pn: u64) -> PacketHeader {
    PacketHeader::with_type(PacketType::OneRtt, Some(pn), None, None, None)
}

/// Write a synthetic sender trace as JSON-SEQ to `writer`.
pub fn write_sender(
    flow: &SynthFlow,
    writer: Box<dyn Write + Send + Sync>,
) -> std::io::Result<SynthTruth> {
    let vp = qlog::VantagePoint {
        name: None,
        ty: if flow.server {
            qlog::VantagePointType::Server
        } else {
            qlog::VantagePointType::Client
        },
        flow: None,
    };
    let common = qlog::CommonFields {
        reference_time: qlog::ReferenceTime::new_monotonic(flow.wall_clock),
        ..Default::default()
    };
    let trace = qlog::TraceSeq::new(
        Some("synthetic bulk transfer".into()),
        None,
        Some(common),
        Some(vp),
        vec![qlog::events::QUIC_URI.to_string()],
    );
    let mut streamer = QlogStreamer::new(
        Some("qlog-analysis synth".into()),
        None,
        Instant::now(),
        trace,
        EventImportance::Extra,
        EventTimePrecision::MicroSeconds,
        writer,
    );
    streamer.start_log().map_err(std::io::Error::other)?;
    let mut truth = SynthTruth {
        min_rtt_ms: f64::INFINITY,
        ..Default::default()
    };
    let emit = |s: &mut QlogStreamer,
                t_ms: f64,
                data: EventData,
                truth: &mut SynthTruth|
     -> std::io::Result<()> {
        truth.events += 1;
        // Round like quiche's microsecond precision.
        let t = (t_ms * 1e3).round() / 1e3;
        s.add_event(Event::with_time(t, data))
            .map_err(std::io::Error::other)
    };

    let interval_ms = flow.payload as f64 * 8.0 / flow.rate_bps * 1e3;
    let n_packets = (flow.duration_s * 1e3 / interval_ms).floor() as u64;
    let rtt_at = |t_ms: f64| -> f64 {
        let phase = (t_ms / 1e3 / flow.queue_period_s).fract();
        flow.base_rtt_ms + flow.queue_ms * phase
    };
    // (ack time in µs, packet number acked, rtt)
    let mut acks: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    let mut retransmit: VecDeque<(u64, u64)> = VecDeque::new();
    let mut next_offset = 0u64;
    let mut sent_data: std::collections::HashMap<u64, (u64, u64, f64)> = Default::default();
    let mut lost: Vec<u64> = Vec::new();
    let mut acked_unique = crate::rangeset::RangeSet::new();
    let mut srtt = flow.base_rtt_ms;
    let mut state = String::new();
    let mut next_slowdown_ms = if flow.slowdown_every_s > 0.0 {
        flow.slowdown_every_s * 1e3
    } else {
        f64::INFINITY
    };
    let mut slowdown_until = f64::NEG_INFINITY;
    let mut lost_total = 0u64;

    let set_state =
        |s: &mut QlogStreamer, st: &mut String, new: &str, t: f64, truth: &mut SynthTruth| {
            if st != new {
                *st = new.to_string();
                if new == "slowdown" {
                    truth.slowdowns += 1;
                }
                emit(
                    s,
                    t,
                    EventData::QuicCongestionStateUpdated(CongestionStateUpdated {
                        old: None,
                        new: new.into(),
                        trigger: None,
                    }),
                    truth,
                )
            } else {
                Ok(())
            }
        };
    set_state(&mut streamer, &mut state, "slow_start", 0.0, &mut truth)?;

    let mut process_acks_until =
        |s: &mut QlogStreamer,
         until_us: u64,
         acks: &mut BinaryHeap<Reverse<(u64, u64)>>,
         sent_data: &mut std::collections::HashMap<u64, (u64, u64, f64)>,
         truth: &mut SynthTruth,
         srtt: &mut f64,
         lost: &mut Vec<u64>,
         lost_total: &mut u64|
         -> std::io::Result<()> {
            while let Some(&Reverse((at_us, pn))) = acks.peek() {
                if at_us > until_us {
                    break;
                }
                acks.pop();
                let t = at_us as f64 / 1e3;
                // ACK the last 10 packet numbers up to pn, minus lost ones.
                let lo = pn.saturating_sub(9);
                let mut ranges = Vec::new();
                let mut start = None;
                for p in lo..=pn {
                    let is_lost = lost.contains(&p);
                    match (start, is_lost) {
                        (None, false) => start = Some(p),
                        (Some(st), true) => {
                            ranges.push(AckRange::new(st, p - 1));
                            start = None;
                        }
                        _ => {}
                    }
                }
                if let Some(st) = start {
                    ranges.push(AckRange::new(st, pn));
                }
                let mut newest_rtt = None;
                for p in lo..=pn {
                    if let Some((off, len, sent_at)) = sent_data.remove(&p) {
                        if !lost.contains(&p) {
                            let new = acked_unique.insert(off, off + len);
                            truth.bytes_acked += new;
                            let sec = (t / 1e3).floor() as usize;
                            if truth.bytes_acked_per_s.len() <= sec {
                                truth.bytes_acked_per_s.resize(sec + 1, 0);
                            }
                            truth.bytes_acked_per_s[sec] += new;
                            if p == pn {
                                newest_rtt = Some(t - sent_at);
                            }
                        } else {
                            sent_data.insert(p, (off, len, sent_at));
                        }
                    }
                }
                let frames = vec![QuicFrame::Ack {
                    ack_delay: Some(0.0),
                    acked_ranges: Some(ranges),
                    ect1: None,
                    ect0: None,
                    ce: None,
                    raw: None,
                }];
                emit(
                    s,
                    t,
                    EventData::QuicPacketReceived(PacketReceived {
                        header: hdr(pn / 2),
                        frames: Some(frames),
                        raw: Some(RawInfo {
                            length: Some(40),
                            payload_length: Some(20),
                            data: None,
                        }),
                        ..Default::default()
                    }),
                    truth,
                )?;
                // Declare lost packets that are 3 or more below the newest acked.
                let (declare, keep): (Vec<u64>, Vec<u64>) = lost
                    .iter()
                    .partition(|&&l| l + 3 <= pn && sent_data.contains_key(&l));
                let mut newly_lost = 0;
                for l in declare {
                    sent_data.remove(&l);
                    newly_lost += 1;
                    emit(
                        s,
                        t,
                        EventData::QuicPacketLost(PacketLost {
                            header: Some(hdr(l)),
                            ..Default::default()
                        }),
                        truth,
                    )?;
                }
                *lost = keep;
                *lost_total += newly_lost;
                truth.packets_lost += newly_lost;
                if let Some(rtt) = newest_rtt {
                    truth.rtt_samples += 1;
                    truth.min_rtt_ms = truth.min_rtt_ms.min((rtt * 1e3).round() / 1e3);
                    *srtt = 0.875 * *srtt + 0.125 * rtt;
                    let mut ex = qlog::events::ExData::new();
                    if newly_lost > 0 {
                        ex.insert(
                            "cf_lost_packets".into(),
                            serde_json::json!({"total": *lost_total, "delta": newly_lost}),
                        );
                    }
                    let cwnd = (flow.rate_bps / 8.0 * rtt / 1e3) as u64;
                    emit(
                        s,
                        t,
                        EventData::QuicMetricsUpdated(RecoveryMetricsUpdated {
                            latest_rtt: Some(rtt as f32),
                            smoothed_rtt: Some(*srtt as f32),
                            min_rtt: Some(truth.min_rtt_ms as f32),
                            congestion_window: Some(cwnd),
                            bytes_in_flight: Some(sent_data.len() as u64 * flow.payload),
                            ex_data: ex,
                            ..Default::default()
                        }),
                        truth,
                    )?;
                }
            }
            Ok(())
        };

    // The one call of `process_acks_until`, on this trace's state.
    macro_rules! acks_until {
        ($until_us:expr) => {
            process_acks_until(
                &mut streamer,
                $until_us,
                &mut acks,
                &mut sent_data,
                &mut truth,
                &mut srtt,
                &mut lost,
                &mut lost_total,
            )?
        };
    }

    for pn in 0..n_packets {
        let t = pn as f64 * interval_ms;
        let t_us = (t * 1e3).round() as u64;
        acks_until!(t_us);
        // States.
        if t >= 1000.0 && state == "slow_start" {
            set_state(
                &mut streamer,
                &mut state,
                "congestion_avoidance",
                t,
                &mut truth,
            )?;
        }
        let slowdown_phase = if t >= next_slowdown_ms {
            slowdown_until = t + 2.0 * flow.base_rtt_ms;
            next_slowdown_ms += flow.slowdown_every_s * 1e3;
            Some("slowdown")
        } else if state == "slowdown" && t >= slowdown_until {
            Some("ramp_up")
        } else if state == "ramp_up" && t >= slowdown_until + 2.0 * flow.base_rtt_ms {
            Some("congestion_avoidance")
        } else {
            None
        };
        if let Some(new) = slowdown_phase {
            set_state(&mut streamer, &mut state, new, t, &mut truth)?;
        }
        // Send.
        let (off, len) = retransmit.pop_front().unwrap_or_else(|| {
            let o = next_offset;
            next_offset += flow.payload;
            (o, flow.payload)
        });
        emit(
            &mut streamer,
            t,
            EventData::QuicPacketSent(PacketSent {
                header: hdr(pn),
                frames: Some(vec![QuicFrame::Stream {
                    stream_id: 3,
                    offset: Some(off),
                    fin: None,
                    raw: Some(Box::new(RawInfo {
                        length: None,
                        payload_length: Some(len),
                        data: None,
                    })),
                }]),
                raw: Some(RawInfo {
                    length: Some(len + 30),
                    payload_length: Some(len + 10),
                    data: None,
                }),
                ..Default::default()
            }),
            &mut truth,
        )?;
        truth.packets_sent += 1;
        sent_data.insert(pn, (off, len, t));
        if flow.loss_every > 0 && pn % flow.loss_every == flow.loss_every - 1 {
            lost.push(pn);
            retransmit.push_back((off, len));
        }
        if pn % 2 == 1 {
            let at = t + rtt_at(t);
            acks.push(Reverse(((at * 1e3).round() as u64, pn)));
        }
    }
    acks_until!(u64::MAX);
    streamer.finish_log().map_err(std::io::Error::other)?;
    Ok(truth)
}

/// Write a synthetic sender trace to a file (JSON-SEQ).
pub fn write_sender_file(flow: &SynthFlow, path: &std::path::Path) -> std::io::Result<SynthTruth> {
    let file = std::fs::File::create(path)?;
    write_sender(flow, Box::new(std::io::BufWriter::new(file)))
}

/// A fixed wall-clock instant for reproducible multi-flow traces.
pub fn epoch_plus(secs: f64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000) + Duration::from_secs_f64(secs)
}
