//! Proof that the quiche patch really hands control to a plug-in: real
//! quiche connections over 127.0.0.1, one download each, with the
//! sender's qlog and the plug-in's own records as evidence.

use std::net::UdpSocket;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use lbe_app_kit::tls;
use lbe_cc::ledbatpp::STATE_NAMES;
use lbe_cc::RttInfo;
use lbe_test_support::figure;
use lbe_test_support::fresh_dir;
use quiche_lbe::qlog::Role;
use quiche_lbe::CcSpec;

mod common;
use common::TestFixed;

const ALPN: &[&[u8]] = &[b"lbe-test"];
const MSS: u64 = tls::MAX_DATAGRAM_SIZE as u64;
/// Upper bound for one test transfer; loopback finishes in well under a second.
const DEADLINE: Duration = Duration::from_secs(60);

/// The byte at `offset` of a download: a pattern that catches reordering
/// and truncation.
fn pattern(offset: u64) -> u8 {
    (offset.wrapping_mul(31) ^ (offset >> 11)) as u8
}

struct Download {
    /// What the client received, checked against the pattern.
    received: u64,
    /// The server's qlog.
    qlog: PathBuf,
}

/// Runs one download of `bytes` from a server made with `server_config` to
/// a client. `on_request` runs on the server connection once the client's
/// request has arrived, before any response data is sent. The client holds
/// its packets (and so its ACKs) for `client_hold` between sends.
fn download(
    mut server_config: quiche::Config,
    bytes: u64,
    client_hold: Duration,
    qlog_dir: &Path,
    on_request: impl FnOnce(&mut quiche::Connection),
) -> Download {
    let server_sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let client_sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    server_sock.set_nonblocking(true).unwrap();
    client_sock.set_nonblocking(true).unwrap();
    let server_addr = server_sock.local_addr().unwrap();
    let client_addr = client_sock.local_addr().unwrap();

    let cubic: CcSpec = "cubic".parse().unwrap();
    let trust = tls::ServerTrust::Pem(certificate().pem());
    let mut client_config = tls::client_config(
        ALPN,
        &cubic,
        None,
        &tls::Transport::default(),
        &trust,
        "localhost",
    )
    .unwrap();
    let client_scid = quiche::ConnectionId::from_ref(&[1; 16]);
    let mut client = quiche::connect(
        Some("localhost"),
        &client_scid,
        client_addr,
        server_addr,
        &mut client_config,
    )
    .unwrap();

    let mut server: Option<quiche::Connection> = None;
    let mut on_request = Some(on_request);
    let mut qlog = None;
    let mut sent = 0u64;
    let mut received = 0u64;
    let mut buf = vec![0u8; 65536];
    let mut out = vec![0u8; 1500];
    let mut last_client_send = Instant::now() - client_hold;
    let start = Instant::now();

    while !client.is_closed() {
        assert!(
            start.elapsed() < DEADLINE,
            "transfer did not finish in {DEADLINE:?}"
        );
        let mut progress = false;

        // Client → server.
        if last_client_send.elapsed() >= client_hold {
            while let Ok((n, info)) = client.send(&mut out) {
                client_sock.send_to(&out[..n], info.to).unwrap();
                progress = true;
            }
            last_client_send = Instant::now();
        }
        while let Ok((n, from)) = server_sock.recv_from(&mut buf) {
            let conn = server.get_or_insert_with(|| {
                let scid = quiche::ConnectionId::from_ref(&[2; 16]);
                let mut c =
                    quiche::accept(&scid, None, server_addr, from, &mut server_config).unwrap();
                qlog = Some(
                    quiche_lbe::qlog::attach(
                        &mut c,
                        qlog_dir,
                        "test",
                        Role::Server,
                        "plugin",
                        &[2; 8],
                    )
                    .unwrap(),
                );
                c
            });
            let info = quiche::RecvInfo {
                from,
                to: server_addr,
            };
            conn.recv(&mut buf[..n], info).unwrap();
            progress = true;
        }

        // Server application: answer the request with `bytes` of pattern.
        if let Some(conn) = server.as_mut() {
            for id in conn.readable() {
                while conn.stream_recv(id, &mut buf).is_ok() {}
                if let Some(f) = on_request.take() {
                    f(conn);
                }
            }
            if on_request.is_none() && sent < bytes {
                let chunk: Vec<u8> = (sent..bytes.min(sent + 16384)).map(pattern).collect();
                let fin = sent + chunk.len() as u64 == bytes;
                if let Ok(n) = conn.stream_send(0, &chunk, fin) {
                    sent += n as u64;
                }
            }
            while let Ok((n, info)) = conn.send(&mut out) {
                server_sock.send_to(&out[..n], info.to).unwrap();
                progress = true;
            }
        }

        // Server → client.
        while let Ok((n, from)) = client_sock.recv_from(&mut buf) {
            let info = quiche::RecvInfo {
                from,
                to: client_addr,
            };
            client.recv(&mut buf[..n], info).unwrap();
            progress = true;
        }
        if client.is_established() && received == 0 && sent == 0 && on_request.is_some() {
            let _ = client.stream_send(0, b"GET", false);
        }
        for id in client.readable() {
            while let Ok((n, fin)) = client.stream_recv(id, &mut buf) {
                for (i, b) in buf[..n].iter().enumerate() {
                    assert_eq!(
                        *b,
                        pattern(received + i as u64),
                        "corrupt byte at {}",
                        received + i as u64
                    );
                }
                received += n as u64;
                if fin {
                    client.close(true, 0, b"done").unwrap();
                }
            }
        }

        // Timers.
        for conn in std::iter::once(&mut client).chain(server.as_mut()) {
            if conn.timeout().is_some_and(|t| t.is_zero()) {
                conn.on_timeout();
            }
        }
        if !progress {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    // Flush the client's CONNECTION_CLOSE so the server's qlog is complete.
    while let Ok((n, info)) = client.send(&mut out) {
        client_sock.send_to(&out[..n], info.to).unwrap();
    }
    drop(server);

    Download {
        received,
        qlog: qlog.expect("server never saw a packet"),
    }
}

/// `(event name, data)` of every record in a JSON-SEQ qlog.
fn qlog_events(path: &Path) -> Vec<(String, serde_json::Value)> {
    common::qlog_records(path)
        .into_iter()
        .map(|v| {
            let name = v["name"].as_str().unwrap_or_default().to_string();
            (name, v["data"].clone())
        })
        .collect()
}

fn max_bytes_in_flight(events: &[(String, serde_json::Value)]) -> u64 {
    events
        .iter()
        .filter(|(name, _)| name == "quic:recovery_metrics_updated")
        .filter_map(|(_, d)| d["bytes_in_flight"].as_u64())
        .max()
        .unwrap_or(0)
}

/// The servers' certificate, which the client trusts.
fn certificate() -> &'static tls::SelfSignedCert {
    static CERT: std::sync::OnceLock<tls::SelfSignedCert> = std::sync::OnceLock::new();
    CERT.get_or_init(|| tls::SelfSignedCert::generate().unwrap())
}

fn server_config(spec: &str) -> quiche::Config {
    tls::server_config(
        ALPN,
        &tls::Certificate::Generated(certificate().clone()),
        &spec.parse().unwrap(),
        &tls::Transport::default(),
    )
    .unwrap()
}

#[test]
fn fixed_window_plugin_bounds_bytes_in_flight() {
    let dir = tempdir("fixed");
    const BYTES: u64 = 3_000_000;

    let fixed = download(
        server_config("fixed:packets=8"),
        BYTES,
        Duration::ZERO,
        &dir,
        |_| {},
    );
    assert_eq!(fixed.received, BYTES);
    let events = qlog_events(&fixed.qlog);
    let peak = max_bytes_in_flight(&events);
    assert!(peak > 0, "the qlog has no bytes_in_flight metrics");
    assert!(
        peak <= 8 * MSS,
        "bytes in flight reached {peak}, window is {}",
        8 * MSS
    );
    assert!(
        events
            .iter()
            .any(|(n, d)| n == "quic:recovery_metrics_updated"
                && d["congestion_window"].as_u64() == Some(8 * MSS)),
        "the plug-in's window never reached qlog"
    );

    // The same transfer under quiche's own CUBIC goes far beyond 8 packets:
    // the bound above is the plug-in's doing.
    let cubic = download(server_config("cubic"), BYTES, Duration::ZERO, &dir, |_| {});
    assert_eq!(cubic.received, BYTES);
    let cubic_peak = max_bytes_in_flight(&qlog_events(&cubic.qlog));
    assert!(cubic_peak > 8 * MSS, "cubic peaked at {cubic_peak}");
}

/// Real time on loopback. `scripts/flake-check.sh -n 10` (2026-11-23): share
/// of RTT samples with an ACK delay 1 / 1 / 1 (min / median / max), longest
/// ACK delay 19.8 / 20.1 / 22.6 ms with a 20 ms hold. Bars: share ≥ 0.9,
/// longest ≥ 10 ms.
#[test]
fn plugin_sees_the_ack_delay_the_peer_reports() {
    let dir = tempdir("ackdelay");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = TestFixed::factory(64, None, Some(seen.clone()));
    let mut config = server_config("cubic");
    config.set_custom_congestion_control(Some(recorder));

    // The client sends (and so acknowledges) only every 20 ms.
    let hold = Duration::from_millis(20);
    let run = download(config, 2_000_000, hold, &dir, |_| {});
    assert_eq!(run.received, 2_000_000);

    let seen = seen.lock().unwrap();
    let samples: Vec<&RttInfo> = seen.iter().filter(|r| r.new_sample).collect();
    assert!(samples.len() >= 10, "only {} RTT samples", samples.len());
    // Before the handshake completes the client answers at once; after it
    // every ACK waited for the client's next send slot.
    let delayed = samples
        .iter()
        .filter(|r| r.ack_delay > Duration::ZERO)
        .count();
    figure(
        "ack_delay",
        "delayed_share",
        delayed as f64 / samples.len() as f64,
    );
    assert!(
        delayed * 10 >= samples.len() * 9,
        "{delayed} of {} samples carry an ACK delay",
        samples.len()
    );
    for r in &samples {
        assert!(
            r.ack_delay <= r.latest_rtt,
            "ack delay {:?} > rtt {:?}",
            r.ack_delay,
            r.latest_rtt
        );
    }
    let longest = samples.iter().map(|r| r.ack_delay).max().unwrap();
    figure("ack_delay", "longest_ms", longest.as_secs_f64() * 1e3);
    assert!(
        longest >= Duration::from_millis(10),
        "longest ACK delay {longest:?} with a 20 ms hold"
    );
    // ACKs that produce no sample still reach the plug-in, marked as such.
    assert!(seen.iter().all(|r| r.max_ack_delay > Duration::ZERO));
}

#[test]
fn switching_a_live_connection_takes_effect() {
    let dir = tempdir("switch");
    let spec: CcSpec = "fixed:packets=4".parse().unwrap();
    let run = download(
        server_config("cubic"),
        2_000_000,
        Duration::ZERO,
        &dir,
        |conn| {
            assert!(conn.is_established());
            spec.switch(conn).unwrap();
        },
    );
    assert_eq!(run.received, 2_000_000);

    let events = qlog_events(&run.qlog);
    let switched = events
        .iter()
        .position(|(n, d)| n == "quic:congestion_state_updated" && d["new"] == "fixed")
        .expect("the plug-in's state never reached qlog");
    let after = max_bytes_in_flight(&events[switched..]);
    assert!(
        after <= 4 * MSS,
        "{after} bytes in flight after switching to a 4-packet window"
    );

    // quiche's BBRv2 has its own recovery; it cannot be swapped in place.
    let cfg = server_config("bbr2");
    let run = download(cfg, 100_000, Duration::ZERO, &dir, |conn| {
        assert_eq!(spec.switch(conn), Err(quiche::Error::CongestionControl));
    });
    assert_eq!(run.received, 100_000);
}

/// The congestion windows (bytes) and states the server's qlog reports, in
/// order.
fn windows_and_states(events: &[(String, serde_json::Value)]) -> (Vec<u64>, Vec<String>) {
    let windows = events
        .iter()
        .filter(|(n, _)| n == "quic:recovery_metrics_updated")
        .filter_map(|(_, d)| d["congestion_window"].as_u64())
        .collect();
    let states = events
        .iter()
        .filter(|(n, _)| n == "quic:congestion_state_updated")
        .filter_map(|(_, d)| d["new"].as_str().map(String::from))
        .collect();
    (windows, states)
}

/// `quiche_lbe::register()` makes the plug-ins names quiche's own
/// `Config::set_cc_algorithm_name()` accepts, and the controller a name
/// chooses is the one that runs.
#[test]
fn a_plugin_chosen_by_its_name_in_quiche_is_the_one_that_runs() {
    quiche_lbe::register().unwrap();
    let dir = tempdir("by-name");
    const BYTES: u64 = 2_000_000;
    let by_name = |name: &str| {
        let mut config = server_config("cubic");
        config.set_cc_algorithm_name(name).unwrap();
        let run = download(config, BYTES, Duration::ZERO, &dir, |_| {});
        assert_eq!(run.received, BYTES, "{name}");
        windows_and_states(&qlog_events(&run.qlog))
    };

    // LEDBAT++ starts from two packets ("LEDBAT++ sender limits the initial
    // window to 2 packets", draft -01 §4.1; INIT_CWND in cc/src/ledbatpp/config.rs)
    // in its slow start; quiche's CUBIC from ten.
    let (windows, states) = by_name("ledbatpp:profile=full");
    assert_eq!(windows.first(), Some(&(2 * MSS)), "{windows:?}");
    assert_eq!(states.first().map(String::as_str), Some("slow_start"));
    assert!(
        states.iter().all(|s| STATE_NAMES.contains(&s.as_str())),
        "{states:?}"
    );
    let (windows, _) = by_name("cubic");
    assert!(
        windows.first().is_some_and(|w| *w >= 10 * MSS),
        "{windows:?}"
    );

    // A fixed window of 8 packets, chosen by name with its parameter.
    let (windows, states) = by_name("fixed:packets=8");
    assert!(windows.iter().all(|w| *w == 8 * MSS), "{windows:?}");
    assert_eq!(states.first().map(String::as_str), Some("fixed"));

    let mut config = server_config("cubic");
    assert_eq!(
        config.set_cc_algorithm_name("ledbatpp:profile=none"),
        Err(quiche::Error::CongestionControl)
    );
}

/// A test's qlog directory, emptied, under cargo's scratch directory for
/// this package's tests (`target/tmp/`): kept to be looked at, and
/// overwritten by the next run rather than left in /tmp per process.
fn tempdir(name: &str) -> PathBuf {
    fresh_dir(&Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("quiche-lbe-hooks-{name}")))
}
