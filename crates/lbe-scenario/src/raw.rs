//! The scenario file as serde reads it: every key with its span, nothing
//! checked yet (`crate::parse` checks it).

use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    pub(crate) seed: Option<u64>,
    pub(crate) link: Spanned<RawLink>,
    pub(crate) analysis: Option<RawAnalysis>,
    pub(crate) ports: Option<RawPorts>,
    #[serde(default)]
    pub(crate) flow: Vec<Spanned<RawFlow>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLink {
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) rtt: Spanned<String>,
    pub(crate) buffer: Spanned<String>,
    pub(crate) loss: Option<Spanned<f64>>,
    pub(crate) cross_traffic: Option<Spanned<String>>,
    pub(crate) pacing: Option<bool>,
    pub(crate) aqm: Option<Spanned<String>>,
    pub(crate) codel_target: Option<Spanned<toml::Value>>,
    pub(crate) codel_interval: Option<Spanned<toml::Value>>,
    pub(crate) fq_flows: Option<Spanned<toml::Value>>,
    pub(crate) fq_quantum: Option<Spanned<toml::Value>>,
    pub(crate) pie_target: Option<Spanned<toml::Value>>,
    pub(crate) pie_tupdate: Option<Spanned<toml::Value>>,
    pub(crate) pie_alpha: Option<Spanned<toml::Value>>,
    pub(crate) pie_beta: Option<Spanned<toml::Value>>,
    pub(crate) pie_max_burst: Option<Spanned<toml::Value>>,
    pub(crate) loss_model: Option<Spanned<String>>,
    pub(crate) ge_p: Option<Spanned<f64>>,
    pub(crate) ge_r: Option<Spanned<f64>>,
    pub(crate) ge_h: Option<Spanned<f64>>,
    pub(crate) ge_k: Option<Spanned<f64>>,
    pub(crate) reverse_rate: Option<Spanned<String>>,
    pub(crate) reverse_buffer: Option<Spanned<String>>,
    pub(crate) reverse_loss: Option<Spanned<f64>>,
    pub(crate) jitter: Option<Spanned<String>>,
    pub(crate) jitter_model: Option<Spanned<String>>,
    pub(crate) reorder: Option<Spanned<bool>>,
    pub(crate) aggregate: Option<Spanned<String>>,
    pub(crate) trace: Option<Spanned<String>>,
    pub(crate) reverse_trace: Option<Spanned<String>>,
    /// `[[link.change]]`.
    #[serde(default)]
    pub(crate) change: Vec<Spanned<RawChange>>,
}

/// One `[[link.change]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawChange {
    pub(crate) at: Option<Spanned<String>>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) rtt: Option<Spanned<String>>,
    pub(crate) jitter: Option<Spanned<String>>,
    pub(crate) loss: Option<Spanned<f64>>,
    pub(crate) outage: Option<Spanned<String>>,
    pub(crate) rebind: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAnalysis {
    pub(crate) from: Spanned<String>,
    pub(crate) to: Spanned<String>,
    pub(crate) steady_queue: Option<Spanned<String>>,
    pub(crate) refill_after: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPorts {
    pub(crate) server: Option<Spanned<u16>>,
    pub(crate) netem: Option<Spanned<u16>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFlow {
    pub(crate) kind: Option<Spanned<String>>,
    pub(crate) server: Option<Spanned<String>>,
    pub(crate) background: Option<Spanned<bool>>,
    pub(crate) lbe: Option<Spanned<String>>,
    pub(crate) cc: Option<Spanned<String>>,
    pub(crate) start: Option<Spanned<String>>,
    pub(crate) stop: Option<Spanned<String>>,
    pub(crate) bytes: Option<Spanned<String>>,
    pub(crate) deadline: Option<Spanned<String>>,
    pub(crate) rtt: Option<Spanned<String>>,
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) pacing: Option<Spanned<bool>>,
    pub(crate) receiver_lbe: Option<Spanned<bool>>,
    pub(crate) direction: Option<Spanned<String>>,
    pub(crate) client_clock_offset: Option<Spanned<String>>,
    pub(crate) client_clock_skew_ppm: Option<Spanned<f64>>,
    pub(crate) server_clock_offset: Option<Spanned<String>>,
    pub(crate) server_clock_skew_ppm: Option<Spanned<f64>>,
    pub(crate) count: Option<Spanned<i64>>,
    pub(crate) stagger: Option<Spanned<String>>,
    // Foreground workloads (web, ping, video, cbr).
    pub(crate) arrivals: Option<Spanned<String>>,
    pub(crate) size: Option<Spanned<String>>,
    pub(crate) sizes: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) interval: Option<Spanned<String>>,
    pub(crate) chunk: Option<Spanned<String>>,
    pub(crate) bitrate: Option<Spanned<String>>,
    pub(crate) startup: Option<Spanned<String>>,
    pub(crate) buffer: Option<Spanned<String>>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) on: Option<Spanned<String>>,
    pub(crate) off: Option<Spanned<String>>,
}
