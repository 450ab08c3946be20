//! The foreground workloads' events ([`crate::workload`] keeps their
//! state and figures): web arrivals, video requests, pings and cbr
//! datagrams, and the end of each download and of each workload.

use std::time::Duration;
use std::time::Instant;

use lbe_scenario::FlowEnd;
use lbe_workload::figures::Echo;
use lbe_workload::figures::Outcome;

use super::events::Ev;
use super::events::Packet;
use super::sim::Sim;
use crate::workload::State;
use crate::workload::WorkloadRun;
use crate::workload::CBR_BYTES;
use crate::workload::PING_BYTES;
use crate::workload::VIDEO_RETRY;

impl Sim<'_> {
    pub(super) fn start_workload(&mut self, run: WorkloadRun) {
        let w = self.workloads.len();
        let flow = &self.config.flows[run.flow];
        let (start, end) = (self.epoch + flow.start, self.epoch + run.end(flow));
        match &run.state {
            State::Web { arrivals, .. } => {
                for (k, a) in arrivals.iter().enumerate() {
                    self.queue.push(self.epoch + a.at, Ev::WebArrival(w, k));
                }
            }
            State::Video { .. } => self.queue.push(start, Ev::VideoRequest(w)),
            State::Ping { .. } => self.queue.push(start, Ev::PingSend(w)),
            // The client's hello reaches the sender rtt/2 after the start.
            State::Cbr { .. } => self.queue.push(start + flow.rtt / 2, Ev::CbrSend(w)),
        }
        self.push(end, Ev::WorkloadEnd(w));
        self.workloads.push(run);
    }

    /// A download of workload `w`: a new connection, not opened yet (the
    /// workload records it first, so that a failure to open is counted).
    fn new_download(&mut self, w: usize, bytes: u64, now: Instant) -> usize {
        let flow = self.workloads[w].flow;
        self.new_conn(flow, Some(w), FlowEnd::Bytes(bytes), now, None)
    }

    pub(super) fn web_arrival(&mut self, w: usize, k: usize, now: Instant) {
        let State::Web { arrivals, .. } = &self.workloads[w].state else {
            return;
        };
        let bytes = arrivals[k].size_bytes;
        let c = self.new_download(w, bytes, now);
        if let State::Web { conns, .. } = &mut self.workloads[w].state {
            conns[k] = Some(c);
        }
        self.open(c, now);
    }

    pub(super) fn video_request(&mut self, w: usize, now: Instant) {
        let since = self.since_start(now);
        let stop = self.config.flows[self.workloads[w].flow]
            .stop()
            .unwrap_or_default();
        let run = &mut self.workloads[w];
        let State::Video {
            playout,
            chunk_bytes,
            in_flight,
            ..
        } = &mut run.state
        else {
            return;
        };
        if run.finished || in_flight.is_some() || since >= stop {
            return;
        }
        playout.requested(since);
        let bytes = *chunk_bytes;
        let c = self.new_download(w, bytes, now);
        if let State::Video { in_flight, .. } = &mut self.workloads[w].state {
            *in_flight = Some(c);
        }
        self.open(c, now);
    }

    /// The next chunk's request, when the playout asks for one before the
    /// flow's stop (not before `earliest`).
    fn next_video_request(&mut self, w: usize, earliest: Duration) {
        let stop = self.config.flows[self.workloads[w].flow]
            .stop()
            .unwrap_or_default();
        if let State::Video { playout, .. } = &self.workloads[w].state {
            if let Some(due) = playout.next_request_at() {
                let at = due.max(earliest);
                if at < stop {
                    self.push(self.epoch + at, Ev::VideoRequest(w));
                }
            }
        }
    }

    pub(super) fn ping_send(&mut self, w: usize, now: Instant) {
        let since = self.since_start(now);
        let flow = self.workloads[w].flow;
        let f = &self.config.flows[flow];
        let (stop, one_way) = (f.stop().unwrap_or_default(), f.rtt / 2);
        let State::Ping { interval, echoes } = &mut self.workloads[w].state else {
            return;
        };
        let seq = echoes.len();
        echoes.push(Echo {
            sent_at: since,
            rtt: None,
        });
        // Every `interval` from the start, as the real-time client counts.
        let next = f.start + *interval * (seq as u32 + 1);
        if next < stop {
            self.push(self.epoch + next, Ev::PingSend(w));
        }
        self.send_to_server(flow as u64, PING_BYTES, one_way, Packet::Ping(w, seq), now);
    }

    pub(super) fn cbr_send(&mut self, w: usize, now: Instant) {
        let flow = self.workloads[w].flow;
        let f = &self.config.flows[flow];
        let began = self.epoch + f.start + f.rtt / 2;
        let length = f.stop().unwrap_or_default().saturating_sub(f.start);
        let one_way = f.rtt / 2;
        let State::Cbr { schedule, sent, .. } = &mut self.workloads[w].state else {
            return;
        };
        *sent += 1;
        let next = schedule.send_at(*sent);
        if next < length {
            self.push(began + next, Ev::CbrSend(w));
        }
        self.link
            .enqueue_flow(now, flow as u64, CBR_BYTES, one_way, Packet::Cbr(w));
        self.schedule_link();
    }

    /// Download `c` of a workload ended (finished, failed): the workload
    /// counts it; both ends are closed and dropped.
    pub(super) fn download_ended(&mut self, c: usize, outcome: Outcome, now: Instant) {
        let Some(w) = self.conns[c].workload else {
            return;
        };
        self.close_download(c, now);
        let since = self.since_start(now);
        let run = &mut self.workloads[w];
        if run.finished {
            return;
        }
        match &mut run.state {
            State::Web {
                outcomes, conns, ..
            } => {
                if let Some(k) = conns.iter().position(|x| *x == Some(c)) {
                    outcomes[k].get_or_insert(outcome);
                }
                if outcomes.iter().all(Option::is_some) {
                    run.finished = true;
                }
            }
            State::Video {
                playout,
                in_flight,
                failed,
                ..
            } => {
                *in_flight = None;
                let earliest = match outcome {
                    Outcome::Finished(_) => {
                        playout.arrived(since);
                        since
                    }
                    _ => {
                        *failed += 1;
                        playout.failed(since);
                        since + VIDEO_RETRY
                    }
                };
                self.next_video_request(w, earliest);
            }
            State::Ping { .. } | State::Cbr { .. } => {}
        }
    }

    /// Workload `w`'s end: its downloads still running are given up on
    /// (unfinished), and nothing more counts.
    pub(super) fn workload_end(&mut self, w: usize, now: Instant) {
        let running: Vec<usize> = match &self.workloads[w].state {
            State::Web {
                conns, outcomes, ..
            } => conns
                .iter()
                .zip(outcomes)
                .filter(|(_, o)| o.is_none())
                .filter_map(|(c, _)| *c)
                .collect(),
            State::Video { in_flight, .. } => in_flight.iter().copied().collect(),
            _ => Vec::new(),
        };
        for c in running {
            self.close_download(c, now);
        }
        self.workloads[w].finished = true;
    }

    /// A download's connection is done (from `now`, unless it already
    /// was): both ends are dropped.
    fn close_download(&mut self, c: usize, now: Instant) {
        let conn = &mut self.conns[c];
        conn.done_at.get_or_insert(now);
        conn.client.conn = None;
        conn.server.conn = None;
    }
}
