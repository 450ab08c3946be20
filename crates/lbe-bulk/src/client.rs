//! A quic-bulk client connection's session, sans-IO: once the handshake is
//! done it sends the request; a download's payload is then read and
//! checked and the server's report asked for; an upload's payload is
//! written and the server's receipt read. Either way the session closes the
//! connection when it has the server's last word, as the
//! [`protocol`] says. `quic-bulk`'s client runs one from its
//! mio loop; the simulator runs one per simulated client connection.

use std::path::Path;
use std::time::Instant;

use crate::protocol;
use crate::protocol::close;
use crate::protocol::Direction;
use crate::protocol::Receipt;
use crate::protocol::Report;
use crate::protocol::Request;
use crate::stats::SenderStats;
use crate::transfer::LineReader;
use crate::transfer::LineWriter;
use crate::transfer::Receiver;
use crate::transfer::Sender;
use crate::Failure;

/// The longest report line a client reads, bytes (it names a qlog path).
const REPORT_LIMIT: usize = 64 * 1024;
/// The longest receipt line a client reads, bytes.
const RECEIPT_LIMIT: usize = 4096;

/// One client connection's transfer.
pub struct ClientSession {
    request: Request,
    request_sent_at: Option<Instant>,
    /// The request line, written when quiche has room.
    request_line: Option<LineWriter>,
    finished_at: Option<Instant>,
    // A download.
    receiver: Receiver,
    /// The report request (`{"report":true}`), written once the download
    /// is complete and quiche has room.
    report_request: Option<LineWriter>,
    report: LineReader,
    // An upload.
    sender: Sender,
    receipt: LineReader,
    stats: SenderStats,
    outcome: Option<Report>,
    buf: Vec<u8>,
}

impl ClientSession {
    /// A session that will send `request` and carry out its transfer.
    pub fn new(request: Request) -> Self {
        ClientSession {
            receiver: Receiver::new(Some(request.amount)),
            sender: Sender::new(request.amount),
            request,
            request_sent_at: None,
            request_line: None,
            finished_at: None,
            report_request: None,
            report: LineReader::new(REPORT_LIMIT),
            receipt: LineReader::new(RECEIPT_LIMIT),
            stats: SenderStats::new(),
            outcome: None,
            buf: vec![0u8; 65536],
        }
    }

    /// The request it sends.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// When the request was written.
    pub fn request_sent_at(&self) -> Option<Instant> {
        self.request_sent_at
    }

    /// When the transfer finished: a download's last byte received, an
    /// upload's receipt read.
    pub fn finished_at(&self) -> Option<Instant> {
        self.finished_at
    }

    /// Payload bytes so far: a download's received and checked, an
    /// upload's written (once the receipt is read, what the server got).
    pub fn bytes(&self) -> u64 {
        match self.request.direction {
            Direction::Download => self.receiver.received(),
            Direction::Upload => self.sender.sent(),
        }
    }

    /// The upload's writer (`None` for a download).
    pub fn sender(&self) -> Option<&Sender> {
        (self.request.direction == Direction::Upload).then_some(&self.sender)
    }

    /// The sender's figures, once the transfer is over: the server's report
    /// for a download, this end's own for an upload. The connection is
    /// closed then.
    pub fn outcome(&self) -> Option<&Report> {
        self.outcome.as_ref()
    }

    /// Takes the sender's figures (see [`outcome`](Self::outcome)).
    pub fn take_outcome(&mut self) -> Option<Report> {
        self.outcome.take()
    }

    /// Sends the request, then reads and writes what is due: call it after
    /// every batch of datagrams `conn` took in and every timer it ran.
    /// `now` is the time the endpoint's clock reads; `qlog` is this end's
    /// qlog file (an upload's report names it).
    ///
    /// A server that breaks the protocol (a corrupt payload, a malformed
    /// line, a receipt for the wrong amount) gets the connection closed with
    /// the code saying why, returned as the error.
    pub fn progress(
        &mut self,
        conn: &mut quiche::Connection,
        now: Instant,
        qlog: Option<&Path>,
    ) -> Result<(), Failure> {
        if !conn.is_established() || conn.is_closed() || self.outcome.is_some() {
            return Ok(());
        }
        if self.request_sent_at.is_none() {
            // A download's request ends the client's half of stream 0 (the
            // FIN with the line); an upload's payload follows it, FIN last.
            let request = &self.request;
            let line = self.request_line.get_or_insert_with(|| {
                let line = protocol::to_line(request);
                match request.direction {
                    Direction::Download => LineWriter::new(line),
                    Direction::Upload => LineWriter::without_fin(line),
                }
            });
            match line.write(conn, protocol::DATA_STREAM) {
                Ok(true) => self.request_sent_at = Some(now),
                // No room to send yet: the rest goes when there is.
                Ok(false) => return Ok(()),
                Err(e) => {
                    let reason = format!("cannot send the request: {e:?}");
                    return Err(Failure::close(conn, close::BAD_REQUEST, reason));
                }
            }
        }
        match self.request.direction {
            Direction::Download => self.download(conn, now),
            Direction::Upload => self.upload(conn, now, qlog),
        }
    }

    fn download(&mut self, conn: &mut quiche::Connection, now: Instant) -> Result<(), Failure> {
        if !self.receiver.is_finished() {
            let read = self
                .receiver
                .read(conn, protocol::DATA_STREAM, &mut self.buf);
            if let Err(e) = read {
                let reason = format!("download failed: {e}");
                return Err(Failure::close(conn, close::CORRUPT, reason));
            }
            if self.receiver.is_finished() {
                self.finished_at = Some(now);
            }
        }
        if self.receiver.is_finished() {
            // A window full of the client's own packets (beside an upload
            // on a slow uplink) can leave no room for the request at first:
            // it goes out when there is.
            let ask = self
                .report_request
                .get_or_insert_with(|| LineWriter::new(b"{\"report\":true}\n".to_vec()));
            if let Err(e) = ask.write(conn, protocol::REPORT_STREAM) {
                let reason = format!("cannot ask for the server's report: {e:?}");
                return Err(Failure::close(conn, close::BAD_REQUEST, reason));
            }
        }
        if self
            .report_request
            .as_ref()
            .is_some_and(LineWriter::is_written)
        {
            let line = self
                .report
                .read(conn, protocol::REPORT_STREAM)
                .and_then(|line| {
                    line.map(|l| protocol::parse_line(&l.line, "server report"))
                        .transpose()
                });
            match line {
                Ok(Some(report)) => {
                    self.outcome = Some(report);
                    conn.close(true, close::DONE, b"done").ok();
                }
                Ok(None) => {}
                Err(e) => return Err(Failure::close(conn, close::BAD_REQUEST, e)),
            }
        }
        Ok(())
    }

    fn upload(
        &mut self,
        conn: &mut quiche::Connection,
        now: Instant,
        qlog: Option<&Path>,
    ) -> Result<(), Failure> {
        let stream = protocol::DATA_STREAM;
        self.sender.send(conn, stream, now);
        self.stats.sample(conn);
        let receipt = self.receipt.read(conn, stream).and_then(|line| {
            line.map(|l| protocol::parse_line::<Receipt>(&l.line, "server receipt"))
                .transpose()
        });
        match receipt {
            Ok(Some(receipt)) if receipt.bytes != self.sender.sent() => {
                let reason = format!(
                    "the server received {} bytes of the {} sent",
                    receipt.bytes,
                    self.sender.sent()
                );
                Err(Failure::close(conn, close::CORRUPT, reason))
            }
            Ok(Some(_)) => {
                self.finished_at = Some(now);
                self.outcome = Some(self.stats.report(conn, qlog));
                conn.close(true, close::DONE, b"done").ok();
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(Failure::close(conn, close::BAD_REQUEST, e)),
        }
    }
}
