//! A quic-bulk connection's two sessions (`lbe_bulk`), the code quic-bulk
//! runs, and the request its client makes.

use lbe_scenario::Direction;
use lbe_scenario::FlowEnd;

use super::analysis::qlog_file_name;

/// A quic-bulk connection's two ends, the code quic-bulk runs
/// (`lbe_bulk`): the client's session sends the request, reads and checks
/// a download's payload (or writes an upload's) and asks for the report;
/// the server's reads the request, writes a download's payload (or checks
/// an upload's) and answers.
pub(super) struct BulkRun {
    pub(super) client: lbe_bulk::client::ClientSession,
    pub(super) server: lbe_bulk::server::ServerSession,
    /// Whether the wake-up at a `--duration` sender's stop is queued.
    pub(super) stop_queued: bool,
    /// The qlog the sender's report names: the file's name whether or not
    /// `--qlog` writes it, so that the report, and the run, are the same
    /// byte for byte either way and wherever the output goes.
    pub(super) qlog_name: std::path::PathBuf,
}

impl BulkRun {
    /// The sessions of a transfer of `end` for `flow` (a bulk flow's, or
    /// one of its workload's downloads when `workload`), with the request
    /// quic-bulk's client makes for it in the lab (lbe-lab passes the time
    /// from the flow's start to its stop as `--duration`, and a bulk
    /// flow's deadline as `--deadline`).
    pub(super) fn new(
        flow: &lbe_scenario::Flow,
        index: usize,
        end: FlowEnd,
        workload: bool,
    ) -> Self {
        use lbe_bulk::protocol::Amount;
        use lbe_bulk::protocol::Direction as Way;
        let request = lbe_bulk::protocol::Request {
            direction: match flow.direction {
                Direction::Download => Way::Download,
                Direction::Upload => Way::Upload,
            },
            amount: match end {
                FlowEnd::Bytes(b) => Amount::Bytes(b),
                FlowEnd::Stop(t) => {
                    Amount::DurationMs(lbe_bulk::protocol::millis(t.saturating_sub(flow.start)))
                }
            },
            cc: flow.cc.to_string(),
            label: flow.name.clone(),
            deadline_ms: flow
                .deadline
                .filter(|_| !workload)
                .map(lbe_bulk::protocol::millis),
        };
        BulkRun {
            client: lbe_bulk::client::ClientSession::new(request),
            server: lbe_bulk::server::ServerSession::new(),
            stop_queued: false,
            qlog_name: qlog_file_name(flow, index).into(),
        }
    }

    /// The sending end's writer, once it writes.
    pub(super) fn sender(&self) -> Option<&lbe_bulk::transfer::Sender> {
        self.client.sender().or_else(|| self.server.sender())
    }
}
