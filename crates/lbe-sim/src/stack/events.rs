//! What the event loop handles: the events in virtual time, the packets
//! the links carry, and which end of a connection is meant.

use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Client,
    Server,
}

/// What crosses a link.
#[derive(Debug)]
pub(super) enum Packet {
    /// A QUIC datagram of connection `.0`.
    Quic(usize, Vec<u8>),
    /// Workload `.0`'s ping request `.1` (client->server) or its reply.
    Ping(usize, usize),
    /// A datagram of cbr workload `.0`.
    Cbr(usize),
}

#[derive(Debug)]
pub(super) enum Ev {
    /// A connection's client connects.
    Open(usize),
    /// A bulk connection's sender stops writing new data.
    Stop(usize),
    /// An endpoint wakes: what arrived, its timer, sending.
    Wake(usize, Side),
    /// An endpoint's timer or held datagram is due (ignored when stale).
    Timer(usize, Side, Instant),
    /// The bottleneck's next delivery is due.
    LinkDue,
    /// The reverse link's next delivery is due.
    ReverseDue,
    /// A packet reaches the server side (a return path the scenario does
    /// not limit: rtt/2 of delay).
    ToServer(Packet),
    /// Web workload `.0`'s arrival `.1`: its connection opens.
    WebArrival(usize, usize),
    /// Video workload `.0` asks for its next chunk.
    VideoRequest(usize),
    /// Ping workload `.0` sends its next request.
    PingSend(usize),
    /// Ping workload `.0`'s server echoes request `.1`.
    EchoReply(usize, usize),
    /// Cbr workload `.0` sends its next datagram.
    CbrSend(usize),
    /// Workload `.0`'s end ([`crate::workload::WorkloadRun::end`]).
    WorkloadEnd(usize),
}
