//! quic-bulk: bulk transfers over one QUIC connection with any congestion
//! controller, iperf-like. The binary is a thin CLI over [`server`] and
//! [`client`]; the wire protocol is in [`protocol`].

pub mod client;
pub mod protocol;
pub mod server;
pub mod stats;
pub mod transfer;

pub use lbe_app_kit::cli::stop_on_signals;
