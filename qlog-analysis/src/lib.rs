//! qlog-analysis
pub mod analysis;
pub mod error;
pub mod flow;
pub mod naming;
pub mod rangeset;
pub mod reader;
pub mod series;
pub mod units;
