//! Scenario files: one emulated bottleneck, several flows. The model (the
//! file's format, types, parsing and line-numbered checks) is
//! `lbe-scenario`'s, shared with the simulator (`lbe-sim`); it is
//! re-exported here so that `lbe_lab::scenario` names it.

pub use lbe_scenario::*;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use lbe_test_support::scenario_text::flow;
    use lbe_test_support::scenario_text::link;

    use super::*;

    #[test]
    fn h3_flows_are_not_simulated() {
        let text = link("20mbit", "50ms", "500ms")
            + &flow("cubic", "0s", "40s")
            + "[[flow]]\nkind = \"h3\"\nbytes = \"10MB\"\n";
        let s = parse(Path::new("s.toml"), &text).unwrap();
        assert_eq!(
            crate::sim::config(&s).unwrap_err(),
            "flow 'flow2': kind = \"h3\" is not simulated (h3-fetch against a real server): run without --sim"
        );
    }

    #[test]
    fn workload_flows_are_simulated() {
        let text = link("20mbit", "50ms", "500ms")
            + &flow("cubic", "0s", "40s")
            + "[[flow]]\nkind = \"ping\"\nstop = \"10s\"\n";
        let s = parse(Path::new("s.toml"), &text).unwrap();
        let config = crate::sim::config(&s).unwrap();
        assert_eq!(config.flows.len(), 2);
        assert_eq!(
            config.engine.resolve(&config).0,
            lbe_sim::Engine::Quiche,
            "a workload runs on the quiche engine"
        );
    }
}
