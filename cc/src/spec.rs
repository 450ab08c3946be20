//! The `--cc` spec grammar: `NAME[:key=value[,key=value…]]`.
//!
//! `NAME` names a controller; the `key=value` pairs set its parameters
//! (`ledbatpp:target=25ms`, `cdg:g=0.5`, `ledbat:target=5ms,decrease_gain=10`).
//! Spaces around the whole spec, a key and a value are ignored; a key may
//! appear once. This module owns the grammar: [`SpecParts::parse`] splits a
//! spec for any set of names (the root crate adds quiche's own `cubic`,
//! `reno` and `bbr2` to ours), and `impl FromStr for ControllerConfig`
//! parses a spec of one of this crate's controllers. Every error is one line
//! that says what was wrong and what is allowed.
//!
//! `deadline=DURATION` on `cdg` or `ledbatpp` makes the controller
//! deadline-aware ([`crate::deadline`]): `cdg:deadline=120s`.
//!
//! A spec in a file name is its tag, [`crate::qlog_name::cc_tag`].

use std::fmt;
use std::str::FromStr;

use crate::ControllerConfig;

/// Why a spec string was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(String);

impl SpecError {
    /// An error with this one-line message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

/// A spec split into its name and parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecParts<'a> {
    /// The whole spec, trimmed.
    pub text: &'a str,
    /// The controller's name.
    pub name: &'a str,
    /// The `key=value` pairs in order, each trimmed, no key twice.
    pub params: Vec<(&'a str, &'a str)>,
}

impl<'a> SpecParts<'a> {
    /// Splits `text`, whose name must be one of `names`.
    pub fn parse(text: &'a str, names: &[&str]) -> Result<Self, SpecError> {
        let text = text.trim();
        let (name, params) = match text.split_once(':') {
            Some((name, params)) => (name, Some(params)),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(SpecError(format!(
                "empty controller name in --cc '{text}': expected NAME[:key=value,...] with NAME one of {}",
                names.join(", ")
            )));
        }
        if !names.contains(&name) {
            return Err(SpecError(format!(
                "unknown congestion controller '{name}' (allowed: {})",
                names.join(", ")
            )));
        }
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for pair in params.into_iter().flat_map(|p| p.split(',')) {
            let malformed = || {
                SpecError(format!(
                    "malformed parameter '{pair}' in --cc '{text}': expected key=value"
                ))
            };
            let (key, value) = pair.split_once('=').ok_or_else(malformed)?;
            let (key, value) = (key.trim(), value.trim());
            if key.is_empty() || value.is_empty() {
                return Err(malformed());
            }
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(SpecError(format!(
                    "parameter '{key}' given twice in --cc '{text}'"
                )));
            }
            pairs.push((key, value));
        }
        Ok(Self {
            text,
            name,
            params: pairs,
        })
    }
}

/// The spec key that wraps `cdg` or `ledbatpp` in [`crate::deadline`]'s
/// deadline-aware controller: `cdg:deadline=120s`.
pub const DEADLINE_KEY: &str = "deadline";

impl ControllerConfig {
    /// The configuration a split spec names: the controller's defaults with
    /// each parameter set in order.
    pub fn from_parts(parts: &SpecParts<'_>) -> Result<Self, SpecError> {
        let mut config = Self::default_for(parts.name).ok_or_else(|| {
            SpecError(format!(
                "unknown congestion controller '{}' (allowed: {})",
                parts.name,
                Self::NAMES.join(", ")
            ))
        })?;
        let in_spec = |e: &dyn fmt::Display| SpecError(format!("--cc '{}': {e}", parts.text));
        for (key, value) in &parts.params {
            if *key == DEADLINE_KEY {
                let deadline = crate::params::duration_in(
                    key,
                    value,
                    std::time::Duration::from_millis(1),
                    crate::deadline::MAX_DEADLINE,
                )
                .map_err(|e| in_spec(&e))?;
                config = config.with_deadline(deadline).map_err(|e| in_spec(&e))?;
                continue;
            }
            config.set(key, value).map_err(|e| in_spec(&e))?;
        }
        Ok(config)
    }
}

impl FromStr for ControllerConfig {
    type Err = SpecError;

    /// Parses a spec of one of [`ControllerConfig::NAMES`].
    fn from_str(text: &str) -> Result<Self, SpecError> {
        Self::from_parts(&SpecParts::parse(text, Self::NAMES)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_splits_into_name_and_trimmed_pairs() {
        let parts = SpecParts::parse(" cdg: g = 0.5 ,seed=42 ", &["cdg"]).unwrap();
        assert_eq!(
            parts,
            SpecParts {
                text: "cdg: g = 0.5 ,seed=42",
                name: "cdg",
                params: vec![("g", "0.5"), ("seed", "42")],
            }
        );
        assert_eq!(
            SpecParts::parse("cdg:", &["cdg"]).unwrap_err().to_string(),
            "malformed parameter '' in --cc 'cdg:': expected key=value"
        );
    }

    #[test]
    fn controller_configs_parse_and_errors_say_what_is_allowed() {
        let config: ControllerConfig = "fixed:packets=4".parse().unwrap();
        let mut expected = ControllerConfig::default_for("fixed").unwrap();
        expected.set("packets", "4").unwrap();
        assert_eq!(config, expected);
        let err = |s: &str| s.parse::<ControllerConfig>().unwrap_err().to_string();
        assert_eq!(
            err("cubic"),
            "unknown congestion controller 'cubic' (allowed: ledbatpp, ledbat, cdg, fixed)"
        );
        assert_eq!(
            err(""),
            "empty controller name in --cc '': expected NAME[:key=value,...] with NAME one of ledbatpp, ledbat, cdg, fixed"
        );
        assert_eq!(
            err("fixed:packets"),
            "malformed parameter 'packets' in --cc 'fixed:packets': expected key=value"
        );
        assert_eq!(
            err("fixed:=4"),
            "malformed parameter '=4' in --cc 'fixed:=4': expected key=value"
        );
        assert_eq!(
            err("fixed:packets=2, packets=3"),
            "parameter 'packets' given twice in --cc 'fixed:packets=2, packets=3'"
        );
        assert_eq!(
            err("fixed:packets=0"),
            "--cc 'fixed:packets=0': bad value '0' for 'packets': expected a whole number from 1 to 100000"
        );
    }
}
