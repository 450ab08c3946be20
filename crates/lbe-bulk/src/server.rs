//! A quic-bulk server connection's session, sans-IO: it reads the request,
//! sends the download's payload or checks the upload's, and answers the
//! report request (a download) or sends the receipt (an upload), as the
//! [`protocol`] says. `quic-bulk`'s server runs one per
//! connection from its mio loop; the simulator runs one per simulated
//! server connection.

use std::path::Path;
use std::time::Duration;
use std::time::Instant;

use quiche_lbe::lbe_cc::deadline::Progress;
use quiche_lbe::CcSpec;

use crate::protocol;
use crate::protocol::close;
use crate::protocol::Amount;
use crate::protocol::Direction;
use crate::protocol::Receipt;
use crate::protocol::Request;
use crate::stats::SenderStats;
use crate::transfer::LineReader;
use crate::transfer::LineWriter;
use crate::transfer::Receiver;
use crate::transfer::Sender;
use crate::Failure;

/// The longest request line a server reads, bytes.
const REQUEST_LIMIT: usize = 4096;
/// The longest report request line a server reads, bytes.
const REPORT_REQUEST_LIMIT: usize = 256;

/// Where the transfer stands.
enum Phase {
    /// Reading the request line.
    Request(LineReader),
    Sending(Sender),
    Receiving(Receiver),
    /// The download's FIN or the upload's receipt is written; waiting for
    /// the client to close.
    Finished,
}

/// One server connection's transfer.
pub struct ServerSession {
    phase: Phase,
    request: Option<Request>,
    report_request: LineReader,
    report_sent: bool,
    /// Lines being written (the receipt on stream 0, the report on stream
    /// 4), a part at a time while quiche has no room for all of them.
    /// Each with what it is, for the error that names it.
    outgoing: Vec<(u64, &'static str, LineWriter)>,
    stats: SenderStats,
    /// A deadline-aware download's progress handle (the request's
    /// `deadline_ms`).
    progress: Option<Progress>,
    /// Payload bytes written (a download) or received and checked (an
    /// upload).
    bytes: u64,
    buf: Vec<u8>,
}

impl Default for ServerSession {
    fn default() -> Self {
        Self::new()
    }
}

/// A deadline-aware download's progress: the payload the client has
/// acknowledged ([`quiche_lbe::spec::stream_delivered`]), up to what was
/// written, all of it once the FIN is: the progress goes on until everything
/// is acknowledged. (Until round 4 it stopped being fed at the FIN, while
/// quiche still held the last 16 MB unacknowledged; the controller saw no
/// progress for the rest of the transfer and caught up as hard as it could:
/// in real time a tight deadline's last 16 s ran at 15-19 Mbit/s of the 20
/// and finished at 104.4 s instead of about 114.) `None` before a download
/// starts.
fn delivered(phase: &Phase, stream_acked: quiche::Result<u64>, progress: &Progress) -> Option<u64> {
    let written = match phase {
        Phase::Sending(tx) => tx.sent(),
        Phase::Finished => progress.total_bytes(),
        Phase::Request(_) | Phase::Receiving(_) => return None,
    };
    Some(quiche_lbe::spec::stream_delivered(stream_acked, written))
}

impl ServerSession {
    /// A session waiting for its request.
    pub fn new() -> Self {
        ServerSession {
            phase: Phase::Request(LineReader::new(REQUEST_LIMIT)),
            request: None,
            report_request: LineReader::new(REPORT_REQUEST_LIMIT),
            report_sent: false,
            outgoing: Vec::new(),
            stats: SenderStats::new(),
            progress: None,
            bytes: 0,
            buf: vec![0u8; 65536],
        }
    }

    /// The client's request, once read.
    pub fn request(&self) -> Option<&Request> {
        self.request.as_ref()
    }

    /// A deadline-aware download's progress handle (its time in levels).
    pub fn progress(&self) -> Option<&Progress> {
        self.progress.as_ref()
    }

    /// The download's writer, while it writes.
    pub fn sender(&self) -> Option<&Sender> {
        match &self.phase {
            Phase::Sending(tx) => Some(tx),
            _ => None,
        }
    }

    /// Payload bytes so far: a download's written, an upload's received
    /// and checked.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the transfer is over at this end: the download's FIN is
    /// written, or the upload was received in full and its receipt written.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }

    /// The request `line`: parsed, and the connection made deadline-aware
    /// when it asks for a deadline.
    fn on_request(&mut self, conn: &mut quiche::Connection, line: &[u8]) -> Result<(), String> {
        let request: Request = protocol::parse_line(line, "request")?;
        let cc: CcSpec = request
            .cc
            .parse()
            .map_err(|e| format!("bad controller in request: {e}"))?;
        if let Some(ms) = request.deadline_ms {
            let (Direction::Download, Amount::Bytes(total)) = (request.direction, request.amount)
            else {
                return Err("a deadline needs a download of a byte count".to_string());
            };
            let progress = cc
                .switch_with_deadline(conn, Duration::from_millis(ms), total)
                .map_err(|e| format!("request: {e}"))?;
            self.progress = Some(progress);
        }
        self.phase = match request.direction {
            Direction::Download => Phase::Sending(Sender::new(request.amount)),
            Direction::Upload => Phase::Receiving(Receiver::new(Some(request.amount))),
        };
        self.request = Some(request);
        Ok(())
    }

    /// Reads what the client sent and writes what is due: call it after
    /// every batch of datagrams `conn` took in and every timer it ran.
    /// `now` is the time the endpoint's clock reads (a `--duration`
    /// download stops writing by it); `qlog` is this end's qlog file, named
    /// in the report.
    ///
    /// Returns `Ok(true)` when the request was read in this call (the
    /// caller may name its qlog after [`request`](Self::request)). A client
    /// that breaks the protocol gets the connection closed with the code
    /// saying why, returned as the error.
    pub fn serve(
        &mut self,
        conn: &mut quiche::Connection,
        now: Instant,
        qlog: Option<&Path>,
    ) -> Result<bool, Failure> {
        if !conn.is_established() || conn.is_closed() {
            return Ok(false);
        }
        let mut requested = false;
        let readable: Vec<u64> = conn.readable().collect();
        for stream in readable {
            match stream {
                protocol::DATA_STREAM => requested |= self.read_data(conn)?,
                protocol::REPORT_STREAM => self.read_report_request(conn, qlog)?,
                _ => while conn.stream_recv(stream, &mut self.buf).is_ok() {},
            }
        }
        self.flush_lines(conn)?;
        if let Phase::Sending(tx) = &mut self.phase {
            tx.send(conn, protocol::DATA_STREAM, now);
            self.bytes = tx.sent();
            if tx.is_finished() {
                self.phase = Phase::Finished;
            }
        }
        if let Some(progress) = &self.progress {
            let acked = conn.stream_acked_bytes(protocol::DATA_STREAM);
            if let Some(done) = delivered(&self.phase, acked, progress) {
                progress.set_done_bytes(done);
            }
        }
        self.stats.sample(conn);
        Ok(requested)
    }

    /// Stream 0: the request line, then (an upload) the payload, checked.
    /// Returns whether the request was read now.
    fn read_data(&mut self, conn: &mut quiche::Connection) -> Result<bool, Failure> {
        let stream = protocol::DATA_STREAM;
        let mut requested = false;
        if let Phase::Request(reader) = &mut self.phase {
            match reader.read(conn, stream) {
                Ok(Some(line)) => {
                    if let Err(e) = self.on_request(conn, &line.line) {
                        return Err(Failure::close(conn, close::BAD_REQUEST, e));
                    }
                    requested = true;
                    if let Phase::Receiving(rx) = &mut self.phase {
                        if let Err(e) = rx.take(&line.rest, line.fin) {
                            return Err(Failure::close(conn, close::CORRUPT, e));
                        }
                        self.bytes = rx.received();
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(Failure::close(conn, close::BAD_REQUEST, e)),
            }
        }
        if let Phase::Receiving(rx) = &mut self.phase {
            let read = rx.read(conn, stream, &mut self.buf);
            self.bytes = rx.received();
            match read {
                Ok(true) => {
                    let receipt = protocol::to_line(&Receipt {
                        bytes: rx.received(),
                    });
                    self.send_line(conn, stream, receipt, "the receipt")?;
                    self.phase = Phase::Finished;
                }
                Ok(false) => {}
                Err(e) => return Err(Failure::close(conn, close::CORRUPT, e)),
            }
        } else {
            // A download's stream 0 carries nothing after the request.
            while conn.stream_recv(stream, &mut self.buf).is_ok() {}
        }
        Ok(requested)
    }

    /// Writes `line` on `stream` with its FIN, now or (no room yet) in a
    /// later call; `what` names it in the error a refusal by quiche closes
    /// the connection with.
    fn send_line(
        &mut self,
        conn: &mut quiche::Connection,
        stream: u64,
        line: Vec<u8>,
        what: &'static str,
    ) -> Result<(), Failure> {
        self.outgoing.push((stream, what, LineWriter::new(line)));
        self.flush_lines(conn)
    }

    /// Writes what is left of the lines being written.
    fn flush_lines(&mut self, conn: &mut quiche::Connection) -> Result<(), Failure> {
        for (stream, what, line) in &mut self.outgoing {
            if let Err(e) = line.write(conn, *stream) {
                let reason = format!("cannot send {what}: {e:?}");
                return Err(Failure::close(conn, close::BAD_REQUEST, reason));
            }
        }
        self.outgoing.retain(|(_, _, line)| !line.is_written());
        Ok(())
    }

    /// Stream 4: the report request, answered once with the sender's
    /// figures.
    fn read_report_request(
        &mut self,
        conn: &mut quiche::Connection,
        qlog: Option<&Path>,
    ) -> Result<(), Failure> {
        match self.report_request.read(conn, protocol::REPORT_STREAM) {
            Ok(Some(_)) if !self.report_sent => {
                let mut report = self.stats.report(conn, qlog);
                report.time_in_levels_s = self.progress.as_ref().map(|p| {
                    p.time_in_levels()
                        .iter()
                        .map(Duration::as_secs_f64)
                        .collect()
                });
                let line = protocol::to_line(&report);
                self.send_line(conn, protocol::REPORT_STREAM, line, "the report")?;
                self.report_sent = true;
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => Err(Failure::close(conn, close::BAD_REQUEST, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_download_s_progress_is_fed_until_everything_written_is_acknowledged() {
        let progress = Progress::new(1_000_000);
        let request = Phase::Request(LineReader::new(16));
        assert_eq!(delivered(&request, Ok(5_000), &progress), None);
        let upload = Phase::Receiving(Receiver::new(Some(Amount::Bytes(10))));
        assert_eq!(delivered(&upload, Ok(5_000), &progress), None);
        let fresh = Phase::Sending(Sender::new(Amount::Bytes(1_000_000)));
        assert_eq!(
            delivered(&fresh, Ok(0), &progress),
            Some(0),
            "nothing written yet"
        );
        // After the FIN: what is acknowledged, then the whole transfer once
        // quiche has collected the complete stream.
        let finished = Phase::Finished;
        assert_eq!(delivered(&finished, Ok(700_000), &progress), Some(700_000));
        let collected = Err(quiche::Error::InvalidStreamState(protocol::DATA_STREAM));
        assert_eq!(delivered(&finished, collected, &progress), Some(1_000_000));
    }
}
