//! Bytes to records, with bounded memory: how a qlog file is cut into JSON
//! texts, and where each starts (1-based line).
//!
//! * JSON-SEQ (RFC 7464, `.sqlog`): records start with 0x1E;
//! * NDJSON (qvis's `.ndqlog`): one JSON object per line;
//! * JSON (`.qlog`): one object, streamed by `super::json` through a
//!   [`CountingReader`].
//!
//! No record is ever held whole beyond [`MAX_RECORD_BYTES`]: a longer one
//! stops the read with an error naming the file and the line where it
//! starts, so a 2 GiB single-line file costs at most that much memory.

use std::cell::Cell;
use std::io::{BufRead, Read};
use std::rc::Rc;

/// The JSON-SEQ record separator.
pub const RS: u8 = 0x1e;

/// The most one record (one event, or a header) may take. quiche's largest
/// events are a few kB; 16 MiB leaves room for any honest producer.
pub const MAX_RECORD_BYTES: usize = 16 << 20;

/// How many `\n` bytes `data` holds.
///
/// With `memchr`: the byte-by-byte count took 6.7 % of reading a 113 MB
/// quiche qlog (every record's bytes are counted once for line numbers).
pub fn count_newlines(data: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', data).count() as u64
}

/// One record read by [`Records::next`].
pub struct Record {
    /// Line where the record's first non-blank byte is.
    pub line: u64,
    /// The file ended before a separator closed the record.
    pub at_eof: bool,
}

/// Why a record could not be had.
pub enum RecordError {
    /// Reading the input failed.
    Io(std::io::Error),
    /// Longer than [`MAX_RECORD_BYTES`]; the record started at this line.
    TooLong {
        /// 1-based line of the file where the record started.
        line: u64,
    },
}

/// Records separated by `sep` (0x1E or `\n`).
pub struct Records<'r, R> {
    input: &'r mut R,
    sep: u8,
    /// Line of the next byte.
    line: u64,
    /// Bytes read from the input so far.
    pub bytes: u64,
    limit: usize,
}

impl<'r, R: BufRead> Records<'r, R> {
    /// Records of `input` separated by `sep`; `line` is the 1-based line the input starts at.
    pub fn new(input: &'r mut R, sep: u8, line: u64) -> Self {
        Records {
            input,
            sep,
            line,
            bytes: 0,
            limit: MAX_RECORD_BYTES,
        }
    }

    /// The next non-blank record into `buf` (trimmed), or `None` at the end.
    pub fn next(&mut self, buf: &mut Vec<u8>) -> Result<Option<Record>, RecordError> {
        loop {
            buf.clear();
            let start_line = self.line;
            let (found_sep, any) = self.read_until_sep(buf, start_line)?;
            if !any {
                return Ok(None);
            }
            let lead = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let mut end = buf.len();
            while end > lead && buf[end - 1].is_ascii_whitespace() {
                end -= 1;
            }
            if end == lead {
                continue;
            }
            let line = start_line + count_newlines(&buf[..lead]);
            buf.truncate(end);
            buf.drain(..lead);
            return Ok(Some(Record {
                line,
                at_eof: !found_sep,
            }));
        }
    }

    /// Append up to the separator (consumed, not stored); (separator found,
    /// anything read).
    fn read_until_sep(
        &mut self,
        buf: &mut Vec<u8>,
        start_line: u64,
    ) -> Result<(bool, bool), RecordError> {
        let mut any = false;
        loop {
            let avail = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(RecordError::Io(e)),
            };
            if avail.is_empty() {
                return Ok((false, any));
            }
            any = true;
            let (take, found) = match memchr::memchr(self.sep, avail) {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            if buf.len() + take > self.limit {
                return Err(RecordError::TooLong { line: start_line });
            }
            buf.extend_from_slice(&avail[..take]);
            let consumed = take + usize::from(found);
            self.line += count_newlines(&avail[..consumed]);
            self.bytes += consumed as u64;
            self.input.consume(consumed);
            if found {
                return Ok((true, any));
            }
        }
    }
}

/// What the plain JSON path has read: bytes, newlines, and the byte count
/// past which one record would be too long.
#[derive(Default)]
pub struct Budget {
    /// Bytes read so far.
    pub bytes: Cell<u64>,
    /// Newlines read so far.
    pub newlines: Cell<u64>,
    /// Reading past this byte count fails ([`Budget::exceeded`] tells).
    limit: Cell<u64>,
    exceeded: Cell<bool>,
}

impl Budget {
    /// Allow [`MAX_RECORD_BYTES`] more from here (a record starts).
    pub fn renew(&self) {
        self.limit
            .set(self.bytes.get().saturating_add(MAX_RECORD_BYTES as u64));
    }
    /// Whether a read went past the limit (the record was too long).
    pub fn exceeded(&self) -> bool {
        self.exceeded.get()
    }
}

/// Counts the bytes and newlines that go through it and stops at the
/// budget's limit: the plain JSON path relies on it for line numbers, since
/// serde_json pulls bytes one at a time, and for bounded memory.
pub struct CountingReader<'a, R> {
    /// The input counted.
    pub inner: &'a mut R,
    /// Where the counts go and where the limit comes from.
    pub budget: Rc<Budget>,
}

impl<R: BufRead> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let b = &self.budget;
        let room = b.limit.get().saturating_sub(b.bytes.get());
        if room == 0 {
            b.exceeded.set(true);
            return Err(std::io::Error::other("record too long"));
        }
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        b.bytes.set(b.bytes.get() + n as u64);
        b.newlines.set(b.newlines.get() + count_newlines(&buf[..n]));
        Ok(n)
    }
}

/// The first non-blank byte, not consumed, and the blank lines and bytes
/// skipped to reach it (a UTF-8 byte order mark counts as blank).
pub fn sniff<R: BufRead>(input: &mut R) -> std::io::Result<(Option<u8>, u64, u64)> {
    let (mut lines, mut bytes) = (0, 0);
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((None, lines, bytes));
        }
        let skip = buf
            .iter()
            .take_while(|b| b.is_ascii_whitespace() || matches!(**b, 0xef | 0xbb | 0xbf))
            .count();
        lines += count_newlines(&buf[..skip]);
        bytes += skip as u64;
        if skip < buf.len() {
            let first = buf[skip];
            input.consume(skip);
            return Ok((Some(first), lines, bytes));
        }
        let n = buf.len();
        input.consume(n);
    }
}

/// The first line, up to `limit` bytes (consumed, newline included if
/// reached); whether it is complete (ended by a newline or the file).
pub fn first_line<R: BufRead>(input: &mut R, limit: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let mut line = Vec::new();
    loop {
        let avail = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok((line, true));
        }
        let room = limit - line.len();
        match avail.iter().take(room).position(|&b| b == b'\n') {
            Some(i) => {
                line.extend_from_slice(&avail[..=i]);
                input.consume(i + 1);
                return Ok((line, true));
            }
            None => {
                let take = avail.len().min(room);
                line.extend_from_slice(&avail[..take]);
                input.consume(take);
                if line.len() >= limit {
                    return Ok((line, false));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_lines_and_blank_records() {
        let text = b"\x1e{\"a\":1}\n\x1e\n\x1e  \n {\"b\":2}\n\x1e{\"c\"";
        let mut input = &text[..];
        let mut r = Records::new(&mut input, RS, 1);
        let mut buf = Vec::new();
        // The leading separator gives an empty record, skipped.
        let rec = r.next(&mut buf).ok().unwrap().unwrap();
        assert_eq!(
            (rec.line, rec.at_eof, buf.as_slice()),
            (1, false, &b"{\"a\":1}"[..])
        );
        let rec = r.next(&mut buf).ok().unwrap().unwrap();
        assert_eq!((rec.line, buf.as_slice()), (4, &b"{\"b\":2}"[..]));
        let rec = r.next(&mut buf).ok().unwrap().unwrap();
        assert_eq!(
            (rec.line, rec.at_eof, buf.as_slice()),
            (5, true, &b"{\"c\""[..])
        );
        assert!(r.next(&mut buf).ok().unwrap().is_none());
    }

    #[test]
    fn too_long_record_names_its_line() {
        let mut text = b"\x1e{}\n\x1e".to_vec();
        text.extend(std::iter::repeat_n(b'x', 100));
        let mut input = &text[..];
        let mut r = Records::new(&mut input, RS, 1);
        r.limit = 50;
        let mut buf = Vec::new();
        assert!(r.next(&mut buf).ok().unwrap().is_some());
        assert!(matches!(
            r.next(&mut buf),
            Err(RecordError::TooLong { line: 2 })
        ));
    }
}
