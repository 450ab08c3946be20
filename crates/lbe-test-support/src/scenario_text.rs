//! Scenario-file text (lbe-lab's TOML format) for the tests that write
//! scenarios inline: the tables every one of them repeats, so that a test's
//! text shows only what it is about. Text only: the format's types and
//! checks live with the scenario model.

/// The `[link]` table: `rate`, `rtt` and `buffer` as the file spells them
/// (`"20mbit"`, `"50ms"`, `"500ms"`). More `[link]` keys (`loss = 0.01`)
/// may follow it directly.
pub fn link(rate: &str, rtt: &str, buffer: &str) -> String {
    format!("\n[link]\nrate = \"{rate}\"\nrtt = \"{rtt}\"\nbuffer = \"{buffer}\"\n")
}

/// A `[[flow]]` table: controller `cc` (a `--cc` spec, `"cubic"`) sending
/// from `start` to `stop` (`"10s"`). More keys of the flow
/// (`receiver_lbe = true`) may follow it directly.
pub fn flow(cc: &str, start: &str, stop: &str) -> String {
    format!("[[flow]]\ncc = \"{cc}\"\nstart = \"{start}\"\nstop = \"{stop}\"\n")
}

/// [`flow`] with a `name` (the flow's label in summaries and figures).
pub fn named_flow(name: &str, cc: &str, start: &str, stop: &str) -> String {
    flow(cc, start, stop) + &format!("name = \"{name}\"\n")
}

/// The `[analysis]` table: the figures' window, `from` to `to` (`"20s"`).
pub fn window(from: &str, to: &str) -> String {
    format!("[analysis]\nfrom = \"{from}\"\nto = \"{to}\"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_as_a_scenario_file_spells_them() {
        assert_eq!(
            link("20mbit", "50ms", "500ms") + "loss = 0.01\n" + &window("20s", "60s"),
            "\n[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\nloss = 0.01\n\
             [analysis]\nfrom = \"20s\"\nto = \"60s\"\n"
        );
        assert_eq!(
            flow("cubic", "10s", "50s") + &named_flow("lbe", "ledbatpp", "0s", "50s"),
            "[[flow]]\ncc = \"cubic\"\nstart = \"10s\"\nstop = \"50s\"\n\
             [[flow]]\ncc = \"ledbatpp\"\nstart = \"0s\"\nstop = \"50s\"\nname = \"lbe\"\n"
        );
    }
}
