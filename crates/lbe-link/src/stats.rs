//! What the link reports: each interval's counters and queue statistics,
//! the running totals, and a flow's drops by cause. `lbe-netem` writes them
//! to its stats file; the simulator keeps them beside its qlogs.

use serde::Serialize;

/// A flow's drops at the bottleneck, by cause (random loss not included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlowDrops {
    /// Dropped because the buffer was full (drop-tail, or FQ-CoDel's
    /// memory limit, from the fattest queue).
    pub buffer: u64,
    /// Dropped by the AQM's control law (CoDel at dequeue, PIE on arrival).
    pub aqm: u64,
}

/// Counters and queue statistics over one interval, as reported per second
/// in the stats file. Byte counts are wire bytes (payload + overhead) unless
/// the name says payload.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IntervalStats {
    /// Length of the interval in seconds.
    pub interval_s: f64,
    /// Datagrams that arrived at the link.
    pub arrived_packets: u64,
    /// Wire bytes that arrived.
    pub arrived_bytes: u64,
    /// Datagrams dropped because the buffer was full.
    pub drops_buffer: u64,
    /// Wire bytes dropped because the buffer was full.
    pub drops_buffer_bytes: u64,
    /// Datagrams dropped by the random loss.
    pub drops_loss: u64,
    /// Wire bytes dropped by the random loss.
    pub drops_loss_bytes: u64,
    /// Datagrams dropped by the AQM's control law (CoDel, PIE).
    pub drops_aqm: u64,
    /// Wire bytes dropped by the AQM's control law.
    pub drops_aqm_bytes: u64,
    /// Wire bytes whose serialisation ended in the interval.
    pub departed_bytes: u64,
    /// `departed_bytes * 8 / (rate * interval)`: the link's utilisation
    /// (null without a rate).
    pub utilization: Option<f64>,
    /// Datagrams handed to the receiver (after the propagation delay).
    pub delivered_packets: u64,
    /// Wire bytes handed to the receiver.
    pub delivered_bytes: u64,
    /// UDP payload bytes handed to the receiver.
    pub delivered_payload_bytes: u64,
    /// `delivered_bytes * 8 / interval`, in bits per second.
    pub delivered_bps: f64,
    /// Largest buffer occupancy in the interval, in bytes.
    pub queue_bytes_max: u64,
    /// Time-weighted mean buffer occupancy in the interval, in bytes.
    pub queue_bytes_mean: f64,
    /// Buffer occupancy at the end of the interval, in bytes.
    pub queue_bytes_end: u64,
    /// `queue_bytes_max` as time at line rate, in ms (null without a rate).
    pub queue_ms_max: Option<f64>,
    /// `queue_bytes_mean` as time at line rate, in ms.
    pub queue_ms_mean: Option<f64>,
    /// `queue_bytes_end` as time at line rate, in ms.
    pub queue_ms_end: Option<f64>,
}

/// Running totals since the link was created.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Datagrams that arrived.
    pub arrived_packets: u64,
    /// Datagrams dropped because the buffer was full.
    pub drops_buffer: u64,
    /// Datagrams dropped by the random loss.
    pub drops_loss: u64,
    /// Datagrams dropped by the AQM's control law (absent when zero, so
    /// that a FIFO's totals read as before).
    #[serde(skip_serializing_if = "is_zero")]
    pub drops_aqm: u64,
    /// Datagrams handed to the receiver.
    pub delivered_packets: u64,
    /// Wire bytes handed to the receiver.
    pub delivered_bytes: u64,
    /// Payload bytes handed to the receiver.
    pub delivered_payload_bytes: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
