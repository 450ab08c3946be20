//! Scenario files: one emulated bottleneck, several flows. The model (the
//! file's format, types, parsing and line-numbered checks) is
//! `lbe-scenario`'s, shared with the simulator (`lbe-sim`); it is
//! re-exported here so that `lbe_lab::scenario` names it.

pub use lbe_scenario::*;
