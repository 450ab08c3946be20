//! A simulated connection's qlog file, its header's wall-clock time on the
//! simulation's clock.
//!
//! quiche stamps a qlog's events with the clock it reads, virtual time in
//! the simulator (`quiche::clock`), but writes the header's
//! `reference_time.wall_clock_time` from the host's `SystemTime::now()`
//! when the log starts. qlog-analysis puts the traces of several files on
//! one clock by that time, so a flow that started 15 s into a simulation,
//! whose connection the host created a few milliseconds after the first,
//! was read back as starting at 1.17 s. [`VirtualWallClock`] writes the
//! header with the simulation's own wall clock instead: the simulation
//! starts at the Unix epoch (1970-01-01T00:00:00Z), so a trace that starts
//! 15.075 s into the run says `1970-01-01T00:00:15.075000000Z`, and the
//! files of one seed are byte-identical however fast the host is.

use std::io::Write;
use std::time::Duration;
use std::time::UNIX_EPOCH;

/// The header field whose value is replaced.
const WALL_CLOCK_KEY: &[u8] = b"\"wall_clock_time\":\"";

/// A writer that passes a JSON-SEQ qlog through to `inner`, with the
/// `wall_clock_time` of its first record (the header) replaced.
pub struct VirtualWallClock<W: Write> {
    inner: W,
    /// The header so far, until its record ends (a newline); `None` once
    /// it has been written.
    header: Option<Vec<u8>>,
    wall_clock: String,
}

impl<W: Write> VirtualWallClock<W> {
    /// `started` is how long after the simulation's start the trace starts
    /// (its time 0).
    pub fn new(inner: W, started: Duration) -> Self {
        VirtualWallClock {
            inner,
            header: Some(Vec::new()),
            wall_clock: qlog_analysis::reader::format_wall_clock(UNIX_EPOCH + started),
        }
    }

    /// Writes the header held so far, its wall-clock time replaced when it
    /// has one.
    fn write_header(&mut self) -> std::io::Result<()> {
        let Some(header) = self.header.take() else {
            return Ok(());
        };
        let value = header
            .windows(WALL_CLOCK_KEY.len())
            .position(|w| w == WALL_CLOCK_KEY)
            .map(|at| at + WALL_CLOCK_KEY.len())
            .and_then(|from| {
                let len = header[from..].iter().position(|&b| b == b'"')?;
                Some(from..from + len)
            });
        match value {
            Some(value) => {
                self.inner.write_all(&header[..value.start])?;
                self.inner.write_all(self.wall_clock.as_bytes())?;
                self.inner.write_all(&header[value.end..])
            }
            None => self.inner.write_all(&header),
        }
    }
}

impl<W: Write> Write for VirtualWallClock<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(header) = &mut self.header else {
            return self.inner.write(buf);
        };
        match buf.iter().position(|&b| b == b'\n') {
            None => header.extend_from_slice(buf),
            Some(end) => {
                header.extend_from_slice(&buf[..=end]);
                self.write_header()?;
                self.inner.write_all(&buf[end + 1..])?;
            }
        }
        Ok(buf.len())
    }

    /// Flushes what has been written past the header; a header not yet
    /// ended is held until its newline.
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for VirtualWallClock<W> {
    /// A header that never ended (a connection dropped while starting its
    /// log) is written as it is: nothing written is lost.
    fn drop(&mut self) {
        if self.write_header().is_ok() {
            let _ = self.inner.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\u{1e}{\"file_schema\":\"x\",\"trace\":{\"common_fields\":{\"reference_time\":{\"clock_type\":\"monotonic\",\"epoch\":\"unknown\",\"wall_clock_time\":\"2026-11-26T21:28:47.659541628Z\"}}}}\n";
    const EVENT: &str = "\u{1e}{\"time\":0.0,\"name\":\"quic:parameters_set\",\"data\":{}}\n";

    fn written(chunks: &[&[u8]], started: Duration) -> String {
        let mut out = Vec::new();
        {
            let mut w = VirtualWallClock::new(&mut out, started);
            for c in chunks {
                w.write_all(c).unwrap();
            }
            w.flush().unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_header_says_when_the_trace_started_in_the_simulation() {
        let started = Duration::from_millis(15_075);
        let expected = HEADER.replace(
            "2026-11-26T21:28:47.659541628Z",
            "1970-01-01T00:00:15.075000000Z",
        ) + EVENT;
        // In one write, and cut anywhere (the writer sends the record
        // separator, the JSON and the newline apart).
        let all = format!("{HEADER}{EVENT}");
        assert_eq!(written(&[all.as_bytes()], started), expected);
        for cut in [1, 20, HEADER.len() - 1, HEADER.len(), HEADER.len() + 3] {
            let (a, b) = all.as_bytes().split_at(cut);
            assert_eq!(written(&[a, b], started), expected, "cut at {cut}");
        }
        // Events that mention the key later are left alone.
        let later = format!("{HEADER}{}", HEADER.replace('\u{1e}', "\u{1e} "));
        let out = written(&[later.as_bytes()], started);
        assert_eq!(out.matches("2026-11-26T21:28:47.659541628Z").count(), 1);
    }

    #[test]
    fn a_header_without_a_wall_clock_or_an_end_is_written_as_it_is() {
        let plain = "\u{1e}{\"trace\":{}}\n";
        assert_eq!(written(&[plain.as_bytes()], Duration::ZERO), plain);
        let cut = &HEADER.as_bytes()[..30];
        assert_eq!(written(&[cut], Duration::ZERO).as_bytes(), cut);
    }
}
