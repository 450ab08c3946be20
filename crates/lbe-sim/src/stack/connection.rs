//! One connection of a run: its two endpoints, what each end's loop holds,
//! and what the connection's applications keep.

use std::net::SocketAddr;
use std::time::Instant;

use lbe_scenario::Clock;
use lbe_scenario::Direction;
use lbe_scenario::FlowEnd;

use super::analysis::SharedAnalysis;
use super::bulk::BulkRun;
use super::events::Side;
use super::h3::H3Run;

/// One side of a connection and what its loop holds.
pub(super) struct Endpoint {
    pub(super) conn: Option<quiche::Connection>,
    /// Holds a paced datagram quiche built that is not due yet.
    pub(super) sender: lbe_endpoint::PacedSender,
    /// Datagrams that arrived since the last wake-up.
    pub(super) inbox: Vec<Vec<u8>>,
    pub(super) wake_scheduled: bool,
    /// The timer event in the queue, if any (a later one makes it stale).
    pub(super) timer_at: Option<Instant>,
}

impl Endpoint {
    pub(super) fn new() -> Self {
        Self {
            conn: None,
            sender: lbe_endpoint::PacedSender::new(),
            inbox: Vec::new(),
            wake_scheduled: false,
            timer_at: None,
        }
    }
}

/// One connection: a bulk flow's, or one download of a web or video
/// workload.
pub(super) struct FlowRun {
    /// The scenario flow it belongs to (its position).
    pub(super) flow: usize,
    /// The workload it is a download of; `None` for a bulk flow.
    pub(super) workload: Option<usize>,
    /// Its key on the links (a bulk flow's position, so FQ and the drop
    /// counts see each flow; each workload download its own).
    pub(super) key: u64,
    /// When its client connected.
    pub(super) opened_at: Instant,
    /// What the sender sends: a bulk flow's end, a download's bytes.
    pub(super) end: FlowEnd,
    pub(super) client: Endpoint,
    pub(super) server: Endpoint,
    /// Which end sends the bytes.
    pub(super) direction: Direction,
    pub(super) client_clock: Clock,
    pub(super) server_clock: Clock,
    pub(super) done_at: Option<Instant>,
    /// When the run gives up on the connection (bulk flows; a workload's
    /// end gives up on its downloads).
    pub(super) deadline: Instant,
    /// The sender's qlog analysis (bulk flows), fed by its event sink.
    pub(super) analysis: Option<SharedAnalysis>,
    /// A receiver-driven flow's control at the client
    /// (`quiche_lbe::ReceiverLbe`, what `h3-fetch --lbe receiver` runs).
    pub(super) receiver: Option<quiche_lbe::ReceiverLbe>,
    /// A quic-bulk flow's (or a workload download's) two sessions; `None`
    /// for an h3 flow.
    pub(super) bulk: Option<Box<BulkRun>>,
    /// An h3 flow's HTTP/3 layers.
    pub(super) h3: Option<Box<H3Run>>,
    pub(super) client_addr: SocketAddr,
    pub(super) server_addr: SocketAddr,
}

impl FlowRun {
    pub(super) fn endpoint(&mut self, side: Side) -> &mut Endpoint {
        match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }

    /// The end that sends the flow's bytes.
    pub(super) fn sender(&self) -> Side {
        match self.direction {
            Direction::Download => Side::Server,
            Direction::Upload => Side::Client,
        }
    }

    pub(super) fn clock(&self, side: Side) -> Clock {
        match side {
            Side::Client => self.client_clock,
            Side::Server => self.server_clock,
        }
    }

    /// Payload bytes the receiving end has read.
    pub(super) fn received(&self) -> u64 {
        match (&self.bulk, &self.h3, self.direction) {
            (Some(b), _, Direction::Download) => b.client.bytes(),
            (Some(b), _, Direction::Upload) => b.server.bytes(),
            (None, Some(h3), _) => h3.response.received,
            (None, None, _) => 0,
        }
    }

    /// Payload bytes the sending end has written (an h3 response's, read
    /// from its source).
    pub(super) fn written(&self) -> u64 {
        match (&self.bulk, &self.h3, self.direction) {
            (Some(b), _, Direction::Download) => b.server.bytes(),
            (Some(b), _, Direction::Upload) => b.client.bytes(),
            (None, Some(h3), _) => h3.offered.load(std::sync::atomic::Ordering::Relaxed),
            (None, None, _) => 0,
        }
    }
}
