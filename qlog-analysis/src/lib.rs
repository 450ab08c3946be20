//! Read quiche's qlog files and compute, plot and report what less-than-best-effort
//! congestion controllers did: goodput (acknowledged application bytes), congestion
//! window, bytes in flight, RTT and RTT above base (`queuing_delay_ms`), losses, time in each controller
//! state, LEDBAT++ slowdowns; and across flows sharing a bottleneck, utilisation,
//! shares and Jain's fairness index.
//!
//! The crate reads files only; it knows nothing of sockets or quiche.
//!
//! ```no_run
//! use qlog_analysis::{analyze, FlowInput, Options};
//!
//! let opts = Options { from_s: Some(10.0), to_s: Some(40.0), link_rate_bps: Some(20e6), ..Options::default() };
//! let a = analyze([FlowInput::new("run/1-server-ledbatpp.sqlog"), FlowInput::new("run/2-server-cubic.sqlog")], &opts)?;
//! for f in &a.flows {
//!     // `f.summary` has exactly the per-flow keys of lbe-lab's summary.json.
//!     println!("{} {}", f.label, serde_json::to_string(&f.summary).unwrap());
//! }
//! println!("utilization {:?}, jain {:?}", a.utilization, a.jain_index);
//! # Ok::<(), qlog_analysis::Error>(())
//! ```
//!
//! Modules: [`reader`] (streaming JSON-SEQ / JSON reader on the `qlog` crate's types),
//! [`flow`] (per-flow figures; the goodput method is documented there),
//! [`analysis`] (several flows on one clock), [`plot`] (SVG), [`report`] (HTML),
//! [`units`] (`20mbit`, `10s`, `375kB`).

#![deny(missing_docs)]

pub mod analysis;
pub mod error;
pub mod flow;
pub mod naming;
pub mod plot;
pub mod rangeset;
pub mod reader;
pub mod report;
pub mod series;
pub mod synth;
pub mod text;
pub mod units;
pub mod xy;

pub use analysis::{
    analyze, analyze_in_memory, jain_index, summary_parts, Analysis, FlowInput, MemoryFlow,
    Options, SummaryParts, TimeBase, Window,
};
pub use error::{Error, Warning};
pub use flow::{FlowAnalysis, FlowSummary, GoodputMethod, RttAboveBaseStats, RttStats};
pub use reader::{read_qlog, Role};
