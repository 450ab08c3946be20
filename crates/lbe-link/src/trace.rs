//! A trace-driven rate in Mahimahi's format: one line per delivery
//! opportunity of [`TRACE_OPPORTUNITY_BYTES`] bytes, each line a time in
//! whole milliseconds from the start of the trace (the same time repeated
//! for several opportunities in one millisecond), non-decreasing; the trace
//! repeats with a period of its last time.
//!
//! The reader is ours, written from the format's description; every error
//! is one line naming the file and the line.

use std::path::Path;

/// Wire bytes one delivery opportunity carries (Mahimahi's MTU).
pub const TRACE_OPPORTUNITY_BYTES: u64 = 1500;

/// A parsed trace: the opportunities' times within one period, in
/// milliseconds, and the period (the last time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    /// Where it was read from (for messages and summaries).
    pub name: String,
    /// The opportunities' times in one period, milliseconds, non-decreasing.
    pub times_ms: Vec<u64>,
}

impl DeliveryTrace {
    /// Reads a trace file; errors read `FILE:LINE: why` (or `FILE: why`).
    pub fn read(path: &Path) -> Result<Self, String> {
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{name}: cannot read trace: {e}"))?;
        Self::parse(&name, &text)
    }

    /// Parses a trace's text; `name` is what errors call the file.
    pub fn parse(name: &str, text: &str) -> Result<Self, String> {
        let mut times_ms: Vec<u64> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let t = line.trim();
            if t.is_empty() {
                return Err(format!(
                    "{name}:{n}: empty line; expected a time in whole milliseconds"
                ));
            }
            let ms: u64 = t.parse().map_err(|_| {
                format!("{name}:{n}: '{t}' is not a time in whole milliseconds (e.g. 12)")
            })?;
            if let Some(&prev) = times_ms.last() {
                if ms < prev {
                    return Err(format!(
                        "{name}:{n}: {ms} ms is before the previous line's {prev} ms; times must not decrease"
                    ));
                }
            }
            times_ms.push(ms);
        }
        match times_ms.last() {
            None => Err(format!("{name}: empty trace; expected one line per delivery opportunity")),
            Some(0) => Err(format!(
                "{name}:{}: the last time is 0 ms; the trace repeats with a period of its last time, which must be above 0",
                times_ms.len()
            )),
            Some(_) => Ok(Self {
                name: name.to_string(),
                times_ms,
            }),
        }
    }

    /// The period after which the trace repeats, milliseconds.
    pub fn period_ms(&self) -> u64 {
        self.times_ms.last().copied().unwrap_or(1)
    }

    /// The mean rate over one period, bits per second (wire bytes).
    pub fn mean_rate_bps(&self) -> u64 {
        self.times_ms.len() as u64 * TRACE_OPPORTUNITY_BYTES * 8 * 1000 / self.period_ms()
    }

    /// The time of opportunity `k` (counted over the repetitions), in
    /// nanoseconds from the start of the trace.
    pub fn opportunity_ns(&self, k: u64) -> u64 {
        let n = self.times_ms.len() as u64;
        ((k / n) * self.period_ms() + self.times_ms[(k % n) as usize]) * 1_000_000
    }

    /// The first opportunity at or after `ns` from the start of the trace.
    pub fn first_at_or_after(&self, ns: u64) -> u64 {
        let n = self.times_ms.len() as u64;
        let period_ns = self.period_ms() * 1_000_000;
        let cycle = ns / period_ns;
        let within = ns % period_ns;
        if within == 0 && cycle > 0 {
            // The previous repetition's last lines fall exactly here.
            let idx = self.times_ms.partition_point(|&t| t < self.period_ms()) as u64;
            return (cycle - 1) * n + idx;
        }
        // The last time equals the period, so one is always at or after.
        let idx = self.times_ms.partition_point(|&t| t * 1_000_000 < within) as u64;
        cycle * n + idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_trace_and_loops_it() {
        let t = DeliveryTrace::parse("t.down", "1\n1\n3\n").unwrap();
        assert_eq!(t.times_ms, vec![1, 1, 3]);
        assert_eq!(t.period_ms(), 3);
        // 3 opportunities of 1500 B in 3 ms: 12 Mbit/s.
        assert_eq!(t.mean_rate_bps(), 12_000_000);
        let ms = |k| t.opportunity_ns(k) / 1_000_000;
        assert_eq!(
            (0..7).map(ms).collect::<Vec<_>>(),
            vec![1, 1, 3, 4, 4, 6, 7]
        );
        assert_eq!(t.first_at_or_after(0), 0);
        assert_eq!(t.first_at_or_after(1_000_000), 0);
        assert_eq!(t.first_at_or_after(1_000_001), 2);
        assert_eq!(t.first_at_or_after(3_000_000), 2);
        assert_eq!(t.first_at_or_after(3_000_001), 3);
        assert_eq!(t.first_at_or_after(6_000_000), 5);
        let whole = DeliveryTrace::parse("w.down", "0\n2\n").unwrap();
        assert_eq!(whole.first_at_or_after(2_000_000), 1);
        assert_eq!(whole.opportunity_ns(2), 2_000_000);
    }

    #[test]
    fn bad_traces_name_the_file_and_line() {
        let cases = [
            ("", "x.down: empty trace; expected one line per delivery opportunity"),
            (
                "1\nfast\n",
                "x.down:2: 'fast' is not a time in whole milliseconds (e.g. 12)",
            ),
            (
                "1\n5\n4\n",
                "x.down:3: 4 ms is before the previous line's 5 ms; times must not decrease",
            ),
            (
                "1\n\n2\n",
                "x.down:2: empty line; expected a time in whole milliseconds",
            ),
            ("-1\n", "x.down:1: '-1' is not a time in whole milliseconds (e.g. 12)"),
            (
                "0\n0\n",
                "x.down:2: the last time is 0 ms; the trace repeats with a period of its last time, which must be above 0",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(DeliveryTrace::parse("x.down", text), Err(want.to_string()));
        }
    }
}
