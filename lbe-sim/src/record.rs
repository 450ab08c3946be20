//! What the simulator tells `qlog-analysis`: the events quiche's qlog
//! writes for a sender (packet sent with its STREAM frame, packet received
//! with the peer's ACK frame, recovery metrics, packet lost, congestion
//! state), fed in memory to the same `FlowAnalyzer` that reads qlog files,
//! so that every figure comes from one place.

use qlog::events::quic::AckRange;
use qlog::events::quic::CongestionStateUpdated;
use qlog::events::quic::PacketHeader;
use qlog::events::quic::PacketLost;
use qlog::events::quic::PacketReceived;
use qlog::events::quic::PacketSent;
use qlog::events::quic::PacketType;
use qlog::events::quic::QuicFrame;
use qlog::events::quic::RecoveryMetricsUpdated;
use qlog::events::EventData;
use qlog::events::RawInfo;
use qlog_analysis::flow::FlowAnalyzer;
use qlog_analysis::reader::Event;

use crate::sender::Chunk;

/// One flow's analyzer, and its qlog file when one is asked for.
pub struct Recorder {
    analyzer: FlowAnalyzer,
    state: Option<&'static str>,
    events: u64,
    qlog: Option<qlog::streamer::QlogStreamer>,
}

fn header(pn: u64) -> PacketHeader {
    PacketHeader {
        packet_type: PacketType::OneRtt,
        packet_number: Some(pn),
        ..PacketHeader::default()
    }
}

impl Recorder {
    pub fn new(analyzer: FlowAnalyzer) -> Self {
        Self {
            analyzer,
            state: None,
            events: 0,
            qlog: None,
        }
    }

    /// Also writes every event to `writer` as a JSON-SEQ qlog (the server's
    /// vantage point, times in ms since the start of the run, as
    /// `qlog-analysis` reads quiche's).
    pub fn with_qlog(
        mut self,
        writer: Box<dyn std::io::Write + Send + Sync>,
        title: &str,
    ) -> std::io::Result<Self> {
        let trace = qlog::TraceSeq::new(
            Some(title.to_string()),
            Some("lbe-sim: simulated, times since the start of the run".into()),
            Some(qlog::CommonFields {
                reference_time: qlog::ReferenceTime::new_monotonic(None),
                ..Default::default()
            }),
            Some(qlog::VantagePoint {
                name: None,
                ty: qlog::VantagePointType::Server,
                flow: None,
            }),
            vec![qlog::events::QUIC_URI.to_string()],
        );
        let mut streamer = qlog::streamer::QlogStreamer::new(
            Some(title.to_string()),
            None,
            std::time::Instant::now(),
            trace,
            qlog::events::EventImportance::Extra,
            qlog::streamer::EventTimePrecision::MicroSeconds,
            writer,
        );
        streamer.start_log().map_err(std::io::Error::other)?;
        self.qlog = Some(streamer);
        Ok(self)
    }

    fn feed(&mut self, time_ms: f64, data: EventData) {
        self.events += 1;
        if let Some(q) = self.qlog.as_mut() {
            // A write error ends the file; the analysis goes on in memory
            // and finish() reports it.
            if q.add_event(qlog::events::Event::with_time(time_ms, data.clone()))
                .is_err()
            {
                self.qlog = None;
            }
        }
        let ev = Event {
            trace: 0,
            time_ms,
            line: self.events,
            data,
        };
        // Our own events are always well-formed.
        self.analyzer
            .event(&ev)
            .expect("the simulator's events are well-formed");
    }

    pub fn packet_sent(&mut self, time_ms: f64, pn: u64, size: usize, chunk: Chunk) {
        let frame = QuicFrame::Stream {
            stream_id: 0,
            offset: Some(chunk.offset),
            fin: None,
            raw: Some(Box::new(RawInfo {
                length: None,
                payload_length: Some(chunk.len),
                data: None,
            })),
        };
        self.feed(
            time_ms,
            EventData::QuicPacketSent(PacketSent {
                header: header(pn),
                raw: Some(RawInfo {
                    length: Some(size as u64),
                    payload_length: None,
                    data: None,
                }),
                frames: Some(vec![frame]),
                ..PacketSent::default()
            }),
        );
    }

    pub fn ack_received(
        &mut self,
        time_ms: f64,
        pn: u64,
        ranges: &[(u64, u64)],
        ack_delay_ms: f32,
    ) {
        let frame = QuicFrame::Ack {
            ack_delay: Some(ack_delay_ms),
            acked_ranges: Some(ranges.iter().map(|&(a, b)| AckRange::new(a, b)).collect()),
            ect1: None,
            ect0: None,
            ce: None,
            raw: None,
        };
        self.feed(
            time_ms,
            EventData::QuicPacketReceived(PacketReceived {
                header: header(pn),
                frames: Some(vec![frame]),
                ..PacketReceived::default()
            }),
        );
    }

    #[allow(clippy::too_many_arguments)]
    pub fn metrics(
        &mut self,
        time_ms: f64,
        latest_rtt_ms: Option<f32>,
        smoothed_rtt_ms: f32,
        min_rtt_ms: f32,
        cwnd: u64,
        bytes_in_flight: u64,
    ) {
        self.feed(
            time_ms,
            EventData::QuicMetricsUpdated(RecoveryMetricsUpdated {
                latest_rtt: latest_rtt_ms,
                smoothed_rtt: Some(smoothed_rtt_ms),
                min_rtt: Some(min_rtt_ms),
                congestion_window: Some(cwnd),
                bytes_in_flight: Some(bytes_in_flight),
                ..RecoveryMetricsUpdated::default()
            }),
        );
    }

    pub fn lost(&mut self, time_ms: f64, pn: u64) {
        self.feed(
            time_ms,
            EventData::QuicPacketLost(PacketLost {
                header: Some(header(pn)),
                frames: None,
                is_mtu_probe_packet: None,
                trigger: None,
            }),
        );
    }

    pub fn state(&mut self, time_ms: f64, state: &'static str) {
        if self.state == Some(state) || state.is_empty() {
            return;
        }
        let old = self.state.replace(state).map(str::to_string);
        self.feed(
            time_ms,
            EventData::QuicCongestionStateUpdated(CongestionStateUpdated {
                old,
                new: state.to_string(),
                trigger: None,
            }),
        );
    }

    /// The analyzer, after closing the qlog file (an error if it could not
    /// be written whole).
    pub fn finish(self) -> Result<FlowAnalyzer, String> {
        if let Some(mut q) = self.qlog {
            q.finish_log()
                .map_err(|e| format!("cannot write the qlog: {e}"))?;
        }
        Ok(self.analyzer)
    }
}
