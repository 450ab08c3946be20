//! An endpoint's loop, as our apps' event loops run it (`lbe_endpoint`):
//! the client's connect, the server's accept, each wake-up (what arrived,
//! quiche's timer, the application) and sending until quiche has nothing
//! more.

use std::time::Instant;

use lbe_scenario::Direction;
use lbe_workload::figures::Outcome;
use qlog_analysis::flow::FlowAnalyzer;
use quiche_lbe::lbe_cc::rng::SplitMix64;

use super::analysis::analysis_sink;
use super::analysis::qlog_file_name;
use super::analysis::SharedAnalysis;
use super::clock::local_time;
use super::clock::sim_time;
use super::events::Ev;
use super::events::Side;
use super::sim::Sim;

impl Sim<'_> {
    /// The client's address as the server sees it at `now`: its own until
    /// the first NAT rebinding, then a new source port at each
    /// (`rebind = true`). The client's own idea of its address never
    /// changes, as behind a real NAT.
    pub(super) fn client_addr_seen(&self, i: usize, now: Instant) -> std::net::SocketAddr {
        let mut addr = self.conns[i].client_addr;
        let rebinds = self.rebinds.iter().filter(|&&at| at <= now).count() as u32;
        if rebinds > 0 {
            // Another port in the clients' range, 10000..60000.
            let port = (u32::from(addr.port()) - 10_000 + rebinds * 25_013) % 50_000 + 10_000;
            addr.set_port(port as u16);
        }
        addr
    }

    pub(super) fn open(&mut self, i: usize, now: Instant) {
        let mut scid = [0u8; quiche::MAX_CONN_ID_LEN];
        let mut rng = SplitMix64::new(self.config.seed ^ (self.conns[i].key + 1));
        for b in scid.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        let scid = quiche::ConnectionId::from_ref(&scid[..16]);
        self.set_clock(i, Side::Client, now);
        let f = &self.conns[i];
        match quiche::connect(
            None,
            &scid,
            f.client_addr,
            f.server_addr,
            &mut self.client_configs[f.flow],
        ) {
            Ok(mut conn) => {
                if self.conns[i].sender() == Side::Client
                    && self.conns[i].workload.is_none()
                    && !self.start_analysis(i, &mut conn, now)
                {
                    return;
                }
                self.conns[i].client.conn = Some(conn);
                self.wake(i, Side::Client, now);
            }
            Err(e) => self.fail(i, format!("cannot connect: quiche: {e}"), now),
        }
    }

    /// Sets quiche's clock to what `side`'s clock reads at `now`.
    fn set_clock(&self, i: usize, side: Side, now: Instant) {
        let clock = self.conns[i].clock(side);
        quiche::clock::set_virtual_now(Some(local_time(self.epoch, clock, now)));
    }

    /// Hands the sender's qlog events to its analysis (and to its file,
    /// with [`crate::Config::qlog_dir`]); `false` when the file cannot be created.
    fn start_analysis(&mut self, i: usize, conn: &mut quiche::Connection, now: Instant) -> bool {
        let index = self.conns[i].flow;
        let flow = &self.config.flows[index];
        let (from, to) = match self.config.window {
            Some((f, t)) => (Some(f.as_secs_f64()), Some(t.as_secs_f64())),
            None => (None, None),
        };
        let offset = now.saturating_duration_since(self.epoch).as_secs_f64();
        let analyzer = FlowAnalyzer::new(offset, from, to, 0.1);
        let file = match &self.config.qlog_dir {
            None => None,
            Some(dir) => {
                let path = dir.join(qlog_file_name(flow, index));
                match std::fs::File::create(&path) {
                    Ok(file) => {
                        self.qlogs[index] = Some(path);
                        Some(file)
                    }
                    Err(e) => {
                        self.fail(i, format!("cannot create {}: {e}", path.display()), now);
                        return false;
                    }
                }
            }
        };
        let analysis: SharedAnalysis = std::sync::Arc::new(std::sync::Mutex::new(Ok(analyzer)));
        conn.set_qlog_event_sink(analysis_sink(&analysis), quiche::QlogLevel::Base);
        if let Some(file) = file {
            let role = match flow.direction {
                Direction::Download => "server",
                Direction::Upload => "client",
            };
            conn.set_qlog_with_level(
                Box::new(crate::qlog_file::VirtualWallClock::new(
                    std::io::BufWriter::new(file),
                    now.saturating_duration_since(self.epoch),
                )),
                format!("lbe-sim {role} {}", flow.name),
                format!("cc={} role={role} label={}", flow.sender_cc(), flow.name),
                quiche::QlogLevel::Base,
            );
        }
        self.conns[i].analysis = Some(analysis);
        true
    }

    pub(super) fn arrive(&mut self, i: usize, side: Side, datagram: Vec<u8>, now: Instant) {
        // Drawn even for a connection that is done, so that the draws of
        // the others do not depend on when it ended.
        let latency = self.wake_latency();
        if self.conns[i].done_at.is_some() {
            return;
        }
        let ep = self.conns[i].endpoint(side);
        ep.inbox.push(datagram);
        if !ep.wake_scheduled {
            ep.wake_scheduled = true;
            self.push(now + latency, Ev::Wake(i, side));
        }
    }

    /// The server's connection, created from the first datagram that
    /// reaches it.
    fn accept(&mut self, i: usize, now: Instant) {
        let mut scid = [0u8; 16];
        let mut rng = SplitMix64::new(self.config.seed ^ 0x00ac_ce97 ^ (self.conns[i].key + 1));
        for b in scid.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        let scid = quiche::ConnectionId::from_ref(&scid);
        let peer = self.client_addr_seen(i, now);
        let f = &self.conns[i];
        let local = f.server_addr;
        match quiche::accept(&scid, None, local, peer, &mut self.server_configs[f.flow]) {
            Ok(mut conn) => {
                if self.conns[i].sender() == Side::Server
                    && self.conns[i].workload.is_none()
                    && !self.start_analysis(i, &mut conn, now)
                {
                    return;
                }
                self.conns[i].server.conn = Some(conn);
            }
            Err(e) => self.fail(i, format!("the server cannot accept: quiche: {e}"), now),
        }
    }

    /// An endpoint's loop: what arrived, its timer, the application, then
    /// sending.
    pub(super) fn wake(&mut self, i: usize, side: Side, now: Instant) {
        if self.conns[i].done_at.is_some() {
            return;
        }
        self.set_clock(i, side, now);
        let local_now = local_time(self.epoch, self.conns[i].clock(side), now);
        if side == Side::Server && self.conns[i].server.conn.is_none() {
            if self.conns[i].server.inbox.is_empty() {
                return;
            }
            self.accept(i, now);
        }
        let from = match side {
            Side::Client => self.conns[i].server_addr,
            Side::Server => self.client_addr_seen(i, now),
        };
        let to = match side {
            Side::Client => self.conns[i].client_addr,
            Side::Server => self.conns[i].server_addr,
        };
        let inbox = std::mem::take(&mut self.conns[i].endpoint(side).inbox);
        {
            let Some(conn) = self.conns[i].endpoint(side).conn.as_mut() else {
                return;
            };
            for mut d in inbox {
                // A datagram quiche refuses (one it cannot decrypt after a
                // key change, a duplicate) is dropped, as our apps do.
                let _ = conn.recv(&mut d, quiche::RecvInfo { from, to });
            }
            lbe_endpoint::on_timer(conn, local_now);
        }
        let finished = if self.conns[i].h3.is_some() {
            match side {
                Side::Server => self.h3_server_app(i, now),
                Side::Client => self.h3_client_app(i, now),
            }
            false
        } else {
            self.bulk_app(i, side, now)
        };
        // After the reads, before sending (as h3-fetch calls it).
        let run = &mut self.conns[i];
        if let (Side::Client, Some(rx), Some(conn)) =
            (side, run.receiver.as_mut(), run.client.conn.as_mut())
        {
            rx.on_progress(conn, local_now);
        }
        if finished && self.conns[i].workload.is_some() {
            // A download's client closes its connection once it has every
            // byte; the CONNECTION_CLOSE goes out with this wake-up's
            // datagrams.
            if let Some(conn) = self.conns[i].client.conn.as_mut() {
                let _ = conn.close(true, 0x0, b"");
            }
        }
        self.send(i, side, now);
        if self.conns[i].workload.is_some() {
            let opened_at = self.conns[i].opened_at;
            let closed = self.conns[i]
                .endpoint(side)
                .conn
                .as_ref()
                .is_some_and(|c| c.is_closed());
            if finished {
                let fct = now.saturating_duration_since(opened_at);
                self.download_ended(i, Outcome::Finished(fct), now);
            } else if closed {
                self.download_ended(i, Outcome::Failed, now);
            }
        }
    }

    fn send(&mut self, i: usize, side: Side, now: Instant) {
        let (epoch, clock) = (self.epoch, self.conns[i].clock(side));
        // The endpoint's loop, like quiche, reads the endpoint's own clock.
        let local_now = local_time(epoch, clock, now);
        loop {
            let ep = self.conns[i].endpoint(side);
            let Some(conn) = ep.conn.as_mut() else {
                return;
            };
            match ep.sender.next(conn, local_now, &mut self.buf) {
                Ok(Some((n, _))) => {
                    let d = self.buf[..n].to_vec();
                    self.transmit(i, side, d, now);
                }
                Ok(None) => break,
                Err(e) => {
                    self.fail(i, format!("send: quiche: {e}"), now);
                    return;
                }
            }
        }
        // The next wake-up: quiche's timer or the held datagram's release.
        let ep = self.conns[i].endpoint(side);
        // quiche's times and the held datagram's are in the endpoint's
        // clock.
        let next = ep
            .conn
            .as_ref()
            .and_then(|c| ep.sender.wake_at(c))
            .map(|t| sim_time(epoch, clock, t));
        if let Some(at) = next {
            let at = at.max(now);
            if ep.timer_at != Some(at) {
                ep.timer_at = Some(at);
                self.push(at, Ev::Timer(i, side, at));
            }
        }
    }
}
