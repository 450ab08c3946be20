//! quic-bulk's protocol around a quiche connection, sans-IO: what each end
//! of a bulk transfer reads and writes, in one place, so that `quic-bulk`
//! (driven by mio, `lbe_app_kit::endpoint`) and the simulator (`lbe-sim`,
//! driven by virtual time) run the same code.
//!
//! - [`protocol`]: the wire format (ALPN, streams, the request, report and
//!   receipt lines, the payload pattern).
//! - [`transfer`]: the payload written ([`transfer::Sender`], about one
//!   congestion window waiting to be sent) and checked byte by byte
//!   ([`transfer::Receiver`]), and one-line messages read.
//! - [`stats`]: what a sender measures for its report.
//! - [`server`]: a server connection's session: the request read, the
//!   payload sent or received, the report and the receipt.
//! - [`client`]: a client connection's session: the request sent, the
//!   payload received or sent, the report asked for, the connection closed.
//!
//! Nothing here reads the clock or touches a socket: the caller passes the
//! time (`now`) and moves the datagrams.
#![forbid(unsafe_code)]

pub mod client;
pub mod protocol;
pub mod server;
pub mod stats;
pub mod transfer;

/// Why a session closed its connection: the application error code it sent
/// ([`protocol::close`]) and the reason, also sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: u64,
    pub reason: String,
}

impl Failure {
    /// Closes `conn` with `code` and `reason` and returns the failure.
    fn close(conn: &mut quiche::Connection, code: u64, reason: String) -> Failure {
        conn.close(true, code, reason.as_bytes()).ok();
        Failure { code, reason }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}
