//! quic-bulk: bulk transfers over one QUIC connection with any congestion
//! controller, iperf-like. The binary is a thin CLI over [`server`] and
//! [`client`], which run `lbe_bulk`'s sans-IO sessions (the wire protocol,
//! re-exported here as [`protocol`]) from `lbe_app_kit`'s endpoint loops.

pub mod client;
pub mod server;

pub use lbe_app_kit::cli::stop_on_signals;
pub use lbe_bulk::protocol;
