//! The quic-bulk wire protocol.
//!
//! ALPN `lbe-bulk/1`. The client opens bidirectional stream 0 and writes one
//! JSON [`Request`] line. Then:
//!
//! - download: the server writes the payload on stream 0 and FIN. The client
//!   checks it, then asks for the sender's figures on stream 4 (one line,
//!   `{"report":true}`), which the server answers with one [`Report`] line.
//! - upload: the client writes the payload after its request line and FIN;
//!   the server checks it and answers on stream 0 with one [`Receipt`] line.
//!
//! A request may carry `deadline_ms`: the client wants the download done
//! within that many milliseconds and the server's sender becomes
//! deadline-aware (`lbe_cc::deadline`; the request's `cc` must be `cdg` or
//! `ledbatpp` and the amount a byte count). The server switches the
//! connection to `<cc>,deadline=<ms>ms` when it reads the request, so the
//! deadline counts from the first packet that controller sends. Its report
//! then carries `time_in_levels_s`. Both fields are left out when unused,
//! so older peers read the lines unchanged.
//!
//! The payload is [`pattern`]: every byte depends on its offset, so a
//! receiver detects loss, duplication, reordering and truncation.

use serde::Deserialize;
use serde::Serialize;

/// The application protocol.
pub const ALPN: &[u8] = b"lbe-bulk/1";

/// Stream carrying the request and the payload.
pub const DATA_STREAM: u64 = 0;
/// Stream on which a download's client asks for the server's report.
pub const REPORT_STREAM: u64 = 4;

/// Application error codes in CONNECTION_CLOSE.
pub mod close {
    /// A well-formed end.
    pub const DONE: u64 = 0;
    /// The request could not be understood.
    pub const BAD_REQUEST: u64 = 1;
    /// The payload was not the pattern or had the wrong length.
    pub const CORRUPT: u64 = 2;
}

/// Which way the payload flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Server → client.
    Download,
    /// Client → server.
    Upload,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Download => "download",
            Direction::Upload => "upload",
        }
    }
}

/// How much to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Amount {
    /// Exactly this many payload bytes.
    Bytes(u64),
    /// As much as fits in this many milliseconds of sending.
    DurationMs(u64),
}

/// What the client asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub direction: Direction,
    pub amount: Amount,
    /// The sender's controller spec, as the client named it (names qlogs;
    /// the server installed it during the handshake).
    pub cc: String,
    /// The flow's label (names qlogs).
    pub label: String,
    /// Deadline for a download, milliseconds (see the module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

/// RTT percentiles, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RttMs {
    pub min: f64,
    pub p50: f64,
    pub p99: f64,
}

/// A sender's view of a finished transfer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub rtt_ms: RttMs,
    pub lost_packets: u64,
    /// The sender's qlog, if it writes one.
    pub qlog: Option<String>,
    /// A deadline-aware sender's time in each aggressiveness level,
    /// seconds, level 0 (full LBE) first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_in_levels_s: Option<Vec<f64>>,
}

/// An upload's receiver confirms what it got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub bytes: u64,
}

/// A duration as the protocol's milliseconds (`DurationMs`,
/// `deadline_ms`): whole milliseconds, at least 1, so that a duration
/// under a millisecond still means "some time" rather than none.
pub fn millis(d: std::time::Duration) -> u64 {
    d.as_millis().max(1) as u64
}

/// Parses one JSON line, with an error saying what it was meant to be.
pub fn parse_line<T: for<'de> Deserialize<'de>>(line: &[u8], what: &str) -> Result<T, String> {
    serde_json::from_slice(line).map_err(|e| format!("malformed {what}: {e}"))
}

/// One JSON line.
pub fn to_line<T: Serialize>(value: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).expect("protocol messages serialize");
    line.push(b'\n');
    line
}

/// The difference between consecutive payload words: odd (the golden
/// ratio's 64-bit constant), so word `i`, `(i + 1) * STEP` modulo 2^64,
/// differs from every other of the 2^64 words; none of its bytes is 0x00
/// or 0xff, so adding it changes every byte of a word, carry or not.
const STEP: u64 = 0x9e37_79b9_7f4a_7c15;

/// The payload word at word index `i`, as a number: the words are an
/// arithmetic progression, so a writer or a checker walks them with one
/// addition each. Until 2026-11-27 a word was SplitMix64's output function
/// of its index (three multiplications and three shifts); a receiver
/// checking its bytes does not need them to look random, only to differ
/// from every other position's. On one 10 s, 20 Mbit/s `lbe-lab run --sim`
/// flow (`valgrind --tool=callgrind`) writing the payload took 5.5 % of the
/// instructions and checking it 5.0 %; now 0.7 % and 2.3 %, and the whole
/// run 7.7 % fewer instructions, with the same `summary.json`.
fn word_value(i: u64) -> u64 {
    i.wrapping_add(1).wrapping_mul(STEP)
}

/// The payload byte at `offset`.
pub fn pattern(offset: u64) -> u8 {
    word_value(offset / 8).to_le_bytes()[(offset % 8) as usize]
}

/// Fills `buf` with the payload starting at `offset`: the part of a word
/// before the first word boundary, whole words, then the part of the last.
pub fn fill(offset: u64, buf: &mut [u8]) {
    let skip = (offset % 8) as usize;
    let head = ((8 - skip) % 8).min(buf.len());
    buf[..head].copy_from_slice(&word_value(offset / 8).to_le_bytes()[skip..skip + head]);
    let mut value = word_value((offset + head as u64) / 8);
    let mut words = buf[head..].chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&value.to_le_bytes());
        value = value.wrapping_add(STEP);
    }
    let tail = words.into_remainder();
    let n = tail.len();
    tail.copy_from_slice(&value.to_le_bytes()[..n]);
}

/// The offset of the first byte of `buf` that differs from the payload at
/// `offset`, if any.
///
/// Compared a word at a time against the payload words, without writing the
/// expected bytes anywhere: the receiver checks every byte it reads, and
/// filling a zeroed buffer with the expected payload and comparing it was
/// 10.5 % of a simulated transfer's instructions (the zeroing alone 5.3 %;
/// `valgrind --tool=callgrind`, one 30 s, 20 Mbit/s `lbe-lab run --sim`
/// flow); this was 3.5 % with SplitMix64's words; `word_value`'s are
/// cheaper still.
pub fn first_mismatch(offset: u64, buf: &[u8]) -> Option<u64> {
    let byte_mismatch = |from: u64, bytes: &[u8]| {
        (from..)
            .zip(bytes)
            .find(|&(at, &b)| b != pattern(at))
            .map(|(at, _)| at)
    };
    // The bytes before the first word boundary, then whole words, then
    // the part of the last word.
    let head = (((8 - offset % 8) % 8) as usize).min(buf.len());
    if let Some(at) = byte_mismatch(offset, &buf[..head]) {
        return Some(at);
    }
    let start = offset + head as u64;
    let mut value = word_value(start / 8);
    let mut words = buf[head..].chunks_exact(8);
    for (index, w) in (start / 8..).zip(&mut words) {
        if u64::from_le_bytes(w.try_into().expect("8 bytes")) != value {
            return byte_mismatch(index * 8, w);
        }
        value = value.wrapping_add(STEP);
    }
    let tail = words.remainder();
    byte_mismatch(offset + (buf.len() - tail.len()) as u64, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_matches_pattern_at_any_alignment() {
        for (offset, len) in [0u64, 1, 7, 8, 13, 4095, 1 << 33]
            .into_iter()
            .flat_map(|o| [(o, 0), (o, 1), (o, 3), (o, 8), (o, 100)])
        {
            let mut buf = vec![0u8; len];
            fill(offset, &mut buf);
            for (i, b) in buf.iter().enumerate() {
                assert_eq!(*b, pattern(offset + i as u64));
            }
            assert_eq!(first_mismatch(offset, &buf), None);
        }
    }

    #[test]
    fn the_payload_is_the_progression_of_its_step() {
        // Word 0 is STEP, word 1 twice STEP, little-endian.
        let mut buf = [0u8; 20];
        fill(0, &mut buf);
        assert_eq!(
            buf,
            [
                0x15, 0x7c, 0x4a, 0x7f, 0xb9, 0x79, 0x37, 0x9e, // STEP
                0x2a, 0xf8, 0x94, 0xfe, 0x72, 0xf3, 0x6e, 0x3c, // 2 STEP mod 2^64
                0x3f, 0x74, 0xdf, 0x7d,
            ]
        );
        // Each byte of a word differs from the same byte of the word
        // before it.
        for i in [0u64, 1, 2, 1000, u64::MAX / STEP, (1 << 61) - 2] {
            let (a, b) = (word_value(i).to_le_bytes(), word_value(i + 1).to_le_bytes());
            assert!(
                a.iter().zip(&b).all(|(x, y)| x != y),
                "words {i} and {}",
                i + 1
            );
        }
        assert!(STEP.to_le_bytes().iter().all(|&b| b != 0x00 && b != 0xff));
        assert_eq!(STEP % 2, 1);
    }

    #[test]
    fn millis_are_whole_and_at_least_one() {
        use std::time::Duration;
        assert_eq!(millis(Duration::from_micros(1500)), 1);
        assert_eq!(millis(Duration::ZERO), 1);
        assert_eq!(millis(Duration::from_secs(40)), 40_000);
    }

    #[test]
    fn every_corrupted_byte_is_located_at_any_alignment() {
        for offset in [0u64, 1, 5, 7, 8, 9, 4095, (1 << 33) + 3] {
            for len in [1usize, 7, 8, 9, 17, 100] {
                let mut good = vec![0u8; len];
                fill(offset, &mut good);
                for i in 0..len {
                    let mut bad = good.clone();
                    bad[i] ^= 0x01;
                    assert_eq!(
                        first_mismatch(offset, &bad),
                        Some(offset + i as u64),
                        "offset {offset}, length {len}, byte {i}"
                    );
                }
                // The first of two corrupted bytes is the one reported.
                if len > 2 {
                    let mut bad = good.clone();
                    bad[len - 1] ^= 0x80;
                    bad[1] ^= 0x80;
                    assert_eq!(first_mismatch(offset, &bad), Some(offset + 1));
                }
            }
        }
        assert_eq!(first_mismatch(3, &[]), None);
    }

    #[test]
    fn mismatch_is_located() {
        let mut buf = vec![0u8; 10_000];
        fill(5, &mut buf);
        buf[9_000] ^= 0x40;
        assert_eq!(first_mismatch(5, &buf), Some(9_005));
        // A shifted stream (one byte lost) is caught at once.
        assert!(first_mismatch(6, &buf[..100]).is_some());
    }

    #[test]
    fn messages_round_trip() {
        let r = Request {
            direction: Direction::Download,
            amount: Amount::Bytes(50_000_000),
            cc: "ledbatpp:target=25ms".into(),
            label: "flow1".into(),
            deadline_ms: None,
        };
        let line = to_line(&r);
        assert_eq!(
            std::str::from_utf8(&line).unwrap(),
            "{\"direction\":\"download\",\"amount\":{\"bytes\":50000000},\"cc\":\"ledbatpp:target=25ms\",\"label\":\"flow1\"}\n"
        );
        assert_eq!(
            parse_line::<Request>(&line[..line.len() - 1], "request"),
            Ok(r.clone())
        );
        let with_deadline = Request {
            deadline_ms: Some(120_000),
            ..r.clone()
        };
        let line = to_line(&with_deadline);
        assert!(std::str::from_utf8(&line)
            .unwrap()
            .ends_with(",\"label\":\"flow1\",\"deadline_ms\":120000}\n"));
        assert_eq!(
            parse_line::<Request>(&line[..line.len() - 1], "request"),
            Ok(with_deadline)
        );
        let e = parse_line::<Request>(b"{\"direction\":\"sideways\"}", "request").unwrap_err();
        assert!(
            e.starts_with("malformed request: unknown variant `sideways`"),
            "{e}"
        );
    }
}
