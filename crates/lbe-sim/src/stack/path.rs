//! The path between a connection's ends: server->client datagrams cross
//! the bottleneck, client->server ones the reverse link (or rtt/2 of
//! delay), and what each delivers.

use std::time::Duration;
use std::time::Instant;

use super::events::Ev;
use super::events::Packet;
use super::events::Side;
use super::sim::Sim;
use crate::workload::State;
use crate::workload::CBR_BYTES;

impl Sim<'_> {
    /// What the bottleneck delivers to the client side.
    pub(super) fn at_client(&mut self, packet: Packet, now: Instant) {
        match packet {
            Packet::Quic(c, datagram) => self.arrive(c, Side::Client, datagram, now),
            Packet::Ping(w, seq) => {
                // The reply is read one host wake-up after it arrived.
                let read_at = now + self.wake_latency();
                let since = self.since_start(read_at);
                let run = &mut self.workloads[w];
                if let (false, State::Ping { echoes, .. }) = (run.finished, &mut run.state) {
                    let echo = &mut echoes[seq];
                    echo.rtt.get_or_insert(since.saturating_sub(echo.sent_at));
                }
            }
            Packet::Cbr(w) => {
                let since = self.since_start(now);
                let run = &mut self.workloads[w];
                if let (false, State::Cbr { arrivals, .. }) = (run.finished, &mut run.state) {
                    arrivals.push((since, CBR_BYTES as u64));
                }
            }
        }
    }

    /// What the client->server path delivers to the server side.
    pub(super) fn at_server(&mut self, packet: Packet, now: Instant) {
        match packet {
            Packet::Quic(c, datagram) => self.arrive(c, Side::Server, datagram, now),
            // The echo server answers one host wake-up later.
            Packet::Ping(w, seq) => {
                let at = now + self.wake_latency();
                self.push(at, Ev::EchoReply(w, seq));
            }
            Packet::Cbr(_) => {}
        }
    }

    /// Sends `packet` of `size` bytes from the client side on `key`'s
    /// path: the reverse link when the scenario limits it, else rtt/2.
    pub(super) fn send_to_server(
        &mut self,
        key: u64,
        size: usize,
        one_way: Duration,
        packet: Packet,
        now: Instant,
    ) {
        match self.reverse.as_mut() {
            Some(reverse) => {
                reverse.enqueue_flow(now, key, size, one_way, packet);
                self.schedule_reverse();
            }
            // A return path the scenario does not limit.
            None => self.push(now + one_way, Ev::ToServer(packet)),
        }
    }

    pub(super) fn transmit(&mut self, i: usize, side: Side, datagram: Vec<u8>, now: Instant) {
        let one_way = self.flow_of(i).rtt / 2;
        let (key, size) = (self.conns[i].key, datagram.len());
        match side {
            // The download's direction crosses the bottleneck.
            Side::Server => {
                self.link
                    .enqueue_flow(now, key, size, one_way, Packet::Quic(i, datagram));
                self.schedule_link();
            }
            Side::Client => self.send_to_server(key, size, one_way, Packet::Quic(i, datagram), now),
        }
    }

    pub(super) fn schedule_reverse(&mut self) {
        if let Some(due) = self.reverse.as_ref().and_then(|l| l.next_delivery()) {
            if self.reverse_due.is_none_or(|d| due < d) {
                self.reverse_due = Some(due);
                self.push(due, Ev::ReverseDue);
            }
        }
    }

    pub(super) fn schedule_link(&mut self) {
        if let Some(due) = self.link.next_delivery() {
            if self.link_due.is_none_or(|d| due < d) {
                self.link_due = Some(due);
                self.push(due, Ev::LinkDue);
            }
        }
    }
}
