//! The two sessions against each other over a pair of real quiche
//! connections in memory (no sockets): transfers both ways with every byte
//! checked, the report and the receipt, a `--duration` sender's stop, and
//! a peer breaking the protocol closed with the code that says how.

use std::net::SocketAddr;
use std::time::Duration;
use std::time::Instant;

use lbe_bulk::client::ClientSession;
use lbe_bulk::protocol;
use lbe_bulk::protocol::close;
use lbe_bulk::protocol::Amount;
use lbe_bulk::protocol::Direction;
use lbe_bulk::protocol::Request;
use lbe_bulk::server::ServerSession;

const CLIENT: &str = "127.0.0.1:5000";
const SERVER: &str = "127.0.0.1:4433";

/// A self-signed P-256 certificate and its key, made in memory.
fn identity() -> (
    boring::x509::X509,
    boring::pkey::PKey<boring::pkey::Private>,
) {
    let group = boring::ec::EcGroup::from_curve_name(boring::nid::Nid::X9_62_PRIME256V1).unwrap();
    let key =
        boring::pkey::PKey::from_ec_key(boring::ec::EcKey::generate(&group).unwrap()).unwrap();
    let mut name = boring::x509::X509NameBuilder::new().unwrap();
    name.append_entry_by_nid(boring::nid::Nid::COMMONNAME, "lbe-bulk-test")
        .unwrap();
    let name = name.build();
    let mut cert = boring::x509::X509::builder().unwrap();
    cert.set_version(2).unwrap();
    cert.set_subject_name(&name).unwrap();
    cert.set_issuer_name(&name).unwrap();
    cert.set_pubkey(&key).unwrap();
    cert.set_not_before(&boring::asn1::Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    cert.set_not_after(&boring::asn1::Asn1Time::days_from_now(1).unwrap())
        .unwrap();
    cert.sign(&key, boring::hash::MessageDigest::sha256())
        .unwrap();
    (cert.build(), key)
}

fn config(server: bool) -> quiche::Config {
    let mut tls = boring::ssl::SslContextBuilder::new(boring::ssl::SslMethod::tls()).unwrap();
    if server {
        let (cert, key) = identity();
        tls.set_certificate(&cert).unwrap();
        tls.set_private_key(&key).unwrap();
    }
    let mut config =
        quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, tls).unwrap();
    config.set_application_protos(&[protocol::ALPN]).unwrap();
    // The client checks nothing: both ends are this test.
    config.verify_peer(false);
    config.set_initial_max_data(10_000_000);
    config.set_initial_max_stream_data_bidi_local(10_000_000);
    config.set_initial_max_stream_data_bidi_remote(10_000_000);
    config.set_initial_max_streams_bidi(10);
    config.set_max_idle_timeout(5_000);
    config
}

/// A client connection and the server connection that accepted it.
struct Pair {
    client: quiche::Connection,
    server: quiche::Connection,
}

impl Pair {
    fn new() -> Pair {
        Pair::with_configs(config(false), config(true))
    }

    /// A pair whose every stream window is `bytes`, both ways: a line
    /// longer than that goes a part at a time.
    fn with_stream_windows(bytes: u64) -> Pair {
        let narrow = |mut config: quiche::Config| {
            config.set_initial_max_stream_data_bidi_local(bytes);
            config.set_initial_max_stream_data_bidi_remote(bytes);
            config
        };
        Pair::with_configs(narrow(config(false)), narrow(config(true)))
    }

    fn with_configs(mut client_config: quiche::Config, mut server_config: quiche::Config) -> Pair {
        let (client_addr, server_addr): (SocketAddr, SocketAddr) =
            (CLIENT.parse().unwrap(), SERVER.parse().unwrap());
        let client = quiche::connect(
            None,
            &quiche::ConnectionId::from_ref(&[1; 16]),
            client_addr,
            server_addr,
            &mut client_config,
        )
        .unwrap();
        let server = quiche::accept(
            &quiche::ConnectionId::from_ref(&[2; 16]),
            None,
            server_addr,
            client_addr,
            &mut server_config,
        )
        .unwrap();
        Pair { client, server }
    }

    /// Runs each end's timer if due (a delayed ACK), then moves every
    /// datagram either end has to the other, once each way. quiche reads
    /// the real clock here: a delayed ACK is due 25 ms later.
    fn exchange(&mut self) {
        lbe_endpoint::on_timer(&mut self.client, Instant::now());
        lbe_endpoint::on_timer(&mut self.server, Instant::now());
        flush(&mut self.client, &mut self.server, CLIENT, SERVER);
        flush(&mut self.server, &mut self.client, SERVER, CLIENT);
    }
}

/// Every datagram `from` (at `from_addr`) has now, into `to`.
fn flush(
    from: &mut quiche::Connection,
    to: &mut quiche::Connection,
    from_addr: &str,
    to_addr: &str,
) {
    let mut buf = [0u8; 1500];
    let info = quiche::RecvInfo {
        from: from_addr.parse().unwrap(),
        to: to_addr.parse().unwrap(),
    };
    while let Ok((n, _)) = from.send(&mut buf) {
        let _ = to.recv(&mut buf[..n], info);
    }
}

fn request(direction: Direction, amount: Amount) -> Request {
    Request {
        direction,
        amount,
        cc: "cubic".into(),
        label: "test".into(),
        deadline_ms: None,
    }
}

/// Runs both sessions until the client has its outcome (for at most 10 s),
/// with `now` as both sessions' time.
fn run(pair: &mut Pair, client: &mut ClientSession, server: &mut ServerSession, now: Instant) {
    let give_up = Instant::now() + Duration::from_secs(10);
    while Instant::now() < give_up {
        pair.exchange();
        server.serve(&mut pair.server, now, None).unwrap();
        client.progress(&mut pair.client, now, None).unwrap();
        if client.outcome().is_some() {
            pair.exchange();
            return;
        }
    }
    panic!(
        "no outcome after 10 s: client {} bytes (finished {:?}), server {} bytes (finished {}), client closed {}, server closed {}",
        client.bytes(),
        client.finished_at(),
        server.bytes(),
        server.is_finished(),
        pair.client.is_closed(),
        pair.server.is_closed()
    );
}

#[test]
fn a_download_is_checked_then_the_report_ends_it() {
    let mut pair = Pair::new();
    let mut client = ClientSession::new(request(Direction::Download, Amount::Bytes(300_001)));
    let mut server = ServerSession::new();
    let now = Instant::now();
    run(&mut pair, &mut client, &mut server, now);
    assert_eq!(client.bytes(), 300_001);
    assert_eq!(server.bytes(), 300_001);
    assert!(server.is_finished());
    assert_eq!(server.request(), Some(client.request()));
    assert_eq!(client.request_sent_at(), Some(now));
    assert_eq!(client.finished_at(), Some(now));
    let report = client.outcome().unwrap();
    assert_eq!(report.lost_packets, 0);
    assert!(report.rtt_ms.p50 > 0.0, "{report:?}");
    // The client closed the connection as done.
    let closed = pair.server.peer_error().expect("the client closed");
    assert!(
        closed.is_app && closed.error_code == close::DONE,
        "{closed:?}"
    );
}

#[test]
fn an_upload_ends_with_the_receipt() {
    let mut pair = Pair::new();
    let mut client = ClientSession::new(request(Direction::Upload, Amount::Bytes(200_000)));
    let mut server = ServerSession::new();
    run(&mut pair, &mut client, &mut server, Instant::now());
    assert_eq!(server.bytes(), 200_000);
    assert!(server.is_finished());
    assert_eq!(client.bytes(), 200_000);
    assert!(client.sender().is_some_and(|tx| tx.is_finished()));
    // An upload's figures are the client's own.
    assert_eq!(client.outcome().unwrap().lost_packets, 0);
}

/// Each line (the request, the report request, the report, the receipt)
/// longer than the peer lets a stream carry at once goes out a part at a
/// time as the window opens: the transfer ends as with wide windows. (They
/// were written once, whatever fit: a request cut short closed the
/// connection, and a report cut short left the client waiting; a simulated
/// download's report request beside a CUBIC upload on a 500 kbit/s uplink
/// met the first.)
#[test]
fn lines_longer_than_the_stream_window_go_a_part_at_a_time() {
    for direction in [Direction::Download, Direction::Upload] {
        let mut pair = Pair::with_stream_windows(8);
        let mut client = ClientSession::new(request(direction, Amount::Bytes(3_000)));
        let mut server = ServerSession::new();
        let now = Instant::now();
        run(&mut pair, &mut client, &mut server, now);
        assert_eq!(client.bytes(), 3_000, "{direction:?}");
        assert_eq!(server.bytes(), 3_000, "{direction:?}");
        assert!(server.is_finished(), "{direction:?}");
        assert_eq!(server.request(), Some(client.request()), "{direction:?}");
        assert!(client.outcome().is_some(), "{direction:?}");
    }
}

#[test]
fn a_duration_download_stops_its_duration_after_the_first_write() {
    let mut pair = Pair::new();
    let mut client = ClientSession::new(request(Direction::Download, Amount::DurationMs(1500)));
    let mut server = ServerSession::new();
    let t0 = Instant::now();
    for _ in 0..5 {
        pair.exchange();
        server.serve(&mut pair.server, t0, None).unwrap();
        client.progress(&mut pair.client, t0, None).unwrap();
    }
    let tx = server.sender().expect("the download is being written");
    assert_eq!(tx.stop_at(), Some(t0 + Duration::from_millis(1500)));
    assert!(server.bytes() > 0 && !server.is_finished());
    // A millisecond early, it keeps writing; at its stop it writes the FIN.
    let early = t0 + Duration::from_millis(1499);
    server.serve(&mut pair.server, early, None).unwrap();
    assert!(!server.is_finished());
    let stop = t0 + Duration::from_millis(1500);
    run(&mut pair, &mut client, &mut server, stop);
    assert!(server.is_finished());
    assert_eq!(client.bytes(), server.bytes());
    assert_eq!(client.finished_at(), Some(stop));
}

/// The server session's failure after the client wrote `bytes` on the
/// data stream (with `fin`) itself.
fn server_failure(bytes: &[u8], fin: bool) -> lbe_bulk::Failure {
    let mut pair = Pair::new();
    let mut server = ServerSession::new();
    let now = Instant::now();
    for _ in 0..50 {
        pair.exchange();
        if pair.client.is_established() {
            break;
        }
    }
    pair.client
        .stream_send(protocol::DATA_STREAM, bytes, fin)
        .unwrap();
    for _ in 0..50 {
        pair.exchange();
        if let Err(failure) = server.serve(&mut pair.server, now, None) {
            pair.exchange();
            let closed = pair.client.peer_error().expect("the server closed");
            assert!(
                closed.is_app && closed.error_code == failure.code,
                "{closed:?}"
            );
            assert_eq!(closed.reason, failure.reason.as_bytes());
            return failure;
        }
    }
    panic!("the server took it");
}

#[test]
fn a_malformed_request_is_refused() {
    let failure = server_failure(b"{\"direction\":\"sideways\"}\n", true);
    assert_eq!(failure.code, close::BAD_REQUEST);
    assert!(
        failure
            .reason
            .starts_with("malformed request: unknown variant `sideways`"),
        "{}",
        failure.reason
    );
    let failure = server_failure(&[b'x'; 5000], false);
    assert_eq!(
        (failure.code, failure.reason.as_str()),
        (
            close::BAD_REQUEST,
            "line on stream 0 longer than 4096 bytes"
        )
    );
    let mut unknown = protocol::to_line(&request(Direction::Download, Amount::Bytes(1)));
    unknown = String::from_utf8(unknown)
        .unwrap()
        .replace("cubic", "vegas")
        .into_bytes();
    let failure = server_failure(&unknown, true);
    assert_eq!(failure.code, close::BAD_REQUEST);
    assert!(
        failure.reason.starts_with("bad controller in request: "),
        "{}",
        failure.reason
    );
    let mut deadline = request(Direction::Upload, Amount::Bytes(10));
    deadline.deadline_ms = Some(1000);
    let failure = server_failure(&protocol::to_line(&deadline), false);
    assert_eq!(
        (failure.code, failure.reason.as_str()),
        (
            close::BAD_REQUEST,
            "a deadline needs a download of a byte count"
        )
    );
}

#[test]
fn a_corrupt_or_short_upload_is_refused() {
    let mut upload = protocol::to_line(&request(Direction::Upload, Amount::Bytes(100)));
    let mut payload = vec![0u8; 100];
    protocol::fill(0, &mut payload);
    payload[37] ^= 1;
    upload.extend_from_slice(&payload);
    let failure = server_failure(&upload, true);
    assert_eq!(
        (failure.code, failure.reason.as_str()),
        (close::CORRUPT, "payload corrupt at byte 37")
    );
    let mut short = protocol::to_line(&request(Direction::Upload, Amount::Bytes(100)));
    short.extend_from_slice(&payload[..30]);
    let failure = server_failure(&short, true);
    assert_eq!(
        (failure.code, failure.reason.as_str()),
        (close::CORRUPT, "payload ended after 30 bytes, expected 100")
    );
}
