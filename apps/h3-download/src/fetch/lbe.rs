//! Who makes a background download less-than-best-effort (`--lbe`), and
//! the receiver-side window's summary for `--json`.
//!
//! `--background` always asks for background delivery with
//! `priority: u=7` (the HTTP statement that this request is background;
//! `h3-serve` then sends it with LEDBAT++). `--lbe` says what the client
//! does besides:
//!
//! * `sender`: nothing; the server's controller is trusted to yield (only
//!   a server that honours `u=7`, like `h3-serve`, does);
//! * `receiver`: the client runs receiver-side LEDBAT++
//!   ([`quiche_lbe::receiver`]) and caps the server's credit through flow
//!   control, whatever the server runs;
//! * `both` (the default): both. Against `h3-serve` the sender's LEDBAT++
//!   and the receiver's see the same queue with the same 60 ms target, and
//!   the smaller of their windows limits the download: each yields as it
//!   would alone, and the receiver's cap keeps the download background
//!   against any server. Against a server that does no LBE, `both` is
//!   `receiver`.
//!
//! `both` is the default because it is never worse than either alone in
//! what was measured (20 Mbit/s, 50 ms, the receiver-driven table in docs/receiver-driven.md,
//! `scripts/receiver-driven-table.sh`): alone on a 500 ms buffer `sender` kept
//! 0.94 of a normal download with a 53 ms mean queue, `both` 0.92 with
//! 51 ms (0.92-0.93 in two more runs), `receiver` from a stock quiche
//! server 1.0 with 63 ms; beside a CUBIC download CUBIC kept 0.998 of the
//! link in each mode; and only the receiver's cap works when the server
//! ignores `u=7`. The two LEDBAT++ loops of `both` slow down at their own
//! moments; what had cost `both` throughput was spurious retransmissions
//! counted as losses, no longer counted (patch 0004).

use std::time::Instant;

use quiche_lbe::lbe_cc::delay::DelayMode;
use quiche_lbe::lbe_cc::rledbat;
use quiche_lbe::lbe_cc::rledbat::ReceiverStats;
use quiche_lbe::ReceiverLbe;
use serde::Serialize;

/// `--lbe`: who runs the less-than-best-effort controller.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LbeMode {
    /// The client (receiver-side LEDBAT++ through flow control).
    Receiver,
    /// The server (asked with `priority: u=7`).
    Sender,
    /// Both.
    #[default]
    Both,
}

impl LbeMode {
    /// Whether the client runs the receiver-side control.
    pub fn receiver(self) -> bool {
        matches!(self, LbeMode::Receiver | LbeMode::Both)
    }

    /// The mode as `--lbe` and `--json` spell it.
    pub fn name(self) -> &'static str {
        match self {
            LbeMode::Receiver => "receiver",
            LbeMode::Sender => "sender",
            LbeMode::Both => "both",
        }
    }
}

/// The receiver-side window over the download (`--json`'s
/// `receiver_window`). Bytes on the wire.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReceiverWindowSummary {
    /// The window's figures and counts (`final_bytes`, `min_bytes`,
    /// `max_bytes`, `mean_bytes` time-weighted over the connection,
    /// `rtt_samples` of the client's own ack-eliciting packets,
    /// `retransmissions` of stream frames seen, `loss_reductions` at most
    /// one per smoothed RTT, `slowdowns` initial and periodic): `lbe-cc`'s
    /// own serialisation, shared with the simulator's view.
    #[serde(flatten)]
    pub window: ReceiverStats,
    /// Receiver-window records written to the qlog
    /// ([`quiche_lbe::receiver::QLOG_WINDOW`]).
    pub qlog_events: u64,
    /// The delay signal the window read last: `owd` (the one-way delay of
    /// the data, from the server's timestamps: `owd_samples` counts them)
    /// or `rtt` (the round trip of the client's own packets); null before
    /// any sample.
    pub delay_signal: Option<&'static str>,
}

/// The receiver-side control of one download, if `--lbe` asks for it.
pub(crate) struct Receiver(Option<ReceiverLbe>);

impl Receiver {
    /// Control for a download with these settings.
    pub(crate) fn new(background: bool, mode: LbeMode, delay: DelayMode) -> Self {
        Receiver((background && mode.receiver()).then(|| {
            let mut cfg = rledbat::default_config();
            cfg.set("delay", delay.as_str())
                .expect("every DelayMode is a valid delay= value");
            ReceiverLbe::new(
                cfg,
                lbe_app_kit::tls::MAX_DATAGRAM_SIZE as u64,
                Instant::now(),
            )
        }))
    }

    /// Prepares the connection's configuration.
    pub(crate) fn configure(&self, config: &mut quiche::Config) {
        if let Some(r) = &self.0 {
            r.configure(config);
        }
    }

    /// After the client read what arrived.
    pub(crate) fn on_progress(&mut self, conn: &mut quiche::Connection) {
        if let Some(r) = &mut self.0 {
            r.on_progress(conn, Instant::now());
        }
    }

    /// The summary for `--json`.
    pub(crate) fn summary(&self) -> Option<ReceiverWindowSummary> {
        self.0.as_ref().map(|r| ReceiverWindowSummary {
            window: r.stats(),
            qlog_events: r.qlog_events(),
            delay_signal: r.window_data().delay_signal,
        })
    }
}
