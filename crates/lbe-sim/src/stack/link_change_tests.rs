//! Links that change, in the simulator: downloads across a NAT rebinding
//! (`rebind = true`), an outage, jitter and a trace finish with all their
//! bytes.

use crate::{run, Config, SimOutput};

fn sim(text: &str) -> SimOutput {
    run(&Config::of_scenario_text(text)).unwrap()
}

const LINK: &str = "seed = 1\n[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"100ms\"\n";

/// A 10 MB download (the `[[flow]]` table's other keys, `flow`) across a
/// NAT rebinding at 2 s finishes, past the rebinding: 10 MB at 20 Mbit/s
/// take 4 s at least.
fn finishes_across_a_rebinding(flow: &str) {
    let out = sim(&format!(
        "{LINK}[[link.change]]\nat = \"2s\"\nrebind = true\n\
         [[flow]]\n{flow}bytes = \"10MB\"\n"
    ));
    let f = &out.flows[0];
    assert!(f.finished_s.is_some(), "{f:?}");
    assert!(f.finished_s.unwrap() > 4.0, "{f:?}");
}

#[test]
fn a_quic_bulk_download_across_a_nat_rebinding_finishes_with_all_its_bytes() {
    finishes_across_a_rebinding("cc = \"ledbatpp\"\nname = \"bulk\"\n");
}

#[test]
fn an_h3_background_download_across_a_nat_rebinding_finishes_with_all_its_bytes() {
    finishes_across_a_rebinding(
        "kind = \"h3\"\nserver = \"h3-serve\"\nbackground = true\nname = \"download\"\n",
    );
}

#[test]
fn a_download_across_an_outage_jitter_and_a_route_change_finishes() {
    let out = sim(&format!(
        "{LINK}jitter = \"5ms\"\naggregate = \"2ms\"\n\
         [[link.change]]\nat = \"1s\"\nrtt = \"80ms\"\n\
         [[link.change]]\nat = \"2s\"\noutage = \"2s\"\n\
         [[link.change]]\nat = \"5s\"\nrate = \"10mbit\"\n\
         [[flow]]\ncc = \"cubic\"\nbytes = \"10MB\"\nname = \"bulk\"\n"
    ));
    let f = &out.flows[0];
    // 2 s of outage on top of at least 4 s of sending.
    assert!(f.finished_s.is_some_and(|s| s > 6.0), "{f:?}");
}

#[test]
fn changes_count_from_the_runs_start() {
    // Nothing is delivered in the outage: a flow that lives inside it
    // sends but cannot finish before it ends.
    let out = sim(&format!(
        "{LINK}[[link.change]]\nat = \"100ms\"\noutage = \"3s\"\n\
         [[flow]]\ncc = \"cubic\"\nbytes = \"100kB\"\nname = \"bulk\"\n"
    ));
    assert!(
        out.flows[0].finished_s.is_some_and(|s| s > 3.1),
        "{:?}",
        out.flows[0]
    );
}

#[test]
fn a_download_on_a_trace_finishes_at_the_traces_rate() {
    // One 1500-byte opportunity per millisecond: 12 Mbit/s.
    let text = "seed = 1\n[link]\nrate = \"12mbit\"\nrtt = \"50ms\"\nbuffer = \"100ms\"\n\
                [[flow]]\ncc = \"cubic\"\nbytes = \"6MB\"\nname = \"bulk\"\n";
    let mut config = Config::of_scenario_text(text);
    config.link.trace = Some(std::sync::Arc::new(
        lbe_link::DeliveryTrace::parse("t.down", "1\n").unwrap(),
    ));
    let out = run(&config).unwrap();
    // 6 MB at 12 Mbit/s take 4 s at least; slow start adds little.
    let done = out.flows[0].finished_s.unwrap();
    assert!((4.0..6.0).contains(&done), "{done}");
}
