//! quic-bulk: bulk transfers over one QUIC connection with any congestion
//! controller, iperf-like. The binary is a thin CLI over [`server`] and
//! [`client`]; the wire protocol is in [`protocol`].

pub mod client;
pub mod protocol;
pub mod server;
pub mod stats;
pub mod transfer;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A flag set by SIGINT or SIGTERM.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, quiche_lbe::Error> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|e| quiche_lbe::Error::new(format!("cannot handle signal {signal}: {e}")))?;
    }
    Ok(stop)
}
