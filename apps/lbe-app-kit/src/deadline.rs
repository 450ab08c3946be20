//! What a transfer with a deadline reports (`--json` of `quic-bulk client
//! --deadline` and `h3-fetch --deadline`): one shape, one rule for `met`.

use std::time::Duration;

use serde::Serialize;

/// A deadline transfer's outcome; flattened into an app's `--json` object
/// as `deadline_s`, `finished_s`, `met` and `time_in_levels_s`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeadlineOutcome {
    /// The deadline, seconds.
    pub deadline_s: f64,
    /// The transfer's time, seconds (the app's `duration_s`).
    pub finished_s: f64,
    /// Whether it finished within the deadline.
    pub met: bool,
    /// The sender's time in each aggressiveness level, seconds, level 0
    /// (full LBE) first; absent when the sender reported none (e.g. a
    /// server that does not know the deadline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_in_levels_s: Option<Vec<f64>>,
}

impl DeadlineOutcome {
    /// The outcome of a transfer that took `duration_s` against `deadline`.
    pub fn new(deadline: Duration, duration_s: f64, time_in_levels_s: Option<Vec<f64>>) -> Self {
        DeadlineOutcome {
            deadline_s: deadline.as_secs_f64(),
            finished_s: duration_s,
            met: duration_s <= deadline.as_secs_f64(),
            time_in_levels_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn met_is_within_the_deadline_and_the_json_keys_are_the_contract() {
        let on_time = DeadlineOutcome::new(Duration::from_secs(10), 10.0, Some(vec![9.5, 0.5]));
        assert!(on_time.met);
        assert_eq!(
            serde_json::to_string(&on_time).unwrap(),
            r#"{"deadline_s":10.0,"finished_s":10.0,"met":true,"time_in_levels_s":[9.5,0.5]}"#
        );
        let late = DeadlineOutcome::new(Duration::from_millis(10_000), 10.001, None);
        assert!(!late.met);
        assert_eq!(
            serde_json::to_string(&late).unwrap(),
            r#"{"deadline_s":10.0,"finished_s":10.001,"met":false}"#
        );
    }
}
