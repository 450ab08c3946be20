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
    }
}
