//! qlog-analysis
