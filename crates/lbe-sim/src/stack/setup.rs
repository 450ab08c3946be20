//! A run set up: each flow's quiche configurations, its connection or
//! workload and first events; then the event loop and the run's end.

use std::time::Duration;
use std::time::Instant;

use lbe_scenario::Direction;
use lbe_scenario::FlowEnd;
use lbe_scenario::GRACE;

use super::clock::local_time;
use super::events::Ev;
use super::h3::h3_flow;
use super::h3::BodyTally;
use super::h3::H3Run;
use super::quiche_config::client_config;
use super::quiche_config::server_config;
use super::sim::Sim;
use crate::config::Config;
use crate::output::SimOutput;
use crate::queue::EventQueue;
use crate::workload::WorkloadRun;

/// Runs `config` with real quiche connections (see the module docs).
pub fn run(config: &Config) -> Result<SimOutput, String> {
    run_from(config, Instant::now())
}

/// [`run`] with virtual time starting at `epoch`. Nothing in a run may
/// depend on where `epoch` lies relative to the real clock: a read of the
/// real clock inside quiche (an `Instant::elapsed()` gave every ACK frame
/// the real time the simulation lagged behind, so a loaded host changed
/// the run) makes the run depend on it, which the tests check.
fn run_from(config: &Config, epoch: Instant) -> Result<SimOutput, String> {
    if config.flows.is_empty() {
        return Err("a run needs at least one flow".into());
    }
    let mut client_configs = Vec::new();
    let mut server_configs = Vec::new();
    let mut receivers = Vec::new();
    for f in &config.flows {
        let h3 = h3_flow(f);
        if let Some(h3) = h3.filter(|h3| h3.server == lbe_scenario::H3Server::Aioquic) {
            return Err(format!(
                "flow {}: server = \"{}\" is not simulated (aioquic's HTTP/3 server is Python, run in real time; simulated: h3-serve, quiche-stock): run without --sim",
                f.name,
                h3.server.name()
            ));
        }
        // A deadline-aware flow's sender starts on its plain controller;
        // the request's deadline switches it, as quic-bulk's server does.
        let spec = f.cc.clone();
        let upload = f.direction == Direction::Upload;
        if upload && config.link.reverse_rate_bps.is_none() {
            return Err(format!(
                "flow {}: direction = \"upload\" needs [link] reverse_rate (the client->server direction's bottleneck)",
                f.name
            ));
        }
        let err = |e| format!("flow {} ({}): {e}", f.name, spec);
        // An h3 server starts every connection on CUBIC, as h3-serve does;
        // a background request switches it to the flow's controller.
        let server_spec = (!upload && h3.is_none()).then_some(&spec);
        server_configs.push(server_config(f, server_spec).map_err(err)?);
        let mut client = client_config(f, upload.then_some(&spec)).map_err(err)?;
        // A receiver-driven download: the client runs RFC 9840's window
        // (LEDBAT++ on what it observes, `rledbat::default_config()` as
        // h3-fetch runs it) and caps the server's credit at it.
        // h3-fetch --lbe receiver or both: the same control.
        let h3_receiver = h3.is_some_and(|h3| {
            h3.background
                && matches!(
                    h3.lbe.unwrap_or_default(),
                    lbe_scenario::Lbe::Receiver | lbe_scenario::Lbe::Both
                )
        });
        let receiver = (f.receiver_lbe || h3_receiver).then(|| {
            let start = local_time(epoch, f.client_clock, epoch + f.start);
            let rx = quiche_lbe::ReceiverLbe::new(
                quiche_lbe::lbe_cc::rledbat::default_config(),
                lbe_endpoint::MAX_DATAGRAM_SIZE as u64,
                start,
            );
            rx.configure(&mut client);
            rx
        });
        receivers.push(receiver);
        client_configs.push(client);
    }
    // Virtual time starts at `epoch`; quiche reads `epoch + elapsed`.
    let mut link = lbe_link::Link::new(&config.link.bottleneck(config.seed));
    // The link's changes count from the run's start.
    link.start_at(epoch);
    let reverse = config.link.has_reverse().then(|| {
        let mut reverse = lbe_link::Link::new(&config.link.reverse_path(config.seed));
        reverse.start_at(epoch);
        reverse
    });
    let mut sim = Sim {
        config,
        epoch,
        queue: EventQueue::new(),
        link,
        link_due: None,
        reverse,
        reverse_due: None,
        rebinds: config
            .link
            .rebinds()
            .into_iter()
            .map(|at| epoch + at)
            .collect(),
        conns: Vec::new(),
        bulk: 0,
        workloads: Vec::new(),
        client_configs,
        server_configs,
        events: 0,
        rng: crate::host_latency::latency_rng(config),
        buf: vec![0; 65536],
        error: None,
        qlogs: vec![None; config.flows.len()],
        h3_config: quiche::h3::Config::new().map_err(|e| format!("HTTP/3 config: quiche: {e}"))?,
    };
    if let Some(dir) = &config.qlog_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    for (i, f) in config.flows.iter().enumerate() {
        if let Some(w) = WorkloadRun::new(i, f, config.seed) {
            sim.start_workload(w);
            continue;
        }
        let deadline = epoch
            + match f.end {
                FlowEnd::Stop(t) => t + GRACE,
                FlowEnd::Bytes(_) => f.start + GRACE.max(Duration::from_secs(3600)),
            };
        // An h3 flow's response is its file, as large as the lab's.
        let h3 = h3_flow(f).is_some();
        let end = match h3 {
            true => FlowEnd::Bytes(f.h3_file_bytes(&config.link)),
            false => f.end,
        };
        let h3 = match h3 {
            false => None,
            true => Some(Box::new(H3Run {
                request_sent: false,
                serving: lbe_h3::response::Serving::new(),
                background: lbe_h3::background::Background::default(),
                client: lbe_h3::client::H3Client::new()
                    .map_err(|e| format!("flow {}: {e}", f.name))?,
                response: BodyTally::default(),
                offered: Default::default(),
            })),
        };
        let is_h3 = h3.is_some();
        let c = sim.new_conn(i, None, end, epoch + f.start, h3);
        sim.conns[c].receiver = receivers[i].take();
        sim.conns[c].deadline = deadline;
        sim.bulk += 1;
        sim.push(epoch + f.start, Ev::Open(c));
        // An h3 download is cut off at its stop time, as the lab's is; a
        // quic-bulk sender's stop is set when it first writes
        // (`bulk_app`).
        if let (FlowEnd::Stop(t), true) = (f.end, is_h3) {
            sim.push(epoch + t, Ev::Stop(c));
        }
    }
    // quiche's own random choices (packet numbers skipped, the client's
    // first connection ID) from the run's seed: patch 0007.
    quiche::seed_thread_rand(Some(config.seed));
    sim.run_loop();
    quiche::seed_thread_rand(None);
    quiche::clock::set_virtual_now(None);
    if let Some(e) = sim.error.take() {
        return Err(e);
    }
    sim.finish()
}

#[cfg(test)]
mod tests {
    use qlog_analysis::flow::FlowAnalyzer;

    use super::*;

    /// The figures from quiche's events handed over as values are those
    /// from the qlog file quiche writes of the same events: the file read
    /// back by the reader the lab's files go through, into the same
    /// analyzer, gives every field of each flow's analysis (a LEDBAT++
    /// flow and a CUBIC flow from 1 s, whose losses and recovery periods
    /// the events carry too).
    #[test]
    fn the_analysis_of_the_events_is_the_analysis_of_the_file() {
        let text = "seed = 1\n[link]\nrate = \"10mbit\"\nrtt = \"40ms\"\nbuffer = \"50ms\"\n\
                    [analysis]\nfrom = \"1s\"\nto = \"5s\"\n\
                    [[flow]]\nname = \"lbe\"\ncc = \"ledbatpp\"\nstop = \"5s\"\n\
                    [[flow]]\nname = \"fg\"\ncc = \"cubic\"\nstart = \"1s\"\nstop = \"5s\"\n";
        let dir =
            std::env::temp_dir().join(format!("lbe-sim-events-vs-file-{}", std::process::id()));
        let config = Config {
            qlog_dir: Some(dir.clone()),
            ..Config::of_scenario_text(text)
        };
        assert_eq!(
            config.window,
            Some((Duration::from_secs(1), Duration::from_secs(5)))
        );
        let out = run(&config).unwrap();
        let analysis = out.analysis.unwrap();
        assert_eq!(analysis.flows.len(), 2);
        // What the run's analysis sets beside the analyzer's figures: the
        // flow's name and place, and what it computes across the flows.
        let identity = [
            "index",
            "qlog",
            "label",
            "flow",
            "cc",
            "role",
            "target_ms",
            "share",
            "active_whole_window",
        ];
        for (i, from_events) in analysis.flows.iter().enumerate() {
            struct Feed(FlowAnalyzer);
            impl qlog_analysis::reader::EventSink for Feed {
                fn event(&mut self, e: qlog_analysis::reader::Event) -> Result<(), String> {
                    self.0.event(&e)
                }
            }
            let mut feed = Feed(FlowAnalyzer::new(
                from_events.offset_s,
                Some(1.0),
                Some(5.0),
                0.1,
            ));
            let path = out.qlogs[i].as_ref().unwrap();
            let read = qlog_analysis::reader::read_qlog(path, &mut feed).unwrap();
            assert!(read.warnings.is_empty(), "{:?}", read.warnings);
            let from_file = feed.0.finish(analysis.window.from_s, analysis.window.to_s);
            assert!(
                from_file.packets_sent > 1000,
                "{} packets",
                from_file.packets_sent
            );
            let json = |f: &qlog_analysis::flow::FlowAnalysis| {
                let mut v = serde_json::to_value(f).unwrap();
                for key in identity {
                    v.as_object_mut().unwrap().remove(key);
                }
                v
            };
            assert_eq!(json(from_events), json(&from_file), "flow {i}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Virtual time an hour ahead of the real clock and a minute behind it
    /// give the same run. With a real clock read inside quiche they did
    /// not: `Instant::elapsed()` for the ACK delay saturates to 0 ahead of
    /// the real clock and reads the minute behind it, changing the ACK
    /// frames' lengths (so the bytes on the link) and the peer's RTT.
    #[test]
    fn a_run_does_not_depend_on_the_real_clock() {
        let text = "seed = 1\n[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                    [[flow]]\nname = \"a\"\ncc = \"ledbatpp\"\nstop = \"4s\"\n";
        let config = Config::of_scenario_text(text);
        let real = Instant::now();
        let ahead = run_from(&config, real + Duration::from_secs(3600)).unwrap();
        let behind = run_from(
            &config,
            real.checked_sub(Duration::from_secs(60))
                .expect("the monotonic clock started a minute ago"),
        )
        .unwrap();
        assert!(
            ahead.flows[0].sent_packets > 1000,
            "{} packets",
            ahead.flows[0].sent_packets
        );
        assert_eq!(ahead.flows, behind.flows);
        assert_eq!(ahead.link, behind.link);
        assert_eq!(ahead.events, behind.events);
        assert_eq!(ahead.duration, behind.duration);
        let json = |o: &SimOutput| serde_json::to_string(&o.analysis).unwrap();
        assert_eq!(json(&ahead), json(&behind));
    }
}
