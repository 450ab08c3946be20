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
    fn h3_flows_are_simulated_on_the_quiche_engine_but_not_against_aioquic() {
        let text = link("20mbit", "50ms", "500ms")
            + &flow("cubic", "0s", "40s")
            + "[[flow]]\nkind = \"h3\"\nbytes = \"10MB\"\n";
        let s = parse(Path::new("s.toml"), &text).unwrap();
        let mut config = crate::sim::config(&s).unwrap();
        assert_eq!(config.engine, lbe_sim::Engine::Quiche, "the default");
        config.engine = lbe_sim::Engine::Auto;
        assert_eq!(
            config.engine.resolve(&config),
            (
                lbe_sim::Engine::Quiche,
                Some("flow flow2: kind = \"h3\"".to_string())
            )
        );
        let mut restated = config.clone();
        restated.engine = lbe_sim::Engine::Restated;
        assert_eq!(
            lbe_sim::run(&restated).err().unwrap(),
            "flow flow2: kind = \"h3\" is simulated on the quiche engine only: run with --engine quiche or auto"
        );

        let aioquic = text.replace("kind = \"h3\"\n", "kind = \"h3\"\nserver = \"aioquic\"\n");
        let s = parse(Path::new("s.toml"), &aioquic).unwrap();
        let config = crate::sim::config(&s).unwrap();
        assert_eq!(
            lbe_sim::run(&config).err().unwrap(),
            "flow flow2: server = \"aioquic\" is not simulated (aioquic's HTTP/3 server is Python, run in real time; simulated: h3-serve, quiche-stock): run without --sim"
        );
    }

    #[test]
    fn workload_flows_are_simulated() {
        let text = link("20mbit", "50ms", "500ms")
            + &flow("cubic", "0s", "40s")
            + "[[flow]]\nkind = \"ping\"\nstop = \"10s\"\n";
        let s = parse(Path::new("s.toml"), &text).unwrap();
        let mut config = crate::sim::config(&s).unwrap();
        assert_eq!(config.flows.len(), 2);
        config.engine = lbe_sim::Engine::Auto;
        assert_eq!(
            config.engine.resolve(&config).0,
            lbe_sim::Engine::Quiche,
            "auto runs a workload on the quiche engine"
        );
    }
}
