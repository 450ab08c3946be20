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
    fn an_h3_flow_against_aioquic_is_not_simulated() {
        let text = link("20mbit", "50ms", "500ms")
            + &flow("cubic", "0s", "40s")
            + "[[flow]]\nkind = \"h3\"\nbytes = \"10MB\"\nserver = \"aioquic\"\n";
        let s = parse(Path::new("s.toml"), &text).unwrap();
        let config = crate::sim::config(&s).unwrap();
        assert_eq!(
            lbe_sim::run(&config).err().unwrap(),
            "flow flow2: server = \"aioquic\" is not simulated (aioquic's HTTP/3 server is Python, run in real time; simulated: h3-serve, quiche-stock): run without --sim"
        );
    }
}
