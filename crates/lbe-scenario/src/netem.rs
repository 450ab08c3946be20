//! lbe-netem's listening addresses for a scenario: one per base RTT of the
//! quic-bulk flows, one per h3 or workload flow, each with where it relays
//! to.

use std::time::Duration;

use crate::kinds::FlowKind;
use crate::model::{Flow, Link};

/// Where an lbe-netem listening address relays to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upstream {
    /// The quic-bulk server (every quic-bulk flow).
    QuicBulk,
    /// The server of the h3 flow with this index in `flows`.
    H3(usize),
    /// The server of the workload flow with this index in `flows`: a
    /// quic-bulk server of the workloads (web, video), a UDP echo (ping),
    /// a UDP sender (cbr).
    Workload(usize),
}

/// lbe-netem's listening addresses for a scenario, in order: the link's
/// RTT to the quic-bulk server first (`--listen`), one per other base RTT
/// of quic-bulk flows (`--path`), then one per h3 flow to its own server
/// with its RTT (`--route`), then one per workload flow (web, ping, video,
/// cbr) to its server (`--route`).
pub fn netem_paths(link: &Link, flows: &[Flow]) -> Vec<(Upstream, Duration)> {
    let mut paths = vec![(Upstream::QuicBulk, link.rtt)];
    for f in flows {
        if f.kind == FlowKind::QuicBulk && !paths.contains(&(Upstream::QuicBulk, f.rtt)) {
            paths.push((Upstream::QuicBulk, f.rtt));
        }
    }
    for (i, f) in flows.iter().enumerate() {
        if let FlowKind::H3(_) = f.kind {
            paths.push((Upstream::H3(i), f.rtt));
        }
    }
    for (i, f) in flows.iter().enumerate() {
        if !f.kind.is_bulk() {
            paths.push((Upstream::Workload(i), f.rtt));
        }
    }
    paths
}

/// The flow's path among [`netem_paths`].
pub fn netem_path(flows: &[Flow], index: usize) -> (Upstream, Duration) {
    let f = &flows[index];
    let upstream = match f.kind {
        FlowKind::QuicBulk => Upstream::QuicBulk,
        FlowKind::H3(_) => Upstream::H3(index),
        _ => Upstream::Workload(index),
    };
    (upstream, f.rtt)
}
