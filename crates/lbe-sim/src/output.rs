//! What a run gives back: the flows analysed together by `qlog-analysis`,
//! each flow's own counts, the workloads' figures and the links' counts.

use std::time::Duration;

use qlog_analysis::flow::FlowAnalyzer;
use qlog_analysis::Analysis;
use qlog_analysis::MemoryFlow;
use qlog_analysis::Role;
use quiche_lbe::lbe_cc::rledbat;
use serde::Serialize;

use crate::config::Config;

/// What a flow did, beside the figures of the analysis.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowStats {
    pub sent_packets: u64,
    pub lost_packets: u64,
    pub spurious_losses: u64,
    /// Times the loss-detection timer fired over the whole run, for a
    /// probe timeout or a time-threshold loss: quiche's
    /// `PathStats::total_pto_count` (quiche 0.30.0 documents it as "the
    /// number of times PTO fired" but increments it in
    /// `Path::on_loss_detection_timeout` whatever fired). An upper bound on
    /// the probe timeouts.
    pub loss_detection_timeouts: u64,
    /// Stream bytes the flow offered (new data, retransmissions not counted).
    pub stream_bytes: u64,
    /// When every byte was acknowledged (byte-counted flows), seconds.
    pub finished_s: Option<f64>,
    /// A deadline-aware controller's time in each aggressiveness level
    /// (`lbe_cc::deadline`), seconds, level 0 (full LBE) first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_in_levels_s: Option<Vec<f64>>,
    /// A receiver-driven flow's window (the client's
    /// `quiche_lbe::ReceiverLbe`): `final_bytes`, `min_bytes`, `max_bytes`,
    /// `mean_bytes` time-weighted, `rtt_samples`, `retransmissions`,
    /// `loss_reductions`, `slowdowns`, `lbe-cc`'s own serialisation, shared
    /// with h3-fetch's view.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_window: Option<rledbat::ReceiverStats>,
}

/// A finished run.
pub struct SimOutput {
    /// The bulk flows' figures; `None` for a run of workloads alone.
    pub analysis: Option<Analysis>,
    /// The bulk flows' own counts, in scenario order.
    pub flows: Vec<FlowStats>,
    /// Each workload flow's figures, in scenario order.
    pub workloads: Vec<WorkloadOutput>,
    /// What the bottleneck counted.
    pub link: lbe_link::Totals,
    /// What the client->server link counted, when the scenario limits
    /// that direction (`[link] reverse_rate` or `reverse_loss`).
    pub reverse_link: Option<lbe_link::Totals>,
    /// The bottleneck's drops of each flow (its key is its index).
    pub flow_drops: Vec<lbe_link::FlowDrops>,
    /// Events the loop processed.
    pub events: u64,
    /// Virtual time the run covered.
    pub duration: Duration,
    /// Each bulk flow's qlog file, when [`Config::qlog_dir`] asked for
    /// them.
    pub qlogs: Vec<Option<std::path::PathBuf>>,
}

/// What a workload flow measured.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadOutput {
    /// Its position among the scenario's flows (from 0).
    pub flow: usize,
    pub figures: lbe_workload::figures::WorkloadFigures,
    /// What its figures summarise, for a CDF: a web flow's completion
    /// times (s), a ping flow's added delays (ms); empty for the others.
    pub samples: Vec<f64>,
}

impl SimOutput {
    /// The analysis's view of flow number `number` (from 1) of the run.
    pub(crate) fn memory_flow(
        analyzer: FlowAnalyzer,
        flow: &lbe_scenario::Flow,
        number: usize,
    ) -> MemoryFlow {
        MemoryFlow {
            analyzer,
            label: flow.sender_cc().to_string(),
            cc: Some(flow.sender_cc().to_string()),
            flow: Some(if flow.name.is_empty() {
                format!("flow{number}")
            } else {
                flow.name.clone()
            }),
            target_ms: None,
            role: Role::Server,
        }
    }

    /// The bulk flows analysed together; `None` for a run of workloads
    /// alone.
    pub(crate) fn analyse(
        config: &Config,
        flows: Vec<MemoryFlow>,
    ) -> Result<Option<Analysis>, String> {
        if flows.is_empty() {
            return Ok(None);
        }
        let options = analysis_options(config);
        qlog_analysis::analyze_in_memory(flows, &options)
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

/// The analysis a run's flows get: its window, the link's rate and the
/// per-datagram overhead the bottleneck counts.
fn analysis_options(config: &Config) -> qlog_analysis::Options {
    qlog_analysis::Options {
        from_s: config.window.map(|(f, _)| f.as_secs_f64()),
        to_s: config.window.map(|(_, t)| t.as_secs_f64()),
        link_rate_bps: Some(config.link.rate_bps as f64),
        datagram_overhead_bytes: u64::from(lbe_link::IPV4_UDP_OVERHEAD),
        ..qlog_analysis::Options::default()
    }
}
