//! A run's end: each bulk flow's counts and analysis, the workloads'
//! figures and the links' counts.

use std::time::Duration;

use lbe_scenario::FlowEnd;

use super::events::Side;
use super::sim::Sim;
use crate::output::FlowStats;
use crate::output::SimOutput;
use crate::output::WorkloadOutput;

impl Sim<'_> {
    pub(super) fn finish(mut self) -> Result<SimOutput, String> {
        let config = self.config;
        let bulk = &self.conns[..self.bulk];
        // The run ends when its last bulk flow did; with none (workloads
        // alone), when its last workload did.
        let end = bulk
            .iter()
            .filter_map(|f| f.done_at)
            .max()
            .or_else(|| {
                self.workloads
                    .iter()
                    .map(|w| self.epoch + w.end(&config.flows[w.flow]))
                    .max()
            })
            .unwrap_or(self.epoch);
        let mut stats = Vec::new();
        let mut flows = Vec::new();
        for state in self.conns[..self.bulk].iter_mut() {
            let flow = &config.flows[state.flow];
            let sender = match state.sender() {
                Side::Client => state.client.conn.take(),
                Side::Server => state.server.conn.take(),
            };
            let s = sender.as_ref().map(|c| c.stats());
            stats.push(FlowStats {
                sent_packets: s.as_ref().map_or(0, |s| s.sent as u64),
                lost_packets: s.as_ref().map_or(0, |s| s.lost as u64),
                spurious_losses: s.as_ref().map_or(0, |s| s.spurious_lost as u64),
                loss_detection_timeouts: sender.as_ref().map_or(0, |c| {
                    c.path_stats().map(|p| p.total_pto_count as u64).sum()
                }),
                stream_bytes: state.written(),
                finished_s: match flow.end {
                    FlowEnd::Bytes(b) if state.received() == b => state
                        .done_at
                        .map(|t| t.saturating_duration_since(self.epoch).as_secs_f64()),
                    _ => None,
                },
                time_in_levels_s: time_in_levels_s(
                    state.bulk.as_ref().and_then(|b| b.server.progress()),
                ),
                receiver_window: state.receiver.as_ref().map(|rx| rx.stats()),
            });
            // Dropping the connection drops its event sink (and flushes its
            // qlog file): the analysis is ours alone.
            drop(sender);
            let analyzer = match state.analysis.take() {
                Some(shared) => {
                    let state = std::sync::Arc::try_unwrap(shared)
                        .map_err(|_| format!("flow {}: quiche kept its qlog sink", flow.name))?;
                    state
                        .into_inner()
                        .unwrap_or_else(|e| e.into_inner())
                        .map_err(|e| format!("flow {}: {e}", flow.name))?
                }
                None => {
                    return Err(format!(
                        "flow {}: the server never heard from the client",
                        flow.name
                    ))
                }
            };
            flows.push(SimOutput::memory_flow(analyzer, flow, state.flow + 1));
        }
        let qlogs = config
            .flows
            .iter()
            .zip(std::mem::take(&mut self.qlogs))
            .filter(|(f, _)| f.kind.is_bulk())
            .map(|(_, q)| q)
            .collect();
        let workloads = self
            .workloads
            .iter()
            .map(|w| {
                let flow = &config.flows[w.flow];
                WorkloadOutput {
                    flow: w.flow,
                    figures: w.figures(flow, config.window),
                    samples: w.samples(flow, config.window),
                }
            })
            .collect();
        Ok(SimOutput {
            analysis: SimOutput::analyse(config, flows)?,
            flows: stats,
            workloads,
            link: self.link.totals().clone(),
            reverse_link: self.reverse.as_ref().map(|l| l.totals().clone()),
            flow_drops: (0..config.flows.len() as u64)
                .map(|i| self.link.flow_drops(i))
                .collect(),
            events: self.events,
            duration: end.saturating_duration_since(self.epoch),
            qlogs,
        })
    }
}

/// A deadline-aware flow's time in each aggressiveness level, seconds.
fn time_in_levels_s(progress: Option<&quiche_lbe::lbe_cc::deadline::Progress>) -> Option<Vec<f64>> {
    progress.map(|p| {
        p.time_in_levels()
            .iter()
            .map(Duration::as_secs_f64)
            .collect()
    })
}
