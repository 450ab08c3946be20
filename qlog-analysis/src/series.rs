//! Time series kept small enough for long runs: per time bucket only the
//! first, smallest, largest and last point survive, so a plot keeps every
//! spike while a 1 GB qlog needs a few MB of points.

use std::collections::BTreeMap;

/// `(time in seconds, value)` points, in time order.
pub type Points = Vec<(f64, f64)>;

/// Decimating series builder.
#[derive(Debug, Clone)]
pub struct SeriesBuilder {
    resolution_s: f64,
    bucket: i64,
    pending: Vec<(f64, f64)>,
    out: Points,
}

impl SeriesBuilder {
    /// `resolution_s` = 0 keeps every point.
    pub fn new(resolution_s: f64) -> Self {
        SeriesBuilder {
            resolution_s,
            bucket: i64::MIN,
            pending: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Adds the point (`t` seconds, `v`); non-finite points are dropped.
    pub fn push(&mut self, t: f64, v: f64) {
        if !t.is_finite() || !v.is_finite() {
            return;
        }
        if self.resolution_s <= 0.0 {
            self.out.push((t, v));
            return;
        }
        let b = (t / self.resolution_s).floor() as i64;
        if b > self.bucket {
            self.flush();
            self.bucket = b;
        }
        self.pending.push((t, v));
        if self.pending.len() > 64 {
            self.compact();
        }
    }

    /// Keep first, min, max, last of the pending points.
    fn compact(&mut self) {
        if self.pending.len() <= 4 {
            return;
        }
        let first = self.pending[0];
        let last = *self.pending.last().unwrap();
        let mut min = first;
        let mut max = first;
        for &p in &self.pending {
            if p.1 < min.1 {
                min = p;
            }
            if p.1 > max.1 {
                max = p;
            }
        }
        let mut keep = vec![first, min, max, last];
        keep.sort_by(|a, b| a.0.total_cmp(&b.0));
        keep.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        self.pending = keep;
    }

    fn flush(&mut self) {
        self.compact();
        self.out.append(&mut self.pending);
    }

    /// The kept points, in time order.
    pub fn finish(mut self) -> Points {
        self.flush();
        self.out
    }
}

/// Byte counts summed into fixed buckets (10 ms), from which goodput over
/// time is computed at any coarser bin width.
#[derive(Debug, Clone, Default)]
pub struct ByteBuckets {
    buckets: BTreeMap<i64, u64>,
}

/// Width of a [`ByteBuckets`] bucket.
pub const BUCKET_S: f64 = 0.01;

/// The most bins [`ByteBuckets::rate_bps`] returns.
pub const MAX_BINS: i64 = 100_000;

impl ByteBuckets {
    /// Adds `bytes` delivered at `t` seconds to its bucket.
    pub fn add(&mut self, t: f64, bytes: u64) {
        if !t.is_finite() || bytes == 0 {
            return;
        }
        let b = (t / BUCKET_S).floor() as i64;
        *self.buckets.entry(b).or_insert(0) += bytes;
    }

    /// Whether no byte was added.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// The end of the last bucket that holds a byte, seconds: when the last
    /// byte was added, to the bucket's [`BUCKET_S`]; `None` when none was.
    pub fn last_s(&self) -> Option<f64> {
        self.buckets
            .last_key_value()
            .map(|(&b, _)| (b + 1) as f64 * BUCKET_S)
    }

    /// Rate in bit/s per bin of `bin_s` seconds (rounded to whole buckets),
    /// bins aligned to t = 0, from the first to the last non-empty bin
    /// (empty bins in between are zeros). Each point is at the bin's centre.
    pub fn rate_bps(&self, bin_s: f64) -> Points {
        let mut per_bin = ((bin_s / BUCKET_S).round() as i64).max(1);
        // At most MAX_BINS bins, however far apart the first and last
        // bytes are (a trace with absurd times must not allocate without
        // bound): wider bins then.
        if let (Some((&lo, _)), Some((&hi, _))) = (
            self.buckets.first_key_value(),
            self.buckets.last_key_value(),
        ) {
            let span = (hi as i128 - lo as i128 + 1) as f64;
            let needed = (span / MAX_BINS as f64).ceil().min(i64::MAX as f64) as i64;
            per_bin = per_bin.max(needed);
        }
        let width = per_bin as f64 * BUCKET_S;
        let mut bins: BTreeMap<i64, u64> = BTreeMap::new();
        for (&b, &bytes) in &self.buckets {
            *bins.entry(b.div_euclid(per_bin)).or_insert(0) += bytes;
        }
        let (Some((&lo, _)), Some((&hi, _))) = (bins.first_key_value(), bins.last_key_value())
        else {
            return Vec::new();
        };
        (lo..=hi)
            .map(|k| {
                let bytes = bins.get(&k).copied().unwrap_or(0);
                ((k as f64 + 0.5) * width, bytes as f64 * 8.0 / width)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_byte_is_at_the_end_of_its_bucket() {
        let mut b = ByteBuckets::default();
        assert_eq!(b.last_s(), None);
        b.add(3.004, 100);
        b.add(1.0, 100);
        // No bytes, no delivery.
        b.add(7.5, 0);
        let end = b.last_s().unwrap();
        assert!((end - 3.01).abs() < 1e-12, "{end}");
        b.add(-0.002, 1);
        assert_eq!(b.last_s(), Some(end));
    }

    #[test]
    fn decimation_keeps_extremes() {
        let mut s = SeriesBuilder::new(1.0);
        for i in 0..1000 {
            let t = i as f64 / 1000.0;
            let v = if i == 500 {
                100.0
            } else if i == 700 {
                -5.0
            } else {
                1.0
            };
            s.push(t, v);
        }
        s.push(1.5, 2.0);
        let pts = s.finish();
        assert!(pts.len() <= 5, "{pts:?}");
        assert!(pts.contains(&(0.5, 100.0)));
        assert!(pts.contains(&(0.7, -5.0)));
        assert_eq!(pts.first(), Some(&(0.0, 1.0)));
        assert_eq!(pts.last(), Some(&(1.5, 2.0)));
    }

    #[test]
    fn full_resolution() {
        let mut s = SeriesBuilder::new(0.0);
        s.push(0.0, 1.0);
        s.push(0.0, 2.0);
        assert_eq!(s.finish().len(), 2);
    }

    #[test]
    fn rate_bins_are_bounded() {
        let mut b = ByteBuckets::default();
        b.add(0.0, 1000);
        b.add(1e12, 1000);
        let r = b.rate_bps(0.01);
        assert!(r.len() as i64 <= MAX_BINS, "{}", r.len());
        assert_eq!(r.first().map(|p| p.1 > 0.0), Some(true));
    }

    #[test]
    fn byte_buckets_rate() {
        let mut b = ByteBuckets::default();
        b.add(0.1, 1000);
        b.add(0.9, 1000);
        b.add(2.5, 500);
        let r = b.rate_bps(1.0);
        assert_eq!(r, vec![(0.5, 16000.0), (1.5, 0.0), (2.5, 4000.0)]);
    }
}
