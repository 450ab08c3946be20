//! Stream plumbing shared by both ends: sending the payload, receiving and
//! checking it, and reading one-line messages.

use std::time::Duration;
use std::time::Instant;

use crate::protocol;
use crate::protocol::Amount;

/// Bytes handed to quiche per `stream_send` call.
const CHUNK: usize = 64 * 1024;

/// Writes the payload on a stream.
pub struct Sender {
    amount: Amount,
    sent: u64,
    started: Option<Instant>,
    fin_sent: bool,
    chunk: Vec<u8>,
}

impl Sender {
    pub fn new(amount: Amount) -> Self {
        Sender {
            amount,
            sent: 0,
            started: None,
            fin_sent: false,
            chunk: vec![0u8; CHUNK],
        }
    }

    /// Payload bytes quiche has accepted.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Whether the FIN has been written.
    pub fn is_finished(&self) -> bool {
        self.fin_sent
    }

    /// When a `--duration` transfer stops taking new data: its first write
    /// plus the duration (`None` for a byte count, or before the first
    /// write). A driver with nothing else due wakes the sender then, so
    /// that the FIN goes out on time.
    pub fn stop_at(&self) -> Option<Instant> {
        match (self.amount, self.started) {
            (Amount::DurationMs(ms), Some(started)) => Some(started + Duration::from_millis(ms)),
            _ => None,
        }
    }

    /// Writes what quiche takes now, up to about one congestion window
    /// waiting to be sent ([`lbe_endpoint::write_budget`]): a `--duration`
    /// transfer stops sending about a window after its stop, not the
    /// stream's whole flow-control window later.
    pub fn send(&mut self, conn: &mut quiche::Connection, stream: u64, now: Instant) {
        let started = *self.started.get_or_insert(now);
        // Read once: each write adds its bytes to quiche's unsent count and
        // nothing in between moves the window, so the budget left is the
        // budget less what was written.
        let mut budget = lbe_endpoint::write_budget(conn);
        while !self.fin_sent {
            // The FIN goes with the last payload bytes, never alone: quiche
            // takes a stream's send side for complete once every byte up
            // to its final size is acknowledged, so a FIN written alone
            // after everything written was acknowledged is dropped with the
            // stream before it is sent, and the receiver waits for it until
            // its idle timeout (seen in `lbe-bulk`'s session tests; quiche
            // issue 2525, "zero-length STREAM FIN can be dropped before it
            // is sent", https://github.com/cloudflare/quiche/issues/2525,
            // open in quiche 0.30.0). A `--duration` transfer's stop is
            // therefore one last byte with the FIN.
            let (remaining, last) = match self.amount {
                Amount::Bytes(total) => (total - self.sent, true),
                Amount::DurationMs(ms)
                    if now.duration_since(started) >= Duration::from_millis(ms) =>
                {
                    (1, true)
                }
                Amount::DurationMs(_) => (u64::MAX, false),
            };
            if remaining == 0 {
                // An empty transfer: nothing was written, nothing can have
                // been acknowledged.
                match conn.stream_send(stream, b"", true) {
                    Ok(_) => self.fin_sent = true,
                    Err(quiche::Error::Done) => {}
                    Err(e) => log::debug!("stream_send fin: {e:?}"),
                }
                return;
            }
            // What quiche takes now (its free window and the stream's
            // credit): filling more would only be thrown away.
            let capacity = conn.stream_capacity(stream).unwrap_or(budget);
            let len = remaining.min(CHUNK.min(budget).min(capacity) as u64) as usize;
            if len == 0 {
                return;
            }
            let fin = last && len as u64 == remaining;
            protocol::fill(self.sent, &mut self.chunk[..len]);
            match conn.stream_send(stream, &self.chunk[..len], fin) {
                Ok(n) => {
                    self.sent += n as u64;
                    budget -= n;
                    if n < len {
                        return;
                    }
                    self.fin_sent = fin;
                }
                Err(quiche::Error::Done) => return,
                Err(e) => {
                    log::debug!("stream_send: {e:?}");
                    return;
                }
            }
        }
    }
}

/// Reads the payload from a stream and checks every byte.
pub struct Receiver {
    expected: Option<Amount>,
    received: u64,
    finished: bool,
}

impl Receiver {
    /// With `expected`, a byte count that differs is an error at the FIN.
    pub fn new(expected: Option<Amount>) -> Self {
        Receiver {
            expected,
            received: 0,
            finished: false,
        }
    }

    /// Payload bytes received and checked so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Whether the FIN has arrived.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Checks and counts `data`; `fin` ends the payload.
    pub fn take(&mut self, data: &[u8], fin: bool) -> Result<(), String> {
        if let Some(at) = protocol::first_mismatch(self.received, data) {
            return Err(format!("payload corrupt at byte {at}"));
        }
        self.received += data.len() as u64;
        if fin {
            self.finished = true;
            if let Some(Amount::Bytes(n)) = self.expected {
                if self.received != n {
                    return Err(format!(
                        "payload ended after {} bytes, expected {n}",
                        self.received
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reads what the stream has. Returns whether the FIN has arrived.
    pub fn read(
        &mut self,
        conn: &mut quiche::Connection,
        stream: u64,
        buf: &mut [u8],
    ) -> Result<bool, String> {
        while !self.finished {
            match conn.stream_recv(stream, buf) {
                Ok((n, fin)) => self.take(&buf[..n], fin)?,
                Err(quiche::Error::Done) => break,
                Err(e) => return Err(format!("stream {stream} failed: {e:?}")),
            }
        }
        Ok(self.finished)
    }
}

/// A complete line (without its newline), whatever followed it in the
/// same read, and whether that read also ended the stream.
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    pub line: Vec<u8>,
    pub rest: Vec<u8>,
    pub fin: bool,
}

/// Collects one newline-terminated line from a stream.
pub struct LineReader {
    line: Vec<u8>,
    limit: usize,
    done: bool,
}

impl LineReader {
    /// A reader that rejects lines longer than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        LineReader {
            line: Vec::new(),
            limit,
            done: false,
        }
    }

    /// Reads until a newline (or FIN). Returns the line once complete, with
    /// whatever followed it in the same read and whether the stream ended
    /// there (a short upload's payload and FIN can come with its request).
    pub fn read(
        &mut self,
        conn: &mut quiche::Connection,
        stream: u64,
    ) -> Result<Option<Line>, String> {
        let mut buf = [0u8; 4096];
        while !self.done {
            match conn.stream_recv(stream, &mut buf) {
                Ok((n, fin)) => {
                    self.line.extend_from_slice(&buf[..n]);
                    if let Some(pos) = self.line.iter().position(|b| *b == b'\n') {
                        self.done = true;
                        let rest = self.line.split_off(pos + 1);
                        self.line.pop();
                        let line = std::mem::take(&mut self.line);
                        return Ok(Some(Line { line, rest, fin }));
                    }
                    if self.line.len() > self.limit {
                        return Err(format!(
                            "line on stream {stream} longer than {} bytes",
                            self.limit
                        ));
                    }
                    if fin {
                        self.done = true;
                        let line = std::mem::take(&mut self.line);
                        return Ok(Some(Line {
                            line,
                            rest: Vec::new(),
                            fin,
                        }));
                    }
                }
                Err(quiche::Error::Done) => return Ok(None),
                Err(e) => return Err(format!("stream {stream} failed: {e:?}")),
            }
        }
        // Drain anything after the line (there should be nothing).
        while conn.stream_recv(stream, &mut buf).is_ok() {}
        Ok(None)
    }
}

/// One line written, a part at a time when quiche has no room for all of
/// it (its congestion window or the peer's flow control): the request, the
/// report request, the report and the receipt. Call [`write`](Self::write)
/// again after every batch of datagrams until it says the line is out.
#[derive(Debug)]
pub struct LineWriter {
    line: Vec<u8>,
    written: usize,
    fin: bool,
}

impl LineWriter {
    /// A writer of `line` (with its newline) that ends the stream with it.
    pub fn new(line: Vec<u8>) -> Self {
        LineWriter {
            line,
            written: 0,
            fin: true,
        }
    }

    /// A writer of `line` that leaves the stream open (an upload's request:
    /// the payload follows it).
    pub fn without_fin(line: Vec<u8>) -> Self {
        LineWriter {
            fin: false,
            ..LineWriter::new(line)
        }
    }

    /// Writes what is left of the line on `stream` (the FIN with its last
    /// byte, unless made [`without_fin`](Self::without_fin)). `Ok(true)` once all of it is written; `Ok(false)` while quiche
    /// has no room for the rest (`Done`, or a part written); other errors
    /// are quiche's.
    pub fn write(&mut self, conn: &mut quiche::Connection, stream: u64) -> quiche::Result<bool> {
        if self.is_written() {
            return Ok(true);
        }
        match conn.stream_send(stream, &self.line[self.written..], self.fin) {
            Ok(n) => self.written += n,
            Err(quiche::Error::Done) => {}
            Err(e) => return Err(e),
        }
        Ok(self.is_written())
    }

    /// Whether the whole line is written.
    pub fn is_written(&self) -> bool {
        self.written == self.line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_checks_content_and_length() {
        let mut data = vec![0u8; 1000];
        protocol::fill(0, &mut data);

        let mut rx = Receiver::new(Some(Amount::Bytes(1000)));
        rx.take(&data[..400], false).unwrap();
        rx.take(&data[400..], true).unwrap();
        assert_eq!(rx.received(), 1000);
        assert!(rx.is_finished());

        let mut short = Receiver::new(Some(Amount::Bytes(1001)));
        assert_eq!(
            short.take(&data, true),
            Err("payload ended after 1000 bytes, expected 1001".to_string())
        );

        // A lost chunk shifts the stream: caught at its first byte.
        let mut gap = Receiver::new(None);
        gap.take(&data[..100], false).unwrap();
        assert_eq!(
            gap.take(&data[200..300], false),
            Err("payload corrupt at byte 100".to_string())
        );
    }
}
