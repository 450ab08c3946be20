//! An operator's program (docs/adopting.md): a quiche server that sends a
//! download with LEDBAT++ chosen by name, built against quiche 0.30.0 with
//! our core patches only (`scripts/quiche-src.sh --only core`) and
//! `quiche-lbe` without features. `tests/operator_core_only.rs` writes it
//! into a cargo project of its own, builds and runs it.
//!
//!   download CERT KEY BYTES
//!
//! The server and its client run in this one program over two UDP sockets
//! on 127.0.0.1; the client's certificate check is off (quiche's example
//! certificate). It prints one line,
//! `first_cwnd=N max_datagram_size=N received=N rollback_off=MESSAGE`:
//! the server connection's congestion window before it sent anything, the
//! datagram size that window is counted in, the bytes the client received,
//! and why `cubic:rollback=off` is refused without the lab patches.

use std::net::UdpSocket;
use std::time::Duration;
use std::time::Instant;

const ALPN: &[&[u8]] = &[b"lbe-operator"];
/// quiche's default, set explicitly: the size LEDBAT++'s window counts in.
const MAX_DATAGRAM_SIZE: usize = 1200;
/// A bound on the whole download; on loopback it takes well under a second.
const DEADLINE: Duration = Duration::from_secs(60);

fn config(cc_name: &str) -> quiche::Config {
    let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
    config.set_application_protos(ALPN).unwrap();
    config.set_max_idle_timeout(10_000);
    config.set_max_send_udp_payload_size(MAX_DATAGRAM_SIZE);
    config.set_initial_max_data(100_000_000);
    config.set_initial_max_stream_data_bidi_local(100_000_000);
    config.set_initial_max_stream_data_bidi_remote(100_000_000);
    config.set_initial_max_streams_bidi(4);
    // The operator's one line: a controller quiche does not know, by name.
    config.set_cc_algorithm_name(cc_name).unwrap();
    config
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, cert, key, bytes] = &args[..] else {
        panic!("usage: download CERT KEY BYTES");
    };
    let bytes: u64 = bytes.parse().unwrap();

    // Makes `ledbatpp`, `ledbat`, `cdg` (and their parameters) names that
    // quiche's `set_cc_algorithm_name` accepts.
    quiche_lbe::register().unwrap();

    let mut server_config = config("ledbatpp");
    server_config.load_cert_chain_from_pem_file(cert).unwrap();
    server_config.load_priv_key_from_pem_file(key).unwrap();
    let mut client_config = config("cubic");
    client_config.verify_peer(false);

    let server_sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let client_sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    server_sock.set_nonblocking(true).unwrap();
    client_sock.set_nonblocking(true).unwrap();
    let server_addr = server_sock.local_addr().unwrap();
    let client_addr = client_sock.local_addr().unwrap();

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
    let mut first_cwnd = None;
    let mut requested = false;
    let mut sent = 0u64;
    let mut received = 0u64;
    let mut buf = vec![0u8; 65536];
    let mut out = vec![0u8; 1500];
    let start = Instant::now();

    while !client.is_closed() {
        assert!(start.elapsed() < DEADLINE, "no download in {DEADLINE:?}");
        let mut progress = false;

        while let Ok((n, info)) = client.send(&mut out) {
            client_sock.send_to(&out[..n], info.to).unwrap();
            progress = true;
        }
        while let Ok((n, from)) = server_sock.recv_from(&mut buf) {
            let conn = server.get_or_insert_with(|| {
                let scid = quiche::ConnectionId::from_ref(&[2; 16]);
                let conn =
                    quiche::accept(&scid, None, server_addr, from, &mut server_config).unwrap();
                first_cwnd = conn.path_stats().next().map(|p| p.cwnd);
                conn
            });
            let info = quiche::RecvInfo {
                from,
                to: server_addr,
            };
            conn.recv(&mut buf[..n], info).unwrap();
            progress = true;
        }

        if let Some(conn) = server.as_mut() {
            let mut request = false;
            for id in conn.readable() {
                while conn.stream_recv(id, &mut buf).is_ok() {}
                request = true;
            }
            if (request || sent > 0) && sent < bytes {
                let chunk = vec![b'x'; (bytes - sent).min(16384) as usize];
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

        while let Ok((n, from)) = client_sock.recv_from(&mut buf) {
            let info = quiche::RecvInfo {
                from,
                to: client_addr,
            };
            client.recv(&mut buf[..n], info).unwrap();
            progress = true;
        }
        if client.is_established() && !requested {
            client.stream_send(0, b"GET", false).unwrap();
            requested = true;
        }
        for id in client.readable() {
            while let Ok((n, fin)) = client.stream_recv(id, &mut buf) {
                received += n as u64;
                if fin {
                    client.close(true, 0, b"done").unwrap();
                }
            }
        }

        for conn in std::iter::once(&mut client).chain(server.as_mut()) {
            if conn.timeout().is_some_and(|t| t.is_zero()) {
                conn.on_timeout();
            }
        }
        if !progress {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    let rollback_off = "cubic:rollback=off"
        .parse::<quiche_lbe::CcSpec>()
        .unwrap_err();
    println!(
        "first_cwnd={} max_datagram_size={MAX_DATAGRAM_SIZE} received={received} rollback_off={rollback_off}",
        first_cwnd.expect("the server never saw a packet"),
    );
}
