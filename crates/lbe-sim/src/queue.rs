//! The simulator's event queue: virtual time.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Instant;

/// Events in time order; events due at the same instant in the order they
/// were pushed, so that a run never depends on the heap's tie-breaking.
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Queued<E>>,
    seq: u64,
}

struct Queued<E> {
    at: Instant,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Queued<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl<E> Eq for Queued<E> {}
impl<E> PartialOrd for Queued<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Queued<E> {
    // A min-heap on (time, insertion order).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl<E> EventQueue<E> {
    pub(crate) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    pub(crate) fn push(&mut self, at: Instant, ev: E) {
        self.seq += 1;
        self.heap.push(Queued {
            at,
            seq: self.seq,
            ev,
        });
    }

    /// The next event and when it is due.
    pub(crate) fn pop(&mut self) -> Option<(Instant, E)> {
        self.heap.pop().map(|q| (q.at, q.ev))
    }
}
