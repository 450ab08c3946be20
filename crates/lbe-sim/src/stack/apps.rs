//! The applications each end runs at a wake-up: quic-bulk's sessions
//! (`lbe_bulk`), h3-serve's and h3-fetch's HTTP/3 (`lbe_h3`).

use std::time::Instant;

use lbe_scenario::FlowEnd;

use super::clock::local_time;
use super::clock::sim_time;
use super::events::Ev;
use super::events::Side;
use super::h3::h3_flow;
use super::h3::CountedBody;
use super::sim::Sim;

impl Sim<'_> {
    /// A quic-bulk connection's end: its session (`lbe_bulk`) reads what
    /// arrived and writes what is due; `true` when a transfer of a given
    /// size finished at the client now (a download's last byte arrived,
    /// an upload's receipt).
    pub(super) fn bulk_app(&mut self, i: usize, side: Side, now: Instant) -> bool {
        let (epoch, clock) = (self.epoch, self.conns[i].clock(side));
        // The session reads the endpoint's own clock, as quiche does.
        let local_now = local_time(epoch, clock, now);
        let f = &mut self.conns[i];
        let sends = side == f.sender();
        let endpoint = match side {
            Side::Client => &mut f.client,
            Side::Server => &mut f.server,
        };
        let (Some(bulk), Some(conn)) = (f.bulk.as_deref_mut(), endpoint.conn.as_mut()) else {
            return false;
        };
        // The sender's report names its qlog (an upload's client reports
        // its own figures).
        let qlog = sends.then_some(bulk.qlog_name.as_path());
        let step = match side {
            Side::Client => bulk.client.progress(conn, local_now, qlog),
            Side::Server => bulk.server.serve(conn, local_now, qlog).map(drop),
        };
        // quic-bulk's sender counts `--duration` from its first write
        // (`lbe_bulk::transfer::Sender`), so in the lab a sender stops
        // writing that long after the request reached it, not at the
        // scenario's stop: later by the handshake and the request's trip,
        // over a second when they queue behind a full 500 ms buffer. Its
        // last packets then meet the queue the lab's met (a CUBIC flow's
        // only sight of an empty queue, and so of its base RTT, can be
        // those packets). The sender is woken then to write its FIN.
        let stop_at = match bulk.stop_queued {
            true => None,
            false => bulk.sender().and_then(lbe_bulk::transfer::Sender::stop_at),
        };
        bulk.stop_queued |= stop_at.is_some();
        let finished = side == Side::Client
            && f.done_at.is_none()
            && matches!(f.end, FlowEnd::Bytes(_))
            && bulk.client.finished_at().is_some();
        if let Some(at) = stop_at {
            self.push(sim_time(epoch, clock, at), Ev::Stop(i));
        }
        if finished {
            // A byte-counted flow is done here and no longer woken: its
            // report exchange is not made (the figures end at the last
            // byte). A flow with a stop time makes it, as in the lab: the
            // ACK in the client's report request is the sender's last RTT
            // sample, taken as its own data leaves the queue (in the lab a
            // CUBIC flow that entered a full 500 ms buffer sees its only
            // near-base RTT there, 55.9-61.4 ms against 108.9 ms at its
            // handshake; `docs/data/fidelity.lab.toml` says when the simulator's
            // client misses it).
            self.conns[i].done_at = Some(now);
        }
        if let Err(e) = step {
            let what = match side {
                Side::Client => "client",
                Side::Server => "server",
            };
            self.fail(i, format!("quic-bulk {what}: {e}"), now);
        }
        finished
    }

    /// An h3 flow's server: h3-serve's HTTP/3 layer (`lbe_h3`). A request
    /// for urgency 7 switches an h3-serve connection to the flow's
    /// controller; the response is a 200 with the file's length, written as
    /// stream capacity allows.
    pub(super) fn h3_server_app(&mut self, i: usize, now: Instant) {
        let flow = self.flow_of(i);
        let (spec, server_lbe) = (
            flow.cc.clone(),
            h3_flow(flow).is_some_and(|h| h.server_lbe()),
        );
        let run = &mut self.conns[i];
        let len = match run.end {
            FlowEnd::Bytes(b) => b,
            FlowEnd::Stop(_) => 0,
        };
        let (Some(h3), Some(conn)) = (run.h3.as_deref_mut(), run.server.conn.as_mut()) else {
            return;
        };
        let mut error = None;
        match h3.serving.start(conn, &self.h3_config) {
            Ok(lbe_h3::response::Start::NotReady) => return,
            Ok(lbe_h3::response::Start::Started | lbe_h3::response::Start::Ready) => {}
            Err(e) => error = Some(e),
        }
        while let Some(incoming) = h3.serving.next(conn, |_| false) {
            let lbe_h3::response::Incoming::Request { stream, list } = incoming else {
                continue;
            };
            let ask = lbe_h3::background::Ask::of(&list);
            if ask.background() && server_lbe {
                if let Some(Err(e)) = h3.background.begin(&spec, conn) {
                    error.get_or_insert(format!("cannot switch to '{spec}': {e}"));
                }
            }
            let headers = vec![
                lbe_h3::response::header(":status", "200"),
                lbe_h3::response::header("content-length", len.to_string()),
            ];
            let body = lbe_h3::response::Body::reader(
                CountedBody {
                    offered: h3.offered.clone(),
                },
                len,
            );
            h3.serving.respond(lbe_h3::response::Outgoing::new(
                stream,
                headers,
                ask.priority(),
                body,
            ));
        }
        h3.serving.pump(conn);
        if let Some(e) = error {
            self.fail(i, format!("h3 server: {e}"), now);
        }
    }

    /// An h3 flow's client: h3-fetch's request (`GET`, `priority: u=7`
    /// for a background download) and its response read to the end;
    /// then the connection is closed, as h3-fetch closes it.
    pub(super) fn h3_client_app(&mut self, i: usize, now: Instant) {
        let authority = self.conns[i].server_addr.to_string();
        let flow = self.flow_of(i);
        let path = format!("/{}", flow.name);
        let background = h3_flow(flow).is_some_and(|h| h.background);
        let run = &mut self.conns[i];
        let (Some(h3), Some(conn)) = (run.h3.as_deref_mut(), run.client.conn.as_mut()) else {
            return;
        };
        let step = (|| -> Result<(), quiche_lbe::Error> {
            if !h3.client.ready(conn)? {
                return Ok(());
            }
            if !h3.request_sent {
                let mut request = lbe_h3::client::request_headers("GET", &authority, &path);
                request.extend(lbe_h3::client::background_fields(background, None));
                h3.client.send(conn, &request)?;
                h3.request_sent = true;
            }
            h3.client.poll(conn, &mut h3.response)
        })();
        if h3.response.finished && run.done_at.is_none() {
            run.done_at = Some(now);
            let _ = conn.close(true, lbe_h3::code::NO_ERROR, b"");
        }
        if let Err(e) = step {
            self.fail(i, format!("h3 client: {e}"), now);
        }
    }
}
