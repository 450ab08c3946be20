//! A set of non-overlapping half-open byte ranges, used to count each stream
//! byte once however often it is sent, retransmitted or acknowledged.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent `[start, end)` ranges keyed by start.
#[derive(Debug, Default, Clone)]
pub struct RangeSet {
    ranges: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `[start, end)`; return how many of its bytes were not in the set.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if end <= start {
            return 0;
        }
        let mut new_start = start;
        let mut new_end = end;
        let mut covered = 0u64;

        // A range starting at or before `start` may overlap or touch it.
        if let Some((&s, &e)) = self.ranges.range(..=start).next_back() {
            if e >= start {
                if e >= end {
                    return 0;
                }
                covered += e - start;
                new_start = s;
                self.ranges.remove(&s);
            }
        }
        // Ranges starting inside (start, end] are swallowed.
        loop {
            let next = self.ranges.range(start..=end).next().map(|(&s, &e)| (s, e));
            let Some((s, e)) = next else { break };
            self.ranges.remove(&s);
            covered += e.min(end) - s;
            if e > new_end {
                new_end = e;
            }
        }
        self.ranges.insert(new_start, new_end);
        (end - start) - covered
    }

    /// Total bytes in the set.
    pub fn len(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }

    /// Whether no byte is in the set.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of disjoint ranges (memory use grows with this, not with bytes).
    pub fn fragments(&self) -> usize {
        self.ranges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn basic() {
        let mut r = RangeSet::new();
        assert_eq!(r.insert(0, 10), 10);
        assert_eq!(r.insert(0, 10), 0);
        assert_eq!(r.insert(5, 15), 5);
        assert_eq!(r.insert(20, 30), 10);
        assert_eq!(r.insert(12, 22), 5);
        assert_eq!(r.fragments(), 1);
        assert_eq!(r.len(), 30);
        assert_eq!(r.insert(30, 30), 0);
        assert_eq!(r.insert(30, 31), 1);
        assert_eq!(r.fragments(), 1);
    }

    proptest! {
        #[test]
        fn matches_bitmap(ops in proptest::collection::vec((0u64..200, 0u64..40), 1..60)) {
            let mut set = RangeSet::new();
            let mut bits = vec![false; 256];
            for (start, len) in ops {
                let end = start + len;
                let mut fresh = 0;
                for b in &mut bits[start as usize..end as usize] {
                    if !*b { *b = true; fresh += 1; }
                }
                prop_assert_eq!(set.insert(start, end), fresh);
                prop_assert_eq!(set.len(), bits.iter().filter(|b| **b).count() as u64);
            }
        }
    }
}
