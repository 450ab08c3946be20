//! Parsing and range-checking of `key=value` controller parameters.
//!
//! Each controller's config has a `set(key, value)` that maps a spec key onto
//! a field through these helpers, so every error names the key, what was
//! given and what is allowed.

use std::fmt;
use std::time::Duration;

/// A parameter that could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// The controller has no such parameter.
    UnknownKey {
        /// The controller's name (`ledbatpp`, `cdg`, ...).
        controller: &'static str,
        /// The key as given.
        key: String,
        /// Every key the controller takes without `research=true` (empty:
        /// it takes none).
        allowed: &'static [&'static str],
        /// The keys it takes after `research=true` only (empty: none).
        research: &'static [&'static str],
    },
    /// A tuning key given without `research=true` before it.
    NeedsResearch {
        /// The controller's name (`ledbatpp`).
        controller: &'static str,
        /// The key as given.
        key: String,
    },
    /// The value did not parse, or is out of range.
    BadValue {
        /// The key the value was given for.
        key: String,
        /// The value as given.
        value: String,
        /// What the key accepts, in words (a range with its unit, or the
        /// names allowed).
        allowed: String,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::UnknownKey {
                controller,
                key,
                allowed,
                research,
            } => {
                if allowed.is_empty() {
                    write!(
                        f,
                        "unknown parameter '{key}' for '{controller}': it takes no parameters"
                    )
                } else if research.is_empty() {
                    write!(
                        f,
                        "unknown parameter '{key}' for '{controller}' (allowed: {})",
                        allowed.join(", ")
                    )
                } else {
                    write!(
                        f,
                        "unknown parameter '{key}' for '{controller}' (allowed: {}; \
                         research=true also takes: {})",
                        allowed.join(", "),
                        research.join(", ")
                    )
                }
            }
            ParamError::NeedsResearch { controller, key } => write!(
                f,
                "parameter '{key}' for '{controller}' tunes a rule: it needs research=true \
                 before it (e.g. {controller}:research=true,{key}=...)"
            ),
            ParamError::BadValue {
                key,
                value,
                allowed,
            } => write!(f, "bad value '{value}' for '{key}': expected {allowed}"),
        }
    }
}

impl std::error::Error for ParamError {}

/// The error for a key `controller` does not know.
pub fn unknown_key(
    controller: &'static str,
    key: &str,
    allowed: &'static [&'static str],
) -> ParamError {
    ParamError::UnknownKey {
        controller,
        key: key.to_string(),
        allowed,
        research: &[],
    }
}

/// The error for a `key` that `controller` does not have: it takes
/// `allowed`, and `research` after `research=true`.
pub fn unknown_key_with_research(
    controller: &'static str,
    key: &str,
    allowed: &'static [&'static str],
    research: &'static [&'static str],
) -> ParamError {
    ParamError::UnknownKey {
        controller,
        key: key.to_string(),
        allowed,
        research,
    }
}

/// The error for a tuning `key` of `controller` given without
/// `research=true` before it.
pub fn needs_research(controller: &'static str, key: &str) -> ParamError {
    ParamError::NeedsResearch {
        controller,
        key: key.to_string(),
    }
}

/// The error for a `value` that `key` does not accept; `allowed` says in
/// words what it does ("auto, owd or rtt").
pub fn bad_value(key: &str, value: &str, allowed: impl Into<String>) -> ParamError {
    ParamError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// A duration within `[min, max]`.
pub fn duration_in(
    key: &str,
    value: &str,
    min: Duration,
    max: Duration,
) -> Result<Duration, ParamError> {
    let allowed = || {
        format!(
            "a duration with a unit (e.g. 60ms) from {} to {}",
            lbe_units::fmt_duration(min),
            lbe_units::fmt_duration(max)
        )
    };
    let d = lbe_units::parse_duration(value).map_err(|_| bad_value(key, value, allowed()))?;
    if d < min || d > max {
        return Err(bad_value(key, value, allowed()));
    }
    Ok(d)
}

/// A value of type `T` within `[min, max]`; `kind` says what it is ("a
/// number"). NaN is never in range.
fn in_range<T>(key: &str, value: &str, min: T, max: T, kind: &str) -> Result<T, ParamError>
where
    T: std::str::FromStr + PartialOrd + fmt::Display + Copy,
{
    let allowed = || format!("{kind} from {min} to {max}");
    let x: T = value
        .trim()
        .parse()
        .map_err(|_| bad_value(key, value, allowed()))?;
    match (x >= min, x <= max) {
        (true, true) => Ok(x),
        _ => Err(bad_value(key, value, allowed())),
    }
}

/// `result`, its error (if a bad value) also allowing the word `word`:
/// "`word` or (what the range allows)", for keys that take a word besides
/// a range (`ledbatpp`'s `target_fraction=off`, `ledbat`'s `tau_user=auto`).
pub fn or_word<T>(word: &str, result: Result<T, ParamError>) -> Result<T, ParamError> {
    result.map_err(|e| match e {
        ParamError::BadValue {
            key,
            value,
            allowed,
        } => ParamError::BadValue {
            key,
            value,
            allowed: format!("{word} or {allowed}"),
        },
        other => other,
    })
}

/// `None` for `off`, else a real number within `[min, max]` (the error
/// says "off or" the range): an option a key can switch off.
pub fn off_or_f64_in(
    key: &str,
    value: &str,
    min: f64,
    max: f64,
) -> Result<Option<f64>, ParamError> {
    match value.trim() {
        "off" => Ok(None),
        _ => or_word("off", f64_in(key, value, min, max)).map(Some),
    }
}

/// A real number within `[min, max]`.
pub fn f64_in(key: &str, value: &str, min: f64, max: f64) -> Result<f64, ParamError> {
    in_range(key, value, min, max, "a number")
}

/// A whole number within `[min, max]`.
pub fn u64_in(key: &str, value: &str, min: u64, max: u64) -> Result<u64, ParamError> {
    in_range(key, value, min, max, "a whole number")
}

/// `true`/`false` (also `on`/`off`, `yes`/`no`, `1`/`0`).
pub fn bool_value(key: &str, value: &str) -> Result<bool, ParamError> {
    match value.trim() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err(bad_value(key, value, "true or false".to_string())),
    }
}

/// One of a fixed set of words.
pub fn one_of<'a>(key: &str, value: &str, choices: &[&'a str]) -> Result<&'a str, ParamError> {
    choices
        .iter()
        .find(|c| **c == value.trim())
        .copied()
        .ok_or_else(|| bad_value(key, value, format!("one of {}", choices.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_errors_say_what_is_allowed() {
        let e = duration_in(
            "target",
            "0ms",
            Duration::from_millis(1),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad value '0ms' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms to 1s"
        );
        let e = f64_in("g", "nan", 0.01, 1000.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad value 'nan' for 'g': expected a number from 0.01 to 1000"
        );
        assert_eq!(u64_in("window", "8", 1, 64), Ok(8));
        assert!(u64_in("window", "65", 1, 64).is_err());
        assert_eq!(bool_value("x", "on"), Ok(true));
        assert!(bool_value("x", "maybe").is_err());
        assert_eq!(
            one_of("restore", "jump", &["slow_start", "jump"]),
            Ok("jump")
        );
        assert_eq!(off_or_f64_in("f", " off ", 1.0, 4.0), Ok(None));
        assert_eq!(off_or_f64_in("f", "2.5", 1.0, 4.0), Ok(Some(2.5)));
        assert_eq!(
            off_or_f64_in("f", "of", 1.0, 4.0).unwrap_err().to_string(),
            "bad value 'of' for 'f': expected off or a number from 1 to 4"
        );
    }
}
