//! The figure lines `scripts/flake-check.sh` collects: a real-time test
//! prints each figure an assertion checks, and the script reports, per test
//! and key, its minimum, median and maximum over repeated runs.

use std::fmt::Display;

/// The line for one figure: `flake-figure: <test>: <key> = <value>`.
/// `scripts/flake-check.sh` strips `flake-figure: <test>: ` (`sed
/// 's/^flake-figure: [^:]*: //'`) and reads `<key> = <value>` as three
/// blank-separated fields, so neither `test` nor `key` may hold a `:` or
/// blank, and the value must be a number (`sort -g`).
pub fn figure_line(test: &str, key: &str, value: impl Display) -> String {
    assert!(
        !test.is_empty() && !test.contains([':', ' ', '\t', '\n']),
        "a figure's test name has no ':' or blanks: {test:?}"
    );
    assert!(
        !key.is_empty() && !key.contains([':', ' ', '\t', '\n']),
        "a figure's key has no ':' or blanks: {key:?}"
    );
    format!("flake-figure: {test}: {key} = {value}")
}

/// Prints the figure an assertion checks to stderr (see [`figure_line`])
/// and returns it, so that the assertion can use it:
/// `let share = figure("yields_to_cubic", "cubic_share", c / (c + d));`.
pub fn figure<T: Display>(test: &str, key: &str, value: T) -> T {
    eprintln!("{}", figure_line(test, key, &value));
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_what_flake_check_parses() {
        assert_eq!(
            figure_line("paced", "span_over_schedule", 1.25),
            "flake-figure: paced: span_over_schedule = 1.25"
        );
        assert_eq!(
            figure_line("bottleneck", "received", 97u64),
            "flake-figure: bottleneck: received = 97"
        );
        // Display of f64: no exponent, every digit (what `sort -g` reads).
        assert_eq!(
            figure_line("t", "k", 0.1 + 0.2),
            "flake-figure: t: k = 0.30000000000000004"
        );
    }

    #[test]
    fn figure_returns_its_value() {
        assert_eq!(figure("t", "k", 0.5), 0.5);
        assert_eq!(figure("t", "n", 3u64), 3);
    }

    #[test]
    #[should_panic(expected = "a figure's test name has no ':' or blanks: \"a: b\"")]
    fn a_colon_in_the_test_name_is_refused() {
        figure_line("a: b", "k", 1);
    }

    #[test]
    #[should_panic(expected = "a figure's key has no ':' or blanks: \"two words\"")]
    fn a_blank_in_the_key_is_refused() {
        figure_line("t", "two words", 1);
    }

    /// The line through the very `sed` expression of
    /// `scripts/flake-check.sh`.
    #[test]
    fn flake_check_reads_key_and_value() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/flake-check.sh");
        let text = std::fs::read_to_string(script).unwrap();
        let expr = "s/^flake-figure: [^:]*: //p";
        assert!(text.contains(expr), "flake-check.sh no longer uses {expr}");
        let line = figure_line("duration", "duration_s", 0.533);
        let mut sed = std::process::Command::new("sed")
            .args(["-n", expr])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        writeln!(sed.stdin.take().unwrap(), "noise\n{line}").unwrap();
        let out = sed.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "duration_s = 0.533\n"
        );
    }
}
