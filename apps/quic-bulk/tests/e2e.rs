//! quic-bulk end to end over 127.0.0.1: every controller in both
//! directions, many clients at once, and the CLI's errors.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::Duration;

use lbe_app_kit::tls::ServerTrust;
use lbe_test_support::figure;
use lbe_test_support::Scratch;
use quic_bulk::client::ClientArgs;
use quic_bulk::client::Summary;
use quic_bulk::protocol::Amount;
use quic_bulk::protocol::Direction;
use quic_bulk::server::RunningServer;
use quic_bulk::server::ServerArgs;

fn start_server(qlog_dir: &Path) -> RunningServer {
    quic_bulk::server::bind(&ServerArgs::loopback(Some(qlog_dir.to_path_buf())))
        .unwrap()
        .spawn()
}

/// A scratch directory (removed when the test ends) and its path.
fn tempdir(name: &str) -> (Scratch, PathBuf) {
    let s = Scratch::new(&format!("quic-bulk-e2e-{name}"));
    let dir = s.path().to_path_buf();
    (s, dir)
}

fn transfer(
    addr: std::net::SocketAddr,
    trust: &ServerTrust,
    cc: &str,
    direction: Direction,
    bytes: u64,
    qlog_dir: &Path,
    label: &str,
) -> Summary {
    quic_bulk::client::run(
        ClientArgs {
            qlog_dir: Some(qlog_dir.to_path_buf()),
            ..ClientArgs::loopback(
                addr,
                trust.clone(),
                cc.parse().unwrap(),
                Amount::Bytes(bytes),
                direction,
                label,
            )
        },
        &AtomicBool::new(false),
    )
    .unwrap_or_else(|e| panic!("{cc} {direction:?}: {e}"))
}

/// Reads a JSON-SEQ qlog with the qlog crate; returns the number of events
/// and the congestion states it went through.
fn read_qlog(path: &Path) -> (usize, Vec<String>) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader =
        qlog::reader::QlogSeqReader::new(Box::new(std::io::BufReader::new(file))).unwrap();
    let mut states = Vec::new();
    let mut n = 0;
    for event in &mut reader {
        n += 1;
        if let qlog::reader::Event::Qlog(ev) = event {
            if let qlog::events::EventData::QuicCongestionStateUpdated(s) = ev.data {
                states.push(s.new);
            }
        }
    }
    (n, states)
}

#[test]
fn every_controller_both_directions() {
    let (_scratch, dir) = tempdir("all");
    let server = start_server(&dir);
    const BYTES: u64 = 4_000_000;
    for cc in quiche_lbe::spec::controller_names() {
        for direction in [Direction::Download, Direction::Upload] {
            let label = format!("{cc}_{}", direction.as_str());
            let s = transfer(
                server.local_addr(),
                &server.trust(),
                cc,
                direction,
                BYTES,
                &dir,
                &label,
            );
            assert_eq!(s.bytes, BYTES);
            assert_eq!(s.cc, cc);
            assert_eq!(s.direction, direction.as_str());
            assert!(s.goodput_bps > 0.0 && s.duration_s > 0.0);
            assert!(
                s.rtt_ms.min > 0.0
                    && s.rtt_ms.min <= s.rtt_ms.p50 + 1e-9
                    && s.rtt_ms.p50 <= s.rtt_ms.p99
            );

            let json: serde_json::Value =
                serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
            for key in [
                "cc",
                "direction",
                "bytes",
                "duration_s",
                "goodput_bps",
                "rtt_ms",
                "lost_packets",
                "qlog",
            ] {
                assert!(json.get(key).is_some(), "summary lacks {key}");
            }

            // The sender's qlog is named after role and controller, parses,
            // and shows the controller at work.
            let qlog = PathBuf::from(s.qlog.as_deref().expect("sender qlog"));
            let role = if direction == Direction::Download {
                "server"
            } else {
                "client"
            };
            let name = qlog.file_name().unwrap().to_str().unwrap().to_string();
            assert!(name.starts_with(&format!("{label}-{role}-{cc}-")), "{name}");
            let (events, states) = read_qlog(&qlog);
            assert!(events > 10, "{name} has {events} events");
            let expect = match cc {
                "bbr2" => "bbr_startup",
                // A constant window has one state.
                "fixed" => "fixed",
                // RFC 6817 LEDBAT has no slow start unless asked for one.
                "ledbat" => "congestion_avoidance",
                _ => "slow_start",
            };
            assert!(
                states.iter().any(|s| s == expect),
                "{name}: states {states:?}"
            );
        }
    }
    // A plug-in the client names is installed on the server's connection
    // during the handshake: its own state name reaches the server's qlog.
    let s = transfer(
        server.local_addr(),
        &server.trust(),
        "fixed:packets=8",
        Direction::Download,
        BYTES,
        &dir,
        "fixed",
    );
    let (_, states) = read_qlog(Path::new(s.qlog.as_deref().unwrap()));
    assert_eq!(
        states.last().map(String::as_str),
        Some("fixed"),
        "{states:?}"
    );
}

#[test]
fn unpaced_transfers_both_directions() {
    // `--pacing off`: the client's own loop for an upload, and (asked
    // through ALPN) the server's for a download; bbr2 is the controller
    // whose every packet quiche schedules.
    let (_scratch, dir) = tempdir("unpaced");
    let server = start_server(&dir);
    const BYTES: u64 = 2_000_000;
    for direction in [Direction::Download, Direction::Upload] {
        let s = quic_bulk::client::run(
            ClientArgs {
                qlog_dir: Some(dir.clone()),
                pacing: false,
                ..ClientArgs::loopback(
                    server.local_addr(),
                    server.trust(),
                    "bbr2".parse().unwrap(),
                    Amount::Bytes(BYTES),
                    direction,
                    &format!("unpaced_{}", direction.as_str()),
                )
            },
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{direction:?}: {e}"));
        assert_eq!(s.bytes, BYTES, "{direction:?}");
    }
}

#[test]
fn twenty_clients_at_once() {
    let (_scratch, dir) = tempdir("many");
    let server = start_server(&dir);
    let addr = server.local_addr();
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let (dir, trust) = (dir.clone(), server.trust());
            thread::spawn(move || {
                let names = quiche_lbe::spec::controller_names();
                let cc = names[i % names.len()];
                let direction = if i % 2 == 0 {
                    Direction::Download
                } else {
                    Direction::Upload
                };
                transfer(
                    addr,
                    &trust,
                    cc,
                    direction,
                    1_000_000,
                    &dir,
                    &format!("c{i}"),
                )
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().bytes, 1_000_000);
    }
}

/// Real time on loopback. The sender stops after 500 ms and the client
/// sees everything it sent, so the client's duration is at least 0.5 s
/// whatever the load. `scripts/flake-check.sh -n 10` (2026-11-23):
/// min 0.519 / median 0.533 / max 0.546 s.
#[test]
fn duration_mode_sends_for_the_given_time() {
    let (_scratch, dir) = tempdir("duration");
    let server = start_server(&dir);
    let s = quic_bulk::client::run(
        ClientArgs::loopback(
            server.local_addr(),
            server.trust(),
            "ledbatpp".parse().unwrap(),
            Amount::DurationMs(500),
            Direction::Download,
            "dur",
        ),
        &AtomicBool::new(false),
    )
    .unwrap();
    figure("duration", "duration_s", s.duration_s);
    assert!(s.bytes > 0);
    // The sender stopped after 500 ms; the client saw it all.
    assert!(s.duration_s >= 0.5, "{}", s.duration_s);
    assert_eq!(
        s.qlog.map(|q| q.contains("dur-server-ledbatpp")),
        Some(true)
    );
}

fn quic_bulk() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quic-bulk"))
}

/// Runs the CLI; returns (exit success, stdout, stderr).
fn cli(args: &[&str]) -> (bool, String, String) {
    let out = quic_bulk().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `quic-bulk client --connect ADDR --cc CC --bytes BYTES OPTIONS...`
/// ([`cli`]'s answer).
fn client(addr: &str, cc: &str, bytes: &str, options: &[&str]) -> (bool, String, String) {
    let mut args = vec!["client", "--connect", addr, "--cc", cc, "--bytes", bytes];
    args.extend_from_slice(options);
    cli(&args)
}

#[test]
fn cli_rejects_bad_input_with_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "client",
                "--connect",
                "127.0.0.1:9",
                "--cc",
                "vegas",
                "--bytes",
                "1MB",
            ],
            "unknown congestion controller 'vegas' (allowed: cubic, reno, bbr2,",
        ),
        (
            &[
                "client",
                "--connect",
                "127.0.0.1:9",
                "--cc",
                "ledbatpp:target",
                "--bytes",
                "1MB",
            ],
            "malformed parameter 'target' in --cc 'ledbatpp:target': expected key=value",
        ),
        (
            &[
                "client",
                "--connect",
                "127.0.0.1:9",
                "--cc",
                "cubic",
                "--bytes",
                "5XB",
            ],
            "bad size '5XB'",
        ),
        (
            &[
                "client",
                "--connect",
                "127.0.0.1:9",
                "--cc",
                "cubic",
                "--duration",
                "30",
            ],
            "bad duration '30'",
        ),
        (
            &["client", "--connect", "127.0.0.1:9", "--cc", "cubic"],
            "--bytes",
        ),
        (
            &[
                "client",
                "--connect",
                "127.0.0.1:9",
                "--cc",
                "bbr2",
                "--bytes",
                "1MB",
                "--pacing",
                "maybe",
            ],
            "invalid value 'maybe' for '--pacing <PACING>' [possible values: on, off]",
        ),
        (
            &["server", "--pacing", "no"],
            "invalid value 'no' for '--pacing <PACING>' [possible values: on, off]",
        ),
    ];
    for (args, expected) in cases {
        let (ok, _, err) = cli(args);
        assert!(!ok, "{args:?} succeeded");
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains(expected), "{args:?}: {err}");
    }
}

#[test]
fn cli_reports_an_unreachable_server() {
    // Nothing listens on this port: the socket is bound and never read.
    let idle = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = idle.local_addr().unwrap().to_string();
    let (ok, out, err) = client(&addr, "cubic", "1MB", &["--timeout", "1s", "--json"]);
    assert!(!ok);
    assert!(out.is_empty());
    assert_eq!(
        err.trim(),
        format!("quic-bulk: error: no answer from {addr} after 1s: is a server running there?")
    );
}

#[test]
fn cli_rejects_an_unwritable_qlog_dir() {
    let (_scratch, dir) = tempdir("notadir");
    let file = dir.join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let dir = file.join("qlogs");
    let (ok, _, err) = cli(&[
        "server",
        "--listen",
        "127.0.0.1:0",
        "--qlog-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.starts_with("quic-bulk: error: cannot create qlog dir"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn cli_json_and_clean_shutdown() {
    let (_scratch, dir) = tempdir("cli");
    // Find a free port, then let the server take it.
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let cert = dir.join("cert.pem");
    let mut server = quic_bulk()
        .args([
            "server",
            "--listen",
            &addr,
            "--qlog-dir",
            dir.to_str().unwrap(),
            "--write-cert",
            cert.to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = None;
    for _ in 0..50 {
        let (ok, stdout, _) = client(
            &addr,
            "ledbatpp",
            "2MB",
            &["--json", "--timeout", "1s", "--ca", cert.to_str().unwrap()],
        );
        if ok {
            out = Some(stdout);
            break;
        }
    }
    let out = out.expect("the server never answered");
    assert_eq!(out.lines().count(), 1, "exactly one JSON object: {out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cc"], "ledbatpp");
    assert_eq!(v["direction"], "download");
    assert_eq!(v["bytes"], 2_000_000);
    let qlog = PathBuf::from(v["qlog"].as_str().unwrap());
    assert!(qlog.starts_with(&dir));

    // SIGTERM: the server exits cleanly with complete qlogs.
    let pid = server.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = server.wait().unwrap();
    assert!(status.success(), "server exit: {status:?}");
    let (events, _) = read_qlog(&qlog);
    assert!(events > 10);
}

#[test]
fn a_download_with_a_deadline_reports_it_met_and_the_time_per_level() {
    let (_scratch, dir) = tempdir("deadline");
    let server = start_server(&dir);
    for cc in ["cdg", "ledbatpp"] {
        let summary = quic_bulk::client::run(
            ClientArgs {
                qlog_dir: Some(dir.clone()),
                deadline: Some(Duration::from_secs(600)),
                ..ClientArgs::loopback(
                    server.local_addr(),
                    server.trust(),
                    cc.parse().unwrap(),
                    Amount::Bytes(2_000_000),
                    Direction::Download,
                    &format!("deadline_{cc}"),
                )
            },
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{cc}: {e}"));
        assert_eq!(summary.bytes, 2_000_000);
        let deadline = summary.deadline.expect("a deadline outcome");
        assert_eq!(deadline.deadline_s, 600.0);
        assert_eq!(deadline.finished_s, summary.duration_s);
        // Loopback, 2 MB in 10 minutes: met, never off level 0.
        assert!(deadline.met);
        let levels = deadline
            .time_in_levels_s
            .expect("the server reports its levels");
        assert_eq!(levels.len(), 7);
        assert!(
            levels[0] > 0.0 && levels[1..].iter().all(|t| *t == 0.0),
            "{levels:?}"
        );
    }
    server.stop().unwrap();
}

#[test]
fn cli_client_verifies_the_server_certificate_by_default() {
    let (_scratch, dir) = tempdir("verify");
    let cert = dir.join("cert.pem");
    let ca = cert.to_str().unwrap();
    let mut server = KillOnDrop(
        quic_bulk()
            .args(["server", "--listen", "127.0.0.1:0", "--write-cert", ca])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut log = std::io::BufReader::new(server.0.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut log, &mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("quic-bulk server: listening on ")
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    let cubic_1mb = |extra: &[&str]| {
        let mut options = vec!["--json"];
        options.extend_from_slice(extra);
        client(&addr, "cubic", "1MB", &options)
    };
    let refused = "quic-bulk: error: the server's certificate for 127.0.0.1 did not verify: self \
                   signed certificate (TLS alert 48, unknown_ca); use --ca PATH to trust that \
                   certificate or its CA, or -k/--insecure to skip verification";

    // Not trusted by default: one line.
    let (ok, out, err) = cubic_1mb(&[]);
    assert!(!ok);
    assert_eq!((out.as_str(), err.trim_end()), ("", refused));

    // Trusted with the written certificate; the payload is checked.
    let (ok, out, err) = cubic_1mb(&["--ca", ca]);
    assert!(ok, "{err}");
    assert_eq!(err, "");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bytes"], 1_000_000);

    // The certificate names 127.0.0.1, not another host.
    let (ok, _, err) = cubic_1mb(&["--ca", ca, "--server-name", "example.com"]);
    assert!(!ok);
    assert_eq!(
        err.trim_end(),
        "quic-bulk: error: the server's certificate for example.com did not verify: Hostname \
         mismatch (TLS alert 42, bad_certificate); use --ca PATH to trust that certificate or its \
         CA, or -k/--insecure to skip verification"
    );
    let (ok, _, err) = cubic_1mb(&["--ca", ca, "--server-name", "localhost"]);
    assert!(ok, "{err}");

    // -k: not verified, and it says so.
    let (ok, out, err) = cubic_1mb(&["-k"]);
    assert!(ok, "{err}");
    assert_eq!(
        err,
        "quic-bulk: warning: not verifying the server's certificate (--insecure): anyone on the \
         path can impersonate the server\n"
    );
    assert_eq!(out.lines().count(), 1);

    // A missing or malformed --ca file: one line.
    let missing = dir.join("missing.pem");
    let (ok, _, err) = cubic_1mb(&["--ca", missing.to_str().unwrap()]);
    assert!(!ok);
    assert_eq!(
        err.trim_end(),
        format!(
            "quic-bulk: error: --ca: cannot read {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
    let (ok, _, err) = cubic_1mb(&["--ca", dir.to_str().unwrap()]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("quic-bulk: error: --ca: cannot read "),
        "{err}"
    );
}

/// A child process killed and reaped when dropped, also when a test fails.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn both_ends_exchange_timestamps() {
    // quic-bulk's client and server both offer the timestamp extension
    // (draft-huitema-quic-ts-08, patch 0008): the packets the sender
    // receives carry TIMESTAMP frames (type 0x2f5, which qlog logs as an
    // unknown frame of type 757) beside their ACKs.
    let (_scratch, dir) = tempdir("timestamps");
    let server = start_server(&dir);
    let s = transfer(
        server.local_addr(),
        &server.trust(),
        "ledbatpp",
        Direction::Download,
        2_000_000,
        &dir,
        "timestamps",
    );
    let qlog = std::fs::read_to_string(s.qlog.as_deref().expect("sender qlog")).unwrap();
    let received = |needle: &str| {
        qlog.split('\u{1e}')
            .filter(|r| r.contains("packet_received") && r.contains(needle))
            .count()
    };
    let with_timestamp = received("\"frame_type_bytes\":757");
    let with_ack = received("\"frame_type\":\"ack\"");
    assert!(
        with_timestamp > 10,
        "{with_timestamp} packets with a TIMESTAMP"
    );
    assert!(
        with_timestamp <= with_ack,
        "{with_timestamp} TIMESTAMPs, {with_ack} ACKs"
    );
}
