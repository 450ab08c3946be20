//! A run's state and its event loop: the events in time order, each
//! handed to the part of the run it concerns.

use std::net::SocketAddr;
use std::time::Duration;
use std::time::Instant;

use lbe_scenario::FlowEnd;
use lbe_workload::figures::Outcome;
use quiche_lbe::lbe_cc::rng::SplitMix64;

use super::bulk::BulkRun;
use super::connection::Endpoint;
use super::connection::FlowRun;
use super::events::Ev;
use super::events::Packet;
use super::h3::H3Run;
use crate::config::Config;
use crate::queue::EventQueue;
use crate::workload::WorkloadRun;
use crate::workload::PING_BYTES;

pub(super) struct Sim<'a> {
    pub(super) config: &'a Config,
    pub(super) epoch: Instant,
    pub(super) queue: EventQueue<Ev>,
    pub(super) link: lbe_link::Link<Packet>,
    pub(super) link_due: Option<Instant>,
    /// The client->server link, when the scenario limits that direction.
    pub(super) reverse: Option<lbe_link::Link<Packet>>,
    pub(super) reverse_due: Option<Instant>,
    /// When the client's NAT rebinds (`rebind = true` changes): from each,
    /// the server sees every client from a new source port.
    pub(super) rebinds: Vec<Instant>,
    /// The connections: the bulk flows' first (in scenario order), then
    /// the workloads' downloads as they open.
    pub(super) conns: Vec<FlowRun>,
    /// How many of `conns` are bulk flows.
    pub(super) bulk: usize,
    pub(super) workloads: Vec<WorkloadRun>,
    /// Per scenario flow.
    pub(super) client_configs: Vec<quiche::Config>,
    pub(super) server_configs: Vec<quiche::Config>,
    pub(super) events: u64,
    pub(super) rng: SplitMix64,
    pub(super) buf: Vec<u8>,
    pub(super) error: Option<String>,
    /// Each flow's qlog file, when [`Config::qlog_dir`] asks for them.
    pub(super) qlogs: Vec<Option<std::path::PathBuf>>,
    /// HTTP/3's settings, both ends of every h3 flow.
    pub(super) h3_config: quiche::h3::Config,
}

impl Sim<'_> {
    pub(super) fn push(&mut self, at: Instant, ev: Ev) {
        self.queue.push(at, ev);
    }

    pub(super) fn wake_latency(&mut self) -> Duration {
        crate::host_latency::wake_latency(&mut self.rng, self.config)
    }

    /// Scenario time of `at`.
    pub(super) fn since_start(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.epoch)
    }

    /// A new connection of flow `flow` (of `workload`, if a download of
    /// one), sending `end`; opened by an [`Ev::Open`] the caller pushes.
    pub(super) fn new_conn(
        &mut self,
        flow: usize,
        workload: Option<usize>,
        end: FlowEnd,
        opened_at: Instant,
        h3: Option<Box<H3Run>>,
    ) -> usize {
        let c = self.conns.len();
        let f = &self.config.flows[flow];
        // A bulk flow's key is its position in the scenario; each download gets a key past every flow's.
        let key = match workload {
            None => flow as u64,
            Some(_) => (self.config.flows.len() + c) as u64,
        };
        self.conns.push(FlowRun {
            flow,
            workload,
            key,
            opened_at,
            end,
            client: Endpoint::new(),
            server: Endpoint::new(),
            direction: f.direction,
            client_clock: f.client_clock,
            server_clock: f.server_clock,
            done_at: None,
            deadline: opened_at + Duration::from_secs(365 * 24 * 3600),
            analysis: None,
            receiver: None,
            bulk: h3
                .is_none()
                .then(|| Box::new(BulkRun::new(f, flow, end, workload.is_some()))),
            h3,
            client_addr: SocketAddr::from(([10, 0, 0, 1], 10_000 + (key % 50_000) as u16)),
            server_addr: SocketAddr::from(([10, 0, 0, 2], 443)),
        });
        c
    }

    /// The scenario flow of connection `c`.
    pub(super) fn flow_of(&self, c: usize) -> &lbe_scenario::Flow {
        &self.config.flows[self.conns[c].flow]
    }

    /// A connection failed: a bulk flow's failure ends the run with an
    /// error; a workload's download is counted as failed.
    pub(super) fn fail(&mut self, c: usize, what: String, now: Instant) {
        if self.conns[c].workload.is_some() {
            self.download_ended(c, Outcome::Failed, now);
        } else if self.error.is_none() {
            self.error = Some(format!("flow {}: {what}", self.flow_of(c).name));
        }
    }

    pub(super) fn run_loop(&mut self) {
        while let Some((at, ev)) = self.queue.pop() {
            if self.error.is_some()
                || (self.conns[..self.bulk].iter().all(|f| f.done_at.is_some())
                    && self.workloads.iter().all(|w| w.finished))
            {
                break;
            }
            self.events += 1;
            quiche::clock::set_virtual_now(Some(at));
            match ev {
                Ev::Open(c) => self.open(c, at),
                Ev::Stop(c) if self.conns[c].h3.is_some() => {
                    // An h3 flow's download is cut off at its stop time,
                    // as the lab's is.
                    self.conns[c].done_at.get_or_insert(at);
                }
                Ev::Stop(c) => {
                    // The sender's `--duration` is over: it writes its FIN.
                    let sender = self.conns[c].sender();
                    self.wake(c, sender, at);
                }
                Ev::Wake(c, side) => {
                    self.conns[c].endpoint(side).wake_scheduled = false;
                    self.wake(c, side, at);
                }
                Ev::Timer(c, side, due) => {
                    if self.conns[c].endpoint(side).timer_at == Some(due) {
                        self.conns[c].endpoint(side).timer_at = None;
                        self.wake(c, side, at);
                    }
                }
                Ev::LinkDue => {
                    if self.link_due == Some(at) {
                        self.link_due = None;
                    }
                    while let Some(d) = self.link.poll(at) {
                        self.at_client(d.item, at);
                    }
                    self.schedule_link();
                }
                Ev::ReverseDue => {
                    if self.reverse_due == Some(at) {
                        self.reverse_due = None;
                    }
                    while let Some(d) = self.reverse.as_mut().and_then(|l| l.poll(at)) {
                        self.at_server(d.item, at);
                    }
                    self.schedule_reverse();
                }
                Ev::ToServer(packet) => self.at_server(packet, at),
                Ev::WebArrival(w, k) => self.web_arrival(w, k, at),
                Ev::VideoRequest(w) => self.video_request(w, at),
                Ev::PingSend(w) => self.ping_send(w, at),
                Ev::EchoReply(w, seq) => {
                    if !self.workloads[w].finished {
                        let flow = self.workloads[w].flow;
                        let one_way = self.config.flows[flow].rtt / 2;
                        let size = PING_BYTES;
                        self.link.enqueue_flow(
                            at,
                            flow as u64,
                            size,
                            one_way,
                            Packet::Ping(w, seq),
                        );
                        self.schedule_link();
                    }
                }
                Ev::CbrSend(w) => self.cbr_send(w, at),
                Ev::WorkloadEnd(w) => self.workload_end(w, at),
            }
            for c in 0..self.bulk {
                let f = &self.conns[c];
                if f.done_at.is_none() && at >= f.deadline {
                    self.conns[c].done_at = Some(at);
                }
            }
        }
    }
}
