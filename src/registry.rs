//! The plug-ins by name, wherever quiche takes a controller's name.
//!
//! After [`register()`], quiche's `Config::set_cc_algorithm_name()` (and
//! everything built on it: `Connection::set_cc_algorithm_name_in_handshake()`,
//! C's `quiche_config_set_cc_algorithm_name()`, tokio-quiche's
//! `QuicSettings::cc_algorithm`) accepts every plug-in's `--cc` spec:
//! `ledbatpp`, `ledbatpp:profile=full`, `cdg:g=0.5`, `ledbat:target=5ms`.
//! quiche's own names (`cubic`, `reno`, `bbr2`) are still quiche's; a
//! parameter on one of them (`cubic:rollback=off`) is not a name quiche
//! knows, and is refused there: [`CcSpec::configure()`] takes it.
//!
//! quiche's registry (`quiche::register_congestion_control`, patch 0006)
//! finds the entry by the name before the first `:` and hands the whole spec
//! to [`plugin_factory()`], which parses it with the `--cc` grammar. quiche
//! can only say `Error::CongestionControl` about a bad spec; callers who
//! want to tell their user what was wrong call [`plugin_factory()`] (or
//! parse a [`CcSpec`]) themselves.
//!
//! [`CcSpec::configure()`]: crate::CcSpec::configure

use std::sync::Arc;

use crate::spec::plugin_names;
use crate::CcSpec;
use crate::SpecError;

/// Registers every plug-in ([`plugin_names()`]: `ledbatpp`, `ledbat`,
/// `cdg`, `fixed`) with quiche, under its name, for the whole process.
/// Calling it again changes nothing.
///
/// ```
/// quiche_lbe::register()?;
/// let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION)?;
/// config.set_cc_algorithm_name("ledbatpp:profile=full")?;
/// assert_eq!(
///     config.set_cc_algorithm_name("ledbatpp:profile=fast"),
///     Err(quiche::Error::CongestionControl)
/// );
/// # Ok::<(), quiche::Error>(())
/// ```
pub fn register() -> quiche::Result<()> {
    for name in plugin_names() {
        quiche::register_congestion_control(name, |spec| {
            plugin_factory(spec).map_err(|_| quiche::Error::CongestionControl)
        })?;
    }
    Ok(())
}

/// The factory of the plug-in `spec` names (the `--cc` grammar,
/// `NAME[:key=value,...]`), or why the spec is wrong, in words for the
/// user. A spec of one of quiche's own controllers is refused: those are
/// chosen through quiche's `set_cc_algorithm()`.
pub fn plugin_factory(spec: &str) -> Result<Arc<dyn quiche::CongestionControlFactory>, SpecError> {
    let parsed: CcSpec = spec.parse()?;
    parsed.factory().ok_or_else(|| {
        SpecError::new(format!(
            "'{}' is quiche's own controller, not a plug-in (plug-ins: {})",
            parsed.name(),
            plugin_names().join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plugin_is_reachable_by_name_with_its_parameters() {
        register().unwrap();
        register().unwrap();
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        for spec in [
            "ledbatpp",
            "ledbatpp:profile=full",
            "ledbat",
            "ledbat:target=5ms,decrease_gain=10",
            "cdg",
            "cdg:g=0.5",
            "fixed:packets=4",
            "cubic",
            "reno",
            "bbr2",
        ] {
            assert_eq!(config.set_cc_algorithm_name(spec), Ok(()), "{spec}");
        }
        for spec in [
            "ledbatpp:profile=nonsense",
            "ledbatpp:",
            "cdg:g",
            "vegas",
            "cubic:rollback=off",
            " ledbatpp",
        ] {
            assert_eq!(
                config.set_cc_algorithm_name(spec),
                Err(quiche::Error::CongestionControl),
                "{spec}"
            );
        }
    }

    #[test]
    fn our_error_says_what_is_wrong() {
        assert_eq!(
            plugin_factory("fixed:size=3").err().map(|e| e.to_string()),
            Some(
                "--cc 'fixed:size=3': unknown parameter 'size' for 'fixed' (allowed: packets)"
                    .into()
            )
        );
        assert_eq!(
            plugin_factory("cubic").err().map(|e| e.to_string()),
            Some("'cubic' is quiche's own controller, not a plug-in (plug-ins: ledbatpp, ledbat, cdg, fixed)".into())
        );
        assert!(plugin_factory("ledbatpp:profile=full").is_ok());
    }
}
